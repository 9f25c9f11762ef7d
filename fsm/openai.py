"""OpenAI-compatible streams, cleaned: markup out of ``content``, calls into ``tool_calls``.

Install with the ``openai`` extra (``pip install 'callsieve[openai]'``). Nothing here is
imported by ``import callsieve``; the ``openai`` package itself is imported only when a
pydantic chunk needs a new tool-call object, so dict-shaped chunks work without it.

    from callsieve.openai import sieve_stream

    stream = client.chat.completions.create(model=..., messages=..., stream=True)
    for chunk in sieve_stream(stream, dialects=["dsml"], tools=tools):
        ...   # chunk.choices[0].delta.content is clean; calls are in delta.tool_calls

Theory of operation:

1. One :class:`callsieve.Sieve` per upstream choice index. Each chunk's ``delta.content`` is
   fed to it; the events come back out in the same chunk shape: ``Text`` as
   ``delta.content``, ``Reasoning`` appended to ``delta.reasoning_content``, a
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

Abandoned calls cannot be un-streamed. With ``stream_arguments=True`` (the default) a
call's start and argument fragments are sent as they are decided. If the block holding
the call later proves malformed or unterminated, the sieve abandons the call (a
``Diagnostic`` ``malformed_block``/``unterminated_block``/``block_too_large`` whose
message says "calls [...] abandoned") and releases the block's markup as text (policy
``on_malformed``): a client will then have a tool-call entry at that index that is never
completed (its arguments do not parse as JSON) and will see the markup in ``content``.
``finish_reason`` does not become ``"tool_calls"`` for abandoned calls. Pass
``on_event=`` to see the Diagnostics, or ``stream_arguments=False`` to send each call whole
(one entry with id, name and complete arguments) only once it is decided: then no
abandoned call ever reaches ``tool_calls``, at the cost of argument streaming.

Upstreams that leak markup *and* send the same call in ``delta.tool_calls`` (seed 001
saw DeepSeek do both) will yield that call twice: once passed through, once extracted.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import (
    TYPE_CHECKING,
    Any,
    AsyncIterable,
    AsyncIterator,
    Callable,
    Iterable,
    Iterator,
    Mapping,
    overload,
)

from callsieve.events import Event, Reasoning, Text, ToolCall, ToolCallDelta, ToolCallStart
from callsieve.sieve import Sieve, new_id_prefix  # one source of call ids (issue 12, finding 11)

if TYPE_CHECKING:
    from openai.types.chat import ChatCompletion, ChatCompletionChunk, ChatCompletionMessage

__all__ = ["sieve_stream", "asieve_stream", "clean_message", "clean_completion", "StreamSieve"]

#: Finish reasons that become ``"tool_calls"`` when calls were extracted.
_REWRITE_FINISH = ("stop",)


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
    closed: bool = False
    generation: int = 0  # sieves this choice has had (a new one after a finish)
    template: Any = None  # the last upstream choice seen, to shape choices we invent

    def index(self, source: str, i: int) -> int:
        key = (source, i)
        if key not in self.indices:
            self.indices[key] = len(self.indices)
        return self.indices[key]


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
        **sieve_options: Any,
    ) -> None:
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
            return {"reasoning_content": text}
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
                if "reasoning_content" in f and _get(delta, "reasoning_content"):
                    f["reasoning_content"] = _get(delta, "reasoning_content") + f["reasoning_content"]
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


@overload
def sieve_stream(
    stream: Iterable[ChatCompletionChunk],
    dialects: Iterable[str] | str | None = ...,
    tools: Iterable[Any] | None = ...,
    **options: Any,
) -> Iterator[ChatCompletionChunk]: ...


@overload
def sieve_stream(
    stream: Iterable[Mapping[str, Any]],
    dialects: Iterable[str] | str | None = ...,
    tools: Iterable[Any] | None = ...,
    **options: Any,
) -> Iterator[dict[str, Any]]: ...


def sieve_stream(
    stream: Iterable[Any],
    dialects: Iterable[str] | str | None = None,
    tools: Iterable[Any] | None = None,
    **options: Any,
) -> Iterator[Any]:
    """Clean a stream of ``ChatCompletionChunk`` (or dict-shaped chunks).

    Options: ``stream_arguments`` (default True), ``on_event(choice_index, event)``
    (every sieve event, Diagnostics included) and any :class:`callsieve.Sieve` option
    (``on_malformed``, ``unknown_tool``, ``start_in_reasoning``, ``id_prefix``, ...).
    A bad dialect, schema or option raises at the call, before any chunk is read.
    """
    s = StreamSieve(dialects, tools, **options)
    return _run(s, stream)


def _run(s: StreamSieve, stream: Iterable[Any]) -> Iterator[Any]:
    for chunk in stream:
        yield from s.push(chunk)
    yield from s.end()


@overload
def asieve_stream(
    stream: AsyncIterable[ChatCompletionChunk],
    dialects: Iterable[str] | str | None = ...,
    tools: Iterable[Any] | None = ...,
    **options: Any,
) -> AsyncIterator[ChatCompletionChunk]: ...


@overload
def asieve_stream(
    stream: AsyncIterable[Mapping[str, Any]],
    dialects: Iterable[str] | str | None = ...,
    tools: Iterable[Any] | None = ...,
    **options: Any,
) -> AsyncIterator[dict[str, Any]]: ...


def asieve_stream(
    stream: AsyncIterable[Any],
    dialects: Iterable[str] | str | None = None,
    tools: Iterable[Any] | None = None,
    **options: Any,
) -> AsyncIterator[Any]:
    """:func:`sieve_stream` for an async iterator (``AsyncOpenAI`` streams)."""
    s = StreamSieve(dialects, tools, **options)
    return _arun(s, stream)


async def _arun(s: StreamSieve, stream: AsyncIterable[Any]) -> AsyncIterator[Any]:
    async for chunk in stream:
        for out in s.push(chunk):
            yield out
    for out in s.end():
        yield out


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
    reasoning found in it is appended to ``reasoning_content``. A message whose content
    holds no markup comes back equal to the original. Options as for :func:`sieve_stream`
    (``on_event(0, event)`` sees the Diagnostics).
    """
    return _clean_message(message, dialects, tools, options)[0]


def _clean_message(
    message: Any, dialects: Iterable[str] | str | None, tools: Iterable[Any] | None, options: dict[str, Any]
) -> tuple[Any, int]:
    options = dict(options)
    on_event: Callable[[int, Event], None] | None = options.pop("on_event", None)
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
        changes["reasoning_content"] = (_get(message, "reasoning_content") or "") + reasoning
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
