"""Reasoning: between ``<think>`` and ``</think>``; the tags travel in ``Reasoning.raw``.

``text`` listens for ``<think>`` (enter) and a stray ``</think>`` (shown with a
Diagnostic: the prompt probably ended inside reasoning); ``in_reasoning`` listens for
``</think>``. ``Sieve(reasoning=False)`` leaves this region's markers out.
"""

from __future__ import annotations

from callsieve.events import Diagnostic
from callsieve.grammar import reasoning as tags
from callsieve.grammar.states import EOF_TRIGGER, START, Listen, Region, StateDecl, but, on
from callsieve.regions.tag import TagModel


class ReasoningModel(TagModel):
    def reasoning_char(self, ch: str) -> None:
        self.reason_text.append(ch)
        self.reason_raw.append(ch)

    def reasoning_run(self, s: str, i: int, j: int) -> int:
        seg = s[i:j]
        self.reason_text.append(seg)
        self.reason_raw.append(seg)
        return j

    def enter_reasoning(self, ch: str) -> None:
        tag = self._take_tag(ch)
        self.flush()
        self.reason_raw.append(tag)

    def leave_reasoning(self, ch: str) -> None:
        self.reason_raw.append(self._take_tag(ch))
        self.flush()

    def stray_think_close(self, ch: str) -> None:
        tag = self._take_tag(ch)
        self._emit(
            Diagnostic(
                "stray_reasoning_close",
                "</think> without <think>: the text before it was shown as text; "
                "pass start_in_reasoning=True when the prompt ends inside reasoning",
                self.tag_start,
            )
        )
        self.reason_raw.append(tag)
        self.flush()


STATES = (StateDecl("in_reasoning", "between <think> and </think>", owner="reasoning", sink="reasoning_char"),)

RULES = (
    *on("in_reasoning", START, "maybe_tag", "tag_begin", rank=1),
    *on("in_reasoning", but(START), "in_reasoning", "reasoning_char", rank=90),
    *on("in_reasoning", [EOF_TRIGGER], "in_reasoning"),
)

LISTENS = (
    Listen("text", tags.THINK_OPEN, "in_reasoning", ("enter_reasoning",)),
    Listen("text", tags.THINK_CLOSE, "text", ("stray_think_close",)),
    Listen("in_reasoning", tags.THINK_CLOSE, "text", ("leave_reasoning",)),
)

REGION = Region("reasoning", STATES, RULES, ReasoningModel, LISTENS)
