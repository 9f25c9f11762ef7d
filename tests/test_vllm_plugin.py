"""callsieve.vllm, driven through vLLM 0.33's own serving code.

The parsers are chosen by name through vLLM's ``ParserManager`` (which composes them
into its ``DelegatingParser``), and each stream runs through the real
``OpenAIServingChat.chat_completion_stream_generator`` (its ``ChatStreamProcessor``,
finish reasons, parallel-call filter, end-of-stream flush and "remaining arguments")
or ``chat_completion_full_generator``; an engine stand-in yields vLLM's own
``RequestOutput`` objects, one token at a time or the whole text at once. What a client
sees is what the OpenAI SDK's ``ChatCompletionStreamState`` accumulates from the SSE
text the server would send. The same run shows vLLM's built-in parsers getting the
seeds' bugs wrong. What is stubbed to import vLLM here: tests/server_env.py, docs/servers.md.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest

from server_cases import (
    SPECIALS,
    ClientView,
    TinyTokenizer,
    accumulate,
    assert_openai_call_shape,
    dialect_case,
    dialect_names,
    pieces,
    schema_tools,
    seeds,
)
import server_env


@pytest.fixture(scope="module")
def vllm() -> Any:
    server_env.vllm_or_skip()
    import callsieve.vllm  # registers the parsers  # noqa: F401
    from vllm.entrypoints.openai.chat_completion import serving, stream_processor
    from vllm.parser import abstract_parser, parser_manager
    from vllm.tool_parsers import abstract_tool_parser

    for module in (serving, stream_processor, abstract_parser, parser_manager, abstract_tool_parser):
        assert server_env.is_real(module), f"{module.__name__} must be vLLM's released code"
    return serving


TOKENIZER = TinyTokenizer(SPECIALS)


class Server:
    """vLLM's OpenAIServingChat with the attributes its chat paths read, no engine."""

    def __init__(self, tool_parser: str | None, reasoning_parser: str | None = None) -> None:
        from vllm.entrypoints.openai.chat_completion.serving import OpenAIServingChat
        from vllm.parser import ParserManager

        self.parser_cls = ParserManager.get_parser(
            tool_parser_name=tool_parser, reasoning_parser_name=reasoning_parser,
            enable_auto_tools=True, model_name="test-model", tokenizer=TOKENIZER)
        serving = object.__new__(OpenAIServingChat)
        for name, value in dict(parser_cls=self.parser_cls, enable_auto_tools=True,
                                _include_reasoning_tokens_details=reasoning_parser is not None,
                                response_role="assistant", enable_force_include_usage=False,
                                enable_log_outputs=False, request_logger=None, model_config=None,
                                system_fingerprint=None, enable_prompt_tokens_details=False,
                                enable_per_request_metrics=False).items():
            setattr(serving, name, value)
        self.serving = serving

    def request(self, tools: list[dict[str, Any]], stream: bool, **kw: Any) -> Any:
        from vllm.entrypoints.openai.chat_completion.protocol import ChatCompletionRequest

        kw.setdefault("tool_choice", "auto")
        request = ChatCompletionRequest(model="test-model", messages=[{"role": "user", "content": "go"}],
                                        tools=tools, stream=stream, **kw)
        # As vLLM's serving does before generating: the parser adjusts the request.
        return self.parser_cls(TOKENIZER, request.tools).adjust_request(request) if self.parser_cls else request

    def stream(self, text: str, tools: list[dict[str, Any]], *, whole: bool = False,
               finish: str = "stop", prompt: str = "<|user|>go<|assistant|>", **kw: Any) -> ClientView:
        from vllm.entrypoints.generate.base.protocol import RequestResponseMetadata
        from vllm.outputs import CompletionOutput, RequestOutput

        request = self.request(tools, True, **kw)
        steps = pieces(TOKENIZER, text, whole)
        prompt_ids = TOKENIZER.encode(prompt)

        async def engine() -> Any:
            for k, (delta, ids) in enumerate(steps):
                last = k == len(steps) - 1
                yield RequestOutput(request_id="r", prompt=None, prompt_token_ids=prompt_ids, prompt_logprobs=None,
                                    outputs=[CompletionOutput(index=0, text=delta, token_ids=ids, cumulative_logprob=None,
                                                              logprobs=None, finish_reason=finish if last else None)],
                                    finished=last)

        async def run() -> list[str]:
            return [frame async for frame in self.serving.chat_completion_stream_generator(
                request, engine(), "r", "test-model", [], TOKENIZER, RequestResponseMetadata(request_id="r"))]

        return accumulate(asyncio.run(run()))

    def whole(self, text: str, tools: list[dict[str, Any]], *, prompt: str = "<|user|>go<|assistant|>",
              **kw: Any) -> ClientView:
        from openai.types.chat import ChatCompletion
        from vllm.entrypoints.generate.base.protocol import RequestResponseMetadata
        from vllm.outputs import CompletionOutput, RequestOutput

        request = self.request(tools, False, **kw)
        parser = self.parser_cls(TOKENIZER, request.tools) if self.parser_cls else None

        async def engine() -> Any:
            ids = TOKENIZER.encode(text)
            yield RequestOutput(request_id="r", prompt=None, prompt_token_ids=TOKENIZER.encode(prompt),
                                prompt_logprobs=None, finished=True,
                                outputs=[CompletionOutput(index=0, text=text, token_ids=ids, cumulative_logprob=None,
                                                          logprobs=None, finish_reason="stop")])

        response = asyncio.run(self.serving.chat_completion_full_generator(
            request, engine(), "r", "test-model", [], TOKENIZER, RequestResponseMetadata(request_id="r"), parser=parser))
        body = json.loads(response.model_dump_json())
        completion = ChatCompletion.model_validate(body)
        message = completion.choices[0].message
        calls = [(tc.function.name, json.loads(tc.function.arguments)) for tc in message.tool_calls or []]
        return ClientView(message.content or "", body["choices"][0]["message"].get("reasoning") or "", calls,
                          [tc.id for tc in message.tool_calls or []], completion.choices[0].finish_reason, [])


# ------------------------------------------------------------------ the seeds' bugs
@pytest.mark.parametrize("whole", [False, True], ids=["token_by_token", "whole"])
@pytest.mark.parametrize("seed", seeds(), ids=lambda s: s.name)
def test_seed_streamed_through_vllm_with_callsieve_is_clean_and_whole(vllm: Any, seed: Any, whole: bool) -> None:
    # The user switches one flag: vLLM's parser name, prefixed with callsieve-.
    view = Server(f"callsieve-{seed.vllm_parser}").stream(seed.text, seed.tools, whole=whole)
    assert view.content.strip() == seed.content
    assert view.calls == seed.calls
    assert view.finish_reason == "tool_calls"
    assert_openai_call_shape(view.chunks)


@pytest.mark.parametrize("seed", seeds(), ids=lambda s: s.name)
def test_seed_whole_response_through_vllm_with_callsieve(vllm: Any, seed: Any) -> None:
    view = Server(f"callsieve-{seed.vllm_parser}").whole(seed.text, seed.tools)
    assert view.content.strip() == seed.content
    assert view.calls == seed.calls
    assert view.finish_reason == "tool_calls"


def test_vllm_builtin_parsers_get_the_seeds_wrong_on_the_same_input(vllm: Any) -> None:
    """The same transcripts, the same serving code, vLLM's own parsers: each bug shows."""
    by_name = {s.name: s for s in seeds()}
    bugs: dict[str, str] = {}
    for name, seed in by_name.items():
        view = Server(seed.vllm_parser).stream(seed.text, seed.tools)
        if name == "read_aloud" and "DSML" in view.content:
            bugs[name] = "markup in content"
        if name == "cut_at_close" and view.calls != seed.calls:
            bugs[name] = f"calls {view.calls!r:.120}"
        if name == "fenced" and any(c[0] == "delete_path" for c in view.calls):
            bugs[name] = "the fenced example was called"
    print("vLLM's built-in parsers on the seeds:", bugs)
    assert sorted(bugs) == ["cut_at_close", "fenced", "read_aloud"], bugs


# ------------------------------------------------------------------ a stream per dialect
@pytest.mark.parametrize("whole", [False, True], ids=["token_by_token", "whole"])
@pytest.mark.parametrize("name", dialect_names())
def test_every_dialect_through_vllm_serving(vllm: Any, name: str, whole: bool) -> None:
    text, parsed = dialect_case(name)
    view = Server(f"callsieve-{name}", f"callsieve-{name}").stream(text, schema_tools(parsed), whole=whole)
    assert [(c.name, c.arguments) for c in parsed.calls] == view.calls
    assert view.content == parsed.text
    assert view.reasoning == parsed.reasoning
    assert view.finish_reason == "tool_calls"
    assert_openai_call_shape(view.chunks)
    whole_view = Server(f"callsieve-{name}", f"callsieve-{name}").whole(text, schema_tools(parsed))
    assert (whole_view.content or "", whole_view.calls) == (parsed.text or "", view.calls)


# ------------------------------------------------------------------ what serving relies on
QWEN_TOOLS = [{"type": "function", "function": {"name": "get_weather", "parameters": {
    "type": "object", "properties": {"city": {"type": "string"}, "days": {"type": "integer"}}}}}]
TWO_CALLS = ("Checking both. <tool_call>\n<function=get_weather>\n<parameter=city>\nParis\n</parameter>\n"
             "<parameter=days>\n3\n</parameter>\n</function>\n</tool_call>\n<tool_call>\n<function=get_weather>\n"
             "<parameter=city>\nOslo\n</parameter>\n</function>\n</tool_call>")


def test_schema_types_the_arguments_and_ids_are_unique(vllm: Any) -> None:
    view = Server("callsieve-qwen3_coder").stream(TWO_CALLS, QWEN_TOOLS)
    assert view.calls == [("get_weather", {"city": "Paris", "days": 3}), ("get_weather", {"city": "Oslo"})]
    assert len(set(view.ids)) == 2
    assert view.content.strip() == "Checking both."


def test_parallel_tool_calls_false_keeps_the_first_call(vllm: Any) -> None:
    for run in ("stream", "whole"):
        view = getattr(Server("callsieve-qwen3_coder"), run)(TWO_CALLS, QWEN_TOOLS, parallel_tool_calls=False)
        assert view.calls == [("get_weather", {"city": "Paris", "days": 3})], run


def test_tool_choice_none_makes_no_call_and_shows_no_markup(vllm: Any) -> None:
    for run in ("stream", "whole"):
        view = getattr(Server("callsieve-qwen3_coder"), run)(TWO_CALLS, QWEN_TOOLS, tool_choice="none")
        assert view.calls == [] and "<tool_call>" not in view.content, run
        assert view.finish_reason == "stop"


def test_finish_reason_is_stop_without_calls_and_length_is_kept(vllm: Any) -> None:
    server = Server("callsieve-qwen3_coder")
    plain = server.stream("No tools needed: `<tool_call>` is how I would call one.", QWEN_TOOLS)
    assert (plain.finish_reason, plain.calls) == ("stop", [])
    assert plain.content == "No tools needed: `<tool_call>` is how I would call one."
    cut = server.stream(TWO_CALLS[:120], QWEN_TOOLS, finish="length")
    assert cut.finish_reason == "length"


def test_a_partial_marker_held_at_the_end_of_the_stream_is_released(vllm: Any) -> None:
    # The last token leaves "<tool_" held back; vLLM's end-of-stream flush
    # (finish_streaming) must deliver it, or the text would lose its tail.
    view = Server("callsieve-hermes").stream("Compare a<b and 1 <tool_", QWEN_TOOLS)
    assert view.content == "Compare a<b and 1 <tool_"
    assert view.calls == [] and view.finish_reason == "stop"


def test_sending_calls_whole_never_streams_an_abandoned_call(vllm: Any, monkeypatch: Any) -> None:
    monkeypatch.setenv("CALLSIEVE_STREAM_ARGUMENTS", "0")
    broken = "Try: <tool_call>\n<function=get_weather>\n<parameter=city>\nParis\n</parameter>\n<oops>"
    view = Server("callsieve-qwen3_coder").stream(broken + " and that is all.", QWEN_TOOLS)
    assert view.calls == [] and view.finish_reason == "stop"
    # The block runs to the end of the stream and is abandoned: shown once, so its
    # markup is neither a call nor content (callsieve's contract, point 2).
    assert view.content == "Try: "
    good = Server("callsieve-qwen3_coder").stream(TWO_CALLS, QWEN_TOOLS)
    assert good.calls[0] == ("get_weather", {"city": "Paris", "days": 3})
    assert_openai_call_shape(good.chunks)


def test_reasoning_parser_splits_reasoning_and_hands_calls_to_the_tool_phase(vllm: Any) -> None:
    text = "<think>I should call get_weather, written <tool_call> like this.</think>Sure. " + TWO_CALLS
    server = Server("callsieve-qwen3_coder", "callsieve-qwen3_coder")
    for view in (server.stream(text, QWEN_TOOLS), server.stream(text, QWEN_TOOLS, whole=True), server.whole(text, QWEN_TOOLS)):
        assert view.reasoning == "I should call get_weather, written <tool_call> like this."
        assert view.content.strip() == "Sure. Checking both."
        assert [c[1]["city"] for c in view.calls] == ["Paris", "Oslo"]
    # A prompt that ends inside reasoning (the template opened <think>).
    opened = server.stream("still thinking</think>Done.", QWEN_TOOLS, prompt="<|assistant|><think>")
    assert (opened.reasoning, opened.content) == ("still thinking", "Done.")


def test_without_a_reasoning_parser_reasoning_is_content_and_its_quoted_call_no_call(vllm: Any) -> None:
    text = "<think>maybe <tool_call>\n<function=get_weather>\n</function>\n</tool_call></think>No call needed."
    view = Server("callsieve-qwen3_coder").stream(text, QWEN_TOOLS)
    assert view.content == text
    assert view.calls == [] and view.finish_reason == "stop"


def test_responses_style_tool_schemas_type_the_arguments(vllm: Any) -> None:
    from openai.types.responses import FunctionTool
    from vllm.entrypoints.openai.chat_completion.protocol import ChatCompletionRequest

    import callsieve.vllm

    tool = FunctionTool(type="function", name="get_weather", strict=False,
                        parameters=QWEN_TOOLS[0]["function"]["parameters"])
    parser = callsieve.vllm.tool_parser_class("callsieve-qwen3_coder")(TOKENIZER, [tool])
    request = ChatCompletionRequest(model="m", messages=[{"role": "user", "content": "go"}])
    result = parser.extract_tool_calls(TWO_CALLS, request)
    assert result.tools_called
    assert [json.loads(c.function.arguments) for c in result.tool_calls] == [{"city": "Paris", "days": 3}, {"city": "Oslo"}]


def test_every_name_is_registered_with_vllm(vllm: Any) -> None:
    from vllm.reasoning import ReasoningParserManager
    from vllm.tool_parsers import ToolParserManager

    from callsieve.grammar.registry import ALIASES, REGISTRY

    names = {"callsieve"} | {f"callsieve-{n}" for n in [*REGISTRY, *ALIASES]}
    names |= {"callsieve-minimax-m2", "callsieve-gpt-oss", "callsieve-qwen3-coder"}  # the servers' dashes
    assert names <= set(ToolParserManager.list_registered())
    assert names <= set(ReasoningParserManager.list_registered())
    assert ToolParserManager.get_tool_parser("callsieve-glm47").dialects == ("glm47",)


def test_adjust_request_keeps_special_tokens_and_the_bookkeeping_leaves_nothing_unstreamed(vllm: Any) -> None:
    from vllm.entrypoints.openai.chat_completion.protocol import ChatCompletionRequest

    import callsieve.vllm

    cls = callsieve.vllm.tool_parser_class("callsieve-qwen3_coder")
    with_tools = ChatCompletionRequest(model="m", messages=[{"role": "user", "content": "go"}], tools=QWEN_TOOLS)
    assert cls(TOKENIZER, with_tools.tools).adjust_request(with_tools).skip_special_tokens is False
    without = ChatCompletionRequest(model="m", messages=[{"role": "user", "content": "go"}])
    assert cls(TOKENIZER).adjust_request(without).skip_special_tokens is not False  # left to vLLM
    # What vLLM reads at the end of a stream: the decided arguments, all of them sent.
    parser = cls(TOKENIZER, with_tools.tools)
    for delta, ids in pieces(TOKENIZER, TWO_CALLS, whole=False):
        parser.extract_tool_calls_streaming("", "", delta, [], [], ids, with_tools)
    parser.finish_streaming()
    assert parser.prev_tool_call_arr == [{"name": "get_weather", "arguments": {"city": "Paris", "days": 3}},
                                         {"name": "get_weather", "arguments": {"city": "Oslo"}}]
    assert [json.loads(a) for a in parser.streamed_args_for_tool] == [a["arguments"] for a in parser.prev_tool_call_arr]
    assert parser.get_remaining_unstreamed_args() == ""


def test_import_callsieve_imports_neither_plugin_nor_server() -> None:
    import subprocess
    import sys

    code = ("import sys, callsieve, callsieve.tools.cli; "
            "bad = [m for m in sys.modules if m.split('.')[0] in ('vllm', 'sglang') "
            "or m in ('callsieve.vllm', 'callsieve.sglang', 'callsieve.serving')]; assert not bad, bad")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
