"""What models really emit (issue 11): each tolerated deviation, its Diagnostic, and
what ``strict=True`` does with it; a tolerance never fires inside a value, a fence or
a code span, and never turns prose that mentions a marker into a call."""

from __future__ import annotations

import json
import re
from typing import Any

import pytest
from hypothesis import given, strategies as st

import callsieve
from callsieve.regions.block import unterminated_heredoc
from callsieve.events import merged
from strategies import PROSE, call_of, chunks, run, calls, texts, codes, codes_besides_heredocs, heredocs_said, quotes_an_opener, released
from callsieve.grammar import REGISTRY


def diags(events: list[callsieve.Event], code: str) -> list[callsieve.Diagnostic]:
    return [e for e in events if isinstance(e, callsieve.Diagnostic) and e.code == code]


def cut(doc: str, size: int) -> list[str]:
    return [doc[i : i + size] for i in range(0, len(doc), size)]


def tools(name: str, **props: str) -> list[dict[str, Any]]:
    return [{"type": "function", "function": {"name": name, "parameters": {"type": "object", "properties": {
        k: {"type": t} for k, t in props.items()}}}}]


def deltas_match(events: list[callsieve.Event]) -> None:
    for c in (e for e in events if isinstance(e, callsieve.ToolCall)):
        got = "".join(e.arguments for e in events if isinstance(e, callsieve.ToolCallDelta) and e.index == c.index)
        assert got == c.arguments_json


# ---------------------------------------------------------------- Qwen3-Coder: no <tool_call>
WRAPLESS = "<function=write_file>\n<parameter=path>\na.py\n</parameter>\n</function>"


@pytest.mark.parametrize("tail, text", [
    ("\n</tool_call>\nDone.", "\nDone."),   # the closing wrapper kept
    ("\nDone.", "\nDone."),                 # neither wrapper
    ("", ""),                               # the stream ends on it
])
def test_qwen3_coder_call_without_tool_call_is_a_call_with_missing_block_open(tail: str, text: str) -> None:
    doc = "I'll write it.\n" + WRAPLESS + tail
    for size in (1, 3, len(doc)):
        events = run(cut(doc, size))
        assert calls(events) == [("write_file", {"path": "a.py"})]
        assert texts(events) == "I'll write it.\n" + text
        (d,) = diags(events, "missing_block_open")
        assert d.offset == len("I'll write it.\n") and d.raw == ""
        assert codes(events) == ["missing_block_open"]
        assert "".join(e.raw for e in events) == doc
        deltas_match(events)


def test_qwen3_coder_call_without_tool_call_is_text_under_strict() -> None:
    doc = "I'll write it.\n" + WRAPLESS + "\n</tool_call>"
    events = run(cut(doc, 2), strict=True)
    assert calls(events) == [] and texts(events) == doc and codes(events) == []


def test_a_wrapperless_call_must_name_a_known_tool_when_tools_are_given() -> None:
    doc = "x " + WRAPLESS + " y"
    known = run([doc], tools=tools("write_file", path="string"))
    assert calls(known) == [("write_file", {"path": "a.py"})]
    for policy in ("call", "text", "drop"):
        events = run(cut(doc, 4), tools=tools("other", path="string"), unknown_tool=policy, on_malformed="raise")
        assert calls(events) == [] and texts(events) == doc
        assert codes(events) == ["unknown_tool"]
        # not streamed either: nothing to abandon
        assert not [e for e in events if isinstance(e, (callsieve.ToolCallStart, callsieve.ToolCallDelta))]


def test_prose_that_mentions_a_function_open_stays_text_and_streams_nothing() -> None:
    doc = "Write <function=NAME> to call a tool, then its parameters."
    for policy in ("text", "drop", "raise"):
        events = run(cut(doc, 3), on_malformed=policy)
        assert texts(events) == doc and calls(events) == []
        assert not [e for e in events if isinstance(e, (callsieve.ToolCallStart, callsieve.ToolCallDelta))]


@pytest.mark.parametrize("doc", [
    "See:\n```\n" + WRAPLESS + "\n```\nok",
    "Inline `" + WRAPLESS.splitlines()[0] + "` here",
    "~~~xml\n<function=f>\n<parameter=a>\nx\n<parameter=b>\ny\n</function>\n~~~\n",
])
def test_wrapperless_markup_in_a_fence_or_code_span_is_text(doc: str) -> None:
    events = run(cut(doc, 5))
    assert texts(events) == doc and calls(events) == [] and codes(events) == []


# ---------------------------------------------------------------- Qwen3-Coder: no </parameter>
def test_a_missing_parameter_close_before_the_next_parameter_or_the_call_close() -> None:
    doc = "<tool_call>\n<function=f>\n<parameter=a>\nx\n<parameter=b>\ny\n\n</function>\n</tool_call>"
    for size in (1, 2, len(doc)):
        events = run(cut(doc, size))
        assert calls(events) == [("f", {"a": "x", "b": "y\n"})]  # one trailing newline stripped, as usual
        got = diags(events, "implied_param_close")
        assert [d.offset for d in got] == [doc.index("<parameter=b>"), doc.index("</function>")]
        assert codes(events) == ["implied_param_close"] * 2
        deltas_match(events)


def test_a_missing_parameter_close_under_strict_is_the_value_data() -> None:
    doc = "<tool_call>\n<function=f>\n<parameter=a>\nx\n<parameter=b>\ny\n</parameter>\n</function>\n</tool_call>"
    assert calls(run([doc])) == [("f", {"a": "x", "b": "y"})]
    assert calls(run([doc], strict=True)) == [("f", {"a": "x\n<parameter=b>\ny"})]


def test_an_implied_close_needs_a_new_key_and_with_tools_a_known_one() -> None:
    same = "<tool_call>\n<function=f>\n<parameter=a>\nx\n<parameter=a>\ny\n</parameter>\n</function>\n</tool_call>"
    assert calls(run([same])) == [("f", {"a": "x\n<parameter=a>\ny"})]
    other = "<tool_call>\n<function=f>\n<parameter=a>\nx\n<parameter=zz>\ny\n</parameter>\n</function>\n</tool_call>"
    assert calls(run([other])) == [("f", {"a": "x", "zz": "y"})]
    assert calls(run([other], tools=tools("f", a="string"))) == [("f", {"a": "x\n<parameter=zz>\ny"})]
    assert codes(run([other], tools=tools("f", a="string"))) == []


def test_an_implied_close_is_only_at_the_start_of_a_line() -> None:
    doc = ("<tool_call>\n<function=f>\n<parameter=a>\nonly a close followed by <parameter=b> or </function> ends it\n"
           "</parameter>\n</function>\n</tool_call>")
    events = run(cut(doc, 3))
    assert calls(events) == [("f", {"a": "only a close followed by <parameter=b> or </function> ends it"})]
    assert codes(events) == []


def test_the_cut_at_close_demo_sample_is_one_value() -> None:
    from pathlib import Path

    import callsieve.tools

    doc = (Path(callsieve.tools.__file__).parent / "samples" / "cut_at_close.txt").read_text(encoding="utf-8")
    events = run(cut(doc, 4))
    ((name, args),) = calls(events)
    assert name == "create_file" and len(args["content"]) == 235 and codes(events) == []


def test_a_value_that_quotes_a_call_implies_no_close() -> None:
    inner = "<function=g>\n<parameter=a>\nx\n<parameter=b>\ny\n</function>"
    doc = f"<tool_call>\n<function=write>\n<parameter=content>\n{inner}\n</parameter>\n</function>\n</tool_call>"
    for size in (1, 7, len(doc)):
        events = run(cut(doc, size))
        assert calls(events) == [("write", {"content": inner})] and codes(events) == []


# ---------------------------------------------------------------- Python-style values
@pytest.mark.parametrize("kind, raw, value", [
    ("array", "['a', 'b']", ["a", "b"]),
    ("object", "{'k': True, 'n': None, 't': (1, 2)}", {"k": True, "n": None, "t": [1, 2]}),
    ("list", "[1, 'x', False]", [1, "x", False]),
])
def test_python_style_values_are_read_for_non_string_parameters(kind: str, raw: str, value: Any) -> None:
    doc = f"<tool_call>\n<function=f>\n<parameter=v>\n{raw}\n</parameter>\n</function>\n</tool_call>"
    events = run([doc], tools=tools("f", v=kind))
    assert calls(events) == [("f", {"v": value})]
    assert codes(events) == ["python_literal"]
    deltas_match(events)
    strict = run([doc], tools=tools("f", v=kind), strict=True)
    assert calls(strict) == [("f", {"v": raw})] and codes(strict) == ["type_mismatch"]


@pytest.mark.parametrize("raw", ["['a', b]", "{1: 'x'}", "[float('nan')]", "{'a': {1, 2}}", "__import__('os')"])
def test_python_style_values_that_are_not_json_literals_stay_strings(raw: str) -> None:
    doc = f"<tool_call>\n<function=f>\n<parameter=v>\n{raw}\n</parameter>\n</function>\n</tool_call>"
    events = run([doc], tools=tools("f", v="array"))
    assert calls(events) == [("f", {"v": raw})] and codes(events) == ["type_mismatch"]


def test_python_style_values_of_string_parameters_stay_strings() -> None:
    doc = "<tool_call>\n<function=f>\n<parameter=v>\n['a']\n</parameter>\n</function>\n</tool_call>"
    events = run([doc], tools=tools("f", v="string"))
    assert calls(events) == [("f", {"v": "['a']"})] and codes(events) == []


# ---------------------------------------------------------------- schema type names
@pytest.mark.parametrize("name, raw, value", [
    ("int", "42", 42), ("long", "7", 7), ("float", "2.5", 2.5), ("double", "3", 3),
    ("bool", "true", True), ("str", "12", "12"), ("dict", '{"a": 1}', {"a": 1}), ("list", "[1]", [1]),
    ("Integer", "5", 5), ("BOOLEAN", "False", False),
])
def test_type_names_serving_stacks_accept(name: str, raw: str, value: Any) -> None:
    doc = f'<minimax:tool_call><invoke name="f"><parameter name="v">{raw}</parameter></invoke></minimax:tool_call>'
    events = run([doc], tools=tools("f", v=name))
    assert calls(events) == [("f", {"v": value})] and codes(events) == []
    deltas_match(events)


@pytest.mark.parametrize("schema", [{"type": "integr"}, {"type": ["string", "uuid"]}, {"anyOf": [{"type": "text"}]}])
def test_unknown_type_names_are_rejected_when_the_sieve_is_built(schema: dict[str, Any]) -> None:
    t = [{"type": "function", "function": {"name": "mytool", "parameters": {"properties": {"myprop": schema}}}}]
    with pytest.raises(callsieve.InvalidToolSchemaError) as e:
        callsieve.Sieve(tools=t)
    assert "mytool" in str(e.value) and "myprop" in str(e.value) and "unknown type name" in str(e.value)


# ---------------------------------------------------------------- DSML variants (§1, §10)
INV = '<｜DSML｜invoke name="f">\n<｜DSML｜parameter name="k" string="true">v</｜DSML｜parameter>\n</｜DSML｜invoke>'


@pytest.mark.parametrize("doc", [
    "<｜｜｜｜｜DSML｜｜｜｜｜tool_calls>\n" + INV + "\n</｜｜｜｜｜DSML｜｜｜｜｜tool_calls>",   # five bars
    "<|||||||DSML|||||||tool_calls>\n" + INV + "\n</｜DSML｜tool_calls>",
    "<DSML tool_calls>\n" + INV + "\n</DSML tool_calls>",                          # a space where a bar belongs
    "<DSML｜tool_calls>\n" + INV + "\n</｜DSML｜tool_calls>",                       # nothing where a bar belongs
    "<｜DSML｜tool_calls｜>\n" + INV + "\n</｜DSML｜tool_calls｜>",                 # a trailing bar
    "<｜DSML｜DSML｜tool_calls>\n" + INV + "\n</｜DSML｜tool_calls>",               # DSML repeated
    "<｜DSML｜function-calls>\n" + INV + "\n</｜DSML｜function-calls>",             # hyphenated block name
    '<｜DSML｜tool_calls>\n<｜｜｜｜｜DSML｜｜｜｜｜invoke name="f">\n<DSML parameter name="k" string="true">v'
    "</｜DSML｜DSML｜parameter>\n</｜DSML｜invoke｜>\n</｜DSML｜tool_calls>",     # inner markers
])
def test_dsml_variants_are_read_with_dsml_variant(doc: str) -> None:
    for size in (1, 3, len(doc)):
        events = run(cut("ok " + doc + " bye", size))
        assert calls(events) == [("f", {"k": "v"})] and texts(events) == "ok  bye"
        assert set(codes(events)) == {"dsml_variant"}
        assert all(d.offset >= 3 for d in diags(events, "dsml_variant"))
    strict = run(["ok " + doc + " bye"], strict=True)
    assert calls(strict) == []


def test_dsml_missing_invoke_close_before_the_block_close_or_the_next_invoke() -> None:
    one = '<｜DSML｜parameter name="k" string="true">v</｜DSML｜parameter>'
    doc = f'<｜DSML｜tool_calls>\n<｜DSML｜invoke name="f">\n{one}\n<｜DSML｜invoke name="g">\n{one}\n</｜DSML｜tool_calls>'
    for size in (1, 4, len(doc)):
        events = run(cut(doc, size))
        assert calls(events) == [("f", {"k": "v"}), ("g", {"k": "v"})]
        assert codes(events) == ["implied_call_close", "implied_call_close"]
        assert [d.offset for d in diags(events, "implied_call_close")] == [
            doc.index('<｜DSML｜invoke name="g">'), doc.index("</｜DSML｜tool_calls>")]
        deltas_match(events)
    strict = run([doc], strict=True)
    assert calls(strict) == [] and released(strict) == doc


def test_dsml_invokes_without_their_block_carry_missing_block_open() -> None:
    for doc in (INV + "\n</｜DSML｜tool_calls>", "Sure. " + INV):
        events = run([doc])
        assert calls(events) == [("f", {"k": "v"})] and codes(events) == ["missing_block_open"]
        assert texts(run([doc], strict=True)) == doc


# ---------------------------------------------------------------- arguments wrapped once
@pytest.mark.parametrize("doc", [
    '<tool_call>\n<function=f>\n<parameter=arguments>\n{"a": 1, "b": "x"}\n</parameter>\n</function>\n</tool_call>',
    '<｜DSML｜tool_calls><｜DSML｜invoke name="f"><｜DSML｜parameter name="arguments" string="false">{"a": 1, "b": "x"}'
    "</｜DSML｜parameter></｜DSML｜invoke></｜DSML｜tool_calls>",
    '<｜DSML｜tool_calls><｜DSML｜invoke name="f"><｜DSML｜parameter name="parameters" string="true">{"a": 1, "b": "x"}'
    "</｜DSML｜parameter></｜DSML｜invoke></｜DSML｜tool_calls>",
])
def test_arguments_wrapped_once_are_unwrapped_when_the_schema_has_no_such_property(doc: str) -> None:
    t = tools("f", a="integer", b="string")
    for size in (1, 5, len(doc)):
        events = run(cut(doc, size), tools=t)
        assert calls(events) == [("f", {"a": 1, "b": "x"})] and codes(events) == ["unwrapped_arguments"]
        deltas_match(events)
    strict = run([doc], tools=t, strict=True)
    ((_name, args),) = calls(strict)
    assert list(args) == [next(k for k in ("arguments", "parameters") if k in doc)]  # as written
    assert "unwrapped_arguments" not in codes(strict)


def test_arguments_are_not_unwrapped_without_a_schema_or_when_it_has_the_property() -> None:
    doc = '<tool_call>\n<function=f>\n<parameter=arguments>\n{"a": 1}\n</parameter>\n</function>\n</tool_call>'
    assert calls(run([doc])) == [("f", {"arguments": '{"a": 1}'})]
    assert calls(run([doc], tools=tools("f", arguments="object"))) == [("f", {"arguments": {"a": 1}})]
    two = doc.replace("</function>", "<parameter=b>\nx\n</parameter>\n</function>")
    events = run(cut(two, 3), tools=tools("f", b="string"))
    assert calls(events) == [("f", {"arguments": '{"a": 1}', "b": "x"})] and codes(events) == []
    deltas_match(events)


# ---------------------------------------------------------------- the tolerance property
QWEN = REGISTRY["qwen3_coder"]
DSML = REGISTRY["dsml"]
DOT_PROSE = PROSE.map(lambda s: "." + s)


def _qwen(name: str, params: list[tuple[str, str, bool]], drop: str, at: int) -> str:
    parts = ["" if drop in ("open", "both") else "<tool_call>\n", f"<function={name}>\n"]
    for k, (key, value, _j) in enumerate(params):
        close = "" if drop == "param" and k == at else "</parameter>\n"
        parts.append(f"<parameter={key}>\n{value}\n{close}")
    parts.append("</function>" + ("" if drop == "both" else "\n</tool_call>"))
    return "".join(parts)


QWEN_CODE = {"open": "missing_block_open", "both": "missing_block_open", "param": "implied_param_close"}


@given(st.data())
def test_dropping_a_tolerated_qwen3_coder_marker_keeps_the_calls_and_says_so(data: st.DataObject) -> None:
    """Documents generated by the grammar, one optional marker the grammar tolerates
    left out of one call (its <tool_call>, both wrappers, or one </parameter>): the
    same calls and text, plus that tolerance's Diagnostic; under strict, not the same."""
    pieces: list[str] = []
    text: list[str] = []
    expected: list[tuple[str, dict[str, Any]]] = []
    raw_values: list[str] = []
    n = data.draw(st.integers(1, 3))
    victim = data.draw(st.integers(0, n - 1))
    drop = data.draw(st.sampled_from(["open", "both", "param"]))
    for k in range(n):
        prose = data.draw(DOT_PROSE)
        pieces.append(prose)
        text.append(prose)
        name, params, args = data.draw(call_of(QWEN))
        raw_values.extend(v for _key, v, is_json in params if not is_json)
        # A value that ends with a literal </parameter> cannot lose its own close: what
        # is left reads as that value's close (inherently ambiguous, so not drawn).
        # So is a value that quotes a call or block open: it implies no close (data).
        droppable = [i for i, (_key, v, _j) in enumerate(params)
                     if not v.endswith("</parameter>") and "<tool_call>" not in v and "<function=" not in v]
        if k == victim and drop == "param" and not droppable:
            drop = "open"
        if k == victim and drop != "param" and any(quotes_an_opener(v) for _key, v, _j in params):
            # A call without its wrapper ends where a real opener begins (issue 23): a
            # value quoting <tool_call> keeps its call only with the wrapper.
            drop = "param" if droppable else ""
        at = data.draw(st.sampled_from(droppable)) if droppable else 0
        pieces.append(_qwen(name, params, drop if k == victim else "", at))
        expected.append((name, args))
    tail = data.draw(DOT_PROSE)
    pieces.append(tail)
    text.append(tail)
    doc = "".join(pieces)
    # A raw value that opens a shell heredoc never closed (``<<'x'``) is said apart, with
    # or without a marker dropped (docs/diagnostics.md: unterminated_heredoc)
    heredocs = sum(1 for v in raw_values if unterminated_heredoc(v))
    for kw in ({"dialects": ["qwen3_coder"]}, {}):
        events = run(data.draw(chunks(doc)), **kw)
        assert calls(events) == expected
        assert texts(events) == "".join(text)
        assert [c for c in codes(events) if c != "unterminated_heredoc"] == ([QWEN_CODE[drop]] if drop else [])
        assert codes(events).count("unterminated_heredoc") == heredocs
        assert "".join(e.raw for e in events) == doc
        deltas_match(events)
    strict = run([doc], strict=True)
    assert calls(strict) != expected or codes(strict) or not drop


def _dsml(calls_: list[tuple[str, list[tuple[str, str, bool]]]], drop: str, at: int) -> str:
    bar = "｜"
    lines = [] if drop in ("open", "both") else [f"<{bar}DSML{bar}tool_calls>"]
    for k, (name, params) in enumerate(calls_):
        lt = "<<" if drop == "lt" and k == at else "<"  # (not dropped: a stray < added)
        lines.append(f'{lt}{bar}DSML{bar}invoke name="{name}">')
        for key, value, is_json in params:
            flag = "false" if is_json else "true"
            lines.append(f'<{bar}DSML{bar}parameter name="{key}" string="{flag}">{value}</{bar}DSML{bar}parameter>')
        if not (drop == "invoke" and k == at):
            lines.append(f"</{bar}DSML{bar}invoke>")
    if drop != "both":
        lines.append(f"</{bar}DSML{bar}tool_calls>")
    return "\n".join(lines)


DSML_CODE = {"open": "missing_block_open", "both": "missing_block_open", "invoke": "implied_call_close",
             "lt": "doubled_lt"}


@given(st.data())
def test_dropping_a_tolerated_dsml_marker_keeps_the_calls_and_says_so(data: st.DataObject) -> None:
    drop = data.draw(st.sampled_from(["open", "both", "invoke", "lt"]))
    drawn = data.draw(st.lists(call_of(DSML), min_size=1, max_size=3))
    at = data.draw(st.integers(0, len(drawn) - 1))
    if drop in ("open", "both") and any(quotes_an_opener(v) for _n, p, _a in drawn for _k, v, _j in p):
        drop = "invoke"  # (invokes without their block end where a real opener begins: issue 23)
    before, after = data.draw(DOT_PROSE), data.draw(DOT_PROSE)
    doc = before + "\n\n" + _dsml([(n, p) for n, p, _ in drawn], drop, at) + after
    events = run(data.draw(chunks(doc)))
    assert calls(events) == [(n, a) for n, _, a in drawn]
    assert texts(events) == before + "\n\n" + after
    assert codes_besides_heredocs(events) == [DSML_CODE[drop]]
    assert codes(events).count("unterminated_heredoc") == heredocs_said(DSML, drawn)
    assert "".join(e.raw for e in events) == doc
    deltas_match(events)
    # strict: the left-out close makes what follows data, or the block text
    assert calls(run([doc], strict=True)) != [(n, a) for n, _, a in drawn]


XML = REGISTRY["xml"]


@given(st.data())
def test_dropping_the_gateway_xml_block_open_keeps_the_calls_and_says_so(data: st.DataObject) -> None:
    """Gateway XML rendered whole, its opening ``<tool_calls>`` left out: the same calls
    (once the closing wrapper is read), one ``missing_block_open``; under strict, text."""
    drawn = data.draw(st.lists(call_of(XML), min_size=1, max_size=3))
    variant = data.draw(st.integers(0, 3))
    block = XML.render([(n, p) for n, p, _ in drawn], variant)
    markup = block.split("\n", 1)[1]  # without its first line, the opening wrapper
    before, after = data.draw(DOT_PROSE), data.draw(DOT_PROSE)
    doc = before + "\n\n" + markup + after
    events = run(data.draw(chunks(doc)), dialects=["xml"])
    indent = markup[: len(markup) - len(markup.lstrip(" "))]  # before the first invoke: prose
    assert calls(events) == [(n, a) for n, _, a in drawn]
    assert texts(events) == before + "\n\n" + indent + after
    assert codes_besides_heredocs(events) == ["missing_block_open"]
    assert codes(events).count("unterminated_heredoc") == heredocs_said(XML, drawn)
    assert "".join(e.raw for e in events) == doc
    deltas_match(events)
    # strict: prose (a </think> in a value is then a stray reasoning close, as in prose)
    strict = run([doc], dialects=["xml"], strict=True)
    assert calls(strict) == [] and "".join(e.raw for e in strict) == doc and "missing_block_open" not in codes(strict)


@given(st.data())
def test_malformed_markup_in_a_fence_a_code_span_or_a_value_stays_text_or_data(data: st.DataObject) -> None:
    """The same tolerated markup (a wrapper-less call, a dropped </parameter>, a DSML
    misspelling) quoted in a fence, in inline code or inside a parameter value is never
    a call and carries no Diagnostic but the report of a real opener in code."""
    name, params, _args = data.draw(call_of(QWEN))
    markup = data.draw(st.sampled_from([
        "<function=f>\n<parameter=k>\nv\n</function>",
        _qwen(name, params, "both", 0),
        _qwen(name, params, "open", 0),
        _qwen(name, params, "param", 0).replace("<tool_call>\n", "<tool_call>\n" if data.draw(st.booleans()) else ""),
        "<｜｜｜｜｜DSML｜｜｜｜｜tool_calls>\n" + INV + "\n</DSML tool_calls>",
        INV,
        # issue 24, round two's rest
        '<function=f>{"a": 1}</function>',
        # (on one line: a `</function>` at a line start of a Qwen3-Coder value implies its
        # close, Qwen3-Coder's own tolerance, unless the value quotes a Qwen3-Coder call open)
        '<function name="f">{"a": [1]}</function>',
        '<tool_calls><invoke name="f">{"a": 1}</invoke></tool_calls>',
        "<tool_call>f<tool_call>k</arg_key><arg_value>v</arg_value></tool_call>",
        "<tool_call>f\\n<arg_key>k</arg_key>\\n<arg_value>v</arg_value>\\n</tool_call>",
        '<｜DSML｜tool_calls><invoke name="f"><parameter name="k">v</parameter></invoke></｜DSML｜tool_calls>',
        '<｜FOO｜tool_calls><｜FOO｜invoke name="f"></｜FOO｜invoke></｜FOO｜tool_calls>',
        "<｜tool_calls>\n<invoke name=\"f\"></invoke>\n</｜tool_calls>",
        "Hi [TOOL_CALLS]Sure [ARGS] x <｜tool▁sep｜> <|tool_call_end|>",
    ]))
    fence = data.draw(st.sampled_from(["```", "~~~~"]))
    where = data.draw(st.sampled_from(["fence", "span", "value"]))
    if where == "fence":
        # Longer than any run of its character in the markup (a drawn value may hold
        # ```), so that the fence quotes all of it, as the property means.
        longest = max((len(r) for r in re.findall(re.escape(fence[0]) + "+", markup)), default=0)
        fence = fence[0] * max(len(fence), longest + 1)
        doc = f"Example:\n{fence}\n{markup}\n{fence}\nafter"
    elif where == "span":
        doc = f"Use `{markup.splitlines()[0]}` to call."
    else:
        # In a value of each kind that can hold it: a qwen3_coder raw value (when the
        # markup holds no </parameter>, which a raw value cannot quote before grammar),
        # a CDATA section, a JSON string.
        kinds = ["json"] + (["cdata"] if "]]>" not in markup else []) + (["qwen"] if "</parameter>" not in markup else [])
        kind = data.draw(st.sampled_from(kinds))
        if kind == "qwen":
            doc = f"<tool_call>\n<function=w>\n<parameter=c>\n{markup}\n</parameter>\n</function>\n</tool_call>"
        elif kind == "cdata":
            doc = (f'<｜DSML｜tool_calls>\n<｜DSML｜invoke name="w">\n<｜DSML｜parameter name="c" string="true">'
                   f"<![CDATA[{markup}]]></｜DSML｜parameter>\n</｜DSML｜invoke>\n</｜DSML｜tool_calls>")
        else:
            doc = "<tool_call>\n" + json.dumps({"name": "w", "arguments": {"c": markup}}, ensure_ascii=False) + "\n</tool_call>"
    events = run(data.draw(chunks(doc)))
    if where == "value":
        assert calls(events) == [("w", {"c": markup})] and codes(events) == []
    else:
        # (a real opener quoted in code is reported, as shown and not run: issue 22)
        assert calls(events) == [] and texts(events) == doc
        assert [c for c in codes(events) if c != "markup_in_code"] == []
        quoted = markup if where == "fence" else markup.splitlines()[0]
        assert ("<tool_call>" in quoted) <= ("markup_in_code" in codes(events))


@given(st.data())
def test_strict_and_lenient_agree_on_well_formed_documents(data: st.DataObject) -> None:
    d = data.draw(st.sampled_from(list(REGISTRY.values())))
    from strategies import document

    doc, expected = data.draw(document(d))
    lenient = run(data.draw(chunks(doc)), dialects=[d.name])
    strict = run(data.draw(chunks(doc)), dialects=[d.name], strict=True)
    assert merged(lenient) == merged(strict)
    assert calls(strict) == expected.calls


def test_strict_is_a_typed_option() -> None:
    with pytest.raises(callsieve.InvalidOptionError):
        callsieve.Sieve(strict="yes")  # type: ignore[arg-type]
    assert callsieve.Sieve(strict=True).machine is not callsieve.Sieve().machine


def test_the_diagrams_draw_the_tolerated_paths() -> None:
    from callsieve.tools.diagrams import dialect_dot

    dsml = dialect_dot(["dsml"])
    qwen = dialect_dot(["qwen3_coder"])
    assert "~DSML~invoke" in dsml and "~DSML~tool_calls" in dsml  # the variants' own edges
    assert "dsml.bare." in dsml
    assert "imply_value_close" in qwen and "implied_ok" in qwen and "value_quote" in qwen
    assert "qwen3_coder.bare." in qwen
    glm = dialect_dot(["glm45"])
    xml = dialect_dot(["xml"])
    assert "~&lt;/arg_key&gt;&lt;arg_value&gt;" in glm  # doubled_key_close
    assert "xml.bare." in xml  # gateway XML without <tool_calls>
    assert "~&lt;&lt;｜DSML｜function_calls&gt;" in dsml  # doubled_lt
    assert "~stray_value_close" in glm and "~doubled_key_open" in glm and "imply_open:" in glm  # GLM-5
    # and a strict machine has none of them
    from callsieve.machine import compose

    strict = compose(callsieve.grammar.resolve(["qwen3_coder", "dsml", "glm45", "xml"]), True, strict=True)
    names = strict.decl.state_names()
    assert not [n for n in names if ".bare." in n]
    assert not [t for t in strict.decl.transitions if "imply_value_close" in t.actions or "value_quote" in t.actions]
    assert not [k for k in strict.hits if "~" in k]
    assert not [t for t in strict.decl.transitions if any(a.startswith("imply_open:") for a in t.actions)]


@pytest.mark.parametrize("policy", ["text", "drop", "raise"])
def test_an_overflowed_block_that_is_a_deviation_is_text_in_order(policy: str) -> None:
    """Found by the differential test: a wrapper-less block past max_block_chars was
    released as text but its rest was dropped under "drop", out of order."""
    doc = '<‖‖DSML‖‖ invoke name="f">\n```\n'
    for chunked in ([doc], ['<‖‖DSML‖‖ invoke name="f">', "\n```\n"], list(doc)):
        events = run(chunked, dialects=["dsml"], on_malformed=policy, max_block_chars=1)
        assert "".join(e.raw for e in events) == doc
        assert texts(events) == doc and codes(events) == ["block_too_large"]


# ---------------------------------------------------------------- repeated parameters
ARRAY_TOOLS = [{"type": "function", "function": {"name": "f", "parameters": {"properties": {
    "p": {"type": "array", "items": {"type": "integer"}}, "q": {"type": "string"}, "s": {"type": "list"}}}}}]


@pytest.mark.parametrize("doc, args", [
    ('<tool_calls><invoke name="f"><parameter name="p">1</parameter><parameter name="q">x</parameter>'
     '<parameter name="p">2</parameter></invoke></tool_calls>', {"q": "x", "p": [1, 2]}),
    ('<｜DSML｜tool_calls><｜DSML｜invoke name="f"><｜DSML｜parameter name="s" string="true">a</｜DSML｜parameter>'
     '<｜DSML｜parameter name="s" string="true">b</｜DSML｜parameter></｜DSML｜invoke></｜DSML｜tool_calls>', {"s": ["a", "b"]}),
    ('<｜DSML｜tool_calls><｜DSML｜invoke name="f"><｜DSML｜parameter name="p" string="false">3</｜DSML｜parameter>'
     '<｜DSML｜parameter name="p" string="false">4</｜DSML｜parameter></｜DSML｜invoke></｜DSML｜tool_calls>', {"p": [3, 4]}),
])
def test_a_parameter_repeated_under_an_array_schema_becomes_an_array(doc: str, args: dict[str, Any]) -> None:
    for size in (1, 4, len(doc)):
        events = run(cut(doc, size), tools=ARRAY_TOOLS)
        assert calls(events) == [("f", args)] and codes(events) == ["repeated_param_array"]
        deltas_match(events)
    for kw in ({"strict": True}, {}):  # strict, or no schema to say it is an array: given twice is malformed
        events = run([doc], tools=ARRAY_TOOLS if kw else None, **kw)
        assert calls(events) == [] and codes(events) == ["malformed_block"]


def test_a_parameter_given_once_under_an_array_schema_is_typed_as_before() -> None:
    doc = '<tool_calls><invoke name="f"><parameter name="p">[1, 2]</parameter><parameter name="q">x</parameter></invoke></tool_calls>'
    events = run(cut(doc, 3), tools=ARRAY_TOOLS)
    assert calls(events) == [("f", {"p": [1, 2], "q": "x"})] and codes(events) == []
    deltas_match(events)


# ---------------------------------------------------------------- the contract, strict
@given(st.data())
def test_contract_holds_under_strict_no_loss_chunking_and_runners_agree(data: st.DataObject) -> None:
    """Points 2 and 3 and the differential test with every tolerance off (they run
    with tolerances on in test_contract.py and test_differential.py)."""
    from strategies import soup

    doc = data.draw(soup())
    kw: dict[str, Any] = dict(strict=True, on_malformed=data.draw(st.sampled_from(["text", "drop"])),
                              tools=data.draw(st.sampled_from([None, tools("f", k="integer")])))
    whole = merged(run([doc], **kw))
    assert merged(run(data.draw(chunks(doc)), **kw)) == whole
    assert merged(run(data.draw(chunks(doc)), runner="reference", **kw)) == whole
    assert "".join(e.raw for e in run(data.draw(chunks(doc)), **kw)) == doc
    # and no tolerance code ever comes out of a strict sieve
    tolerated = {"missing_block_open", "implied_param_close", "implied_call_close", "dsml_variant",
                 "python_literal", "repeated_param_array", "unwrapped_arguments", "doubled_lt",
                 "missing_value_open", "doubled_key_open", "stray_value_close",
                 # issue 24, round two's rest
                 "json_invoke_body", "call_open_as_key", "literal_newline", "double_escaped_value", "function_wrapper",
                 "generic_wrapper", "orphan_token", "mixed_tags", "arbitrary_prefix"}
    assert not tolerated & set(codes(whole))


@given(st.data())
def test_runners_agree_on_tolerated_documents(data: st.DataObject) -> None:
    """The differential test over documents with a tolerated marker left out, noise
    inserted, small limits: the compiled runner does what the transitions machine does."""
    name, params, _args = data.draw(call_of(QWEN))
    markup = data.draw(st.sampled_from([
        _qwen(name, params, "both", 0), _qwen(name, params, "open", 0), _qwen(name, params, "param", 0),
        _dsml([(name, params)], "invoke", 0), _dsml([(name, params)], "both", 0),
        "<｜｜｜｜｜DSML｜｜｜｜｜tool_calls>\n" + INV + "\n</DSML tool_calls>",
        f'<invoke name="{name}">\n<parameter name="k">v</parameter>\n</invoke>\n</tool_calls>',  # xml, no <tool_calls>
        f"<tool_call>{name}<arg_key>k</arg_key></arg_key><arg_value>v</arg_value></tool_call>",  # doubled_key_close
        f'<<｜DSML｜tool_calls><<｜DSML｜invoke name="{name}"><｜DSML｜parameter name="k" string="true">v'
        "</｜DSML｜parameter><</｜DSML｜invoke><</｜DSML｜tool_calls>",  # doubled_lt
        f'<<｜DSML｜invoke name="{name}">\n</｜DSML｜invoke>',  # doubled_lt, no block
        f"<tool_call>{name}\n<arg_key>k</arg_key>\nv</arg_value>\n</tool_call>",  # missing_value_open
        f"<tool_call>{name}<arg_key>k</arg_key><b>v</arg_value></tool_call>",  # missing_value_open, a tag read again
        f"<tool_call>{name}<arg_key><arg_key>k</arg_key><arg_value>v</arg_value></tool_call>",  # doubled_key_open
        f"<tool_call>{name}</arg_value></tool_call>",  # stray_value_close
        f'<|channel|>commentary to=functions.{name}json<|message|>{{"k": "v"}}<|call|>',  # glued_content_type
    ]))
    from strategies import soup

    noise = data.draw(soup(4))
    at = data.draw(st.integers(0, len(markup)))
    doc = "x " + markup[:at] + noise + markup[at:]
    kw: dict[str, Any] = dict(on_malformed=data.draw(st.sampled_from(["text", "drop", "raise"])),
                              max_block_chars=data.draw(st.sampled_from([1 << 20, 7, 40])),
                              tools=data.draw(st.sampled_from([None, tools(name, k="array")])))
    compiled = merged(run(data.draw(chunks(doc)), **kw))
    reference = merged(run(data.draw(chunks(doc)), runner="reference", **kw))
    assert compiled == reference


# ---------------------------------------------------------------- Kimi K2 call ids (§12)
KIMI_TOOLS = [{"type": "function", "function": {"name": n, "parameters": {"properties": {}}}} for n in ("exec", "read_file")]


@pytest.mark.parametrize("wire, name", [("functionsexec5", "exec"), ("functions_read_file_3", "read_file"),
                                        ("exec00003", "exec"), ("functions.exec:1", "exec")])
def test_kimi_call_ids_written_otherwise_name_a_known_tool(wire: str, name: str) -> None:
    doc = (f"<|tool_calls_section_begin|><|tool_call_begin|>{wire}<|tool_call_argument_begin|>"
           '{"a": 1}<|tool_call_end|><|tool_calls_section_end|>')
    for size in (1, 5, len(doc)):
        events = run(cut(doc, size), tools=KIMI_TOOLS)
        ((got, args),) = calls(events)
        assert (got, args) == (name, {"a": 1})
        assert [e.id for e in events if isinstance(e, callsieve.ToolCall)] == [wire]
        assert codes(events) == ([] if wire.startswith("functions.") else ["call_id_variant"])
    # strict: an id that is not functions.NAME:IDX names nothing (the block is text)
    strict = run([doc], tools=KIMI_TOOLS, strict=True)
    assert calls(strict) == ([("exec", {"a": 1})] if wire.startswith("functions.") else [])
    # without a schema nothing says which reading is right: the id's name as written,
    # and a Diagnostic that the id was not the format's (issue 23)
    plain = run([doc])
    assert calls(plain)[0][0] == ("exec" if wire.startswith("functions.") else wire)
    assert codes(plain) == ([] if wire.startswith("functions.") else ["call_id_as_written"])


def test_a_kimi_id_whose_other_reading_names_no_known_tool_stays_as_written() -> None:
    doc = ("<|tool_calls_section_begin|><|tool_call_begin|>functionsnope5<|tool_call_argument_begin|>"
           "{}<|tool_call_end|><|tool_calls_section_end|>")
    events = run([doc], tools=KIMI_TOOLS)
    assert calls(events) == [("functionsnope5", {})] and codes(events) == ["call_id_as_written", "unknown_tool"]


KIMI_ID = ("<|tool_calls_section_begin|><|tool_call_begin|>{wire}<|tool_call_argument_begin|>"
           '{{"a": 1}}<|tool_call_end|><|tool_calls_section_end|>')


@pytest.mark.parametrize("runner", ["compiled", "reference"])
@pytest.mark.parametrize("strict", [False, True])
@pytest.mark.parametrize("wire", ["0", " 12 ", "functions.0:1", "functions.:0", "7:2"])
def test_a_kimi_id_that_holds_no_name_names_no_call(wire: str, strict: bool, runner: str) -> None:
    """Issue 23: an id ``0`` made a call named "0". A name is never taken from what is
    no name (digits alone): the block is no call, its markup text, with a Diagnostic."""
    doc = KIMI_ID.format(wire=wire)
    for size in (1, 4, len(doc)):
        events = run(cut(doc, size), dialects=["kimi_k2"], strict=strict, runner=runner)
        assert calls(events) == [] and texts(events) == doc
        assert codes(events) == ["malformed_block"]
        assert not [e for e in events if isinstance(e, (callsieve.ToolCallStart, callsieve.ToolCallDelta))]


@pytest.mark.parametrize("runner", ["compiled", "reference"])
@pytest.mark.parametrize("wire, name", [("functions.get_weather", "get_weather"), ("get_weather", "get_weather"),
                                        ("functionsexec5", "functionsexec5"), ("get_weather:3", None),
                                        ("functions.mcp.read-file:7", None)])
def test_a_kimi_id_outside_the_format_is_read_as_written_with_a_diagnostic(wire: str, name: str | None, runner: str) -> None:
    """Issue 23: ids other than ``functions.NAME:IDX`` (``NAME:IDX``, as SGLang and vLLM
    read it, included) were accepted silently; now with ``call_id_as_written``; under
    strict they make no call."""
    doc = KIMI_ID.format(wire=wire)
    for size in (1, 4, len(doc)):
        events = run(cut(doc, size), dialects=["kimi_k2"], runner=runner)
        ((got, args),) = calls(events)
        assert args == {"a": 1} and [e.id for e in events if isinstance(e, callsieve.ToolCall)] == [wire]
        if name is None:  # the format
            assert codes(events) == [] and got == wire.rsplit(":", 1)[0].removeprefix("functions.")
        else:
            assert (got, codes(events)) == (name, ["call_id_as_written"])
    strict = run([doc], dialects=["kimi_k2"], strict=True, runner=runner)
    assert len(calls(strict)) == (1 if name is None else 0)


# ---------------------------------------------------------------- gateway XML without <tool_calls>
XINV = '<invoke name="f">\n<parameter name="k">v</parameter>\n</invoke>'


def test_gateway_xml_invokes_before_a_closing_wrapper_are_calls() -> None:
    doc = "ok " + XINV + "\n" + XINV + "\n</tool_calls> bye"
    for size in (1, 4, len(doc)):
        events = run(cut(doc, size))
        assert calls(events) == [("f", {"k": "v"})] * 2 and texts(events) == "ok  bye"
        assert codes(events) == ["missing_block_open"]
        deltas_match(events)
    # the close is the evidence: nothing streamed before it was read
    s = callsieve.Sieve(id_prefix="c")
    end = doc.index("</tool_calls>") + len("</tool_calls>")
    before = [e for i in range(end - 1) for e in s.feed(doc[i])]
    assert not [e for e in before if isinstance(e, (callsieve.ToolCallStart, callsieve.ToolCallDelta))]
    assert [e.name for e in s.feed(doc[end - 1 :]) + s.close() if isinstance(e, callsieve.ToolCallStart)] == ["f", "f"]
    assert calls(run([doc], strict=True)) == []


@pytest.mark.parametrize("doc", ["ok " + XINV + " bye", "ok " + XINV, 'see <invoke name="x"> here'])
def test_gateway_xml_invokes_without_a_closing_wrapper_are_text_and_stream_nothing(doc: str) -> None:
    for policy in ("text", "drop", "raise"):
        events = run(cut(doc, 3), on_malformed=policy)
        assert calls(events) == [] and texts(events) == doc
        assert not [e for e in events if isinstance(e, (callsieve.ToolCallStart, callsieve.ToolCallDelta))]


# ---------------------------------------------------------------- GLM-5: </arg_key> twice
@pytest.mark.parametrize("nl", ["", "\n"])
def test_glm_a_doubled_key_close_is_read_once(nl: str) -> None:
    doc = f"ok <tool_call>get_weather{nl}<arg_key>city</arg_key>{nl}</arg_key>{nl}<arg_value>北京</arg_value>{nl}</tool_call> bye"
    for size in (1, 3, len(doc)):
        events = run(cut(doc, size))
        assert calls(events) == [("get_weather", {"city": "北京"})] and texts(events) == "ok  bye"
        (d,) = diags(events, "doubled_key_close")
        assert d.offset == doc.index("</arg_key>", doc.index("</arg_key>") + 1)
        assert codes(events) == ["doubled_key_close"]
        assert "".join(e.raw for e in events) == doc
        deltas_match(events)
    strict = run(cut(doc, 2), strict=True)
    assert calls(strict) == [] and released(strict) == doc and codes(strict) == ["malformed_block"]


@pytest.mark.parametrize("doc", [
    "<tool_call>f<arg_key>k</arg_key><arg_value>a</arg_key><arg_value>b</arg_value></tool_call>",
    "<tool_call>f<arg_key>k</arg_key><arg_value>a</arg_key></arg_key><arg_value>b</arg_value></tool_call>",
])
def test_glm_a_doubled_key_close_inside_a_value_is_data(doc: str) -> None:
    value = doc[doc.index("<arg_value>") + len("<arg_value>") : doc.rindex("</arg_value>")]
    for strict in (False, True):
        events = run(cut(doc, 2), strict=strict)
        assert calls(events) == [("f", {"k": value})] and codes(events) == []


@pytest.mark.parametrize("doc", ["Close keys with </arg_key><arg_value> then.", "```\n</arg_key></arg_key><arg_value>\n```"])
def test_glm_a_doubled_key_close_in_prose_or_a_fence_is_text(doc: str) -> None:
    events = run(cut(doc, 3))
    assert texts(events) == doc and calls(events) == [] and codes(events) == []


# ---------------------------------------------------------------- harmony: json glued to the recipient
GLUED = '<|channel|>commentary to=functions.shelljson<|message|>{"cmd": "ls"}<|call|>'


def test_harmony_a_recipient_glued_to_json_is_the_call_without_it() -> None:
    doc = "<|channel|>analysis<|message|>List.<|end|><|start|>assistant" + GLUED
    shell = tools("shell", cmd="string")
    # a reading that renames the call needs a known tool (issue 23): none, no rename
    assert calls(run([doc])) == [("shelljson", {"cmd": "ls"})] and codes(run([doc])) == []
    for size in (1, 5, len(doc)):
        events = run(cut(doc, size), tools=shell)
        assert calls(events) == [("shell", {"cmd": "ls"})]
        (d,) = diags(events, "glued_content_type")
        assert d.offset == doc.index("<|start|>assistant<|channel|>commentary")
        assert codes(events) == ["glued_content_type"]
        assert [e.name for e in events if isinstance(e, callsieve.ToolCallStart)] == ["shell"]
        assert "".join(e.raw for e in events) == doc
        deltas_match(events)
    strict = run(cut(doc, 3), strict=True, tools=shell)
    assert calls(strict) == [("shelljson", {"cmd": "ls"})] and codes(strict) == ["unknown_tool"]


@pytest.mark.parametrize("doc", [
    '<|channel|>commentary to=functions.shelljson <|constrain|>json<|message|>{}<|call|>',  # a content type follows
    '<|channel|>commentary to=functions.shelljson<|constrain|>json<|message|>{}<|call|>',
    '<|channel|>commentary to=functions.shelljson json<|message|>{}<|call|>',  # a format word follows
    '<|channel|>commentary to=functions.to_json<|message|>{}<|call|>',  # json is a word of the name
    '<|channel|>commentary to=functions.json<|message|>{}<|call|>',  # nothing before it
    '<|start|>assistant to=functions.shelljson<|channel|>commentary<|message|>{}<|call|>',  # the role part
])
def test_harmony_a_name_ending_in_json_keeps_it_where_the_header_says_otherwise(doc: str) -> None:
    name = doc.split("to=functions.", 1)[1].split("<", 1)[0].split(" ", 1)[0]
    events = run(cut(doc, 4))
    assert calls(events) == [(name, {})] and codes(events) == []


def test_harmony_with_tools_the_glued_reading_must_name_a_known_tool() -> None:
    doc = GLUED
    assert calls(run([doc], tools=tools("shell", cmd="string"))) == [("shell", {"cmd": "ls"})]
    known = run([doc], tools=tools("shelljson", cmd="string"))  # the name as written is a known tool
    assert calls(known) == [("shelljson", {"cmd": "ls"})] and codes(known) == []
    neither = run([doc], tools=tools("other"))
    assert calls(neither) == [("shelljson", {"cmd": "ls"})] and codes(neither) == ["unknown_tool"]


def test_harmony_a_glued_recipient_in_prose_or_a_final_message_is_text() -> None:
    doc = "<|channel|>final<|message|>Write to=functions.shelljson to call it.<|return|>"
    events = run(cut(doc, 3))
    assert calls(events) == [] and texts(events) == "Write to=functions.shelljson to call it." and codes(events) == []


# ---------------------------------------------------------------- Qwen3.6: malformed </parameter>
@pytest.mark.parametrize("tag", ["</parameter/>", "</parameter1>", "</parameter_function>"])
def test_qwen36_malformed_parameter_end_tags_close_the_value(tag: str) -> None:
    doc = f"<tool_call>\n<function=f>\n<parameter=a>\nx\n{tag}\n<parameter=b>\ny\n{tag}\n</function>\n</tool_call> ok"
    for size in (1, 3, len(doc)):
        events = run(cut(doc, size))
        assert calls(events) == [("f", {"a": "x", "b": "y"})] and texts(events) == " ok"
        got = diags(events, "param_close_variant")
        assert [d.offset for d in got] == [doc.index(tag), doc.index(tag, doc.index(tag) + 1)]
        assert codes(events) == ["param_close_variant"] * 2
        deltas_match(events)
    strict = run(cut(doc, 4), strict=True)
    assert calls(strict) == [] and codes(strict) == ["unterminated_block"]


@pytest.mark.parametrize("doc, value", [
    ("<tool_call>\n<function=f>\n<parameter=a>\nx </parameter1> z\n</parameter>\n</function>\n</tool_call>", "x </parameter1> z"),
    ("<tool_call>\n<function=f>\n<parameter=a>\n</parameter/>y\n</parameter>\n</function>\n</tool_call>", "</parameter/>y"),
    ('<｜DSML｜tool_calls><｜DSML｜invoke name="f"><｜DSML｜parameter name="a" string="true">x </DSML parameter> z'
     "</｜DSML｜parameter></｜DSML｜invoke></｜DSML｜tool_calls>", "x </DSML parameter> z"),
])
def test_a_close_variant_that_is_data_is_no_deviation(doc: str, value: str) -> None:
    for size in (1, 5, len(doc)):
        events = run(cut(doc, size))
        assert calls(events) == [("f", {"a": value})] and codes(events) == []


# ---------------------------------------------------------------- DSML: a doubled <
DOUBLED = 'ok <<｜DSML｜tool_calls><｜DSML｜invoke name="f"></｜DSML｜invoke></｜DSML｜tool_calls> bye'


@pytest.mark.parametrize("doc, n, also", [
    (DOUBLED, 1, []),
    ('ok ＜<｜DSML｜tool_calls><｜DSML｜invoke name="f"></｜DSML｜invoke></｜DSML｜tool_calls> bye', 1, []),  # fullwidth
    ('ok <<｜DSML｜invoke name="f"></｜DSML｜invoke> bye', 1, ["missing_block_open"]),  # an invoke without its block
    ('ok <｜DSML｜tool_calls><<｜DSML｜invoke name="f"><<｜DSML｜parameter name="k" string="true">v</｜DSML｜parameter>'
     "<</｜DSML｜invoke><</｜DSML｜tool_calls> bye", 4, []),  # the inner markers
])
def test_a_doubled_lt_before_a_dsml_marker_is_markup_with_doubled_lt(doc: str, n: int, also: list[str]) -> None:
    args = {"k": "v"} if "parameter" in doc else {}
    for runner in ("compiled", "reference"):
        for size in (1, 2, 3, len(doc)):
            events = run(cut(doc, size), runner=runner)
            assert calls(events) == [("f", args)] and texts(events) == "ok  bye"
            got = diags(events, "doubled_lt")
            assert codes(events) == also + ["doubled_lt"] * n
            stray = [k for k in range(len(doc) - 1) if doc[k] in "<＜" and doc[k + 1] == "<"]
            assert [d.offset for d in got] == stray
            assert "".join(e.raw for e in events) == doc
            deltas_match(events)


def test_a_doubled_lt_with_a_dsml_misspelling_reports_both() -> None:
    doc = 'ok <<｜｜｜｜｜DSML｜｜｜｜｜tool_calls><｜DSML｜invoke name="f"></｜DSML｜invoke></｜DSML｜tool_calls>'
    events = run(cut(doc, 2))
    assert calls(events) == [("f", {})] and codes(events) == ["doubled_lt", "dsml_variant"]
    assert [d.offset for d in events if isinstance(d, callsieve.Diagnostic)] == [3, 3]


def test_under_strict_a_doubled_lt_is_text_before_a_block_and_malformed_inside_one() -> None:
    events = run(cut(DOUBLED, 3), strict=True)
    assert calls(events) == [("f", {})] and texts(events) == "ok < bye" and codes(events) == []
    inner = '<｜DSML｜tool_calls><<｜DSML｜invoke name="f"></｜DSML｜invoke></｜DSML｜tool_calls>'
    strict = run(cut(inner, 3), strict=True)
    assert calls(strict) == [] and texts(strict) == inner and codes(strict) == ["malformed_block"]
    assert calls(run([inner])) == [("f", {})]


@pytest.mark.parametrize("doc, reported", [
    ("a << b <<< c, x <<b> <<｜DSML｜ tools>", []),  # no DSML marker after it: text as written
    ("See:\n```\n" + DOUBLED + "\n```\n", ["markup_in_code"]),  # (the opener in code: issue 22)
    ("Inline `<<｜DSML｜tool_calls>` here", ["markup_in_code"]),
])
def test_a_doubled_lt_without_a_dsml_marker_after_it_or_in_code_is_text(doc: str, reported: list[str]) -> None:
    for size in (1, 2, len(doc)):
        events = run(cut(doc, size))
        assert texts(events) == doc and calls(events) == [] and codes(events) == reported


@pytest.mark.parametrize("value", ["a<", "<<｜DSML｜tool_calls>", "x <<｜DSML｜invoke name=\"g\">"])
def test_a_doubled_lt_in_a_value_is_data(value: str) -> None:
    doc = (f'<｜DSML｜tool_calls><｜DSML｜invoke name="f"><｜DSML｜parameter name="k" string="true">{value}'
           "</｜DSML｜parameter></｜DSML｜invoke></｜DSML｜tool_calls>")
    for size in (1, 3, len(doc)):
        events = run(cut(doc, size))
        assert calls(events) == [("f", {"k": value})] and codes(events) == []


# ---------------------------------------------------------------- GLM-5: <arg_value> left out
@pytest.mark.parametrize("nl", ["", "\n"])
def test_glm_a_missing_value_open_begins_the_value_where_it_was_expected(nl: str) -> None:
    doc = (f"ok <tool_call>get_weather{nl}<arg_key>city</arg_key>{nl}北京</arg_value>{nl}"
           f"<arg_key>days</arg_key>{nl}<arg_value>3</arg_value>{nl}</tool_call> bye")
    for runner in ("compiled", "reference"):
        for size in (1, 3, len(doc)):
            events = run(cut(doc, size), runner=runner)
            assert calls(events) == [("get_weather", {"city": "北京", "days": 3})] and texts(events) == "ok  bye"
            (d,) = diags(events, "missing_value_open")
            assert d.offset == doc.index("北京")
            assert codes(events) == ["missing_value_open"]
            assert "".join(e.raw for e in events) == doc
            deltas_match(events)
    strict = run(cut(doc, 2), strict=True)
    assert calls(strict) == [] and released(strict) == doc and codes(strict) == ["malformed_block"]


@pytest.mark.parametrize("value, args", [
    ("<b>x</b>", {"k": "<b>x</b>"}),  # a value that begins like a tag: read again as the value
    ("", {"k": ""}),
    ('{"a": [1]}', {"k": {"a": [1]}}),  # JSON when it parses, as usual
])
def test_glm_a_missing_value_open_before_any_value(value: str, args: dict[str, Any]) -> None:
    doc = f"<tool_call>f<arg_key>k</arg_key>{value}</arg_value></tool_call>"
    for size in (1, 2, len(doc)):
        events = run(cut(doc, size))
        assert calls(events) == [("f", args)] and codes(events) == ["missing_value_open"]
        deltas_match(events)


# ---------------------------------------------------------------- GLM: <arg_key> twice
@pytest.mark.parametrize("nl", ["", "\n"])
def test_glm_a_doubled_key_open_is_read_once(nl: str) -> None:
    doc = f"ok <tool_call>get_weather{nl}<arg_key>{nl}<arg_key>city</arg_key>{nl}<arg_value>北京</arg_value>{nl}</tool_call> bye"
    for runner in ("compiled", "reference"):
        for size in (1, 3, len(doc)):
            events = run(cut(doc, size), runner=runner)
            assert calls(events) == [("get_weather", {"city": "北京"})] and texts(events) == "ok  bye"
            (d,) = diags(events, "doubled_key_open")
            assert d.offset == doc.index("<arg_key>", doc.index("<arg_key>") + 1)
            assert codes(events) == ["doubled_key_open"]
            assert "".join(e.raw for e in events) == doc
            deltas_match(events)
    strict = run(cut(doc, 2), strict=True)
    assert calls(strict) == [] and released(strict) == doc and codes(strict) == ["malformed_block"]


# ---------------------------------------------------------------- GLM: </arg_value> after a zero-argument name
@pytest.mark.parametrize("nl", ["", "\n"])
def test_glm_a_stray_value_close_after_a_zero_argument_name(nl: str) -> None:
    doc = f"ok <tool_call>get_time{nl}</arg_value>{nl}</tool_call> bye"
    for runner in ("compiled", "reference"):
        for size in (1, 3, len(doc)):
            events = run(cut(doc, size), runner=runner)
            assert calls(events) == [("get_time", {})] and texts(events) == "ok  bye"
            (d,) = diags(events, "stray_value_close")
            assert d.offset == doc.index("</arg_value>")
            assert codes(events) == ["stray_value_close"]
            assert "".join(e.raw for e in events) == doc
            deltas_match(events)
    strict = run(cut(doc, 2), strict=True)
    assert calls(strict) == [] and released(strict) == doc and codes(strict) == ["malformed_block"]


def test_glm_a_stray_value_close_is_only_read_before_the_block_close() -> None:
    # after a value, a second </arg_value> is the value's data, as before
    doc = "<tool_call>f<arg_key>a</arg_key><arg_value>1</arg_value></arg_value></tool_call>"
    for strict in (False, True):
        events = run(cut(doc, 3), strict=strict)
        assert calls(events) == [("f", {"a": "1</arg_value>"})] and codes(events) == []
    # before an argument, it is no grammar
    doc = "<tool_call>f</arg_value><arg_key>a</arg_key><arg_value>1</arg_value></tool_call>"
    events = run([doc])
    assert calls(events) == [] and released(events) == doc and codes(events) == ["malformed_block"]


@pytest.mark.parametrize("markup", [
    "<tool_call>get_time</arg_value></tool_call>",
    "<tool_call>f<arg_key>k</arg_key>v</arg_value></tool_call>",
    "<tool_call>f<arg_key><arg_key>k</arg_key><arg_value>v</arg_value></tool_call>",
    "<<｜DSML｜tool_calls>" + INV + "</｜DSML｜tool_calls>",
])
@pytest.mark.parametrize("where", ["fence", "span", "value", "prose"])
def test_the_new_tolerances_in_a_fence_a_code_span_a_value_or_prose_stay_text_or_data(markup: str, where: str) -> None:
    if where == "fence":
        doc = f"Example:\n```\n{markup}\n```\nafter"
    elif where == "span":
        doc = f"Use `{markup}` to call."
    elif where == "prose":
        doc = "Write " + markup.split(">", 1)[1] + " like that."  # the markup without its opener
    else:
        doc = "<tool_call>\n" + json.dumps({"name": "w", "arguments": {"c": markup}}, ensure_ascii=False) + "\n</tool_call>"
    for size in (1, 4, len(doc)):
        events = run(cut(doc, size))
        if where == "value":
            assert calls(events) == [("w", {"c": markup})] and codes(events) == []
        elif where == "prose" and "DSML" in markup:
            # the invoke after the stray block open stands in prose: DSML's own tolerance
            assert calls(events) == [("f", {"k": "v"})] and codes(events) == ["missing_block_open"]
        else:
            # (in code, the opener is reported as shown and not run: issue 22)
            assert calls(events) == [] and texts(events) == doc
            assert codes(events) == (["markup_in_code"] if where in ("fence", "span") else [])


GLM = REGISTRY["glm45"]
#: every built-in dialect's real openers (the test runs GLM alone and with all enabled)
_REAL_OPENERS = callsieve.Sieve().machine.openers
assert _REAL_OPENERS is not None
GLM_CODE = {"value": "missing_value_open", "key": "doubled_key_open", "stray": "stray_value_close"}


@given(st.data())
def test_dropping_or_doubling_a_tolerated_glm_marker_keeps_the_calls_and_says_so(data: st.DataObject) -> None:
    """GLM documents rendered by the grammar (GLM-4.5 or GLM-5 spacing), one call
    changed as models write it: one <arg_value> left out, one <arg_key> doubled, or a
    zero-argument call with a stray </arg_value>. The same calls and text, plus that
    tolerance's Diagnostic; under strict, not the same."""
    how = data.draw(st.sampled_from(sorted(GLM_CODE)))
    drawn = data.draw(st.lists(call_of(GLM), min_size=1, max_size=3))
    victim = data.draw(st.integers(0, len(drawn) - 1))
    variant = data.draw(st.integers(0, 1))
    if how == "stray":
        name, _params, _args = drawn[victim]
        drawn[victim] = (name, [], {})
    elif not drawn[victim][1]:
        how = "stray"  # no parameter to change
    pieces: list[str] = []
    text: list[str] = []
    for k, (name, params, _args) in enumerate(drawn):
        prose = data.draw(DOT_PROSE)
        pieces.append(prose)
        text.append(prose)
        block = GLM.render([(name, params)], variant)
        if k == victim and how == "stray":
            block = block.replace("</tool_call>", "</arg_value></tool_call>")
        elif k == victim and how == "key":
            at = data.draw(st.integers(0, block.count("<arg_key>") - 1))
            i = [m for m in range(len(block)) if block.startswith("<arg_key>", m)][at]
            block = block[:i] + "<arg_key>" + block[i:]
        elif k == victim:
            # a value that begins with whitespace or a start character cannot lose its
            # opener unchanged: spaces before it are markup, a tag there is read again;
            # nor one that holds a real opener of an enabled dialect: a value assumed
            # opened ends there (its evidence is its own markup, never a block's)
            opens = [m for m in range(len(block)) if block.startswith("<arg_value>", m)
                     and block[m + len("<arg_value>") : m + len("<arg_value>") + 1] not in (" ", "\t", "\r", "\n", "<", "＜")
                     and _REAL_OPENERS.find(block[m:]) < 0]  # (a value may hold "</arg_value>")
            if not opens:
                how = "key"
                i = block.index("<arg_key>")
                block = block[:i] + "<arg_key>" + block[i:]
            else:
                i = data.draw(st.sampled_from(opens))
                block = block[:i] + block[i + len("<arg_value>"):]
        pieces.append(block)
    tail = data.draw(DOT_PROSE)
    pieces.append(tail)
    text.append(tail)
    doc = "".join(pieces)
    expected = [(n, a) for n, _p, a in drawn]
    for kw in ({"dialects": ["glm45"]}, {}):
        events = run(data.draw(chunks(doc)), **kw)
        assert calls(events) == expected
        assert texts(events) == "".join(text)
        assert codes_besides_heredocs(events) == [GLM_CODE[how]]
        assert codes(events).count("unterminated_heredoc") == heredocs_said(GLM, drawn)
        assert "".join(e.raw for e in events) == doc
        deltas_match(events)
    strict = run([doc], dialects=["glm45"], strict=True)
    assert calls(strict) != expected or codes(strict)


def test_a_heredoc_value_is_said_apart_from_a_dropped_qwen3_coder_marker() -> None:
    # Found by the property above: its raw value <<';' opens a heredoc never closed.
    doc = ".<function=_>\n<parameter=_>\n<<';'\n</parameter>\n</function>\n</tool_call>."
    for kw in ({"dialects": ["qwen3_coder"]}, {}):
        for n in (len(doc), 1, 3):
            events = run([doc[i : i + n] for i in range(0, len(doc), n)], **kw)
            assert calls(events) == [("_", {"_": "<<';'"})]
            assert codes(events) == ["missing_block_open", "unterminated_heredoc"]
