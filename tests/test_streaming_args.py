"""Streaming arguments: ToolCallStart as soon as the name is known, ToolCallDelta fragments
while values arrive, and never a fragment that later proves wrong.

The fragments of a call concatenate to exactly ``ToolCall.arguments_json``; at every
moment, what has been streamed for a call is a prefix of that final JSON (so a
``</parameter>`` held for an after-close decision is never streamed as data before it
is decided, and the closing one never is).
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from strategies import DIALECTS, chunks, document

import callsieve
from callsieve.grammar import REGISTRY

SEED4_CONTENT = "line\n</parameter>\nmore"
SEED4 = (
    "<tool_call>\n<function=create_file>\n<parameter=path>\na.md\n</parameter>\n"
    f"<parameter=content>\n{SEED4_CONTENT}\n</parameter>\n</function>\n</tool_call>"
)


def _split(s: str, n: int) -> list[str]:
    return [s[i : i + n] for i in range(0, len(s), n)]


def _feed_all(parts: list[str], **kw: Any) -> tuple[list[list[callsieve.Event]], list[callsieve.Event]]:
    """Events per feed (the last list is close()'s), and all of them."""
    s = callsieve.Sieve(**kw)
    per = [s.feed(p) for p in parts] + [s.close()]
    return per, [e for batch in per for e in batch]


def _deltas(events: list[callsieve.Event], index: int) -> list[str]:
    return [e.arguments for e in events if isinstance(e, callsieve.ToolCallDelta) and e.index == index]


def _assert_never_retracted(per_feed: list[list[callsieve.Event]]) -> None:
    """After every feed, each call's streamed fragments are a prefix of its final JSON."""
    events = [e for batch in per_feed for e in batch]
    final = {e.index: e.arguments_json for e in events if isinstance(e, callsieve.ToolCall)}
    so_far: dict[int, str] = {}
    for batch in per_feed:
        for e in batch:
            if isinstance(e, callsieve.ToolCallDelta):
                assert e.arguments, "empty fragment"
                so_far[e.index] = so_far.get(e.index, "") + e.arguments
        for index, streamed in so_far.items():
            if index in final:
                assert final[index].startswith(streamed), (index, streamed[-60:], final[index][:200])
    for index, whole in final.items():
        assert so_far.get(index, "") == whole


# ---------------------------------------------------------------- seed 004
@pytest.mark.parametrize("size", [1, 2, 3, 5, 7, 16])
def test_seed004_file_argument_arrives_as_several_deltas_that_join_to_the_full_value(size: int) -> None:
    per, events = _feed_all(_split(SEED4, size), dialects=["qwen3_coder"])
    (call,) = [e for e in events if isinstance(e, callsieve.ToolCall)]
    fragments = _deltas(events, 0)
    assert len(fragments) >= 3
    joined = "".join(fragments)
    assert joined == call.arguments_json
    assert json.loads(joined) == {"path": "a.md", "content": SEED4_CONTENT}
    assert call.arguments == {"path": "a.md", "content": SEED4_CONTENT}
    # Streamed, not all at the end: the value's text was sent before the input ended.
    before_last_feed = "".join(e.arguments for batch in per[:-2] for e in batch if isinstance(e, callsieve.ToolCallDelta))
    assert "</parameter>\\nmore" in before_last_feed
    _assert_never_retracted(per)


def test_a_literal_close_is_held_until_decided_then_streamed_as_data() -> None:
    cut = SEED4.index(SEED4_CONTENT) + len("line\n</parameter>")
    s = callsieve.Sieve(dialects=["qwen3_coder"])
    first = s.feed(SEED4[:cut])
    streamed = "".join(_deltas(first, 0))
    assert streamed.endswith('"content": "line')  # the "\n</parameter>" is held, undecided
    second = s.feed("\nmo")  # not grammar after the close: it was data
    assert "".join(_deltas(second, 0)) == "\\n</parameter>\\nmo"


def test_the_closing_parameter_tag_never_reaches_a_delta() -> None:
    end = SEED4.index("\n</parameter>\n</function>")
    for cut in range(end, len(SEED4) + 1):
        per, events = _feed_all([SEED4[:cut], SEED4[cut:]], dialects=["qwen3_coder"])
        joined = "".join(_deltas(events, 0))
        assert joined.endswith('more"}')
        assert joined.count("</parameter>") == 1  # only the literal inside the value
        _assert_never_retracted(per)


def test_tool_call_start_comes_as_soon_as_the_name_is_known() -> None:
    head = "Sure.\n<tool_call>\n<function=create_file>"
    s = callsieve.Sieve(dialects=["qwen3_coder"])
    assert not [e for e in s.feed(head[:-1]) if isinstance(e, callsieve.ToolCallStart)]
    (start,) = [e for e in s.feed(head[-1]) if isinstance(e, callsieve.ToolCallStart)]
    assert (start.index, start.name, start.raw) == (0, "create_file", "")


# ---------------------------------------------------------------- big arguments
def _big_value(size: int) -> str:
    line = "def f(x):  # a line of a file, with </parameter> in it every so often\n"
    plain = "    return x + 1  # no markup on this line at all, just code\n"
    block = line + plain * 60
    return (block * (size // len(block) + 1))[:size]


BIG_CASES = {
    "qwen3_coder": lambda v: (
        f"<tool_call>\n<function=write_file>\n<parameter=path>\nbig.py\n</parameter>\n"
        f"<parameter=content>\n{v}\n</parameter>\n</function>\n</tool_call>"
    ),
    "dsml": lambda v: (
        '<｜DSML｜function_calls>\n<｜DSML｜invoke name="write_file">\n'
        '<｜DSML｜parameter name="path" string="true">big.py</｜DSML｜parameter>\n'
        f'<｜DSML｜parameter name="content" string="true">{v}</｜DSML｜parameter>\n'
        "</｜DSML｜invoke>\n</｜DSML｜function_calls>"
    ),
    "xml": lambda v: (
        '<tool_calls>\n<invoke name="write_file">\n<parameter name="path">big.py</parameter>\n'
        f'<parameter name="content"><![CDATA[{v}]]></parameter>\n</invoke>\n</tool_calls>'
    ),
}


@pytest.mark.parametrize("dialect", sorted(BIG_CASES))
def test_a_1mb_argument_streams_in_many_deltas(dialect: str) -> None:
    value = _big_value(1 << 20)
    body = BIG_CASES[dialect](value)
    size = 16 * 1024
    parts = _split(body, size)
    s = callsieve.Sieve(dialects=[dialect])
    per = [s.feed(p) for p in parts] + [s.close()]
    events = [e for batch in per for e in batch]
    (call,) = [e for e in events if isinstance(e, callsieve.ToolCall)]
    assert call.arguments == {"path": "big.py", "content": value}
    fragments = _deltas(events, 0)
    assert "".join(fragments) == call.arguments_json
    # Every feed that carried value text returned a fragment of it: the client gets the
    # file in pieces as it arrives, not all at the end.
    start = body.index(value[:64])
    end = start + len(value)
    feeds_inside = [k for k in range(len(parts)) if start + size <= k * size and (k + 1) * size <= end]
    assert len(feeds_inside) > 50
    for k in feeds_inside:
        assert any(isinstance(e, callsieve.ToolCallDelta) for e in per[k]), f"feed {k} streamed nothing"
    assert len(fragments) >= len(feeds_inside)
    # No fragment is much larger than the chunk that produced it (escaping doubles at most).
    assert max(len(f) for f in fragments) <= 2 * size + 64
    _assert_never_retracted(per)


# ---------------------------------------------------------------- typed values
def test_typed_values_are_emitted_whole_at_their_decided_close() -> None:
    tools = [
        {
            "type": "function",
            "function": {
                "name": "f",
                "parameters": {
                    "type": "object",
                    "properties": {"count": {"type": "integer"}, "name": {"type": "string"}},
                },
            },
        }
    ]
    body = "<tool_call>\n<function=f>\n<parameter=count>\n1234\n</parameter>\n<parameter=name>\nab\n</parameter>\n</function>\n</tool_call>"
    per, events = _feed_all(list(body), dialects=["qwen3_coder"], tools=tools)
    fragments = _deltas(events, 0)
    (whole,) = [f for f in fragments if "1" in f]  # the digits never arrive one by one
    assert whole.startswith('{"count": 1234')
    # The integer is sent only once what follows its close proves it a close.
    k = next(i for i, batch in enumerate(per) if any(isinstance(e, callsieve.ToolCallDelta) and "1234" in e.arguments for e in batch))
    assert body[: k + 1].endswith("\n</parameter>\n<parameter=name>")
    assert json.loads("".join(fragments)) == {"count": 1234, "name": "ab"}
    _assert_never_retracted(per)


def test_dsml_json_values_are_emitted_whole_and_strings_stream() -> None:
    body = (
        '<｜DSML｜function_calls>\n<｜DSML｜invoke name="get_weather">\n'
        '<｜DSML｜parameter name="location" string="true">杭州市西湖区</｜DSML｜parameter>\n'
        '<｜DSML｜parameter name="days" string="false">[1, 2, "</｜DSML｜parameter>"]</｜DSML｜parameter>\n'
        "</｜DSML｜invoke>\n</｜DSML｜function_calls>"
    )
    per, events = _feed_all(_split(body, 2), dialects=["dsml"])
    (call,) = [e for e in events if isinstance(e, callsieve.ToolCall)]
    assert call.arguments == {"location": "杭州市西湖区", "days": [1, 2, "</｜DSML｜parameter>"]}
    fragments = _deltas(events, 0)
    assert len([f for f in fragments if any(c in f for c in "杭州市西湖区")]) >= 3
    (whole,) = [f for f in fragments if "[" in f or "]" in f]
    assert whole.startswith(', "days": [1, 2, "</｜DSML｜parameter>"]')
    _assert_never_retracted(per)


def test_several_calls_each_join_to_their_own_arguments() -> None:
    d = REGISTRY["dsml"]
    assert d.render is not None
    body = "Two calls.\n\n" + d.render(
        [("a", [("x", "one </｜DSML｜parameter> two", False)]), ("b", [("y", "3", True), ("z", "é\n杭", False)])]
    )
    per, events = _feed_all(_split(body, 3), dialects=["dsml"])
    calls = [e for e in events if isinstance(e, callsieve.ToolCall)]
    assert [c.arguments for c in calls] == [{"x": "one </｜DSML｜parameter> two"}, {"y": 3, "z": "é\n杭"}]
    starts = [e for e in events if isinstance(e, callsieve.ToolCallStart)]
    assert [(s.index, s.name) for s in starts] == [(0, "a"), (1, "b")]
    for c in calls:
        assert "".join(_deltas(events, c.index)) == c.arguments_json
    # A call's fragments all come after its start and before its ToolCall.
    order = [(type(e).__name__, getattr(e, "index", None)) for e in events if not isinstance(e, callsieve.Text)]
    for c in calls:
        mine = [k for k, (kind, i) in enumerate(order) if i == c.index]
        assert order[mine[0]][0] == "ToolCallStart" and order[mine[-1]][0] == "ToolCall"


def test_an_abandoned_call_is_reported_and_never_completed() -> None:
    body = "<tool_call>\n<function=f>\n<parameter=a>\nhello\n</parameter>\nnot grammar here"
    per, events = _feed_all(_split(body, 4), dialects=["qwen3_coder"])
    assert [e.name for e in events if isinstance(e, callsieve.ToolCallStart)] == ["f"]
    assert not [e for e in events if isinstance(e, callsieve.ToolCall)]
    (diag,) = [e for e in events if isinstance(e, callsieve.Diagnostic)]
    assert "abandoned" in diag.message and "[0]" in diag.message
    # Shown once: the close was data (prose follows it), the stream ends in the value:
    # the block's markup is the abandoned call's, never text.
    (gone,) = [e for e in events if isinstance(e, callsieve.ToolCallAbandoned)]
    assert gone.raw == body and gone.reason == "unterminated_block"
    assert "".join(e.text for e in events if isinstance(e, callsieve.Text)) == ""
    # Its fragments never made a whole JSON object.
    assert "".join(_deltas(events, 0)) == '{"a": "hello\\n</parameter>\\nnot grammar here'


def test_a_call_abandoned_mid_block_keeps_the_markup_read_and_prose_after_it_is_text() -> None:
    body = "<tool_call>\n<function=f>\n<parameter=a>\nhello\n</parameter>\n</function>\nnot grammar"
    for size in (1, 4, len(body)):
        per, events = _feed_all(_split(body, size), dialects=["qwen3_coder"])
        (gone,) = [e for e in events if isinstance(e, callsieve.ToolCallAbandoned)]
        assert gone.raw == body[: body.index("not grammar")] and gone.reason == "malformed_block"
        assert "".join(e.text for e in events if isinstance(e, callsieve.Text)) == "not grammar"
        # The call's own markup was complete, yet its fragments never make a whole
        # object: the closing brace waits for the block.
        assert "".join(_deltas(events, 0)) == '{"a": "hello"'


# ---------------------------------------------------------------- property
@given(st.data())
def test_deltas_join_to_arguments_json_and_are_never_retracted(data: st.DataObject) -> None:
    d = data.draw(st.sampled_from(DIALECTS), label="dialect")
    text, expected = data.draw(document(d), label="document")
    parts = data.draw(chunks(text), label="chunks")
    per, events = _feed_all(parts, dialects=[d.name])
    calls = [e for e in events if isinstance(e, callsieve.ToolCall)]
    assert [(c.name, c.arguments) for c in calls] == expected.calls
    for c in calls:
        joined = "".join(_deltas(events, c.index))
        assert joined == c.arguments_json
        assert json.loads(joined) == c.arguments
    _assert_never_retracted(per)


# Issue 13, item 5: a streamed raw value is not held a second time: it is cut from the
# block's raw text when the block is emitted. Each case below crosses the seams of that
# derivation (newlines a style strips, a close that is data, CDATA after plain text,
# markup held between pieces, a value left empty), fed whole and cut at every place.
_DSML_OPEN = '<\uff5cDSML\uff5ctool_calls>\n<\uff5cDSML\uff5cinvoke name="w">\n<\uff5cDSML\uff5cparameter name="c" string="true">'
_DSML_CLOSE = '</\uff5cDSML\uff5cparameter>\n</\uff5cDSML\uff5cinvoke>\n</\uff5cDSML\uff5ctool_calls>'
_QWEN_OPEN = "<tool_call>\n<function=w>\n<parameter=c>"
_QWEN_CLOSE = "</parameter>\n</function>\n</tool_call>"
_DERIVED_CASES = [
    ("dsml", _DSML_OPEN + "a\uff5cb" + _DSML_CLOSE, "a\uff5cb"),
    ("dsml", _DSML_OPEN + _DSML_CLOSE, ""),
    ("dsml", _DSML_OPEN + "\nkeep\n" + _DSML_CLOSE, "\nkeep\n"),
    ("dsml", _DSML_OPEN + "x </\uff5cDSML\uff5cparameter> y" + _DSML_CLOSE, "x </\uff5cDSML\uff5cparameter> y"),
    ("dsml", _DSML_OPEN + "x </\uff5cDSML\uff5cparameter>\n  y" + _DSML_CLOSE, "x </\uff5cDSML\uff5cparameter>\n  y"),
    ("dsml", _DSML_OPEN + "head <![CDATA[<b>]]]> tail" + _DSML_CLOSE, "head <b>] tail"),
    ("dsml", _DSML_OPEN + "<![CDATA[]]>after" + _DSML_CLOSE, "after"),
    ("dsml", _DSML_OPEN + "a<![CDATA[x]]>b<![CDATA[y]]>c" + _DSML_CLOSE, "axbyc"),
    ("qwen3_coder", _QWEN_OPEN + "\nline\n" + _QWEN_CLOSE, "line"),
    ("qwen3_coder", _QWEN_OPEN + "\n\n" + _QWEN_CLOSE, ""),
    ("qwen3_coder", _QWEN_OPEN + "\n" + _QWEN_CLOSE, ""),
    ("qwen3_coder", _QWEN_OPEN + "\n\nline\n\n" + _QWEN_CLOSE, "\nline\n"),
    ("qwen3_coder", _QWEN_OPEN + "\nx\n</parameter>\ny\n" + _QWEN_CLOSE, "x\n</parameter>\ny"),
    ("qwen3_coder", _QWEN_OPEN + "\n<tool_call>\n<function=q>\n" + _QWEN_CLOSE, "<tool_call>\n<function=q>"),
]


@pytest.mark.parametrize("dialect,doc,value", _DERIVED_CASES)
def test_a_streamed_value_cut_from_the_raw_text_is_the_value_however_chunked(dialect: str, doc: str, value: str) -> None:
    for n in (len(doc), 1, 2, 3, 5, 7):
        s = callsieve.Sieve(dialects=[dialect])
        events = [e for part in _split(doc, n) for e in s.feed(part)] + s.close()
        calls = [e for e in events if isinstance(e, callsieve.ToolCall)]
        assert [c.arguments for c in calls] == [{"c": value}], (n, events)
        assert "".join(_deltas(events, 0)) == calls[0].arguments_json, n
        assert "".join(e.raw for e in events) == doc
