"""Issue 23's findings, one example test each, whole and chunked, on both runners,
strict and lenient: harmony's ``<|end|>`` ending a recipient message, nested CDATA, a
heredoc cut by a markup close.

Every test also checks *shown once* (``assert_shown_once``): the raw of the events is
the input, each streamed call ends once, and none of its markup is text."""

from __future__ import annotations

from typing import Any

import pytest

import callsieve
from strategies import calls, codes, run, texts
from test_shown_once import assert_shown_once

SIZES = [0, 1, 4]
RUNNERS = ["compiled", "reference"]


def parts(doc: str, size: int) -> list[str]:
    return [doc] if not size else [doc[i : i + size] for i in range(0, len(doc), size)]


def each(doc: str, **kw: Any) -> list[list[callsieve.Event]]:
    """``doc`` read whole and in chunks of 1 and 4, on both runners: the same events
    every time (chunking does not matter), shown once; the whole-read's events."""
    first: list[callsieve.Event] | None = None
    out = []
    for runner in RUNNERS:
        for size in SIZES:
            events = run(parts(doc, size), runner=runner, **kw)
            assert_shown_once(events, doc)
            got = (calls(events), texts(events), codes(events), abandoned(events))
            if first is None:
                first = events
            else:
                assert got == (calls(first), texts(first), codes(first), abandoned(first)), (runner, size)
            out.append(events)
    return out


def abandoned(events: list[callsieve.Event]) -> list[str]:
    return [e.raw for e in events if isinstance(e, callsieve.ToolCallAbandoned)]


def tools(*names: str) -> list[dict[str, Any]]:
    props = {"path": {"type": "string"}, "content": {"type": "string"}}
    return [{"type": "function", "function": {"name": n, "parameters": {"type": "object", "properties": props}}} for n in names]


# ---------------------------------------------------------------- harmony: <|end|> for <|call|>
HARMONY_END = ("<|start|>assistant<|channel|>commentary to=functions.f <|constrain|>json<|message|>{\"a\": 1}<|end|>"
               "<|start|>assistant<|channel|>final<|message|>done<|return|>")


def test_harmony_recipient_message_ended_by_end_is_a_call_with_a_diagnostic() -> None:
    """Issue 23: openai_harmony reads a recipient message ended by ``<|end|>`` as the
    call; the sieve abandoned it and showed its header tokens as text."""
    for events in each(HARMONY_END, dialects=["harmony"]):
        assert calls(events) == [("f", {"a": 1})] and texts(events) == "done"
        assert codes(events) == ["end_instead_of_call"]
        (d,) = [e for e in events if isinstance(e, callsieve.Diagnostic)]
        assert HARMONY_END[d.offset :].startswith("<|end|>")
    for events in each(HARMONY_END, dialects=["harmony"], strict=True):
        # the format's reading: no call, its markup abandoned (never text)
        assert calls(events) == [] and texts(events) == "done"
        assert codes(events) == ["malformed_block"]


# ---------------------------------------------------------------- nested CDATA, cut heredoc
NESTED = '<tool_calls><invoke name="w"><parameter name="c"><![CDATA[<x><![CDATA[in]]></x>]]></parameter></invoke></tool_calls>'


def test_nested_cdata_does_not_end_a_value_early() -> None:
    """Issue 23: the inner section's ``]]>`` ended the value (``<x><![CDATA[in`` plus
    ``</x>]]>`` as stray text in it). Tolerated: the whole outer section is the value."""
    for events in each(NESTED, dialects=["xml"]):
        assert calls(events) == [("w", {"c": "<x><![CDATA[in]]></x>"})]
        assert codes(events) == ["nested_cdata"]
    for events in each(NESTED, dialects=["xml"], strict=True):
        # XML has no nesting: the first ]]> closes the section
        assert calls(events) == [("w", {"c": "<x><![CDATA[in</x>]]>"})] and codes(events) == []


HEREDOC = "<tool_call>\n<function=bash>\n<parameter=cmd>\ncat <<EOF > a.py\nprint(1)\n</parameter>\n</function>\n</tool_call>"


@pytest.mark.parametrize("strict", [False, True])
def test_a_heredoc_cut_by_a_markup_close_is_said(strict: bool) -> None:
    """Issue 23: a ``</parameter>`` inside a heredoc ended the value, and the cut
    command ran with no Diagnostic. The call stands (the markup says it ends there)
    and ``unterminated_heredoc`` says the command may be cut."""
    for events in each(HEREDOC, dialects=["qwen3_coder"], strict=strict):
        assert calls(events) == [("bash", {"cmd": "cat <<EOF > a.py\nprint(1)"})]
        assert codes(events) == ["unterminated_heredoc"]


@pytest.mark.parametrize("cmd", ["cat <<EOF > a\nx\nEOF", "cat <<-'END' > a\n\tx\n\tEND", "cout << endl;", "a <<< b",
                                 "x << 'A'\ny\nA\ncat << B\nz\nB"])
def test_a_closed_heredoc_or_a_shift_is_no_diagnostic(cmd: str) -> None:
    doc = HEREDOC.replace("cat <<EOF > a.py\nprint(1)", cmd)
    events = run([doc], dialects=["qwen3_coder"])
    assert calls(events) == [("bash", {"cmd": cmd})] and codes(events) == []
