"""The cases the project grew from (shared/seeds/), pinned as examples."""

from __future__ import annotations

import pytest

import callsieve
from strategies import run, texts


def tool_calls(events: list[callsieve.Event]) -> list[callsieve.ToolCall]:
    return [e for e in events if isinstance(e, callsieve.ToolCall)]


# -- seed 004: a value holding a literal </parameter> (or </tool_call>) was truncated
SEED_004_CONTENT = "line\n</parameter>\nmore"


def seed_004_body(content: str) -> str:
    return (
        "<tool_call>\n<function=create_file>\n"
        "<parameter=path>\na.md\n</parameter>\n"
        f"<parameter=content>\n{content}\n</parameter>\n"
        "</function>\n</tool_call>"
    )


@pytest.mark.parametrize("content", [SEED_004_CONTENT, "line\n</tool_call>\nmore", "a</parameter>b</parameter>\nc"])
@pytest.mark.parametrize("chunk", [1, 4, 1000])
def test_seed_004_value_with_a_literal_close_comes_back_whole(content: str, chunk: int) -> None:
    body = seed_004_body(content)
    events = run([body[i : i + chunk] for i in range(0, len(body), chunk)])
    (call,) = tool_calls(events)
    assert call.name == "create_file"
    assert call.arguments == {"path": "a.md", "content": content}
    assert texts(events) == ""


def test_seed_004_literal_tool_call_in_prose_is_not_a_call_inside_a_fence() -> None:
    doc = "Write this:\n```\n<tool_call>\n<function=x>\n```\nthanks"
    events = run([doc])
    assert texts(events) == doc and not tool_calls(events)


def test_seed_004_interrupted_call_fails_loudly_never_a_fabricated_close() -> None:
    doc = "<tool_call>\n<function=create_file>\n<parameter=content>\nline"
    events = run([doc])
    assert not tool_calls(events)
    assert [d.code for d in events if isinstance(d, callsieve.Diagnostic)] == ["unterminated_block"]
    # The call had started streaming: abandoned, its markup on that event, never text.
    assert texts(events) == ""
    assert [(e.name, e.raw) for e in events if isinstance(e, callsieve.ToolCallAbandoned)] == [("create_file", doc)]


# -- seed 001: DSML read aloud; the sample text uses U+2016, the article says U+FF5C
SEED_001 = (
    "好的，我先写一首小诗，再念给西溪公主听： <{b}DSML{b}tool_calls> <{b}DSML{b}invoke "
    'name="voice_output_speak"> <{b}DSML{b}parameter name="text" string="true">西溪公主回城堡...'
    "</{b}DSML{b}parameter> </{b}DSML{b}invoke> </{b}DSML{b}tool_calls>"
)


@pytest.mark.parametrize("bar", ["\u2016", "\uff5c", "|", "\u2016\u2016", "\uff5c\uff5c", "||"])
@pytest.mark.parametrize("chunk", [1, 3, 7, 64, 10_000])
def test_seed_001_leaked_dsml_every_bar_variant(bar: str, chunk: int) -> None:
    doc = SEED_001.format(b=bar)
    events = run([doc[i : i + chunk] for i in range(0, len(doc), chunk)])
    assert texts(events) == "好的，我先写一首小诗，再念给西溪公主听： "
    (call,) = tool_calls(events)
    assert (call.name, call.arguments, call.dialect) == ("voice_output_speak", {"text": "西溪公主回城堡..."}, "dsml")
    for e in events:
        if isinstance(e, callsieve.Text):
            assert "DSML" not in e.text and bar not in e.text


def test_seed_001_split_marker_is_held_not_leaked() -> None:
    """GenericAgent#804: ``hello<‖DS`` + ``ML‖tool_calls>…``: the first chunk shows only hello."""
    s = callsieve.Sieve()
    first = s.feed("hello<\u2016DS")
    assert first == [callsieve.Text("hello", "hello")]
    rest = s.feed('ML\u2016tool_calls>\n<\u2016DSML\u2016invoke name="f">\n</\u2016DSML\u2016invoke>\n</\u2016DSML\u2016tool_calls>world')
    rest += s.close()
    assert [c.name for c in tool_calls(rest)] == ["f"]
    assert texts(rest) == "world"


# -- seed 000: the Go sieve's partial-tag hold-back, fences, CDATA, malformed fallback
def test_seed_000_partial_tag_held_then_released_as_text() -> None:
    s = callsieve.Sieve()
    assert s.feed("Hello <too") == [callsieve.Text("Hello ", "Hello ")]
    assert s.close() == [callsieve.Text("<too", "<too")]


def test_seed_000_partial_tag_completed_becomes_a_call() -> None:
    s = callsieve.Sieve()
    events = s.feed("Hello <too")
    events += s.feed('l_calls>\n<invoke name="read">\n<parameter name="path">a</parameter>\n</invoke>\n</tool_calls>')
    events += s.close()
    assert texts(events) == "Hello "
    assert [(c.name, c.arguments) for c in tool_calls(events)] == [("read", {"path": "a"})]


def test_seed_000_fenced_example_is_text() -> None:
    doc = 'Example:\n```xml\n<tool_calls>\n<invoke name="x">\n</invoke>\n</tool_calls>\n```\nDone.'
    events = run(list(doc))
    assert texts(events) == doc and not tool_calls(events)


def test_seed_000_cdata_holding_the_block_close() -> None:
    doc = '<tool_calls>\n<invoke name="w">\n<parameter name="c"><![CDATA[x</tool_calls>y]]></parameter>\n</invoke>\n</tool_calls>'
    (call,) = tool_calls(run([doc]))
    assert call.arguments == {"c": "x</tool_calls>y"}


def test_seed_000_malformed_block_released_as_text_with_a_diagnostic() -> None:
    doc = "a <tool_calls>\nnot xml at all\n</tool_calls> b"
    events = run([doc])
    assert texts(events) == doc
    assert [d.code for d in events if isinstance(d, callsieve.Diagnostic)] == ["malformed_block"]
