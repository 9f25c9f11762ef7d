"""What real models emit, round two (issue 24): each deviation, its Diagnostic, what
``strict=True`` does with it, whole and chunked, on both runners; the same markup in a
fence, a code span or a value stays text or data. (Round one: test_tolerance.py.)"""

from __future__ import annotations

import json
import re
from typing import Any

import pytest
from hypothesis import assume, given, strategies as st

import callsieve
from callsieve.grammar import REGISTRY
from strategies import PROSE, call_of, calls, chunks, codes, codes_besides_heredocs, heredocs_said, released, run, texts


def diags(events: list[callsieve.Event], code: str) -> list[callsieve.Diagnostic]:
    return [e for e in events if isinstance(e, callsieve.Diagnostic) and e.code == code]


def cut(doc: str, size: int) -> list[str]:
    return [doc[i : i + size] for i in range(0, len(doc), size)]


def tools(*names: str, **props: str) -> list[dict[str, Any]]:
    return [{"type": "function", "function": {"name": n, "parameters": {"type": "object", "properties": {
        k: {"type": t} for k, t in props.items()}}}} for n in names]


def abandoned(events: list[callsieve.Event]) -> list[callsieve.ToolCallAbandoned]:
    return [e for e in events if isinstance(e, callsieve.ToolCallAbandoned)]


def deltas_match(events: list[callsieve.Event]) -> None:
    for c in (e for e in events if isinstance(e, callsieve.ToolCall)):
        got = "".join(e.arguments for e in events if isinstance(e, callsieve.ToolCallDelta) and e.index == c.index)
        assert got == c.arguments_json


def each_way(doc: str, **kw: Any) -> list[list[callsieve.Event]]:
    """``doc`` whole, in chunks of 3 and one character at a time, on both runners."""
    return [run(cut(doc, size), runner=runner, **kw)
            for runner in ("compiled", "reference") for size in (len(doc) or 1, 3, 1)]


# ---------------------------------------------------------------- 1. the close stripped at the end
HARMONY = '<|channel|>commentary to=functions.get_weather <|constrain|>json<|message|>{"city": "Paris"}'
EOF_CLOSED = [
    # (document, the calls, the codes before missing_block_close)
    (HARMONY, [("get_weather", {"city": "Paris"})], []),
    ('<|start|>assistant to=functions.f<|channel|>commentary json<|message|>{"a": [1]}', [("f", {"a": [1]})], []),
    ('Sure. <tool_call>\n{"name": "f", "arguments": {"a": 1}}', [("f", {"a": 1})], []),
    ('<minimax:tool_call>\n<invoke name="f">\n<parameter name="k">v</parameter>\n</invoke>', [("f", {"k": "v"})], []),
    ('<|tool_calls_section_begin|><|tool_call_begin|>functions.f:0<|tool_call_argument_begin|>{"a": 1}'
     '<|tool_call_end|>', [("f", {"a": 1})], []),
    ('<|tool_calls_section_begin|><|tool_call_begin|>functions.f:0<|tool_call_argument_begin|>{"a": 1}',
     [("f", {"a": 1})], []),
    # Kimi's bare <|tool_call_begin|>: no section, no <|tool_call_end|> (llama.cpp, real output)
    ('Let me look. <|tool_call_begin|>functions.f:0<|tool_call_argument_begin|>{"a": 1}',
     [("f", {"a": 1})], ["missing_block_open"]),
    ("<tool_call>\n<function=f>\n<parameter=a>\nx\n</parameter>\n</function>", [("f", {"a": "x"})], []),
    ('<tool_calls><invoke name="f"><parameter name="a">x</parameter></invoke>', [("f", {"a": "x"})], []),
    ('<｜DSML｜tool_calls><｜DSML｜invoke name="f"><｜DSML｜parameter name="a" string="true">x</｜DSML｜parameter>'
     "</｜DSML｜invoke>", [("f", {"a": "x"})], []),
    ('<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>f<｜tool▁sep｜>{"a": 1}<｜tool▁call▁end｜>', [("f", {"a": 1})], []),
    ('<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>f\n```json\n{"a": 1}\n```',
     [("f", {"a": 1})], []),
]


@pytest.mark.parametrize("doc, want, before", EOF_CLOSED)
def test_a_block_whose_last_call_is_complete_is_read_as_closed_at_the_end(
        doc: str, want: list[tuple[str, dict[str, Any]]], before: list[str]) -> None:
    for tail in ("", "\n"):
        whole = doc + tail
        for events in each_way(whole):
            assert calls(events) == want and not abandoned(events)
            assert codes(events) == before + ["missing_block_close"]
            (d,) = diags(events, "missing_block_close")
            assert d.offset == len(doc) and d.severity == "tolerated"  # where its markup ended
            assert "".join(e.raw for e in events) == whole
            assert texts(events) == whole[: whole.find("<")] * (not doc.startswith("<")) + tail
            deltas_match(events)
        # strict: the format alone; the stream ended inside the block: its call is
        # abandoned (a Kimi call with no section is no block at all there: text)
        strict = run(cut(whole, 2), strict=True)
        assert calls(strict) == [] and released(strict) == whole
        assert codes(strict) == ([] if before else ["unterminated_block"])


@pytest.mark.parametrize("doc", [
    HARMONY[:-3],                                                                  # the JSON cut short
    '<minimax:tool_call>\n<invoke name="f">\n<parameter name="k">v</parameter>\n',  # </invoke> not read
    '<minimax:tool_call>\n<invoke name="f">\n<parameter name="k">v',
    '<|tool_calls_section_begin|><|tool_call_begin|>functions.f:0<|tool_call_argument_begin|>{"a": ',
    '<｜DSML｜tool_calls><｜DSML｜invoke name="f"><｜DSML｜parameter name="a" string="true">x</｜DSML｜parameter>',
    '<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>f\n```json\n{"a": 1}\n',  # fence open
    "<tool_call>\n<function=f>\n<parameter=a>\nx\n</parameter>\n",
    "<minimax:tool_call>\n",
    '<tool_call>\n{"name": "f", "arguments": {"a": 1}}\n</tool_ca',               # a close cut short
])
def test_a_truncated_call_is_never_read_as_complete(doc: str) -> None:
    """A response cut by max_tokens: the last call is not complete, so nothing is
    assumed; what started is abandoned, as before."""
    for events in each_way(doc):
        assert calls(events) == [] and "missing_block_close" not in codes(events)
        assert released(events) == doc


def test_a_block_read_as_closed_at_the_end_keeps_its_earlier_calls_and_the_unknown_tool_rules() -> None:
    doc = ('<minimax:tool_call>\n<invoke name="f">\n</invoke>\n<invoke name="g">\n<parameter name="k">1</parameter>\n'
           "</invoke>")
    events = run(cut(doc, 4), tools=tools("f", "g", k="integer"))
    assert calls(events) == [("f", {}), ("g", {"k": 1})] and codes(events) == ["missing_block_close"]
    events = run(cut(doc, 4), tools=tools("f"), unknown_tool="text")
    # (f had streamed: it is abandoned, its markup and g's on its event, shown once)
    assert calls(events) == [] and released(events) == doc and [e.name for e in abandoned(events)] == ["f"]
    assert codes(events) == ["missing_block_close", "unknown_tool"]
    # the Kimi call without its section must name a known tool
    bare = 'ok <|tool_call_begin|>functions.f:0<|tool_call_argument_begin|>{"a": 1}'
    assert calls(run([bare], tools=tools("f"))) == [("f", {"a": 1})]
    events = run(cut(bare, 3), tools=tools("g"))
    assert calls(events) == [] and texts(events) == bare and codes(events) == ["unknown_tool"]
    assert not [e for e in events if isinstance(e, (callsieve.ToolCallStart, callsieve.ToolCallDelta))]


#: (each with the reports of markup in code: issue 22; a call's own token is no opener)
@pytest.mark.parametrize("doc, reported", [
    ("See:\n```\n" + '<tool_call>\n{"name": "f", "arguments": {}}', ["markup_in_code"]),             # an unclosed fence
    ("Type `" + '<tool_call>{"name": "f", "arguments": {}}' + "` to call it.", ["markup_in_code"]),
    ("Type `<|tool_call_begin|>functions.f:0<|tool_call_argument_begin|>{}` here", []),
    ("```\n" + HARMONY + "\n```\n", ["markup_in_code"]),
])
def test_a_closeless_block_in_a_fence_or_a_code_span_is_text(doc: str, reported: list[str]) -> None:
    for events in each_way(doc):
        assert calls(events) == [] and texts(events) == doc and codes(events) == reported


def test_a_closeless_block_inside_a_value_is_data() -> None:
    inner = '<tool_call>{"name": "f", "arguments": {}}'
    doc = '<tool_call>{"name": "w", "arguments": {"c": ' + json.dumps(inner) + "}}"  # the stream ends in the outer
    for events in each_way(doc):
        assert calls(events) == [("w", {"c": inner})] and codes(events) == ["missing_block_close"]
    cut_short = '<tool_call>{"name": "w", "arguments": {"c": ' + json.dumps(inner)
    for events in each_way(cut_short):
        assert calls(events) == [] and "missing_block_close" not in codes(events)


def test_kimi_calls_without_their_section_in_a_row() -> None:
    one = '<|tool_call_begin|>functions.{n}:{i}<|tool_call_argument_begin|>{{"a": {i}}}<|tool_call_end|>'
    doc = "ok " + one.format(n="f", i=0) + "\n" + one.format(n="g", i=1) + "<|tool_calls_section_end|> bye"
    for events in each_way(doc):
        assert calls(events) == [("f", {"a": 0}), ("g", {"a": 1})] and texts(events) == "ok  bye"
        assert codes(events) == ["missing_block_open"]
        assert [e.id for e in events if isinstance(e, callsieve.ToolCall)] == ["functions.f:0", "functions.g:1"]
    assert calls(run([doc], strict=True)) == []


@pytest.mark.parametrize("doc", ["the <|tool_call_begin|> token opens a call", "<|tool_call_begin|>"])
def test_a_kimi_call_open_mentioned_in_prose_is_text(doc: str) -> None:
    for policy in ("text", "drop", "raise"):
        events = run(cut(doc, 3), on_malformed=policy)
        assert calls(events) == [] and texts(events) == doc
        assert not [e for e in events if isinstance(e, (callsieve.ToolCallStart, callsieve.ToolCallDelta))]


# ---------------------------------------------------------------- 1. harmony from the role part
# The gpt-oss prompt ends with <|start|>assistant: the output may go on with the role
# part's recipient. (The format, not a deviation: no Diagnostic, and the same under strict.)
RESUMED = ' to=functions.get_weather<|channel|>commentary json<|message|>{"city": "Paris"}<|call|>'


@pytest.mark.parametrize("strict", [False, True])
def test_harmony_output_that_begins_at_a_role_part_recipient_is_a_call(strict: bool) -> None:
    cases = [(RESUMED, []), (RESUMED + "<|start|>assistant<|channel|>final<|message|>Done.<|return|>", [])]
    if not strict:
        cases.append((RESUMED[: -len("<|call|>")], ["missing_block_close"]))  # and <|call|> stripped
    for doc, more in cases:
        for events in each_way(doc, strict=strict):
            assert calls(events) == [("get_weather", {"city": "Paris"})]
            assert codes(events) == more and not abandoned(events)
            assert texts(events) == ("Done." if "Done" in doc else "")
            assert "".join(e.raw for e in events) == doc
            (c,) = [e for e in events if isinstance(e, callsieve.ToolCall)]
            assert c.raw.startswith(" to=functions.get_weather<|channel|>")  # the header is the call's markup
            deltas_match(events)


@pytest.mark.parametrize("doc, visible", [
    (" to=do: milk, eggs.", " to=do: milk, eggs."),  # prose that begins like it (held as a header, then text)
    (" today, then", " today, then"),
    # not at the very start (two spaces): the channel's header decides, and has no recipient
    ("  to=functions.f<|channel|>commentary json<|message|>{}<|call|>", "  to=functions.f{}"),
    ("Hi to=functions.f<|channel|>final<|message|>x<|return|>", "Hi to=functions.fx"),
    (" to", " to"),
])
def test_a_recipient_anywhere_but_the_very_start_is_no_header(doc: str, visible: str) -> None:
    for events in each_way(doc):
        assert calls(events) == [] and texts(events) == visible and "".join(e.raw for e in events) == doc


def test_only_with_harmony_enabled_does_the_output_start_in_a_header() -> None:
    assert callsieve.Sieve(dialects=["harmony"]).state == "header_start"
    assert callsieve.Sieve(dialects=["hermes"]).state == "text"
    assert callsieve.Sieve(start_in_reasoning=True, dialects=["harmony", "hermes"]).state != "header_start"
    events = run([RESUMED], dialects=["hermes"])
    assert calls(events) == [] and texts(events) == RESUMED


# ---------------------------------------------------------------- the drop-one-marker property
EOF_DIALECTS = sorted(d.name for d in REGISTRY.values() if any(b.eof_close and b.open is not None for b in d.blocks))
# (not ending in a `<`: one right before a DSML marker is doubled_lt, markup)
DOT_PROSE = PROSE.map(lambda s: "." + s).filter(lambda s: not s.endswith(("<", "\uff1c")))


def _closing(d: Any) -> re.Pattern[str]:
    """The block close (and the last call's close, where the call has one and its
    arguments are JSON: their closing brace says the call is complete) at the end of a
    rendered block."""
    from callsieve.grammar.api import JsonArgs

    block = next(b for b in d.blocks if b.eof_close and b.open is not None)
    call = next((n for n in _calls_of(block.body)), None)
    close = f"(?:{block.close.pattern})"
    if call is not None and call.close is not None and any(isinstance(x, JsonArgs) for x in call.items):
        close = f"(?:(?:{call.close.pattern})\\s*)?" + close
    return re.compile(r"\s*" + close + r"\Z")


def _calls_of(node: Any) -> Any:
    from callsieve.grammar.api import Call, Many

    if isinstance(node, Call):
        yield node
    elif isinstance(node, Many):
        yield from _calls_of(node.item)


def test_every_dialect_the_issue_names_reads_a_block_closed_by_the_end_of_the_stream() -> None:
    assert {"harmony", "hermes", "minimax_m2", "kimi_k2"} <= set(EOF_DIALECTS)


@given(st.data())
def test_dropping_the_last_blocks_close_at_the_end_keeps_the_calls_and_says_so(data: st.DataObject) -> None:
    """Documents rendered by a dialect's grammar, ending with a block whose close (and
    its last call's, where the call has one) a server stripped: the same calls and
    text, one ``missing_block_close``; under strict, not the same."""
    d = REGISTRY[data.draw(st.sampled_from(EOF_DIALECTS))]
    assert d.render is not None
    # (hermes and qwen3_coder render one block per call, joined by a newline: one call)
    drawn = data.draw(st.lists(call_of(d), min_size=1, max_size=1 if d.name in ("hermes", "qwen3_coder") else 2))
    before = data.draw(DOT_PROSE)
    lead = d.wrap_text(before, data.draw(st.integers(0, 7))) if d.wrap_text else before
    block = d.render([(n, p) for n, p, _ in drawn], data.draw(st.integers(0, 64)))
    m = _closing(d).search(block)
    assert m is not None, block
    doc = lead + block[: m.start()]
    events = run(data.draw(chunks(doc)), dialects=[d.name])
    assert calls(events) == [(n, a) for n, _, a in drawn]
    assert texts(events) == before
    assert codes_besides_heredocs(events) == ["missing_block_close"]
    assert codes(events).count("unterminated_heredoc") == heredocs_said(d, drawn)
    assert "".join(e.raw for e in events) == doc
    deltas_match(events)
    assert calls(run([doc], dialects=[d.name], strict=True)) != [(n, a) for n, _, a in drawn]


# ---------------------------------------------------------------- 2. Mistral v11 without [ARGS]
@pytest.mark.parametrize("doc, calls_, ids", [
    ('Checking. [TOOL_CALLS]get_weather{"city": "Paris"}', [("get_weather", {"city": "Paris"})], 1),
    ('[TOOL_CALLS]get_weather[CALL_ID]abcDEF123{"city": "Paris"}[TOOL_CALLS]search[ARGS]{"q": "x"}',
     [("get_weather", {"city": "Paris"}), ("search", {"q": "x"})], 1),
    ('[TOOL_CALLS]a{}[TOOL_CALLS]b {"k": [1, {"x": null}]}', [("a", {}), ("b", {"k": [1, {"x": None}]})], 2),
])
def test_mistral_v11_without_args_reads_the_json_after_the_name(
        doc: str, calls_: list[tuple[str, dict[str, Any]]], ids: int) -> None:
    for events in each_way(doc):
        assert calls(events) == calls_ and codes(events) == ["missing_args_open"] * ids
        got = diags(events, "missing_args_open")
        assert [d.offset for d in got] == [m.start() for m in re.finditer(r"(?<=[\w ])\{", doc)][:ids]
        assert texts(events) == doc[: doc.index("[TOOL_CALLS]")]
        assert "".join(e.raw for e in events) == doc
        deltas_match(events)
    strict = run(cut(doc, 3), strict=True)
    assert calls(strict) != calls_ and "missing_args_open" not in codes(strict)
    assert "".join(e.raw for e in strict) == doc


@pytest.mark.parametrize("doc, reported", [
    ("Use `[TOOL_CALLS]get_weather{\"city\": \"Paris\"}` to call it.", ["markup_in_code"]),
    ("```\n[TOOL_CALLS]get_weather{\"city\": \"Paris\"}\n```\n", ["markup_in_code"]),
    ("get_weather{\"city\": \"Paris\"} is how it looks", []),  # no [TOOL_CALLS]: prose
])
def test_mistral_json_after_a_name_in_code_or_without_its_token_is_text(doc: str, reported: list[str]) -> None:
    for events in each_way(doc):
        assert calls(events) == [] and texts(events) == doc and codes(events) == reported


def test_mistral_json_after_a_name_inside_a_value_is_data() -> None:
    inner = '[TOOL_CALLS]get_weather{"city": "Paris"}'
    doc = "[TOOL_CALLS]note[ARGS]" + json.dumps({"text": inner})
    for events in each_way(doc):
        assert calls(events) == [("note", {"text": inner})] and codes(events) == []


# ---------------------------------------------------------------- 6. gateway XML without </invoke>
XML_ONE = '<invoke name="{n}">\n<parameter name="k">{v}</parameter>\n'


@pytest.mark.parametrize("closes", [(False, True), (True, False), (False, False)])
def test_gateway_xml_invoke_close_left_out_before_the_next_invoke_or_the_block_close(closes: tuple[bool, bool]) -> None:
    doc = ("ok <tool_calls>\n" + "".join(XML_ONE.format(n=n, v=v) + ("</invoke>\n" if c else "")
                                        for n, v, c in (("f", "1", closes[0]), ("g", "2", closes[1])))
           + "</tool_calls> bye")
    left_out = [doc.index('<invoke name="g">')] * (not closes[0]) + [doc.index("</tool_calls>")] * (not closes[1])
    for events in each_way(doc):
        assert calls(events) == [("f", {"k": "1"}), ("g", {"k": "2"})] and texts(events) == "ok  bye"
        assert [d.offset for d in diags(events, "implied_call_close")] == left_out
        assert codes(events) == ["implied_call_close"] * len(left_out)
        deltas_match(events)
    strict = run(cut(doc, 4), strict=True)
    assert calls(strict) != [("f", {"k": "1"}), ("g", {"k": "2"})] and "implied_call_close" not in codes(strict)


@pytest.mark.parametrize("doc", [
    # without its block's open the close is the only evidence: an invoke's close is required
    'ok <invoke name="f">\n<parameter name="k">v</parameter>\n</tool_calls>',
    # a value that quotes it is data
    '<tool_calls><invoke name="w"><parameter name="c"><![CDATA[<invoke name="f"><parameter name="k">v</parameter>'
    "</tool_calls>]]></parameter></invoke></tool_calls>",
])
def test_gateway_xml_implied_invoke_close_needs_its_block_and_never_fires_in_a_value(doc: str) -> None:
    for events in each_way(doc):
        assert "implied_call_close" not in codes(events)
        assert [n for n, _ in calls(events)] in ([], ["w"])


DROPPED = {"mistral": ("[ARGS]", "missing_args_open"), "xml": ("</invoke>", "implied_call_close")}


@given(st.data())
def test_dropping_mistrals_args_or_a_gateway_xml_invoke_close_keeps_the_calls_and_says_so(data: st.DataObject) -> None:
    """Blocks rendered by the grammar, one tolerated marker left out of one call
    (Mistral v11's ``[ARGS]``, gateway XML's ``</invoke>``): the same calls and text,
    that tolerance's Diagnostic; under strict, not the same."""
    name = data.draw(st.sampled_from(sorted(DROPPED)))
    d = REGISTRY[name]
    assert d.render is not None
    marker, code = DROPPED[name]
    # (values that quote the marker are data, never dropped: not drawn here)
    drawn = data.draw(st.lists(call_of(d).filter(lambda c: all(marker not in v for _k, v, _j in c[1])),
                               min_size=1, max_size=3))
    variant = data.draw(st.integers(0, 31)) * 2  # (Mistral's even variants are v11)
    block = d.render([(n, p) for n, p, _ in drawn], variant)
    at = [m.start() for m in re.finditer(re.escape(marker), block)]
    assert len(at) == len(drawn), block
    k = data.draw(st.sampled_from(at))
    before, after = data.draw(DOT_PROSE), data.draw(DOT_PROSE)
    doc = before + "\n\n" + block[:k] + block[k + len(marker):] + after
    events = run(data.draw(chunks(doc)), dialects=[name])
    assert calls(events) == [(n, a) for n, _, a in drawn]
    assert texts(events) == before + "\n\n" + after
    assert codes_besides_heredocs(events) == [code]
    assert codes(events).count("unterminated_heredoc") == heredocs_said(d, drawn)
    assert "".join(e.raw for e in events) == doc
    deltas_match(events)
    assert calls(run([doc], dialects=[name], strict=True)) != [(n, a) for n, _, a in drawn]


# ---------------------------------------------------------------- 10. a Kimi id and no name
NAMELESS = ("ok <|tool_calls_section_begin|><|tool_call_begin|>{id}<|tool_call_argument_begin|>{{\"city\": \"x\"}}"
            "<|tool_call_end|><|tool_calls_section_end|>")


@pytest.mark.parametrize("wire", ["0", "12", " 3 "])
def test_a_kimi_call_with_an_id_and_no_name_is_the_one_tool_declared(wire: str) -> None:
    doc = NAMELESS.format(id=wire)
    one = tools("get_weather", city="string")
    for events in each_way(doc, tools=one):
        assert calls(events) == [("get_weather", {"city": "x"})] and codes(events) == ["nameless_call"]
        assert [e.id for e in events if isinstance(e, callsieve.ToolCall)] == [wire.strip()]
        (d,) = diags(events, "nameless_call")
        assert d.offset == 3
        deltas_match(events)
    # strict: an id that is digits alone names nothing (issue 23: "0" made a call "0")
    strict = run(cut(doc, 4), tools=one, strict=True)
    assert calls(strict) == [] and codes(strict) == ["malformed_block"]


def test_a_kimi_call_with_no_name_is_never_guessed_among_several_tools_or_without_any() -> None:
    doc = NAMELESS.format(id="0")
    # two tools: nothing says which (not the argument keys); and an id of digits alone
    # is no name (issue 23: it made a call named "0"): no call, the block malformed
    events = run(cut(doc, 5), tools=tools("get_weather", "search", city="string"))
    assert calls(events) == [] and codes(events) == ["malformed_block"]
    assert calls(run([doc])) == [] and codes(run([doc])) == ["malformed_block"]
    # an id with a name keeps its name, even when one tool is declared
    named = NAMELESS.format(id="functions.search:0")
    events = run([named], tools=tools("get_weather"))
    assert calls(events) == [("search", {"city": "x"})] and codes(events) == ["unknown_tool"]


@pytest.mark.parametrize("doc", [
    "```\n" + NAMELESS.format(id="0") + "\n```\n",
    "Try `" + NAMELESS.format(id="0") + "` here.",
])
def test_a_nameless_kimi_call_in_code_is_text(doc: str) -> None:
    events = run(cut(doc, 3), tools=tools("get_weather"))
    assert calls(events) == [] and texts(events) == doc and codes(events) == ["markup_in_code"]  # (issue 22)


def test_a_nameless_kimi_call_inside_a_value_is_data() -> None:
    inner = NAMELESS.format(id="0")
    doc = ('<|tool_calls_section_begin|><|tool_call_begin|>functions.note:0<|tool_call_argument_begin|>'
           + json.dumps({"text": inner}) + "<|tool_call_end|><|tool_calls_section_end|>")
    events = run(cut(doc, 3), tools=tools("note", text="string"))
    assert calls(events) == [("note", {"text": inner})] and codes(events) == []


# ---------------------------------------------------------------- 8. DeepSeek R1 distills' opener
R1_OPEN = "<｜tool▁calls｜>"
R1_V3 = (R1_OPEN + '<｜tool▁call▁begin｜>function<｜tool▁sep｜>get_weather\n```json\n{"city": "Paris"}\n```'
         "<｜tool▁call▁end｜><｜tool▁calls▁end｜>")
R1_V31 = R1_OPEN + '<｜tool▁call▁begin｜>get_weather<｜tool▁sep｜>{"city": "Paris"}<｜tool▁call▁end｜><｜tool▁calls▁end｜>'


@pytest.mark.parametrize("block", [R1_V3, R1_V31])
@pytest.mark.parametrize("dialects", [None, ["deepseek_v3", "deepseek_v31"]])
def test_deepseek_r1_distills_section_opener_without_begin(block: str, dialects: list[str] | None) -> None:
    doc = "Let me check.\n" + block + "\nDone."
    for events in each_way(doc, dialects=dialects):
        assert calls(events) == [("get_weather", {"city": "Paris"})] and codes(events) == ["calls_open_variant"]
        (d,) = diags(events, "calls_open_variant")
        assert d.offset == doc.index(R1_OPEN) and d.severity == "tolerated"
        assert texts(events) == "Let me check.\n\nDone." and "".join(e.raw for e in events) == doc
        (c,) = [e for e in events if isinstance(e, callsieve.ToolCall)]
        assert c.raw == block
        deltas_match(events)
    strict = run(cut(doc, 3), dialects=dialects, strict=True)
    assert calls(strict) == [] and "calls_open_variant" not in codes(strict)
    assert "".join(e.raw for e in strict) == doc


@pytest.mark.parametrize("doc", [
    "The section opens with " + R1_OPEN + ", then calls.",  # a mention: nothing follows that reads as a call
    R1_OPEN,
    "```\n" + R1_V3 + "\n```\n",
    "Write `" + R1_V31 + "` to call it.",
])
def test_the_r1_opener_mentioned_or_in_code_is_text_with_nothing_assumed(doc: str) -> None:
    for events in each_way(doc):
        assert calls(events) == [] and texts(events) == doc
        assert "calls_open_variant" not in codes(events)
    # (a mention's noted spelling is no part of a later block)
    later = doc + "\n<｜tool▁calls▁begin｜>" + R1_V31[len(R1_OPEN):]
    for events in each_way(later):
        assert calls(events) == [("get_weather", {"city": "Paris"})] and "calls_open_variant" not in codes(events)


def test_the_r1_opener_inside_a_value_is_data() -> None:
    doc = ('<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>note<｜tool▁sep｜>' + json.dumps({"text": R1_V31})
           + "<｜tool▁call▁end｜><｜tool▁calls▁end｜>")
    for events in each_way(doc):
        assert calls(events) == [("note", {"text": R1_V31})] and codes(events) == []


# ---------------------------------------------------------------- 5. DSML's leaked separators
DSML_ONE = ('<{p}tool_calls>\n<{p}invoke name="f">\n<{p}parameter name="k" string="true">v</{p}parameter>\n'
            "</{p}invoke>\n</{p}tool_calls>")


@pytest.mark.parametrize("doc", [
    '<dsml-tool-calls>\n<dsml-invoke name="f">\n<dsml-parameter name="k" string="true">v</dsml-parameter>\n'
    "</dsml-invoke>\n</dsml-tool-calls>",                    # a hyphen where the bar belongs
    DSML_ONE.format(p="-DSML-"),
    DSML_ONE.format(p="\u2402DSML\u2402"),                     # U+2402 as the separator
    DSML_ONE.format(p="\x02DSML\x02"),                         # a raw U+0002
    DSML_ONE.format(p="｜DSML｜").replace("｜DSML｜invoke", "\x02DSML\x02invoke"),  # mixed with the bar
])
def test_dsml_leaked_separators_are_read_with_dsml_variant(doc: str) -> None:
    whole = "ok " + doc + " bye"
    tags = len(re.findall(r"<[^<>]*(?:DSML|dsml)[^<>]*>", doc))
    varied = tags - len(re.findall(r"</?｜DSML｜", doc))
    for events in each_way(whole):
        assert calls(events) == [("f", {"k": "v"})] and texts(events) == "ok  bye"
        assert codes(events) == ["dsml_variant"] * varied
        assert sorted(d.offset for d in diags(events, "dsml_variant")) == [
            m.start() + 3 for m in re.finditer(r"<(?!/?｜DSML｜)/?[^<>]*?(?:DSML|dsml)", doc)]
        deltas_match(events)
    strict = run(cut(whole, 3), strict=True)
    assert calls(strict) == [] and "dsml_variant" not in codes(strict)
    assert "".join(e.raw for e in strict) == whole


@pytest.mark.parametrize("doc", [
    "```\n" + DSML_ONE.format(p="-DSML-") + "\n```\n",
    "Use `" + DSML_ONE.format(p="\u2402DSML\u2402") + "` here.",
    "a <dsml-tool-calls> tag, then prose",
])
def test_dsml_leaked_separators_in_code_or_mentioned_are_text(doc: str) -> None:
    for events in each_way(doc):
        assert calls(events) == [] and texts(events) == doc and "dsml_variant" not in codes(events)


def test_dsml_leaked_separators_inside_a_value_are_data() -> None:
    inner = DSML_ONE.format(p="-DSML-")
    doc = ('<｜DSML｜tool_calls><｜DSML｜invoke name="note"><｜DSML｜parameter name="text" string="false">'
           + json.dumps(inner) + "</｜DSML｜parameter></｜DSML｜invoke></｜DSML｜tool_calls>")
    for events in each_way(doc):
        assert calls(events) == [("note", {"text": inner})] and codes(events) == []


#: dialect → (the spelling as rendered, tolerated spellings of it, their code, render
#: variants that write it so)
RESPELLED = {"deepseek_v3": ("<｜tool▁calls▁begin｜>", (R1_OPEN,), "calls_open_variant", (0, 1)),
             "deepseek_v31": ("<｜tool▁calls▁begin｜>", (R1_OPEN,), "calls_open_variant", (0,)),
             "dsml": ("｜DSML｜", ("-DSML-", "\u2402DSML\u2402", "\x02DSML\x02"), "dsml_variant", (0, 12, 24))}


@given(st.data())
def test_a_respelled_marker_keeps_the_calls_and_says_so(data: st.DataObject) -> None:
    """Blocks rendered by the grammar with a marker written in a tolerated spelling
    wherever it stands: the same calls and text, that spelling's Diagnostic at each; under
    strict, not the same."""
    name = data.draw(st.sampled_from(sorted(RESPELLED)))
    d = REGISTRY[name]
    assert d.render is not None
    official, spellings, code, variants = RESPELLED[name]
    spelling = data.draw(st.sampled_from(spellings))
    drawn = data.draw(st.lists(call_of(d).filter(lambda c: all(official not in v for _k, v, _j in c[1])),
                               min_size=1, max_size=3))
    block = d.render([(n, p) for n, p, _ in drawn], data.draw(st.sampled_from(variants)))
    at = [m.start() for m in re.finditer(re.escape(official), block)]
    assert at, block
    before, after = data.draw(DOT_PROSE), data.draw(DOT_PROSE)
    lead = before + "\n\n"
    doc = lead + block.replace(official, spelling) + after
    shift = len(spelling) - len(official)
    dialects = data.draw(st.sampled_from([[name], None]))
    events = run(data.draw(chunks(doc)), dialects=dialects)
    assert calls(events) == [(n, a) for n, _, a in drawn]
    assert texts(events) == lead + after
    assert codes_besides_heredocs(events) == [code] * len(at)
    assert codes(events).count("unterminated_heredoc") == heredocs_said(d, drawn)
    # (each at its tag's <: the spelling's first character, or one or two before it)
    offsets = sorted(x.offset for x in diags(events, code))
    assert all(0 <= len(lead) + a + k * shift - o <= 2 for o, (k, a) in zip(offsets, enumerate(at)))
    assert "".join(e.raw for e in events) == doc
    deltas_match(events)
    # (under strict the respelled markup is prose: a value in it may read as another call)
    assert calls(run([doc], dialects=dialects, strict=True)) != [(n, a) for n, _, a in drawn]


# ---------------------------------------------------------------- 9. orphan control tokens
ORPHANS = ["<|tool_calls_section_end|>", "<|tool_call_end|>", "<|tool_call_argument_begin|>"]


@pytest.mark.parametrize("token", ORPHANS)
def test_an_orphan_kimi_token_in_prose_is_framing_with_a_diagnostic(token: str) -> None:
    doc = "Done." + token + " Bye"
    for dialects in (None, ["kimi_k2"]):
        for events in each_way(doc, dialects=dialects):
            assert calls(events) == [] and texts(events) == "Done. Bye"
            assert codes(events) == ["orphan_token"]
            (d,) = diags(events, "orphan_token")
            assert d.offset == len("Done.") and d.severity == "tolerated"
            assert "".join(e.raw for e in events) == doc
            assert [e.raw for e in events if isinstance(e, callsieve.Text) and not e.text] == [token]
        strict = run(cut(doc, 3), dialects=dialects, strict=True)
        assert texts(strict) == doc and codes(strict) == []
    # only where a dialect that writes it is enabled
    assert texts(run([doc], dialects=["hermes"])) == doc


@pytest.mark.parametrize("doc", [
    "Type `<|tool_calls_section_end|>` to end it.",
    "```\n<|tool_call_end|>\n```\n",
])
def test_an_orphan_token_in_code_is_text(doc: str) -> None:
    for events in each_way(doc):
        assert texts(events) == doc and codes(events) == []


def test_an_orphan_token_inside_a_value_is_data_and_a_real_section_closes_as_before() -> None:
    inner = "end with <|tool_calls_section_end|> and <|tool_call_argument_begin|>"
    doc = ("ok <|tool_calls_section_begin|><|tool_call_begin|>functions.note:0<|tool_call_argument_begin|>"
           + json.dumps({"text": inner}) + "<|tool_call_end|><|tool_calls_section_end|> bye")
    for events in each_way(doc):
        assert calls(events) == [("note", {"text": inner})] and codes(events) == [] and texts(events) == "ok  bye"


@given(st.data())
def test_orphan_tokens_left_by_a_dropped_section_never_reach_text(data: st.DataObject) -> None:
    """A Kimi section with its opening markers dropped (what a server that strips some
    special tokens leaves): its leftover closes are framing, each reported, the rest of
    the text as it was; under strict, all of it text."""
    d = REGISTRY["kimi_k2"]
    assert d.render is not None
    # (values with no markup, backtick or tilde of their own: the leftovers stand in prose)
    drawn = data.draw(st.lists(call_of(d).filter(lambda c: not any(x in v for _k, v, _j in c[1] for x in "<`~")),
                               min_size=1, max_size=2))
    block = d.render([(n, p) for n, p, _ in drawn], data.draw(st.integers(0, 3)))
    # (the opening markers and the call text gone: only closes between bits of JSON)
    left = re.sub(r"<\|tool_calls_section_begin\|>|<\|tool_call_begin\|>[^<]*<\|tool_call_argument_begin\|>", "", block)
    tokens = re.findall(r"<\|[a-z_]+\|>", left)
    before = data.draw(DOT_PROSE)
    doc = before + " " + left
    events = run(data.draw(chunks(doc)), dialects=["kimi_k2"])
    assert calls(events) == [] and codes(events) == ["orphan_token"] * len(tokens)
    assert texts(events) == before + " " + re.sub(r"<\|[a-z_]+\|>", "", left)
    assert "".join(e.raw for e in events) == doc
    assert texts(run([doc], dialects=["kimi_k2"], strict=True)) == doc


# ---------------------------------------------------------------- 11. a JSON object as an invoke body
JSON_INVOKES = [
    # (document, the calls, the codes)
    ('ok <tool_calls><invoke name="f">{"city": "Paris", "n": [1, {"a": null}]}</invoke></tool_calls> bye',
     [("f", {"city": "Paris", "n": [1, {"a": None}]})], ["json_invoke_body"]),
    ('ok <tool_calls>\n  <invoke name="f">\n    {"city": "Paris"}\n  </invoke>\n'
     '  <invoke name="g"><parameter name="k">v</parameter></invoke>\n</tool_calls> bye',
     [("f", {"city": "Paris"}), ("g", {"k": "v"})], ["json_invoke_body"]),
    ('ok <｜DSML｜tool_calls>\n<｜DSML｜invoke name="f">\n{"city": "杭州", "days": 3}\n</｜DSML｜invoke>\n</｜DSML｜tool_calls> bye',
     [("f", {"city": "杭州", "days": 3})], ["json_invoke_body"]),
    # with its </invoke> left out too, and without its block
    ('ok <｜DSML｜tool_calls><｜DSML｜invoke name="f">{}</｜DSML｜tool_calls> bye', [("f", {})],
     ["json_invoke_body", "implied_call_close"]),
    ('ok <｜DSML｜invoke name="f">{"a": "</｜DSML｜invoke>"}</｜DSML｜invoke> bye', [("f", {"a": "</｜DSML｜invoke>"})],
     ["missing_block_open", "json_invoke_body"]),
]


@pytest.mark.parametrize("doc, want, want_codes", JSON_INVOKES)
def test_a_json_object_as_an_invoke_body_is_the_calls_arguments(
        doc: str, want: list[tuple[str, dict[str, Any]]], want_codes: list[str]) -> None:
    for events in each_way(doc):
        assert calls(events) == want and texts(events) == "ok  bye"
        assert codes(events) == want_codes
        (d,) = diags(events, "json_invoke_body")
        assert d.offset == doc.index("{") and d.severity == "tolerated"
        assert "".join(e.raw for e in events) == doc
        deltas_match(events)
    strict = run(cut(doc, 3), strict=True)
    assert calls(strict) == [] and "json_invoke_body" not in codes(strict)
    assert "".join(e.raw for e in strict) == doc


@pytest.mark.parametrize("doc", [
    # a JSON body is the whole of the arguments: no parameter after it, none before it
    '<tool_calls><invoke name="f">{"a": 1}<parameter name="b">2</parameter></invoke></tool_calls>',
    '<tool_calls><invoke name="f"><parameter name="b">2</parameter>{"a": 1}</invoke></tool_calls>',
    '<tool_calls><invoke name="f">[1, 2]</invoke></tool_calls>',          # no object
    '<tool_calls><invoke name="f">{"a": 1} trailing</invoke></tool_calls>',
])
def test_an_invoke_body_that_is_not_one_json_object_alone_is_no_call(doc: str) -> None:
    # (after a value's close, a `{` is no grammar: that close is the value's data, and
    # the block never closes)
    for events in each_way(doc):
        assert calls(events) == [] and set(codes(events)) & {"malformed_block", "unterminated_block"}
        assert "".join(e.raw for e in events) == doc


@pytest.mark.parametrize("doc", [
    "```\n" + JSON_INVOKES[0][0] + "\n```\n",
    "Use `" + JSON_INVOKES[0][0] + "` here.",
    "~~~\n" + JSON_INVOKES[2][0] + "\n~~~\n",
])
def test_a_json_invoke_body_in_code_is_text(doc: str) -> None:
    for events in each_way(doc):
        # (the real opener in code is reported as a mention: issue 22)
        assert calls(events) == [] and texts(events) == doc and codes(events) == ["markup_in_code"]


def test_a_json_invoke_body_inside_a_value_is_data() -> None:
    inner = JSON_INVOKES[0][0]
    for doc in (f'<tool_calls><invoke name="w"><parameter name="c"><![CDATA[{inner}]]></parameter></invoke></tool_calls>',
                '<tool_call>' + json.dumps({"name": "w", "arguments": {"c": inner}}) + "</tool_call>"):
        for events in each_way(doc):
            assert calls(events) == [("w", {"c": inner})] and codes(events) == []


JSON_BODY_DIALECTS = ("xml", "dsml")


@given(st.data())
def test_writing_one_invokes_arguments_as_a_json_object_keeps_the_calls_and_says_so(data: st.DataObject) -> None:
    """Blocks rendered by the grammar (gateway XML, DSML), one call's parameters written
    instead as one JSON object of its arguments: the same calls and text, one
    ``json_invoke_body`` at its ``{``; under strict, not the same."""
    name = data.draw(st.sampled_from(JSON_BODY_DIALECTS))
    d = REGISTRY[name]
    assert d.render is not None
    drawn = data.draw(st.lists(call_of(d), min_size=1, max_size=3))
    at = data.draw(st.integers(0, len(drawn) - 1))
    block = d.render([(n, p) for n, p, _ in drawn], data.draw(st.integers(0, 63)))
    # the parameters of the call at `at`: between its invoke's open and its close
    opens = [m.end() for m in re.finditer(r"<[^<>]*invoke name=\"[^\"]*\">", block)]
    closes = [m.start() for m in re.finditer(r"</[^<>]*invoke>", block)]
    assert len(opens) == len(closes) == len(drawn), block
    body = "\n" + json.dumps(drawn[at][2], ensure_ascii=data.draw(st.booleans())) + "\n"
    before, after = data.draw(DOT_PROSE), data.draw(DOT_PROSE)
    lead = before + "\n\n"
    doc = lead + block[: opens[at]] + body + block[closes[at]:] + after
    events = run(data.draw(chunks(doc)), dialects=data.draw(st.sampled_from([[name], None])))
    assert calls(events) == [(n, a) for n, _, a in drawn]
    assert texts(events) == lead + after
    assert codes_besides_heredocs(events) == ["json_invoke_body"]
    # (the values of the call written as a JSON object are JSON, not raw)
    assert codes(events).count("unterminated_heredoc") == heredocs_said(d, drawn[:at] + drawn[at + 1:])
    assert [x.offset for x in diags(events, "json_invoke_body")] == [len(lead) + opens[at] + 1]
    assert "".join(e.raw for e in events) == doc
    deltas_match(events)
    assert calls(run([doc], dialects=[name], strict=True)) != [(n, a) for n, _, a in drawn]


# ---------------------------------------------------------------- 12. GLM: <tool_call> where <arg_key> belongs
GLM_KEYED = [
    # (document, the calls, how many keys were opened by <tool_call>)
    ("ok <tool_call>get_weather<tool_call>city</arg_key><arg_value>北京</arg_value></tool_call> bye",
     [("get_weather", {"city": "北京"})], 1),
    ("ok <tool_call>get_weather\n<tool_call>city</arg_key>\n<arg_value>北京</arg_value>\n"
     "<tool_call>days</arg_key>\n<arg_value>3</arg_value>\n</tool_call> bye", [("get_weather", {"city": "北京", "days": 3})], 2),
    ("ok <tool_call>get_weather<arg_key>city</arg_key><arg_value>北京</arg_value><tool_call>days</arg_key>"
     "<arg_value>3</arg_value></tool_call> bye", [("get_weather", {"city": "北京", "days": 3})], 1),
    # with its <arg_value> left out too
    ("ok <tool_call>get_weather<tool_call>city</arg_key>北京</arg_value></tool_call> bye",
     [("get_weather", {"city": "北京"})], 1),
]


@pytest.mark.parametrize("doc, want, n", GLM_KEYED)
def test_glm_a_tool_call_open_where_a_key_belongs_opens_the_key(doc: str, want: list[tuple[str, dict[str, Any]]],
                                                                n: int) -> None:
    also = ["missing_value_open"] if "</arg_key>北京" in doc else []
    for kw in ({}, {"tools": tools("get_weather", city="string", days="integer")}):
        for events in each_way(doc, **kw):
            assert calls(events) == want and texts(events) == "ok  bye"
            assert sorted(codes(events)) == sorted(["call_open_as_key"] * n + also)
            got = [d.offset for d in diags(events, "call_open_as_key")]
            assert got == [m.start() for m in re.finditer("<tool_call>", doc)][1 : n + 1]
            assert "".join(e.raw for e in events) == doc
            deltas_match(events)
    strict = run(cut(doc, 3), strict=True)
    assert calls(strict) != want and "call_open_as_key" not in codes(strict)
    assert "".join(e.raw for e in strict) == doc


def test_glm_a_tool_call_open_as_a_key_needs_a_known_tool_when_tools_are_given() -> None:
    doc = GLM_KEYED[0][0]
    for events in each_way(doc, tools=tools("other", city="string")):
        assert calls(events) == [] and "call_open_as_key" not in codes(events) and "malformed_block" in codes(events)
        assert "".join(e.raw for e in events) == doc


@pytest.mark.parametrize("doc, want, text", [
    # a call begun again (no key, no </arg_key>): the first is malformed, the second a call, as before
    ("<tool_call>f\n<tool_call>g</tool_call> bye", [("g", {})], "<tool_call>f\n bye"),
    ("<tool_call>f<tool_call>g</tool_call> bye", [("g", {})], "<tool_call>f bye"),
    ("<tool_call>f<tool_call>g<arg_key>a</arg_key><arg_value>1</arg_value></tool_call> bye", [("g", {"a": 1})],
     "<tool_call>f bye"),
    ('<tool_call>f<tool_call>{"name": "g", "arguments": {}}</tool_call> bye', [("g", {})], "<tool_call>f bye"),
    ("<tool_call>f<tool_call>\n<function=g>\n</function>\n</tool_call> bye", [("g", {})], "<tool_call>f bye"),
])
def test_glm_a_call_begun_again_is_still_a_call(doc: str, want: list[tuple[str, dict[str, Any]]], text: str) -> None:
    for strict in (False, True):
        for events in each_way(doc, strict=strict):
            assert calls(events) == want and "call_open_as_key" not in codes(events)
            assert texts(events) == text
            assert "".join(e.raw for e in events) == doc


@pytest.mark.parametrize("doc", [
    "```\n" + GLM_KEYED[0][0] + "\n```\n",
    "Use `" + GLM_KEYED[0][0] + "` here.",
])
def test_glm_a_tool_call_open_as_a_key_in_code_is_text(doc: str) -> None:
    for events in each_way(doc):
        # (the real opener in code is reported as a mention, noise: issue 22)
        assert calls(events) == [] and texts(events) == doc and set(codes(events)) == {"markup_in_code"}


def test_glm_a_tool_call_open_as_a_key_inside_a_value_is_data() -> None:
    inner = "get_weather<tool_call>city</arg_key><arg_value>北京"
    doc = f"<tool_call>note<arg_key>text</arg_key><arg_value>{inner}</arg_value></tool_call>"
    for events in each_way(doc):
        assert calls(events) == [("note", {"text": inner})] and codes(events) == []


@given(st.data())
def test_a_tool_call_open_written_for_one_glm_key_keeps_the_calls_and_says_so(data: st.DataObject) -> None:
    """GLM blocks rendered by the grammar (GLM-4.5 or GLM-5 spacing), one ``<arg_key>``
    written as ``<tool_call>``: the same calls and text, one ``call_open_as_key`` at it;
    under strict, not the same."""
    d = REGISTRY["glm45"]
    assert d.render is not None
    drawn = data.draw(st.lists(call_of(d).filter(lambda c: bool(c[1])), min_size=1, max_size=3))
    variant = data.draw(st.integers(0, 1))
    block = d.render([(n, p) for n, p, _ in drawn], variant)
    between = ("" if variant % 2 else "\n") * (len(drawn) - 1)  # (blocks in a row: joined so, prose)
    keys = [m.start() for m in re.finditer("<arg_key>", block)]
    k = data.draw(st.sampled_from(keys))
    before, after = data.draw(DOT_PROSE), data.draw(DOT_PROSE)
    lead = before + "\n\n"
    doc = lead + block[:k] + "<tool_call>" + block[k + len("<arg_key>"):] + after
    dialects = data.draw(st.sampled_from([["glm45"], None]))
    events = run(data.draw(chunks(doc)), dialects=dialects,
                 tools=data.draw(st.sampled_from([None, tools(*{n for n, _p, _a in drawn})])))
    assert calls(events) == [(n, a) for n, _, a in drawn]
    assert texts(events) == lead + between + after
    assert codes_besides_heredocs(events) == ["call_open_as_key"]
    assert codes(events).count("unterminated_heredoc") == heredocs_said(d, drawn)
    assert [x.offset for x in diags(events, "call_open_as_key")] == [len(lead) + k]
    assert "".join(e.raw for e in events) == doc
    deltas_match(events)
    assert calls(run([doc], dialects=dialects, strict=True)) != [(n, a) for n, _, a in drawn]


def test_a_glm_key_written_as_a_call_open_is_said_apart_from_a_heredoc_value() -> None:
    # Found by the property above (CI on b14e887): its drawn raw value <<';' opens a
    # heredoc never closed, said apart from the deviation.
    doc = ".\n\n<tool_call>_\n<tool_call>_</arg_key>\n<arg_value><<';'</arg_value>\n</tool_call>."
    for events in each_way(doc):
        assert calls(events) == [("_", {"_": "<<';'"})] and texts(events) == ".\n\n."
        assert codes(events) == ["call_open_as_key", "unterminated_heredoc"]


# ---------------------------------------------------------------- 7. GLM: a literal \n between tags, values escaped twice
@pytest.mark.parametrize("doc, want", [
    ("ok <tool_call>get_weather\\n<arg_key>city</arg_key>\\n<arg_value>北京</arg_value>\\n<arg_key>days</arg_key>"
     "\\n<arg_value>3</arg_value>\\n</tool_call> bye", [("get_weather", {"city": "北京", "days": 3})]),
    ("ok <tool_call>get_weather<arg_key>city</arg_key><arg_value>北京</arg_value>\\n</tool_call> bye",
     [("get_weather", {"city": "北京"})]),
    ("ok <tool_call>get_weather<arg_key>city</arg_key>\\n<arg_value>北京</arg_value></tool_call> bye",
     [("get_weather", {"city": "北京"})]),
    # among real newlines
    ("ok <tool_call>get_weather\n<arg_key>city</arg_key>\\n<arg_value>北京</arg_value> \\n\n</tool_call> bye",
     [("get_weather", {"city": "北京"})]),
])
def test_glm_a_literal_newline_between_tags_is_read_as_one(doc: str, want: list[tuple[str, dict[str, Any]]]) -> None:
    n = doc.count("\\n")
    for events in each_way(doc):
        assert calls(events) == want and texts(events) == "ok  bye"
        assert codes(events) == ["literal_newline"] * n
        assert sorted(d.offset for d in diags(events, "literal_newline")) == [m.start() for m in re.finditer(r"\\n", doc)]
        assert "".join(e.raw for e in events) == doc
        deltas_match(events)
    strict = run(cut(doc, 3), strict=True)
    assert calls(strict) != want and "literal_newline" not in codes(strict)
    assert "".join(e.raw for e in strict) == doc


@pytest.mark.parametrize("value", [
    "x</arg_value>\\nfoo",         # a literal \n after a close, then no marker: the value's data
    "a\\nb",
    "\\n",
])
def test_glm_a_literal_newline_in_a_value_is_data(value: str) -> None:
    doc = f"<tool_call>f<arg_key>k</arg_key><arg_value>{value}</arg_value></tool_call>"
    for events in each_way(doc):
        assert calls(events) == [("f", {"k": value})] and codes(events) == []


@pytest.mark.parametrize("doc", [
    "```\n<tool_call>f\\n<arg_key>k</arg_key>\\n<arg_value>v</arg_value>\\n</tool_call>\n```\n",
    "Use `<tool_call>f<arg_key>k</arg_key>\\n<arg_value>v</arg_value></tool_call>` here.",
])
def test_glm_a_literal_newline_in_code_is_text(doc: str) -> None:
    for events in each_way(doc):
        # (the real opener in code is reported as a mention, noise: issue 22)
        assert calls(events) == [] and texts(events) == doc and set(codes(events)) == {"markup_in_code"}


ESCAPED_TOOLS = [{"type": "function", "function": {"name": "f", "parameters": {"properties": {
    "items": {"type": "array"}, "opts": {"type": "object"}, "text": {"type": "string"}, "any": {"type": ["array", "string"]}}}}}]


@pytest.mark.parametrize("key, written, value", [
    ("items", '[{\\"a\\": 1}, \\"x\\\\\\"y\\"]', [{"a": 1}, 'x"y']),
    ("opts", '{\\"path\\": \\"C:\\\\\\\\tmp\\", \\"n\\": [1, 2]}', {"path": "C:\\tmp", "n": [1, 2]}),
    ("opts", '{\\n  \\"a\\": true\\n}', {"a": True}),
])
def test_glm_a_value_escaped_twice_is_unescaped_once_under_an_object_or_array_schema(key: str, written: str, value: Any) -> None:
    doc = f"<tool_call>f<arg_key>{key}</arg_key><arg_value>{written}</arg_value></tool_call>"
    for events in each_way(doc, tools=ESCAPED_TOOLS):
        assert calls(events) == [("f", {key: value})] and codes(events) == ["double_escaped_value"]
        (d,) = diags(events, "double_escaped_value")
        assert d.offset == doc.index("<arg_value>") and d.severity == "tolerated"  # (the value's open)
        deltas_match(events)
    strict = run(cut(doc, 3), tools=ESCAPED_TOOLS, strict=True)
    assert calls(strict) == [("f", {key: written})] and codes(strict) == ["type_mismatch"]


@pytest.mark.parametrize("key, written, tools_", [
    ("text", '{\\"a\\": 1}', ESCAPED_TOOLS),     # a string parameter: the text as written
    ("any", '[\\"a\\"]', ESCAPED_TOOLS),        # a string is allowed: as written
    ("items", '[\\"a\\"]', None),               # no schema says it is an array
    ("items", '[1, 2]', ESCAPED_TOOLS),          # JSON already: read as before
    ("items", 'not \\"json\\"', ESCAPED_TOOLS),  # not JSON once unescaped either: a type mismatch, as before
])
def test_glm_a_value_is_unescaped_only_where_it_fails_as_json_under_an_object_or_array_schema(
        key: str, written: str, tools_: Any) -> None:
    doc = f"<tool_call>f<arg_key>{key}</arg_key><arg_value>{written}</arg_value></tool_call>"
    events = run(cut(doc, 2), tools=tools_)
    assert "double_escaped_value" not in codes(events)
    assert calls(events) == calls(run([doc], tools=tools_, strict=True))


GLM_NL = {"key": ("</arg_key>\n<arg_value>", "</arg_key>\\n<arg_value>"),
          "value": ("</arg_value>\n", "</arg_value>\\n"), "name": (None, None)}


Drawn = list[tuple[str, list[tuple[str, str, bool]], dict[str, Any]]]


def _glm_written(text: str, as_json: bool) -> str:
    """A value as GLM-4.5's template writes it: a string raw, anything else as JSON."""
    if not as_json:
        return text
    value = json.loads(text)
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)


def _glm_newline_spots(drawn: Drawn) -> tuple[str, list[int], Any]:
    """GLM-4.5's block of ``drawn``, rendered with each value's text a placeholder (no
    tag, no newline): that block, where its newlines between tags are (after a name, a
    key's close or a value's close; never one inside a value's own text, such as a value
    ``<tool_call>\\n`` or one holding ``</arg_value>`` itself), and what puts the texts
    back."""
    d = REGISTRY["glm45"]
    assert d.render is not None
    # (each value as the template writes it: a string raw, anything else as JSON)
    texts_of = [_glm_written(text, as_json) for _n, params, _a in drawn for _k, text, as_json in params]
    it = iter(range(len(texts_of)))
    marked = d.render([(n, [(k, f"\x00{next(it)}\x01", False) for k, _t, _j in params]) for n, params, _a in drawn], 0)

    def put_back(text: str) -> str:
        return re.sub("\x00(\\d+)\x01", lambda m: texts_of[int(m.group(1))], text)

    assert put_back(marked) == d.render([(n, p) for n, p, _ in drawn], 0)
    spots = [m.end() - 1 for m in re.finditer(r"(?:<tool_call>[^<\n]*|</arg_key>|</arg_value>)\n(?=<)", marked)]
    return marked, spots, put_back


def _glm_newlines_written_as_backslash_n(drawn: Drawn, chosen: list[int], before: str, after: str,
                                         dialects: list[str] | None, parts: Any) -> None:
    """The block of ``drawn`` with the newlines at ``chosen`` (of ``_glm_newline_spots``)
    written as ``\\n``, between ``before`` and ``after``, cut by ``parts(doc)``."""
    d = REGISTRY["glm45"]
    marked, spots, put_back = _glm_newline_spots(drawn)
    for k in sorted({spots[i] for i in chosen}, reverse=True):
        marked = marked[:k] + "\\n" + marked[k + 1:]
    block = put_back(marked)
    lead = before + "\n\n"
    doc = lead + block + after
    events = run(parts(doc), dialects=dialects)
    assert calls(events) == [(n, a) for n, _, a in drawn]
    assert texts(events) == lead + "\n" * (len(drawn) - 1) + after
    assert codes_besides_heredocs(events) == ["literal_newline"] * len(set(chosen))
    assert codes(events).count("unterminated_heredoc") == heredocs_said(d, drawn)
    assert "".join(e.raw for e in events) == doc
    deltas_match(events)
    assert calls(run([doc], dialects=dialects, strict=True)) != [(n, a) for n, _, a in drawn]


@given(st.data())
def test_glm_newlines_written_as_backslash_n_keep_the_calls_and_say_so(data: st.DataObject) -> None:
    """GLM-4.5 blocks rendered by the grammar (a newline between each two tags), some of
    those newlines written as the two characters ``\\n`` (Ling 3, GLM leaking its
    escapes): the same calls and text, one ``literal_newline`` each; under strict, not
    the same."""
    drawn = data.draw(st.lists(call_of(REGISTRY["glm45"]), min_size=1, max_size=2))
    _marked, spots, _put_back = _glm_newline_spots(drawn)
    chosen = data.draw(st.lists(st.integers(0, len(spots) - 1), min_size=1, max_size=4))
    before, after = data.draw(DOT_PROSE), data.draw(DOT_PROSE)
    dialects = data.draw(st.sampled_from([["glm45"], None]))
    _glm_newlines_written_as_backslash_n(drawn, chosen, before, after, dialects, lambda doc: data.draw(chunks(doc)))


def test_a_glm_value_holding_its_own_close_and_a_newline_after_a_tag_keeps_its_newline() -> None:
    """(The property's oracle found the newlines between tags with a regex that took a
    value's own ``</arg_value>`` for its close, and wrote the newline after a
    ``<tool_call>`` inside that value's text as ``\\n``: the test expected the value
    unchanged. Found by the property on a new seed; the spots are now found with the
    values' texts held apart.)"""
    drawn: Drawn = [("a", [("a", "", False)], {"a": ""}),
                    ("a", [("a", "", False), ("a0", "", False), ("b", "</arg_value>x<tool_call>\n", False)],
                     {"a": "", "a0": "", "b": "</arg_value>x<tool_call>\n"})]
    _marked, spots, _put_back = _glm_newline_spots(drawn)
    assert len(spots) == 3 + 7  # (the first call's three tags' newlines, the second's seven)
    for i in range(len(spots)):
        _glm_newlines_written_as_backslash_n(drawn, [i], ".", ".", ["glm45"], lambda doc: [doc])


# ---------------------------------------------------------------- 3. Hermes-family wrappers
FUNCTION_CALLS = [
    'ok <function=get_weather>{"city": "Paris"}</function> bye',
    'ok <function=get_weather>\n{"city": "Paris"}\n</function> bye',
    'ok <function name="get_weather">{"city": "Paris"}</function> bye',
    "ok <FUNCTION NAME = \"get_weather\" >{\"city\": \"Paris\"}</function> bye",
]


@pytest.mark.parametrize("doc", FUNCTION_CALLS)
@pytest.mark.parametrize("dialects", [None, ["hermes"], ["hermes", "qwen3_coder"]])
def test_a_function_tag_around_json_arguments_is_a_call(doc: str, dialects: list[str] | None) -> None:
    for kw in ({}, {"tools": tools("get_weather", city="string")}):
        for events in each_way(doc, dialects=dialects, **kw):
            assert calls(events) == [("get_weather", {"city": "Paris"})] and texts(events) == "ok  bye"
            assert codes(events) == ["function_wrapper"]
            (d,) = diags(events, "function_wrapper")
            assert d.offset == 3 and d.severity == "tolerated"
            assert "".join(e.raw for e in events) == doc
            deltas_match(events)
    strict = run(cut(doc, 3), dialects=dialects, strict=True)
    assert calls(strict) == [] and texts(strict) == doc and codes(strict) == []


def test_a_function_tag_decides_between_json_arguments_and_qwen3_coder_parameters() -> None:
    """``<function=NAME>`` opens a call of both: what follows it decides (a fork), call by call."""
    doc = ('ok <function=a>{"x": 1}</function>\n<function=b>\n<parameter=k>\nv\n</parameter>\n</function>\n'
           '<function=c>\n</function>\n<function name="d">{}</function> bye')
    for events in each_way(doc):
        assert calls(events) == [("a", {"x": 1}), ("b", {"k": "v"}), ("c", {}), ("d", {})]
        # (b and c: one Qwen3-Coder block of two calls)
        assert codes(events) == ["function_wrapper", "missing_block_open", "function_wrapper"]
        assert texts(events) == "ok \n\n bye"
        deltas_match(events)


@pytest.mark.parametrize("doc", [
    "Write <function=NAME> to call a tool.",
    "Write <function=get_weather> {city} </function> to call it.",   # no JSON object
    'Then <function=f>{"a": 1 and more.',                              # JSON that does not hold up
    "Write <function name=\"f\"> then JSON.",
])
def test_a_function_tag_mentioned_in_prose_is_text_whatever_the_policy(doc: str) -> None:
    for policy in ("text", "drop", "raise"):
        for events in each_way(doc, on_malformed=policy):
            assert calls(events) == [] and texts(events) == doc
            assert not [e for e in events if isinstance(e, (callsieve.ToolCallStart, callsieve.ToolCallDelta))]


def test_a_function_tag_call_streams_once_its_arguments_are_read_and_is_abandoned_without_its_close() -> None:
    doc = 'Then <function=f>{"a": 1}</function2> and more.'
    for events in each_way(doc):
        assert calls(events) == [] and "function_wrapper" not in codes(events)
        (gone,) = abandoned(events)
        assert gone.name == "f" and gone.raw == '<function=f>{"a": 1}'
        assert texts(events) == "Then </function2> and more."


def test_a_function_tag_call_must_name_a_known_tool_when_tools_are_given() -> None:
    doc = FUNCTION_CALLS[0]
    for events in each_way(doc, tools=tools("other", city="string")):
        assert calls(events) == [] and texts(events) == doc and codes(events) == ["unknown_tool"]
        assert not [e for e in events if isinstance(e, (callsieve.ToolCallStart, callsieve.ToolCallDelta))]


WRAPPED = '{"name": "get_weather", "arguments": {"city": "Paris"}}'
WEATHER = tools("get_weather", city="string")


@pytest.mark.parametrize("tag", ["tool", "tools", "response", "json", "xml", "JSON", "Tool"])
def test_a_generic_tag_around_a_call_object_is_a_call_only_with_tools(tag: str) -> None:
    doc = f"ok <{tag}>\n{WRAPPED}\n</{tag}> bye"
    dialects = ["hermes"] if tag.lower() == "response" else None  # (<response> is ERNIE 4.5's framing)
    for events in each_way(doc, tools=WEATHER, dialects=dialects):
        assert calls(events) == [("get_weather", {"city": "Paris"})] and texts(events) == "ok  bye"
        assert codes(events) == ["generic_wrapper"]
        (d,) = diags(events, "generic_wrapper")
        assert d.offset == 3 and d.severity == "tolerated"
        assert "".join(e.raw for e in events) == doc
        deltas_match(events)
    # nothing streams before the close, the evidence
    s = callsieve.Sieve(tools=WEATHER, dialects=dialects)
    early = [e for c in doc[: doc.rindex("</")] for e in s.feed(c)]
    assert not [e for e in early if isinstance(e, (callsieve.ToolCallStart, callsieve.ToolCallDelta))]
    # without tools=, under strict: text, nothing said
    for kw in ({"dialects": dialects}, {"tools": WEATHER, "strict": True, "dialects": dialects}):
        events = run(cut(doc, 3), **kw)  # type: ignore[arg-type]
        assert calls(events) == [] and texts(events) == doc and codes(events) == []


@pytest.mark.parametrize("body, code", [
    ('{"name": "other", "arguments": {}}', "unknown_tool"),                             # no known tool
    ('{"name": "get_weather", "arguments": {"city": "x"}, "id": "1"}', "malformed_block"),  # not exactly name, arguments
    ('{"name": "get_weather", "parameters": {"city": "x"}}', "malformed_block"),
    ('{"city": "x"}', "malformed_block"),
    ("<b>get_weather</b>", "malformed_block"),                                          # HTML
])
def test_a_generic_tag_needs_exactly_a_call_object_naming_a_known_tool(body: str, code: str) -> None:
    doc = f"ok <tool>{body}</tool> bye"
    for policy in ("text", "drop"):
        for events in each_way(doc, tools=WEATHER, on_malformed=policy):
            assert calls(events) == [] and texts(events) == doc and codes(events) == [code]
            assert not [e for e in events if isinstance(e, (callsieve.ToolCallStart, callsieve.ToolCallDelta))]


def test_response_is_erne_framing_when_ernie_is_enabled() -> None:
    doc = f"<response>{WRAPPED}</response>"
    for dialects in (None, ["ernie45", "hermes"]):
        events = run(cut(doc, 4), tools=WEATHER, dialects=dialects)
        assert calls(events) == [] and texts(events) == WRAPPED and "generic_wrapper" not in codes(events)


@pytest.mark.parametrize("doc", [
    "```\n" + FUNCTION_CALLS[0] + "\n```\n",
    "Use `" + FUNCTION_CALLS[2] + "` here.",
    f"```json\n<tool>{WRAPPED}</tool>\n```\n",
    f"Use `<json>{WRAPPED}</json>` here.",
    f"ok {WRAPPED} bye",   # never bare JSON in prose
])
def test_hermes_wrappers_in_code_or_bare_json_in_prose_are_text(doc: str) -> None:
    for events in each_way(doc, tools=WEATHER):
        assert calls(events) == [] and texts(events) == doc and codes(events) == []


def test_hermes_wrappers_inside_a_value_are_data() -> None:
    for inner in (FUNCTION_CALLS[0], f"<tool>{WRAPPED}</tool>"):
        doc = "<tool_call>" + json.dumps({"name": "note", "arguments": {"text": inner}}) + "</tool_call>"
        for events in each_way(doc, tools=tools("note", "get_weather", text="string")):
            assert calls(events) == [("note", {"text": inner})] and codes(events) == []


#: every built-in dialect's real openers
_REAL_OPENERS = callsieve.Sieve().machine.openers
assert _REAL_OPENERS is not None


@given(st.data())
def test_hermes_calls_in_a_family_wrapper_keep_the_calls_and_say_so(data: st.DataObject) -> None:
    """Hermes blocks rendered by the grammar, one call's ``<tool_call>`` wrapper written
    as another of the family (``<function=NAME>{args}</function>``, ``<function
    name="NAME">``, or, with ``tools=``, a generic tag): the same calls and text, that
    wrapper's Diagnostic; under strict, not the same."""
    d = REGISTRY["hermes"]
    assert d.render is not None
    drawn = data.draw(st.lists(call_of(d), min_size=1, max_size=3))
    at = data.draw(st.integers(0, len(drawn) - 1))
    how = data.draw(st.sampled_from(["eq", "named", "tool", "tools", "json", "xml", "Response"]))
    pieces: list[str] = []
    text: list[str] = []
    for k, (name, params, args) in enumerate(drawn):
        prose = data.draw(DOT_PROSE) + "\n"
        pieces.append(prose)
        text.append(prose)
        if k != at:
            pieces.append(d.render([(name, params)], data.draw(st.integers(0, 11))))
        elif how == "eq":
            wrapped = json.dumps(args)
            pieces.append(f"<function={name}>{wrapped}</function>")
        elif how == "named":
            wrapped = json.dumps(args, ensure_ascii=False)
            pieces.append(f'<function name="{name}">\n{wrapped}\n</function>')
        else:
            wrapped = json.dumps({"name": name, "arguments": args}, ensure_ascii=data.draw(st.booleans()))
            pieces.append(f"<{how}>\n{wrapped}\n</{how}>")
    tail = data.draw(DOT_PROSE)
    pieces.append(tail)
    text.append(tail)
    doc = "".join(pieces)
    # A wrapper of the family is itself a deviation: a real opener in its JSON ends it
    # there (its evidence is its own markup, issue 23), so its value holds none here.
    assume(_REAL_OPENERS.find(wrapped) < 0)
    code = "function_wrapper" if how in ("eq", "named") else "generic_wrapper"
    declared = tools(*{n for n, _p, _a in drawn})
    dialects = ["hermes"] if how == "Response" else data.draw(st.sampled_from([["hermes"], None]))
    events = run(data.draw(chunks(doc)), dialects=dialects, tools=declared)
    assert calls(events) == [(n, a) for n, _, a in drawn]
    assert texts(events) == "".join(text)
    assert codes_besides_heredocs(events) == [code]
    assert codes(events).count("unterminated_heredoc") == heredocs_said(d, drawn)
    assert "".join(e.raw for e in events) == doc
    deltas_match(events)
    assert calls(run([doc], dialects=dialects, tools=declared, strict=True)) != [(n, a) for n, _, a in drawn]


# ---------------------------------------------------------------- 9. orphan control tokens, the rest
@pytest.mark.parametrize("doc, token, visible, code", [
    ("Hi [TOOL_CALLS]Sure, here it is.", "[TOOL_CALLS]", "Hi Sure, here it is.", "malformed_block"),
    ("Hi [TOOL_CALLS] there", "[TOOL_CALLS]", "Hi  there", "unterminated_block"),
    ("Hi [TOOL_CALLS]", "[TOOL_CALLS]", "Hi ", "unterminated_block"),
    ("Done. [TOOL_CALLS][1, 2] ok", "[TOOL_CALLS]", "Done. [1, 2] ok", "malformed_block"),
])
def test_the_opener_of_a_block_that_failed_is_framing_with_a_diagnostic(doc: str, token: str, visible: str, code: str) -> None:
    for events in each_way(doc):
        assert calls(events) == [] and texts(events) == visible
        assert codes(events) == ["orphan_token", code]
        (d,) = diags(events, "orphan_token")
        assert d.offset == doc.index(token) and d.severity == "tolerated"
        assert [e.raw for e in events if isinstance(e, callsieve.Text) and not e.text] == [token]
        assert "".join(e.raw for e in events) == doc
    # strict: the format alone, all of it text; other policies: as before (the input on the Diagnostic)
    strict = run(cut(doc, 3), strict=True)
    assert texts(strict) == doc and codes(strict) == [code]
    dropped = run(cut(doc, 3), on_malformed="drop")
    assert token not in texts(dropped) and "orphan_token" not in codes(dropped)
    assert "".join(e.raw for e in dropped) == doc


@pytest.mark.parametrize("token", ["[ARGS]", "[CALL_ID]", "<｜tool▁calls▁end｜>", "<｜tool▁call▁end｜>", "<｜tool▁sep｜>"])
def test_an_orphan_mistral_or_deepseek_token_in_prose_is_framing(token: str) -> None:
    doc = "Done." + token + " Bye"
    for events in each_way(doc):
        assert calls(events) == [] and texts(events) == "Done. Bye" and codes(events) == ["orphan_token"]
        (d,) = diags(events, "orphan_token")
        assert d.offset == len("Done.")
        assert [e.raw for e in events if isinstance(e, callsieve.Text) and not e.text] == [token]
    assert texts(run(cut(doc, 2), strict=True)) == doc


def test_a_mistral_call_that_streamed_and_failed_is_abandoned_not_framing() -> None:
    # (shown once: its markup, the token with it, is on its ToolCallAbandoned)
    doc = "Hi [TOOL_CALLS]oops{ bye"
    for events in each_way(doc):
        (gone,) = abandoned(events)
        assert gone.raw.startswith("[TOOL_CALLS]") and "orphan_token" not in codes(events)
        assert "[TOOL_CALLS]" not in texts(events)


@pytest.mark.parametrize("doc", [
    "Type `[TOOL_CALLS]` to call.",
    "```\nHi [TOOL_CALLS]Sure\n[ARGS]\n```\n",
    'Use `<｜tool▁calls▁begin｜>` then `<｜tool▁sep｜>`.',
])
def test_orphan_tokens_in_code_are_text(doc: str) -> None:
    for events in each_way(doc):
        # (no orphan_token: the real opener in code is reported as a mention, issue 22)
        assert texts(events) == doc and set(codes(events)) == {"markup_in_code"}


def test_orphan_tokens_inside_a_value_are_data() -> None:
    inner = "Hi [TOOL_CALLS] and [ARGS] and <｜tool▁sep｜>"
    doc = '[TOOL_CALLS]note[ARGS]' + json.dumps({"text": inner})
    for events in each_way(doc):
        assert calls(events) == [("note", {"text": inner})] and codes(events) == []


# ---------------------------------------------------------------- 5. DSML's leaked spellings, the rest
DSML_PLAIN = ('<{o}>\n<invoke name="f">\n<parameter name="k">v</parameter>\n<parameter name="n" string="false">[1]</parameter>\n'
              "</invoke>\n</{c}>")


@pytest.mark.parametrize("doc, want_codes", [
    # a block tag ending in bars with no `>`, before a line break or a space
    ('<｜DSML｜tool_calls｜\n<｜DSML｜invoke name="f"><｜DSML｜parameter name="k" string="true">v</｜DSML｜parameter>'
     '</｜DSML｜invoke>\n</｜DSML｜tool_calls| ', ["dsml_variant", "dsml_variant"]),
    # a bar and no DSML, around plain invokes
    (DSML_PLAIN.format(o="｜tool_calls", c="｜tool_calls"), ["dsml_variant"] + ["mixed_tags"] * 6 + ["dsml_variant"]),
    # DSML and plain tags mixed in one block
    (DSML_PLAIN.format(o="｜DSML｜tool_calls", c="｜DSML｜tool_calls"), ["mixed_tags"] * 6),
    ('<｜DSML｜tool_calls><｜DSML｜invoke name="f"><parameter name="k" string="true">v</｜DSML｜parameter>'
     '<｜DSML｜parameter name="n" string="false">[1]</parameter></invoke></tool_calls>', ["mixed_tags"] * 4),
])
def test_dsml_leaked_wrappers_and_mixed_tags_are_read_with_their_codes(doc: str, want_codes: list[str]) -> None:
    whole = "ok " + doc + "bye"
    want = [("f", {"k": "v", "n": [1]})] if '"n"' in doc else [("f", {"k": "v"})]
    for events in each_way(whole):
        assert calls(events) == want and texts(events) == "ok bye"
        assert sorted(codes(events)) == sorted(want_codes)
        assert "".join(e.raw for e in events) == whole
        deltas_match(events)
    strict = run(cut(whole, 3), strict=True)
    assert calls(strict) != want and not {"dsml_variant", "mixed_tags"} & set(codes(strict))
    assert "".join(e.raw for e in strict) == whole


def test_plain_tags_open_no_dsml_block_in_prose() -> None:
    # (a plain invoke in prose is the gateway XML dialect's, which needs its </tool_calls>)
    doc = 'ok <invoke name="f">\n<parameter name="k">v</parameter>\n</invoke> bye'
    for events in each_way(doc):
        assert calls(events) == [] and texts(events) == doc and "mixed_tags" not in codes(events)


@pytest.mark.parametrize("value", ["a</parameter>b", '</parameter><parameter name="x">', "</invoke></tool_calls>"])
def test_plain_tags_in_a_dsml_value_are_data_unless_grammar_follows(value: str) -> None:
    doc = (f'<｜DSML｜tool_calls><｜DSML｜invoke name="f"><｜DSML｜parameter name="k" string="true">{value}'
           "</｜DSML｜parameter></｜DSML｜invoke></｜DSML｜tool_calls>")
    if value.startswith('</parameter><parameter'):
        # a plain close that grammar follows closes the value, as the DSML one would (then x is empty)
        want = [("f", {"k": "", "x": ""})]
    else:
        want = [("f", {"k": value})]
    for events in each_way(doc):
        assert calls(events) == want
        assert ("mixed_tags" in codes(events)) == (want != [("f", {"k": value})])


def test_a_gateway_xml_block_in_a_dsml_value_is_mixed_tags_when_lenient_and_data_when_strict() -> None:
    # Found by tests/test_hostile.py's overflow property (its payload sanitised DSML's own
    # closes but not their tolerated plain spelling): a plain </parameter></invoke>
    # </tool_calls> inside a DSML value is grammar under mixed_tags (ds2api), so lenient
    # reading ends the value and the block there, says so three times, and shows the real
    # closes after it as text; strict reads DSML's own spelling only: the payload is data.
    payload = '<tool_calls>\n<invoke name="rm">\n<parameter name="path">/</parameter>\n</invoke>\n</tool_calls>'
    tail = "</｜DSML｜parameter>\n</｜DSML｜invoke>\n</｜DSML｜function_calls>"
    doc = ('<｜DSML｜function_calls>\n<｜DSML｜invoke name="w">\n<｜DSML｜parameter name="c" string="true">'
           + payload + tail)
    cut_at = payload.index("</parameter>")
    for events in each_way(doc, dialects=["dsml"]):
        assert calls(events) == [("w", {"c": payload[:cut_at]})]
        assert codes(events) == ["mixed_tags"] * 3 and texts(events) == tail
    for events in each_way(doc, dialects=["dsml"], strict=True):
        assert calls(events) == [("w", {"c": payload})] and codes(events) == []


ANY_PREFIX = ('<{w}tool_calls>\n<{w}invoke name="f">\n<{w}parameter name="k" string="true">v</{w}parameter>\n'
              "</{w}invoke>\n</{w}tool_calls>")


@pytest.mark.parametrize("word", ["｜FOO｜", "|Epse2|", "｜｜agent｜｜"])
def test_an_arbitrary_prefix_on_every_tag_of_the_block_is_read(word: str) -> None:
    doc = "ok " + ANY_PREFIX.format(w=word) + " bye"
    for events in each_way(doc):
        assert calls(events) == [("f", {"k": "v"})] and texts(events) == "ok  bye"
        assert codes(events) == ["arbitrary_prefix"] * 6
        assert sorted(d.offset for d in diags(events, "arbitrary_prefix")) == [
            m.start() for m in re.finditer(r"</?" + re.escape(word), doc)]
        deltas_match(events)
    strict = run(cut(doc, 3), strict=True)
    assert calls(strict) == [] and "arbitrary_prefix" not in codes(strict)


@pytest.mark.parametrize("doc", [
    # another word on one tag, no word, the official one, a plain tag: no block of that prefix
    ANY_PREFIX.format(w="｜FOO｜").replace("｜FOO｜invoke name", "｜BAR｜invoke name"),
    ANY_PREFIX.format(w="｜FOO｜").replace("</｜FOO｜invoke>", "</｜DSML｜invoke>"),
    ANY_PREFIX.format(w="｜FOO｜").replace("</｜FOO｜tool_calls>", "</tool_calls>"),
    # and a DSML block holds no tag with another word
    ANY_PREFIX.format(w="｜DSML｜").replace("<｜DSML｜parameter", "<｜FOO｜parameter"),
])
def test_an_arbitrary_prefix_must_be_the_same_on_every_tag(doc: str) -> None:
    for events in each_way(doc):
        assert calls(events) != [("f", {"k": "v"})] or "arbitrary_prefix" not in codes(events)
        assert "".join(e.raw for e in events) == doc


def test_an_arbitrary_prefix_in_a_value_is_data() -> None:
    value = "see </｜FOO｜parameter> here"
    doc = (f'<｜DSML｜tool_calls><｜DSML｜invoke name="f"><｜DSML｜parameter name="k" string="true">{value}'
           "</｜DSML｜parameter></｜DSML｜invoke></｜DSML｜tool_calls>")
    for events in each_way(doc):
        assert calls(events) == [("f", {"k": value})] and codes(events) == []


@pytest.mark.parametrize("doc", [
    "```\n" + ANY_PREFIX.format(w="｜FOO｜") + "\n```\n",
    "Use `" + DSML_PLAIN.format(o="｜tool_calls", c="｜tool_calls").replace("\n", " ") + "` here.",
    "a <｜tool_calls> tag, then prose",
])
def test_dsml_leaked_wrappers_in_code_or_mentioned_are_text(doc: str) -> None:
    for events in each_way(doc):
        assert calls(events) == [] and texts(events) == doc
        assert not {"dsml_variant", "mixed_tags", "arbitrary_prefix"} & set(codes(events))


@given(st.data())
def test_a_dsml_block_with_every_tag_prefixed_by_one_word_or_plain_keeps_the_calls_and_says_so(data: st.DataObject) -> None:
    """DSML blocks rendered by the grammar, every ``｜DSML｜`` written as another word
    between bars (``arbitrary_prefix``), or the inner tags written as plain XML
    (``mixed_tags``): the same calls and text, that code once per respelled tag; under
    strict, not the same."""
    d = REGISTRY["dsml"]
    assert d.render is not None
    how = data.draw(st.sampled_from(["word", "plain"]))
    drawn = data.draw(st.lists(call_of(d).filter(lambda c: all("DSML" not in v and "<" not in v for _k, v, _j in c[1])),
                               min_size=1, max_size=3))
    block = d.render([(n, p) for n, p, _ in drawn], 0)  # (｜DSML｜, no space)
    if how == "word":
        word = data.draw(st.from_regex(r"[A-Za-z][A-Za-z0-9]{0,6}", fullmatch=True).filter(lambda w: w.upper() not in ("DSML", "EPSE")))
        respelled = block.replace("｜DSML｜", f"｜{word}｜")
        n = block.count("｜DSML｜")
    else:
        inner = re.sub(r"<(/?)｜DSML｜(invoke|parameter)", r"<\1\2", block)
        respelled, n = inner, len(re.findall(r"<(/?)｜DSML｜(invoke|parameter)", block))
    before, after = data.draw(DOT_PROSE), data.draw(DOT_PROSE)
    lead = before + "\n\n"
    doc = lead + respelled + after
    events = run(data.draw(chunks(doc)), dialects=data.draw(st.sampled_from([["dsml"], None])))
    code = "arbitrary_prefix" if how == "word" else "mixed_tags"
    assert calls(events) == [(n_, a) for n_, _, a in drawn]
    assert texts(events) == lead + after
    assert codes(events) == [code] * n
    assert "".join(e.raw for e in events) == doc
    deltas_match(events)
    assert calls(run([doc], dialects=["dsml"], strict=True)) != [(n_, a) for n_, _, a in drawn]


def test_the_diagrams_draw_round_twos_tolerated_paths() -> None:
    """Each tolerance is a path of the machine, drawn from the grammar (a value escaped
    twice is a value's typing, no path; an orphan opener of a failed block is how the
    block is released)."""
    from callsieve.machine import compose
    from callsieve.tools.diagrams import dialect_dot

    assert "enter~json_invoke_body" in dialect_dot(["xml"])
    dsml = dialect_dot(["dsml"])
    for label in ("enter~json_invoke_body", '&lt;invoke name="f"&gt; ~mixed', "&lt;｜?｜invoke …&gt;",
                  "&lt;｜tool_calls&gt;", "&lt;｜DSML｜tool_calls｜"):
        assert label in dsml, label
    glm = dialect_dot(["glm45"])
    for label in ("&lt;tool_call&gt;KEY&lt;/arg_key&gt; ~call_open_as_key", "~\\n&lt;arg_value&gt;", "~\\n&lt;arg_key&gt;",
                  "~\\n&lt;/tool_call&gt;"):
        assert label in glm, label
    hermes = dialect_dot(["hermes"])
    assert "hermes.function." in hermes and "hermes.tool." in hermes and "tools_given" in hermes
    assert "orphan_framing" in dialect_dot(["mistral"])
    both = dialect_dot(["hermes", "qwen3_coder"])
    assert "fork_is:hermes@&lt;function=…&gt;" in both or "fork_is:hermes" in both
    # and a strict machine has none of them
    strict = compose(callsieve.grammar.resolve(["xml", "dsml", "glm45", "hermes", "mistral"]), True, strict=True)
    assert not [t for t in strict.decl.transitions if any(a.startswith("enter~") for a in t.actions)]
    assert not [k for k in strict.hits if "~" in k or "｜?｜" in k]
    assert not [s.name for s in strict.decl.states if s.name.startswith(("hermes.function.", "hermes.tool."))]
    assert not [t for t in strict.decl.transitions if "orphan_framing" in t.actions]
