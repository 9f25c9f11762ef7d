"""The public entry points: :class:`Sieve` for streams, :func:`parse` for whole texts."""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any, Iterable

from callsieve.compiler import CompiledMachine, CompiledRunner, compile_machine
from callsieve.context import Config, Context
from callsieve.errors import FeedAfterCloseError
from callsieve.events import Diagnostic, Event, Reasoning, Text, ToolCall
from callsieve.machine import declare
from callsieve.matcher import Entry, Matcher
from callsieve.reference import ReferenceRunner
from callsieve.schema import load_tools
from callsieve.grammar import cdata, reasoning
from callsieve.grammar.api import Dialect, Kind
from callsieve.grammar.registry import resolve

DEFAULT_MAX_BLOCK_CHARS = 1 << 24

_POLICIES = {
    "on_malformed": ("text", "drop", "raise"),
    "unknown_tool": ("call", "text", "drop"),
}


def _entries(d: Dialect, *kinds: Kind) -> list[Entry]:
    return [Entry(m.kind, d, m) for m in d.markers if m.kind in kinds]


@lru_cache(maxsize=64)
def matchers(dialects: tuple[Dialect, ...], think: bool) -> tuple[dict[str, Matcher], dict[str, dict[str, Matcher]]]:
    """The matchers of every context: ``(by text context, by dialect → by block context)``.

    Public so that tools reading the machine (diagrams, audits) see the same markers the
    runners do.
    """
    think_entries = [Entry(m.kind, None, m) for m in reasoning.MARKERS] if think else []
    openers = [e for d in dialects for e in _entries(d, Kind.BLOCK_OPEN)]
    openers += [e for d in dialects if d.bare_calls for e in _entries(d, Kind.CALL_OPEN)]
    text = {
        "text": Matcher(think_entries + openers),
        "in_reasoning": Matcher([e for e in think_entries if e.kind is Kind.THINK_CLOSE]),
    }
    blocks: dict[str, dict[str, Matcher]] = {}
    for d in dialects:
        value = _entries(d, Kind.PARAM_CLOSE)
        if d.value.cdata:
            value.append(Entry(Kind.CDATA_OPEN, d, cdata.CDATA_OPEN))
        blocks[d.name] = {
            "in_block": Matcher(_entries(d, Kind.CALL_OPEN, Kind.BLOCK_CLOSE)),
            "in_call": Matcher(_entries(d, Kind.PARAM_OPEN, Kind.CALL_CLOSE, Kind.BLOCK_CLOSE)),
            "in_param": Matcher(value),
            "after_close": Matcher(_entries(d, Kind.PARAM_OPEN, Kind.CALL_CLOSE, Kind.BLOCK_CLOSE)),
            "json_value": Matcher(_entries(d, Kind.PARAM_CLOSE)),
        }
    return text, blocks


@lru_cache(maxsize=64)
def _compiled(dialects: tuple[Dialect, ...]) -> CompiledMachine:
    return compile_machine(declare(dialects))


class Sieve:
    """Splits a streamed model response into text, reasoning and tool calls.

    ``feed(chunk)`` returns the events that chunk decided; ``close()`` decides what is
    still held (a partial marker, an unterminated block) and ends the stream.

    dialects: names from ``callsieve.DIALECTS`` (None: all of them).
    tools: OpenAI tool schemas; values are typed by them, unknown tools reported.
    on_malformed: a malformed or unterminated block becomes ``"text"`` (default),
      is dropped (``"drop"``: its input rides on the Diagnostic's ``raw``) or raises
      :class:`callsieve.MalformedBlockError` (``"raise"``).
    unknown_tool: a call to a tool not in ``tools`` stays a ``"call"`` (default; a
      Diagnostic comes with it), becomes ``"text"``, or is dropped (``"drop"``).
    max_block_chars: a block held longer than this is released as a malformed block.
    start_in_reasoning: the prompt ended with ``<think>``; output starts as reasoning.
    reasoning: recognise ``<think>``/``</think>`` at all.
    id_prefix: the prefix of the ids made for calls (``id_prefix`` + the call's index).
    Events: ``Text``, ``Reasoning``, ``ToolCallStart``, ``ToolCallDelta``, ``ToolCall``,
      ``Diagnostic`` (``help(callsieve.Diagnostic)`` lists the codes); each has ``raw``.
    runner: ``"compiled"`` (default) or ``"reference"`` (the transitions machine; slow,
      for tests and audits).
    """

    def __init__(
        self,
        dialects: Iterable[str | Dialect] | str | None = None,
        tools: Iterable[Any] | None = None,
        *,
        on_malformed: str = "text",
        unknown_tool: str = "call",
        max_block_chars: int = DEFAULT_MAX_BLOCK_CHARS,
        start_in_reasoning: bool = False,
        reasoning: bool = True,
        id_prefix: str = "call_",
        runner: str = "compiled",
    ) -> None:
        for name, value in (("on_malformed", on_malformed), ("unknown_tool", unknown_tool)):
            if value not in _POLICIES[name]:
                raise ValueError(f"{name}={value!r}: choose one of {', '.join(_POLICIES[name])}")
        if runner not in ("compiled", "reference"):
            raise ValueError(f"runner={runner!r}: choose 'compiled' or 'reference'")
        if not isinstance(max_block_chars, int) or max_block_chars < 1:
            raise ValueError("max_block_chars must be a positive int")
        self.dialects = resolve(dialects)
        text_m, block_m = matchers(self.dialects, bool(reasoning))
        config = Config(
            text_matchers=text_m,
            block_matchers=block_m,
            tools=load_tools(tools),
            on_malformed=on_malformed,
            unknown_tool=unknown_tool,
            max_block_chars=max_block_chars,
            id_prefix=id_prefix,
        )
        self._ctx = Context(config)
        initial = "in_reasoning" if start_in_reasoning else "text"
        self._runner: CompiledRunner | ReferenceRunner
        if runner == "reference":
            self._runner = ReferenceRunner(declare(self.dialects), self._ctx, initial)
        else:
            self._runner = CompiledRunner(_compiled(self.dialects), self._ctx)
            self._ctx.state = initial
        self._closed = False

    @property
    def runner(self) -> CompiledRunner | ReferenceRunner:
        """The runner driving this sieve (read-only; for tracing and audits)."""
        return self._runner

    @property
    def state(self) -> str:
        """The machine's current state (for audits and tests)."""
        return str(self._ctx.state)

    def feed(self, chunk: str) -> list[Event]:
        if self._closed:
            raise FeedAfterCloseError("feed() after close(): make a new Sieve for a new stream")
        if not isinstance(chunk, str):
            raise TypeError(f"feed() takes str, not {type(chunk).__name__}")
        try:
            self._runner.feed(chunk)
        except BaseException:
            self._closed = True
            raise
        return self._drain()

    def close(self) -> list[Event]:
        if self._closed:
            raise FeedAfterCloseError("close() called twice")
        self._closed = True
        self._runner.eof()
        return self._drain()

    def _drain(self) -> list[Event]:
        ctx = self._ctx
        ctx.flush()
        out, ctx.out = ctx.out, []
        return out


@dataclass
class Parsed:
    """Everything a whole text held, sorted by kind; ``events`` keeps the order."""

    text: str
    reasoning: str
    calls: list[ToolCall]
    diagnostics: list[Diagnostic]
    events: list[Event] = field(default_factory=list)


def parse(
    text: str,
    dialects: Iterable[str | Dialect] | str | None = None,
    tools: Iterable[Any] | None = None,
    **options: Any,
) -> Parsed:
    """Parse a complete response (see :class:`Sieve` for the options)."""
    s = Sieve(dialects, tools, **options)
    events = s.feed(text) + s.close()
    return Parsed(
        text="".join(e.text for e in events if isinstance(e, Text)),
        reasoning="".join(e.text for e in events if isinstance(e, Reasoning)),
        calls=[e for e in events if isinstance(e, ToolCall)],
        diagnostics=[e for e in events if isinstance(e, Diagnostic)],
        events=events,
    )
