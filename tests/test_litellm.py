"""callsieve.litellm with the real ``litellm`` package against the local leaking server.

LiteLLM is pointed at the server of ``test_openai.py`` (127.0.0.1) as an OpenAI-compatible
provider (``openai/<script>`` with ``api_base``); its model cost map is read from the
package (``LITELLM_LOCAL_MODEL_COST_MAP``), so nothing leaves the machine. The proxy hook is
driven by calling it the way the proxy does, with a real ``acompletion`` stream: running
the proxy itself needs ``litellm[proxy]`` (FastAPI and more), which the tests do not install.
"""

from __future__ import annotations

import asyncio
import importlib.util
import json
import os
from types import SimpleNamespace
from typing import Any

import pytest

import callsieve
from test_openai import BAR, INTRO, POEM, SEED4_CONTENT, TOOLS, base_url  # noqa: F401

# litellm takes some 5 s of CPU to import: it is imported when a test here first runs,
# not when the file is collected (each xdist worker collects every file).
if importlib.util.find_spec("litellm") is None:
    pytest.skip("litellm is not installed (the `litellm` extra)", allow_module_level=True)


@pytest.fixture(scope="module")
def ll() -> SimpleNamespace:
    """``litellm``, its response types and ``callsieve.litellm``'s names."""
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")  # before litellm is imported
    import litellm
    from litellm.types.utils import ModelResponse, ModelResponseStream

    from callsieve import litellm as adapter

    return SimpleNamespace(
        litellm=litellm, ModelResponse=ModelResponse, ModelResponseStream=ModelResponseStream,
        CallsieveHook=adapter.CallsieveHook, acompletion=adapter.acompletion,
        asieve_completion_stream=adapter.asieve_completion_stream, completion=adapter.completion,
        sieve_completion_stream=adapter.sieve_completion_stream,
    )


MESSAGES = [{"role": "user", "content": "hi"}]
# LiteLLM's own types make pydantic warn when first used; not this project's concern.
pytestmark = pytest.mark.filterwarnings("ignore:Item.* using the `ReadOnly` qualifier:UserWarning")


def _kw(base_url: str, model: str = "dsml-leak", **extra: Any) -> dict[str, Any]:
    return dict(model=f"openai/{model}", api_base=base_url, api_key="test", messages=MESSAGES, **extra)


def _content(chunks: list[Any]) -> str:
    return "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)


def _built(chunks: list[Any]) -> Any:
    import litellm

    return litellm.stream_chunk_builder(chunks, messages=MESSAGES)


def test_raw_litellm_stream_leaks_so_the_test_can_fail(ll: SimpleNamespace, base_url: str) -> None:
    chunks = list(ll.litellm.completion(**_kw(base_url), stream=True))
    assert "DSML" in _content(chunks)
    assert not _built(chunks).choices[0].message.tool_calls


def test_completion_stream_is_clean_and_accumulates_with_litellm(ll: SimpleNamespace, base_url: str) -> None:
    stream = ll.litellm.completion(**_kw(base_url), stream=True, tools=TOOLS)
    out = list(ll.sieve_completion_stream(stream, tools=TOOLS))
    assert all(isinstance(c, ll.ModelResponseStream) for c in out)
    assert _content(out) == INTRO
    for c in out:
        text = c.choices[0].delta.content or "" if c.choices else ""
        assert "DSML" not in text and BAR not in text and "<" not in text
    message = _built(out).choices[0].message
    assert message.content == INTRO
    (call,) = message.tool_calls
    assert call.function.name == "voice_output_speak" and json.loads(call.function.arguments) == {"text": POEM}
    assert out[-1].choices[0].finish_reason == "tool_calls"


def test_completion_wrapper_takes_the_calls_tools_and_sieve_options(ll: SimpleNamespace, base_url: str) -> None:
    out = list(ll.completion(**_kw(base_url, "seed004"), stream=True, callsieve={"dialects": ["qwen3_coder"]}))
    assert _content(out) == "I'll create the file.\n"
    (call,) = _built(out).choices[0].message.tool_calls
    assert json.loads(call.function.arguments) == {"path": "a.md", "content": SEED4_CONTENT}
    # Not streamed: the whole response is cleaned.
    whole = ll.completion(**_kw(base_url), tools=TOOLS)
    assert isinstance(whole, ll.ModelResponse)
    assert whole.choices[0].message.content == INTRO and whole.choices[0].finish_reason == "tool_calls"
    assert json.loads(whole.choices[0].message.tool_calls[0].function.arguments) == {"text": POEM}


def test_bad_sieve_options_fail_before_the_request(ll: SimpleNamespace, base_url: str) -> None:
    with pytest.raises(callsieve.UnknownDialectError):
        ll.completion(**_kw(base_url), stream=True, callsieve={"dialects": ["nope"]})
    with pytest.raises(callsieve.UnknownDialectError):
        ll.CallsieveHook(dialects=["nope"])


def test_acompletion_stream_is_clean(ll: SimpleNamespace, base_url: str) -> None:
    async def go() -> tuple[list[Any], list[Any]]:
        raw = await ll.litellm.acompletion(**_kw(base_url), stream=True)
        wrapped = [c async for c in ll.asieve_completion_stream(raw, tools=TOOLS)]
        convenience = [c async for c in await ll.acompletion(**_kw(base_url), stream=True, tools=TOOLS)]
        return wrapped, convenience

    wrapped, convenience = asyncio.run(go())
    for out in (wrapped, convenience):
        assert _content(out) == INTRO
        (call,) = _built(out).choices[0].message.tool_calls
        assert json.loads(call.function.arguments) == {"text": POEM}


def test_proxy_streaming_hook_cleans_with_the_requests_tools(ll: SimpleNamespace, base_url: str) -> None:
    async def go(hook: Any, tools: list[Any]) -> list[Any]:
        response = await ll.litellm.acompletion(**_kw(base_url), stream=True)
        request_data = {"model": "dsml-leak", "messages": MESSAGES, "tools": tools}
        gen = hook.async_post_call_streaming_iterator_hook(user_api_key_dict=None, response=response, request_data=request_data)
        return [c async for c in gen]

    out = asyncio.run(go(ll.CallsieveHook(unknown_tool="text"), TOOLS))
    assert _content(out) == INTRO
    assert _built(out).choices[0].message.tool_calls[0].function.name == "voice_output_speak"
    # A request whose tools do not include the call: with unknown_tool="text" the block
    # comes back as text, which shows the hook used this request's tools.
    other = [{"type": "function", "function": {"name": "get_time", "parameters": {"type": "object"}}}]
    out = asyncio.run(go(ll.CallsieveHook(unknown_tool="text"), other))
    assert "DSML" in _content(out) and not _built(out).choices[0].message.tool_calls


def test_proxy_success_hook_cleans_whole_responses(ll: SimpleNamespace, base_url: str) -> None:
    response = ll.litellm.completion(**_kw(base_url))
    assert "DSML" in response.choices[0].message.content
    cleaned = asyncio.run(ll.CallsieveHook().async_post_call_success_hook({"tools": TOOLS}, None, response))
    assert cleaned.choices[0].message.content == INTRO
    assert cleaned.choices[0].message.tool_calls[0].function.name == "voice_output_speak"
