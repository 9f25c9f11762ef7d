"""Costs that must not grow with the input, counted (not timed): speed itself belongs
to ``callsieve bench``."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, strategies as st

import callsieve
import callsieve.compiler
from callsieve import native
from callsieve.tools.bench_workloads import hostile_fences


class CountingStr(str):
    """A chunk that counts how often it is asked whether it holds a given character."""

    asked = 0

    def __contains__(self, item: object) -> bool:
        if item == "\uff1c":
            CountingStr.asked += 1
        return str.__contains__(self, item)  # type: ignore[operator]


@pytest.mark.skipif(native.is_compiled(callsieve.compiler),
                    reason="compiled (mypyc), `c in s` on a str is native: a str subclass's __contains__ is never "
                    "called, so there is nothing to count (the pure-Python suite counts it)")
def test_a_chunk_is_asked_once_for_its_rare_start_character_not_once_per_scan() -> None:
    """Regression (hostile bench, "fences" fed whole: growth exponent 1.78): the
    marker-aware scanner asked the whole chunk whether it held a ``＜`` at every scan,
    and a chunk fed whole is scanned again after every stop: O(stops x length).
    (The fences are read by the prose region's state run now, which scans nothing:
    the prose after them, a ``<`` and tildes inside lines, is scanned after every stop.)"""
    doc = CountingStr(hostile_fences(10_000, 1) + "<b> ~ x ~ y\n" * 1000)
    CountingStr.asked = 0
    s = callsieve.Sieve(dialects=["qwen3_coder"])  # one rare start character: ``＜``
    events = s.feed(doc) + s.close()
    assert "".join(e.raw for e in events) == doc
    assert 1 <= CountingStr.asked <= 2, CountingStr.asked


# ------------------------------------------------- tags decided whole (issue 13, item 2)
def _stepped_end(matcher: Any, tag: str, s: str, i: int) -> int:
    """What holding a tag one character at a time finds: the first non-viable prefix."""
    from callsieve.matcher import VIABLE

    j = i
    while j < len(s) and matcher.classify(tag + s[i : j + 1])[0] == VIABLE:
        j += 1
    return j


def _all_matchers() -> list[Any]:
    machine = callsieve.Sieve().machine
    out = list(machine.matchers.values())
    for by_scope in machine.scoped.values():
        out.extend(by_scope.values())
    return [m for m in out if m.entries]


_MATCHERS = _all_matchers()
_PIECES = sorted({ex for m in _MATCHERS for e in m.entries for ex in e.marker.examples})


@given(st.data())
def test_a_tag_decided_at_once_ends_where_stepping_it_would(data: st.DataObject) -> None:
    matcher = data.draw(st.sampled_from(_MATCHERS))
    ex = data.draw(st.sampled_from([x for e in matcher.entries for x in e.marker.examples]))
    cut = data.draw(st.integers(1, len(ex)))
    tail = data.draw(st.lists(st.one_of(st.sampled_from(_PIECES), st.text("<>=/|｜ \n\"ax]", max_size=3)),
                              max_size=4))
    s = ex[cut:] + "".join(tail)
    assert matcher.viable_end(ex[:cut], s, 0) == _stepped_end(matcher, ex[:cut], s, 0)



def test_the_prose_scan_has_a_start_character_prefix_with_every_dialect() -> None:
    """A shared opener's pattern is an alternation (``(?:<tool_call…>)|(?:<tool_call…>)``);
    left whole, it could not be factored behind the start characters, and one
    unfactored alternative in the prose scan costs ``re`` its skip to the next start
    character: the pattern is tried at every position (with every dialect enabled,
    prose fed whole ran at half the speed). Each alternative is factored alone."""
    import re

    from callsieve.grammar import resolve
    from callsieve.machine import compose

    m = compose(resolve(None))
    assert [f.opener_label for f in m.forks]  # shared openers exist
    for state in ("text", *(s for s in m.matchers if s.startswith("in_reasoning"))):
        matcher = m.matchers[state]
        assert matcher.scan_other == "", state
        pattern = matcher.scan_pattern("`~")
        # one leading character class, the stops and the start characters
        assert re.match(r"\[[^\]]+\]\(\?:", pattern), pattern[:40]


def test_a_marker_spelt_as_a_word_is_searched_whole_not_stopped_at_by_its_first_letter() -> None:
    """Phi-4-mini's ``functools`` begins with ``f``, a letter of most sentences: the prose
    scan with every dialect enabled must not stop at each ``f`` (each stop is a step of
    the table and a scan again), and a chunk of prose holding ``f`` but no marker is one
    run (``feed``'s fast path). A word marker, a tail that may become one, and the same
    word inside a longer one are still found where they stand."""
    from callsieve.grammar import resolve
    from callsieve.machine import compose
    from callsieve.sieve import compiled

    machine = compose(resolve(None))
    matcher = machine.matchers["text"]
    assert "f" in matcher.start_chars and "f" in matcher.word_starts and "f" not in matcher.symbol_starts
    scan = compiled(machine).scanner("text", matcher)
    prose = "The first fox found five fine figs for breakfast, of course. " * 20
    assert scan(prose, 0) == len(prose)
    assert scan(prose + "functools", 0) == len(prose)
    assert scan(prose + "funct", 0) == len(prose)  # a tail that may become the marker
    assert scan(prose + "myfunctools[", 0) == len(prose) + len("myfunctools")  # not it: the ``[`` stops it
    assert scan(prose + "(functools[", 0) == len(prose) + 1
    assert scan(prose + "of", 0) == len(prose) + 2  # ``of``'s ``f`` begins no marker
    assert scan("functools", 0) == 0
    s = callsieve.Sieve()
    assert [(type(e).__name__, e.text) for e in s.feed(prose)] == [("Text", prose)]


@pytest.mark.skipif(native.is_compiled(callsieve.compiler),
                    reason="compiled (mypyc): the runner's methods cannot be wrapped to count them")
def test_a_word_cut_after_its_first_letter_is_kept_back_without_the_table() -> None:
    """Prose fed in pieces cuts ``for`` after its ``f`` often, and ``f`` may begin
    ``functools``: the fast path gives the text before it and keeps the word back for
    the next chunk (as the table would hold it) instead of stepping the table twice."""
    prose = "The first fox found five fine figs for breakfast, of course. " * 4
    s = callsieve.Sieve()
    events = s.feed(prose[:4])  # (the stream's first chunk may begin in a state of its own)
    fed: list[str] = []
    feed = s.runner.feed

    def counting(chunk: str) -> None:
        fed.append(chunk)
        feed(chunk)

    s.runner.feed = counting  # type: ignore[method-assign]
    events += [e for k in range(4, len(prose), 4) for e in s.feed(prose[k : k + 4])]
    assert fed == []
    assert [e for e in events if not isinstance(e, callsieve.Text)] == []
    events += s.close()
    assert "".join(e.text for e in events if isinstance(e, callsieve.Text)) == prose
    # held back, then given at the end of the stream, or read with what follows
    s = callsieve.Sieve()
    s.feed("Hi. ")
    assert [e.text for e in s.feed("a f") if isinstance(e, callsieve.Text)] == ["a "]
    assert [e.text for e in s.close() if isinstance(e, callsieve.Text)] == ["f"]
    s = callsieve.Sieve(dialects=["phi4_mini"])
    events = s.feed("Now ") + s.feed("is f") + s.feed("unc") + s.feed('tools[{"name": "g", "arguments": {}}]') + s.close()
    assert [(e.name, e.dialect) for e in events if isinstance(e, callsieve.ToolCall)] == [("g", "phi4_mini")]
    assert "".join(e.text for e in events if isinstance(e, callsieve.Text)) == "Now is "


def test_a_dead_tag_tries_the_return_rows_of_its_own_origin_and_every_other_common_row() -> None:
    """Regression (CI, compiled build only, at random: "no transition from maybe_tag"):
    the compiled runner chose the rows a dead tag (a held tag no marker takes) may fire
    by ``id()`` of each row, and mypyc boxes a row tuple afresh each time it is read, so
    a freed id reused could drop the one row that returns to the tag's origin. They are
    chosen per origin when the table is compiled, by the guards' names: here, for every
    state the held tag may come from, those rows are exactly the rows of no key that
    name no origin or name that one, in order."""
    from callsieve.compiler import HitIndex
    from callsieve.sieve import compiled

    s = callsieve.Sieve()
    c = compiled(s.machine)
    states = set(s.machine.decl.state_names())

    def origin(row: Any) -> str | None:
        guards = row[0]
        name = getattr(guards[0][0], "__name__", "") if guards else ""
        return name[len("from:"):] if name.startswith("from:") else None

    indexes = [got for steps in (c.steps, c.steps_rest) for by in steps.values() for got in by.values()
               if isinstance(got, HitIndex)]
    assert indexes, "no hit index: the test reads nothing"
    returns = 0
    for got in indexes:
        dead = got.by_key[""]
        for o in states:
            want = tuple(r for r in dead if origin(r) in (None, o))
            assert got.by_origin.get(o, got.other) == want
            returns += any(origin(r) == o for r in want)
    assert returns, "no return row by origin: the test reads nothing"


@pytest.mark.parametrize("dialects", [None, ["glm45"], ["qwen3_coder", "hermes", "glm45"]],
                         ids=["every-dialect", "glm45", "tool_call-fork"])
def test_a_held_tags_rows_are_indexed_by_its_marker_with_every_dialect(dialects: list[str] | None) -> None:
    """Regression: a row a given-up block reads on from (``block_rest``) was guarded by
    ``rest_follows`` before its marker hit, so no row of ``maybe_tag`` was indexed by the
    held tag's marker and every completed tag tried the rows one by one (2,074 with every
    dialect: the default ``Sieve()``), with GLM in the set."""
    from callsieve.compiler import HitIndex
    from callsieve.sieve import compiled

    s = callsieve.Sieve(dialects=dialects)
    c = compiled(s.machine)
    for trigger in ("lt", "gt"):
        got = c.steps["maybe_tag"][trigger]
        assert isinstance(got, HitIndex), f"maybe_tag on {trigger}: {len(got)} rows tried one by one"
        assert max(len(rows) for rows in got.by_key.values()) < len(c.table["maybe_tag"][trigger]) / 2


# ------------------------------------------------- markup in code (issue 22, item 9)
def test_a_start_character_that_begins_no_marker_in_code_is_passed_over() -> None:
    """Code listens for the enabled dialects' openers (to report them), so a ``<`` in a
    code span or a fence could begin one: where none may begin there, the compiled
    runner's scans (and the prose run through a fence) pass it over, as in prose; no
    tag is begun (counted: ``_tag_version`` moves with every tag begun, grown or
    taken). A previous attempt sent every ``<`` in a span to the steps: prose fed whole
    ran 10x slower."""
    spans = "Use `a<b` and `<div>` or `x < y` with `[0]`; " * 200
    fence = "\n\n```html\n" + "<div><b>x</b> [y] f(z)</div>\n" * 200 + "```\n"
    for doc in (spans, fence, spans + fence):
        s = callsieve.Sieve()
        events = s.feed(doc) + s.close()
        assert "".join(e.raw for e in events) == doc
        assert not [e for e in events if isinstance(e, callsieve.Diagnostic)]
        assert s._ctx._tag_version == 0
    # (the count sees markup in code: each opener is held as a tag and reported)
    doc = "Use `<tool_call>` and `[TOOL_CALLS]`; " * 10
    s = callsieve.Sieve()
    events = s.feed(doc) + s.close()
    assert [e.code for e in events if isinstance(e, callsieve.Diagnostic)] == ["markup_in_code"] * 20
    assert s._ctx._tag_version >= 20
