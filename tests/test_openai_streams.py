"""callsieve.openai over every way the ``openai`` SDK streams, with the real client.

The local server of ``test_openai.py`` (127.0.0.1, port 0) replays a leaking upstream:
DeepSeek DSML with its opening marker split across two SSE events (``"<‖DS"`` + ``"ML‖..."``),
and a file argument holding a literal ``</parameter>``. Each test first shows, where it
matters, that the unwrapped SDK object leaks, so that it could fail.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any, Awaitable, Callable, Iterator, TypeVar

import pytest

openai = pytest.importorskip("openai")
from openai.lib.streaming.chat import ChatCompletionStreamState  # noqa: E402
from openai.lib.streaming.responses import ResponseStreamState  # noqa: E402

import callsieve  # noqa: E402
from callsieve.openai import AsyncSievedStream, SievedStream, asieve_stream, sieve_stream  # noqa: E402
from test_openai import BAR, DSML_PARTS, INTRO, POEM, SEED4_CONTENT, TOOLS, base_url, client  # noqa: E402,F401

MESSAGES = [{"role": "user", "content": "hi"}]
T = TypeVar("T")


def _run(make: Callable[[Any], Awaitable[T]], url: str) -> T:
    async def go() -> T:
        ac = openai.AsyncOpenAI(base_url=url, api_key="test", max_retries=0, timeout=10)
        try:
            return await make(ac)
        finally:
            await ac.close()

    return asyncio.run(go())


def _chat(client: Any, model: str = "dsml-leak") -> Any:
    return client.chat.completions.create(model=model, messages=MESSAGES, stream=True)


def _text_of(chunks: list[Any]) -> str:
    return "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)


# ---------------------------------------------------------------- Stream / AsyncStream
def test_wrapped_stream_keeps_with_close_and_response(client: Any) -> None:
    raw = _chat(client)
    with sieve_stream(raw, tools=TOOLS) as s:
        assert isinstance(s, SievedStream)
        assert s.response is raw.response and s.response.status_code == 200
        first = next(s)
        assert not s.response.is_closed
        rest = list(s)
    assert s.response.is_closed  # leaving `with` closed the connection
    assert _text_of([first, *rest]) == INTRO
    # close() in the middle of a stream releases the connection too.
    s2 = sieve_stream(_chat(client))
    next(s2)
    s2.close()
    assert s2.response.is_closed
    # Attributes of the SDK stream stay reachable through the wrapper.
    assert sieve_stream(_chat(client))._client is client


def test_wrapped_async_stream_keeps_async_with_close_and_response(base_url: str) -> None:
    async def go(ac: Any) -> tuple[list[Any], bool, int]:
        raw = await ac.chat.completions.create(model="dsml-leak", messages=MESSAGES, stream=True)
        async with asieve_stream(raw, tools=TOOLS) as s:
            assert isinstance(s, AsyncSievedStream)
            status = s.response.status_code
            chunks = [c async for c in s]
        return chunks, s.response.is_closed, status

    chunks, closed, status = _run(go, base_url)
    assert (closed, status) == (True, 200)
    assert _text_of(chunks) == INTRO
    snap = ChatCompletionStreamState()
    for c in chunks:
        snap.handle_chunk(c)
    (call,) = snap.current_completion_snapshot.choices[0].message.tool_calls
    assert json.loads(call.function.arguments) == {"text": POEM}


def test_the_wrong_flavour_of_stream_is_refused_at_wrap_time(base_url: str, client: Any) -> None:
    async def go(ac: Any) -> None:
        raw = await ac.chat.completions.create(model="dsml-leak", messages=MESSAGES, stream=True)
        with pytest.raises(TypeError, match="asieve_stream"):
            sieve_stream(raw)
        await raw.close()

    _run(go, base_url)
    with pytest.raises(TypeError, match="sieve_stream"):
        asieve_stream(_chat(client))


def test_a_stream_of_unknown_items_is_an_error_not_a_pass_through() -> None:
    s = sieve_stream(iter([{"type": "content.delta", "delta": "<tool_call>"}]))
    with pytest.raises(TypeError, match="cannot clean a stream of dict items"):
        next(s)


# ---------------------------------------------------------------- reasoning_field
@pytest.mark.parametrize("field", ["reasoning_content", "reasoning"])
def test_reasoning_goes_to_the_field_asked_for(field: str, client: Any) -> None:
    raw = client.chat.completions.create(model="reasoning", messages=MESSAGES, stream=True)
    out = list(sieve_stream(raw, reasoning_field=field))
    state = ChatCompletionStreamState()
    for c in out:
        state.handle_chunk(c)
    msg = state.current_completion_snapshot.choices[0].message
    assert msg.content == "The answer is 4."
    other = "reasoning" if field == "reasoning_content" else "reasoning_content"
    dumped = msg.to_dict()
    assert "leaked thought" in dumped[field]
    assert "leaked thought" not in (dumped.get(other) or "")


def test_a_bad_reasoning_field_is_refused_at_the_call() -> None:
    with pytest.raises(ValueError, match="reasoning_field"):
        sieve_stream(iter(()), reasoning_field="thoughts")


# ---------------------------------------------------------------- the stream helper
def test_raw_stream_helper_leaks_so_the_test_can_fail(client: Any) -> None:
    with client.chat.completions.stream(model="dsml-leak", messages=MESSAGES) as s:
        final = s.get_final_completion()
    assert "DSML" in final.choices[0].message.content


def test_stream_helper_manager_events_snapshot_and_final_completion_are_clean(client: Any) -> None:
    manager = client.chat.completions.stream(model="dsml-leak", messages=MESSAGES, tools=TOOLS)
    with sieve_stream(manager, dialects=["dsml"], tools=TOOLS) as s:
        events = list(s)
        snapshot = s.current_completion_snapshot
        final = s.get_final_completion()
    deltas = [e for e in events if e.type == "content.delta"]
    assert "".join(e.delta for e in deltas) == INTRO
    for e in deltas:
        assert "DSML" not in e.delta and BAR not in e.delta and "<" not in e.delta
        assert "DSML" not in e.snapshot
    (done,) = [e for e in events if e.type == "content.done"]
    assert done.content == INTRO
    args = [e for e in events if e.type == "tool_calls.function.arguments.delta"]
    assert len(args) >= 2 and {e.name for e in args} == {"voice_output_speak"}
    (args_done,) = [e for e in events if e.type == "tool_calls.function.arguments.done"]
    assert json.loads(args_done.arguments) == {"text": POEM}
    assert snapshot.choices[0].message.content == INTRO
    msg = final.choices[0].message
    assert msg.content == INTRO and final.choices[0].finish_reason == "tool_calls"
    (call,) = msg.tool_calls
    assert call.function.name == "voice_output_speak" and json.loads(call.function.arguments) == {"text": POEM}


def test_stream_helper_entered_first_is_cleaned_too(client: Any) -> None:
    with client.chat.completions.stream(model="seed004", messages=MESSAGES) as raw:
        s = sieve_stream(raw, dialects=["qwen3_coder"])
        assert s is raw  # the SDK's own helper, now reading cleaned chunks
        final = s.get_final_completion()
    assert final.choices[0].message.content == "I'll create the file.\n"
    (call,) = final.choices[0].message.tool_calls
    assert json.loads(call.function.arguments)["content"] == SEED4_CONTENT


def test_a_stream_helper_already_read_is_refused(client: Any) -> None:
    with client.chat.completions.stream(model="dsml-leak", messages=MESSAGES) as raw:
        next(iter(raw))
        with pytest.raises(TypeError, match="already been read"):
            sieve_stream(raw)


def test_async_stream_helper_is_cleaned(base_url: str) -> None:
    async def go(ac: Any) -> tuple[list[Any], Any]:
        manager = ac.chat.completions.stream(model="dsml-leak", messages=MESSAGES, tools=TOOLS)
        async with asieve_stream(manager, tools=TOOLS) as s:
            events = [e async for e in s]
            return events, await s.get_final_completion()

    events, final = _run(go, base_url)
    assert "".join(e.delta for e in events if e.type == "content.delta") == INTRO
    assert final.choices[0].message.content == INTRO
    assert json.loads(final.choices[0].message.tool_calls[0].function.arguments) == {"text": POEM}


# ---------------------------------------------------------------- Responses API
def _responses(client: Any, model: str = "dsml-leak") -> Any:
    return client.responses.create(model=model, input="hi", stream=True)


def _accumulate_responses(events: list[Any]) -> Any:
    state: Any = ResponseStreamState(input_tools=openai.omit, text_format=openai.omit)
    for e in events:
        state.handle_event(e)
    return state._completed_response or state.current_snapshot


def _check_clean_response_events(events: list[Any], name: str, args: dict[str, Any], text: str) -> None:
    assert [e.sequence_number for e in events] == list(range(len(events)))
    deltas = [e.delta for e in events if e.type == "response.output_text.delta"]
    assert "".join(deltas) == text
    for d in deltas:
        assert "DSML" not in d and "<tool_call>" not in d and "<parameter" not in d
    (done,) = [e for e in events if e.type == "response.output_text.done"]
    assert done.text == text
    added = [e for e in events if e.type == "response.output_item.added" and e.item.type == "function_call"]
    assert len(added) == 1 and added[0].item.name == name and added[0].output_index == 1
    fragments = [e.delta for e in events if e.type == "response.function_call_arguments.delta"]
    assert len(fragments) >= 2 and json.loads("".join(fragments)) == args
    final = [e for e in events if e.type == "response.completed"][0].response
    assert [item.type for item in final.output] == ["message", "function_call"]
    assert final.output_text == text
    assert final.output[1].call_id == added[0].item.call_id and json.loads(final.output[1].arguments) == args
    # The SDK's own accumulator takes the cleaned events (it checks indices and identities).
    accumulated = _accumulate_responses(events)
    assert accumulated.output_text == text
    (fc,) = [o for o in accumulated.output if o.type == "function_call"]
    assert fc.name == name and json.loads(fc.arguments) == args


def test_raw_responses_stream_leaks_so_the_test_can_fail(client: Any) -> None:
    events = list(_responses(client))
    assert "DSML" in "".join(e.delta for e in events if e.type == "response.output_text.delta")
    assert not any(getattr(e, "item", None) is not None and e.item.type == "function_call" for e in events)


def test_responses_stream_text_is_clean_and_calls_are_function_call_items(client: Any) -> None:
    with sieve_stream(_responses(client), tools=TOOLS) as s:
        events = list(s)
    assert s.response.is_closed
    _check_clean_response_events(events, "voice_output_speak", {"text": POEM}, INTRO)


def test_responses_stream_keeps_a_file_argument_whole(client: Any) -> None:
    events = list(sieve_stream(_responses(client, "seed004"), dialects=["qwen3_coder"]))
    _check_clean_response_events(events, "create_file", {"path": "a.md", "content": SEED4_CONTENT}, "I'll create the file.\n")


def test_responses_stream_without_markup_is_unchanged(client: Any) -> None:
    raw = list(_responses(client, "plain"))
    out = list(sieve_stream(_responses(client, "plain")))
    assert [e.to_dict() for e in out] == [e.to_dict() for e in raw]


def test_async_responses_stream_and_responses_stream_helper(base_url: str, client: Any) -> None:
    async def go(ac: Any) -> list[Any]:
        raw = await ac.responses.create(model="dsml-leak", input="hi", stream=True)
        return [e async for e in asieve_stream(raw, tools=TOOLS)]

    _check_clean_response_events(_run(go, base_url), "voice_output_speak", {"text": POEM}, INTRO)
    with sieve_stream(client.responses.stream(model="dsml-leak", input="hi"), tools=TOOLS) as s:
        text = "".join(e.delta for e in s if e.type == "response.output_text.delta")
        final = s.get_final_response()
    assert text == INTRO and final.output_text == INTRO
    assert [o.type for o in final.output] == ["message", "function_call"]


def test_responses_stream_arguments_false_sends_each_call_whole(client: Any) -> None:
    events = list(sieve_stream(_responses(client), stream_arguments=False))
    kinds = [e.type for e in events]
    start = kinds.index("response.function_call_arguments.delta") - 1
    assert kinds[start : start + 4] == [
        "response.output_item.added", "response.function_call_arguments.delta",
        "response.function_call_arguments.done", "response.output_item.done",
    ]
    assert json.loads(events[start + 1].delta) == {"text": POEM}


def test_responses_events_as_dicts() -> None:
    from test_openai import RESPONSES_SCRIPTS

    out = list(sieve_stream(RESPONSES_SCRIPTS["dsml-leak"], id_prefix="call_"))
    assert all(isinstance(e, dict) for e in out)
    assert "".join(e["delta"] for e in out if e["type"] == "response.output_text.delta") == INTRO
    (item,) = [e["item"] for e in out if e["type"] == "response.output_item.done" and e["item"]["type"] == "function_call"]
    assert item == {"type": "function_call", "id": "fc_call_0", "call_id": "call_0", "name": "voice_output_speak",
                    "arguments": json.dumps({"text": POEM}, ensure_ascii=False), "status": "completed"}


def test_a_stream_helper_this_adapter_does_not_know_is_refused_at_wrap_time() -> None:
    class FutureStreamManager:  # a helper from an SDK version this adapter was not written for
        __module__ = "openai.lib.streaming.chat._completions"

        def __enter__(self) -> Any:
            raise AssertionError("never entered")

        def __exit__(self, *exc: object) -> None: ...

    with pytest.raises(TypeError, match="does not know the stream that FutureStreamManager makes"):
        sieve_stream(FutureStreamManager())


def test_responses_call_abandoned_mid_block_is_closed_incomplete_and_its_markup_never_shown(client: Any) -> None:
    seen: list[callsieve.Event] = []
    events = list(sieve_stream(_responses(client, "cut"), on_event=lambda i, e: seen.append(e)))
    text = "Writing.\n"
    assert [e.name for e in seen if isinstance(e, callsieve.ToolCallAbandoned)] == ["create_file"]
    assert "".join(e.delta for e in events if e.type == "response.output_text.delta") == text
    assert any(isinstance(e, callsieve.Diagnostic) and e.code == "unterminated_block" for e in seen)
    (done,) = [e for e in events if e.type == "response.output_item.done" and e.item.type == "function_call"]
    assert done.item.status == "incomplete" and done.item.name == "create_file"
    # Closed before the text's done event, so the response completes with it listed as incomplete.
    kinds = [e.type for e in events]
    assert kinds.index("response.output_item.done") < kinds.index("response.output_text.done")
    final = _accumulate_responses(events)
    assert final.output_text == text
    assert [(o.type, getattr(o, "status", None)) for o in final.output] == [("message", "completed"), ("function_call", "incomplete")]


def test_responses_stream_cut_off_before_its_done_events_still_releases_held_text() -> None:
    from test_openai import _responses_script

    events = _responses_script(["tail <tool_"])[:5]  # created .. the one delta; then the stream stops
    out = list(sieve_stream(events))
    assert "".join(e["delta"] for e in out if e["type"] == "response.output_text.delta") == "tail <tool_"
    assert [e["sequence_number"] for e in out] == list(range(len(out)))


def test_responses_reasoning_in_the_text_becomes_a_reasoning_item(client: Any) -> None:
    raw = list(_responses(client, "reasoning"))
    assert "<think>" in "".join(e.delta for e in raw if e.type == "response.output_text.delta")
    events = list(sieve_stream(_responses(client, "reasoning")))
    assert "".join(e.delta for e in events if e.type == "response.output_text.delta") == "The answer is 4."
    assert "".join(e.delta for e in events if e.type == "response.reasoning_text.delta") == "leaked thought"
    kinds = [e.type for e in events]
    # The item is closed as soon as the answer begins, before the answer's first delta.
    first_answer = next(i for i, e in enumerate(events) if e.type == "response.output_text.delta")
    assert kinds.index("response.reasoning_text.done") < first_answer
    (done,) = [e for e in events if e.type == "response.output_item.done" and e.item.type == "reasoning"]
    # Reasoning that leads the message's text stands before the message, as the API orders them.
    assert done.item.content[0].text == "leaked thought" and done.output_index == 0
    added = [(e.item.type, e.output_index) for e in events if e.type == "response.output_item.added"]
    assert added == [("reasoning", 0), ("message", 1)]
    assert kinds.index("response.content_part.added") > kinds.index("response.reasoning_text.delta")
    assert [e.sequence_number for e in events] == list(range(len(events)))
    final = _accumulate_responses(events)
    assert final.output_text == "The answer is 4."
    assert [o.type for o in final.output] == ["reasoning", "message"]
    assert final.output[0].content[0].text == "leaked thought"


def test_responses_reasoning_after_text_stays_after_the_message() -> None:
    from test_openai import _responses_script

    events = list(sieve_stream(_responses_script(["Answer first. ", "<think>then a thought</think>"])))
    added = [(e["item"]["type"], e["output_index"]) for e in events if e["type"] == "response.output_item.added"]
    assert added == [("message", 0), ("reasoning", 1)]
    final = [e for e in events if e["type"] == "response.completed"][0]["response"]
    assert [o["type"] for o in final["output"]] == ["message", "reasoning"]
