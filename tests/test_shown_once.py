"""Shown once (contract point 2, issue 23): a call whose start was streamed is never
also shown as text. It ends in exactly one ``ToolCall`` or one ``ToolCallAbandoned``
(whose ``raw`` holds its markup), and its fragments are always a prefix of the
arguments JSON the whole document gives that call: a prefix that never makes a whole
object unless the call completes.

The oracle for the fragments is the same document read to its end: a stream cut
anywhere (``max_tokens``) gives, for each call it abandons, fragments that begin the
arguments the uncut stream gives that call, strictly."""

from __future__ import annotations

import json
import pytest
from hypothesis import given, strategies as st

import callsieve
from strategies import any_dialect, chunks, document, run, texts


def _by_index(events: list[callsieve.Event]) -> dict[int, list[callsieve.Event]]:
    out: dict[int, list[callsieve.Event]] = {}
    for e in events:
        if isinstance(e, (callsieve.ToolCallStart, callsieve.ToolCallDelta, callsieve.ToolCall, callsieve.ToolCallAbandoned)):
            out.setdefault(e.index, []).append(e)
    return out


def assert_shown_once(events: list[callsieve.Event], doc: str) -> None:
    """Every streamed call ends once, as a call or abandoned, never also as text."""
    assert "".join(e.raw for e in events) == doc
    for index, mine in _by_index(events).items():
        start = mine[0]
        assert isinstance(start, callsieve.ToolCallStart), index
        ends = [e for e in mine if isinstance(e, (callsieve.ToolCall, callsieve.ToolCallAbandoned))]
        assert len(ends) == 1 and ends[0] is mine[-1], (index, mine)
        end = ends[0]
        assert (end.id, end.name) == (start.id, start.name)
        joined = "".join(e.arguments for e in mine if isinstance(e, callsieve.ToolCallDelta))
        if isinstance(end, callsieve.ToolCall):
            assert joined == end.arguments_json
        else:
            # never a whole JSON object: no client can take it for a complete call
            with pytest.raises(ValueError):
                json.loads(joined)
    for e in events:
        if isinstance(e, callsieve.Text):
            assert e.text in ("", e.raw)


@given(st.data())
def test_a_stream_cut_anywhere_shows_each_started_call_once(data: st.DataObject) -> None:
    d = data.draw(any_dialect, label="dialect")
    doc, _expected = data.draw(document(d), label="document")
    k = data.draw(st.integers(0, len(doc)), label="cut")
    cut = doc[:k]
    strict = data.draw(st.booleans(), label="strict")
    runner = data.draw(st.sampled_from(["compiled", "reference"]), label="runner")
    dialects = data.draw(st.sampled_from([[d.name], None]), label="dialects")
    full = run([doc], dialects=dialects, strict=strict)
    whole = {e.index: e.arguments_json for e in full if isinstance(e, callsieve.ToolCall)}
    events = run(data.draw(chunks(cut), label="chunks"), dialects=dialects, strict=strict, runner=runner)
    assert_shown_once(events, cut)
    for index, mine in _by_index(events).items():
        joined = "".join(e.arguments for e in mine if isinstance(e, callsieve.ToolCallDelta))
        if index in whole:
            # the canonical-delta property, abandoned calls included: a prefix of the
            # arguments the whole document gives the call (strict when abandoned)
            assert whole[index].startswith(joined), (joined, whole[index])
            if isinstance(mine[-1], callsieve.ToolCallAbandoned):
                assert len(joined) < len(whole[index])
    # The abandoned markup is nowhere in the text.
    for e in events:
        if isinstance(e, callsieve.ToolCallAbandoned):
            assert e.raw and e.raw not in texts(events)


#: a character that is grammar nowhere in a position between markers
JUNK = st.sampled_from(["x", "}", "\u00e9", "]", ","])


@given(st.data())
def test_a_document_broken_anywhere_shows_each_started_call_once(data: st.DataObject) -> None:
    d = data.draw(any_dialect, label="dialect")
    doc, _expected = data.draw(document(d), label="document")
    k = data.draw(st.integers(0, len(doc)), label="where")
    doc = doc[:k] + data.draw(JUNK, label="junk") + doc[k:]
    policy = data.draw(st.sampled_from(["text", "drop"]), label="on_malformed")
    events = run(data.draw(chunks(doc), label="chunks"), dialects=[d.name], on_malformed=policy,
                 strict=data.draw(st.booleans(), label="strict"))
    assert_shown_once(events, doc)


@pytest.mark.parametrize("policy", ["text", "drop", "raise"])
@pytest.mark.parametrize("size", [0, 1, 3])
def test_every_policy_abandons_a_truncated_call_the_same_way(policy: str, size: int) -> None:
    doc = "Hi <tool_call>\n<function=f>\n<parameter=a>\nhel"
    parts = [doc] if not size else [doc[i : i + size] for i in range(0, len(doc), size)]
    events = run(parts, on_malformed=policy)
    assert [type(e).__name__ for e in events if not isinstance(e, (callsieve.Text, callsieve.ToolCallDelta))] == [
        "ToolCallStart", "ToolCallAbandoned", "Diagnostic"]
    assert texts(events) == "Hi "
    assert_shown_once(events, doc)


# ---------------------------------------------------------------- ids, and tolerances with their own evidence
KIMI_TWICE = ("<|tool_calls_section_begin|><|tool_call_begin|>functions.f:0<|tool_call_argument_begin|>{}<|tool_call_end|>"
              "<|tool_call_begin|>functions.f:0<|tool_call_argument_begin|>{\"a\": 1}<|tool_call_end|><|tool_calls_section_end|>"
              " and <|tool_calls_section_begin|><|tool_call_begin|>functions.f:0<|tool_call_argument_begin|>{}"
              "<|tool_call_end|><|tool_calls_section_end|>")


@pytest.mark.parametrize("runner", ["compiled", "reference"])
@pytest.mark.parametrize("size", [0, 1, 9])
def test_a_wire_id_given_twice_is_made_unique_with_a_diagnostic(size: int, runner: str) -> None:
    parts = [KIMI_TWICE] if not size else [KIMI_TWICE[i : i + size] for i in range(0, len(KIMI_TWICE), size)]
    events = run(parts, dialects=["kimi_k2"], runner=runner)
    starts = [e.id for e in events if isinstance(e, callsieve.ToolCallStart)]
    assert starts == ["functions.f:0", "functions.f:0#2", "functions.f:0#3"]
    assert [e.id for e in events if isinstance(e, callsieve.ToolCall)] == starts
    assert [e.code for e in events if isinstance(e, callsieve.Diagnostic)] == ["duplicate_call_id", "duplicate_call_id"]


def test_openai_tool_calls_entries_never_share_an_id() -> None:
    from callsieve.openai import StreamSieve

    sieve = StreamSieve(["kimi_k2"])
    out = sieve.push({"id": "x", "choices": [{"index": 0, "delta": {"content": KIMI_TWICE}, "finish_reason": "stop"}]})
    ids = [tc["id"] for c in out for tc in (c["choices"][0]["delta"].get("tool_calls") or []) if tc.get("id")]
    assert len(ids) == 3 and len(set(ids)) == 3


@pytest.mark.parametrize("size", [0, 1, 4])
def test_harmony_glued_json_renames_a_call_only_to_a_known_tool(size: int) -> None:
    doc = "<|channel|>commentary to=functions.geojson<|message|>{}<|call|>"
    parts = [doc] if not size else [doc[i : i + size] for i in range(0, len(doc), size)]
    plain = run(parts, dialects=["harmony"])
    assert [e.name for e in plain if isinstance(e, callsieve.ToolCall)] == ["geojson"]
    assert not [e for e in plain if isinstance(e, callsieve.Diagnostic)]
    geo = [{"type": "function", "function": {"name": "geo", "parameters": {"type": "object", "properties": {}}}}]
    known = run(parts, dialects=["harmony"], tools=geo)
    assert [e.name for e in known if isinstance(e, callsieve.ToolCall)] == ["geo"]
    assert [e.code for e in known if isinstance(e, callsieve.Diagnostic)] == ["glued_content_type"]
