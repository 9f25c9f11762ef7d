"""Blocks their own body opens (issue 21, item 2): Llama's bare ``{"name": …}``, a bare
pythonic ``[f(…)]``. Read only where the response begins (after reasoning and
whitespace), never mid-prose, never in a fence; with ``tools=`` only for a known name;
and not at all by ``Sieve()`` with no tools and no dialects named (a JSON answer the
user asked for stays text). The ``start`` state is compared across both runners in
random chunkings, and the prose scan never listens for a lead."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given, strategies as st

import callsieve
from callsieve.events import merged
from callsieve.grammar import Block, Dialect, JsonCall, JsonCalls, Marker, PythonCall, Seq
from callsieve.machine import compose
from strategies import calls, codes, reasoning_text, run, texts

TOOLS = [{"type": "function", "function": {"name": n, "parameters": {"type": "object"}}} for n in ("get_weather", "get_time")]
LLAMA = '{"name": "get_weather", "parameters": {"city": "Paris"}}'
PYTHONIC = '[get_weather(city="Paris"), get_time(tz="CET")]'
BOTH = [("get_weather", {"city": "Paris"}), ("get_time", {"tz": "CET"})]


def read(doc: str, size: int = 0, **kw: Any) -> list[callsieve.Event]:
    parts = [doc] if not size else [doc[i : i + size] for i in range(0, len(doc), size)]
    got = run(parts, **kw)
    assert merged(got) == merged(run(parts, runner="reference", **kw))
    assert "".join(e.raw for e in got) == doc
    return got


# ---------------------------------------------------------------- who reads them
@pytest.mark.parametrize("doc", [LLAMA, PYTHONIC, '{"answer": 42, "name": "Alice"}', "[1, 2, 3]"])
def test_the_default_sieve_reads_no_bare_call(doc: str) -> None:
    """``Sieve()``: no tools, no dialects named. A JSON answer stays text, untouched."""
    for size in (0, 1):
        events = read(doc, size)
        assert calls(events) == [] and texts(events) == doc and codes(events) == []


@pytest.mark.parametrize("kw", [{"tools": TOOLS}, {"dialects": ["llama3_json", "pythonic"]},
                                {"dialects": callsieve.DIALECTS}, {"bare_calls": True}],
                         ids=["tools", "named", "all-named", "bare_calls"])
@pytest.mark.parametrize("size", [0, 1, 3])
def test_bare_calls_are_read_when_asked_for(kw: dict[str, Any], size: int) -> None:
    assert calls(read(LLAMA, size, **kw)) == [("get_weather", {"city": "Paris"})]
    events = read(PYTHONIC, size, **kw)
    assert calls(events) == BOTH and texts(events) == "" and codes(events) == []


def test_bare_calls_false_turns_them_off() -> None:
    events = read(PYTHONIC, dialects=["pythonic"], bare_calls=False)
    assert calls(events) == [] and texts(events) == PYTHONIC
    with pytest.raises(callsieve.InvalidOptionError, match="bare_calls"):
        callsieve.Sieve(bare_calls="yes")  # type: ignore[arg-type]


def test_with_tools_only_a_known_name_opens_a_bare_block() -> None:
    for doc in ('{"name": "lookup", "parameters": {"q": "x"}}', '[lookup(q="x")]', '{"name": "Alice", "age": 3}'):
        for size in (0, 1):
            events = read(doc, size, tools=TOOLS)
            assert calls(events) == [] and texts(events) == doc, doc
            assert not [e for e in events if isinstance(e, (callsieve.ToolCallStart, callsieve.ToolCallDelta))]
            assert [(d.code, d.severity) for d in events if isinstance(d, callsieve.Diagnostic)] == [("malformed_block", "noise")]
    # once the first call names a known tool, the block is calls; another unknown one is policy's
    events = read('[get_weather(city="Paris"), lookup(q="x")]', tools=TOOLS)
    assert calls(events) == [("get_weather", {"city": "Paris"}), ("lookup", {"q": "x"})]
    assert codes(events) == ["unknown_tool"]


def test_a_json_answer_to_a_named_dialect_is_text_with_a_noise_diagnostic() -> None:
    doc = '{"answer": 42, "items": [1, 2]}'
    events = read(doc, 1, dialects=["llama3_json"])
    assert calls(events) == [] and texts(events) == doc
    assert [(d.code, d.severity) for d in events if isinstance(d, callsieve.Diagnostic)] == [("malformed_block", "noise")]


# ---------------------------------------------------------------- where they stand
@pytest.mark.parametrize("before, is_call", [
    ("", True), ("  \n\n", True), ("\t", True),
    ("<think>plan</think>\n\n", True), ("<think>plan</think>", True),
    ("Sure: ", False), ("Sure.\n\n", False), ("```\n", False), ("x <think>t</think>\n", False),
])
@pytest.mark.parametrize("size", [0, 1, 4])
def test_only_where_the_response_begins(before: str, is_call: bool, size: int) -> None:
    events = read(before + PYTHONIC + " Done.", size, tools=TOOLS)
    assert (calls(events) == BOTH) is is_call
    if not is_call:
        assert PYTHONIC in texts(events)


def test_after_a_prompt_that_ended_inside_reasoning() -> None:
    doc = "I will look it up.</think>\n" + LLAMA
    for size in (0, 1):
        events = read(doc, size, dialects=["llama3_json", "hermes"], start_in_reasoning=True)
        assert calls(events) == [("get_weather", {"city": "Paris"})]
        assert reasoning_text(events) == "I will look it up." and texts(events) == "\n"


def test_a_mistral_call_at_the_start_is_mistrals() -> None:
    doc = '[TOOL_CALLS]get_weather[ARGS]{"city": "Paris"}'
    for size in (0, 1):
        events = read(doc, size, tools=TOOLS)
        assert [e.dialect for e in events if isinstance(e, callsieve.ToolCall)] == ["mistral"]


@pytest.mark.parametrize("doc", ["[see above](x) ok", "[1, 2]", "[ TODO ]", "{not json", "[f]", "[f (x)", "{}"])
def test_prose_that_begins_with_a_bracket_is_prose(doc: str) -> None:
    for size in (0, 1):
        events = read(doc, size, tools=TOOLS)
        assert calls(events) == [] and texts(events) == doc


def test_llama_calls_with_semicolons_and_end_of_turn() -> None:
    doc = '{"name": "get_weather", "parameters": {"city": "Paris"}};{"name": "get_time", "arguments": {"tz": "CET"}}<|eot_id|>'
    for size in (0, 1, 2):
        events = read(doc, size, tools=TOOLS)
        assert calls(events) == BOTH and texts(events) == ""


# ---------------------------------------------------------------- the machine
def test_the_prose_scan_listens_for_no_lead() -> None:
    m = compose(callsieve.grammar.resolve(None), bare=True)
    # (harmony's role-part recipient is listened for first: Header.at_start)
    assert m.start == "header_start" and m.decl.entries == ("header_start", "start")
    assert "{" not in m.matchers["text"].start_chars
    assert set(m.matchers["start"].start_chars) == {"{", "["}
    assert compose(callsieve.grammar.resolve(None), bare=False).start == "header_start"
    without_harmony = tuple(d for d in callsieve.grammar.resolve(None) if d.name != "harmony")
    assert compose(without_harmony, bare=True).start == "start"
    assert compose(without_harmony, bare=False).start == "text"


@pytest.mark.parametrize("lead", ["", " ", "  ", " t", " to"])
def test_what_is_no_harmony_header_at_the_start_goes_on_where_a_bare_block_may_open(lead: str) -> None:
    """With every dialect, the stream begins listening for harmony's `` to=``; what is
    none is read again where a block its own body opens: a held space, or `` to`` that
    goes on otherwise, is text, and the bare call after it a call."""
    doc = lead + ' {"name": "get_weather", "parameters": {"city": "Paris"}}'
    for size in (0, 1, 2):
        events = read(doc, size, tools=TOOLS, dialects=None)
        if lead.strip():
            assert calls(events) == [] and texts(events) == doc
        else:
            assert calls(events) == [("get_weather", {"city": "Paris"})] and texts(events) == lead + " "


@st.composite
def bare_documents(draw: st.DrawFn) -> tuple[str, list[tuple[str, dict[str, Any]]], str]:
    before = draw(st.sampled_from(["", " ", "\n\n", "<think>a [b] {c}</think>", "<think>x</think>\n"]))
    names = draw(st.lists(st.sampled_from(["get_weather", "get_time"]), min_size=1, max_size=3))
    args = [draw(st.dictionaries(st.sampled_from(["city", "tz", "n"]), st.one_of(st.text(max_size=5), st.integers()),
                                 max_size=2)) for _ in names]
    if draw(st.booleans()):
        body = "[" + ", ".join(f"{n}(" + ", ".join(f"{k}={v!r}" for k, v in a.items()) + ")" for n, a in zip(names, args)) + "]"
    else:
        body = "; ".join(json.dumps({"name": n, "parameters": a}) for n, a in zip(names, args))
    after = draw(st.sampled_from(["", " Done.", "\n[x]"]))
    return before + body + after, list(zip(names, args)), after


@given(bare_documents(), st.data())
def test_runners_agree_on_bare_calls_in_any_chunking(case: tuple[str, list[Any], str], data: st.DataObject) -> None:
    doc, expected, after = case
    cuts = sorted(data.draw(st.sets(st.integers(1, max(1, len(doc) - 1)), max_size=12)))
    parts = [doc[i:j] for i, j in zip([0, *cuts], [*cuts, len(doc)]) if i < j]
    got = run(parts, tools=TOOLS)
    assert merged(got) == merged(run(parts, tools=TOOLS, runner="reference"))
    assert calls(got) == expected
    assert texts(got).strip() == after.strip()


@given(st.text(alphabet="[]{}(),: \n\"'abf=1;<>", max_size=30), st.data())
def test_runners_agree_on_what_begins_like_a_bare_call(doc: str, data: st.DataObject) -> None:
    cuts = sorted(data.draw(st.sets(st.integers(1, max(1, len(doc) - 1)), max_size=8)))
    parts = [doc[i:j] for i, j in zip([0, *cuts], [*cuts, len(doc)]) if i < j] or [""]
    got = run(parts, dialects=["llama3_json", "pythonic", "mistral"])
    assert merged(got) == merged(run(parts, dialects=["llama3_json", "pythonic", "mistral"], runner="reference"))
    assert "".join(e.raw for e in got) == doc


# ---------------------------------------------------------------- validation
def test_a_body_that_says_nothing_of_how_it_begins_opens_no_block() -> None:
    d = Dialect("bare_line", "one Python call, bare", (Block(None, Seq(PythonCall()), None),))
    with pytest.raises(callsieve.GrammarError, match=r"nothing says what that body begins with \(rule.*fix: declare Block\(decide="):
        callsieve.Sieve(dialects=[d])
    # what the body begins with, declared: the lead is read again by the body
    lead = Marker(r"get_[a-z_]{1,32}\(", ("get_weather(", "get_time("), "get_…(")
    ok = Dialect("bare_line", "one Python call, bare", (Block(None, Seq(PythonCall()), None, decide=lead),))
    events = read('get_weather(city="Paris") then prose', 1, dialects=[ok])
    assert calls(events) == [("get_weather", {"city": "Paris"})] and texts(events) == " then prose"
    assert calls(read("say (x) then prose", dialects=[ok])) == []


def test_two_blocks_their_body_opens_with_the_same_lead_are_refused() -> None:
    twin = Dialect("bare_twin", "a second bare JSON call", (Block(None, JsonCall(), None),))
    with pytest.raises(callsieve.GrammarError, match=r"its lead '\{' reads the same text as '\{'.*\(rule"):
        callsieve.Sieve(dialects=["llama3_json", twin])


def test_a_users_bare_block_with_its_own_lead() -> None:
    d = Dialect("bare_array", "a bare JSON array of calls", (Block(None, JsonCalls(), None),))
    doc = '[{"name": "f", "arguments": {"a": 1}}] after'
    events = read(doc, 1, dialects=[d])
    assert calls(events) == [("f", {"a": 1})] and texts(events) == " after"



# ---------------------------------------------------------------- xLAM's bare array
XLAM = '[{"name": "get_weather", "arguments": {"city": "Paris"}}, {"name": "get_time", "arguments": {"tz": "CET"}}]'


@pytest.mark.parametrize("size", [0, 1])
def test_xlam_pythonic_and_llama_leads_tell_the_three_bare_forms_apart(size: int) -> None:
    """Three blocks their bodies open, enabled together: ``[{`` is xLAM's array, ``[``
    then a name and ``(`` a Python list, ``{`` Llama's object."""
    named = ["xlam", "pythonic", "llama3_json"]
    for doc, dialect in ((XLAM, "xlam"), (PYTHONIC, "pythonic"), (LLAMA, "llama3_json")):
        events = read(doc, size, dialects=named)
        assert [e.dialect for e in events if isinstance(e, callsieve.ToolCall)] == [dialect] * (1 if doc == LLAMA else 2)
        assert texts(events) == "" and codes(events) == []


@pytest.mark.parametrize("doc", ["```json\n" + XLAM + "\n```\n", "Here: " + XLAM, "> " + XLAM])
def test_xlams_array_in_a_fence_or_after_text_is_text(doc: str) -> None:
    """vLLM strips a ```json fence; here a fenced array is what a user asking for JSON
    gets (in a fence markup is text), and after visible text a bracket is prose."""
    for size in (0, 1):
        events = read(doc, size, dialects=["xlam"])
        assert calls(events) == [] and texts(events) == doc


def test_with_tools_a_known_second_name_proves_nothing_of_an_unknown_first() -> None:
    """The first call is the evidence: a known name after an unknown one leaves the
    array text, and nothing of it streams (before, the second call proved the block
    and the first call's start streamed, then was abandoned)."""
    assert calls(read(XLAM, tools=TOOLS)) == BOTH
    for doc in (XLAM.replace("get_weather", "launch"), PYTHONIC.replace("get_weather", "launch")):
        for size in (0, 1):
            events = read(doc, size, tools=TOOLS)
            assert calls(events) == [] and texts(events) == doc
            assert not [e for e in events if isinstance(e, (callsieve.ToolCallStart, callsieve.ToolCallAbandoned))]
            assert [(d.code, d.severity) for d in events if isinstance(d, callsieve.Diagnostic)] == [("malformed_block", "noise")]
