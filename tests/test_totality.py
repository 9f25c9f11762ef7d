"""``feed()`` is total on any JSON (contract point 7, issue 23): huge numbers, lone
surrogate escapes and raw control characters, in the JSON bodies of every dialect,
whole and chunked, strict and lenient, by either runner: no exception, every input
character back in a ``raw``, and every fragment a client is sent encodes as UTF-8."""

from __future__ import annotations

import json
import sys

import pytest
from hypothesis import given, strategies as st

import callsieve
from strategies import DIALECTS, calls, chunks, codes, run, soup
from test_shown_once import assert_shown_once

#: Pieces of JSON a hostile (or broken) model writes.
HOSTILE = st.one_of(
    st.builds(lambda n, sign: sign + "9" * n, st.integers(sys.get_int_max_str_digits() - 2, sys.get_int_max_str_digits() + 2),
              st.sampled_from(["", "-"])),
    st.builds(lambda n: "1." + "0" * n + "e" + "9" * 4, st.integers(1, 50)),
    st.sampled_from(['"\\ud83d"', '"\\udc00"', '"\\ud83d\\ud83d"', '"\\ud83d\\ude00"', '"a\\u0000b"', "\\ud8",
                     '"a\tb"', '"\x00"', '"\x1f\n"', "1e999", "-0", "01", '"\\"', "[" * 300, "]" * 300]),
)


@st.composite
def hostile_body(draw: st.DrawFn) -> tuple[str, str]:
    """A dialect and a document: a rendered call whose value is a hostile JSON piece
    (as the arguments, as a value, or as the arguments' string), plus soup."""
    d = draw(st.sampled_from([d for d in DIALECTS if d.render is not None]))
    assert d.render is not None
    piece = draw(HOSTILE)
    # (a value written as JSON where the dialect can say so: DSML string="false", ...)
    block = d.render([("f", [("a", "QQPH", False), ("b", "0", True)])], draw(st.integers(0, 64)))
    if draw(st.booleans()):
        block = block.replace(">0<", ">" + piece + "<").replace('"b": 0', '"b": ' + piece)
    if draw(st.booleans()) and '{"a": "QQPH"}' in block:
        # the arguments as a JSON-encoded string holding the piece
        block = block.replace('{"a": "QQPH"}', json.dumps('{"a": ' + piece + "}"))
    else:
        # the piece as the value (in place of the JSON string where there is one)
        block = block.replace('"QQPH"', piece).replace("QQPH", piece)
    return d.name, draw(soup(max_pieces=4)) + block + draw(soup(max_pieces=4))


@given(st.data())
def test_feed_never_raises_on_huge_numbers_surrogates_and_control_characters(data: st.DataObject) -> None:
    name, doc = data.draw(hostile_body())
    strict = data.draw(st.booleans(), label="strict")
    runner = data.draw(st.sampled_from(["compiled", "reference"]), label="runner")
    dialects = data.draw(st.sampled_from([[name], None]), label="dialects")
    events = run(data.draw(chunks(doc)), dialects=dialects, strict=strict, runner=runner)
    assert "".join(e.raw for e in events) == doc
    assert_shown_once(events, doc)  # (every fragment a prefix of a JSON object, whole only when called)
    for e in events:
        if isinstance(e, callsieve.ToolCallDelta):
            e.arguments.encode("utf-8")  # an OpenAI chunk can carry it
        if isinstance(e, callsieve.ToolCall):
            json.loads(e.arguments_json)
            e.arguments_json.encode("utf-8")


@given(st.data())
def test_the_openai_adapter_never_raises_and_every_chunk_serialises(data: st.DataObject) -> None:
    from callsieve.openai import StreamSieve

    name, doc = data.draw(hostile_body())
    sieve = StreamSieve([name], stream_arguments=data.draw(st.booleans()))
    out = []
    parts = data.draw(chunks(doc))
    for k, part in enumerate(parts):
        out += sieve.push({"id": "x", "choices": [{"index": 0, "delta": {"content": part},
                                                   "finish_reason": "stop" if k == len(parts) - 1 else None}]})
    out += sieve.end()
    for chunk in out:
        json.dumps(chunk, ensure_ascii=False).encode("utf-8")


# ---------------------------------------------------------------- each finding, as a user meets it
DIGITS = (sys.get_int_max_str_digits() or 4300) + 1
HERMES = '<tool_call>{"name": "f", "arguments": %s}</tool_call>'
#: (name: document, dialects, {strict: (calls, codes)}) for issue 23's JSON findings
FINDINGS = {
    # more digits than Python converts: refused, never a ValueError out of feed()
    "huge_integer": (HERMES % ('{"a": ' + "9" * DIGITS + "}"), ["hermes"],
                     {False: ([], ["malformed_block"]), True: ([], ["malformed_block"])}),
    # a lone surrogate escape: U+FFFD (an OpenAI chunk can carry it), or malformed under strict
    "lone_surrogate": (HERMES % '{"n": "\\ud83d"}', ["hermes"],
                       {False: ([("f", {"n": "\ufffd"})], ["lone_surrogate"]), True: ([], ["malformed_block"])}),
    # a raw control character in a JSON string: read as escaped, said; strict: malformed
    "raw_control_character": (HERMES % '{"n": "a\tb"}', ["hermes"],
                              {False: ([("f", {"n": "a\tb"})], ["raw_control_character"]),
                               True: ([], ["malformed_block"])}),
    # GLM value nested past 256 with no schema: a string, and said so
    "glm_deep_value": ("<tool_call>f<arg_key>k</arg_key><arg_value>" + "[" * 300 + "]" * 300 + "</arg_value></tool_call>",
                       ["glm45"], {s: ([("f", {"k": "[" * 300 + "]" * 300})], ["type_mismatch"]) for s in (False, True)}),
}


@pytest.mark.parametrize("strict", [False, True])
@pytest.mark.parametrize("runner", ["compiled", "reference"])
@pytest.mark.parametrize("size", [0, 1, 3, 7])
@pytest.mark.parametrize("case", sorted(FINDINGS))
def test_each_json_finding_whole_and_chunked(case: str, size: int, runner: str, strict: bool) -> None:
    doc, dialects, expected = FINDINGS[case]
    parts = [doc] if not size else [doc[i : i + size] for i in range(0, len(doc), size)]
    events = run(parts, dialects=dialects, strict=strict, runner=runner)
    assert_shown_once(events, doc)
    assert (calls(events), codes(events)) == expected[strict]
    for e in events:
        if isinstance(e, callsieve.ToolCallDelta):
            e.arguments.encode("utf-8")


@pytest.mark.parametrize("strict", [False, True])
@pytest.mark.parametrize("runner", ["compiled", "reference"])
@pytest.mark.parametrize("size", [0, 1, 3, 7])
def test_string_valued_arguments_cut_short_stream_nothing(size: int, runner: str, strict: bool) -> None:
    """Issue 23: a string-valued ``"arguments"`` was streamed character by character
    before the call was abandoned. It is read whole and decoded once: cut short, no
    fragment of it was sent."""
    doc = '<tool_call>{"name": "f", "arguments": "{\\"a\\": 1, \\"b\\": \\"xyz'
    parts = [doc] if not size else [doc[i : i + size] for i in range(0, len(doc), size)]
    events = run(parts, dialects=["hermes"], strict=strict, runner=runner)
    assert_shown_once(events, doc)
    assert not [e for e in events if isinstance(e, callsieve.ToolCallDelta)]
    assert calls(events) == [] and codes(events) == ["unterminated_block"]
