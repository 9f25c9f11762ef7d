"""callsieve.openai against the real ``openai`` client and a local OpenAI-compatible SSE server.

The server (127.0.0.1, port 0, started per module) replays scripted upstream chunks; the
script is picked by the request's ``model``. The upstream leaks markup into
``delta.content`` the way seed 001 (DeepSeek DSML read aloud by TTS) and seed 004
(a literal ``</parameter>`` inside a file argument) describe.
"""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Iterator

import pytest

openai = pytest.importorskip("openai")
from openai.lib.streaming.chat import ChatCompletionStreamState  # noqa: E402

import callsieve  # noqa: E402
from callsieve.openai import asieve_stream, clean_completion, clean_message, sieve_stream  # noqa: E402

BAR = "\u2016"  # ‖, as seed 001 shows it
INTRO = "好的，我先写一首小诗，再念给西溪公主听：\n\n"
POEM = "西溪公主回城堡，\n星星点灯照她跑。"
# Seed 001's leak, with the opening marker split across two SSE events ("<‖DS" + "ML‖...").
DSML_PARTS = [
    INTRO[:6],
    INTRO[6:] + f"<{BAR}DS",
    f"ML{BAR}tool_calls>\n<{BAR}DSML{BAR}invoke name=\"voice_output_speak\">\n",
    f'<{BAR}DSML{BAR}parameter name="text" string="true">{POEM[:8]}',
    POEM[8:],
    f"</{BAR}DSML{BAR}parameter>\n</{BAR}DSML{BAR}invoke>\n</{BAR}DSML{BAR}tool_calls>",
]
TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "voice_output_speak",
            "parameters": {"type": "object", "properties": {"text": {"type": "string"}}},
        },
    },
    {
        "type": "function",
        "function": {
            "name": "create_file",
            "parameters": {
                "type": "object",
                "properties": {"path": {"type": "string"}, "content": {"type": "string"}},
            },
        },
    },
]

# Seed 004: the file content holds a literal </parameter> that must not end the value.
SEED4_CONTENT = "line\n</parameter>\nmore"
SEED4 = (
    "I'll create the file.\n<tool_call>\n<function=create_file>\n<parameter=path>\na.md\n</parameter>\n"
    f"<parameter=content>\n{SEED4_CONTENT}\n</parameter>\n</function>\n</tool_call>"
)


def _split(s: str, n: int) -> list[str]:
    return [s[i : i + n] for i in range(0, len(s), n)]


def _delta_chunk(delta: dict[str, Any], finish: str | None = None, index: int = 0) -> dict[str, Any]:
    return {
        "id": "chatcmpl-local",
        "object": "chat.completion.chunk",
        "created": 1700000000,
        "model": "local",
        "choices": [{"index": index, "delta": delta, "finish_reason": finish}],
    }


def _upstream_call(index: int, id: str | None = None, name: str | None = None, args: str = "") -> dict[str, Any]:
    entry: dict[str, Any] = {"index": index, "function": {"arguments": args}}
    if id is not None:
        entry["id"] = id
        entry["type"] = "function"
        entry["function"]["name"] = name
    return entry


UPSTREAM_TIME = [
    _upstream_call(0, "call_up_time", "get_time"),
    _upstream_call(0, args='{"tz": '),
    _upstream_call(0, args='"UTC"}'),
]

SCRIPTS: dict[str, list[dict[str, Any]]] = {
    "dsml-leak": [_delta_chunk({"role": "assistant", "content": ""})]
    + [_delta_chunk({"content": p}) for p in DSML_PARTS]
    + [_delta_chunk({}, "stop")],
    "seed004": [_delta_chunk({"role": "assistant", "content": ""})]
    + [_delta_chunk({"content": p}) for p in _split(SEED4, 5)]
    + [_delta_chunk({}, "stop")],
    # The upstream streams its own call first, then leaks a second one as DSML.
    "upstream-first": [_delta_chunk({"role": "assistant", "content": ""})]
    + [_delta_chunk({"tool_calls": [tc]}) for tc in UPSTREAM_TIME]
    + [_delta_chunk({"content": p}) for p in DSML_PARTS]
    + [_delta_chunk({}, "tool_calls")],
    # The leaked call comes first; the upstream's own call (index 0 upstream) follows.
    "leak-first": [_delta_chunk({"role": "assistant", "content": ""})]
    + [_delta_chunk({"content": p}) for p in DSML_PARTS]
    + [_delta_chunk({"tool_calls": [tc]}) for tc in UPSTREAM_TIME]
    + [_delta_chunk({}, "tool_calls")],
    "reasoning": [
        _delta_chunk({"role": "assistant", "content": "", "reasoning_content": "upstream thinks. "}),
        _delta_chunk({"content": "<thi"}),
        _delta_chunk({"content": "nk>leaked thought</th"}),
        _delta_chunk({"content": "ink>The answer is 4."}),
        _delta_chunk({}, "stop"),
    ],
    # The stream is cut inside a block: the started call is abandoned, the markup is
    # released as text before the (held) finish chunk.
    "cut": [
        _delta_chunk({"role": "assistant", "content": ""}),
        _delta_chunk({"content": "Writing.\n<tool_call>\n<function=create_file>\n<parameter=path>\na"}),
        _delta_chunk({"content": ".md"}, "length"),
    ],
}

def _responses_script(parts: list[str], item_id: str = "msg_local") -> list[dict[str, Any]]:
    """The events a Responses API server sends for one message whose text arrives in ``parts``."""
    text = "".join(parts)
    response = {"id": "resp_local", "object": "response", "created_at": 1700000000, "model": "local",
                "status": "in_progress", "output": []}
    message = {"type": "message", "id": item_id, "role": "assistant", "status": "in_progress", "content": []}
    part = {"type": "output_text", "text": "", "annotations": []}
    done_part = dict(part, text=text)
    done_message = dict(message, status="completed", content=[done_part])
    events: list[dict[str, Any]] = [
        {"type": "response.created", "response": response},
        {"type": "response.in_progress", "response": response},
        {"type": "response.output_item.added", "output_index": 0, "item": message},
        {"type": "response.content_part.added", "item_id": item_id, "output_index": 0, "content_index": 0, "part": part},
    ]
    events += [
        {"type": "response.output_text.delta", "item_id": item_id, "output_index": 0, "content_index": 0,
         "delta": p, "logprobs": []}
        for p in parts
    ]
    events += [
        {"type": "response.output_text.done", "item_id": item_id, "output_index": 0, "content_index": 0,
         "text": text, "logprobs": []},
        {"type": "response.content_part.done", "item_id": item_id, "output_index": 0, "content_index": 0, "part": done_part},
        {"type": "response.output_item.done", "output_index": 0, "item": done_message},
        {"type": "response.completed", "response": dict(response, status="completed", output=[done_message])},
    ]
    return [dict(e, sequence_number=n) for n, e in enumerate(events)]


RESPONSES_SCRIPTS: dict[str, list[dict[str, Any]]] = {
    "dsml-leak": _responses_script(DSML_PARTS),
    "seed004": _responses_script(_split(SEED4, 5)),
    "plain": _responses_script(["Hello ", "world."]),
    "reasoning": _responses_script(["<thi", "nk>leaked thought</th", "ink>The answer is 4."]),
    # Cut inside a block: the started call is abandoned, its markup comes back as text.
    "cut": _responses_script(["Writing.\n<tool_call>\n<function=create_file>\n<parameter=path>\na", ".md"]),
}

NONSTREAM = {
    "id": "chatcmpl-local",
    "object": "chat.completion",
    "created": 1700000000,
    "model": "local",
    "choices": [
        {
            "index": 0,
            "message": {"role": "assistant", "content": "".join(DSML_PARTS)},
            "finish_reason": "stop",
        }
    ],
}


class _Handler(BaseHTTPRequestHandler):
    def log_message(self, format: str, *args: Any) -> None:  # quiet
        pass

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        if self.path.endswith("/responses"):
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream")
            self.end_headers()
            for event in RESPONSES_SCRIPTS[body["model"]]:
                self.wfile.write(f"event: {event['type']}\ndata: {json.dumps(event, ensure_ascii=False)}\n\n".encode())
                self.wfile.flush()
            return
        if not body.get("stream"):
            data = json.dumps(NONSTREAM).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)
            return
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-cache")
        self.end_headers()
        for chunk in SCRIPTS[body["model"]]:
            self.wfile.write(f"data: {json.dumps(chunk, ensure_ascii=False)}\n\n".encode())
            self.wfile.flush()
        self.wfile.write(b"data: [DONE]\n\n")
        self.wfile.flush()


@pytest.fixture(scope="module")
def base_url() -> Iterator[str]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/v1"
    finally:
        server.shutdown()
        server.server_close()
        thread.join(5)


@pytest.fixture(scope="module")
def client(base_url: str) -> Iterator[Any]:
    c = openai.OpenAI(base_url=base_url, api_key="test", max_retries=0, timeout=10)
    yield c
    c.close()


def _create(client: Any, model: str) -> Any:
    return client.chat.completions.create(model=model, messages=[{"role": "user", "content": "hi"}], stream=True)


def _accumulate(chunks: list[Any]) -> Any:
    state: Any = ChatCompletionStreamState()
    for c in chunks:
        state.handle_chunk(c)
    return state.current_completion_snapshot


def _content(chunks: list[Any]) -> str:
    return "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)


def _assert_openai_call_shape(chunks: list[Any]) -> None:
    """At most one tool-call entry per chunk; id/type/name only on a call's first entry."""
    seen: set[int] = set()
    for c in chunks:
        for ch in c.choices:
            calls = ch.delta.tool_calls or []
            assert len(calls) <= 1
            for tc in calls:
                if tc.index in seen:
                    assert tc.id is None and tc.type is None and tc.function.name is None
                else:
                    seen.add(tc.index)
                    assert tc.id and tc.type == "function" and tc.function.name
                    assert tc.function.arguments == ""


# ---------------------------------------------------------------- the real client
def test_raw_upstream_leaks_dsml_so_the_test_can_fail(client: Any) -> None:
    raw = list(_create(client, "dsml-leak"))
    assert any(c.choices and (c.choices[0].delta.content or "").endswith(f"<{BAR}DS") for c in raw)
    assert "DSML" in _content(raw)
    assert not any(c.choices and c.choices[0].delta.tool_calls for c in raw)


def test_real_client_gets_clean_content_and_tool_calls(client: Any) -> None:
    out = list(sieve_stream(_create(client, "dsml-leak"), dialects=["dsml"], tools=TOOLS))
    assert all(isinstance(c, openai.types.chat.ChatCompletionChunk) for c in out)
    content = _content(out)
    assert content == INTRO
    for c in out:
        text = c.choices[0].delta.content or "" if c.choices else ""
        assert "DSML" not in text and "<" not in text and BAR not in text
    _assert_openai_call_shape(out)
    snap = _accumulate(out)
    msg = snap.choices[0].message
    assert msg.content == INTRO
    assert len(msg.tool_calls) == 1
    call = msg.tool_calls[0]
    assert call.type == "function" and call.function.name == "voice_output_speak"
    assert json.loads(call.function.arguments) == {"text": POEM}
    assert call.id.startswith("call_")
    assert snap.choices[0].finish_reason == "tool_calls"
    assert out[-1].choices[0].finish_reason == "tool_calls"
    assert all(c.choices[0].finish_reason is None for c in out[:-1])
    # The poem streamed: its argument fragments arrived in more than one chunk.
    arg_chunks = [c for c in out if c.choices[0].delta.tool_calls and c.choices[0].delta.tool_calls[0].function.arguments]
    assert len(arg_chunks) >= 2


def test_async_client_gets_the_same_chunks(base_url: str, client: Any) -> None:
    sync_out = list(sieve_stream(_create(client, "dsml-leak"), dialects=["dsml"], tools=TOOLS, id_prefix="call_"))

    async def go() -> list[Any]:
        ac = openai.AsyncOpenAI(base_url=base_url, api_key="test", max_retries=0, timeout=10)
        try:
            stream = await ac.chat.completions.create(
                model="dsml-leak", messages=[{"role": "user", "content": "hi"}], stream=True
            )
            return [c async for c in asieve_stream(stream, dialects=["dsml"], tools=TOOLS, id_prefix="call_")]
        finally:
            await ac.close()

    async_out = asyncio.run(go())
    assert [c.to_dict() for c in async_out] == [c.to_dict() for c in sync_out]


def test_seed004_file_argument_streams_intact_through_the_client(client: Any) -> None:
    out = list(sieve_stream(_create(client, "seed004"), dialects=["qwen3_coder"]))
    _assert_openai_call_shape(out)
    assert _content(out) == "I'll create the file.\n"
    fragments = [
        c.choices[0].delta.tool_calls[0].function.arguments for c in out if c.choices and c.choices[0].delta.tool_calls
    ]
    assert len([f for f in fragments if f]) >= 4
    args = json.loads("".join(fragments))
    assert args == {"path": "a.md", "content": SEED4_CONTENT}
    snap = _accumulate(out)
    assert json.loads(snap.choices[0].message.tool_calls[0].function.arguments)["content"] == SEED4_CONTENT
    assert snap.choices[0].finish_reason == "tool_calls"


def test_upstream_tool_calls_pass_through_and_extracted_calls_follow(client: Any) -> None:
    raw = list(_create(client, "upstream-first"))
    out = list(sieve_stream(iter(raw), dialects=["dsml"]))
    # The upstream's own call chunks come out as the very same objects.
    up_ids = {id(c) for c in raw if c.choices and c.choices[0].delta.tool_calls}
    assert sum(1 for c in out if id(c) in up_ids) == len(UPSTREAM_TIME)
    snap = _accumulate(out)
    calls = snap.choices[0].message.tool_calls
    assert [c.function.name for c in calls] == ["get_time", "voice_output_speak"]
    assert calls[0].id == "call_up_time" and json.loads(calls[0].function.arguments) == {"tz": "UTC"}
    assert json.loads(calls[1].function.arguments) == {"text": POEM}
    assert snap.choices[0].message.content == INTRO
    assert snap.choices[0].finish_reason == "tool_calls"


def test_upstream_call_after_an_extracted_one_is_renumbered_not_collided(client: Any) -> None:
    out = list(sieve_stream(_create(client, "leak-first"), dialects=["dsml"]))
    indices = sorted(
        {tc.index for c in out if c.choices for tc in (c.choices[0].delta.tool_calls or [])}
    )
    assert indices == [0, 1]
    snap = _accumulate(out)
    calls = snap.choices[0].message.tool_calls
    assert [c.function.name for c in calls] == ["voice_output_speak", "get_time"]
    assert calls[1].id == "call_up_time" and json.loads(calls[1].function.arguments) == {"tz": "UTC"}


def test_reasoning_is_appended_to_reasoning_content(client: Any) -> None:
    out = list(sieve_stream(_create(client, "reasoning")))
    snap = _accumulate(out)
    msg = snap.choices[0].message
    assert msg.content == "The answer is 4."
    assert msg.reasoning_content == "upstream thinks. leaked thought"
    assert snap.choices[0].finish_reason == "stop"


def test_cut_stream_releases_markup_before_the_held_finish_and_keeps_length(client: Any) -> None:
    seen: list[callsieve.Event] = []
    out = list(sieve_stream(_create(client, "cut"), on_event=lambda i, e: seen.append(e)))
    assert out[-1].choices[0].finish_reason == "length"
    content = _content(out)
    # Shown once: the started call's markup is on its ToolCallAbandoned, never content.
    assert content == "Writing.\n"
    assert all(c.choices[0].finish_reason is None for c in out[:-1])
    assert any(isinstance(e, callsieve.Diagnostic) and e.code == "unterminated_block" for e in seen)
    (gone,) = [e for e in seen if isinstance(e, callsieve.ToolCallAbandoned)]
    assert gone.name == "create_file" and gone.reason == "unterminated_block"
    assert gone.raw == "<tool_call>\n<function=create_file>\n<parameter=path>\na.md"
    # Documented: the started call cannot be un-streamed; it is never completed.
    snap = _accumulate(out)
    calls = snap.choices[0].message.tool_calls
    assert [c.function.name for c in calls] == ["create_file"]
    with pytest.raises(ValueError):
        json.loads(calls[0].function.arguments)


def test_stream_arguments_false_never_streams_an_abandoned_call(client: Any) -> None:
    out = list(sieve_stream(_create(client, "cut"), stream_arguments=False))
    assert not any(c.choices[0].delta.tool_calls for c in out)
    assert _content(out) == "Writing.\n" and out[-1].choices[0].finish_reason == "length"
    whole = list(sieve_stream(_create(client, "dsml-leak"), stream_arguments=False))
    entries = [tc for c in whole for tc in (c.choices[0].delta.tool_calls or [])]
    assert len(entries) == 1 and entries[0].id and entries[0].function.name == "voice_output_speak"
    assert json.loads(entries[0].function.arguments) == {"text": POEM}


def test_non_streamed_completion_is_cleaned(client: Any) -> None:
    completion = client.chat.completions.create(model="dsml-leak", messages=[{"role": "user", "content": "hi"}])
    assert "DSML" in completion.choices[0].message.content
    cleaned = clean_completion(completion, tools=TOOLS)
    assert isinstance(cleaned, openai.types.chat.ChatCompletion)
    choice = cleaned.choices[0]
    assert choice.message.content == INTRO
    assert choice.finish_reason == "tool_calls"
    (call,) = choice.message.tool_calls
    assert call.type == "function" and call.function.name == "voice_output_speak"
    assert json.loads(call.function.arguments) == {"text": POEM}
    # The original is not modified.
    assert "DSML" in completion.choices[0].message.content
    msg = clean_message(completion.choices[0].message, dialects="dsml")
    assert msg.content == INTRO and msg.tool_calls[0].function.name == "voice_output_speak"
    assert json.loads(msg.model_dump_json())["tool_calls"][0]["function"]["name"] == "voice_output_speak"


# ---------------------------------------------------------------- no server needed
def test_dict_chunks_are_accepted_and_returned_as_dicts() -> None:
    chunks = SCRIPTS["dsml-leak"]
    out = list(sieve_stream(chunks, id_prefix="call_"))
    assert all(isinstance(c, dict) for c in out)
    assert "".join(c["choices"][0]["delta"].get("content") or "" for c in out) == INTRO
    entries = [tc for c in out for tc in c["choices"][0]["delta"].get("tool_calls") or []]
    assert entries[0] == {
        "index": 0,
        "id": "call_0",
        "type": "function",
        "function": {"name": "voice_output_speak", "arguments": ""},
    }
    assert json.loads("".join(e["function"]["arguments"] for e in entries)) == {"text": POEM}
    assert out[-1]["choices"][0]["finish_reason"] == "tool_calls"
    # The input chunks are not modified.
    assert SCRIPTS["dsml-leak"][2]["choices"][0]["delta"]["content"] == DSML_PARTS[1]


def test_chunks_without_markup_pass_through_as_the_same_objects() -> None:
    chunks = [_delta_chunk({"role": "assistant", "content": ""})]
    chunks += [_delta_chunk({"content": w}) for w in ("Hello ", "world", ".")]
    chunks += [_delta_chunk({}, "stop")]
    out = list(sieve_stream(chunks))
    assert [id(c) for c in out] == [id(c) for c in chunks]


def test_each_choice_has_its_own_sieve() -> None:
    a = _split("A: <tool_call>\n<function=f>\n</function>\n</tool_call>", 4)
    b = _split("B: <tool_call>\n<function=g>\n</function>\n</tool_call>", 3)
    chunks = []
    for i in range(max(len(a), len(b))):
        choices = []
        if i < len(a):
            choices.append({"index": 0, "delta": {"content": a[i]}, "finish_reason": None})
        if i < len(b):
            choices.append({"index": 1, "delta": {"content": b[i]}, "finish_reason": None})
        chunks.append({"id": "x", "object": "chat.completion.chunk", "created": 1, "model": "m", "choices": choices})
    chunks.append({"id": "x", "object": "chat.completion.chunk", "created": 1, "model": "m", "choices": [
        {"index": 0, "delta": {}, "finish_reason": "stop"}, {"index": 1, "delta": {}, "finish_reason": "stop"}]})
    out = list(sieve_stream(chunks, id_prefix="c"))
    by: dict[int, dict[str, Any]] = {0: {"text": "", "calls": [], "finish": None}, 1: {"text": "", "calls": [], "finish": None}}
    for c in out:
        for ch in c["choices"]:
            d = by[ch["index"]]
            d["text"] += ch["delta"].get("content") or ""
            d["calls"] += ch["delta"].get("tool_calls") or []
            d["finish"] = ch["finish_reason"] or d["finish"]
    assert by[0]["text"] == "A: " and by[1]["text"] == "B: "
    assert [e["function"].get("name") for e in by[0]["calls"] if "id" in e] == ["f"]
    assert [e["function"].get("name") for e in by[1]["calls"] if "id" in e] == ["g"]
    assert {e["index"] for e in by[1]["calls"]} == {0}  # per-choice index space
    assert by[0]["calls"][0]["id"] != by[1]["calls"][0]["id"]
    assert by[0]["finish"] == by[1]["finish"] == "tool_calls"


def test_stream_that_ends_without_finish_still_flushes_held_text() -> None:
    chunks = [_delta_chunk({"content": "tail <tool_"})]
    out = list(sieve_stream(chunks))
    assert "".join(c["choices"][0]["delta"].get("content") or "" for c in out) == "tail <tool_"
    assert out[-1]["choices"][0]["finish_reason"] is None


def test_usage_only_chunk_passes_through() -> None:
    usage = {"id": "x", "object": "chat.completion.chunk", "created": 1, "model": "m", "choices": [], "usage": {"total_tokens": 3}}
    out = list(sieve_stream([_delta_chunk({"content": "hi"}, "stop"), usage]))
    assert out[-1] is usage


def test_bad_arguments_raise_at_the_call_not_mid_stream() -> None:
    with pytest.raises(callsieve.UnknownDialectError):
        sieve_stream(iter(()), dialects=["nope"])
    with pytest.raises(callsieve.InvalidToolSchemaError):
        sieve_stream(iter(()), tools={"not": "a list"})
    with pytest.raises(callsieve.UnknownDialectError):
        clean_message({"role": "assistant", "content": "x"}, dialects="nope")


def test_clean_message_without_markup_returns_the_same_message() -> None:
    m = {"role": "assistant", "content": "Just prose, with a `<tool_call>` in code."}
    assert clean_message(m) is m


@pytest.mark.parametrize("library", ["openai", "litellm", "langchain_core", "langchain_openai"])
def test_import_callsieve_imports_no_adapter_library(library: str) -> None:
    # The CLI and the core are imported; no adapter, and none of the adapters' libraries.
    code = (
        "import sys, callsieve, callsieve.tools.cli; "
        f"assert {library!r} not in sys.modules, '{library} imported'; "
        "assert not [m for m in sys.modules if m in ('callsieve.openai', 'callsieve.litellm', 'callsieve.langchain')]"
    )
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr

def test_the_import_check_can_fail() -> None:
    # Importing an adapter does import its library, and the same check then says so.
    # (langchain stands for all three: importing litellm costs seconds.)
    pytest.importorskip("langchain_core")
    code = "import sys, callsieve, callsieve.langchain; assert 'langchain_core' not in sys.modules, 'imported'"
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert r.returncode == 1 and "AssertionError: imported" in r.stderr


def test_content_after_a_finish_gets_a_new_sieve_and_fresh_indices() -> None:
    block = "<tool_call>\n<function={}>\n</function>\n</tool_call>"
    chunks = [
        _delta_chunk({"content": block.format("first")}, "stop"),
        _delta_chunk({"content": "again " + block.format("second")}, "stop"),
    ]
    out = list(sieve_stream(chunks, id_prefix="c_"))
    entries = [tc for c in out for tc in c["choices"][0]["delta"].get("tool_calls") or [] if "id" in tc]
    assert [(e["index"], e["function"]["name"]) for e in entries] == [(0, "first"), (1, "second")]
    assert len({e["id"] for e in entries}) == 2
    assert [c["choices"][0]["finish_reason"] for c in out if c["choices"][0]["finish_reason"]] == ["tool_calls"] * 2


# ---------------------------------------------------------------- refused at the call, with the fix
def _completion() -> Any:
    from openai.types.chat import ChatCompletion

    return ChatCompletion.model_validate({
        "id": "c", "object": "chat.completion", "created": 0, "model": "m",
        "choices": [{"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": "hi"}}],
    })


@pytest.mark.parametrize("make, message", [
    (_completion, "sieve_stream() takes a stream, not a complete ChatCompletion: use clean_completion(completion), "
                  "or create it with stream=True"),
    (lambda: [_completion()], "sieve_stream() takes a stream of chunks, not a list of completions: clean each "
                              "completion with clean_completion(completion)"),
    (lambda: _completion().choices, "sieve_stream() takes a stream of chunks, not a list of messages or choices"),
    (lambda: [{"role": "assistant", "content": "x"}], "not a list of messages or choices"),
    (lambda: {"object": "chat.completion", "choices": []}, "not a complete dict: use clean_completion(completion)"),
    (lambda: "<tool_call>", "sieve_stream() takes a stream, not a str: for a model's text use callsieve.parse(text)"),
])
def test_a_whole_response_where_a_stream_belongs_is_refused_naming_what_cleans_it(make: Any, message: str) -> None:
    with pytest.raises(TypeError) as raised:
        sieve_stream(make())
    assert message in str(raised.value), str(raised.value)


async def _no_chunks() -> Any:
    return
    yield


def test_asieve_stream_refuses_a_whole_completion_too() -> None:
    from callsieve.openai import asieve_stream

    with pytest.raises(TypeError, match=r"asieve_stream\(\) takes a stream, not a complete ChatCompletion"):
        asieve_stream(_completion())
    asieve_stream(_no_chunks())  # an async stream is fine


def test_on_event_taking_one_argument_is_refused_at_the_call() -> None:
    message = (r"on_event is called as on_event\(choice_index, event\): the index of the choice the event belongs to "
               r"and the event; <lambda>\(e\) cannot take those two arguments \(write on_event=lambda choice_index, "
               r"event: \.\.\., or def handler\(choice_index, event\)\)")
    with pytest.raises(TypeError, match=message):
        sieve_stream(iter(()), on_event=lambda e: None)
    with pytest.raises(TypeError, match=message):
        clean_message({"role": "assistant", "content": "x"}, on_event=lambda e: None)
    seen: list[tuple[int, str]] = []
    out = clean_message({"role": "assistant", "content": "hi <think>x</think>"}, on_event=lambda i, e: seen.append((i, type(e).__name__)))
    assert out["content"] == "hi " and seen[0] == (0, "Text")
    sieve_stream(iter(()), on_event=print)  # *args: it can take two


@pytest.mark.parametrize("options, message", [
    ({"on_evnt": print}, "callsieve's adapter got an unexpected keyword argument 'on_evnt' (did you mean 'on_event'?)"),
    ({"stream_argument": False}, "(did you mean 'stream_arguments'?)"),
    ({"on_malformd": "drop"}, "(did you mean 'on_malformed'?)"),
])
def test_a_misspelt_adapter_option_is_answered_with_the_nearest_one(options: dict[str, Any], message: str) -> None:
    with pytest.raises(TypeError) as raised:
        sieve_stream(iter(()), **options)
    assert message in str(raised.value)
    with pytest.raises(TypeError) as raised:
        clean_message({"role": "assistant", "content": "x"}, **options)
    assert message in str(raised.value)
