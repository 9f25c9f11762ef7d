"""LangChain, cleaned: a chat model's streamed ``AIMessageChunk``s with markup out of
``content`` and the calls in ``tool_call_chunks`` (and so in the merged ``tool_calls``).

Install with the ``langchain`` extra (``pip install 'callsieve[langchain]'``); ``import
callsieve`` never imports this module, and this module imports ``langchain_core``.

    from callsieve.langchain import sieve_runnable

    chain = model | sieve_runnable(tools=tools)     # a Runnable: stream, astream, invoke, batch
    for chunk in chain.stream(messages):
        ...   # chunk.content is clean; chunk.tool_call_chunks stream the calls
    message = chain.invoke(messages)                 # merged: .content, .tool_calls

:func:`sieve_chunks` / :func:`asieve_chunks` do the same over any (async) iterable of
chunks, e.g. ``model.stream(...)``.

How: each chunk is read as the OpenAI chunk it came from and cleaned by
:class:`callsieve.openai.StreamSieve` (same options and behaviour, see
:mod:`callsieve.openai`), then rebuilt as an ``AIMessageChunk`` with the source's ``id``:
``Text`` as ``content``, reasoning in ``additional_kwargs["reasoning_content"]``, a call's
start and argument fragments as ``tool_call_chunks`` (``index`` shared with the model's
own calls, never colliding, so LangChain's chunk merging assembles each call). A chunk
the sieve leaves as it is comes back as the very same object. The source's
``response_metadata`` (its ``finish_reason`` becoming ``"tool_calls"`` when calls were
extracted), ``usage_metadata`` and ``chunk_position`` ride on the last chunk it became,
so they are counted once when chunks are added up.
"""

from __future__ import annotations

import json
from typing import Any, AsyncIterable, AsyncIterator, Iterable, Iterator

from langchain_core.messages import AIMessageChunk, BaseMessage
from langchain_core.messages.tool import tool_call_chunk
from langchain_core.runnables import RunnableGenerator
from langchain_core.utils.function_calling import convert_to_openai_tool

from callsieve.openai import StreamSieve

__all__ = ["sieve_chunks", "asieve_chunks", "sieve_runnable"]


def _openai_tools(tools: Iterable[Any] | None) -> list[dict[str, Any]] | None:
    """LangChain tools (BaseTool, pydantic models, functions, dicts) as OpenAI schemas."""
    return None if tools is None else [convert_to_openai_tool(t) for t in tools]


def _text_and_blocks(content: Any) -> tuple[str, list[Any]]:
    """A message's text, and its non-text content blocks (images, ...), kept as they are."""
    if isinstance(content, str):
        return content, []
    text, blocks = [], []
    for block in content or []:
        if isinstance(block, str):
            text.append(block)
        elif isinstance(block, dict) and block.get("type") == "text":
            text.append(block.get("text", ""))
        else:
            blocks.append(block)
    return "".join(text), blocks


class _ChunkSieve:
    """StreamSieve over the OpenAI-shaped dict of each message chunk."""

    def __init__(self, dialects: Any, tools: Any, options: dict[str, Any]) -> None:
        options = dict(options, reasoning_field="reasoning_content")
        self._sieve = StreamSieve(dialects, _openai_tools(tools), **options)
        self._last: BaseMessage | None = None

    @staticmethod
    def _as_openai(message: BaseMessage) -> dict[str, Any]:
        text, _ = _text_and_blocks(message.content)
        delta: dict[str, Any] = {"content": text}
        reasoning = message.additional_kwargs.get("reasoning_content")
        if reasoning:
            delta["reasoning_content"] = reasoning
        calls = []
        for k, tc in enumerate(getattr(message, "tool_call_chunks", None) or []):
            entry: dict[str, Any] = {"index": tc.get("index") if tc.get("index") is not None else k}
            if tc.get("id") is not None:
                entry.update(id=tc["id"], type="function")
            fn = {"arguments": tc.get("args") or ""}
            if tc.get("name") is not None:
                fn["name"] = tc["name"]
            calls.append(dict(entry, function=fn))
        if not calls:  # a whole AIMessage (invoke): its parsed calls, one entry each
            for k, call in enumerate(getattr(message, "tool_calls", None) or []):
                calls.append({"index": k, "id": call.get("id"), "type": "function",
                              "function": {"name": call["name"], "arguments": json.dumps(call.get("args") or {})}})
        if calls:
            delta["tool_calls"] = calls
        finish = message.response_metadata.get("finish_reason")
        if finish is None and getattr(message, "chunk_position", None) == "last":
            finish = "stop"  # the stream's last chunk: decide everything held back now
        return {"choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}

    def _rebuild(self, source: BaseMessage, as_dict: dict[str, Any], results: list[Any]) -> list[Any]:
        out: list[Any] = []
        for n, r in enumerate(results):
            if r is as_dict:
                out.append(source)
                continue
            choice = r["choices"][0] if r.get("choices") else {"delta": {}, "finish_reason": None}
            delta = choice["delta"] or {}
            chunks = [
                tool_call_chunk(name=e["function"].get("name"), args=e["function"].get("arguments"),
                                id=e.get("id"), index=e["index"])
                for e in delta.get("tool_calls") or []
            ]
            kwargs: dict[str, Any] = {}
            text = delta.get("content") or ""
            first, last = n == 0, n == len(results) - 1
            content: Any = text
            if not isinstance(source.content, str):
                # Content blocks stay blocks; the text block keeps the source's "index",
                # by which LangChain merges the blocks of successive chunks.
                _, blocks = _text_and_blocks(source.content)
                block: dict[str, Any] = {"type": "text", "text": text}
                index = next((b["index"] for b in source.content if isinstance(b, dict) and b.get("type") == "text" and "index" in b), None)
                if index is not None:
                    block["index"] = index
                content = ([block] if text else []) + (blocks if first else [])
            if first:
                kwargs = {k: v for k, v in source.additional_kwargs.items() if k != "reasoning_content"}
            if delta.get("reasoning_content"):
                kwargs["reasoning_content"] = delta["reasoning_content"]
            extra: dict[str, Any] = {}
            if last:
                metadata = dict(source.response_metadata)
                if "finish_reason" in metadata:
                    metadata["finish_reason"] = choice.get("finish_reason")
                extra = {"response_metadata": metadata}
                if getattr(source, "usage_metadata", None) is not None:
                    extra["usage_metadata"] = getattr(source, "usage_metadata")
                if getattr(source, "chunk_position", None) is not None:
                    extra["chunk_position"] = getattr(source, "chunk_position")
            out.append(AIMessageChunk(content=content, additional_kwargs=kwargs, tool_call_chunks=chunks,
                                      id=source.id, **extra))
        return out

    def push(self, message: BaseMessage) -> list[Any]:
        self._last = message
        as_dict = self._as_openai(message)
        return self._rebuild(message, as_dict, self._sieve.push(as_dict))

    def end(self) -> list[Any]:
        if self._last is None:
            return []
        tail = AIMessageChunk(content="", id=self._last.id)
        return self._rebuild(tail, {}, self._sieve.end())


def sieve_chunks(
    chunks: Iterable[BaseMessage], dialects: Iterable[str] | str | None = None, tools: Iterable[Any] | None = None, **options: Any
) -> Iterator[AIMessageChunk]:
    """Clean a chat model's stream (``model.stream(...)``). ``tools`` may be LangChain
    tools or OpenAI schemas; options as for :func:`callsieve.openai.sieve_stream`."""
    s = _ChunkSieve(dialects, tools, options)
    return _run(s, chunks)


def _run(s: _ChunkSieve, chunks: Iterable[BaseMessage]) -> Iterator[AIMessageChunk]:
    for chunk in chunks:
        yield from s.push(chunk)
    yield from s.end()


def asieve_chunks(
    chunks: AsyncIterable[BaseMessage], dialects: Iterable[str] | str | None = None, tools: Iterable[Any] | None = None, **options: Any
) -> AsyncIterator[AIMessageChunk]:
    """:func:`sieve_chunks` for ``model.astream(...)``."""
    s = _ChunkSieve(dialects, tools, options)
    return _arun(s, chunks)


async def _arun(s: _ChunkSieve, chunks: AsyncIterable[BaseMessage]) -> AsyncIterator[AIMessageChunk]:
    async for chunk in chunks:
        for out in s.push(chunk):
            yield out
    for out in s.end():
        yield out


def sieve_runnable(
    dialects: Iterable[str] | str | None = None, tools: Iterable[Any] | None = None, **options: Any
) -> RunnableGenerator[BaseMessage, AIMessageChunk]:
    """A Runnable to put after a chat model (``model | sieve_runnable(tools=tools)``):
    streamed, each chunk is cleaned as it passes; invoked, the result is the cleaned
    message merged into one ``AIMessageChunk`` (``.content``, ``.tool_calls``). Bad
    options raise here, when the chain is built."""
    _ChunkSieve(dialects, tools, options)

    # RunnableGenerator wants generator functions (it inspects them to pick its mode).
    def transform(chunks: Iterator[BaseMessage]) -> Iterator[AIMessageChunk]:
        yield from sieve_chunks(chunks, dialects, tools, **options)

    async def atransform(chunks: AsyncIterator[BaseMessage]) -> AsyncIterator[AIMessageChunk]:
        async for chunk in asieve_chunks(chunks, dialects, tools, **options):
            yield chunk

    return RunnableGenerator(transform, atransform, name="callsieve")
