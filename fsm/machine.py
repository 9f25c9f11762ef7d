"""The callsieve machine, declared once.

Theory of operation
===================

1. The input is read one character at a time. Each character is a *trigger*: its
   character class (``lt`` for ``<`` and ``＜``, ``nl``, ``tick``, ... or ``other``).
   ``eof`` ends the stream; ``overflow`` fires when a held block passes
   ``max_block_chars``. Every (state, trigger) pair has transitions; they are tried in
   order and the first whose guards pass fires. An unguarded last transition makes
   every pair total: an unexpected character is a transition too, never an exception.

2. Prose is ``text``. A backtick or tilde run may open inline code (``in_code_span``)
   or, at a line start, a fence (``in_fence``); inside them everything is text, so
   markup in a fenced example is never a call.

3. A start character (``<``, ``＜``) moves to ``maybe_tag``, which *holds* characters
   while the held tag is still a prefix of a marker the current context allows (the
   guard ``tag_viable`` asks the context's matcher). A complete marker fires its
   transition (``is_block_open`` → ``in_block`` and so on). A dead prefix goes back
   where it came from: its first character is text (or value), the rest is read
   again. A prefix alive at a chunk's end stays held, so a marker split across chunks
   never leaks.

4. Inside a block the structure is ``in_block`` (between calls), ``in_call`` (between
   parameters) and ``in_param`` (a value). Between markers only whitespace is grammar;
   anything else makes the block *malformed*: it is released (as text by default) with
   a ``Diagnostic`` and reading goes on in ``text``. A block still open at ``eof`` is
   released the same way. Calls are emitted only when their block closes. A dialect
   may allow a bare call in prose: it opens an implied block, which ends, complete,
   at the first thing after a call close that is not grammar (``end_bare_block``).

5. A parameter close does not end a value by itself: it moves to ``after_close``,
   which holds it and any whitespace until the next marker decides. Another parameter,
   the call close or the block close confirm it; anything else returns the held text
   to the value (``reopen_value``). So ``</parameter>`` inside a file body is data.

6. In a value, ``<![CDATA[`` enters ``in_cdata``, left only by ``]]>``
   (``cdata_rb``, ``cdata_rbrb``): nothing inside is markup. JSON values (DSML
   ``string="false"``) are read by the JSON body states, where a close inside a
   string, or inside an unfinished object, is data.

7. Table-driven: states, triggers, guards, actions, their order. Not table-driven:
   what a guard computes (marker matching lives in ``callsieve.matcher``, patterns in
   ``grammar/``) and what an action does with the text (``callsieve.context``). The engine
   never branches on a dialect's name: dialects supply markers and value styles, and
   body grammars supply states.

8. Three artefacts come from this one declaration: the reference runner (the
   ``transitions`` machine, one trigger per character), the compiled runner (a table
   read from that machine's events, with bulk scans of self-loops), and the diagrams.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any, Iterable

from callsieve.declare import (
    EOF_TRIGGER,
    OVERFLOW,
    Declaration,
    StateDecl,
    Transition,
    but,
    on,
    validate,
)
from callsieve.grammar.api import Dialect

#: Every trigger a character can be.
from callsieve.declare import CHAR_TRIGGERS as ALL  # noqa: E402

CORE_STATES = (
    StateDecl("text", "visible prose"),
    StateDecl("maybe_tag", "holding a possible marker until it is decided"),
    StateDecl("tick_run", "a run of backticks or tildes in prose: code span or fence?"),
    StateDecl("in_code_span", "inline code: markup is text"),
    StateDecl("span_run", "backticks inside inline code: does the span close?"),
    StateDecl("in_fence", "a fenced code block: markup is text"),
    StateDecl("fence_run", "backticks or tildes at a line start in a fence: does it close?"),
    StateDecl("in_reasoning", "between <think> and </think>"),
    StateDecl("in_block", "in a tool block, between calls", in_block=True),
    StateDecl("in_call", "in a call, between parameters", in_block=True),
    StateDecl("in_param", "a raw parameter value", in_block=True),
    StateDecl("in_cdata", "a CDATA section in a value: nothing is markup", in_block=True),
    StateDecl("cdata_rb", "] seen in CDATA", in_block=True),
    StateDecl("cdata_rbrb", "]] seen in CDATA", in_block=True),
    StateDecl("after_close", "a parameter close held until what follows decides", in_block=True),
)

_BLOCK_STATES = tuple(s.name for s in CORE_STATES if s.in_block)


def _core_transitions() -> list[Transition]:
    t: list[Transition] = []
    # -- prose
    t += on("text", ["lt"], "maybe_tag", "tag_begin")
    t += on("text", ["tick"], "tick_run", "run_begin")
    t += on("text", ["tilde"], "tick_run", "run_begin", when=["at_line_start"], rank=10)
    t += on("text", but("lt", "tick"), "text", "text_char", rank=90)
    t += on("text", [EOF_TRIGGER], "text")
    # -- backtick/tilde runs: inline code or a fence
    t += on("tick_run", ["tick", "tilde"], "tick_run", "run_more", when=["same_run_char"], rank=10)
    t += on("tick_run", ALL, "in_fence", "open_fence", "reprocess", when=["run_opens_fence"], rank=20)
    t += on("tick_run", ALL, "in_code_span", "open_span", "reprocess", when=["run_opens_span"], rank=30)
    t += on("tick_run", ALL, "text", "reprocess", rank=90)
    t += on("tick_run", [EOF_TRIGGER], "text")
    t += on("in_code_span", ["tick"], "span_run", "run_begin")
    t += on("in_code_span", ["nl"], "text", "text_char")
    t += on("in_code_span", but("tick", "nl"), "in_code_span", "text_char")
    t += on("in_code_span", [EOF_TRIGGER], "text")
    t += on("span_run", ["tick"], "span_run", "run_more", rank=10)
    t += on("span_run", but("tick"), "text", "reprocess", when=["run_closes_span"], rank=20)
    t += on("span_run", but("tick"), "in_code_span", "reprocess", rank=90)
    t += on("span_run", [EOF_TRIGGER], "text")
    t += on("in_fence", ["tick", "tilde"], "fence_run", "run_begin", when=["fence_may_close"], rank=10)
    t += on("in_fence", ALL, "in_fence", "text_char", rank=90)
    t += on("in_fence", [EOF_TRIGGER], "text")
    t += on("fence_run", ["tick", "tilde"], "fence_run", "run_more", when=["same_run_char"], rank=10)
    t += on("fence_run", ALL, "text", "reprocess", when=["run_closes_fence"], rank=20)
    t += on("fence_run", ALL, "in_fence", "reprocess", rank=90)
    t += on("fence_run", [EOF_TRIGGER], "text")
    # -- reasoning
    t += on("in_reasoning", ["lt"], "maybe_tag", "tag_begin")
    t += on("in_reasoning", but("lt"), "in_reasoning", "reasoning_char")
    t += on("in_reasoning", [EOF_TRIGGER], "in_reasoning")
    # -- maybe_tag: a live prefix, a complete marker, or back where it came from
    t += on("maybe_tag", ALL, "maybe_tag", "tag_push", when=["tag_viable"], rank=5)
    t += on("maybe_tag", ALL, "in_reasoning", "enter_reasoning", when=["is_think_open"], rank=10)
    t += on("maybe_tag", ALL, "text", "leave_reasoning", when=["is_think_close", "from_reasoning"], rank=11)
    t += on("maybe_tag", ALL, "text", "stray_think_close", when=["is_think_close"], rank=12)
    t += on("maybe_tag", ALL, "in_block", "open_block", when=["is_block_open"], rank=13)
    t += on("maybe_tag", ALL, "text", "close_block", when=["is_block_close"], rank=14)
    t += on("maybe_tag", ALL, "in_call", "open_bare_call", when=["is_call_open", "from_text"], rank=15)
    t += on("maybe_tag", ALL, "in_call", "open_call", when=["is_call_open"], rank=15)
    t += on("maybe_tag", ALL, "in_block", "close_call", when=["is_call_close"], rank=16)
    t += on("maybe_tag", ALL, "in_param", "open_param", when=["is_param_open"], rank=17)
    t += on("maybe_tag", ALL, "after_close", "hold_close", when=["is_param_close"], rank=18)
    t += on("maybe_tag", ALL, "in_cdata", "open_cdata", when=["is_cdata_open"], rank=19)

    t += on("maybe_tag", ALL, "text", "tag_reject", "reprocess", when=["from_text"], rank=30)
    t += on("maybe_tag", ALL, "in_reasoning", "tag_reject", "reprocess", when=["from_reasoning"], rank=31)
    t += on("maybe_tag", ALL, "in_param", "tag_reject", "reprocess", when=["from_param"], rank=32)
    t += on("maybe_tag", ALL, "in_param", "reopen_value", "reprocess", when=["from_after_close"], rank=34)
    t += on("maybe_tag", ALL, "text", "end_bare_block", "reprocess", when=["from_bare_block"], rank=35)
    t += on("maybe_tag", ALL, "text", "abort_block", "reprocess", rank=90)
    t += on("maybe_tag", [EOF_TRIGGER], "text", "tag_release_eof", when=["from_text"], rank=10)
    t += on("maybe_tag", [EOF_TRIGGER], "in_reasoning", "tag_release_eof", when=["from_reasoning"], rank=11)
    t += on("maybe_tag", [EOF_TRIGGER], "text", "end_bare_block", when=["from_bare_block"], rank=20)
    t += on("maybe_tag", [EOF_TRIGGER], "text", "abort_block_eof", rank=90)
    # -- block structure: only whitespace between markers
    # an implied block (a bare call in prose) ends, complete, where grammar stops
    t += on("in_block", but("ws", "nl", "lt"), "text", "end_bare_block", "reprocess", when=["in_bare_block"], rank=10)
    t += on("in_block", [EOF_TRIGGER], "text", "end_bare_block", when=["in_bare_block"], rank=10)
    for s in ("in_block", "in_call"):
        t += on(s, ["ws", "nl"], s, "hold_char")
        t += on(s, ["lt"], "maybe_tag", "tag_begin")
        t += on(s, but("ws", "nl", "lt"), "text", "abort_block", "reprocess")
    t += on("in_param", ["lt"], "maybe_tag", "tag_begin")
    t += on("in_param", but("lt"), "in_param", "value_char")
    # -- CDATA: ]]> is found by states, since ] may repeat
    t += on("in_cdata", ["rbrack"], "cdata_rb", "cdata_hold")
    t += on("in_cdata", but("rbrack"), "in_cdata", "cdata_char")
    t += on("cdata_rb", ["rbrack"], "cdata_rbrb", "cdata_hold")
    t += on("cdata_rb", but("rbrack"), "in_cdata", "cdata_release", "reprocess")
    t += on("cdata_rbrb", ["rbrack"], "cdata_rbrb", "cdata_shift")
    t += on("cdata_rbrb", ["gt"], "in_param", "close_cdata")
    t += on("cdata_rbrb", but("rbrack", "gt"), "in_cdata", "cdata_release", "reprocess")
    # -- after_close: hold the close and spaces until the next marker decides
    t += on("after_close", ["ws", "nl"], "after_close", "hold_ws")
    t += on("after_close", ["lt"], "maybe_tag", "tag_begin")
    t += on("after_close", but("ws", "nl", "lt"), "in_param", "reopen_value", "reprocess", rank=90)
    # -- the end of the stream, or a runaway block, inside a block
    for s in _BLOCK_STATES:
        t += on(s, [EOF_TRIGGER], "text", "abort_block_eof")
        t += on(s, [OVERFLOW], "text", "abort_oversized")
    return t


def _bodies(dialects: Iterable[Dialect]) -> list[str]:
    seen: list[str] = []
    for d in dialects:
        for b in d.bodies:
            if b not in seen:
                seen.append(b)
    return seen


@lru_cache(maxsize=64)
def declare(dialects: tuple[Dialect, ...]) -> Declaration:
    """The machine for these dialects: the core plus the body grammars they use."""
    from callsieve.context import Context
    from callsieve.grammar.bodies import BODIES

    states = list(CORE_STATES)
    transitions = _core_transitions()
    for name in _bodies(dialects):
        body_states, body_transitions = BODIES[name]()
        states += body_states
        transitions += body_transitions
    decl = Declaration(tuple(states), tuple(transitions))
    validate(decl, Context)
    return decl


def build_machine(decl: Declaration, model: Any, initial: str | None = None, graph: bool = False) -> Any:
    """A ``transitions`` machine over ``model`` from the declaration.

    ``graph=True`` builds a ``GraphMachine`` (graphviz engine) for diagrams; build it
    from a fresh model, since a live machine highlights its current state.
    """
    kwargs: dict[str, Any] = dict(
        model=model,
        states=decl.state_names(),
        transitions=[t.as_dict() for t in decl.ordered()],
        initial=initial or decl.initial,
        auto_transitions=False,
        ignore_invalid_triggers=False,
        send_event=False,
    )
    if graph:
        from transitions.extensions import GraphMachine

        return GraphMachine(graph_engine="graphviz", show_conditions=True, **kwargs)
    from transitions import Machine

    return Machine(**kwargs)
