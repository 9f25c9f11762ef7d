"""Markers as the long tail of formats writes them (issue 21, items 3, 5, 6): a marker of
one character (Llama's ``;`` between calls), markers anchored at a word or line start
(Phi-4-mini's ``functools[`` is no marker in ``myfunctools[``), and framing tokens that
stand outside any block (Command's ``<|START_TEXT|>``): each read the same by both
runners, however the input is chunked, and each refused where it cannot work."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import example, given, strategies as st

import callsieve
from callsieve.events import merged
from callsieve.grammar import Block, Call, Dialect, JsonArgs, JsonCall, JsonCalls, Many, Marker, Reasoning, Seq
from strategies import calls, codes, run, texts

OPEN = Marker("<calls>", ("<calls>",))
CLOSE = Marker("</calls>", ("</calls>",))
SEMI = Marker(";", (";",))


def read(doc: str, dialects: list[Any], size: int = 0, **kw: Any) -> list[callsieve.Event]:
    """``doc`` in chunks of ``size`` (0: whole) through both runners: they agree, and
    every input character comes back once."""
    parts = [doc] if not size else [doc[i : i + size] for i in range(0, len(doc), size)]
    got = run(parts, dialects=dialects, **kw)
    ref = run(parts, dialects=dialects, runner="reference", **kw)
    assert merged(got) == merged(ref)
    assert "".join(e.raw for e in got) == doc
    return got


# ---------------------------------------------------------------- one-character markers
SEMIS = Dialect("semis", "JSON calls with ; between them", (Block(OPEN, Seq(JsonCall(), Many(Seq(SEMI, JsonCall()))), CLOSE),))
SEMI_DOC = 'a;b <calls>{"name": "f", "arguments": {}}; {"name": "g", "arguments": {"x": ";"}};{"name": "h", "arguments": {}}</calls> c;'


@pytest.mark.parametrize("size", [0, 1, 2, 3, 5])
def test_a_one_character_marker_fires(size: int) -> None:
    events = read(SEMI_DOC, [SEMIS], size)
    assert calls(events) == [("f", {}), ("g", {"x": ";"}), ("h", {})]
    assert texts(events) == "a;b  c;"
    assert not codes(events)


@given(st.data())
def test_a_one_character_marker_in_any_chunking(data: st.DataObject) -> None:
    cuts = sorted(data.draw(st.sets(st.integers(1, len(SEMI_DOC) - 1), max_size=12)))
    parts = [SEMI_DOC[i:j] for i, j in zip([0, *cuts], [*cuts, len(SEMI_DOC)])]
    got = run(parts, dialects=[SEMIS])
    assert merged(got) == merged(run(parts, dialects=[SEMIS], runner="reference"))
    assert calls(got) == [("f", {}), ("g", {"x": ";"}), ("h", {})]


def test_a_one_character_marker_after_a_value_close() -> None:
    """A one-character marker that confirms a value's close (in ``after_close``)."""
    from callsieve.grammar import Opt, Param, Raw

    d = Dialect("semi_params", "k=v; k=v", (Block(
        OPEN,
        Many(Call(Marker(r'<c name="(?P<name>\w+)">', ('<c name="f">',)),
                  Many(Seq(Param(Marker(r'<p name="(?P<name>\w+)">', ('<p name="k">',)), Raw(Marker("</p>", ("</p>",)))),
                           Opt(SEMI))), close=Marker("</c>", ("</c>",))), min=1),
        CLOSE),))
    doc = '<calls><c name="f"><p name="a">1</p>;<p name="b">2</p>x;</p></c></calls>'
    for size in (0, 1, 2):
        assert calls(read(doc, [d], size)) == [("f", {"a": "1", "b": "2</p>x;"})]


def test_a_one_character_marker_that_begins_another_is_refused() -> None:
    d = Dialect("semi_clash", "; and ;;", (Block(OPEN, Seq(JsonCall(), Many(Seq(SEMI, JsonCall())),
                                                             Marker(";;", (";;",))), CLOSE),))
    with pytest.raises(callsieve.GrammarError, match=r"marker ';' is one character, and ';;' begins with it.*rule"):
        callsieve.Sieve(dialects=[d])


# ---------------------------------------------------------------- anchors
FUNCTOOLS = Dialect("functools", "a word-anchored opener", (Block(Marker("functools", ("functools",), anchor="word"), JsonCalls(), None),))
CALL_F = '[{"name": "f", "arguments": {"a": 1}}]'


@pytest.mark.parametrize("size", [0, 1, 2, 4])
@pytest.mark.parametrize("before,is_call", [
    ("", True), ("see ", True), ("x\n", True), ("(", True), ("é ", True),
    ("my", False), ("_", False), ("9", False), ("é", False),
])
def test_a_word_anchored_marker_is_no_marker_inside_a_word(size: int, before: str, is_call: bool) -> None:
    doc = before + "functools" + CALL_F + " end"
    events = read(doc, [FUNCTOOLS], size)
    if is_call:
        assert calls(events) == [("f", {"a": 1})] and texts(events) == before + " end"
    else:
        assert calls(events) == [] and texts(events) == doc


@given(st.lists(st.sampled_from(["functools", "functool", "f", "my", "_", "9", "é", " ", "(", "\n", "`"]), max_size=12),
       st.lists(st.tuples(st.integers(0, 120), st.integers(0, 120)), min_size=1, max_size=8))
@example(["my", "functools", " ", "functools"], [(0, 20), (0, 8), (2, 10)])  # (a word the end cuts, after one found)
def test_a_word_finder_finds_what_the_word_scan_finds(parts: list[str], asks: list[tuple[int, int]]) -> None:
    """``Matcher.word_finder``: ``str.find`` for one anchored literal word, and what it
    found kept for the next question of the same chunk (issue 21: prose fed whole with
    every dialect enabled). The oracle is the matcher's own ``word_scan``, searched by
    ``re`` from each question's start to its end, asked in any order."""
    import re

    matcher = callsieve.Sieve(dialects=[FUNCTOOLS]).machine.matchers["text"]
    assert matcher.word_literals == ("functools",)
    find = matcher.word_finder()
    assert find is not None and matcher.word_finder() is find  # (one per context)
    scan = re.compile(matcher.word_scan)
    s = "".join(parts)
    for i, j in asks:
        i, j = min(i, len(s)), min(j, len(s))
        m = scan.search(s, i, j)
        # What the scans ask inline first (``known``): where the next word is, when the
        # last search tells it; the word in s[i:j] is then there or nowhere.
        known = find.known(s, i)
        if known >= 0:
            after = scan.search(s, i)
            assert known == (after.start() if after is not None else len(s)), (s, i)
            assert (known if known + find.size <= j else -1) == (m.start() if m is not None else -1), (s, i, j)
        assert find(s, i, j) == (m.start() if m is not None else -1), (s, i, j)


def test_a_word_anchor_reads_what_stands_before_it_after_a_block() -> None:
    doc = "functools" + CALL_F + "functools" + CALL_F
    for size in (0, 1, 3):
        assert len(calls(read(doc, [FUNCTOOLS], size))) == 2  # a call ends in "]": no word character


def test_a_word_anchor_in_reasoning() -> None:
    think = Reasoning(Marker("<think>", ("<think>",)), Marker("</think>", ("</think>",)))
    d = Dialect("functools_r", "opener listened for in reasoning", FUNCTOOLS.blocks, reasoning=(think,), calls_in_reasoning=True)
    for doc, n in (("<think>ok functools" + CALL_F, 1), ("<think>okfunctools" + CALL_F + "</think>", 0)):
        for size in (0, 1, 3):
            assert len(calls(read(doc, [d], size))) == n


LINE = Dialect("line_calls", "a line-anchored opener", (Block(Marker("CALL:", ("CALL:",), anchor="line"), JsonCalls(), None),))


@pytest.mark.parametrize("size", [0, 1, 2])
@pytest.mark.parametrize("before,is_call", [
    ("", True), ("text\n", True), ("text\n   ", True), ("\t", True),
    ("text ", False), ("text\nx ", False),
])
def test_a_line_anchored_marker_stands_at_a_line_start(size: int, before: str, is_call: bool) -> None:
    doc = before + "CALL:" + CALL_F
    events = read(doc, [LINE], size)
    assert (calls(events) == [("f", {"a": 1})]) is is_call


def test_an_anchor_where_no_prose_is_read_is_refused() -> None:
    d = Dialect("anchored_inner", "an anchored marker between calls", (Block(
        OPEN, Seq(JsonCall(), Many(Seq(Marker(";", (";",), anchor="word"), JsonCall()))), CLOSE),))
    with pytest.raises(callsieve.GrammarError, match=r"anchored \('word'\) and listened for in semi|anchored.*reads no prose.*rule"):
        callsieve.Sieve(dialects=[d])


def test_an_unknown_anchor_is_refused() -> None:
    d = Dialect("anchor_typo", "t", (Block(Marker("CALL:", ("CALL:",), anchor="words"), JsonCalls(), None),))
    with pytest.raises(callsieve.GrammarError, match=r"anchor 'words': one of"):
        callsieve.Sieve(dialects=[d])


# ---------------------------------------------------------------- framing tokens
def special(t: str) -> Marker:
    return Marker(rf"<\|{t}\|>", (f"<|{t}|>",))


THINKING = Reasoning(special("START_THINKING"), special("END_THINKING"), "in_reasoning_cmd")
FRAMED = Dialect(
    "framed",
    "calls in <|START_ACTION|>, text framed by <|START_TEXT|> … <|END_TEXT|>",
    (Block(special("START_ACTION"), JsonCalls(JsonCall(name=("tool_name",), arguments=("parameters",))), special("END_ACTION")),),
    reasoning=(THINKING,),
    framing=(special("START_TEXT"), special("END_TEXT"), special("END_OF_TURN_TOKEN"), special("START_RESPONSE")),
)


@pytest.mark.parametrize("size", [0, 1, 3, 7])
def test_framing_tokens_ride_in_raw_never_in_text(size: int) -> None:
    doc = ("<|START_THINKING|>plan <|START_RESPONSE|> it<|END_THINKING|><|START_TEXT|>Hello<|END_TEXT|>"
           '<|START_ACTION|>[{"tool_name": "f", "parameters": {"a": 1}}]<|END_ACTION|><|END_OF_TURN_TOKEN|>')
    events = read(doc, [FRAMED], size)
    assert texts(events) == "Hello"
    assert "".join(e.text for e in events if isinstance(e, callsieve.Reasoning)) == "plan  it"
    assert calls(events) == [("f", {"a": 1})]
    assert not codes(events)


def test_framing_in_a_value_is_data() -> None:
    doc = '<|START_ACTION|>[{"tool_name": "f", "parameters": {"a": "<|END_TEXT|>"}}]<|END_ACTION|>'
    assert calls(read(doc, [FRAMED], 1)) == [("f", {"a": "<|END_TEXT|>"})]


def test_framing_two_dialects_declare_counts_once() -> None:
    twin = Dialect("framed_twin", "the same framing", (), framing=(special("END_OF_TURN_TOKEN"),))
    assert texts(read("a<|END_OF_TURN_TOKEN|>b", [FRAMED, twin], 1)) == "ab"


def test_framing_that_reads_like_an_opener_is_refused() -> None:
    clash = Dialect("framing_clash", "frames what opens a block", (), framing=(special("START_ACTION"),))
    with pytest.raises(callsieve.GrammarError, match=r"framing marker '<\|START_ACTION\|>' reads the same text.*rule.*"):
        callsieve.Sieve(dialects=[FRAMED, clash])


def test_a_dialect_of_framing_alone_is_valid() -> None:
    only = Dialect("framing_only", "nothing but framing", (), framing=(special("eot"),))
    assert texts(read("a<|eot|>b", [only])) == "ab"


def test_framing_with_every_dialect() -> None:
    # (the built-in cohere_command declares this framing, and a reasoning of its own)
    doc = "<|START_TEXT|>Hi<|END_TEXT|><|END_OF_TURN_TOKEN|>"
    for size in (0, 2):
        assert texts(read(doc, list(callsieve.DIALECTS), size)) == "Hi"


_ = (Call, JsonArgs)
