"""Reasoning: the sections the enabled dialects declare (``Dialect.reasoning``), read
in one state per family (``in_reasoning`` for ``<think>``); the tags travel in
``Reasoning.raw``, never in its text.

Built by :func:`region` from the union of the declarations: ``text`` listens for every
family's open (enter its state) and close (a stray close, shown with a Diagnostic: the
prompt probably ended inside reasoning); a family's state listens for its closes (back
to ``text``) and its opens, which there are framing (a ``<think>`` the model writes
after a prompt that ended with one). ``Sieve(reasoning=False)`` leaves this region out.

A tool call written in reasoning (issue 22). A dialect whose models write their calls
at the end of an unclosed reasoning section (``Dialect.calls_in_reasoning``: Qwen3
forgetting ``</think>``, which vLLM's qwen3 reasoning parser reads as a call) has its
block openers listened for in these states (policy ``calls_in_reasoning``; the
composer, ``callsieve.machine``). Such a block is read by its grammar, *home* in the
reasoning (``ModelBase.home``): it ends back in the reasoning state, and nothing of it
streams. The rule:

1. A block that does not hold up (a mention of its opener, a malformed block) goes
   back to the reasoning as reasoning text (``release_to_reasoning``), whatever
   ``on_malformed`` says: reasoning is private, nothing in it is a call or is dropped.
2. A complete block is *held* (``held``), and the whitespace after it, until the
   reasoning resolves it: reasoning text that goes on (anything but whitespace, or a
   block that does not hold up) or the reasoning's close makes it reasoning, with a
   ``call_in_reasoning`` Diagnostic per block (a call the model only considered); the
   stream ending with nothing but calls and whitespace after it makes its calls
   calls, and the reasoning ended where the first block began
   (``reasoning_closed_by_call``). So a call the reasoning goes on from, or closes
   after, is reasoning; a call an unclosed reasoning ends on is a call.
3. Behind a shared opener (a fork), the dialect bound decides by its own rule: one
   whose calls are not read in reasoning (``fork_to_reasoning``) gives its opener and
   what follows back to the reasoning, as if it were alone.
"""

from __future__ import annotations

from typing import Any, Iterable

from callsieve.native import mypyc_attr, trait
from callsieve.events import Diagnostic
from callsieve.grammar.api import Reasoning
from callsieve.grammar.states import EOF_TRIGGER, START, Listen, Region, Rule, StateDecl, but, on
from callsieve.regions.tag import SPACE, TagModel


@trait
@mypyc_attr(allow_interpreted_subclasses=True)
class ReasoningModel(TagModel):
    #: Complete blocks written in reasoning, and the whitespace after each, in order,
    #: until the reasoning resolves them (rule 2 of the module docstring); None: none.
    held: list[Any] | None = None

    def reasoning_char(self, ch: str) -> None:
        if self.held is not None:
            if ch in SPACE:
                self.held.append(ch)
                return
            self.held_as_reasoning()
        self.reason_text.append(ch)
        self.reason_raw.append(ch)

    def reasoning_run(self, s: str, i: int, j: int) -> int:
        seg = s[i:j]
        if self.held is not None:
            if not seg.strip(SPACE):
                self.held.append(seg)
                return j
            self.held_as_reasoning()
        self.reason_text.append(seg)
        self.reason_raw.append(seg)
        return j

    def enter_reasoning(self, ch: str) -> None:
        tag = self._take_tag(ch)
        self.flush()
        self.reason_raw.append(tag)

    def leave_reasoning(self, ch: str) -> None:
        if self.held is not None:
            self.held_as_reasoning()  # the reasoning closes after them
        self.reason_raw.append(self._take_tag(ch))
        self.flush()

    def reasoning_framing(self, ch: str) -> None:
        """An open inside its own reasoning: framing, in raw only."""
        if self.held is not None:
            self.held_as_reasoning()
        self.reason_raw.append(self._take_tag(ch))

    def reasoning_eof(self, ch: str = "") -> None:
        """The stream ended in reasoning (or in a block it holds): what it held, the
        stream ended on."""
        if self.held is not None:
            self.held_as_calls()

    def hold_in_reasoning(self, b: Any) -> None:
        """A complete block written in reasoning: held until the reasoning resolves it."""
        if self.held is None:
            self.held = []
        self.held.append(b)

    def held_as_reasoning(self) -> None:
        """The reasoning went on after the blocks it held, or closed: they were the
        model writing about calls. Their markup is reasoning text; each is reported."""
        held, self.held = self.held, None
        for x in held or ():
            if isinstance(x, str):
                self.reason_text.append(x)
                self.reason_raw.append(x)
                continue
            raw = x.raw.join()
            names = ", ".join(repr(c.name) for c in x.calls)
            self._emit(Diagnostic("call_in_reasoning", f"a complete {x.dialect_name} call ({names}) inside reasoning that "
                                  "went on after it (or closed): reasoning, not a call", x.start, "", "noise"))
            self.reason_text.append(raw)
            self.reason_raw.append(raw)

    def held_as_calls(self) -> None:
        """The stream ended on the blocks the reasoning held (nothing but whitespace
        after them): an unclosed reasoning ends on calls (a model that forgot its close
        before them). The reasoning ended where the first began; the rest is read as
        after a block in text."""
        held, self.held = self.held, None
        first = next(x for x in held or () if not isinstance(x, str))
        self._emit(Diagnostic("reasoning_closed_by_call", f"the stream ended on a {first.dialect_name} tool call written "
                              "inside unclosed reasoning: a call, and the reasoning ended where it began "
                              "(calls_in_reasoning)", first.start))
        for x in held or ():
            if isinstance(x, str):
                self._text(x)
            else:
                self._emit_calls(x)

    def release_to_reasoning(self, raw: str, start: int, code: str, why: str) -> None:
        """A block (or a shared opener) begun in reasoning did not hold up: its input
        is reasoning text again, whatever ``on_malformed`` says (the reasoning goes on,
        so what it held is reasoning too)."""
        if self.held is not None:
            self.held_as_reasoning()
        self._emit(Diagnostic(code, why + "; reasoning text", start, "", "noise"))
        self.reason_text.append(raw)
        self.reason_raw.append(raw)

    def fork_to_reasoning(self, ch: str) -> None:
        """Behind a shared opener in reasoning, the dialect bound is one whose calls are
        not read in reasoning: the opener, and what the fork held, are reasoning."""
        held = self._fork_held()
        self.fork = None
        if self.held is not None:
            self.held_as_reasoning()
        self.reason_text.append(self.fork_tag)
        self.reason_raw.append(self.fork_tag)
        self.pushback = held

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
            rules += on(r.state, [EOF_TRIGGER], r.state, "reasoning_eof")
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
