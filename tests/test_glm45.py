"""GLM-4.5/4.6 and GLM-4.7/GLM-5 (shared/reference/dialects.md §6): the reference
examples whole and one character per chunk, newline and compact forms, zero-argument
calls, a literal ``</arg_value>`` kept as data, value typing with and without a schema,
GLM beside qwen3_coder and hermes behind the shared ``<tool_call>``, truncated streams."""

from __future__ import annotations

import json
import re
from typing import Any

import pytest
from hypothesis import given, strategies as st

import callsieve
from callsieve.events import merged
from callsieve.grammar import REGISTRY
from strategies import call_of, chunks, run, parsed, calls, texts, reasoning_text as reasoning, codes, heredocs_said, released

GLM = REGISTRY["glm45"]


def deltas(events: list[callsieve.Event], index: int) -> list[str]:
    return [e.arguments for e in events if isinstance(e, callsieve.ToolCallDelta) and e.index == index]


def deltas_match(events: list[callsieve.Event]) -> bool:
    done = [e for e in events if isinstance(e, callsieve.ToolCall)]
    return all("".join(deltas(events, c.index)) == c.arguments_json for c in done)


def tools(**props: dict[str, Any]) -> list[dict[str, Any]]:
    return [{"type": "function", "function": {"name": "f", "parameters": {"type": "object", "properties": props}}}]


# ---------------------------------------------------------------- the reference examples
GLM45 = """<think>I should look it up.</think>
Let me check.
<tool_call>get_weather
<arg_key>city</arg_key>
<arg_value>北京</arg_value>
<arg_key>days</arg_key>
<arg_value>3</arg_value>
</tool_call>"""
GLM47 = (
    "<tool_call>get_weather<arg_key>city</arg_key><arg_value>北京</arg_value><arg_key>date</arg_key>"
    "<arg_value>2024-06-27</arg_value></tool_call><tool_call>get_weather<arg_key>city</arg_key>"
    "<arg_value>上海</arg_value></tool_call>"
)

EXAMPLES = [
    ("glm45-newlines", GLM45, "I should look it up.", "\nLet me check.\n", [("get_weather", {"city": "北京", "days": 3})]),
    ("glm47-compact", GLM47, "", "", [("get_weather", {"city": "北京", "date": "2024-06-27"}), ("get_weather", {"city": "上海"})]),
]


@pytest.mark.parametrize("name, doc, thought, text, expected", EXAMPLES, ids=[e[0] for e in EXAMPLES])
@pytest.mark.parametrize("size", [0, 1, 5])
@pytest.mark.parametrize("enabled", ["own", "all"])
def test_reference_examples_whole_and_in_pieces(name: str, doc: str, thought: str, text: str, expected: list[Any],
                                                 size: int, enabled: str) -> None:
    events = parsed(doc, size, dialects=["glm45"] if enabled == "own" else None)
    assert calls(events) == expected
    assert reasoning(events) == thought
    assert texts(events) == text
    assert codes(events) == []
    assert "".join(e.raw for e in events) == doc
    assert deltas_match(events)
    assert {e.dialect for e in events if isinstance(e, callsieve.ToolCall)} == {"glm45"}


def test_glm47_output_starts_inside_reasoning() -> None:
    """GLM-4.7's prompt ends with ``<think>``: the output holds only the close."""
    doc = "Need the weather.</think>Checking." + GLM47
    for size in (0, 1):
        events = parsed(doc, size, start_in_reasoning=True)
        assert reasoning(events) == "Need the weather."
        assert texts(events) == "Checking."
        assert [n for n, _ in calls(events)] == ["get_weather", "get_weather"]


def test_the_newline_and_compact_forms_of_one_call_are_the_same_call() -> None:
    newline = "<tool_call>write\n<arg_key>path</arg_key>\n<arg_value>a.py</arg_value>\n</tool_call>"
    compact = newline.replace("\n", "")
    assert newline != compact
    for size in (0, 1):
        assert calls(parsed(newline, size)) == calls(parsed(compact, size)) == [("write", {"path": "a.py"})]


# ---------------------------------------------------------------- names
@pytest.mark.parametrize("doc", ["<tool_call>get_time</tool_call>", "<tool_call>get_time\n</tool_call>",
                                 "<tool_call>get_time </tool_call>"])
def test_a_zero_argument_call(doc: str) -> None:
    for size in (0, 1):
        for dialects in (["glm45"], None):
            events = parsed("Time? " + doc + " ok", size, dialects=dialects)
            assert calls(events) == [("get_time", {})]
            assert texts(events) == "Time?  ok"
            (call,) = [e for e in events if isinstance(e, callsieve.ToolCall)]
            assert call.arguments_json == "{}" and "".join(deltas(events, call.index)) == "{}"


@pytest.mark.parametrize("name", ["mcp.read-file", "0day", "search_v2", "é_tool"])
def test_names_beginning_with_any_name_character_are_glm(name: str) -> None:
    doc = f"<tool_call>{name}<arg_key>q</arg_key><arg_value>x</arg_value></tool_call>"
    assert calls(parsed(doc, 1)) == [(name, {"q": "x"})]


@pytest.mark.parametrize("doc", ["<tool_call>\nget_time\n</tool_call>", "<tool_call> get_time</tool_call>"])
def test_a_name_not_right_after_the_opener_is_no_glm_call(doc: str) -> None:
    """The template writes the name right after ``<tool_call>``; a word after a space
    or on the next line is not a call (released as text with a Diagnostic, never
    guessed)."""
    for size in (0, 1):
        for dialects in (["glm45"], None):
            events = parsed(doc, size, dialects=dialects)
            assert calls(events) == [] and texts(events) == doc
            assert codes(events) == ["malformed_block"]


def test_keys_may_hold_spaces_inside_and_lose_them_around() -> None:
    doc = "<tool_call>f\n<arg_key> file path </arg_key>\n<arg_value>a</arg_value>\n</tool_call>"
    assert calls(parsed(doc, 1)) == [("f", {"file path": "a"})]


# ---------------------------------------------------------------- grammar-aware termination
@pytest.mark.parametrize("value", [
    "a</arg_value>b",
    'print("</arg_value>")\n',
    "x</arg_value><arg_value>y",
    "x</arg_value>\n<arg_ke",
    "ends with a close</arg_value>",
    "</arg_value></arg_value>",
    "<tool_call>inner</tool_call> and </arg_key>",
])
def test_a_literal_value_close_is_data_unless_arg_key_or_the_call_close_follows(value: str) -> None:
    for form in ("\n", ""):
        doc = f"<tool_call>write{form}<arg_key>content</arg_key>{form}<arg_value>{value}</arg_value>{form}</tool_call>"
        for size in (0, 1, 3):
            events = parsed(doc, size)
            assert calls(events) == [("write", {"content": value})], (form, size)
            assert texts(events) == "" and codes(events) == []


def test_a_value_close_followed_by_the_next_key_closes() -> None:
    doc = "<tool_call>f<arg_key>a</arg_key><arg_value>x</arg_value>\n <arg_key>b</arg_key><arg_value>y</arg_value></tool_call>"
    assert calls(parsed(doc, 1)) == [("f", {"a": "x", "b": "y"})]


# ---------------------------------------------------------------- values
def _one(value: str, **kw: Any) -> tuple[Any, list[str], list[callsieve.Event]]:
    doc = f"<tool_call>f<arg_key>v</arg_key><arg_value>{value}</arg_value></tool_call>"
    whole = parsed(doc, **kw)
    one = parsed(doc, 1, **kw)
    assert merged(whole) == merged(one)
    ((_name, args),) = calls(whole)
    assert deltas_match(whole) and deltas_match(one)
    return args["v"], codes(whole), whole


@pytest.mark.parametrize("raw, expected", [
    ('{"a": [1, 2]}', {"a": [1, 2]}),
    ('[1, "x", null]', [1, "x", None]),
    ("3", 3),
    ("-2.5", -2.5),
    (" 7 ", 7),
    ("true", True),
    ("false", False),
    ("null", "null"),
    ('"quoted"', '"quoted"'),
    ("北京", "北京"),
    ("2024-06-27", "2024-06-27"),
    ("[1,", "[1,"),
    ("NaN", "NaN"),
    ("1e999", "1e999"),
    ("", ""),
])
def test_without_a_schema_objects_arrays_numbers_and_booleans_are_json_the_rest_strings(raw: str, expected: Any) -> None:
    got, problems, _ = _one(raw)
    assert got == expected and type(got) is type(expected)
    assert problems == []


@pytest.mark.parametrize("schema, raw, expected, problem", [
    ({"type": "string"}, "3", "3", False),
    ({"type": "string"}, '{"a": 1}', '{"a": 1}', False),
    ({"type": "string"}, "null", "null", False),
    ({"type": "integer"}, "3", 3, False),
    ({"type": "integer"}, "abc", "abc", True),
    ({"type": "integer"}, "[1]", "[1]", True),
    ({"type": "number"}, "2.5", 2.5, False),
    ({"type": "boolean"}, "true", True, False),
    ({"type": "object"}, '{"a": [1]}', {"a": [1]}, False),
    ({"type": "object"}, '{"a": [1}', '{"a": [1}', True),
    ({"type": "array"}, "[1, 2]", [1, 2], False),
    ({"type": ["integer", "null"]}, "null", None, False),
    ({"anyOf": [{"type": "integer"}, {"type": "string"}]}, "x1", "x1", False),
])
def test_with_a_schema_string_parameters_stay_raw_others_are_typed(schema: dict[str, Any], raw: str, expected: Any,
                                                                   problem: bool) -> None:
    got, problems, _ = _one(raw, tools=tools(v=schema))
    assert got == expected and type(got) is type(expected)
    assert problems == (["type_mismatch"] if problem else [])


def test_a_parameter_the_schema_does_not_list_follows_the_schemaless_rule() -> None:
    got, problems, _ = _one("12", tools=tools(other={"type": "string"}))
    assert got == 12 and problems == []


@pytest.mark.parametrize("schema, streams", [({"type": "string"}, True), (None, True), ({"type": ["string", "integer"]}, False)])
@pytest.mark.parametrize("value", ["line one\nline two\nline three", ' "quoted" one\nline two\nline three'])
def test_a_value_that_can_only_be_a_string_streams_as_it_arrives(schema: dict[str, Any] | None, streams: bool, value: str) -> None:
    """String-typed, or without a schema once its first character past spaces cannot
    begin a JSON object, array, number or boolean; an integer is sent once decided."""
    doc = f"<tool_call>f<arg_key>s</arg_key><arg_value>{value}</arg_value><arg_key>n</arg_key><arg_value>42</arg_value></tool_call>"
    props: dict[str, Any] = {"n": {"type": "integer"}}
    if schema is not None:
        props["s"] = schema
    sieve = callsieve.Sieve(tools=tools(**props), id_prefix="c")
    cut = doc.index("line three")  # the value is not closed yet
    early = [e for c in doc[:cut] for e in sieve.feed(c)]
    sent = "".join(deltas(early, 0))
    assert ('one\\nline two' in sent) is streams, sent
    events = early + sieve.feed(doc[cut:]) + sieve.close()
    assert calls(events) == [("f", {"s": value, "n": 42})]
    assert '"n": 42}' in "".join(deltas(events, 0))  # typed, sent once decided
    assert deltas_match(events)


@pytest.mark.parametrize("value, expected", [("  [1, 2]", [1, 2]), (" -3", -3), ("\ntrue", True), ("{x", "{x"), ("fine", "fine")])
def test_a_value_that_may_be_json_is_held_until_its_close(value: str, expected: Any) -> None:
    doc = f"<tool_call>f<arg_key>v</arg_key><arg_value>{value}</arg_value></tool_call>"
    sieve = callsieve.Sieve(id_prefix="c")
    early = [e for c in doc[: doc.index("</arg_value>")] for e in sieve.feed(c)]
    assert "".join(deltas(early, 0)) == ""
    events = early + sieve.feed(doc[doc.index("</arg_value>"):]) + sieve.close()
    assert calls(events) == [("f", {"v": expected})] and deltas_match(events)


def test_a_key_given_twice_makes_the_block_malformed() -> None:
    doc = "<tool_call>f<arg_key>a</arg_key><arg_value>1</arg_value><arg_key>a</arg_key><arg_value>2</arg_value></tool_call>"
    events = parsed(doc)
    assert calls(events) == [] and codes(events) == ["malformed_block"]
    # f had started: abandoned, and no second "a" was streamed (no duplicate key)
    (gone,) = [e for e in events if isinstance(e, callsieve.ToolCallAbandoned)]
    assert gone.raw == doc and texts(events) == ""
    assert "".join(e.arguments for e in events if isinstance(e, callsieve.ToolCallDelta)) == '{"a": 1'



# ---------------------------------------------------------------- several calls, other dialects
def test_several_calls_in_a_row_in_both_forms_with_prose_between() -> None:
    doc = (
        "First.\n<tool_call>a\n<arg_key>x</arg_key>\n<arg_value>1</arg_value>\n</tool_call>\n"
        "<tool_call>b<arg_key>y</arg_key><arg_value>two</arg_value></tool_call>"
        " then <tool_call>c</tool_call>."
    )
    for size in (0, 1, 7):
        events = parsed(doc, size)
        assert calls(events) == [("a", {"x": 1}), ("b", {"y": "two"}), ("c", {})]
        assert texts(events) == "First.\n\n then ."
        done = [e for e in events if isinstance(e, callsieve.ToolCall)]
        assert [c.index for c in done] == [0, 1, 2] and len({c.id for c in done}) == 3
        assert deltas_match(events)


MIXED = (
    "Three dialects, one opener.\n"
    "<tool_call>\n<function=write_file>\n<parameter=path>\na.py\n</parameter>\n</function>\n</tool_call>\n"
    '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris"}}\n</tool_call>\n'
    "<tool_call>get_time<arg_key>tz</arg_key><arg_value>Europe/Paris</arg_value></tool_call>"
)


@pytest.mark.parametrize("order", [None, ["glm45", "hermes", "qwen3_coder"], ["qwen3_coder", "glm45", "hermes"]])
@pytest.mark.parametrize("size", [0, 1, 4])
def test_glm_beside_qwen3_coder_and_hermes_behind_the_shared_opener(order: list[str] | None, size: int) -> None:
    """What follows ``<tool_call>`` decides, never the order dialects are listed in."""
    events = parsed(MIXED, size, dialects=order)
    assert calls(events) == [("write_file", {"path": "a.py"}), ("get_weather", {"city": "Paris"}),
                             ("get_time", {"tz": "Europe/Paris"})]
    assert [e.dialect for e in events if isinstance(e, callsieve.ToolCall)] == ["qwen3_coder", "hermes", "glm45"]
    assert texts(events) == "Three dialects, one opener.\n\n\n"
    assert codes(events) == [] and "".join(e.raw for e in events) == MIXED


def test_the_tool_call_fork_has_a_branch_per_dialect_and_draws_each() -> None:
    from callsieve.grammar import resolve
    from callsieve.machine import compose
    from callsieve.tools.diagrams import views
    from callsieve.tools.diagrams_dot import render_dot

    (fork,) = [f for f in compose(resolve(None)).forks if f.opener_label == "<tool_call>"]
    assert sorted(c.dialect for c in fork.candidates) == ["glm45", "granite", "hermes", "qwen3_coder"]
    (view,) = [v for v in views() if v.name == "opener-tool_call"]
    dot = render_dot(view)
    branches = [line for line in dot.splitlines() if line.strip().startswith('"fork" ->') and "fork_bind" in line]
    # (branches to one state share an edge: hermes's and granite's JSON bodies)
    # (`fork_is:D@OPENER`: the rows of another opener the same dialects share, `<function=…>`)
    assert sorted(d for b in branches for d in re.findall(r"if: fork_is:(\w+)\\n", b)) == ["glm45", "granite", "hermes", "qwen3_coder"]
    # (GLM's decider is its grammar after the opener: the name, then a marker that may follow it)
    assert any("glm45: next is NAME, then \\n | &lt;/arg_value&gt; | &lt;arg_key&gt;" in b for b in branches)


@pytest.mark.parametrize("mention", ["<tool_call> tags", "<tool_call> and </tool_call>", "<tool_call>s", "<tool_call>-style markup"])
def test_prose_that_mentions_the_opener_is_prose_again_and_a_call_after_it_is_found(mention: str) -> None:
    """Behind the shared opener GLM's lookahead is its grammar: a name right after the
    opener, up to a marker that may follow it. ``<tool_call> tags`` fails it (and the
    others') at once (the opener is released as text, with a Diagnostic), so the call
    later in the same reply is still read."""
    doc = f"Models write {mention} to call tools. <tool_call>get_time</tool_call>"
    for size in (0, 1):
        events = parsed(doc, size)
        assert calls(events) == [("get_time", {})]
        assert texts(events) == doc[: doc.rindex("<tool_call>")]
        assert codes(events) == ["malformed_block"]


def test_a_glm_block_is_no_call_to_qwen3_coder_or_hermes_alone() -> None:
    doc = "<tool_call>get_time</tool_call>"
    for d in ("qwen3_coder", "hermes"):
        events = parsed(doc, dialects=[d])
        assert calls(events) == [] and texts(events) == doc and codes(events) == ["malformed_block"]


# ---------------------------------------------------------------- truncated streams
@pytest.mark.parametrize("doc", [
    "<tool_call>get_weather<arg_key>city</arg_key><arg_value>Bei",
    "<tool_call>get_weather\n<arg_key>city</arg_key>\n<arg_value>Beijing</arg_value>\n",
    "<tool_call>get_weather<arg_key>ci",
    "<tool_call>get_weather<arg_ke",
    "<tool_call>get_weather",
    "<tool_call>",
])
def test_a_truncated_call_is_released_as_text_with_a_diagnostic(doc: str) -> None:
    for size in (0, 1):
        for dialects in (["glm45"], None):
            events = parsed("Hi " + doc, size, dialects=dialects)
            assert calls(events) == []
            # a call that started is abandoned (its markup on that event), else text
            assert released(events) == "Hi " + doc
            started = [e for e in events if isinstance(e, callsieve.ToolCallStart)]
            assert texts(events) == ("Hi " if started else "Hi " + doc)
            assert codes(events) == ["unterminated_block"]
            assert not [e for e in events if isinstance(e, callsieve.ToolCallStart)] or "abandoned" in \
                [e for e in events if isinstance(e, callsieve.Diagnostic)][0].message


# ---------------------------------------------------------------- properties
@given(st.data())
def test_both_forms_of_drawn_calls_parse_to_the_calls_however_chunked(data: st.DataObject) -> None:
    """Calls drawn by the shared strategies (values holding ``</arg_value>`` and other
    markup as data, JSON values), rendered in the newline and the compact form."""
    drawn = data.draw(st.lists(call_of(GLM), min_size=1, max_size=3))
    assert GLM.render is not None
    expected = [(n, a) for n, _, a in drawn]
    results = []
    for variant in (0, 1):
        doc = GLM.render([(n, p) for n, p, _ in drawn], variant)
        events = run(data.draw(chunks(doc)), dialects=data.draw(st.sampled_from([["glm45"], None])))
        assert calls(events) == expected
        assert texts(events) == ("\n" * (len(drawn) - 1) if variant == 0 else "")
        assert codes(events) == ["unterminated_heredoc"] * heredocs_said(GLM, drawn) and deltas_match(events)
        results.append([json.loads(e.arguments_json) for e in events if isinstance(e, callsieve.ToolCall)])
    assert results[0] == results[1]


def test_a_value_is_typed_once_however_many_literal_closes_it_holds(monkeypatch: pytest.MonkeyPatch) -> None:
    """Linear: each literal ``</arg_value>`` is decided by what follows it, and the value
    is decoded once, when its real close is confirmed (never once per literal close)."""
    import callsieve.regions.value as value_region

    seen: list[int] = []
    real = value_region.json_or_raw

    def counting(raw: str, schema: Any) -> Any:
        seen.append(len(raw))
        return real(raw, schema)

    monkeypatch.setattr(value_region, "json_or_raw", counting)
    value = "[" + "</arg_value>x, " * 2000 + "]"
    doc = f"<tool_call>f<arg_key>v</arg_key><arg_value>{value}</arg_value></tool_call>"
    events = parsed(doc, 7)
    assert calls(events) == [("f", {"v": value})]  # not JSON: the raw string
    assert seen == [len(value)]
