"""The public entry points: :class:`Sieve` for streams, :func:`parse` for whole texts."""

from __future__ import annotations

from dataclasses import dataclass, field
import difflib
from functools import wraps
import inspect
import secrets
from typing import Any, Callable, Collection, Iterable, Literal, ParamSpec, get_args

from callsieve.compiler import CompiledMachine, CompiledRunner, compile_machine
from callsieve.errors import FeedAfterCloseError, InvalidOptionError, MalformedBlockError
from callsieve.events import Diagnostic, Event, Reasoning, Text, ToolCall
from callsieve.grammar.api import Dialect
from callsieve.grammar.registry import resolve
from callsieve.machine import _COMPOSED_MANY_MAX, _COMPOSED_MAX, KeptBySize, Machine, compose, composed_of_many
from callsieve.reference import ReferenceRunner
from callsieve.regions import Config, ModelBase
from callsieve.regions.reasoning import prefill_state
from callsieve.regions.whole import WholeBlocks
from callsieve.schema import load_tools

#: The largest block held before it is released as text (``block_too_large``): 2^22
#: characters. That is room for a 1 MiB file written through one tool call four times
#: over, and about a million tokens, far above what current models write in one
#: response (output budgets of 32k-128k tokens); held at up to ~3 characters per input
#: character (the raw block, the decoded value, its pending fragment), about 12 MB per
#: stream at most. The previous default, 2^24, let one stream hold ~50 MB. A block past
#: the limit is not lost: its rest is streamed out as text, still parsed so that
#: nothing inside it becomes a call.
DEFAULT_MAX_BLOCK_CHARS = 1 << 22

#: The option values, typed so that a checker catches ``on_malformed="ignore"``.
OnMalformed = Literal["text", "drop", "raise"]
UnknownTool = Literal["call", "text", "drop"]
RunnerName = Literal["compiled", "reference"]
CallsInReasoning = Literal["dialect", "call", "reasoning"]

_POLICIES: dict[str, tuple[str, ...]] = {
    "on_malformed": get_args(OnMalformed),
    "unknown_tool": get_args(UnknownTool),
    "runner": get_args(RunnerName),
    "calls_in_reasoning": get_args(CallsInReasoning),
}


def new_id_prefix() -> str:
    """A fresh random call-id prefix (``call_`` + 12 hex digits + ``_``): ids stay unique
    across the sieves of one conversation (48 random bits per sieve). The core and the
    adapters use this one function."""
    return f"call_{secrets.token_hex(6)}_"


def unknown_keyword(name: str, known: Collection[str], callee: str) -> TypeError:
    """The error for a keyword ``callee`` does not take, with the nearest one it does
    (``on_malformd`` → ``on_malformed``) and the list of them."""
    close = difflib.get_close_matches(name, sorted(known), n=1, cutoff=0.6)
    hint = f" (did you mean {close[0]!r}?)" if close else ""
    return TypeError(f"{callee} got an unexpected keyword argument {name!r}{hint}; "
                     f"its options: {', '.join(sorted(known))}")


def check_keywords(given: Iterable[str], known: Collection[str], callee: str) -> None:
    """Raise :func:`unknown_keyword`'s error for the first of ``given`` not in ``known``."""
    for name in given:
        if name not in known:
            raise unknown_keyword(name, known, callee)


_P = ParamSpec("_P")


def _keywords_checked(init: Callable[_P, None]) -> Callable[_P, None]:
    """``Sieve.__init__`` with a misspelt keyword answered by "did you mean" (Python's own
    TypeError names the keyword only). The signature, for ``help()`` and type checkers,
    is the one below."""
    known = frozenset(p.name for p in inspect.signature(init).parameters.values()
                      if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY) and p.name != "self")

    @wraps(init)
    def checked(*args: _P.args, **kwargs: _P.kwargs) -> None:
        if not known.issuperset(kwargs):
            check_keywords(kwargs, known, "Sieve()")
        init(*args, **kwargs)

    return checked


def compiled(machine: Machine) -> CompiledMachine:
    """The compiled runner's table for a composed machine (shared by every sieve; kept
    for as many machines as ``compose`` keeps, the large ones apart)."""
    many = composed_of_many(machine)
    hit = _compiled.get(machine, many)
    if hit is None:
        hit = compile_machine(machine)
        _compiled.put(machine, hit, many)
    return hit


def whole_blocks(machine: Machine) -> WholeBlocks:
    """The whole-block readers of a composed machine (``callsieve.regions.whole``; shared
    by every sieve, like its table)."""
    many = composed_of_many(machine)
    hit = _whole_blocks.get(machine, many)
    if hit is None:
        c = compiled(machine)
        hit = WholeBlocks(machine, c.steps_rest, c.class_of, c.bulk, c.table)
        _whole_blocks.put(machine, hit, many)
    return hit


#: A machine (by identity) → its table, its whole-block readers.
_compiled: KeptBySize[Machine, CompiledMachine] = KeptBySize(_COMPOSED_MAX, _COMPOSED_MANY_MAX)
_whole_blocks: KeptBySize[Machine, WholeBlocks] = KeptBySize(_COMPOSED_MAX, _COMPOSED_MANY_MAX)


class Sieve:
    """Splits a streamed model response into text, reasoning and tool calls.

    ``feed(chunk)`` returns the events that chunk decided; ``close()`` decides what is
    still held (a partial marker, an unterminated block) and ends the stream.

    dialects: names from ``callsieve.DIALECTS`` or registered ones, or ``Dialect``
      objects (None: every built-in dialect).
    tools: OpenAI tool schemas; values are typed by them, unknown tools reported.
    on_malformed: a malformed or unterminated block becomes ``"text"`` (default),
      is dropped (``"drop"``: its input rides on the Diagnostic's ``raw``) or raises
      :class:`callsieve.MalformedBlockError` (``"raise"``). The exception carries, in
      ``.events``, every event the raising call had decided, ending with the block's
      Diagnostic (its ``raw`` is the block's input): what earlier calls returned plus
      ``.events`` is the same however the stream was chunked. The sieve is closed after.
    unknown_tool: a call to a tool not in ``tools`` stays a ``"call"`` (default; a
      Diagnostic comes with it), is dropped (``"drop"``: the other calls of its block
      stay calls), or becomes ``"text"``: then its whole block is released as text,
      balanced, the known calls in it included (abandoned, as the Diagnostic says).
    max_block_chars: a block held longer than this is released as text with a
      ``block_too_large`` Diagnostic; the rest of it is streamed out as text as it
      arrives, still parsed so that nothing inside it becomes a call, until the block's
      structure ends (default :data:`DEFAULT_MAX_BLOCK_CHARS`).
    start_in_reasoning: the prompt ended with ``<think>``; output starts as reasoning
      (in the one reasoning family of the enabled dialects a prompt may open).
    reasoning: recognise the dialects' reasoning markers (``<think>``, ``[THINK]``) at
      all. gpt-oss harmony's analysis channel is decided by its header and stays reasoning.
    calls_in_reasoning: a tool-call block inside unclosed reasoning is a call that ends
      the reasoning (with a ``reasoning_closed_by_call`` Diagnostic) where its dialect
      says its models write them there (``"dialect"``, default: hermes/Qwen3, kimi_k2,
      deepseek_v31), for every dialect (``"call"``), or never: reasoning text
      (``"reasoning"``).
    id_prefix: call ids are ``id_prefix + index``. None (default): a random prefix per
      sieve (:func:`new_id_prefix`), so ids never repeat across the turns of a
      conversation; give one for deterministic ids (tests, replays).
    Events: ``Text``, ``Reasoning``, ``ToolCallStart``, ``ToolCallDelta``, ``ToolCall``,
      ``Diagnostic`` (``help(callsieve.Diagnostic)`` lists the codes); each has ``raw``.
    runner: ``"compiled"`` (default) or ``"reference"`` (the transitions machine; slow,
      for tests and audits).
    strict: every tolerance off (what models really emit but their format does not
      allow: a Qwen3-Coder call without ``<tool_call>``, a dropped ``</parameter>``,
      leaked DSML misspellings, Python-style values, arguments wrapped once): such
      markup is then read by the format alone, and what it does not allow is text.
      Default False: tolerated, each time with a Diagnostic saying what was assumed.
    bare_calls: read calls that no marker opens, where the response begins (Llama's bare
      ``{"name": …, "parameters": …}``, a bare pythonic ``[f(a=1)]``): ``None`` (default)
      does when ``tools`` is given (the first call must then name a known tool) or when
      ``dialects`` names the dialects, and not for ``Sieve()`` with neither: a JSON
      answer the user asked for stays text. True or False decides it.

    Bad option values raise :class:`callsieve.InvalidOptionError` (a ``ValueError``)
    here, and bad tool schemas :class:`callsieve.InvalidToolSchemaError`, never
    ``feed()``.
    """

    @_keywords_checked
    def __init__(
        self,
        dialects: Iterable[str | Dialect] | str | None = None,
        tools: Iterable[Any] | None = None,
        *,
        on_malformed: OnMalformed = "text",
        unknown_tool: UnknownTool = "call",
        max_block_chars: int = DEFAULT_MAX_BLOCK_CHARS,
        start_in_reasoning: bool = False,
        reasoning: bool = True,
        calls_in_reasoning: CallsInReasoning = "dialect",
        id_prefix: str | None = None,
        runner: RunnerName = "compiled",
        strict: bool = False,
        bare_calls: bool | None = None,
    ) -> None:
        for name, value in (("on_malformed", on_malformed), ("unknown_tool", unknown_tool), ("runner", runner),
                            ("calls_in_reasoning", calls_in_reasoning)):
            if not isinstance(value, str) or value not in _POLICIES[name]:
                raise InvalidOptionError(f"{name}={value!r}: choose one of {', '.join(map(repr, _POLICIES[name]))}")
        if isinstance(max_block_chars, bool) or not isinstance(max_block_chars, int) or max_block_chars < 1:
            raise InvalidOptionError(f"max_block_chars={max_block_chars!r}: must be a positive int")
        for name, flag in (("start_in_reasoning", start_in_reasoning), ("reasoning", reasoning), ("strict", strict)):
            if not isinstance(flag, bool):
                raise InvalidOptionError(f"{name}={flag!r}: must be True or False")
        if id_prefix is not None and not isinstance(id_prefix, str):
            raise InvalidOptionError(f"id_prefix={id_prefix!r}: must be a str or None")
        if bare_calls is not None and not isinstance(bare_calls, bool):
            raise InvalidOptionError(f"bare_calls={bare_calls!r}: must be True, False or None")
        self.dialects = resolve(dialects)
        if bare_calls is None:
            # Calls with no marker of their own only on evidence that calls are expected:
            # tools to call, or formats named (a JSON answer to Sieve() stays text).
            bare_calls = tools is not None or dialects is not None
        #: Whether this sieve reads calls no marker opens (``bare_calls``, as decided).
        self.bare_calls: bool = bare_calls
        self.machine = compose(self.dialects, bool(reasoning), calls_in_reasoning, strict, bare_calls)
        config = Config(
            matchers=self.machine.matchers,
            scoped=self.machine.scoped,
            tools=load_tools(tools),
            on_malformed=on_malformed,
            unknown_tool=unknown_tool,
            max_block_chars=max_block_chars,
            id_prefix=new_id_prefix() if id_prefix is None else id_prefix,
            strict=strict,
            sinks=self.machine.sinks,
            openers=self.machine.openers,
        )
        # The reference runner's model is the composed class (transitions adds its
        # methods to the instance); the compiled runner's is ``runner_model``.
        model = self.machine.model if runner == "reference" else self.machine.runner_model
        self._ctx: ModelBase = model(config)
        initial = self.machine.start  # "text", or where a prompt that ended in a header goes on
        if start_in_reasoning:
            if not reasoning:
                raise InvalidOptionError("start_in_reasoning=True needs reasoning=True")
            declared = tuple(r for d in self.dialects for r in d.reasoning)
            got = prefill_state(declared)
            if got is None:
                states = sorted({r.state for r in declared if r.prefill})
                raise InvalidOptionError(
                    f"start_in_reasoning=True: the dialects declare several reasoning families a prompt may open ({', '.join(states)})"
                    if states else
                    "start_in_reasoning=True: none of the dialects "
                    f"{', '.join(d.name for d in self.dialects)} declares reasoning a prompt may open"
                )
            initial = got
        self._runner: CompiledRunner | ReferenceRunner
        if runner == "reference":
            self._runner = ReferenceRunner(self.machine.decl, self._ctx, initial)
        else:
            self._runner = CompiledRunner(compiled(self.machine), self._ctx, whole_blocks(self.machine))
            self._ctx.state = initial
        self._closed = False
        #: The compiled runner while the sieve is open (the fast path's), else None.
        self._fast = self._runner if isinstance(self._runner, CompiledRunner) else None
        if self._fast is not None:
            # While open, this sieve's ``feed`` is the runner's (issue 27: one call per
            # chunk, not two): it hands what is not a ``str`` back to :meth:`feed` and
            # tells :meth:`_failed` what raised in it; closing or failing drops it, and
            # :meth:`feed` (which raises FeedAfterCloseError) answers again. (Not where a
            # subclass has a ``feed`` of its own.)
            self._fast.not_str = self._feed_not_str
            self._fast.failed = self._failed
            if type(self).feed is Sieve.feed:
                self.feed = self._fast.feed_events  # type: ignore[method-assign]

    @property
    def runner(self) -> CompiledRunner | ReferenceRunner:
        """The runner driving this sieve (read-only; for tracing and audits)."""
        return self._runner

    @property
    def state(self) -> str:
        """The machine's current state (for audits and tests)."""
        return str(self._ctx.state)

    def feed(self, chunk: str) -> list[Event]:
        # The compiled runner, open, given a str: one call (CompiledRunner.feed_events,
        # which shows what raises in it to ``_failed``). (An open sieve of that runner
        # calls it directly: its ``feed`` attribute is the runner's.)
        fast = self._fast
        if fast is not None and type(chunk) is str:
            return fast.feed_events(chunk)
        return self._feed_not_str(chunk)

    def _shut(self) -> None:
        """Closed (or failed): no feed reaches the runner's fast path again, not even
        through a ``feed`` bound while the sieve was open."""
        self._closed = True
        fast = self._fast
        if fast is not None:
            fast.shut = True
            self._fast = None
        self.__dict__.pop("feed", None)

    def _failed(self, e: BaseException) -> None:
        """What raised in the compiled runner's ``feed_events``: the sieve is closed,
        and a MalformedBlockError carries the events decided before it."""
        self._shut()
        if isinstance(e, MalformedBlockError):
            e.events = self._drain()  # on_malformed="raise": nothing decided is lost

    def _feed_not_str(self, chunk: object) -> list[Event]:
        """``feed`` by the runner's own ``feed`` and the drain: the reference runner,
        a ``str`` subclass, or a sieve that is closed or given no ``str``."""
        if self._closed:
            raise FeedAfterCloseError("feed() after close(): make a new Sieve for a new stream")
        if not isinstance(chunk, str):
            raise TypeError(f"feed() takes str, not {type(chunk).__name__}")
        try:
            self._runner.feed(chunk)
        except MalformedBlockError as e:
            self._shut()
            e.events = self._drain()  # on_malformed="raise": nothing decided is lost
            raise
        except BaseException:
            self._shut()
            raise
        return self._drain()

    def close(self) -> list[Event]:
        if self._closed:
            raise FeedAfterCloseError("close() called twice")
        self._shut()
        try:
            self._runner.eof()
        except MalformedBlockError as e:
            e.events = self._drain()
            raise
        return self._drain()

    def _drain(self) -> list[Event]:
        ctx = self._ctx
        if ctx.text_buf or ctx.delta_buf or ctx.reason_raw or ctx.dropped:
            ctx.flush()  # (what it flushes: most token-sized feeds leave none of it)
        out = ctx.out
        if not out:
            return []
        ctx.out = []
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
    check_keywords(options, SIEVE_OPTIONS, "parse()")
    s = Sieve(dialects, tools, **options)
    events = s.feed(text) + s.close()
    return Parsed(
        text="".join(e.text for e in events if isinstance(e, Text)),
        reasoning="".join(e.text for e in events if isinstance(e, Reasoning)),
        calls=[e for e in events if isinstance(e, ToolCall)],
        diagnostics=[e for e in events if isinstance(e, Diagnostic)],
        events=events,
    )


#: Every keyword :class:`Sieve` takes (what :func:`parse` and the adapters pass on).
SIEVE_OPTIONS: frozenset[str] = frozenset(
    p.name for p in inspect.signature(Sieve.__init__).parameters.values() if p.name != "self"
)
