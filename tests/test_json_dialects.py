"""The JSON-body and special-token dialects: their reference examples (shared/reference/
dialects.md §2, §3, §5, §7), whole and one character per chunk, the peers' known bugs,
and the strict JSON body: never a guessed call, canonical streamed arguments."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given, strategies as st

import callsieve
from callsieve.events import merged
from strategies import chunks, run, parsed, calls, texts, codes

B, S = "\uff5c", "\u2581"
CALLS, CALL, SEP = f"<{B}tool{S}calls{S}begin{B}>", f"<{B}tool{S}call{S}begin{B}>", f"<{B}tool{S}sep{B}>"
CALL_END, CALLS_END = f"<{B}tool{S}call{S}end{B}>", f"<{B}tool{S}calls{S}end{B}>"
EOS = f"<{B}end{S}of{S}sentence{B}>"


def deltas_match(events: list[callsieve.Event]) -> bool:
    done = {e.index: e.arguments_json for e in events if isinstance(e, callsieve.ToolCall)}
    got: dict[int, str] = {}
    for e in events:
        if isinstance(e, callsieve.ToolCallDelta):
            got[e.index] = got.get(e.index, "") + e.arguments
    return all(got.get(i) == j for i, j in done.items())


HERMES = (
    "<think>\nNeed the weather.\n</think>\n\n"
    '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris", "unit": "c"}}\n</tool_call>\n'
    '<tool_call>\n{"name": "get_time", "arguments": {"tz": "Europe/Paris"}}\n</tool_call>'
)
KIMI = (
    "<think>Need weather for both.</think>I'll look these up.<|tool_calls_section_begin|><|tool_call_begin|>"
    'functions.get_weather:0<|tool_call_argument_begin|>{"city": "Beijing"}<|tool_call_end|><|tool_call_begin|>'
    'functions.get_weather:1<|tool_call_argument_begin|>{"city": "Shanghai"}<|tool_call_end|><|tool_calls_section_end|>'
)
V3 = (
    f"{CALLS}{CALL}function{SEP}get_weather\n```json\n{{\"location\": \"Tokyo\"}}\n```{CALL_END}\n"
    f"{CALL}function{SEP}get_weather\n```json\n{{\"location\": \"Paris\"}}\n```{CALL_END}{CALLS_END}"
)
V31 = (
    f'{CALLS}{CALL}get_current_weather{SEP}{{"location": "Tokyo"}}{CALL_END}'
    f'{CALL}get_current_weather{SEP}{{"location": "Paris"}}{CALL_END}{CALLS_END}'
)

EXAMPLES = [
    ("hermes", HERMES, "\n\n\n", [("get_weather", {"city": "Paris", "unit": "c"}), ("get_time", {"tz": "Europe/Paris"})]),
    ("kimi_k2", KIMI, "I'll look these up.", [("get_weather", {"city": "Beijing"}), ("get_weather", {"city": "Shanghai"})]),
    ("deepseek_v3", V3, "", [("get_weather", {"location": "Tokyo"}), ("get_weather", {"location": "Paris"})]),
    ("deepseek_v31", V31, "", [("get_current_weather", {"location": "Tokyo"}), ("get_current_weather", {"location": "Paris"})]),
]


@pytest.mark.parametrize("dialect, doc, text, expected", EXAMPLES, ids=[e[0] for e in EXAMPLES])
@pytest.mark.parametrize("size", [0, 1, 5])
@pytest.mark.parametrize("enabled", ["own", "all"])
def test_reference_examples_whole_and_in_pieces(dialect: str, doc: str, text: str, expected: list[Any], size: int, enabled: str) -> None:
    events = parsed(doc, size, dialects=[dialect] if enabled == "own" else None)
    assert calls(events) == expected
    assert texts(events) == text
    assert codes(events) == []
    assert "".join(e.raw for e in events) == doc
    assert deltas_match(events)
    assert {e.dialect for e in events if isinstance(e, callsieve.ToolCall)} == {dialect}


def test_kimi_ids_are_the_wire_ids_and_names_may_hold_dashes_and_dots() -> None:
    doc = (
        "<|tool_calls_section_begin|>\n<|tool_call_begin|> functions.mcp.read-file:7 <|tool_call_argument_begin|>{}"
        "<|tool_call_end|>\n<|tool_calls_section_end|>"
    )
    events = parsed(doc, 1)
    (call,) = [e for e in events if isinstance(e, callsieve.ToolCall)]
    assert (call.name, call.id, call.arguments) == ("mcp.read-file", "functions.mcp.read-file:7", {})
    (start,) = [e for e in events if isinstance(e, callsieve.ToolCallStart)]
    assert start.id == "functions.mcp.read-file:7"


def test_hermes_close_inside_a_json_string_is_data() -> None:
    """sglang PR #28698: a literal </tool_call> inside a JSON string value."""
    content = 'print("</tool_call>")\n<tool_call>'
    doc = "<tool_call>" + json.dumps({"name": "write", "arguments": {"content": content}}) + "</tool_call>after"
    for size in (0, 1, 3):
        events = parsed(doc, size)
        assert calls(events) == [("write", {"content": content})]
        assert texts(events) == "after"


@pytest.mark.parametrize("order", ["name-first", "arguments-first", "parameters"])
def test_hermes_key_order_and_the_parameters_spelling(order: str) -> None:
    args = {"q": "caf\u00e9 \U0001F600", "n": [1, 2.5, None, True], "o": {"x": {"y": "z"}}}
    body = {
        "name-first": {"name": "search", "arguments": args},
        "arguments-first": {"arguments": args, "extra": [1, {"a": 2}], "name": "search"},
        "parameters": {"name": "search", "parameters": args},
    }[order]
    doc = "<tool_call>" + json.dumps(body) + "</tool_call>"
    for size in (0, 1, 2):
        events = parsed(doc, size)
        assert calls(events) == [("search", args)]
        assert deltas_match(events)
        starts = [i for i, e in enumerate(events) if isinstance(e, callsieve.ToolCallStart)]
        first_delta = next(i for i, e in enumerate(events) if isinstance(e, callsieve.ToolCallDelta))
        assert starts and starts[0] < first_delta, "a fragment never precedes its ToolCallStart"


def test_canonical_deltas_from_escapes_numbers_and_spacing() -> None:
    wire = '{"name":"f","arguments":{ "s" : "a\\u00fcb\\/\\n\\ud83d\\ude00\\ud800x" , "n":[2.50,1E2,-0,10] ,"t":true}}'
    doc = "<tool_call>" + wire + "</tool_call>"
    events = parsed(doc, 1)
    (c,) = [e for e in events if isinstance(e, callsieve.ToolCall)]
    # (the lone \ud800 is read as U+FFFD, with a Diagnostic: text holding it could not
    # be sent as UTF-8)
    want = json.loads(wire.replace("\\ud800", "\\ufffd"))["arguments"]
    assert c.arguments == want
    joined = "".join(e.arguments for e in events if isinstance(e, callsieve.ToolCallDelta))
    assert joined == c.arguments_json == json.dumps(want, ensure_ascii=False)
    joined.encode("utf-8")
    assert [e.code for e in events if isinstance(e, callsieve.Diagnostic)] == ["lone_surrogate"]


@pytest.mark.parametrize(
    "body, why",
    [
        ('{"name": "f", "arguments": {}} trailing', "unexpected"),
        ('{"name": "f", "arguments": {"a": 1, "a": 2}}', "duplicate key 'a'"),
        ('{"name": "f", "arguments": [1, 2]}', "not a JSON object"),
        ('{"name": "f", "arguments": "[1]"}', "a string that holds no JSON object"),
        ('{"name": "f", "arguments": "{\\"a\\": "}', "a string that holds no JSON object"),
        ('{"arguments": {"a": 1}}', "no name"),
        ('{"name": "f", "arguments": {"a": 01}}', "not a JSON number"),
        ('{"name": "f", "arguments": {"a": 1e999}}', "not a finite number"),
        ('{"name": "f", "arguments": {"a": tru}}', "not a JSON literal"),
        ('{"name": "f" "arguments": {}}', "unexpected"),
        ('{"name": "f", "arguments": {},}', "unexpected"),
        ('{"name": 5, "arguments": {}}', "name is not a string"),
    ],
)
def test_a_body_that_is_not_one_valid_json_call_is_never_a_guessed_call(body: str, why: str) -> None:
    doc = "<tool_call>" + body + "</tool_call>"
    for size in (0, 1):
        events = parsed(doc, size, dialects=["hermes"])
        assert calls(events) == []
        (d,) = [e for e in events if isinstance(e, callsieve.Diagnostic)]
        assert d.code == "malformed_block" and why in d.message
        gone = [e for e in events if isinstance(e, callsieve.ToolCallAbandoned)]
        if [e for e in events if isinstance(e, callsieve.ToolCallStart)]:
            # The call had started (its name was read): shown once, the markup read up
            # to where the body failed is the abandoned call's, the rest is prose again.
            (g,) = gone
            assert g.name == "f" and doc.startswith(g.raw) and texts(events) == doc[len(g.raw):]
            assert not texts(events).startswith("<tool_call>")
        else:
            assert gone == [] and texts(events) == doc


def test_deep_nesting_neither_raises_nor_slows_down() -> None:
    depth = 100_000
    doc = '<tool_call>{"name": "f", "arguments": {"a": ' + "[" * depth + "]" * depth + "}}</tool_call>"
    events = parsed(doc)
    assert calls(events) == []
    assert "".join(e.raw for e in events) == doc
    (d,) = [e for e in events if isinstance(e, callsieve.Diagnostic)]
    assert "nested deeper than" in d.message


def test_json_values_not_fitting_the_schema_get_a_diagnostic_not_a_rewrite() -> None:
    tools = [{"type": "function", "function": {"name": "f", "parameters": {"properties": {"n": {"type": "integer"}}}}}]
    events = parsed('<tool_call>{"name": "f", "arguments": {"n": "3"}}</tool_call>', tools=tools)
    assert calls(events) == [("f", {"n": "3"})]
    assert codes(events) == ["type_mismatch"]


def test_v3_pretty_printed_arguments_parse() -> None:
    """vLLM's V3 regex has no DOTALL: a multi-line JSON body matches nothing there."""
    args = {"location": "Tokyo", "opts": {"unit": "c"}}
    doc = f"{CALLS}{CALL}function{SEP}get_weather\n```json\n{json.dumps(args, indent=2)}\n```{CALL_END}{CALLS_END}"
    assert calls(parsed(doc, 1)) == [("get_weather", args)]


def test_v3_and_v31_are_told_apart_by_what_follows_the_separator() -> None:
    """A V3.1 tool literally named "function" is still V3.1: after the separator comes JSON."""
    doc = f'{CALLS}{CALL}function{SEP}{{"a": 1}}{CALL_END}{CALLS_END}'
    events = parsed(doc, 1)
    assert [(e.dialect, e.name) for e in events if isinstance(e, callsieve.ToolCall)] == [("deepseek_v31", "function")]


def test_a_shared_opener_reads_qwen3_coder_and_hermes_in_one_stream() -> None:
    qwen = "<tool_call>\n<function=write>\n<parameter=path>\na.py\n</parameter>\n</function>\n</tool_call>"
    herm = '<tool_call>\n{"name": "read", "arguments": {"path": "b.py"}}\n</tool_call>'
    doc = "A " + qwen + " B " + herm + " C"
    for size in (0, 1, 4):
        events = parsed(doc, size)
        assert [(e.dialect, e.name) for e in events if isinstance(e, callsieve.ToolCall)] == [
            ("qwen3_coder", "write"),
            ("hermes", "read"),
        ]
        assert texts(events) == "A  B  C"


# ---------------------------------------------------------------- the delta property
JSON_LEAF = st.one_of(
    st.integers(-10**12, 10**12),
    st.floats(allow_nan=False, allow_infinity=False, width=64),
    st.booleans(),
    st.none(),
    st.text(st.characters(blacklist_categories=("Cs",)), max_size=8),
    st.sampled_from(["</tool_call>", "<tool_call>", '"', "\\", "\n", "\u2028", "<|tool_call_end|>"]),
)
JSON_ARGS = st.dictionaries(
    st.text(max_size=5),
    st.recursive(JSON_LEAF, lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=3), inner, max_size=3), max_leaves=8),
    max_size=4,
)


@given(st.data())
def test_deltas_are_the_canonical_arguments_under_any_key_order_escape_and_chunking(data: st.DataObject) -> None:
    args = data.draw(JSON_ARGS)
    dialect = data.draw(st.sampled_from(["hermes", "kimi_k2", "deepseek_v31", "deepseek_v3"]))
    ascii_ = data.draw(st.booleans())
    spaced = data.draw(st.sampled_from([None, 1, 2]))
    wire = json.dumps(args, ensure_ascii=ascii_, indent=spaced)
    if dialect == "hermes":
        first = data.draw(st.booleans())
        inner = f'"arguments": {wire}'
        body = "{" + (f'"name": "f", {inner}' if first else f'{inner}, "name": "f"') + "}"
        doc = f"<tool_call>\n{body}\n</tool_call>"
    elif dialect == "kimi_k2":
        doc = f"<|tool_calls_section_begin|><|tool_call_begin|>functions.f:0<|tool_call_argument_begin|>{wire}<|tool_call_end|><|tool_calls_section_end|>"
    elif dialect == "deepseek_v31":
        doc = f"{CALLS}{CALL}f{SEP}{wire}{CALL_END}{CALLS_END}"
    else:
        doc = f"{CALLS}{CALL}function{SEP}f\n```json\n{wire}\n```{CALL_END}{CALLS_END}"
    events = run(data.draw(chunks(doc)))
    assert calls(events) == [("f", args)]
    joined = "".join(e.arguments for e in events if isinstance(e, callsieve.ToolCallDelta))
    assert joined == json.dumps(args, ensure_ascii=False)
    assert merged(events) == merged(run([doc]))


# ---------------------------------------------------------------- mistral
MISTRAL = [
    ("v3 array", '[TOOL_CALLS][{"name": "get_weather", "arguments": {"city": "Zürich"}, "id": "abcDEF123"}, '
     '{"name": "get_weather", "arguments": {"city": "Bern"}, "id": "xyzXYZ789"}]</s>', ["abcDEF123", "xyzXYZ789"], "</s>"),
    ("v3 spm space", '[TOOL_CALLS] [{"name": "get_weather", "arguments": {"city": "Zürich"}, "id": "abcDEF123"}]', ["abcDEF123"], ""),
    ("v11 ids", '[TOOL_CALLS]get_weather[CALL_ID]abcDEF123[ARGS]{"city": "Zürich"}[TOOL_CALLS]get_weather[CALL_ID]xyzXYZ789'
     '[ARGS]{"city": "Bern"}</s>', ["abcDEF123", "xyzXYZ789"], "</s>"),
    ("v13 no ids", '[TOOL_CALLS]get_weather[ARGS]{"city": "Zürich"}[TOOL_CALLS]get_weather[ARGS]{"city": "Bern"}', None, ""),
]


@pytest.mark.parametrize("name, doc, ids, after", MISTRAL, ids=[m[0] for m in MISTRAL])
@pytest.mark.parametrize("size", [0, 1, 3])
def test_mistral_forms_keep_wire_ids_and_end_where_the_grammar_stops(name: str, doc: str, ids: list[str] | None, after: str, size: int) -> None:
    events = parsed("Checking. " + doc, size)
    got = [e for e in events if isinstance(e, callsieve.ToolCall)]
    assert [(c.name, c.arguments["city"]) for c in got] == [("get_weather", "Zürich"), ("get_weather", "Bern")][: len(got)]
    assert len(got) == (1 if "spm" in name else 2)
    if ids is not None:
        assert [c.id for c in got] == ids
        assert [e.id for e in events if isinstance(e, callsieve.ToolCallStart)] == ids
    assert texts(events) == "Checking. " + after
    assert deltas_match(events)
    assert codes(events) == []


def test_mistral_markup_in_prose_is_text_and_a_link_is_not_a_marker() -> None:
    doc = "See [the docs](https://x.y) and `[TOOL_CALLS]` in code; [TOOL_CALLS] alone is released."
    events = parsed(doc, 1)
    # (issue 24, item 9: the [TOOL_CALLS] of a block that failed is framing, in raw only;
    # strict, text)
    assert texts(events) == doc.replace("; [TOOL_CALLS]", "; ")
    assert calls(events) == []
    assert texts(parsed(doc, 1, strict=True)) == doc


# ---------------------------------------------------------------- issue 23: total and linear on any JSON
# Issue 21, item 4: arguments written as a JSON-encoded string (vLLM-style, Nemotron,
# Granite 4) are decoded once, whole; nothing of the string is streamed before.
@pytest.mark.parametrize("strict", [False, True])
@pytest.mark.parametrize("size", [0, 1, 3])
def test_arguments_as_a_json_string_are_decoded_once_with_a_diagnostic(size: int, strict: bool) -> None:
    doc = 'Hi <tool_call>{"name": "f", "arguments": "{\\"a\\": [1, \\"x\\"], \\"b\\": {\\"c\\": null}}"}</tool_call>'
    events = parsed(doc, size, dialects=["hermes"], strict=strict)
    assert calls(events) == [("f", {"a": [1, "x"], "b": {"c": None}})]
    deltas = [e.arguments for e in events if isinstance(e, callsieve.ToolCallDelta)]
    assert "".join(deltas) == '{"a": [1, "x"], "b": {"c": null}}'
    # never a fragment of the string as written (no character-by-character stream)
    assert not any("\\" in d for d in deltas)
    assert [e.code for e in events if isinstance(e, callsieve.Diagnostic)] == ["arguments_as_string"]
    assert texts(events) == "Hi "


@pytest.mark.parametrize("size", [0, 1, 3])
def test_arguments_as_a_string_that_holds_no_object_is_malformed_and_never_streamed(size: int) -> None:
    for inner in ('"[1, 2]"', '"not json"', '"{\\"a\\": 1"', '"' + "[" * 300 + "]" * 300 + '"'):
        doc = '<tool_call>{"name": "f", "arguments": ' + inner + "}</tool_call>"
        events = parsed(doc, size, dialects=["hermes"])
        assert calls(events) == []
        assert "".join(e.arguments for e in events if isinstance(e, callsieve.ToolCallDelta)) == ""
        (d,) = [e for e in events if isinstance(e, callsieve.Diagnostic)]
        assert d.code == "malformed_block" and "holds no JSON object" in d.message


@pytest.mark.parametrize("runner", ["compiled", "reference"])
@pytest.mark.parametrize("size", [0, 1, 7])
def test_an_integer_past_pythons_digit_limit_is_malformed_never_a_value_error(size: int, runner: str) -> None:
    import sys

    digits = sys.get_int_max_str_digits() + 1
    for doc in ('<tool_call>{"name": "f", "arguments": {"a": ' + "7" * digits + "}}</tool_call>",
                '<tool_call>{"name": "f", "arguments": {"a": [1, -' + "7" * digits + "]}}</tool_call>"):
        events = parsed(doc, size, dialects=["hermes"], runner=runner)
        assert calls(events) == [] and "".join(e.raw for e in events) == doc
        (d,) = [e for e in events if isinstance(e, callsieve.Diagnostic)]
        assert d.code == "malformed_block" and f"{digits} digits" in d.message
    # at the limit it is a number, as written
    doc = '<tool_call>{"name": "f", "arguments": {"a": ' + "7" * (digits - 1) + "}}</tool_call>"
    (c,) = [e for e in parsed(doc, size, dialects=["hermes"], runner=runner) if isinstance(e, callsieve.ToolCall)]
    assert c.arguments == {"a": int("7" * (digits - 1))}


@pytest.mark.parametrize("strict", [False, True])
@pytest.mark.parametrize("size", [0, 1, 5])
def test_lone_surrogates_and_raw_control_characters_are_tolerances_never_type_mismatches(size: int, strict: bool) -> None:
    for value, code in (('"a\\ud83db"', "lone_surrogate"), ('"a\\udc00b"', "lone_surrogate"), ('"a\\ud83d"', "lone_surrogate"),
                        ('"a\tb"', "raw_control_character"), ('"a\x01b"', "raw_control_character")):
        doc = '<tool_call>{"name": "f", "arguments": {"k": ' + value + "}}</tool_call>"
        events = parsed(doc, size, dialects=["hermes"], strict=strict)
        joined = "".join(e.arguments for e in events if isinstance(e, callsieve.ToolCallDelta))
        joined.encode("utf-8")  # an OpenAI chunk can carry every fragment
        if strict:
            assert calls(events) == [] and codes(events) == ["malformed_block"]
        else:
            ((_name, args),) = calls(events)
            assert codes(events) == [code]
            if code == "lone_surrogate":
                assert "\ufffd" in args["k"] and json.loads(joined) == args
            else:
                assert args["k"] == json.loads(value, strict=False)

