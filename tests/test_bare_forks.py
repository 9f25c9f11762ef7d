"""Two dialects sharing a bare block's first marker (issue 21, item 7): a marker that
opens no call but begins a block with no opener of its own (Mistral's ``[TOOL_CALLS]``)
is decided by a fork, as a shared opener (``<tool_call>``) is: what follows it, derived
from each dialect's grammar, picks the dialect, never the order they are listed in.
Where what follows cannot tell them apart, or where the shared marker is a call's own
open (qwen3_coder's bare ``<function=…>``), composition refuses with the rule and the
fix; xLAM and Mistral avoid it by declaring one block (equal blocks count once)."""

from __future__ import annotations

from typing import Any

import pytest

import callsieve
from callsieve.events import merged
from callsieve.grammar import Block, Dialect, JsonCalls, Many, Marker, Seq, mistral, qwen3_coder, seed_oss
from strategies import calls, codes, run, texts

CALLS_OPEN = Marker("<calls>", ("<calls>",))
CALLS_CLOSE = Marker("</calls>", ("</calls>",))
#: ``[TOOL_CALLS]<calls>[{…}]</calls>``: Mistral's first marker, then a wrapper of its own.
WRAPPED = Dialect("wrapped_calls", "[TOOL_CALLS] then <calls>",
                  (Block(None, Seq(mistral.TOOL_CALLS, CALLS_OPEN, JsonCalls(), CALLS_CLOSE), None),))
ARRAY = '[{"name": "get_weather", "arguments": {"city": "Paris"}}]'


def read(doc: str, size: int = 0, **kw: Any) -> list[callsieve.Event]:
    parts = [doc] if not size else [doc[i : i + size] for i in range(0, len(doc), size)]
    got = run(parts, **kw)
    assert merged(got) == merged(run(parts, runner="reference", **kw))
    assert "".join(e.raw for e in got) == doc
    return got


def dialects_of(events: list[callsieve.Event]) -> list[str]:
    return [e.dialect for e in events if isinstance(e, callsieve.ToolCall)]


@pytest.mark.parametrize("size", [0, 1])
@pytest.mark.parametrize("order", [[WRAPPED, "mistral"], ["mistral", WRAPPED]])
def test_what_follows_a_shared_bare_first_marker_picks_the_dialect(size: int, order: list[Any]) -> None:
    for doc, dialect in (
        (f"Sure. [TOOL_CALLS]<calls>{ARRAY}</calls> done", "wrapped_calls"),
        (f"Sure. [TOOL_CALLS]{ARRAY} done", "mistral"),
        ('Sure. [TOOL_CALLS]get_weather[ARGS]{"city": "Paris"} done', "mistral"),
    ):
        events = read(doc, size, dialects=order)
        assert calls(events) == [("get_weather", {"city": "Paris"})], doc
        assert dialects_of(events) == [dialect], doc
        assert texts(events) == "Sure.  done" and codes(events) == [], doc
    # Mistral's name with its [ARGS] left out (a tolerance): the body's { ends the name
    events = read('Sure. [TOOL_CALLS]get_weather{"city": "Paris"} done', size, dialects=order)
    assert calls(events) == [("get_weather", {"city": "Paris"})] and dialects_of(events) == ["mistral"]
    assert codes(events) == ["missing_args_open"]


def test_what_neither_reads_leaves_the_marker_as_text() -> None:
    doc = "[TOOL_CALLS] is a token, said in prose."
    for size in (0, 1):
        # (issue 24, item 9: Mistral declares its [TOOL_CALLS] an orphan token: the opener
        # of a block none reads is framing, in raw only; strict, text)
        events = read(doc, size, dialects=[WRAPPED, "mistral"])
        assert calls(events) == [] and texts(events) == doc[len("[TOOL_CALLS]"):]
        assert codes(events) == ["orphan_token", "malformed_block"]
        events = read(doc, size, dialects=[WRAPPED, "mistral"], strict=True)
        assert calls(events) == [] and texts(events) == doc and codes(events) == ["malformed_block"]


def test_the_fork_is_drawn() -> None:
    from callsieve.tools.diagrams import dialect_dot

    dot = dialect_dot([WRAPPED, "mistral"])
    assert '"fork"' in dot and "wrapped_calls" in dot


def test_the_same_array_after_the_shared_marker_is_refused_with_the_fix() -> None:
    """xLAM's ``[TOOL_CALLS]`` wrapper declared apart from Mistral's: both read ``[`` next."""
    apart = Dialect("xlam_apart", "xLAM's wrapper, declared apart", (Block(None, Seq(mistral.TOOL_CALLS, JsonCalls()), None),))
    with pytest.raises(callsieve.GrammarError, match=r"mistral and xlam_apart both accept '\[' next \(rule.*fix: .*equal blocks count once"):
        callsieve.Sieve(dialects=[apart, "mistral"])
    # the built-in xlam declares Mistral's block itself: it counts once
    events = read(f"[TOOL_CALLS]{ARRAY}", dialects=["xlam", "mistral"])
    assert dialects_of(events) == ["xlam"]  # the first dialect listed that declares it


def test_a_shared_call_open_that_both_grammars_read_alike_is_refused_with_the_rule() -> None:
    """Seed-OSS's calls without their wrapper begin with qwen3_coder's ``<function=…>``: a
    call's open that bare blocks share is decided by a fork, as a block opener is (issue
    24: the Hermes family's ``<function=NAME>{…}``), and these two read the same next."""
    bare_seed = Dialect("seed_bare", "Seed-OSS calls without <seed:tool_call>",
                        (Block(None, Many(qwen3_coder.CALL, min=1), seed_oss.CLOSE, close_optional=True),))
    with pytest.raises(callsieve.GrammarError, match=r"opener '<function=…>': qwen3_coder and seed_bare both accept "
                                                     r"'<parameter=k>' next \(rule.*fix:"):
        callsieve.Sieve(dialects=[bare_seed, "qwen3_coder"])
