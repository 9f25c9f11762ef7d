"""Example tests pinning each dialect's wire format (shared/reference/dialects.md)."""

from __future__ import annotations

from typing import Any

import pytest

import callsieve
from strategies import run, texts


def tool_calls(events: list[callsieve.Event]) -> list[tuple[str, dict[str, Any]]]:
    return [(e.name, e.arguments) for e in events if isinstance(e, callsieve.ToolCall)]


def diag_codes(events: list[callsieve.Event]) -> list[str]:
    return [e.code for e in events if isinstance(e, callsieve.Diagnostic)]


WEATHER = [{"type": "function", "function": {"name": "get_weather", "parameters": {"type": "object", "properties": {
    "location": {"type": "string"}, "city": {"type": "string"}, "days": {"type": "integer"}}}}}]

# ---------------------------------------------------------------- DSML (§1)
DSML_V32 = """The user wants weather for two cities.</think>Let me check both.

<｜DSML｜function_calls>
<｜DSML｜invoke name="get_weather">
<｜DSML｜parameter name="location" string="true">杭州</｜DSML｜parameter>
<｜DSML｜parameter name="days" string="false">3</｜DSML｜parameter>
</｜DSML｜invoke>
<｜DSML｜invoke name="get_weather">
<｜DSML｜parameter name="location" string="true">北京</｜DSML｜parameter>
<｜DSML｜parameter name="days" string="false">3</｜DSML｜parameter>
</｜DSML｜invoke>
</｜DSML｜function_calls>"""


def test_dsml_v32_literal_example_in_thinking_mode() -> None:
    events = run([DSML_V32], start_in_reasoning=True)
    assert "".join(e.text for e in events if isinstance(e, callsieve.Reasoning)) == "The user wants weather for two cities."
    assert texts(events) == "Let me check both.\n\n"
    assert tool_calls(events) == [("get_weather", {"location": "杭州", "days": 3}), ("get_weather", {"location": "北京", "days": 3})]
    ids = [e.index for e in events if isinstance(e, callsieve.ToolCall)]
    assert ids == [0, 1]


@pytest.mark.parametrize(
    "open_, close_",
    [
        ("<｜DSML｜tool_calls>", "</｜DSML｜tool_calls>"),  # V4
        ("<｜｜DSML｜｜tool_calls>", "</｜｜DSML｜｜tool_calls>"),  # doubled bars
        ("<｜｜DSML｜｜ calls>", "</｜｜DSML｜｜ calls>"),  # space and short block name
        ("<|DSML|tool_calls>", "</|DSML|tool_calls>"),  # ASCII bars
        ("<‖DSML‖tool_calls>", "</‖DSML‖tool_calls>"),  # U+2016
        ("＜｜DSML｜tool_calls>", "</｜DSML｜tool_calls>"),  # fullwidth <
        ("<｜｜DSML｜｜tool_calls>", "</|EPSE|tool_calls>"),  # hybrid close drifting to EPSE
    ],
)
def test_dsml_block_variants(open_: str, close_: str) -> None:
    bar_open = open_[: open_.index("DSML") + 6].replace("tool_calls", "")
    doc = (
        f"ok {open_}\n<｜｜DSML｜｜ invoke name=\"pwsh\">\n<|DSML|parameter name=\"cmd\" string=\"true\">dir</｜｜DSML｜｜ parameter>\n"
        f"</|EPSE|invoke>\n{close_}"
    )
    assert bar_open  # the variant names a DSML prefix
    events = run(list(doc))
    assert texts(events) == "ok "
    assert tool_calls(events) == [("pwsh", {"cmd": "dir"})]


def test_dsml_cdata_value_is_raw() -> None:
    doc = '<｜｜DSML｜｜tool_calls><｜｜DSML｜｜invoke name="w"><｜｜DSML｜｜parameter name="c" string="true"><![CDATA[a</｜｜DSML｜｜parameter>b]]></｜｜DSML｜｜parameter></｜｜DSML｜｜invoke></｜｜DSML｜｜tool_calls>'
    assert tool_calls(run([doc])) == [("w", {"c": "a</｜｜DSML｜｜parameter>b"})]


def test_dsml_string_false_invalid_json_stays_a_string_with_a_diagnostic() -> None:
    doc = '<｜DSML｜tool_calls><｜DSML｜invoke name="f"><｜DSML｜parameter name="n" string="false">three</｜DSML｜parameter></｜DSML｜invoke></｜DSML｜tool_calls>'
    events = run([doc])
    assert tool_calls(events) == [("f", {"n": "three"})]
    assert diag_codes(events) == ["type_mismatch"]


def test_dsml_string_true_value_typed_by_schema() -> None:
    doc = '<｜DSML｜tool_calls><｜DSML｜invoke name="get_weather"><｜DSML｜parameter name="days" string="true">5</｜DSML｜parameter></｜DSML｜invoke></｜DSML｜tool_calls>'
    assert tool_calls(run([doc], tools=WEATHER)) == [("get_weather", {"days": 5})]


# ---------------------------------------------------------------- xml (§10)
def test_xml_cdata_raw_and_entities_unescaped_outside_cdata() -> None:
    doc = (
        '<tool_calls>\n  <invoke name="write">\n'
        '    <parameter name="a">x &lt;b&gt; &amp;amp; &#65;&#x42;</parameter>\n'
        '    <parameter name="b"><![CDATA[&lt; stays </parameter>]]> and &amp;</parameter>\n'
        "  </invoke>\n</tool_calls>"
    )
    for chunk in (1, 2, 5, len(doc)):
        events = run([doc[i : i + chunk] for i in range(0, len(doc), chunk)])
        assert tool_calls(events) == [("write", {"a": "x <b> &amp; AB", "b": "&lt; stays </parameter> and &"})]


def test_xml_function_calls_block_name() -> None:
    doc = '<function_calls><invoke name="f"><parameter name="k">v</parameter></invoke></function_calls>'
    assert tool_calls(run([doc], dialects=["xml"])) == [("f", {"k": "v"})]


# ---------------------------------------------------------------- qwen3_coder (§4)
QWEN = """I'll create the file.
<tool_call>
<function=write_file>
<parameter=path>
src/a.py
</parameter>
<parameter=content>
def f():
    return 1
</parameter>
<parameter=overwrite>
true
</parameter>
</function>
</tool_call>
"""


def test_qwen3_coder_example_strips_one_newline_each_side() -> None:
    events = run([QWEN])
    assert texts(events) == "I'll create the file.\n\n"
    assert tool_calls(events) == [("write_file", {"path": "src/a.py", "content": "def f():\n    return 1", "overwrite": "true"})]


def test_qwen3_coder_typed_by_schema() -> None:
    tools = [{"type": "function", "function": {"name": "write_file", "parameters": {"properties": {
        "path": {"type": "string"}, "content": {"type": "string"}, "overwrite": {"type": "boolean"}}}}}]
    assert tool_calls(run([QWEN], tools=tools))[0][1]["overwrite"] is True


def test_qwen3_coder_keeps_extra_newlines() -> None:
    doc = "<tool_call>\n<function=f>\n<parameter=a>\n\n\nx\n\n\n</parameter>\n</function>\n</tool_call>"
    assert tool_calls(run(list(doc))) == [("f", {"a": "\n\nx\n\n"})]


# ---------------------------------------------------------------- minimax_m2 (§8)
MINIMAX = """<think>
Check weather.
</think>

Let me check.
<minimax:tool_call>
<invoke name="get_weather">
<parameter name="city">Paris</parameter>
<parameter name="days">3</parameter>
</invoke>
</minimax:tool_call>"""


def test_minimax_example_typed_by_schema() -> None:
    events = run([MINIMAX], tools=WEATHER)
    assert "".join(e.text for e in events if isinstance(e, callsieve.Reasoning)) == "\nCheck weather.\n"
    assert texts(events) == "\n\nLet me check.\n"
    assert tool_calls(events) == [("get_weather", {"city": "Paris", "days": 3})]


def test_minimax_without_schema_values_stay_strings() -> None:
    assert tool_calls(run([MINIMAX]))[0][1] == {"city": "Paris", "days": "3"}


# ---------------------------------------------------------------- schema typing
@pytest.mark.parametrize(
    "schema, raw, expected, problem",
    [
        ({"type": "integer"}, " 42 ", 42, False),
        ({"type": "number"}, "2.5", 2.5, False),
        ({"type": "number"}, "7", 7, False),
        ({"type": "boolean"}, "False", False, False),
        ({"type": "boolean"}, "yes", "yes", True),
        ({"type": "null"}, "null", None, False),
        ({"type": "object"}, '{"a": [1]}', {"a": [1]}, False),
        ({"type": "array"}, "[1, 2]", [1, 2], False),
        ({"type": ["integer", "null"]}, "null", None, False),
        ({"anyOf": [{"type": "integer"}, {"type": "string"}]}, "x1", "x1", False),
        ({"anyOf": [{"type": "integer"}, {"type": "string"}]}, "12", 12, False),
        ({"type": "integer"}, "twelve", "twelve", True),
        ({"type": "string"}, "null", "null", False),
    ],
)
def test_values_typed_by_schema(schema: dict[str, Any], raw: str, expected: Any, problem: bool) -> None:
    tools = [{"type": "function", "function": {"name": "f", "parameters": {"properties": {"v": schema}}}}]
    doc = f'<minimax:tool_call><invoke name="f"><parameter name="v">{raw}</parameter></invoke></minimax:tool_call>'
    events = run([doc], tools=tools)
    assert tool_calls(events) == [("f", {"v": expected})]
    assert diag_codes(events) == (["type_mismatch"] if problem else [])
    (call,) = [e for e in events if isinstance(e, callsieve.ToolCall)]
    assert "".join(e.arguments for e in events if isinstance(e, callsieve.ToolCallDelta)) == call.arguments_json


@pytest.mark.parametrize("raw", ["NaN", "Infinity", "-Infinity", "1e999", "[1, NaN]"])
def test_dsml_json_value_that_is_not_strict_json_stays_a_string(raw: str) -> None:
    doc = f'<｜DSML｜tool_calls><｜DSML｜invoke name="f"><｜DSML｜parameter name="x" string="false">{raw}</｜DSML｜parameter></｜DSML｜invoke></｜DSML｜tool_calls>'
    events = run([doc])
    (call,) = [e for e in events if isinstance(e, callsieve.ToolCall)]
    assert call.arguments == {"x": raw}
    import json
    assert json.loads(call.arguments_json, parse_constant=lambda c: pytest.fail(c)) == {"x": raw}
    assert diag_codes(events) == ["type_mismatch"]


# ---------------------------------------------------------------- DSML without its block
BARE = '<｜DSML｜invoke name="f">\n<｜DSML｜parameter name="k" string="true">v</｜DSML｜parameter>\n</｜DSML｜invoke>'


@pytest.mark.parametrize(
    "doc, text",
    [
        ("Sure. " + BARE, "Sure. "),  # ends the stream
        ("Sure.\n" + BARE + "\n\nDone.", "Sure.\n\n\nDone."),  # prose follows: its spaces are prose again
        (BARE + "\n" + BARE, ""),  # two bare calls: one implied block
        (BARE + "\n</｜DSML｜tool_calls>", ""),  # the opening wrapper was lost
        (BARE + " <b>bold</b>", " <b>bold</b>"),  # a tag that is not grammar ends it
    ],
)
def test_dsml_bare_invoke_is_a_call(doc: str, text: str) -> None:
    """sglang#40236: an invoke with no block around it leaked as content."""
    for chunk in (1, 3, len(doc)):
        events = run([doc[i : i + chunk] for i in range(0, len(doc), chunk)])
        assert texts(events) == text
        assert tool_calls(events) == [("f", {"k": "v"})] * doc.count("<｜DSML｜invoke")
        assert "".join(e.raw for e in events) == doc


def test_dsml_bare_invoke_unterminated_is_released_as_text() -> None:
    doc = 'x <｜DSML｜invoke name="f">\n<｜DSML｜parameter name="k" string="true">v'
    events = run([doc])
    assert diag_codes(events) == ["unterminated_block"]
    # f had started: abandoned, shown once
    assert texts(events) == "x " and [e.raw for e in events if isinstance(e, callsieve.ToolCallAbandoned)] == [doc[2:]]


def test_bare_invoke_only_where_the_dialect_allows_it() -> None:
    doc = '<invoke name="f">\n<parameter name="k">v</parameter>\n</invoke>'
    assert tool_calls(run([doc])) == [] and texts(run([doc])) == doc
