"""Many small calls streamed in token-sized chunks (issue 27, fourth round): the compiled
runner's token-chunk paths (a held tag grown or ended in the chunk, a streamed raw
value's chunk, a JSON string's chunk with its simple escapes read in the structure's
run) must decide what the reference runner decides, and what the compiled runner
decides fed the same text whole, however the stream is cut: one character, 2, 3, 7,
and the bench's seeded 1-8 character chunks. Each dialect the issue names is fed its
own many-calls text and edits of it: a literal closing marker inside a value, escapes,
a block cut short or with a close left out, a call inside a fence, ``tools=`` that
does not name the called tool, and strict mode."""

from __future__ import annotations

import random
from typing import Any

import pytest
from hypothesis import given, settings, strategies as st

import callsieve
from callsieve.events import merged
from callsieve.grammar import REGISTRY
from callsieve.tools.bench_workloads import chunk_sizes, cut
from strategies import chunks, run

#: The dialects issue 27 measures in token chunks.
TOKEN_DIALECTS = ["qwen3_coder", "hermes", "glm45", "kimi_k2", "deepseek_v3", "deepseek_v31", "mistral"]

#: Every dialect's closing and opening markers, literally, inside a value (data there).
LITERALS = ("x </parameter> y </arg_value> </tool_call> <tool_call> <|tool_call_end|> "
            "<｜tool▁call▁end｜> [TOOL_CALLS] [ARGS] </function>\n\t}\"\\ end")

TOOLS = [
    {"type": "function", "function": {"name": "other", "parameters": {"properties": {"s": {"type": "string"}}}}},
]


def _call(dialect: str, k: int, content: str = "", extra: tuple[tuple[str, str, bool], ...] = ()) -> str:
    params = [("path", f"src/mod_{k}.py", False),
              ("content", content or f"def f{k}():\n    return {k}", False), *extra]
    render = REGISTRY[dialect].render
    assert render is not None
    return str(render([("write_file", params)], 0))


def _doc(dialect: str, seed: int) -> str:
    """Sentences and calls, alternating (the bench's ``many_calls`` shape), with a value
    holding every dialect's markers literally, escapes, and a typed value."""
    rnd = random.Random(seed)
    parts = []
    for k in range(4):
        words = " ".join(rnd.choice(["the", "a", "call", "`code`", "then", "é", "<", "x<y"]) for _ in range(5))
        extra: tuple[tuple[str, str, bool], ...] = (("n", str(k), True),) if k % 2 else ()
        if k == 2:
            extra = (("q", '"\\u00e9\\/\\b\\f\\r"', True),)
        parts.append(f"Step {k}: {words}.\n" + _call(dialect, k, LITERALS if k == 1 else "", extra) + "\n")
    return "".join(parts)


def _docs(dialect: str) -> dict[str, str]:
    doc = _doc(dialect, 1)
    one = _call(dialect, 9)
    closes = [m for m in ("</parameter>", "</arg_value>", "</tool_call>", "<|tool_call_end|>", "<｜tool▁call▁end｜>")
              if m in one]
    return {
        "plain": doc,
        "cut_short": doc + "Then:\n" + one[: len(one) * 2 // 3],
        "close_left_out": doc + (one.replace(closes[0], "", 1) if closes else one[:-1]) + "\nafter\n",
        "fenced": "Like this:\n```\n" + one + "\n```\nand now:\n" + one + "\n",
    }


def _fed(doc: str, pieces: list[str], **kw: Any) -> list[callsieve.Event]:
    got = run(pieces, **kw)
    if not (kw.get("on_malformed") == "raise" and got and isinstance(got[-1], callsieve.Diagnostic)):
        assert "".join(e.raw for e in got) == doc
    return got


def _cuts(doc: str) -> list[list[str]]:
    return [cut(doc, 1), cut(doc, 2), cut(doc, 3), cut(doc, 7), cut(doc, chunk_sizes(len(doc), 5))]


OPTIONS: list[dict[str, Any]] = [{}, {"tools": TOOLS}, {"strict": True}, {"tools": TOOLS, "unknown_tool": "drop"}]


@pytest.mark.parametrize("dialect", TOKEN_DIALECTS)
@pytest.mark.parametrize("name", ["plain", "cut_short", "close_left_out", "fenced"])
def test_token_chunks_decide_what_whole_feeding_and_the_reference_runner_decide(dialect: str, name: str) -> None:
    doc = _docs(dialect)[name]
    for kw in OPTIONS:
        kw = {"dialects": [dialect], **kw}
        whole = merged(_fed(doc, [doc], **kw))
        reference = merged(_fed(doc, cut(doc, chunk_sizes(len(doc), 11)), runner="reference", **kw))
        assert whole == reference, (name, kw)
        for pieces in _cuts(doc):
            assert merged(_fed(doc, pieces, **kw)) == whole, (name, kw, len(pieces))
        if name == "plain" and len(kw) == 1:
            # (the text holds calls: the paths under test were taken)
            assert sum(isinstance(e, callsieve.ToolCall) for e in whole) == 4


@pytest.mark.parametrize("dialect", TOKEN_DIALECTS)
def test_token_chunks_with_escapes_cut_anywhere(dialect: str) -> None:
    """A JSON string's escapes cut between the backslash and its character, and every
    simple escape in one chunk with text around it."""
    value = 'a\\b"c/d\n\te\rf\u00e9\b\f' * 3
    doc = "go\n" + _call(dialect, 1, value, (("r", '"\\/\\u0041\\ud83d\\ude00\\u00e9x"', True),)) + "\nok"
    for kw in ({}, {"strict": True}):
        kw = {"dialects": [dialect], **kw}
        whole = merged(_fed(doc, [doc], **kw))
        assert whole == merged(_fed(doc, cut(doc, 3), runner="reference", **kw))
        for pieces in _cuts(doc) + [cut(doc, 4), cut(doc, 5)]:
            assert merged(_fed(doc, pieces, **kw)) == whole
        calls = [e for e in whole if isinstance(e, callsieve.ToolCall)]
        assert len(calls) == 1 and calls[0].arguments["content"] == value


@settings(max_examples=60, deadline=None)
@given(st.data())
def test_runners_agree_on_many_calls_cut_at_random(data: st.DataObject) -> None:
    dialect = data.draw(st.sampled_from(TOKEN_DIALECTS))
    doc = data.draw(st.sampled_from(sorted(_docs(dialect).items())))[1]
    kw: dict[str, Any] = {"dialects": [dialect], **data.draw(st.sampled_from(OPTIONS))}
    compiled = _fed(doc, data.draw(chunks(doc)), **kw)
    reference = _fed(doc, data.draw(chunks(doc)), runner="reference", **kw)
    assert merged(compiled) == merged(reference)


# ------------------------------------------------------- the sieve's feed is the runner's
class _Str(str):
    pass


def test_a_feed_bound_while_open_raises_after_close_and_failure() -> None:
    """An open sieve's ``feed`` is the compiled runner's (one call per chunk); a
    reference to it taken while the sieve was open still refuses once it closed, and
    what is not a ``str`` is refused without closing the sieve (both runners)."""
    doc = "hi <tool_call>\n{\"name\": \"f\", \"arguments\": {}}\n</tool_call> bye"
    for runner in ("compiled", "reference"):
        s = callsieve.Sieve(["hermes"], runner=runner, id_prefix="c")
        feed = s.feed
        with pytest.raises(TypeError, match="feed\\(\\) takes str, not bytes"):
            feed(b"x")  # type: ignore[arg-type]
        got = feed(doc[:9]) + feed(_Str(doc[9:20])) + s.feed(doc[20:])
        got += s.close()
        assert merged(got) == merged(run([doc], dialects=["hermes"], id_prefix="c"))
        for f in (feed, s.feed):
            with pytest.raises(callsieve.FeedAfterCloseError):
                f("more")
    bad = "<tool_call>\n{\"name\": \"f\", \"arguments\": {\"a\": }}\n</tool_call>"
    for runner in ("compiled", "reference"):
        s = callsieve.Sieve(["hermes"], runner=runner, on_malformed="raise")
        feed = s.feed
        with pytest.raises(callsieve.MalformedBlockError) as raised:
            for c in cut("before " + bad + " after", 3):
                feed(c)
        assert raised.value.events and raised.value.events[-1] is raised.value.diagnostic
        for f in (feed, s.feed):
            with pytest.raises(callsieve.FeedAfterCloseError):
                f("more")


def test_a_subclass_feed_is_still_called() -> None:
    """The runner's ``feed_events`` stands in for ``Sieve.feed`` only: a subclass that
    has a ``feed`` of its own is called through it."""
    seen: list[str] = []

    class Logged(callsieve.Sieve):
        def feed(self, chunk: str) -> list[callsieve.Event]:
            seen.append(chunk)
            return super().feed(chunk)

    s = Logged(["hermes"])
    assert merged(s.feed("a ") + s.feed("b") + s.close()) == [callsieve.Text("a b", "a b")]
    assert seen == ["a ", "b"]


@pytest.mark.parametrize("dialect", ["hermes", "mistral", "kimi_k2", "deepseek_v3"])
def test_strict_a_raw_control_character_in_a_json_string_streams_what_precedes_it(dialect: str) -> None:
    """Strict, a raw control character makes a JSON body malformed where it stands: the
    string's text before it is streamed as the steps stream it, whether the run reads it
    (found by the whole-block property: the compiled runner's string run withheld the
    whole piece the character was in, the reference runner streamed its head)."""
    render = REGISTRY[dialect].render
    assert render is not None
    good = str(render([("f", [("s", "ok", False)])], 0))
    call = str(render([("write", [("a", "1", True), ("k", "head<x>", False)])], 0))
    bad = call.replace("head<x>", "head<x>\ntail")
    doc = "a\n" + good + "\n" + bad + "\nb\n" + good
    kw: dict[str, Any] = {"dialects": [dialect], "strict": True}
    reference = merged(_fed(doc, [doc], runner="reference", **kw))
    streamed = "".join(e.arguments for e in reference if isinstance(e, callsieve.ToolCallDelta))
    assert '"k": "head<x>' in streamed  # (the head streams before the body is found bad)
    for pieces in [[doc]] + _cuts(doc):
        assert merged(_fed(doc, pieces, **kw)) == reference
