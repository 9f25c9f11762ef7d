"""gpt-oss harmony (shared/reference/dialects.md §9c): the header decides the body.

The reference examples whole and one character per chunk, the recipient in either part,
with and without ``<|constrain|>``, reasoning then a call, reasoning then final text,
two calls in a row, built-in recipients, truncated messages; every token is framing,
in ``raw`` only."""

from __future__ import annotations

import json
from typing import Any

import pytest

import callsieve
from callsieve.events import merged
from strategies import run

REF = ('<|channel|>analysis<|message|>Need to use function get_current_weather.<|end|><|start|>assistant<|channel|>'
       'commentary to=functions.get_current_weather <|constrain|>json<|message|>{"location":"San Francisco"}<|call|>')
ROLE_SECTION = ('<|start|>assistant to=functions.get_weather<|channel|>commentary <|constrain|>json<|message|>'
                '{"location":"San Francisco"}<|call|>')
NO_SPACE = ('<|start|>assistant<|channel|>commentary to=functions.generate_file<|constrain|>json<|message|>'
            '{"path": "a.txt"}<|call|>')
BARE_JSON = '<|start|>assistant<|channel|>commentary to=functions.get_weather json<|message|>{"city":"Paris"}<|call|>'
NO_TYPE = '<|start|>assistant to=functions.get_weather<|channel|>commentary<|message|>{"city":"Paris"}<|call|>'
FINAL = ("<|channel|>analysis<|message|>User asks a sum. 2+2=4.<|end|><|start|>assistant<|channel|>final<|message|>"
         "The answer is **4**.<|return|>")
PREAMBLE = ("<|channel|>analysis<|message|>Check both.<|end|><|start|>assistant<|channel|>commentary<|message|>"
            "Checking the weather now.<|end|>" + ROLE_SECTION)
TWO = (ROLE_SECTION.replace("San Francisco", "Tokyo") + BARE_JSON)
BUILTIN = ('<|channel|>analysis<|message|>Search it.<|end|><|start|>assistant<|channel|>analysis to=browser.search '
           'code<|message|>{"query": "harmony format"}<|call|>')
PYTHON = '<|start|>assistant to=python<|channel|>analysis code<|message|>{"code": "1+1"}<|call|>'
#: sglang PR #9097: a doubled <|start|>assistant; its text is the header's, still decided.
DOUBLED = '<|start|>assistant<|start|>assistant<|channel|>commentary to=functions.f json<|message|>{}<|call|>'

EXAMPLES: list[tuple[str, str, str, str, list[tuple[str, dict[str, Any]]]]] = [
    ("reference", REF, "Need to use function get_current_weather.", "", [("get_current_weather", {"location": "San Francisco"})]),
    ("recipient-in-role", ROLE_SECTION, "", "", [("get_weather", {"location": "San Francisco"})]),
    ("constrain-glued", NO_SPACE, "", "", [("generate_file", {"path": "a.txt"})]),
    ("bare-json", BARE_JSON, "", "", [("get_weather", {"city": "Paris"})]),
    ("no-content-type", NO_TYPE, "", "", [("get_weather", {"city": "Paris"})]),
    ("reasoning-then-final", FINAL, "User asks a sum. 2+2=4.", "The answer is **4**.", []),
    ("preamble-then-call", PREAMBLE, "Check both.", "Checking the weather now.", [("get_weather", {"location": "San Francisco"})]),
    ("two-calls", TWO, "", "", [("get_weather", {"location": "Tokyo"}), ("get_weather", {"city": "Paris"})]),
    ("built-in-browser", BUILTIN, "Search it.", "", [("browser.search", {"query": "harmony format"})]),
    ("built-in-python", PYTHON, "", "", [("python", {"code": "1+1"})]),
    ("doubled-start", DOUBLED, "", "", [("f", {})]),
]


def pieces(doc: str, size: int) -> list[str]:
    return [doc] if not size else [doc[i : i + size] for i in range(0, len(doc), size)]


@pytest.mark.parametrize("name, doc, reasoning, text, expected", EXAMPLES, ids=[e[0] for e in EXAMPLES])
@pytest.mark.parametrize("size", [0, 1, 7])
@pytest.mark.parametrize("enabled", ["own", "all"])
def test_reference_examples_whole_and_in_pieces(name: str, doc: str, reasoning: str, text: str,
                                                expected: list[tuple[str, dict[str, Any]]], size: int, enabled: str) -> None:
    events = run(pieces(doc, size), dialects=["harmony"] if enabled == "own" else None)
    assert [(e.name, e.arguments) for e in events if isinstance(e, callsieve.ToolCall)] == expected
    assert "".join(e.text for e in events if isinstance(e, callsieve.Reasoning)) == reasoning
    assert "".join(e.text for e in events if isinstance(e, callsieve.Text)) == text
    assert [e for e in events if isinstance(e, callsieve.Diagnostic)] == []
    assert "".join(e.raw for e in events) == doc
    assert {e.dialect for e in events if isinstance(e, callsieve.ToolCall)} <= {"harmony"}
    # framing rides in raw, never in text
    for e in events:
        if isinstance(e, (callsieve.Text, callsieve.Reasoning)):
            assert "<|" not in e.text
    done = {e.index: e.arguments_json for e in events if isinstance(e, callsieve.ToolCall)}
    got: dict[int, str] = {}
    for e in events:
        if isinstance(e, callsieve.ToolCallDelta):
            got[e.index] = got.get(e.index, "") + e.arguments
    assert got == done


def test_the_header_and_end_tokens_ride_in_the_raw_of_the_neighbouring_events() -> None:
    got = merged(run(list(FINAL), dialects=["harmony"]))
    assert [(type(e).__name__, e.text, e.raw) for e in got] == [
        ("Reasoning", "User asks a sum. 2+2=4.", "<|channel|>analysis<|message|>User asks a sum. 2+2=4.<|end|>"),
        ("Text", "The answer is **4**.", "<|start|>assistant<|channel|>final<|message|>The answer is **4**.<|return|>"),
    ]


def test_a_tool_reply_addressed_to_the_assistant_is_no_call() -> None:
    doc = '<|start|>functions.get_weather to=assistant<|channel|>commentary<|message|>{"sunny": true}<|end|>'
    events = run([doc], dialects=["harmony"])
    assert not [e for e in events if isinstance(e, callsieve.ToolCall)]
    assert "".join(e.text for e in events if isinstance(e, callsieve.Text)) == '{"sunny": true}'


@pytest.mark.parametrize("size", [0, 1])
def test_truncated_messages_keep_what_they_have(size: int) -> None:
    analysis = "<|channel|>analysis<|message|>Still thinking about"
    events = run(pieces(analysis, size), dialects=["harmony"])
    assert [(type(e).__name__, e.text) for e in merged(events)] == [("Reasoning", "Still thinking about")]
    final = "<|start|>assistant<|channel|>final<|message|>Half an ans"
    events = run(pieces(final, size), dialects=["harmony"])
    assert "".join(e.text for e in events if isinstance(e, callsieve.Text)) == "Half an ans"
    call = '<|start|>assistant to=functions.f<|channel|>commentary json<|message|>{"a": '
    events = run(pieces(call, size), dialects=["harmony"])
    assert [e.code for e in events if isinstance(e, callsieve.Diagnostic)] == ["unterminated_block"]
    # The call had started: it is abandoned, its markup in that event, never text.
    assert "".join(e.text for e in events if isinstance(e, callsieve.Text)) == ""
    assert [(e.name, e.raw) for e in events if isinstance(e, callsieve.ToolCallAbandoned)] == [("f", call)]
    assert not [e for e in events if isinstance(e, callsieve.ToolCall)]
    header = "<|start|>assistant<|channel|>fin"
    events = run(pieces(header, size), dialects=["harmony"])
    assert [e.code for e in events if isinstance(e, callsieve.Diagnostic)] == ["unterminated_block"]
    assert "".join(e.raw for e in events) == header


def test_a_header_past_its_limit_is_text_with_a_diagnostic() -> None:
    doc = "<|start|>" + "x" * 300 + "<|message|>hi"
    events = run([doc], dialects=["harmony"])
    assert [e.code for e in events if isinstance(e, callsieve.Diagnostic)] == ["malformed_block"]
    assert "".join(e.raw for e in events) == doc
    assert "x" * 300 in "".join(e.text for e in events if isinstance(e, callsieve.Text))


def test_a_call_with_bad_json_is_text_with_a_diagnostic_never_a_call() -> None:
    doc = '<|start|>assistant to=functions.f<|channel|>commentary json<|message|>{"a": nope}<|call|>after'
    events = run([doc], dialects=["harmony"])
    assert not [e for e in events if isinstance(e, callsieve.ToolCall)]
    assert [e.code for e in events if isinstance(e, callsieve.Diagnostic)] == ["malformed_block"]
    assert "".join(e.raw for e in events) == doc


def test_unknown_tool_policy_applies_to_harmony_calls() -> None:
    tools = [{"type": "function", "function": {"name": "get_weather", "parameters": {"type": "object", "properties": {}}}}]
    doc = '<|start|>assistant to=functions.rm_rf<|channel|>commentary json<|message|>{}<|call|>'
    events = run([doc], dialects=["harmony"], tools=tools, unknown_tool="text")
    assert "".join(e.text for e in events if isinstance(e, callsieve.Text)) == doc
    assert [e.code for e in events if isinstance(e, callsieve.Diagnostic)] == ["unknown_tool"]


def test_the_header_decision_is_on_the_dialect_diagram() -> None:
    from callsieve.machine import compose

    decl = compose(callsieve.grammar.resolve(["harmony"])).decl
    names = decl.state_names()
    for s in ("harmony.role", "harmony.channel", "harmony.constrain", "harmony.analysis"):
        assert s in names
    decided = {(t.dest, g) for t in decl.ordered() if t.source == "maybe_tag" for g in t.guards if g.startswith("header:")}
    assert ("harmony.analysis", "header:harmony.analysis") in decided
    assert ("text", "header:harmony.text") in decided
    assert ("j_start", "header:harmony.call") in decided


def test_parse_and_openai_message_keep_working() -> None:
    r = callsieve.parse(REF, dialects=["harmony"])
    assert r.reasoning == "Need to use function get_current_weather." and r.text == ""
    assert [json.loads(c.arguments_json) for c in r.calls] == [{"location": "San Francisco"}]


from hypothesis import given, strategies as st  # noqa: E402

from strategies import chunks, document  # noqa: E402

HARMONY = callsieve.grammar.REGISTRY["harmony"]


@given(st.data())
def test_documents_from_the_grammar_keep_framing_in_raw_only(data: st.DataObject) -> None:
    """Harmony documents generated from its grammar (analysis, final, commentary,
    calls, cut anywhere): the text is the visible bodies, every token in raw only."""
    doc, expected = data.draw(document(HARMONY))
    events = run(data.draw(chunks(doc)), dialects=data.draw(st.sampled_from([["harmony"], None])))
    assert "".join(e.text for e in events if isinstance(e, callsieve.Text)) == expected.text
    assert [(e.name, e.arguments) for e in events if isinstance(e, callsieve.ToolCall)] == expected.calls
    assert "".join(e.raw for e in events) == doc
    for e in events:
        if isinstance(e, (callsieve.Text, callsieve.Reasoning)):
            assert not any(t in e.text for t in ("<|start|>", "<|channel|>", "<|message|>", "<|end|>", "<|return|>", "<|call|>"))


@pytest.mark.parametrize("options", [{}, {"reasoning": False}, {"calls_in_reasoning": "call"}, {"calls_in_reasoning": "reasoning"},
                                     {"on_malformed": "drop"}, {"unknown_tool": "text"}, {"max_block_chars": 1 << 16}])
def test_the_openai_adapter_cleans_a_harmony_message_with_every_option(options: dict[str, Any]) -> None:
    from callsieve.openai import StreamSieve, clean_message

    msg = clean_message({"role": "assistant", "content": FINAL + REF}, dialects=["harmony"], **options)
    assert msg["content"] == "The answer is **4**."
    assert msg["reasoning_content"] == "User asks a sum. 2+2=4.Need to use function get_current_weather."
    (tc,) = msg["tool_calls"]
    assert tc["function"]["name"] == "get_current_weather"
    assert json.loads(tc["function"]["arguments"]) == {"location": "San Francisco"}
    assert StreamSieve is not None


def test_a_prompt_that_ends_in_a_harmony_header_needs_no_start_in_reasoning() -> None:
    with pytest.raises(callsieve.InvalidOptionError, match="start_in_reasoning"):
        callsieve.Sieve(["harmony"], start_in_reasoning=True)
