"""LiteLLM, cleaned: ``litellm.completion(..., stream=True)``, ``acompletion`` and the proxy.

Install with the ``litellm`` extra (``pip install 'callsieve[litellm]'``); ``import
callsieve`` never imports this module, and this module imports ``litellm`` itself.

    import litellm
    from callsieve.litellm import sieve_completion_stream

    stream = litellm.completion(model=..., messages=..., tools=tools, stream=True)
    for chunk in sieve_completion_stream(stream, tools=tools):
        ...   # chunk.choices[0].delta.content is clean; calls are in delta.tool_calls

or, the same with the tools taken from the call itself:

    from callsieve.litellm import completion, acompletion
    for chunk in completion(model=..., messages=..., tools=tools, stream=True): ...

On a LiteLLM proxy, :class:`CallsieveHook` cleans every streamed response (its
``async_post_call_streaming_iterator_hook``) and every whole one
(``async_post_call_success_hook``), with the tools of each request; list
``callsieve.litellm.proxy_handler_instance`` (or an instance of your own, with options)
under ``litellm_settings: callbacks`` in the proxy's config.

LiteLLM's chunks (``ModelResponseStream``) have the OpenAI chunk shape; each is cleaned by
:class:`callsieve.openai.StreamSieve` (same options, same behaviour: see
:mod:`callsieve.openai`) as a dict and rebuilt as a ``ModelResponseStream``, so its
``tool_calls`` are LiteLLM's own objects and ``litellm.stream_chunk_builder`` accumulates
the cleaned stream. A chunk the sieve leaves as it is comes back as the very same object.
"""

from __future__ import annotations

from typing import Any, AsyncGenerator, Iterable, Mapping

import litellm
from litellm.integrations.custom_logger import CustomLogger
from litellm.types.utils import ModelResponse, ModelResponseStream

from callsieve.openai import AsyncSievedStream, SievedStream, StreamSieve, clean_completion

__all__ = [
    "sieve_completion_stream",
    "asieve_completion_stream",
    "clean_model_response",
    "completion",
    "acompletion",
    "CallsieveHook",
    "proxy_handler_instance",
]


class _LiteLLMTransform:
    """StreamSieve over dicts, with LiteLLM's chunk objects on both sides."""

    def __init__(self, dialects: Any, tools: Any, options: dict[str, Any]) -> None:
        self._sieve = StreamSieve(dialects, tools, **options)
        self._last: Any = None

    def _out(self, source: Any, as_dict: Mapping[str, Any], results: list[Any]) -> list[Any]:
        out = []
        for r in results:
            if r is as_dict:
                out.append(source)  # untouched: the upstream's own object
                continue
            chunk = ModelResponseStream(**r)
            hidden = getattr(source, "_hidden_params", None)
            if hidden is not None:
                chunk._hidden_params = hidden  # provider and cost bookkeeping LiteLLM reads later
            out.append(chunk)
        return out

    def push(self, chunk: Any) -> list[Any]:
        as_dict = chunk.model_dump() if hasattr(chunk, "model_dump") else chunk
        self._last = chunk
        return self._out(chunk, as_dict, self._sieve.push(as_dict))

    def end(self) -> list[Any]:
        return self._out(self._last, {}, self._sieve.end())


def sieve_completion_stream(
    stream: Iterable[Any], dialects: Iterable[str] | str | None = None, tools: Iterable[Any] | None = None, **options: Any
) -> SievedStream[Any]:
    """Clean the stream of ``litellm.completion(..., stream=True)``; ``close()`` and the
    wrapper's other attributes stay reachable. Options as for
    :func:`callsieve.openai.sieve_stream` (bad ones raise here, before any chunk is read)."""
    return SievedStream(stream, _LiteLLMTransform(dialects, tools, options))


def asieve_completion_stream(
    stream: Any, dialects: Iterable[str] | str | None = None, tools: Iterable[Any] | None = None, **options: Any
) -> AsyncSievedStream[Any]:
    """:func:`sieve_completion_stream` for ``await litellm.acompletion(..., stream=True)``."""
    return AsyncSievedStream(stream, _LiteLLMTransform(dialects, tools, options))


def clean_model_response(
    response: Any, dialects: Iterable[str] | str | None = None, tools: Iterable[Any] | None = None, **options: Any
) -> Any:
    """A whole (non-streamed) ``ModelResponse``, cleaned as
    :func:`callsieve.openai.clean_completion` cleans a ``ChatCompletion``."""
    if not isinstance(response, ModelResponse):
        return response  # embeddings, images, ...: nothing to clean
    as_dict: dict[str, Any] = response.model_dump()  # type: ignore[no-untyped-call]  # litellm's override is untyped
    cleaned = clean_completion(as_dict, dialects, tools, **options)
    if cleaned["choices"] == as_dict["choices"]:
        return response
    out = ModelResponse(**cleaned)
    out._hidden_params = getattr(response, "_hidden_params", {})
    return out


def _sieve_options(kwargs: dict[str, Any]) -> tuple[Any, dict[str, Any]]:
    """Split a completion call's ``callsieve=`` options off; the sieve types values by
    the call's own ``tools``."""
    options = dict(kwargs.pop("callsieve", None) or {})
    return options.pop("tools", kwargs.get("tools")), options


def completion(*args: Any, **kwargs: Any) -> Any:
    """``litellm.completion``, cleaned (streamed or not). Sieve options go in
    ``callsieve={...}`` (``dialects``, ``on_malformed``, ...); ``tools`` are the call's."""
    tools, options = _sieve_options(kwargs)
    dialects = options.pop("dialects", None)
    StreamSieve(dialects, tools, **options)  # bad options fail before the request is sent
    result = litellm.completion(*args, **kwargs)
    if kwargs.get("stream"):
        return sieve_completion_stream(result, dialects, tools, **options)
    return clean_model_response(result, dialects, tools, **options)


async def acompletion(*args: Any, **kwargs: Any) -> Any:
    """``litellm.acompletion``, cleaned: an async stream with ``stream=True``."""
    tools, options = _sieve_options(kwargs)
    dialects = options.pop("dialects", None)
    StreamSieve(dialects, tools, **options)
    result = await litellm.acompletion(*args, **kwargs)
    if kwargs.get("stream"):
        return asieve_completion_stream(result, dialects, tools, **options)
    return clean_model_response(result, dialects, tools, **options)


class CallsieveHook(CustomLogger):
    """A LiteLLM proxy callback: every response cleaned, with the tools of its request.

    ``CallsieveHook(dialects=None, **options)``: options as for
    :func:`callsieve.openai.sieve_stream`; checked when the hook is made."""

    def __init__(self, dialects: Iterable[str] | str | None = None, **options: Any) -> None:
        super().__init__()
        StreamSieve(dialects, None, **options)
        self._dialects = dialects
        self._options = options

    async def async_post_call_streaming_iterator_hook(
        self, user_api_key_dict: Any, response: Any, request_data: dict[str, Any]
    ) -> AsyncGenerator[ModelResponseStream, None]:
        stream = asieve_completion_stream(response, self._dialects, request_data.get("tools"), **self._options)
        async for chunk in stream:
            yield chunk

    async def async_post_call_success_hook(self, data: dict[str, Any], user_api_key_dict: Any, response: Any) -> Any:
        return clean_model_response(response, self._dialects, data.get("tools"), **self._options)


#: For a proxy config: ``litellm_settings: {callbacks: callsieve.litellm.proxy_handler_instance}``.
proxy_handler_instance = CallsieveHook()
