"""What the vLLM and SGLang plugin tests share: a tokenizer that needs no download, the
seeds' three transcripts with what a correct parser must make of them (read from the
transcripts by string operations, not by callsieve), the streams per dialect, and the
OpenAI client's own accumulation of a server's chunks."""

from __future__ import annotations

import json
from dataclasses import dataclass
from importlib import resources
from typing import Any, Iterable

from openai.lib.streaming.chat import ChatCompletionStreamState
from openai.types.chat import ChatCompletionChunk

import callsieve
from callsieve.grammar.registry import REGISTRY
from callsieve.tools.server_code import SPECIALS, TinyTokenizer



def pieces(tokenizer: TinyTokenizer, text: str, whole: bool) -> list[tuple[str, list[int]]]:
    """``text`` as a server's detokenized steps: one per token, or one for everything."""
    ids = tokenizer.encode(text)
    if whole:
        return [(text, ids)]
    return [(tokenizer.decode([i]), [i]) for i in ids]


# ------------------------------------------------------------------ the seeds
@dataclass(frozen=True)
class Seed:
    name: str
    text: str
    dialect: str  # callsieve's name; the servers' names are its aliases
    vllm_parser: str  # vLLM's built-in --tool-call-parser for this markup
    sglang_parser: str  # SGLang's
    tools: list[dict[str, Any]]
    content: str  # what the user must be shown (stripped)
    calls: list[tuple[str, dict[str, Any]]]  # what must be called


def _tool(name: str, **props: str) -> dict[str, Any]:
    return {"type": "function", "function": {"name": name, "parameters": {
        "type": "object", "properties": {k: {"type": t} for k, t in props.items()}}}}


def _sample(name: str) -> str:
    return resources.files("callsieve.tools").joinpath("samples", f"{name}.txt").read_text(encoding="utf-8")


def seeds() -> list[Seed]:
    read_aloud = _sample("read_aloud")
    cut = _sample("cut_at_close")
    fenced = _sample("fenced")
    # Expected values by string operations on the transcripts (an oracle apart from callsieve).
    poem = read_aloud.split('string="true">', 1)[1].split("</‖DSML‖parameter>", 1)[0]
    file_content = cut.split("<parameter=content>\n", 1)[1].rsplit("\n</parameter>\n</function>", 1)[0]
    return [
        Seed("read_aloud", read_aloud, "dsml", "deepseek_v32", "deepseekv32",
             [_tool("voice_output_speak", text="string")],
             read_aloud.split("<‖DSML‖", 1)[0].strip(), [("voice_output_speak", {"text": poem})]),
        Seed("cut_at_close", cut, "qwen3_coder", "qwen3_coder", "qwen3_coder",
             [_tool("create_file", path="string", content="string")],
             cut.split("<tool_call>", 1)[0].strip(),
             [("create_file", {"path": "notes/template.md", "content": file_content})]),
        Seed("fenced", fenced, "qwen3_coder", "qwen3_coder", "qwen3_coder",
             [_tool("delete_path", path="string", recursive="boolean"), _tool("list_dir", path="string")],
             fenced.rsplit("\n<tool_call>", 1)[0].strip(), [("list_dir", {"path": "/home/me/old-project"})]),
    ]


# ------------------------------------------------------------------ a stream per dialect
def dialect_names() -> list[str]:
    """Every registered dialect (new ones are covered without editing the tests)."""
    return sorted(REGISTRY)


def dialect_case(name: str) -> tuple[str, callsieve.Parsed]:
    """The dialect's sample call between two sentences, and what callsieve's core makes of
    it: the plugins must deliver exactly that through the servers' code."""
    d = REGISTRY[name]
    assert d.sample, f"dialect {name} has no sample"
    text = "Let me check. " + d.sample
    parsed = callsieve.parse(text, [name])
    assert parsed.calls, f"the {name} sample holds no call"
    return text, parsed


def schema_tools(parsed: callsieve.Parsed) -> list[dict[str, Any]]:
    """Tool schemas naming the calls of ``parsed`` (parameters untyped)."""
    return [{"type": "function", "function": {"name": n, "parameters": {"type": "object", "properties": {}}}}
            for n in sorted({c.name for c in parsed.calls})]


# ------------------------------------------------------------------ the client's view
@dataclass
class ClientView:
    content: str
    reasoning: str
    calls: list[tuple[str, dict[str, Any]]]
    ids: list[str]
    finish_reason: str | None
    chunks: list[dict[str, Any]]


def accumulate(sse: Iterable[str]) -> ClientView:
    """What the OpenAI SDK's own accumulator (``ChatCompletionStreamState``) makes of a
    server's ``data: ...`` lines."""
    state = ChatCompletionStreamState()
    chunks: list[dict[str, Any]] = []
    reasoning: list[str] = []
    for frame in sse:
        for line in frame.splitlines():
            if not line.startswith("data: ") or line == "data: [DONE]":
                continue
            data = json.loads(line[len("data: "):])
            if "error" in data and "choices" not in data:
                raise AssertionError(f"the server streamed an error: {data}")
            chunks.append(data)
            if not data.get("choices"):
                continue
            delta = data["choices"][0].get("delta") or {}
            reasoning.append(delta.get("reasoning") or delta.get("reasoning_content") or "")
            state.handle_chunk(ChatCompletionChunk.model_validate(data))
    # The snapshot, not get_final_completion(): that one refuses a "length" finish.
    final = state.current_completion_snapshot
    choice = final.choices[0]
    message = choice.message
    calls = [(tc.function.name, _arguments(tc.function.arguments)) for tc in message.tool_calls or []]
    return ClientView(message.content or "", "".join(reasoning), calls, [tc.id for tc in message.tool_calls or []],
                      choice.finish_reason, chunks)


def _arguments(text: str) -> Any:
    """The arguments a client would decode, or the text itself when it is not JSON."""
    try:
        return json.loads(text)
    except ValueError:
        return text


def call_deltas(chunks: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Every ``delta.tool_calls`` entry of a stream, in order."""
    return [tc for c in chunks for ch in c.get("choices") or [] for tc in (ch.get("delta") or {}).get("tool_calls") or []]


def assert_openai_call_shape(chunks: list[dict[str, Any]], type_on_every_delta: bool = False) -> None:
    """id, type and name on each call's first delta only, arguments on the rest
    (SGLang's own ToolCall model writes ``type`` on every delta: ``type_on_every_delta``)."""
    seen: set[int] = set()
    for tc in call_deltas(chunks):
        first = tc["index"] not in seen
        seen.add(tc["index"])
        fn = tc.get("function") or {}
        if first:
            assert tc.get("id") and tc.get("type") == "function" and fn.get("name"), tc
        else:
            assert tc.get("id") is None and fn.get("name") is None, tc
            assert type_on_every_delta or tc.get("type") is None, tc
