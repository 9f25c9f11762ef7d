"""callsieve.langchain with the real ``langchain-core`` (and ``langchain-openai`` against
the local leaking server of ``test_openai.py``, 127.0.0.1)."""

from __future__ import annotations

import asyncio
import json
import operator
from functools import reduce
from typing import Any

import pytest

pytest.importorskip("langchain_core")
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel  # noqa: E402
from langchain_core.messages import AIMessage, AIMessageChunk  # noqa: E402
from langchain_core.messages.tool import tool_call_chunk  # noqa: E402

import callsieve  # noqa: E402
from callsieve.langchain import asieve_chunks, sieve_chunks, sieve_runnable  # noqa: E402
from test_openai import BAR, DSML_PARTS, INTRO, POEM, SEED4_CONTENT, TOOLS, base_url  # noqa: E402,F401

LEAK = "".join(DSML_PARTS)


def _fake(text: str = LEAK) -> GenericFakeChatModel:
    # Streams the message split at whitespace: markers arrive cut into several chunks.
    return GenericFakeChatModel(messages=iter([AIMessage(content=text)]))


def _merged(chunks: list[Any]) -> Any:
    return reduce(operator.add, chunks)


def _assert_clean(chunks: list[Any], text: str = INTRO) -> None:
    assert all(isinstance(c, AIMessageChunk) for c in chunks)
    for c in chunks:
        assert "DSML" not in c.content and BAR not in c.content and "<" not in c.content
    merged = _merged(chunks)
    assert merged.content == text


def test_raw_fake_model_stream_leaks_so_the_test_can_fail() -> None:
    chunks = list(_fake().stream("hi"))
    assert len(chunks) > 10 and "DSML" in _merged(chunks).content and not _merged(chunks).tool_calls


def test_runnable_after_a_chat_model_streams_clean_content_and_tool_call_chunks() -> None:
    chain = _fake() | sieve_runnable(tools=TOOLS)
    chunks = list(chain.stream("hi"))
    _assert_clean(chunks)
    starts = [tc for c in chunks for tc in c.tool_call_chunks if tc["id"]]
    assert [tc["name"] for tc in starts] == ["voice_output_speak"]
    assert len([c for c in chunks if c.tool_call_chunks]) >= 2  # the arguments streamed
    (call,) = _merged(chunks).tool_calls
    assert call["name"] == "voice_output_speak" and call["args"] == {"text": POEM} and call["id"] == starts[0]["id"]


def test_invoke_returns_the_cleaned_message_with_tool_calls() -> None:
    message = (_fake() | sieve_runnable()).invoke("hi")
    assert message.content == INTRO
    assert [(c["name"], c["args"]) for c in message.tool_calls] == [("voice_output_speak", {"text": POEM})]


def test_the_models_own_calls_keep_their_index_and_extracted_calls_do_not_collide() -> None:
    own = [
        AIMessageChunk(content="", tool_call_chunks=[tool_call_chunk(name="get_time", args='{"tz": ', id="call_up", index=0)]),
        AIMessageChunk(content="", tool_call_chunks=[tool_call_chunk(name=None, args='"UTC"}', id=None, index=0)]),
    ]
    leaked = [AIMessageChunk(content=p) for p in DSML_PARTS]
    last = AIMessageChunk(content="", response_metadata={"finish_reason": "tool_calls"}, chunk_position="last")
    out = list(sieve_chunks([*own, *leaked, last]))
    assert out[:2] == own  # untouched chunks pass through as they are
    merged = _merged(out)
    assert [(c["name"], c["args"]) for c in merged.tool_calls] == [("get_time", {"tz": "UTC"}), ("voice_output_speak", {"text": POEM})]
    assert merged.content == INTRO and merged.response_metadata["finish_reason"] == "tool_calls"


def test_usage_is_counted_once_however_many_chunks_one_became() -> None:
    usage = {"input_tokens": 3, "output_tokens": 40, "total_tokens": 43}
    chunks = [AIMessageChunk(content=p) for p in DSML_PARTS[:-1]]
    chunks.append(AIMessageChunk(content=DSML_PARTS[-1], usage_metadata=usage, response_metadata={"finish_reason": "stop"}))
    merged = _merged(list(sieve_chunks(chunks)))
    assert merged.usage_metadata == usage
    assert merged.response_metadata["finish_reason"] == "tool_calls"


def test_async_stream_is_cleaned() -> None:
    async def go() -> tuple[list[Any], list[Any]]:
        chained = [c async for c in (_fake() | sieve_runnable()).astream("hi")]
        direct = [c async for c in asieve_chunks(_fake().astream("hi"))]
        return chained, direct

    for chunks in asyncio.run(go()):
        _assert_clean(chunks)
        assert _merged(chunks).tool_calls[0]["args"] == {"text": POEM}


def test_bad_options_fail_when_the_chain_is_built() -> None:
    with pytest.raises(callsieve.UnknownDialectError):
        sieve_runnable(dialects=["nope"])


# ---------------------------------------------------------------- langchain-openai, end to end
def _chat_openai(base_url: str, model: str) -> Any:
    langchain_openai = pytest.importorskip("langchain_openai")
    return langchain_openai.ChatOpenAI(base_url=base_url, api_key="test", model=model, max_retries=0, timeout=10)


def test_chat_openai_against_the_leaking_server(base_url: str) -> None:
    model = _chat_openai(base_url, "dsml-leak")
    raw = list(model.stream("hi"))
    assert "DSML" in _merged(raw).content  # the server leaks; the test can fail
    chain = model.bind_tools(TOOLS) | sieve_runnable(tools=TOOLS)
    chunks = list(chain.stream("hi"))
    _assert_clean(chunks)
    (call,) = _merged(chunks).tool_calls
    assert call["name"] == "voice_output_speak" and call["args"] == {"text": POEM}
    assert _merged(chunks).response_metadata["finish_reason"] == "tool_calls"
    invoked = chain.invoke("hi")  # not streamed: the server's whole response
    assert invoked.content == INTRO and invoked.tool_calls[0]["args"] == {"text": POEM}

    async def go() -> list[Any]:
        return [c async for c in chain.astream("hi")]

    _assert_clean(asyncio.run(go()))


def test_chat_openai_file_argument_is_not_cut_at_a_literal_close(base_url: str) -> None:
    chunks = list((_chat_openai(base_url, "seed004") | sieve_runnable(dialects=["qwen3_coder"])).stream("hi"))
    merged = _merged(chunks)
    assert merged.content == "I'll create the file.\n"
    assert merged.tool_calls[0]["args"] == {"path": "a.md", "content": SEED4_CONTENT}
    assert json.loads(merged.tool_call_chunks[0]["args"])["content"] == SEED4_CONTENT


def test_content_blocks_stay_blocks_and_merge_into_one_text_block() -> None:
    # Models that stream content as blocks (Anthropic-style), with an image block too.
    src = [AIMessageChunk(content=[{"type": "text", "text": p, "index": 0}]) for p in DSML_PARTS]
    image = {"type": "image", "url": "https://example.invalid/a.png", "index": 1}
    src.append(AIMessageChunk(content=[image], chunk_position="last"))
    merged = _merged(list(sieve_chunks(src)))
    assert merged.content == [{"type": "text", "text": INTRO, "index": 0}, image]
    assert merged.tool_calls[0]["args"] == {"text": POEM}
