"""callsieve.sglang, driven through SGLang 0.5.23's own serving code.

The detectors are chosen by name through SGLang's ``FunctionCallParser`` and
``ReasoningParser`` (real). The chat serving methods (``_generate_chat_stream``,
``_generate_stream_content``, ``_process_reasoning_stream``, ``_process_tool_call_stream``,
``_check_for_unstreamed_tool_args``, ``_build_chat_response``, ``_process_tool_calls``, ...)
are SGLang's source from ``serving_chat.py`` in the wheel, compiled into a class in a
namespace holding that module's imports; the module itself is not imported, because
its other imports pull in the scheduler, kernels and torch. The engine stand-in yields
the dicts SGLang's tokenizer manager yields; ``get_serving()`` (the server's arguments)
holds their defaults. A client's view is what the OpenAI SDK accumulates from the SSE
text. The same run shows SGLang's built-in detectors getting the seeds' bugs wrong.
"""

from __future__ import annotations

import ast
import asyncio
import json
import types
from typing import Any

import pytest

from server_cases import (
    ClientView,
    TinyTokenizer,
    SPECIALS,
    accumulate,
    assert_openai_call_shape,
    dialect_case,
    dialect_names,
    pieces,
    schema_tools,
    seeds,
)
import server_env

TOKENIZER = TinyTokenizer(SPECIALS)

#: ``get_serving()``: the server arguments the compiled methods read, at their defaults.
SERVING_DEFAULTS = types.SimpleNamespace(
    incremental_streaming_output=False, stream_response_default_include_usage=False, return_input_ids=False,
    return_output_ids=False, enable_cache_report=False, default_chat_template_kwargs=None,
    trust_request_chat_template=False, allow_auto_truncate=False)


def _compile_serving_class() -> tuple[type, list[str]]:
    """OpenAIServingChat's and OpenAIServingBase's methods, compiled from the wheel's source."""
    root = server_env.SGLANG_DIR / "sglang" / "srt" / "entrypoints" / "openai"
    namespace: dict[str, Any] = {"__name__": "sglang_serving_chat_source"}
    skipped: list[str] = []
    methods: dict[str, Any] = {}
    for file, class_name in (("serving_base.py", "OpenAIServingBase"), ("serving_chat.py", "OpenAIServingChat")):
        path = root / file
        tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
        for node in tree.body:
            if isinstance(node, ast.ClassDef) and node.name == class_name:
                for item in node.body:
                    if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef)):
                        local: dict[str, Any] = {}
                        exec(compile(ast.Module([item], []), str(path), "exec"), namespace, local)
                        methods[item.name] = local[item.name]
                    elif isinstance(item, (ast.Assign, ast.AnnAssign)):
                        local = {}
                        try:
                            exec(compile(ast.Module([item], []), str(path), "exec"), namespace, local)
                            methods.update(local)
                        except Exception:
                            pass
            elif not isinstance(node, ast.ClassDef):
                # Imports, helpers and constants, one statement at a time: those that
                # need the engine (scheduler, kernels) fail and are listed.
                try:
                    exec(compile(ast.Module([node], []), str(path), "exec"), namespace)
                except Exception as e:
                    skipped.append(f"{file}:{node.lineno}: {type(e).__name__}")
    namespace["get_serving"] = lambda: SERVING_DEFAULTS
    return type("OpenAIServingChatFromSource", (), methods), skipped


@pytest.fixture(scope="module")
def sglang() -> Any:
    server_env.sglang_or_skip()
    import callsieve.sglang  # registers the detectors  # noqa: F401
    from sglang.srt.function_call import base_format_detector, function_call_parser
    from sglang.srt.parser import reasoning_parser

    for module in (function_call_parser, base_format_detector, reasoning_parser):
        assert server_env.is_real(module), f"{module.__name__} must be SGLang's released code"
    cls, skipped = _compile_serving_class()
    return cls


class Server:
    def __init__(self, cls: type, tool_parser: str | None, reasoning_parser: str | None = None) -> None:
        self.serving = object.__new__(cls)
        s = self.serving
        s.tool_call_parser = tool_parser
        s.reasoning_parser = reasoning_parser
        s.tokenizer_manager = types.SimpleNamespace(tokenizer=TOKENIZER)
        s.template_manager = types.SimpleNamespace(force_reasoning=False, reasoning_config=None)
        s.chat_encoding_spec = None
        s._encoding_adapter = None
        s._reasoning_detector = None
        if reasoning_parser:
            from sglang.srt.parser.reasoning_parser import ReasoningParser

            s._reasoning_detector = ReasoningParser(reasoning_parser, True, tokenizer=TOKENIZER).detector

    def request(self, tools: list[dict[str, Any]], stream: bool, **kw: Any) -> Any:
        from sglang.srt.entrypoints.openai.protocol import ChatCompletionRequest

        kw.setdefault("tool_choice", "auto")
        return ChatCompletionRequest(model="test-model", messages=[{"role": "user", "content": "go"}],
                                     tools=tools, stream=stream, **kw)

    def stream(self, text: str, tools: list[dict[str, Any]], *, whole: bool = False, finish: str = "stop",
               **kw: Any) -> ClientView:
        request = self.request(tools, True, **kw)
        steps = pieces(TOKENIZER, text, whole)

        async def generate_request(adapted: Any, raw: Any) -> Any:
            so_far = ""
            for k, (delta, ids) in enumerate(steps):
                so_far += delta
                last = k == len(steps) - 1
                yield {"text": so_far, "index": 0, "output_ids": ids,
                       "meta_info": {"id": "r", "prompt_tokens": 3, "completion_tokens": k + 1, "cached_tokens": 0,
                                     "finish_reason": {"type": finish, "matched": None} if last else None}}

        self.serving.tokenizer_manager.generate_request = generate_request

        async def run() -> list[str]:
            return [frame async for frame in self.serving._generate_chat_stream(None, request, None)]

        return accumulate(asyncio.run(run()))

    def whole(self, text: str, tools: list[dict[str, Any]], **kw: Any) -> ClientView:
        request = self.request(tools, False, **kw)
        item = {"text": text, "index": 0, "output_ids": TOKENIZER.encode(text),
                "meta_info": {"id": "r", "prompt_tokens": 3, "completion_tokens": 1, "cached_tokens": 0, "weight_version": "default",
                              "finish_reason": {"type": "stop", "matched": None}}}
        response = self.serving._build_chat_response(request, [item], 0)
        body = json.loads(response.model_dump_json())
        message = body["choices"][0]["message"]
        calls = [(tc["function"]["name"], json.loads(tc["function"]["arguments"])) for tc in message.get("tool_calls") or []]
        return ClientView(message.get("content") or "", message.get("reasoning_content") or "", calls,
                          [tc["id"] for tc in message.get("tool_calls") or []], body["choices"][0]["finish_reason"], [])


# ------------------------------------------------------------------ the seeds' bugs
@pytest.mark.parametrize("whole", [False, True], ids=["token_by_token", "whole"])
@pytest.mark.parametrize("seed", seeds(), ids=lambda s: s.name)
def test_seed_streamed_through_sglang_with_callsieve_is_clean_and_whole(sglang: Any, seed: Any, whole: bool) -> None:
    view = Server(sglang, f"callsieve-{seed.sglang_parser}").stream(seed.text, seed.tools, whole=whole)
    assert view.content.strip() == seed.content
    assert view.calls == seed.calls
    assert view.finish_reason == "tool_calls"
    assert_openai_call_shape(view.chunks, type_on_every_delta=True)


@pytest.mark.parametrize("seed", seeds(), ids=lambda s: s.name)
def test_seed_whole_response_through_sglang_with_callsieve(sglang: Any, seed: Any) -> None:
    view = Server(sglang, f"callsieve-{seed.sglang_parser}").whole(seed.text, seed.tools)
    assert view.content.strip() == seed.content
    assert view.calls == seed.calls
    assert view.finish_reason == "tool_calls"


def test_sglang_builtin_detectors_get_the_seeds_wrong_on_the_same_input(sglang: Any) -> None:
    bugs: dict[str, str] = {}
    for seed in seeds():
        view = Server(sglang, seed.sglang_parser).stream(seed.text, seed.tools)
        if seed.name == "read_aloud" and "DSML" in view.content:
            bugs[seed.name] = "markup in content"
        if seed.name == "cut_at_close" and view.calls != seed.calls:
            bugs[seed.name] = f"calls {view.calls!r:.120}"
        if seed.name == "fenced" and any(c[0] == "delete_path" for c in view.calls):
            bugs[seed.name] = "the fenced example was called"
    print("SGLang's built-in detectors on the seeds:", bugs)
    assert sorted(bugs) == ["cut_at_close", "fenced", "read_aloud"], bugs


# ------------------------------------------------------------------ a stream per dialect
@pytest.mark.parametrize("whole", [False, True], ids=["token_by_token", "whole"])
@pytest.mark.parametrize("name", dialect_names())
def test_every_dialect_through_sglang_serving(sglang: Any, name: str, whole: bool) -> None:
    text, parsed = dialect_case(name)
    server = Server(sglang, f"callsieve-{name}", f"callsieve-{name}")
    view = server.stream(text, schema_tools(parsed), whole=whole)
    assert view.calls == [(c.name, c.arguments) for c in parsed.calls]
    assert view.content == parsed.text
    assert view.reasoning == parsed.reasoning
    assert view.finish_reason == "tool_calls"
    assert_openai_call_shape(view.chunks, type_on_every_delta=True)
    whole_view = server.whole(text, schema_tools(parsed))
    assert (whole_view.content, whole_view.calls) == (parsed.text, view.calls)


QWEN_TOOLS = [{"type": "function", "function": {"name": "get_weather", "parameters": {
    "type": "object", "properties": {"city": {"type": "string"}, "days": {"type": "integer"}}}}}]
TWO_CALLS = ("Checking both. <tool_call>\n<function=get_weather>\n<parameter=city>\nParis\n</parameter>\n"
             "<parameter=days>\n3\n</parameter>\n</function>\n</tool_call>\n<tool_call>\n<function=get_weather>\n"
             "<parameter=city>\nOslo\n</parameter>\n</function>\n</tool_call>")


def test_schema_types_arguments_and_plain_text_finishes_with_stop(sglang: Any) -> None:
    server = Server(sglang, "callsieve-qwen3_coder")
    view = server.stream(TWO_CALLS, QWEN_TOOLS)
    assert view.calls == [("get_weather", {"city": "Paris", "days": 3}), ("get_weather", {"city": "Oslo"})]
    plain = server.stream("Compare a<b and 1 <tool_", QWEN_TOOLS)
    assert (plain.content, plain.calls, plain.finish_reason) == ("Compare a<b and 1 <tool_", [], "stop")


def test_an_abandoned_call_does_not_make_finish_reason_tool_calls(sglang: Any) -> None:
    broken = "Try: <tool_call>\n<function=get_weather>\n<parameter=city>\nParis\n</parameter>\n<oops> ok"
    view = Server(sglang, "callsieve-qwen3_coder").stream(broken, QWEN_TOOLS)
    assert view.finish_reason == "stop"
    # Its start and some arguments were streamed; its markup is never also content.
    assert view.content == "Try: "
    assert view.calls and view.calls[0][0] == "get_weather" and isinstance(view.calls[0][1], str)


def test_reasoning_detector_splits_reasoning_and_leaves_calls_to_the_tool_detector(sglang: Any) -> None:
    text = "<think>I should call get_weather, written <tool_call> like this.</think>Sure. " + TWO_CALLS
    server = Server(sglang, "callsieve-qwen3_coder", "callsieve-qwen3_coder")
    for view in (server.stream(text, QWEN_TOOLS), server.stream(text, QWEN_TOOLS, whole=True), server.whole(text, QWEN_TOOLS)):
        assert view.reasoning == "I should call get_weather, written <tool_call> like this."
        assert view.content.strip() == "Sure. Checking both."
        assert [c[1]["city"] for c in view.calls] == ["Paris", "Oslo"]


def test_detector_refuses_structure_info_clearly_and_is_registered(sglang: Any) -> None:
    from sglang.srt.function_call.function_call_parser import FunctionCallParser
    from sglang.srt.parser.reasoning_parser import ReasoningParser

    from callsieve.grammar.registry import ALIASES, REGISTRY

    names = {"callsieve"} | {f"callsieve-{n}" for n in [*REGISTRY, *ALIASES]}
    names |= {"callsieve-minimax-m2", "callsieve-gpt-oss", "callsieve-qwen3-coder"}  # the servers' dashes
    assert names <= set(FunctionCallParser.ToolCallParserEnum) and names <= set(ReasoningParser.DetectorMap)
    from sglang.srt.entrypoints.openai.protocol import Tool

    parser = FunctionCallParser([Tool.model_validate(QWEN_TOOLS[0])], "callsieve-qwen3_coder")
    assert not parser.detector.supports_structural_tag()
    with pytest.raises(NotImplementedError, match="no grammar to constrain"):
        parser.detector.structure_info()
    # tool_choice="required": SGLang falls back to its JSON-array constraint.
    assert parser.get_structure_constraint("required")[0] == "json_schema"
