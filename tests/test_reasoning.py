"""Reasoning, per family, as the dialects declare it (``Dialect.reasoning``): ``<think>``
(DeepSeek, Qwen3/QwQ, GLM, MiniMax, Kimi-K2-Thinking, older Magistral), Magistral's
``[THINK]`` (mistral), ``start_in_reasoning``, and a tool-call block inside reasoning:
a call only where an unclosed reasoning ends on it, and the policy says which
dialects' blocks are read there (``calls_in_reasoning``)."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, strategies as st

import callsieve
from callsieve.events import merged
from callsieve.grammar import REGISTRY
from callsieve.grammar.reasoning import BRACKETS, THINK
from strategies import chunks, run


def kinds(events: list[callsieve.Event]) -> list[tuple[str, str]]:
    return [(type(e).__name__, getattr(e, "text", getattr(e, "name", getattr(e, "code", ""))))
            for e in merged(events) if not isinstance(e, (callsieve.ToolCallStart, callsieve.ToolCallDelta))]


def pieces(doc: str, size: int) -> list[str]:
    return [doc] if not size else [doc[i : i + size] for i in range(0, len(doc), size)]


THINKERS = sorted(n for n, d in REGISTRY.items() if THINK in d.reasoning)


def test_the_families_each_dialect_declares() -> None:
    assert {n for n, d in REGISTRY.items() if BRACKETS in d.reasoning} == {"mistral"}
    for name in ("dsml", "deepseek_v3", "deepseek_v31", "hermes", "kimi_k2", "minimax_m2", "qwen3_coder", "mistral"):
        assert THINK in REGISTRY[name].reasoning, name
    assert {n for n, d in REGISTRY.items() if d.calls_in_reasoning} == {"hermes", "kimi_k2", "deepseek_v31"}


@pytest.mark.parametrize("name", THINKERS)
@pytest.mark.parametrize("size", [0, 1])
def test_think_is_reasoning_for_every_dialect_that_declares_it(name: str, size: int) -> None:
    doc = "<think>\nplan: a < b\n</think>\n\nAnswer."
    events = run(pieces(doc, size), dialects=[name])
    assert kinds(events) == [("Reasoning", "\nplan: a < b\n"), ("Text", "\n\nAnswer.")]
    assert "".join(e.raw for e in events) == doc


@pytest.mark.parametrize("size", [0, 1])
def test_magistral_brackets_are_reasoning_for_mistral_only(size: int) -> None:
    doc = "[THINK]check [the] docs[/THINK]Done."
    events = run(pieces(doc, size), dialects=["mistral"])
    assert kinds(events) == [("Reasoning", "check [the] docs"), ("Text", "Done.")]
    (r,) = [e for e in merged(events) if isinstance(e, callsieve.Reasoning)]
    assert r.raw == "[THINK]check [the] docs[/THINK]"
    # a dialect that does not declare the family leaves it as text
    assert kinds(run(pieces(doc, size), dialects=["hermes"])) == [("Text", doc)]
    # [/THINK] does not close <think>, nor </think> [THINK]
    mixed = "<think>a[/THINK]b</think>c"
    assert kinds(run(pieces(mixed, size), dialects=["mistral"])) == [("Reasoning", "a[/THINK]b"), ("Text", "c")]


@pytest.mark.parametrize("size", [0, 1, 3])
def test_start_in_reasoning_a_bare_close_ends_it_and_a_written_open_is_framing(size: int) -> None:
    doc = "<think>\nthinking <b>\n</think>answer"
    events = run(pieces(doc, size), start_in_reasoning=True)
    assert kinds(events) == [("Reasoning", "\nthinking <b>\n"), ("Text", "answer")]
    assert [e.raw for e in merged(events)][0] == "<think>\nthinking <b>\n</think>"
    events = run(pieces("mid-thought</think>answer", size), start_in_reasoning=True)
    assert kinds(events) == [("Reasoning", "mid-thought"), ("Text", "answer")]


def test_start_in_reasoning_needs_a_dialect_whose_reasoning_a_prompt_opens() -> None:
    with pytest.raises(callsieve.InvalidOptionError, match="start_in_reasoning"):
        callsieve.Sieve(["mistral"], start_in_reasoning=True, reasoning=False)
    only_brackets = callsieve.grammar.Dialect("brackets_only", "t", (), reasoning=(BRACKETS,))
    with pytest.raises(callsieve.InvalidOptionError, match="prompt may open"):
        callsieve.Sieve([only_brackets], start_in_reasoning=True)


def test_reasoning_false_leaves_every_family_as_text() -> None:
    doc = "<think>a</think>[THINK]b[/THINK]"
    assert kinds(run([doc], reasoning=False)) == [("Text", doc)]


KIMI = ("<|tool_calls_section_begin|><|tool_call_begin|>functions.f:0<|tool_call_argument_begin|>"
        '{"k": 1}<|tool_call_end|><|tool_calls_section_end|>')
HERMES = '<tool_call>\n{"name": "f", "arguments": {"k": 1}}\n</tool_call>'
V31 = '<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>f<｜tool▁sep｜>{"k": 1}<｜tool▁call▁end｜><｜tool▁calls▁end｜>'
QWEN = "<tool_call>\n<function=f>\n<parameter=k>\n1\n</parameter>\n</function>\n</tool_call>"
MINIMAX = '<minimax:tool_call>\n<invoke name="f">\n<parameter name="k">1</parameter>\n</invoke>\n</minimax:tool_call>'
IN_THINK = [("kimi_k2", KIMI, {"k": 1}, True), ("hermes", HERMES, {"k": 1}, True), ("deepseek_v31", V31, {"k": 1}, True),
            ("qwen3_coder", QWEN, {"k": "1"}, False), ("minimax_m2", MINIMAX, {"k": "1"}, False)]


@pytest.mark.parametrize("name, block, args, declared", IN_THINK, ids=[x[0] for x in IN_THINK])
@pytest.mark.parametrize("policy", ["dialect", "call", "reasoning"])
@pytest.mark.parametrize("enabled", ["own", "all"])
@pytest.mark.parametrize("size", [0, 1])
def test_a_block_an_unclosed_reasoning_ends_on_follows_the_policy(name: str, block: str, args: dict[str, Any], declared: bool,
                                                                 policy: str, enabled: str, size: int) -> None:
    """Kimi-K2-Thinking, Qwen3 and DeepSeek V3.1 write their calls at the end of an
    unclosed <think>: a block the stream ends on (nothing but whitespace after it) is
    a call, which ends the reasoning (with a Diagnostic), where the policy reads that
    dialect's blocks in reasoning; others' blocks there are reasoning text. Behind a
    shared opener (<tool_call>: hermes and qwen3_coder) the dialect bound decides by
    its own rule."""
    doc = "<think>need the tool " + block + "\n"
    events = run(pieces(doc, size), dialects=[name] if enabled == "own" else None, calls_in_reasoning=policy)
    assert "".join(e.raw for e in events) == doc
    as_call = policy == "call" or (policy == "dialect" and declared)
    if as_call:
        assert kinds(events) == [("Reasoning", "need the tool "), ("Diagnostic", "reasoning_closed_by_call"),
                                 ("ToolCall", "f"), ("Text", "\n")]
        (call,) = [e for e in events if isinstance(e, callsieve.ToolCall)]
        assert call.arguments == args and call.dialect == name
    else:
        assert kinds(events) == [("Reasoning", "need the tool " + block + "\n")]


@pytest.mark.parametrize("name, block, args, declared", IN_THINK, ids=[x[0] for x in IN_THINK])
@pytest.mark.parametrize("policy", ["dialect", "call", "reasoning"])
@pytest.mark.parametrize("after", [" done", " done</think>Hi", "</think>Hi", "\n\n<think>x"])
@pytest.mark.parametrize("size", [0, 1])
def test_a_block_the_reasoning_goes_on_from_or_closes_after_is_reasoning(name: str, block: str, args: dict[str, Any],
                                                                       declared: bool, policy: str, after: str, size: int) -> None:
    """Under every policy: the model wrote about a call, and went on thinking (or
    closed its reasoning after it). A block that was read as one is reported as
    ``call_in_reasoning``; none streamed anything."""
    doc = "<think>need the tool " + block + after
    events = run(pieces(doc, size), dialects=[name], calls_in_reasoning=policy)
    assert "".join(e.raw for e in events) == doc
    assert not [e for e in events if isinstance(e, (callsieve.ToolCall, callsieve.ToolCallStart, callsieve.ToolCallDelta))]
    thought = "need the tool " + block + after.split("</think>")[0].replace("<think>", "")
    assert "".join(e.text for e in events if isinstance(e, callsieve.Reasoning)) == thought
    assert "".join(e.text for e in events if isinstance(e, callsieve.Text)) == (after.split("</think>")[1] if "</think>" in after else "")
    read = policy == "call" or (policy == "dialect" and declared)
    assert [e.code for e in events if isinstance(e, callsieve.Diagnostic)] == (["call_in_reasoning"] if read else [])


@pytest.mark.parametrize("name, block, args, declared", IN_THINK, ids=[x[0] for x in IN_THINK])
def test_a_block_after_closed_reasoning_is_a_call_under_every_policy(name: str, block: str, args: dict[str, Any], declared: bool) -> None:
    doc = "<think>plan</think>" + block
    for policy in ("dialect", "call", "reasoning"):
        events = run([doc], dialects=[name], calls_in_reasoning=policy)
        assert kinds(events) == [("Reasoning", "plan"), ("ToolCall", "f")]


def test_a_bad_policy_is_a_typed_error_at_construction() -> None:
    with pytest.raises(callsieve.InvalidOptionError, match="calls_in_reasoning"):
        callsieve.Sieve(calls_in_reasoning="maybe")  # type: ignore[arg-type]


@given(st.data())
def test_reasoning_policies_chunking_does_not_matter(data: st.DataObject) -> None:
    body = data.draw(st.lists(st.sampled_from(["plan ", "<", "</think>", "<think>", "[THINK]", "[/THINK]", "\n", KIMI, HERMES, QWEN, V31,
                                               MINIMAX, "`", "```\n"]), max_size=8))
    doc = "".join(body)
    kw = dict(calls_in_reasoning=data.draw(st.sampled_from(["dialect", "call", "reasoning"])),
              start_in_reasoning=data.draw(st.booleans()))
    whole = merged(run([doc], **kw))
    assert merged(run(data.draw(chunks(doc)), **kw)) == whole
    assert "".join(e.raw for e in whole) == doc
