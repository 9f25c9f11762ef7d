"""The long tail (shared/reference/dialects-long-tail.md): each format's reference
example, whole and one character per chunk, with its own dialect and with every
dialect enabled; the server parser names of §0 as aliases; the peers' bugs the
reference lists, pinned as examples callsieve gets right."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any

import pytest

import callsieve
from callsieve.grammar import ALIASES, resolve
from strategies import calls, codes, parsed, reasoning_text, texts

B = "\uff5c"


def deltas_match(events: list[callsieve.Event]) -> bool:
    """The streamed fragments of each call join to its final arguments JSON."""
    done = {e.index: e.arguments_json for e in events if isinstance(e, callsieve.ToolCall)}
    got: dict[int, str] = {}
    for e in events:
        if isinstance(e, callsieve.ToolCallDelta):
            got[e.index] = got.get(e.index, "") + e.arguments
    return all(got.get(i) == j for i, j in done.items())


@dataclass
class Example:
    """A reference example: the wire text, the dialect (or alias) it is read with, and
    what it means."""

    id: str
    dialect: str
    doc: str
    calls: list[tuple[str, dict[str, Any]]]
    text: str = ""
    reasoning: str = ""
    #: the dialect the calls are reported from, when the name above is an alias
    reads_as: str = ""
    #: ... and with every dialect enabled, when another declares the same block
    all_reads_as: str = ""
    kw: dict[str, Any] = field(default_factory=dict)


WEATHER_TIME = [("get_weather", {"city": "Paris"}), ("get_time", {"tz": "CET"})]

EXAMPLES = [
    Example(  # §3
        "olmo3", "olmo3",
        '<function_calls>\nget_weather(city="Paris")\nget_time(tz="Europe/Paris", dst=true)\n</function_calls>',
        [("get_weather", {"city": "Paris"}), ("get_time", {"tz": "Europe/Paris", "dst": True})],
    ),
    Example(  # §4
        "gemma4", "gemma4",
        'Checking both.<|tool_call>call:get_weather{city:<|"|>Paris<|"|>,days:3}<tool_call|><|tool_call>call:search'
        '{query:<|"|>café "best"<|"|>,filters:{open:true,tags:[<|"|>a<|"|>,<|"|>b<|"|>]}}<tool_call|><|tool_response>',
        [("get_weather", {"city": "Paris", "days": 3}), ("search", {"query": 'café "best"', "filters": {"open": True, "tags": ["a", "b"]}})],
        "Checking both.",
    ),
    Example(  # §5
        "granite", "granite",
        '<|tool_call|>[{"name": "get_weather", "arguments": {"city": "Paris"}}, {"name": "get_time", "arguments": {"tz": "CET"}}]',
        WEATHER_TIME,
    ),
    Example(  # §5, Granite 3.1+: the tag
        "granite_3_1", "granite",
        '<tool_call>[{"name": "get_weather", "arguments": {"city": "Paris"}}, {"name": "get_time", "arguments": {"tz": "CET"}}]',
        WEATHER_TIME,
    ),
    Example(  # §6: hermes-shaped
        "granite4", "granite4",
        'Let me check.<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris"}}\n</tool_call>\n'
        '<tool_call>\n{"name": "get_time", "arguments": {"tz": "CET"}}\n</tool_call>',
        [("get_weather", {"city": "Paris"}), ("get_time", {"tz": "CET"})], "Let me check.\n", reads_as="hermes",
    ),
    Example(  # §7
        "granite_20b_fc", "granite-20b-fc",
        'Sure.<function_call> {"name": "get_weather", "arguments": {"city": "Paris"}} <function_call> '
        '{"name": "get_time", "arguments": {"tz": "CET"}}',
        WEATHER_TIME, "Sure.", reads_as="granite_20b_fc",
    ),
    Example(  # §8
        "nemotron", "nemotron",
        "I'll look that up.<TOOLCALL>[{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\"}}, "
        '{"name": "get_time", "arguments": {"tz": "CET"}}]</TOOLCALL>',
        WEATHER_TIME, "I'll look that up.",
    ),
    Example(  # §9: text before the block is kept (vLLM discards it)
        "phi4_mini", "phi4_mini_json",
        'Sure. functools[{"name": "get_weather", "arguments": {"city": "Paris"}}, '
        '{"name": "get_time", "arguments": {"tz": "CET"}}]',
        WEATHER_TIME, "Sure. ", reads_as="phi4_mini",
    ),
    Example(  # §10
        "cohere_command", "cohere_command4",
        '<|START_THINKING|>I should call both tools.<|END_THINKING|><|START_ACTION|>[\n'
        '    {"tool_call_id": "0", "tool_name": "get_weather", "parameters": {"city": "Paris"}},\n'
        '    {"tool_call_id": "1", "tool_name": "get_time", "parameters": {"tz": "CET"}}\n'
        "]<|END_ACTION|><|END_OF_TURN_TOKEN|>",
        WEATHER_TIME, "", "I should call both tools.", reads_as="cohere_command",
    ),
    Example(  # §11
        "lfm2_python", "lfm2",
        'Let me check.<|tool_call_start|>[get_weather(city="Paris"), get_time(tz="CET")]<|tool_call_end|>',
        WEATHER_TIME, "Let me check.",
    ),
    Example(  # §11, the JSON form
        "lfm2", "lfm2",
        'Let me check.<|tool_call_start|>[{"name": "get_weather", "arguments": {"city": "Paris"}}]<|tool_call_end|>',
        [("get_weather", {"city": "Paris"})], "Let me check.",
    ),
    Example(  # §12
        "seed_oss", "seed_oss",
        "<seed:think>Need weather.</seed:think>Checking.<seed:tool_call>\n<function=get_weather>\n<parameter=city>\nParis\n"
        "</parameter>\n<parameter=days>\n3\n</parameter>\n</function>\n</seed:tool_call><seed:tool_call>\n"
        "<function=get_time>\n<parameter=tz>\nCET\n</parameter>\n</function>\n</seed:tool_call>",
        [("get_weather", {"city": "Paris", "days": "3"}), ("get_time", {"tz": "CET"})], "Checking.", "Need weather.",
    ),
    Example(  # §13
        "internlm", "internlm",
        'I\'ll search.<|action_start|><|plugin|>\n{"name": "search", "parameters": {"query": "vllm"}}<|action_end|>',
        [("search", {"query": "vllm"})], "I'll search.",
    ),
    Example(  # §13, SGLang's name
        "interns1", "interns1",
        '<|action_start|><|plugin|>\n{"name": "search", "arguments": {"query": "vllm"}}<|action_end|>',
        [("search", {"query": "vllm"})], reads_as="internlm",
    ),
    Example(  # §14 (the <answer> wrapper, unverified there, left out)
        "hunyuan", "hunyuan_a13b",
        '<think>Two lookups.</think>\n<tool_calls>[{"name": "get_weather", "arguments": {"city": "Paris"}}, '
        '{"name": "get_time", "arguments": {"tz": "CET"}}]</tool_calls>',
        WEATHER_TIME, "\n", "Two lookups.", reads_as="hunyuan",
    ),
    Example(  # §15
        "step3", "step3",
        f'Let me check.<{B}tool_calls_begin{B}><{B}tool_call_begin{B}>function<{B}tool_sep{B}><steptml:invoke name="get_weather">'
        '<steptml:parameter name="city">Paris</steptml:parameter><steptml:parameter name="days">3</steptml:parameter>'
        f"</steptml:invoke><{B}tool_call_end{B}><{B}tool_call_begin{B}>function<{B}tool_sep{B}>"
        '<steptml:invoke name="get_time"><steptml:parameter name="tz">CET</steptml:parameter></steptml:invoke>'
        f"<{B}tool_call_end{B}><{B}tool_calls_end{B}>",
        [("get_weather", {"city": "Paris", "days": "3"}), ("get_time", {"tz": "CET"})], "Let me check.",
    ),
    Example(  # §16: the prompt opened the reasoning
        "ernie45", "ernie45",
        'The user wants weather.\n</think>\n\n\n<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris"}}\n</tool_call>\n',
        [("get_weather", {"city": "Paris"})], "\n\n\n\n", "The user wants weather.\n", kw={"start_in_reasoning": True},
        all_reads_as="hermes",
    ),
    Example(  # §16: a plain answer
        "ernie45_response", "ernie45", "<response>\nIt is sunny.</response>\n", [], "\nIt is sunny.\n",
    ),
    Example(  # §17
        "longcat", "longcat",
        '<longcat_tool_call>{"name": "get_weather", "arguments": {"city": "Paris"}}</longcat_tool_call>',
        [("get_weather", {"city": "Paris"})],
    ),
    Example(  # §18
        "jamba", "jamba",
        'Sure. <tool_calls>[{"name": "get_weather", "arguments": {"city": "Paris"}}]</tool_calls>',
        [("get_weather", {"city": "Paris"})], "Sure. ", reads_as="hunyuan",
    ),
    Example(  # §21
        "gigachat3", "gigachat3",
        'Сейчас проверю.<|message_sep|>function call<|role_sep|>\n{"name": "get_weather", "arguments": {"city": "Moscow"}}</s>',
        [("get_weather", {"city": "Moscow"})], "Сейчас проверю.",
    ),
    Example(  # §21: the token form
        "gigachat3_token", "gigachat35",
        '<|function_call|>{"name": "get_weather", "arguments": {"city": "Moscow"}}',
        [("get_weather", {"city": "Moscow"})], reads_as="gigachat3",
    ),
    Example(  # §23
        "deepseek_v41", "deepseek_v41",
        "Let me check.\n\n<｜DSML｜ calls>\n<｜DSML｜ invoke name=\"get_weather\">\n"
        '<｜DSML｜ parameter name="city" string="true">Paris</｜DSML｜ parameter>\n</｜DSML｜ invoke>\n</｜DSML｜ calls>',
        [("get_weather", {"city": "Paris"})], "Let me check.\n\n", reads_as="dsml",
    ),
    Example(  # §20
        "apertus", "apertus2509",
        'I will check. <|tools_prefix|>[{"get_weather": {"city": "Paris"}}, {"get_time": {"tz": "CET"}}]<|tools_suffix|>',
        WEATHER_TIME, "I will check. ", reads_as="apertus",
    ),
    Example(  # §20: the suffix left out (a truncated stream)
        "apertus_no_suffix", "apertus",
        '<|tools_prefix|>[{"get_weather": {"city": "Paris"}}]',
        [("get_weather", {"city": "Paris"})],
    ),
    Example(  # §22
        "kimi_k3", "kimi_k3",
        '<|open|>response<|sep|>Checking.<|close|>response<|sep|><|open|>tools<|sep|><|open|>call tool="python" index="1"<|sep|>'
        '<|open|>argument key="code" type="string"<|sep|>print("<b>")<|close|>argument<|sep|>'
        '<|open|>argument key="opts" type="object"<|sep|>{"a":1}<|close|>argument<|sep|><|close|>call<|sep|><|close|>tools<|sep|>',
        [("python", {"code": 'print("<b>")', "opts": {"a": 1}})], "Checking.",
    ),
    Example(  # §24
        "ling3", "ling3",
        "<tool_call>get_weather\n<arg_key>city</arg_key>\n<arg_value>Paris</arg_value>\n</tool_call>",
        [("get_weather", {"city": "Paris"})], reads_as="glm45",
    ),
    Example(  # §24: no newline after the name; a zero-argument call
        "ling3_compact", "ling3",
        "<tool_call>get_weather<arg_key>city</arg_key><arg_value>Paris</arg_value></tool_call><tool_call>get_time</tool_call>",
        [("get_weather", {"city": "Paris"}), ("get_time", {})], reads_as="glm45",
    ),
    Example(  # §1: bare, where the response begins (asked for: bare_calls, as tools= or a named dialect do)
        "llama3_json", "llama3_json",
        '{"name": "get_weather", "parameters": {"city": "Paris"}}',
        [("get_weather", {"city": "Paris"})], kw={"bare_calls": True},
    ),
    Example(  # §1: the optional token, two calls, "; " between them
        "llama3_json_tag", "llama3",
        '<|python_tag|>{"name": "get_weather", "parameters": {"city": "Paris"}}; '
        '{"name": "get_time", "parameters": {"tz": "Europe/Paris"}}',
        [("get_weather", {"city": "Paris"}), ("get_time", {"tz": "Europe/Paris"})], reads_as="llama3_json",
    ),
    Example(  # §1: Llama 4 JSON, "arguments" for "parameters", end of turn
        "llama4_json", "llama4_json",
        '  {"name": "get_time", "arguments": {"tz": "CET"}}<|eot_id|>',
        [("get_time", {"tz": "CET"})], "  ", reads_as="llama3_json", kw={"bare_calls": True},
    ),
    Example(  # §2
        "pythonic", "pythonic",
        '[get_weather(city="Paris", unit="celsius")]',
        [("get_weather", {"city": "Paris", "unit": "celsius"})], kw={"bare_calls": True},
    ),
    Example(  # §2: two calls, a dict and a list argument (bracket depth, not the first "]")
        "llama4_pythonic", "llama4_pythonic",
        '[get_weather(city="Paris"), get_time(tz="Europe/Paris", opts={"fmt": "24h"}, days=[1, 2])]',
        [("get_weather", {"city": "Paris"}), ("get_time", {"tz": "Europe/Paris", "opts": {"fmt": "24h"}, "days": [1, 2]})],
        reads_as="pythonic", kw={"bare_calls": True},
    ),
    Example(  # §2: Llama 4's wrapper, which may stand after text
        "llama4_pythonic_wrapped", "pythonic",
        'Checking.<|python_start|>[get_weather(city="Paris")]<|python_end|>',
        [("get_weather", {"city": "Paris"})], "Checking.",
    ),
    Example(  # §19: the bare array, where the response begins
        "xlam", "xlam",
        '[{"name": "get_weather", "arguments": {"city": "Paris"}}, {"name": "get_time", "arguments": {"tz": "CET"}}]',
        WEATHER_TIME, kw={"bare_calls": True},
    ),
    Example(  # §19: after </think>, the response still begins
        "xlam_think", "xlam",
        '<think>Both tools.</think>\n[{"name": "get_weather", "arguments": {"city": "Paris"}}]',
        [("get_weather", {"city": "Paris"})], "\n", "Both tools.", kw={"bare_calls": True},
    ),
    Example(  # §19: in <tool_call>, Granite's block (with both enabled, Granite's calls)
        "xlam_tag", "xlam",
        '<tool_call>[{"name": "get_weather", "arguments": {"city": "Paris"}}, {"name": "get_time", "arguments": {"tz": "CET"}}]'
        "</tool_call>",
        WEATHER_TIME, all_reads_as="granite",
    ),
    Example(  # §19: after [TOOL_CALLS], Mistral's block (with both enabled, Mistral's calls)
        "xlam_tool_calls", "xlam",
        'Sure. [TOOL_CALLS][{"name": "get_weather", "arguments": {"city": "Paris"}}]',
        [("get_weather", {"city": "Paris"})], "Sure. ", all_reads_as="mistral",
    ),
    Example(  # §25
        "inkling", "inkling",
        '<|message_model|>get_weather<|content_invoke_tool_json|>{"name":"get_weather","args":{"city":"Paris"}}<|end_message|>',
        [("get_weather", {"city": "Paris"})],
    ),
]


@pytest.mark.parametrize("ex", EXAMPLES, ids=[e.id for e in EXAMPLES])
@pytest.mark.parametrize("size", [0, 1])
@pytest.mark.parametrize("enabled", ["own", "all"])
def test_reference_examples_whole_and_one_character_at_a_time(ex: Example, size: int, enabled: str) -> None:
    events = parsed(ex.doc, size, dialects=[ex.dialect] if enabled == "own" else None, **ex.kw)
    assert calls(events) == ex.calls
    assert texts(events) == ex.text
    assert reasoning_text(events) == ex.reasoning
    assert codes(events) == []
    assert "".join(e.raw for e in events) == ex.doc
    assert deltas_match(events)
    dialects = {e.dialect for e in events if isinstance(e, callsieve.ToolCall)}
    own = ex.reads_as or ex.dialect
    assert dialects == ({ex.all_reads_as or own if enabled == "all" else own} if ex.calls else set())


def test_every_long_tail_dialect_has_a_reference_example() -> None:
    from callsieve.grammar.registry import LONG_TAIL

    covered = {resolve(e.dialect)[0].name for e in EXAMPLES}
    assert set(LONG_TAIL) <= covered


# ---------------------------------------------------------------- server names
#: Every ``--tool-call-parser`` name of dialects-long-tail.md §0 (vLLM's and SGLang's)
#: for the formats callsieve reads, and the dialect it stands for.
SERVER_NAMES = {
    "granite": "granite",
    "granite4": "hermes",
    "granite-20b-fc": "granite_20b_fc",
    "nemotron_json": "nemotron",
    "cohere_command3": "cohere_command",
    "cohere_command4": "cohere_command",
    "seed_oss": "seed_oss",
    "internlm": "internlm",
    "interns1": "internlm",
    "hunyuan_a13b": "hunyuan",
    "hy_v3": "hunyuan",
    "hunyuan": "hunyuan",
    "step3": "step3",
    "step3p5": "qwen3_coder",
    "longcat": "longcat",
    "jamba": "hunyuan",
    "gigachat3": "gigachat3",
    "gigachat35": "gigachat3",
    "deepseek_v41": "dsml",
    "deepseekv41": "dsml",
    "inkling": "inkling",
    "apertus": "apertus",
    "apertus2509": "apertus",
    "kimi_k3": "kimi_k3",
    "ling3": "glm45",
    "lfm2": "lfm2",
    "ernie45": "ernie45",
    "olmo3": "olmo3",
    "gemma4": "gemma4",
    "functiongemma": "gemma4",
    "phi4_mini_json": "phi4_mini",
    "llama3_json": "llama3_json",
    "llama4_json": "llama3_json",
    "llama3": "llama3_json",
    "pythonic": "pythonic",
    "llama4_pythonic": "pythonic",
    "xlam": "xlam",
}


@pytest.mark.parametrize("name, dialect", sorted(SERVER_NAMES.items()))
def test_server_parser_names_resolve(name: str, dialect: str) -> None:
    (d,) = resolve(name)
    assert d.name == dialect


def test_every_alias_names_a_built_in_dialect() -> None:
    from callsieve.grammar.registry import BUILTIN

    assert {t for t in ALIASES.values()} <= set(BUILTIN)
    assert not set(ALIASES) & set(BUILTIN)


# ---------------------------------------------------------------- peers' bugs
def test_step3_value_holding_a_lt_is_kept() -> None:
    """vLLM's Step3 value regex is ``[^<]*``: a value holding ``<`` drops the parameter."""
    doc = (f'<{B}tool_calls_begin{B}><{B}tool_call_begin{B}>function<{B}tool_sep{B}><steptml:invoke name="run">'
           '<steptml:parameter name="code">if a < b: print("<b>")</steptml:parameter>'
           '<steptml:parameter name="note">x</steptml:parameter lookalike></steptml:parameter>'
           f"</steptml:invoke><{B}tool_call_end{B}><{B}tool_calls_end{B}>")
    for size in (0, 1):
        events = parsed(doc, size, dialects=["step3"])
        assert calls(events) == [("run", {"code": 'if a < b: print("<b>")', "note": "x</steptml:parameter lookalike>"})]


def test_step3_values_typed_by_the_schema() -> None:
    tools = [{"type": "function", "function": {"name": "get_weather", "parameters": {"properties": {
        "city": {"type": "string"}, "days": {"type": "integer"}}}}}]
    doc = EXAMPLES[[e.id for e in EXAMPLES].index("step3")].doc
    assert calls(parsed(doc, dialects=["step3"], tools=tools))[0] == ("get_weather", {"city": "Paris", "days": 3})


def test_seed_oss_a_literal_parameter_close_in_a_value_is_data() -> None:
    """vLLM's Seed-OSS parser ends a value at its first ``</parameter>``."""
    value = "line\n</parameter>\nmore"
    doc = f"<seed:tool_call>\n<function=write>\n<parameter=content>\n{value}\n</parameter>\n</function>\n</seed:tool_call>"
    for size in (0, 1):
        assert calls(parsed(doc, size)) == [("write", {"content": value})]


def test_internlm_split_marker_is_held_and_the_call_is_read() -> None:
    """vllm#57490: ``<|action_start|>`` split across chunks loses the call and leaks."""
    doc = 'ok <|action_start|><|plugin|>{"name": "f", "parameters": {}}<|action_end|>'
    for cut in range(3, len("ok <|action_start|><|plugin|>") + 1):
        s = callsieve.Sieve(dialects=["internlm"])
        events = s.feed(doc[:cut]) + s.feed(doc[cut:]) + s.close()
        assert texts(events) == "ok " and calls(events) == [("f", {})], cut


def test_internlm_a_second_action_is_a_second_call() -> None:
    """vLLM unpacks ``split(...)`` into two parts: a second action raises there."""
    one = '<|action_start|><|plugin|>{{"name": "{}", "parameters": {{}}}}<|action_end|>'
    doc = one.format("a") + "\n" + one.format("b")
    assert calls(parsed(doc, dialects=["internlm"])) == [("a", {}), ("b", {})]


def test_internlm_another_plugin_is_no_call() -> None:
    doc = "<|action_start|><|interpreter|>\nprint(1)<|action_end|>"
    events = parsed(doc, dialects=["internlm"])
    assert calls(events) == [] and texts(events) == doc and codes(events) == ["malformed_block"]


@pytest.mark.parametrize("dialect, open_, close", [
    ("hunyuan", "<tool_calls>", "</tool_calls>"),
    ("nemotron", "<TOOLCALL>", "</TOOLCALL>"),
    ("granite", "<|tool_call|>", ""),
])
def test_nested_arguments_brackets_and_apostrophes_in_strings(dialect: str, open_: str, close: str) -> None:
    """Hunyuan's streaming regex reads one level of ``{}``; Jamba swaps ``'`` for ``"``;
    the first ``]`` ends Phi-4-mini's and SGLang's pythonic capture."""
    args = {"q": "it's ] and } and </tool_calls>", "filter": {"a": {"b": [1, [2, {"c": "]"}]]}}}
    doc = open_ + json.dumps([{"name": "search", "arguments": args}]) + close
    for size in (0, 1, 3):
        events = parsed(doc, size, dialects=[dialect])
        assert calls(events) == [("search", args)]
        assert deltas_match(events)


def test_granite_arguments_before_the_name() -> None:
    doc = '<|tool_call|>[{"arguments": {"city": "Paris"}, "name": "get_weather"}]'
    events = parsed(doc, 1, dialects=["granite"])
    assert calls(events) == [("get_weather", {"city": "Paris"})] and deltas_match(events)


def test_granite_text_around_the_block() -> None:
    doc = 'I will call it. <|tool_call|>[{"name": "f", "arguments": {}}] Done.'
    events = parsed(doc, 1, dialects=["granite"])
    assert texts(events) == "I will call it.  Done." and calls(events) == [("f", {})]


def test_nemotron_several_blocks_and_a_lone_object() -> None:
    doc = '<TOOLCALL>{"name": "a", "arguments": {}}</TOOLCALL>\n<TOOLCALL>[{"name": "b", "arguments": {"x": 1}}]</TOOLCALL>'
    assert calls(parsed(doc, 1)) == [("a", {}), ("b", {"x": 1})]


@pytest.mark.parametrize("dialect, doc", [
    ("nemotron", '<TOOLCALL>[{"name": "f", "arguments": "{\\"a\\": [1, \\"</TOOLCALL>\\"]}"}]</TOOLCALL>'),
    ("granite4", '<tool_call>\n{"name": "f", "arguments": "{\\"a\\": [1, \\"</TOOLCALL>\\"]}"}\n</tool_call>'),
])
def test_arguments_written_as_a_json_string_are_decoded_once_and_said(dialect: str, doc: str) -> None:
    """Nemotron and Granite 4 may write ``arguments`` as a JSON-encoded string (vLLM
    passes it through verbatim): decoded once, with a Diagnostic."""
    for size in (0, 1):
        events = parsed(doc, size, dialects=[dialect])
        assert calls(events) == [("f", {"a": [1, "</TOOLCALL>"]})]
        assert codes(events) == ["arguments_as_string"] and deltas_match(events)


def test_arguments_written_as_a_string_that_holds_no_object_are_malformed() -> None:
    doc = '<TOOLCALL>[{"name": "f", "arguments": "just words"}]</TOOLCALL>'
    events = parsed(doc, dialects=["nemotron"])
    assert calls(events) == [] and codes(events) == ["malformed_block"]


def test_a_block_two_enabled_dialects_share_is_read_once() -> None:
    """ERNIE 4.5 declares Hermes's very block: with both enabled it is read once (a fork
    between two equal blocks could never decide), as hermes's; alone, as ernie45's."""
    doc = '<response>\nok</response>\n<tool_call>\n{"name": "f", "arguments": {}}\n</tool_call>'
    for enabled, dialect in ((["hermes", "ernie45"], "hermes"), (["ernie45", "hermes"], "ernie45"), (["ernie45"], "ernie45"),
                             (None, "hermes")):
        events = parsed(doc, 1, dialects=enabled)
        assert [(e.name, e.dialect) for e in events if isinstance(e, callsieve.ToolCall)] == [("f", dialect)]
        assert texts(events) == "\nok\n"
    assert texts(parsed(doc, dialects=["hermes"])) == "<response>\nok</response>\n"  # ERNIE's framing is its own


def test_lfm2_a_list_argument_does_not_end_the_calls() -> None:
    """SGLang's pythonic streaming buffers to the first ``]``: ``days=[1, 2]`` ends it."""
    doc = '<|tool_call_start|>[f(days=[1, 2], q="a]b"), g(x={"k": [3]})]<|tool_call_end|>'
    for size in (0, 1):
        events = parsed(doc, size, dialects=["lfm2"])
        assert calls(events) == [("f", {"days": [1, 2], "q": "a]b"}), ("g", {"x": {"k": [3]}})] and deltas_match(events)


def test_lfm2_json_form_names_a_known_tool() -> None:
    doc = '<|tool_call_start|>[{"name": "f", "arguments": {"a": 1}}]<|tool_call_end|>'
    tools = [{"type": "function", "function": {"name": "f", "parameters": {"properties": {"a": {"type": "integer"}}}}}]
    events = parsed(doc, dialects=["lfm2"], tools=tools)
    assert calls(events) == [("f", {"a": 1})] and codes(events) == []


def test_olmo3_a_raw_newline_in_a_string_is_one_string() -> None:
    """vLLM joins OLMo's lines: a raw newline inside a string splits the call in two."""
    doc = '<function_calls>\nwrite(text="line one\nline two")\n</function_calls>'
    events = parsed(doc, 1, dialects=["olmo3"])
    assert calls(events) == [("write", {"text": "line one\nline two"})]
    assert codes(events) == ["raw_newline_in_string"]


def test_olmo3_and_xml_share_the_function_calls_opener() -> None:
    xml = '<function_calls><invoke name="f"><parameter name="k">v</parameter></invoke></function_calls>'
    olmo = '<function_calls>\ng(k="w")\n</function_calls>'
    events = parsed(xml + olmo, 1)
    assert [(e.name, e.dialect) for e in events if isinstance(e, callsieve.ToolCall)] == [("f", "xml"), ("g", "olmo3")]


@pytest.mark.parametrize("doc, expected", [
    ('<|tool_call>call:f{a:<|"|>x <|"| y < z "q"<|"|>}<tool_call|>', {"a": 'x <|"| y < z "q"'}),
    ("<|tool_call>call:f{n:-3,x:1.5,w:hello world,b:false,e:[],o:{}}<tool_call|>",
     {"n": -3, "x": 1.5, "w": "hello world", "b": False, "e": [], "o": {}}),
    ("<|tool_call>call:f{}<tool_call|>", {}),
    ('<|tool_call>call:f{l:[1,[2,<|"|>]<|"|>],{k:v}]}<tool_call|>', {"l": [1, [2, "]"], {"k": "v"}]}),
])
def test_gemma4_values(doc: str, expected: dict[str, Any]) -> None:
    for size in (0, 1, 3):
        events = parsed(doc, size, dialects=["gemma4"])
        assert calls(events) == [("f", expected)] and deltas_match(events) and codes(events) == []


def test_gemma4_a_mention_of_the_token_is_text_and_a_call_after_it_is_read() -> None:
    doc = "The <|tool_call> token opens a call. <|tool_call>call:f{a:1}<tool_call|>"
    events = parsed(doc, 1, dialects=["gemma4"])
    assert calls(events) == [("f", {"a": 1})] and codes(events) == ["malformed_block"]
    assert texts(events) == "The <|tool_call> token opens a call. "


def test_gemma4_a_key_given_twice_releases_the_call() -> None:
    doc = '<|tool_call>call:f{a:1,a:2}<tool_call|>'
    events = parsed(doc, dialects=["gemma4"])
    assert calls(events) == [] and codes(events) == ["malformed_block"]
    assert "".join(e.raw for e in events) == doc


def test_cohere_ids_are_minted_not_the_models_repeated_ones() -> None:
    doc = EXAMPLES[[e.id for e in EXAMPLES].index("cohere_command")].doc
    first = [e.id for e in callsieve.Sieve().feed(doc) if isinstance(e, callsieve.ToolCall)]
    again = [e.id for e in callsieve.Sieve().feed(doc) if isinstance(e, callsieve.ToolCall)]
    assert len(set(first + again)) == 4 and not {"0", "1"} & set(first)


def test_gigachat_raw_control_characters_in_strings_are_read_with_a_diagnostic() -> None:
    """vLLM reads GigaChat's JSON with ``strict=False``; here too, but said."""
    doc = '<|function_call|>{"name": "note", "arguments": {"text": "a\tb\nc"}}'
    events = parsed(doc, dialects=["gigachat3"])
    assert calls(events) == [("note", {"text": "a\tb\nc"})]
    assert codes(events) == ["raw_control_character"]  # (issue 23: its own code, no type_mismatch)


def test_jamba_and_hunyuan_and_xml_share_the_tool_calls_opener() -> None:
    xml = '<tool_calls><invoke name="f"><parameter name="k">v</parameter></invoke></tool_calls>'
    arr = '<tool_calls>[{"name": "g", "arguments": {"k": "w"}}]</tool_calls>'
    events = parsed(xml + arr, 1)
    assert calls(events) == [("f", {"k": "v"}), ("g", {"k": "w"})]
    assert [e.dialect for e in events if isinstance(e, callsieve.ToolCall)] == ["xml", "hunyuan"]


def test_granite_and_hermes_share_the_tool_call_opener() -> None:
    doc = '<tool_call>\n{"name": "f", "arguments": {}}\n</tool_call><tool_call>[{"name": "g", "arguments": {}}]</tool_call>'
    events = parsed(doc, 1)
    assert calls(events) == [("f", {}), ("g", {})]
    assert [e.dialect for e in events if isinstance(e, callsieve.ToolCall)] == ["hermes", "granite"]


def test_ling3_literal_newline_after_the_name_is_read_and_said() -> None:
    doc = "<tool_call>get_weather\\n<arg_key>city</arg_key>\n<arg_value>Paris</arg_value>\n</tool_call>"
    for size in (0, 1):
        events = parsed(doc, size, dialects=["ling3"])
        assert calls(events) == [("get_weather", {"city": "Paris"})]
        assert codes(events) == ["literal_newline"]
    assert codes(parsed(doc, dialects=["ling3"], strict=True)) == ["malformed_block"]


def test_kimi_k3_a_raw_close_in_a_string_value_is_data() -> None:
    """vLLM's K3 parser cuts a string value at its first raw ``<|close|>``."""
    doc = ('<|open|>call tool="write"<|sep|><|open|>argument key="text" type="string"<|sep|>a<|close|>b <|close|>'
           'argument<|sep|><|close|>call<|sep|>')
    for size in (0, 1):
        assert calls(parsed(doc, size, dialects=["kimi_k3"])) == [("write", {"text": "a<|close|>b "})]


@pytest.mark.parametrize("mention", ["<|close|> then say so.\n", "The <|open|> token opens a channel. "])
def test_kimi_k3_a_channel_token_mentioned_in_prose_leaves_the_call_after_it(mention: str) -> None:
    """A channel header holds no other channel token: the mention is text (with a
    Diagnostic), the next ``<|open|>`` begins a new header (found by test_mention's
    property: the mention's header swallowed the call)."""
    call = '<|open|>call tool="f" index="1"<|sep|><|open|>argument key="a" type="integer"<|sep|>1<|close|>argument<|sep|><|close|>call<|sep|>'
    for size in (0, 1):
        for enabled in (["kimi_k3"], None):
            events = parsed(mention + call, size, dialects=enabled)
            assert calls(events) == [("f", {"a": 1})] and texts(events) == mention
            assert codes(events) == ["malformed_block"]


def test_kimi_k3_spaced_special_tokens_are_read() -> None:
    """With ``spaces_between_special_tokens`` on, the markers arrive as ``<|open|> call …``."""
    doc = ('<|open|> call tool="f" <|sep|><|open|> argument key="n" type="integer" <|sep|>3<|close|> argument <|sep|>'
           "<|close|> call <|sep|>")
    assert calls(parsed(doc, 1, dialects=["kimi_k3"])) == [("f", {"n": 3})]


def test_kimi_k3_a_value_that_is_not_json_stays_a_string_with_a_diagnostic() -> None:
    doc = ('<|open|>call tool="f"<|sep|><|open|>argument key="n" type="integer"<|sep|>three<|close|>argument<|sep|>'
           "<|close|>call<|sep|>")
    events = parsed(doc, dialects=["kimi_k3"])
    assert calls(events) == [("f", {"n": "three"})] and codes(events) == ["type_mismatch"]


def test_apertus_a_call_object_of_two_keys_is_malformed() -> None:
    doc = '<|tools_prefix|>[{"a": {}, "b": {}}]<|tools_suffix|>'
    events = parsed(doc, dialects=["apertus"])
    assert calls(events) == [] and codes(events) == ["malformed_block"]
    assert "".join(e.raw for e in events) == doc
    # (the call "a" was streamed before its second key: abandoned, its input in that event)
    assert [e.name for e in events if isinstance(e, callsieve.ToolCallAbandoned)] == ["a"]


def test_phi4_mini_functools_is_a_word_and_parameters_are_read() -> None:
    doc = ('myfunctools[{"name": "a", "arguments": {}}] x_functools[{"name": "b", "arguments": {}}]\n'
           'functools[{"name": "c", "parameters": {"k": 1}}]')
    for size in (0, 1):
        for enabled in (["phi4_mini"], None):
            events = parsed(doc, size, dialects=enabled)
            assert calls(events) == [("c", {"k": 1})] and codes(events) == []
            assert texts(events) == doc[: doc.index("\nfunctools") + 1]


def test_phi4_mini_a_bracket_in_an_argument_does_not_end_the_calls() -> None:
    """vLLM reads ``functools\\[(.*?)\\]``: the first ``]`` ends the array, even in a string."""
    doc = 'functools[{"name": "f", "arguments": {"q": "a]b", "l": [1, [2]]}}, {"name": "g", "arguments": {}}] Done.'
    for size in (0, 1, 3):
        events = parsed(doc, size, dialects=["phi4_mini"])
        assert calls(events) == [("f", {"q": "a]b", "l": [1, [2]]}), ("g", {})] and deltas_match(events)
        assert texts(events) == " Done."


def test_phi4_mini_between_code_spans_fed_whole() -> None:
    """Prose fed whole reads inline code span after span (issue 27); a word marker
    between two spans is the runner's, not the span reader's text."""
    doc = 'Use `a` then functools[{"name": "f", "arguments": {}}] and `b`, `c`.'
    for enabled in (["phi4_mini"], None):
        events = parsed(doc, 0, dialects=enabled)
        assert calls(events) == [("f", {})] and texts(events) == "Use `a` then  and `b`, `c`."


def test_phi4_mini_the_word_in_prose_is_text_with_a_diagnostic() -> None:
    doc = "Use the functools module: functools.partial(f, 1) binds one argument."
    for size in (0, 1):
        events = parsed(doc, size)
        assert calls(events) == [] and texts(events) == doc
        assert codes(events) == ["malformed_block", "malformed_block"]


def test_inkling_payload_key_is_args() -> None:
    doc = '<|message_model|>f<|content_invoke_tool_json|>{"name": "f", "args": {"a": [1, 2]}}<|end_message|>'
    assert calls(parsed(doc, 1, dialects=["inkling"])) == [("f", {"a": [1, 2]})]


# ---------------------------------------------------------------- docs/dialects.md
def _dialects_table() -> list[list[str]]:
    from pathlib import Path

    text = (Path(__file__).resolve().parent.parent / "docs" / "dialects.md").read_text(encoding="utf-8")
    rows = []
    for line in text.split("<!-- dialects-table", 1)[1].splitlines()[3:]:
        if not line.startswith("|"):
            break
        rows.append([c.strip() for c in re.split(r"(?<!\\)\|", line.strip().strip("|"))])
    return rows


def test_docs_dialects_table_has_every_built_in_dialect_and_each_name_resolves_to_its_row() -> None:
    from callsieve.grammar.registry import BUILTIN, lookup

    seen = set()
    for _model, dialect, vllm, sglang, _tokens in _dialects_table():
        name = dialect.strip("`")
        assert name in BUILTIN, name
        seen.add(name)
        for alias in re.findall(r"`([^`]+)`", vllm + " " + sglang):
            found = lookup(alias)
            assert found is not None and found.name == name, f"{alias!r} should resolve to {name}"
    assert seen == set(BUILTIN), f"docs/dialects.md lacks {set(BUILTIN) - seen}"


def test_docs_dialects_names_every_alias() -> None:
    from pathlib import Path

    from callsieve.grammar.registry import canonical_name

    text = (Path(__file__).resolve().parent.parent / "docs" / "dialects.md").read_text(encoding="utf-8")
    named = {canonical_name(n) for n in re.findall(r"`([^`]+)`", text)}
    assert sorted(a for a in ALIASES if a not in named) == []


def test_every_dialect_that_needs_special_tokens_says_so_in_its_docstring() -> None:
    for _model, dialect, _v, _s, tokens in _dialects_table():
        if tokens.startswith("keep"):
            name = dialect.strip("`")
            assert "skip_special_tokens=False" in (_module_of(name).__doc__ or ""), name


def _module_of(name: str) -> object:
    """The module of callsieve.grammar that declares a built-in dialect."""
    import importlib
    import pkgutil

    import callsieve.grammar as grammar
    from callsieve.grammar.registry import REGISTRY

    for info in pkgutil.iter_modules(grammar.__path__):
        mod = importlib.import_module(f"callsieve.grammar.{info.name}")
        if info.name != "registry" and any(v is REGISTRY[name] for v in vars(mod).values()):
            return mod
    raise LookupError(name)


@pytest.mark.parametrize("other", ["kimi_k3", "acme_letter"])
def test_a_marker_that_begins_with_a_letter_leaves_json_literals_whole(other: str) -> None:
    """kimi_k3 listens for ``argument<|sep|>`` after a value: ``a`` gets a character class
    of its own, and the JSON body's rules written for "any other character" must still
    take it (``false``, ``\\u00ba``, ``1e5`` lost their letters: found by the contract
    properties with every dialect enabled)."""
    from callsieve.grammar.api import Block, Dialect, JsonArgs, Marker, Call, Capture

    letter = Dialect("acme_letter", "a marker that begins with a letter", (Block(
        Marker(r"<call\s", ("<call ",)), Call(None, Capture(r"(?P<name>\w{1,32})", label="NAME"),
                                              Marker(r"fargs:", ("fargs:",)), JsonArgs(), close=None),
        Marker(r"</call>", ("</call>",))),))
    enabled = ["kimi_k2", other if other != "acme_letter" else letter]
    doc = ('<|tool_calls_section_begin|><|tool_call_begin|>functions.f:0<|tool_call_argument_begin|>'
           '{"a": false, "b": "\\u00ba", "c": [1e5, null, true]}<|tool_call_end|><|tool_calls_section_end|>')
    for size in (0, 1):
        assert calls(parsed(doc, size, dialects=enabled)) == [("f", {"a": False, "b": "º", "c": [100000.0, None, True]})]
