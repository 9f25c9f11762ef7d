"""OpenAI-compatible streams, cleaned: markup out of ``content``, calls into ``tool_calls``.

Install with the ``openai`` extra (``pip install 'callsieve[openai]'``). Nothing here is
imported by ``import callsieve``; the ``openai`` package itself is imported only when a
pydantic chunk needs a new tool-call object, so dict-shaped chunks work without it.

    from callsieve.openai import sieve_stream

    stream = client.chat.completions.create(model=..., messages=..., stream=True)
    for chunk in sieve_stream(stream, dialects=["dsml"], tools=tools):
        ...   # chunk.choices[0].delta.content is clean; calls are in delta.tool_calls

Every way the SDK streams is accepted (see :func:`sieve_stream`): ``Stream`` and
``AsyncStream`` come back wrapped (:class:`SievedStream`, :class:`AsyncSievedStream`:
``with``, ``close()``, ``.response`` keep working); the stream helpers
(``client.chat.completions.stream()``, ``client.responses.stream()``) come back as the
SDK's own helper reading cleaned chunks, so their events, snapshot and final completion
are clean; Responses API streams are cleaned by :mod:`callsieve.openai_responses`. A
stream that cannot be cleaned is refused with ``TypeError``, never passed through.

Theory of operation (chat completion chunks):

1. One :class:`callsieve.Sieve` per upstream choice index. Each chunk's ``delta.content`` is
   fed to it; the events come back out in the same chunk shape: ``Text`` as
   ``delta.content``, ``Reasoning`` appended to ``delta.reasoning_content`` (or
   ``delta.reasoning`` with ``reasoning_field="reasoning"``, the field vLLM now uses), a
   ``ToolCallStart`` as a ``delta.tool_calls`` entry ``{index, id, type: "function",
   function: {name, arguments: ""}}`` and ``ToolCallDelta`` fragments as entries
   ``{index, function: {arguments}}``, exactly as OpenAI streams calls. Each output
   chunk carries at most one of these, so events keep their order; one upstream chunk
   may become several output chunks (same ``id``, ``model``, ``created``), and a chunk
   whose content is entirely held back (a partial marker, an open block) and that
   carries nothing else is withheld.
2. Everything else in a delta passes through untouched on the first output chunk:
   ``role``, ``refusal``, ``reasoning_content`` sent by the upstream, ``logprobs``, and
   ``tool_calls`` the upstream produced itself.
3. Tool-call indices are allocated per choice in order of first appearance, across the
   upstream's own calls and extracted ones, so they never collide and stay dense
   (``0, 1, 2, ...``), which is what accumulators such as the SDK's
   ``ChatCompletionStreamState`` index by. When the upstream's calls come first (the
   usual case) their indices are unchanged.
4. The chunk carrying ``finish_reason`` is held until the sieve is closed: whatever the
   close decides (a held partial marker, an unterminated block released as text) is
   emitted first, and the finish comes last. ``finish_reason`` ``"stop"`` becomes
   ``"tool_calls"`` when calls were extracted; ``"length"`` and ``"content_filter"`` are
   kept (they tell the client the output was cut). If the upstream ends without a
   finish for some choice, the sieve is closed at the end of the stream and its events
   are emitted in a last chunk with ``finish_reason`` ``None``.

Abandoned calls cannot be un-streamed, and are shown once. With ``stream_arguments=True``
(the default) a call's start and argument fragments are sent as they are decided. If the
block holding the call later proves malformed, is cut by the end of the stream (the
upstream's ``max_tokens``: ``finish_reason`` ``"length"``) or passes
``max_block_chars``, the sieve abandons the call: a ``ToolCallAbandoned`` event (index,
id, name, reason, and the call's markup in ``raw``), then a ``Diagnostic`` that says why.
Its markup never reaches ``content``. The client keeps a tool-call entry at that index
that is never completed: a call's closing ``}`` is sent only once the call is decided, so
the arguments of an abandoned call never parse as a JSON object. ``finish_reason`` is
the upstream's (``"length"`` stays ``"length"``; ``"stop"`` becomes ``"tool_calls"`` only
when a call was completed). Pass ``on_event=`` to see the ``ToolCallAbandoned`` events
and Diagnostics, or ``stream_arguments=False`` to send each call whole (one entry with
id, name and complete arguments) only once it is decided: then no abandoned call ever
reaches ``tool_calls`` (nor ``content``), at the cost of argument streaming. That is the
preset for a proxy whose clients run what they receive.

Upstreams that leak markup *and* send the same call in ``delta.tool_calls`` (seed 001
saw DeepSeek do both) will yield that call twice: once passed through, once extracted.
"""

from __future__ import annotations

import inspect
import sys
from collections import deque
from dataclasses import dataclass, field
from typing import (
    TYPE_CHECKING,
    Any,
    AsyncIterable,
    AsyncIterator,
    Callable,
    Generic,
    Iterable,
    Iterator,
    Mapping,
    Protocol,
    TypeVar,
    overload,
)

from callsieve.events import Event, Reasoning, Text, ToolCall, ToolCallAbandoned, ToolCallDelta, ToolCallStart
from callsieve.sieve import SIEVE_OPTIONS, Sieve, check_keywords, new_id_prefix  # one source of call ids (issue 12, finding 11)

if TYPE_CHECKING:
    from openai.lib.streaming.chat import (
        AsyncChatCompletionStream,
        AsyncChatCompletionStreamManager,
        ChatCompletionStream,
        ChatCompletionStreamManager,
    )
    from openai.lib.streaming.responses import (
        AsyncResponseStream,
        AsyncResponseStreamManager,
        ResponseStream,
        ResponseStreamManager,
    )
    from openai.types.chat import ChatCompletion, ChatCompletionMessage

_R = TypeVar("_R")

__all__ = [
    "sieve_stream",
    "asieve_stream",
    "clean_message",
    "clean_completion",
    "StreamSieve",
    "SievedStream",
    "AsyncSievedStream",
    "SievedStreamManager",
    "AsyncSievedStreamManager",
    "REASONING_FIELDS",
]

#: Finish reasons that become ``"tool_calls"`` when calls were extracted.
_REWRITE_FINISH = ("stop",)

#: Where reasoning goes in a delta or message: DeepSeek's and SGLang's field, or vLLM's.
REASONING_FIELDS = ("reasoning_content", "reasoning")


def _reasoning_field(name: str) -> str:
    if name not in REASONING_FIELDS:
        raise ValueError(f"reasoning_field must be one of {', '.join(map(repr, REASONING_FIELDS))}, not {name!r}")
    return name


# --------------------------------------------------------------- shape access
def _get(obj: Any, name: str) -> Any:
    """A field of a pydantic model or a mapping (None when absent)."""
    if obj is None:
        return None
    if isinstance(obj, Mapping):
        return obj.get(name)
    return getattr(obj, name, None)


def _replace(obj: Any, **changes: Any) -> Any:
    """A shallow copy of ``obj`` with ``changes`` (pydantic ``model_copy`` or a dict)."""
    if isinstance(obj, Mapping):
        out = dict(obj)
        out.update(changes)
        return out
    copy = obj.model_copy(update=changes)
    # model_copy does not always record updated fields as set; exclude_unset dumps
    # (``to_dict()``, the SDK's accumulator) must still see them.
    fields_set = getattr(copy, "__pydantic_fields_set__", None)
    if isinstance(fields_set, set):
        model_fields = type(copy).model_fields
        fields_set.update(k for k in changes if k in model_fields)
    return copy


def _payload(delta: Any) -> dict[str, Any]:
    """The fields a delta carries with a value (for deciding whether it is empty)."""
    if delta is None:
        return {}
    if isinstance(delta, Mapping):
        items = dict(delta)
    else:
        items = {k: getattr(delta, k, None) for k in getattr(delta, "model_fields_set", ())}
        items.update(getattr(delta, "model_extra", None) or {})
    return {k: v for k, v in items.items() if v not in (None, "", [], {})}


def _new_delta(template: Any, fields: dict[str, Any]) -> Any:
    """A fresh delta of the template's kind holding only ``fields``."""
    if template is None or isinstance(template, Mapping):
        return dict(fields)
    return type(template).construct(**fields)


def _tool_call_entry(pydantic: bool, index: int, arguments: str, id: str | None = None, name: str | None = None) -> Any:
    function: dict[str, Any] = {"arguments": arguments} if name is None else {"name": name, "arguments": arguments}
    if not pydantic:
        entry: dict[str, Any] = {"index": index}
        if id is not None:
            entry["id"] = id
            entry["type"] = "function"
        entry["function"] = function
        return entry
    from openai.types.chat.chat_completion_chunk import ChoiceDeltaToolCall, ChoiceDeltaToolCallFunction

    fn = ChoiceDeltaToolCallFunction.construct(**function)
    if id is None:
        return ChoiceDeltaToolCall.construct(index=index, function=fn)
    return ChoiceDeltaToolCall.construct(index=index, id=id, type="function", function=fn)


# --------------------------------------------------------------- the stream
@dataclass
class _Piece:
    """What one output delta adds: content, reasoning, or one tool-call entry."""

    key: tuple[str, int]  # ("content", 0) | ("reasoning", 0) | ("start", i) | ("args", i)
    text: list[str] = field(default_factory=list)
    id: str | None = None
    name: str | None = None


@dataclass
class _ChoiceState:
    sieve: Sieve
    prefix: str
    indices: dict[tuple[str, int], int] = field(default_factory=dict)
    extracted: int = 0
    #: calls the sieve abandoned (``ToolCallAbandoned``): counted, never shown
    abandoned: int = 0
    closed: bool = False
    generation: int = 0  # sieves this choice has had (a new one after a finish)
    template: Any = None  # the last upstream choice seen, to shape choices we invent

    def index(self, source: str, i: int) -> int:
        key = (source, i)
        if key not in self.indices:
            self.indices[key] = len(self.indices)
        return self.indices[key]


#: The options every adapter takes besides :class:`callsieve.Sieve`'s.
ADAPTER_OPTIONS = frozenset({"stream_arguments", "on_event", "reasoning_field"})


def check_adapter_options(options: Mapping[str, Any]) -> None:
    """Refuse, at the call, an option no adapter takes (with the nearest one that it
    does) and an ``on_event`` that cannot be called as ``on_event(choice_index, event)``."""
    check_keywords(options, SIEVE_OPTIONS | ADAPTER_OPTIONS, "callsieve's adapter")
    check_on_event(options.get("on_event"))


def check_on_event(on_event: object) -> None:
    """``on_event`` is called as ``on_event(choice_index, event)``: the index of the
    choice (``n=``) the event belongs to, and the event. A callback that cannot take
    those two arguments is refused now, not at the first event of a live stream."""
    if on_event is None:
        return
    if not callable(on_event):
        raise TypeError(f"on_event must be a callable, on_event(choice_index, event), not {type(on_event).__name__}")
    try:
        signature = inspect.signature(on_event)
    except (TypeError, ValueError):  # a builtin without a signature: it is called as documented
        return
    try:
        signature.bind(0, None)
    except TypeError:
        name = getattr(on_event, "__name__", type(on_event).__name__)
        raise TypeError(
            f"on_event is called as on_event(choice_index, event): the index of the choice the event belongs to "
            f"and the event; {name}{signature} cannot take those two arguments "
            "(write on_event=lambda choice_index, event: ..., or def handler(choice_index, event))"
        ) from None


class StreamSieve:
    """The transformation :func:`sieve_stream` applies, one chunk at a time.

    ``push(chunk)`` returns the output chunks that chunk decided (possibly none);
    ``end()`` closes every choice still open and returns the last chunks. Use it to
    drive a stream by hand (a server forwarding chunks, for instance).
    """

    def __init__(
        self,
        dialects: Iterable[str] | str | None = None,
        tools: Iterable[Any] | None = None,
        *,
        stream_arguments: bool = True,
        on_event: Callable[[int, Event], None] | None = None,
        reasoning_field: str = "reasoning_content",
        **sieve_options: Any,
    ) -> None:
        check_keywords(sieve_options, SIEVE_OPTIONS | ADAPTER_OPTIONS, "callsieve's adapter")
        check_on_event(on_event)
        self._reasoning_field = _reasoning_field(reasoning_field)
        self._dialects = list(dialects) if dialects is not None and not isinstance(dialects, str) else dialects
        self._tools = list(tools) if tools is not None else None
        self._stream_arguments = stream_arguments
        self._on_event = on_event
        self._id_prefix = str(sieve_options.pop("id_prefix", None) or new_id_prefix())
        self._options = sieve_options
        self._choices: dict[int, _ChoiceState] = {}
        self._last_chunk: Any = None
        # Fail now, not at the first chunk, on a bad dialect, schema or option.
        Sieve(self._dialects, self._tools, **self._options)

    # -- per choice
    def _state(self, index: int) -> _ChoiceState:
        st = self._choices.get(index)
        prefix = self._id_prefix if index == 0 else f"{self._id_prefix}{index}_"
        if st is None:
            st = _ChoiceState(self._new_sieve(prefix), prefix)
            self._choices[index] = st
        elif st.closed:
            # Content after this choice's finish: a new sieve, same index space.
            st.generation += 1
            st.sieve = self._new_sieve(f"{prefix}r{st.generation}_")
            st.closed = False
        return st

    def _new_sieve(self, prefix: str) -> Sieve:
        return Sieve(self._dialects, self._tools, id_prefix=prefix, **self._options)

    def _pieces(self, choice: int, st: _ChoiceState, events: list[Event]) -> list[_Piece]:
        out: list[_Piece] = []

        def add(key: tuple[str, int], text: str) -> _Piece:
            if out and out[-1].key == key:
                out[-1].text.append(text)
                return out[-1]
            p = _Piece(key, [text])
            out.append(p)
            return p

        stream = self._stream_arguments
        ours = f"ours{st.generation}"
        for e in events:
            if self._on_event is not None:
                self._on_event(choice, e)
            if isinstance(e, Text):
                if e.text:
                    add(("content", 0), e.text)
            elif isinstance(e, Reasoning):
                if e.text:
                    add(("reasoning", 0), e.text)
            elif isinstance(e, ToolCallStart):
                if stream:
                    p = _Piece(("start", st.index(ours, e.index)), [""], e.id, e.name)
                    out.append(p)
            elif isinstance(e, ToolCallDelta):
                if stream:
                    add(("args", st.index(ours, e.index)), e.arguments)
            elif isinstance(e, ToolCallAbandoned):
                # Shown once: its entry (if streamed) stays incomplete, its markup is
                # never content; the finish reason is left as the upstream's.
                st.abandoned += 1
            elif isinstance(e, ToolCall):
                st.extracted += 1
                if not stream:
                    i = st.index(ours, e.index)
                    out.append(_Piece(("start", i), [e.arguments_json], e.id, e.name))
        return out

    def _piece_fields(self, p: _Piece, pydantic: bool) -> dict[str, Any]:
        kind, i = p.key
        text = "".join(p.text)
        if kind == "content":
            return {"content": text}
        if kind == "reasoning":
            return {self._reasoning_field: text}
        return {"tool_calls": [_tool_call_entry(pydantic, i, text, p.id, p.name)]}

    def _choice_out(self, choice: Any) -> list[Any]:
        """The output choices one upstream choice becomes, in order."""
        index = _get(choice, "index") or 0
        st = self._state(index)
        st.template = choice
        delta = _get(choice, "delta")
        pydantic = not isinstance(choice, Mapping)
        content = _get(delta, "content")
        finish = _get(choice, "finish_reason")

        events: list[Event] = []
        if isinstance(content, str) and content:
            events += st.sieve.feed(content)
        if finish is not None:
            events += st.sieve.close()
            st.closed = True
        pieces = self._pieces(index, st, events)

        # The upstream's own calls, renumbered into the shared index space.
        up_calls = _get(delta, "tool_calls")
        first: dict[str, Any] = {}
        if up_calls:
            renumbered = []
            for tc in up_calls:
                want = st.index("upstream", _get(tc, "index") or 0)
                renumbered.append(tc if _get(tc, "index") == want else _replace(tc, index=want))
            if any(a is not b for a, b in zip(renumbered, up_calls)):
                first["tool_calls"] = renumbered
        if isinstance(content, str) and content:
            first["content"] = None

        others = {k: v for k, v in _payload(delta).items() if k != "content"}
        # Merge the first piece into the upstream delta when the field is free.
        if pieces:
            k = pieces[0].key[0]
            if k in ("content", "reasoning") or (k in ("start", "args") and not up_calls):
                f = self._piece_fields(pieces.pop(0), pydantic)
                rf = self._reasoning_field
                if rf in f and _get(delta, rf):
                    f[rf] = _get(delta, rf) + f[rf]
                first.update(f)

        consumed = isinstance(content, str) and bool(content)
        deltas: list[Any] = []
        # The upstream delta is kept unless all it carried was content still held back.
        if others or finish is not None or not consumed or any(v is not None for v in first.values()):
            update = {k: v for k, v in first.items() if k == "tool_calls" or _get(delta, k) != v}
            if delta is None:
                deltas.append(_new_delta(None, first) if first else None)
            else:
                deltas.append(_replace(delta, **update) if update else delta)
        for p in pieces:
            deltas.append(_new_delta(delta, self._piece_fields(p, pydantic)))
        if not deltas:
            return []

        final = finish
        if finish in _REWRITE_FINISH and st.extracted:
            final = "tool_calls"
        out = []
        last = len(deltas) - 1
        for n, d in enumerate(deltas):
            changes: dict[str, Any] = {}
            if d is not delta:
                changes["delta"] = d
            if (final if n == last else None) != finish:
                changes["finish_reason"] = final if n == last else None
            if n and _get(choice, "logprobs") is not None:
                changes["logprobs"] = None
            out.append(_replace(choice, **changes) if changes else choice)
        return out

    # -- chunks
    def push(self, chunk: Any) -> list[Any]:
        """The output chunks for one upstream chunk (possibly none)."""
        self._last_chunk = chunk
        choices = _get(chunk, "choices")
        if not choices:
            return [chunk]
        per_choice = [self._choice_out(c) for c in choices]
        n = max(len(x) for x in per_choice)
        out = []
        for k in range(n):
            group = [x[k] for x in per_choice if len(x) > k]
            if k == 0 and len(group) == len(choices) and all(a is b for a, b in zip(group, choices)):
                out.append(chunk)
            else:
                out.append(_replace(chunk, choices=group))
        return out

    def end(self) -> list[Any]:
        """Close every choice still open; the chunks that closing decided."""
        out = []
        for index, st in sorted(self._choices.items()):
            if st.closed:
                continue
            events = st.sieve.close()
            st.closed = True
            template = st.template
            if template is None or self._last_chunk is None:
                continue
            pydantic = not isinstance(template, Mapping)
            tdelta = _get(template, "delta")
            for p in self._pieces(index, st, events):
                d = _new_delta(tdelta, self._piece_fields(p, pydantic))
                c = _replace(template, delta=d, finish_reason=None)
                if _get(template, "logprobs") is not None:
                    c = _replace(c, logprobs=None)
                chunk = _replace(self._last_chunk, choices=[c])
                if _get(chunk, "usage") is not None:
                    chunk = _replace(chunk, usage=None)
                out.append(chunk)
        return out


# --------------------------------------------------------------- stream objects
class _Transform(Protocol):
    def push(self, item: Any) -> list[Any]: ...
    def end(self) -> list[Any]: ...


class _AutoTransform:
    """Chat chunks or Responses events, decided by the first item the stream yields.

    Both kinds arrive as ``openai.Stream`` objects that say nothing of their item type
    before they are read, so the choice waits for the first item; an item of neither kind
    is an error, never passed through uncleaned."""

    def __init__(self, dialects: Any, tools: Any, options: dict[str, Any]) -> None:
        self._args = (dialects, tools, options)
        self._chat = StreamSieve(dialects, tools, **options)  # validates every option now
        self._inner: _Transform | None = None

    def _pick(self, item: Any) -> _Transform:
        kind = _get(item, "type")
        if isinstance(kind, str) and kind.startswith("response."):
            from callsieve.openai_responses import ResponsesSieve

            dialects, tools, options = self._args
            responses: _Transform = ResponsesSieve(dialects, tools, **options)
            return responses
        if _get(item, "choices") is not None or _get(item, "object") == "chat.completion.chunk":
            return self._chat
        raise TypeError(
            f"callsieve.openai cannot clean a stream of {type(item).__name__} items (type {kind!r}): "
            "pass the stream from client.chat.completions.create(stream=True) or "
            "client.responses.create(stream=True), or the stream helper (.stream(...)) itself"
        )

    def push(self, item: Any) -> list[Any]:
        if self._inner is None:
            self._inner = self._pick(item)
        return self._inner.push(item)

    def end(self) -> list[Any]:
        return self._inner.end() if self._inner is not None else []


_C = TypeVar("_C")


class SievedStream(Generic[_C]):
    """A cleaned stream that still behaves like the SDK's ``Stream``: iterate it, use it
    in ``with``, ``close()`` it, read ``.response`` (and any other attribute of the
    wrapped stream). Returned by :func:`sieve_stream`."""

    def __init__(self, stream: Iterable[_C], transform: _Transform) -> None:
        self._stream = stream
        self._it = iter(stream)
        self._transform = transform
        self._pending: deque[_C] = deque()
        self._ended = False

    def __iter__(self) -> Iterator[_C]:
        return self

    def __next__(self) -> _C:
        while not self._pending:
            if self._ended:
                raise StopIteration
            try:
                item = next(self._it)
            except StopIteration:
                self._ended = True
                self._pending.extend(self._transform.end())
            else:
                self._pending.extend(self._transform.push(item))
        return self._pending.popleft()

    @property
    def response(self) -> Any:
        """The wrapped stream's HTTP response (``httpx.Response`` for an SDK stream)."""
        return getattr(self._stream, "response")

    def close(self) -> None:
        """Close the wrapped stream (for an SDK stream: release the connection)."""
        close = getattr(self._stream, "close", None)
        if callable(close):
            close()

    def __enter__(self) -> SievedStream[_C]:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __getattr__(self, name: str) -> Any:
        # Only reached for names the wrapper lacks; before __init__ ran (copy, pickle)
        # there is no stream to ask, and asking self._stream would recurse.
        stream = self.__dict__.get("_stream")
        if stream is None:
            raise AttributeError(name)
        return getattr(stream, name)


class AsyncSievedStream(Generic[_C]):
    """:class:`SievedStream` for ``AsyncStream``: ``async for``, ``async with``,
    ``await close()``, ``.response``."""

    def __init__(self, stream: AsyncIterable[_C], transform: _Transform) -> None:
        self._stream = stream
        self._it = stream.__aiter__()
        self._transform = transform
        self._pending: deque[_C] = deque()
        self._ended = False

    def __aiter__(self) -> AsyncIterator[_C]:
        return self

    async def __anext__(self) -> _C:
        while not self._pending:
            if self._ended:
                raise StopAsyncIteration
            try:
                item = await self._it.__anext__()
            except StopAsyncIteration:
                self._ended = True
                self._pending.extend(self._transform.end())
            else:
                self._pending.extend(self._transform.push(item))
        return self._pending.popleft()

    @property
    def response(self) -> Any:
        return getattr(self._stream, "response")

    async def close(self) -> None:
        close = getattr(self._stream, "close", None)
        if callable(close):
            result = close()
            if inspect.isawaitable(result):
                await result

    async def __aenter__(self) -> AsyncSievedStream[_C]:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    def __getattr__(self, name: str) -> Any:
        # Only reached for names the wrapper lacks; before __init__ ran (copy, pickle)
        # there is no stream to ask, and asking self._stream would recurse.
        stream = self.__dict__.get("_stream")
        if stream is None:
            raise AttributeError(name)
        return getattr(stream, name)


# The SDK's stream helpers (client.chat.completions.stream(), client.responses.stream()):
# a manager whose __enter__ builds a helper stream around the raw SDK stream; the helper
# turns chunks into its events, accumulated snapshot and final completion. Cleaning the
# raw stream the helper reads cleans all of them at once. The SDK offers no public hook
# for that, so the helper's ``_raw_stream`` is replaced before its first read; whether
# this SDK's helper reads its chunks through ``_raw_stream`` is checked when wrapping,
# and a helper that does not is refused with an error, never passed through uncleaned.
_HELPER_MODULE = "openai.lib.streaming"


def _is_helper(obj: object) -> bool:
    return type(obj).__module__.startswith(_HELPER_MODULE)


def _check_helper_class(cls: type) -> None:
    stream_fn = getattr(cls, "__stream__", None)
    code = getattr(stream_fn, "__code__", None)
    if code is None or "_raw_stream" not in code.co_names:
        raise TypeError(
            f"callsieve.openai cannot clean {cls.__name__} from this openai version (it no longer reads "
            "its chunks from _raw_stream); use client.chat.completions.create(stream=True) with sieve_stream()"
        )


def _helper_stream_class(manager: object) -> type:
    module = sys.modules[type(manager).__module__]
    name = type(manager).__name__.removesuffix("Manager")
    cls = getattr(module, name, None)
    if not isinstance(cls, type):
        raise TypeError(f"callsieve.openai does not know the stream that {type(manager).__name__} makes")
    _check_helper_class(cls)
    return cls


def _swap_raw_stream(helper: Any, wrap: Callable[[Any], Any]) -> Any:
    _check_helper_class(type(helper))
    it = getattr(helper, "_iterator", None)
    if inspect.isgenerator(it):
        started = inspect.getgeneratorstate(it) != inspect.GEN_CREATED
    elif inspect.isasyncgen(it):
        # inspect.getasyncgenstate is Python 3.12+; before it, trust the caller.
        state = getattr(inspect, "getasyncgenstate", None)
        started = state is not None and state(it) != "AGEN_CREATED"
    else:
        started = True
    if started:
        raise TypeError(f"callsieve.openai: this {type(helper).__name__} has already been read; wrap it before iterating")
    helper._raw_stream = wrap(helper._raw_stream)
    return helper


_H = TypeVar("_H")


class SievedStreamManager(Generic[_H]):
    """The SDK's stream-helper manager, cleaned: ``with sieve_stream(client.chat.completions.stream(...)) as s``
    gives the SDK's own helper stream, whose events, ``current_completion_snapshot`` and
    ``get_final_completion()`` are all built from cleaned chunks."""

    def __init__(self, manager: Any, wrap: Callable[[Any], Any]) -> None:
        _helper_stream_class(manager)
        self._manager = manager
        self._wrap = wrap

    def __enter__(self) -> _H:
        helper = self._manager.__enter__()
        try:
            return _swap_raw_stream(helper, self._wrap)  # type: ignore[no-any-return]
        except BaseException:
            self._manager.__exit__(None, None, None)
            raise

    def __exit__(self, *exc: Any) -> None:
        self._manager.__exit__(*exc)


class AsyncSievedStreamManager(Generic[_H]):
    """:class:`SievedStreamManager` for ``AsyncOpenAI``: ``async with``."""

    def __init__(self, manager: Any, wrap: Callable[[Any], Any]) -> None:
        _helper_stream_class(manager)
        self._manager = manager
        self._wrap = wrap

    async def __aenter__(self) -> _H:
        helper = await self._manager.__aenter__()
        try:
            return _swap_raw_stream(helper, self._wrap)  # type: ignore[no-any-return]
        except BaseException:
            await self._manager.__aexit__(None, None, None)
            raise

    async def __aexit__(self, *exc: Any) -> None:
        await self._manager.__aexit__(*exc)


def _refuse_whole(stream: Any, callee: str) -> None:
    """A complete response, a message or a text where a stream belongs is refused at the
    call, naming what cleans it (a ``ChatCompletion`` is iterable too: read as a stream,
    its fields would be taken for chunks)."""
    if isinstance(stream, (str, bytes)):
        raise TypeError(f"{callee}() takes a stream, not a {type(stream).__name__}: for a model's text use "
                        "callsieve.parse(text), for a message clean_message(message)")
    kind = _get(stream, "object")
    if kind == "chat.completion":
        raise TypeError(f"{callee}() takes a stream, not a complete {type(stream).__name__}: use "
                        "clean_completion(completion), or create it with stream=True")
    if kind == "response":
        raise TypeError(f"{callee}() takes a stream, not a complete {type(stream).__name__}: create it with "
                        "stream=True (client.responses.create(..., stream=True)) and pass the stream")
    if isinstance(stream, Mapping):
        raise TypeError(f"{callee}() takes a stream (an iterable of chunks), not one {type(stream).__name__}: "
                        "for a complete completion use clean_completion(completion), for a message "
                        "clean_message(message)")
    if isinstance(stream, (list, tuple)) and stream:
        first = stream[0]
        what = _get(first, "object")
        if what == "chat.completion" or (_get(first, "role") is not None and _get(first, "choices") is None) \
                or (_get(first, "message") is not None and _get(first, "choices") is None):
            shown = "completions" if what == "chat.completion" else "messages or choices"
            raise TypeError(f"{callee}() takes a stream of chunks, not a {type(stream).__name__} of {shown}: clean "
                            "each completion with clean_completion(completion) and each message with "
                            "clean_message(message)")


@overload
def sieve_stream(
    stream: ChatCompletionStreamManager[_R], dialects: Iterable[str] | str | None = ..., tools: Iterable[Any] | None = ..., **options: Any
) -> SievedStreamManager[ChatCompletionStream[_R]]: ...


@overload
def sieve_stream(
    stream: ResponseStreamManager[_R], dialects: Iterable[str] | str | None = ..., tools: Iterable[Any] | None = ..., **options: Any
) -> SievedStreamManager[ResponseStream[_R]]: ...


@overload
def sieve_stream(
    stream: ChatCompletionStream[_R], dialects: Iterable[str] | str | None = ..., tools: Iterable[Any] | None = ..., **options: Any
) -> ChatCompletionStream[_R]: ...


@overload
def sieve_stream(
    stream: ResponseStream[_R], dialects: Iterable[str] | str | None = ..., tools: Iterable[Any] | None = ..., **options: Any
) -> ResponseStream[_R]: ...


@overload
def sieve_stream(
    stream: Iterable[_C], dialects: Iterable[str] | str | None = ..., tools: Iterable[Any] | None = ..., **options: Any
) -> SievedStream[_C]: ...


def sieve_stream(
    stream: Any,
    dialects: Iterable[str] | str | None = None,
    tools: Iterable[Any] | None = None,
    **options: Any,
) -> Any:
    """Clean an OpenAI stream, however it was made.

    - ``client.chat.completions.create(..., stream=True)`` (or any iterable of
      ``ChatCompletionChunk`` or dict-shaped chunks): a :class:`SievedStream` of cleaned
      chunks, which keeps ``with``, ``close()`` and ``.response``;
    - ``client.responses.create(..., stream=True)``: cleaned Responses events, with the
      calls found in the text as ``function_call`` output items (see
      :mod:`callsieve.openai_responses`);
    - the stream helpers ``client.chat.completions.stream(...)`` and
      ``client.responses.stream(...)``, the manager or the stream it gave: the SDK's own
      helper, reading cleaned chunks, so its content deltas, snapshot and final
      completion are clean.

    Options: ``stream_arguments`` (default True), ``on_event(choice_index, event)``
    (every sieve event, Diagnostics included), ``reasoning_field`` (``"reasoning_content"``,
    the default, or ``"reasoning"``: where reasoning found in the content goes) and any
    :class:`callsieve.Sieve` option (``on_malformed``, ``unknown_tool``,
    ``start_in_reasoning``, ``id_prefix``, ...). A bad dialect, schema or option raises at
    the call, before any chunk is read; so does a stream this function cannot clean.
    """
    _AutoTransform(dialects, tools, options)  # fail now on bad arguments
    _refuse_whole(stream, "sieve_stream")

    def wrap(raw: Any) -> SievedStream[Any]:
        return SievedStream(raw, _AutoTransform(dialects, tools, options))

    if _is_helper(stream):
        if hasattr(stream, "__enter__") and not hasattr(stream, "__iter__"):
            return SievedStreamManager(stream, wrap)
        if hasattr(stream, "__aenter__") and not hasattr(stream, "__aiter__"):
            raise TypeError(f"{type(stream).__name__} is async: use asieve_stream()")
        if hasattr(stream, "__aiter__"):
            raise TypeError(f"{type(stream).__name__} is async: use asieve_stream()")
        return _swap_raw_stream(stream, wrap)
    if not hasattr(stream, "__iter__") and hasattr(stream, "__aiter__"):
        raise TypeError(f"{type(stream).__name__} is an async stream: use asieve_stream()")
    return wrap(stream)


@overload
def asieve_stream(
    stream: AsyncChatCompletionStreamManager[_R], dialects: Iterable[str] | str | None = ..., tools: Iterable[Any] | None = ..., **options: Any
) -> AsyncSievedStreamManager[AsyncChatCompletionStream[_R]]: ...


@overload
def asieve_stream(
    stream: AsyncResponseStreamManager[_R], dialects: Iterable[str] | str | None = ..., tools: Iterable[Any] | None = ..., **options: Any
) -> AsyncSievedStreamManager[AsyncResponseStream[_R]]: ...


@overload
def asieve_stream(
    stream: AsyncChatCompletionStream[_R], dialects: Iterable[str] | str | None = ..., tools: Iterable[Any] | None = ..., **options: Any
) -> AsyncChatCompletionStream[_R]: ...


@overload
def asieve_stream(
    stream: AsyncResponseStream[_R], dialects: Iterable[str] | str | None = ..., tools: Iterable[Any] | None = ..., **options: Any
) -> AsyncResponseStream[_R]: ...


@overload
def asieve_stream(
    stream: AsyncIterable[_C], dialects: Iterable[str] | str | None = ..., tools: Iterable[Any] | None = ..., **options: Any
) -> AsyncSievedStream[_C]: ...


def asieve_stream(
    stream: Any,
    dialects: Iterable[str] | str | None = None,
    tools: Iterable[Any] | None = None,
    **options: Any,
) -> Any:
    """:func:`sieve_stream` for ``AsyncOpenAI``: an ``AsyncStream`` (or any async
    iterable of chunks or Responses events), or an async stream helper (manager or stream)."""
    _AutoTransform(dialects, tools, options)
    _refuse_whole(stream, "asieve_stream")

    def wrap(raw: Any) -> AsyncSievedStream[Any]:
        return AsyncSievedStream(raw, _AutoTransform(dialects, tools, options))

    if _is_helper(stream):
        if hasattr(stream, "__aenter__") and not hasattr(stream, "__aiter__"):
            return AsyncSievedStreamManager(stream, wrap)
        if not hasattr(stream, "__aiter__"):
            raise TypeError(f"{type(stream).__name__} is not async: use sieve_stream()")
        return _swap_raw_stream(stream, wrap)
    if not hasattr(stream, "__aiter__"):
        raise TypeError(f"{type(stream).__name__} is not an async stream: use sieve_stream()")
    return wrap(stream)

# --------------------------------------------------------------- whole responses
def _message_tool_call(pydantic: bool, call: ToolCall) -> Any:
    if not pydantic:
        return {"id": call.id, "type": "function", "function": {"name": call.name, "arguments": call.arguments_json}}
    try:
        from openai.types.chat.chat_completion_message_function_tool_call import (
            ChatCompletionMessageFunctionToolCall as _Call,
            Function as _Fn,
        )
    except ImportError:  # openai < 1.99: one tool-call class
        from openai.types.chat.chat_completion_message_tool_call import (  # type: ignore[no-redef,attr-defined,unused-ignore]
            ChatCompletionMessageToolCall as _Call,
            Function as _Fn,
        )
    fn = _Fn.construct(name=call.name, arguments=call.arguments_json)
    return _Call.construct(id=call.id, type="function", function=fn)


@overload
def clean_message(
    message: ChatCompletionMessage, dialects: Iterable[str] | str | None = ..., tools: Iterable[Any] | None = ..., **options: Any
) -> ChatCompletionMessage: ...


@overload
def clean_message(
    message: Mapping[str, Any], dialects: Iterable[str] | str | None = ..., tools: Iterable[Any] | None = ..., **options: Any
) -> dict[str, Any]: ...


def clean_message(
    message: Any, dialects: Iterable[str] | str | None = None, tools: Iterable[Any] | None = None, **options: Any
) -> Any:
    """A copy of a complete (non-streamed) assistant message, cleaned.

    ``content`` keeps only the user-visible text (``None`` if nothing is left), the
    calls found in it are appended to ``tool_calls`` after any the upstream sent, and
    reasoning found in it is appended to ``reasoning_content`` (``reasoning_field=`` as for
    :func:`sieve_stream`). A message whose content
    holds no markup comes back equal to the original. Options as for :func:`sieve_stream`
    (``on_event(0, event)`` sees the Diagnostics).
    """
    return _clean_message(message, dialects, tools, options)[0]


def _clean_message(
    message: Any, dialects: Iterable[str] | str | None, tools: Iterable[Any] | None, options: dict[str, Any]
) -> tuple[Any, int]:
    options = dict(options)
    check_adapter_options(options)
    on_event: Callable[[int, Event], None] | None = options.pop("on_event", None)
    rf = _reasoning_field(options.pop("reasoning_field", "reasoning_content"))
    options.pop("stream_arguments", None)
    options.setdefault("id_prefix", new_id_prefix())
    content = _get(message, "content")
    if not isinstance(content, str) or not content:
        Sieve(dialects, tools, **options)  # still reject bad arguments
        return message, 0
    s = Sieve(dialects, tools, **options)
    events = s.feed(content) + s.close()
    if on_event is not None:
        for e in events:
            on_event(0, e)
    text = "".join(e.text for e in events if isinstance(e, Text))
    reasoning = "".join(e.text for e in events if isinstance(e, Reasoning))
    calls = [e for e in events if isinstance(e, ToolCall)]
    if text == content and not calls and not reasoning:
        return message, 0
    pydantic = not isinstance(message, Mapping)
    changes: dict[str, Any] = {"content": text or None}
    if calls:
        changes["tool_calls"] = list(_get(message, "tool_calls") or []) + [_message_tool_call(pydantic, c) for c in calls]
    if reasoning:
        changes[rf] = (_get(message, rf) or "") + reasoning
    return _replace(message, **changes), len(calls)


@overload
def clean_completion(
    completion: ChatCompletion, dialects: Iterable[str] | str | None = ..., tools: Iterable[Any] | None = ..., **options: Any
) -> ChatCompletion: ...


@overload
def clean_completion(
    completion: Mapping[str, Any], dialects: Iterable[str] | str | None = ..., tools: Iterable[Any] | None = ..., **options: Any
) -> dict[str, Any]: ...


def clean_completion(
    completion: Any, dialects: Iterable[str] | str | None = None, tools: Iterable[Any] | None = None, **options: Any
) -> Any:
    """A copy of a complete ``ChatCompletion`` with every choice's message cleaned
    (see :func:`clean_message`); ``finish_reason`` ``"stop"`` becomes ``"tool_calls"``
    for a choice whose calls were extracted."""
    choices = []
    for choice in _get(completion, "choices") or []:
        message, n = _clean_message(_get(choice, "message"), dialects, tools, options)
        changes: dict[str, Any] = {"message": message}
        if n and _get(choice, "finish_reason") in _REWRITE_FINISH:
            changes["finish_reason"] = "tool_calls"
        choices.append(_replace(choice, **changes) if message is not _get(choice, "message") else choice)
    return _replace(completion, choices=choices)
