"""Reasoning: the sections the enabled dialects declare (``Dialect.reasoning``), read
in one state per family (``in_reasoning`` for ``<think>``); the tags travel in
``Reasoning.raw``, never in its text.

Built by :func:`region` from the union of the declarations: ``text`` listens for every
family's open (enter its state) and close (a stray close, shown with a Diagnostic: the
prompt probably ended inside reasoning); a family's state listens for its closes (back
to ``text``) and its opens, which there are framing (a ``<think>`` the model writes
after a prompt that ended with one). A dialect whose models write tool calls inside an
unclosed section (``Dialect.calls_in_reasoning``) gets its block openers listened for
in these states by the composer (``callsieve.machine``): one there ends the reasoning,
with a ``reasoning_closed_by_call`` Diagnostic, and opens the block as from ``text``.
``Sieve(reasoning=False)`` leaves this region out.
"""

from __future__ import annotations

from typing import Iterable

from callsieve.native import mypyc_attr, trait
from callsieve.events import Diagnostic
from callsieve.grammar.api import Reasoning
from callsieve.grammar.states import EOF_TRIGGER, START, Listen, Region, Rule, StateDecl, but, on
from callsieve.regions.tag import TagModel


@trait
@mypyc_attr(allow_interpreted_subclasses=True)
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

    def reasoning_framing(self, ch: str) -> None:
        """An open inside its own reasoning: framing, in raw only."""
        self.reason_raw.append(self._take_tag(ch))

    def reasoning_ends_at_call(self, ch: str) -> None:
        """A tool-call block opens inside unclosed reasoning (``calls_in_reasoning``):
        the reasoning ends here; the block's own action follows and takes the tag."""
        self.flush()
        self._emit(
            Diagnostic(
                "reasoning_closed_by_call",
                f"a tool-call block ({(self.tag + ch)[:40]!r}) inside unclosed reasoning ended it "
                "(calls_in_reasoning)",
                self.tag_start,
            )
        )

    def stray_think_close(self, ch: str) -> None:
        tag = self._take_tag(ch)
        self._emit(
            Diagnostic(
                "stray_reasoning_close",
                f"{tag} without its open: the text before it was shown as text; "
                "pass start_in_reasoning=True when the prompt ends inside reasoning",
                self.tag_start,
            )
        )
        self.reason_raw.append(tag)
        self.flush()


def families(declared: tuple[Reasoning, ...]) -> tuple[Reasoning, ...]:
    """The distinct declarations, in first-declared order."""
    out: list[Reasoning] = []
    for r in declared:
        if r not in out:
            out.append(r)
    return tuple(out)


def region(declared: tuple[Reasoning, ...]) -> Region:
    """The reasoning region for these families (see the module docstring)."""
    fams = families(declared)
    states: list[StateDecl] = []
    rules: list[Rule] = []
    listens: list[Listen] = []
    seen_open: list[object] = []
    seen_close: list[object] = []
    for r in fams:
        if r.state not in [s.name for s in states]:
            states.append(StateDecl(r.state, f"reasoning, until {r.close.shown()}", owner="reasoning", sink="reasoning_char"))
            rules += on(r.state, START, "maybe_tag", "tag_begin", rank=1)
            rules += on(r.state, but(START), r.state, "reasoning_char", rank=90)
            rules += on(r.state, [EOF_TRIGGER], r.state)
        if r.open not in seen_open:
            seen_open.append(r.open)
            listens.append(Listen("text", r.open, r.state, ("enter_reasoning",)))
        if r.close not in seen_close:
            seen_close.append(r.close)
            listens.append(Listen("text", r.close, "text", ("stray_think_close",)))
    for st in states:
        own = [r for r in fams if r.state == st.name]
        for m in _distinct(r.close for r in own):
            listens.append(Listen(st.name, m, "text", ("leave_reasoning",)))
        for m in _distinct(r.open for r in own):
            listens.append(Listen(st.name, m, st.name, ("reasoning_framing",)))
    return Region("reasoning", tuple(states), tuple(rules), ReasoningModel, tuple(listens))


def _distinct(items: Iterable[object]) -> list[object]:
    out: list[object] = []
    for x in items:
        if x not in out:
            out.append(x)
    return out


def prefill_state(declared: tuple[Reasoning, ...]) -> str | None:
    """The state ``start_in_reasoning=True`` starts in: the one a prompt may open."""
    got = sorted({r.state for r in declared if r.prefill})
    return got[0] if len(got) == 1 else None


#: The ``<think>`` region alone (what the machine had before families were declared).
def _default() -> Region:
    from callsieve.grammar.reasoning import THINK

    return region((THINK,))


REGION = _default()
