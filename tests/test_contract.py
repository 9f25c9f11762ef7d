"""The contract of shared/DESIGN.md, one property per point, over every dialect."""

from __future__ import annotations

from dataclasses import replace

import re

import pytest
from hypothesis import given, strategies as st

import callsieve
from callsieve.events import merged
from strategies import REASONING_POLICIES, framing, prefills, DIALECTS, Expected, any_dialect, any_dialect_set, chunks, close_literals, document, run, soup, calls, texts
from callsieve.grammar.api import Dialect


# 1. No leak -----------------------------------------------------------------------
@given(st.data())
def test_no_leak_well_formed_blocks_leave_only_the_prose(data: st.DataObject) -> None:
    """However the input is cut (markers split across chunks included), the text
    events are exactly the prose: no byte of a recognised block reaches them."""
    d = data.draw(any_dialect)
    doc, expected = data.draw(document(d))
    events = run(data.draw(chunks(doc)), dialects=[d.name])
    assert texts(events) == expected.text
    assert calls(events) == expected.calls
    # (Renderers number a block's wire ids from 0 (Kimi functions.f:0, Mistral's ids), so
    # a document of several blocks may repeat one: a duplicate the input really holds,
    # made unique and reported, as it must be.)
    # (A drawn raw value may open a shell heredoc it never closes (``<<';'``): said, once.)
    assert [e.code for e in events if isinstance(e, callsieve.Diagnostic) and e.code != "duplicate_call_id"] \
        == ["unterminated_heredoc"] * expected.heredocs


@given(st.data())
def test_no_leak_with_every_dialect_enabled(data: st.DataObject) -> None:
    d = data.draw(any_dialect)
    doc, expected = data.draw(document(d))
    events = run(data.draw(chunks(doc)))
    assert texts(events) == expected.text
    assert calls(events) == expected.calls


@pytest.mark.parametrize("d", DIALECTS, ids=lambda d: d.name)
def test_no_leak_marker_split_at_every_position(d: Dialect) -> None:
    """Every example of every marker, cut at every position, is held and never leaks."""
    assert d.render is not None
    block = d.render([("f", [("k", "v", False)])], 0)
    doc = "hello " + block + " bye"
    for cut in range(1, len(doc)):
        events = run([doc[:cut], doc[cut:]], dialects=[d.name])
        assert texts(events) == "hello  bye", (d.name, cut)
        assert calls(events) == [("f", {"k": "v"})]


# 2. No loss -----------------------------------------------------------------------
POLICIES = st.sampled_from(["text", "drop", "raise"])
UNKNOWN = st.sampled_from(["call", "text", "drop"])
SOME_TOOLS = [{"type": "function", "function": {"name": n, "parameters": {"properties": {"k": {"type": "integer"}}}}}
              for n in ("f", "a", "x")]


def _released(e: callsieve.Event, suffix: str) -> bool:
    return isinstance(e, callsieve.Diagnostic) and e.message.endswith(suffix)


@given(st.data())
def test_no_loss_raw_rebuilds_any_input(data: st.DataObject) -> None:
    """Every policy: the raws rebuild the input; under "raise", the input up to the
    end of the block that raised (the stream stops there, the block rides on the
    Diagnostic, or on the ToolCallAbandoned events before it if calls had started)."""
    doc = data.draw(soup())
    policy = data.draw(POLICIES)
    events = run(data.draw(chunks(doc)), on_malformed=policy,
                 tools=data.draw(st.sampled_from([None, SOME_TOOLS])), unknown_tool=data.draw(UNKNOWN))
    raw = "".join(e.raw for e in events)
    if events and _released(events[-1], "; raised"):
        assert doc.startswith(raw)
        assert events[-1].raw or (len(events) > 1 and isinstance(events[-2], callsieve.ToolCallAbandoned))
    else:
        assert raw == doc


@given(st.data())
def test_raise_delivers_what_drop_delivers_up_to_the_first_released_block(data: st.DataObject) -> None:
    """An independent account of "raise": the caller receives exactly the events
    "drop" produces up to its first dropped block, that block's Diagnostic included
    (same code, offset and raw), however either stream is cut."""
    doc = data.draw(soup())
    raised = merged(run(data.draw(chunks(doc)), on_malformed="raise"))
    dropped = merged(run(data.draw(chunks(doc)), on_malformed="drop"))
    cut = next((k for k, e in enumerate(dropped) if _released(e, "; dropped")), None)
    if cut is None:
        assert raised == dropped
        return
    # A block whose call had begun is read on to its close under "drop" (block_rest,
    # docs/abandoned-calls.md), and all of it rides on the abandoned calls' raw; "raise"
    # stops the stream where the block failed, so the same events carry the block up to
    # there: each such raw a prefix of drop's, everything else the same.
    tail = 0
    while tail < cut and isinstance(dropped[cut - 1 - tail], callsieve.ToolCallAbandoned):
        tail += 1
    assert len(raised) - 1 == cut
    assert raised[: cut - tail] == dropped[: cut - tail]
    for r_ab, d_ab in zip(raised[cut - tail : cut], dropped[cut - tail : cut]):
        assert isinstance(r_ab, callsieve.ToolCallAbandoned) and isinstance(d_ab, callsieve.ToolCallAbandoned)
        assert replace(r_ab, raw="") == replace(d_ab, raw="") and d_ab.raw.startswith(r_ab.raw)
    r, d = raised[-1], dropped[cut]
    assert isinstance(r, callsieve.Diagnostic) and isinstance(d, callsieve.Diagnostic)
    assert (r.code, r.offset, r.raw, r.message[: -len("; raised")]) == (d.code, d.offset, d.raw, d.message[: -len("; dropped")])


def test_raise_stops_where_a_begun_block_failed_and_drop_reads_it_on_to_its_close() -> None:
    # Found by the property above: "drop" reads a block whose call had begun on to its
    # close and puts all of it on the abandoned call's raw; "raise" stops the stream where
    # the block failed, so its abandoned call carries the block up to there.
    block = '<｜DSML｜tool_calls><｜DSML｜ invoke name="f">\n'
    doc = "\n```\n\n```\n" + block + "zz\n</｜DSML｜tool_calls>"
    for n in (len(doc), 1, 3, 7):
        pieces = [doc[i : i + n] for i in range(0, len(doc), n)]
        for runner in ("compiled", "reference"):
            raised = merged(run(pieces, on_malformed="raise", runner=runner))
            dropped = merged(run(pieces, on_malformed="drop", runner=runner))
            r = [e for e in raised if isinstance(e, callsieve.ToolCallAbandoned)]
            d = [e for e in dropped if isinstance(e, callsieve.ToolCallAbandoned)]
            assert [e.raw for e in r] == [block] and [e.raw for e in d] == [block + "zz\n</｜DSML｜tool_calls>"]
            assert "".join(e.raw for e in dropped) == doc and doc.startswith("".join(e.raw for e in raised))


def test_raise_and_drop_say_the_same_reason_for_a_block_read_on_to_the_stream_end() -> None:
    # Found by the property above: "drop" reads a block with a begun call on to its close
    # and released it at the stream's end with a clause "raise" cannot know
    doc = '<｜｜DSML｜｜ tool_calls><‖DSML‖invoke name="f">\n```\n'
    for n in (len(doc), 1, 3):
        pieces = [doc[i : i + n] for i in range(0, len(doc), n)]
        raised = merged(run(pieces, on_malformed="raise"))
        dropped = merged(run(pieces, on_malformed="drop"))
        r, d = raised[-1], next(e for e in dropped if _released(e, "; dropped"))
        assert isinstance(r, callsieve.Diagnostic) and isinstance(d, callsieve.Diagnostic)
        assert (r.code, r.offset, r.raw, r.message[: -len("; raised")]) == (d.code, d.offset, d.raw, d.message[: -len("; dropped")])


@given(st.data())
def test_no_loss_reasoning_tags_travel_in_reasoning_raw(data: st.DataObject) -> None:
    thought = data.draw(st.text(alphabet="ab <>/\n", max_size=20).filter(lambda s: "</think" not in s))
    doc = "<think>" + thought + "</think>after"
    events = run(data.draw(chunks(doc)))
    reasoning = [e for e in merged(events) if isinstance(e, callsieve.Reasoning)]
    assert [(r.text, r.raw) for r in reasoning] == [(thought, "<think>" + thought + "</think>")]
    assert texts(events) == "after"


# 3. Chunking does not matter -------------------------------------------------------
@given(st.data())
def test_chunking_does_not_matter(data: st.DataObject) -> None:
    """Any split, any policy ("raise" included: what the caller receives, the
    exception's events included)."""
    doc = data.draw(soup())
    kw = dict(on_malformed=data.draw(POLICIES), unknown_tool=data.draw(UNKNOWN),
              tools=data.draw(st.sampled_from([None, SOME_TOOLS])),
              calls_in_reasoning=data.draw(REASONING_POLICIES), start_in_reasoning=data.draw(st.booleans()))
    whole = merged(run([doc], **kw))
    assert merged(run(data.draw(chunks(doc)), **kw)) == whole
    assert merged(run(list(doc), **kw)) == whole


@given(st.data())
def test_chunking_does_not_matter_for_documents(data: st.DataObject) -> None:
    d = data.draw(any_dialect)
    doc, _ = data.draw(document(d))
    assert merged(run(data.draw(chunks(doc)))) == merged(run([doc]))


# 4. Grammar-aware termination ------------------------------------------------------
@given(st.data())
def test_a_close_inside_a_value_is_data_unless_grammar_follows(data: st.DataObject) -> None:
    """Values built around the dialect's own literal close come back whole."""
    d = data.draw(any_dialect)
    assert d.render is not None
    close = data.draw(st.sampled_from(close_literals(d)))
    tail = data.draw(st.sampled_from(["\nmore", " x", "\nx</tool_call>\nend", "<b>", "\n<parameter"]))
    value = "line\n" + close + tail
    block = d.render([("write", [("content", value, False)])], data.draw(st.integers(0, 64)))
    events = run(data.draw(chunks(block)), dialects=[d.name])
    assert calls(events) == [("write", {"content": value})]


def test_close_followed_by_grammar_closes() -> None:
    doc = "<tool_call>\n<function=f>\n<parameter=a>\nx\n</parameter>\n<parameter=b>\ny\n</parameter>\n</function>\n</tool_call>"
    assert calls(run([doc])) == [("f", {"a": "x", "b": "y"})]


# 5. Context: fences, inline code, CDATA, JSON strings ------------------------------
@given(st.data())
def test_markup_in_a_fence_or_inline_code_is_text(data: st.DataObject) -> None:
    d = data.draw(any_dialect)
    assert d.render is not None
    block = d.render([("f", [("k", "v", False)])], data.draw(st.integers(0, 64)))
    fence = data.draw(st.sampled_from(["```", "~~~", "````", "```json"]))
    close = fence.rstrip("json")
    doc = data.draw(st.sampled_from([
        f"Example:\n{fence}\n{block}\n{close}\nafter",
        f"Use `{block.splitlines()[0]}` to open a block.",
        f"Inline ``{block.splitlines()[0]}`` too.",
    ]))
    events = run(data.draw(chunks(doc)))
    assert texts(events) == doc
    assert calls(events) == []


@given(st.data())
def test_markup_inside_cdata_is_data(data: st.DataObject) -> None:
    inner = data.draw(st.sampled_from(["</parameter>", "</tool_calls>", "</invoke>", '<invoke name="x">', "]]", "]", "<tool_call>"]))
    value = "a" + inner + "b"
    doc = f'<tool_calls>\n<invoke name="w">\n<parameter name="c"><![CDATA[{value}]]></parameter>\n</invoke>\n</tool_calls>'
    events = run(data.draw(chunks(doc)))
    assert calls(events) == [("w", {"c": value})]
    assert texts(events) == ""


@given(st.data())
def test_a_close_inside_a_json_string_is_data(data: st.DataObject) -> None:
    bar = data.draw(st.sampled_from(["\uff5c", "|", "\u2016"]))
    close = f"</{bar}DSML{bar}parameter>"
    doc = (
        f'<{bar}DSML{bar}tool_calls>\n<{bar}DSML{bar}invoke name="f">\n'
        f'<{bar}DSML{bar}parameter name="obj" string="false">{{"s": "{close}\\n<x>", "n": [1, {{"m": null}}]}}{close}\n'
        f"</{bar}DSML{bar}invoke>\n</{bar}DSML{bar}tool_calls>"
    )
    events = run(data.draw(chunks(doc)))
    assert calls(events) == [("f", {"obj": {"s": close + "\n<x>", "n": [1, {"m": None}]}})]


# 6. Bounded: a runaway block is released, not held forever ------------------------
@given(st.data())
def test_a_block_over_the_limit_is_released_as_text(data: st.DataObject) -> None:
    body = "x" * data.draw(st.integers(50, 200))
    doc = "<tool_call>\n<function=f>\n<parameter=a>\n" + body
    events = run(data.draw(chunks(doc)), max_block_chars=40)
    diags = [e for e in events if isinstance(e, callsieve.Diagnostic)]
    assert [d.code for d in diags] == ["block_too_large"]
    # The call f had started: shown once, its markup is never text (the part read before
    # the overflow is on its ToolCallAbandoned, the rest rides in raw only).
    assert texts(events) == ""
    (gone,) = [e for e in events if isinstance(e, callsieve.ToolCallAbandoned)]
    assert gone.name == "f" and gone.reason == "block_too_large" and doc.startswith(gone.raw)
    assert "".join(e.raw for e in events) == doc


# 7. Total -------------------------------------------------------------------------
@given(st.text(), st.data())
def test_feed_never_raises_on_any_text(doc: str, data: st.DataObject) -> None:
    names = data.draw(any_dialect_set)
    events = run(data.draw(chunks(doc)), dialects=names, start_in_reasoning=data.draw(st.booleans()) and prefills(names))
    assert "".join(e.raw for e in events) == doc


@given(st.data())
def test_feed_never_raises_on_grammar_soup(data: st.DataObject) -> None:
    doc = data.draw(soup(80))
    tools = [{"type": "function", "function": {"name": "f", "parameters": {"properties": {"k": {"type": "integer"}}}}}]
    policy = data.draw(st.sampled_from(["call", "text", "drop"]))
    events = run(data.draw(chunks(doc)), tools=tools, unknown_tool=policy)
    assert "".join(e.raw for e in events) == doc
    for e in events:
        if isinstance(e, callsieve.Text):
            assert e.text == e.raw or (e.text == "" and framing(e.raw))


def test_deltas_concatenate_to_the_final_arguments() -> None:
    doc = "<tool_call>\n<function=f>\n<parameter=a>\n" + "x<y>&" * 50 + "\n</parameter>\n</function>\n</tool_call>"
    s = callsieve.Sieve()
    events: list[callsieve.Event] = []
    for i in range(0, len(doc), 7):
        events += s.feed(doc[i : i + 7])
    events += s.close()
    deltas = [e.arguments for e in events if isinstance(e, callsieve.ToolCallDelta)]
    (call,) = [e for e in events if isinstance(e, callsieve.ToolCall)]
    assert len(deltas) > 5
    assert "".join(deltas) == call.arguments_json
    assert not any(re.search(r"</param", d) for d in deltas)


@given(st.data())
def test_feed_never_raises_on_grammar_soup_with_every_option_random(data: st.DataObject) -> None:
    """Point 7 with every option drawn (issue 12, item 7): dialects, tools, both
    policies (``"raise"`` included: only MalformedBlockError, carrying its events),
    limits down to one character, reasoning on or off, the runner."""
    names = data.draw(st.one_of(st.none(), any_dialect_set))
    reasoning = data.draw(st.booleans())
    kw = dict(
        dialects=names,
        tools=data.draw(st.sampled_from([None, SOME_TOOLS])),
        on_malformed=data.draw(POLICIES),
        unknown_tool=data.draw(UNKNOWN),
        max_block_chars=data.draw(st.one_of(st.integers(1, 200), st.just(1 << 22))),
        reasoning=reasoning,
        start_in_reasoning=reasoning and data.draw(st.booleans()) and prefills(names),
        calls_in_reasoning=data.draw(REASONING_POLICIES),
        runner=data.draw(st.sampled_from(["compiled", "compiled", "reference"])),
    )
    doc = data.draw(soup(80))
    events = run(data.draw(chunks(doc)), **kw)
    raw = "".join(e.raw for e in events)
    if events and _released(events[-1], "; raised"):
        assert doc.startswith(raw)
    else:
        assert raw == doc
    for e in events:
        if isinstance(e, callsieve.Text):
            assert e.text == e.raw or (e.text == "" and (kw["on_malformed"] == "drop" or framing(e.raw)))
