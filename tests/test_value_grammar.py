"""A value grammar of a user's own (issue 21, item 1): a dialect declared in this file
brings the region that reads its calls' arguments (states, rules, a model of guards and
actions) and names it as a body, ``Body(region=..., entry=...)``, as ``JsonArgs`` is
named. Nothing in ``callsieve`` knows the syntax: the structure names the body, the
body names its region and its first state, and the region's rows to ``EXIT`` go where
the structure says. The test runs it through both runners in every chunking, checks
the streaming contract (canonical JSON deltas), a refused call released alone while
its block stands, and draws it."""

from __future__ import annotations

import json
import shutil
import subprocess
from typing import Any

import pytest
from hypothesis import given, strategies as st

import callsieve
from callsieve.events import merged
from callsieve.grammar import Block, Body, Call, Dialect, Many, Marker, Region
from callsieve.grammar.states import ALL, EOF_TRIGGER, EXIT, OVERFLOW, BodyHelpers, StateDecl, but, on
from strategies import calls, codes, run, texts


# ---------------------------------------------------------------- the value grammar
class KeyValueModel(BodyHelpers):
    """``{city=Paris; days=3}``: keys, ``=``, bare values (an integer, ``true`` /
    ``false``, else a string), ``;`` between pairs. Guards and actions of the region."""

    kv_text = ""
    kv_count = 0
    kv_keys: tuple[str, ...] = ()

    def kv_begin(self, ch: str) -> None:
        self.kv_text = ""
        self.kv_count = 0
        self.kv_keys = ()

    def kv_is_eq(self, ch: str) -> bool:
        return ch == "="

    def kv_is_semi(self, ch: str) -> bool:
        return ch == ";"

    def kv_none_yet(self, ch: str) -> bool:
        return self.kv_count == 0 and not self.kv_text.strip()

    def kv_open(self, ch: str) -> None:
        self.body_hold(ch)
        self.body_args("{")

    def kv_char(self, ch: str) -> None:
        self.body_hold(ch)
        self.kv_text += ch

    def kv_key(self, ch: str) -> None:
        self.body_hold(ch)
        key, self.kv_text = self.kv_text.strip(), ""
        if not key or key in self.kv_keys:
            self.body_refuse(f"key {key!r} empty or given twice")
            return
        self.kv_keys += (key,)
        self.body_args((", " if self.kv_count else "") + json.dumps(key, ensure_ascii=False) + ": ")
        self.kv_count += 1

    def kv_value(self, ch: str) -> None:
        self.body_hold(ch)
        v, self.kv_text = self.kv_text.strip(), ""
        typed: Any = int(v) if v.isdigit() else {"true": True, "false": False}.get(v, v)
        self.body_args(json.dumps(typed, ensure_ascii=False))

    def kv_close(self, ch: str) -> None:
        self.body_args("}")


KV_STATES = ("kv.start", "kv.key", "kv.value")
KV = Region(
    "kv",
    (
        StateDecl("kv.start", "before {", in_block=True, owner="kv"),
        StateDecl("kv.key", "a key, up to =", in_block=True, owner="kv"),
        StateDecl("kv.value", "a value, up to ; or }", in_block=True, owner="kv"),
    ),
    (
        *on("kv.start", ["ws", "nl"], "kv.start", "body_hold", rank=1),
        *on("kv.start", ["lbrace"], "kv.key", "kv_open", rank=2),
        *on("kv.start", but("ws", "nl", "lbrace"), "text", "abort_block", "reprocess", rank=90),
        *on("kv.key", ["rbrace"], EXIT, "body_hold", "kv_close", when=["kv_none_yet"], rank=1),
        *on("kv.key", but("rbrace", "lbrace"), "kv.value", "kv_key", when=["kv_is_eq"], rank=2),
        *on("kv.key", but("rbrace", "lbrace"), "kv.key", "kv_char", rank=90),
        *on("kv.key", ["rbrace", "lbrace"], "text", "abort_block", "reprocess", rank=91),
        *on("kv.value", but("rbrace", "lbrace"), "kv.key", "kv_value", when=["kv_is_semi"], rank=1),
        *on("kv.value", ["rbrace"], EXIT, "kv_value", "kv_close", rank=2),
        *on("kv.value", but("rbrace", "lbrace"), "kv.value", "kv_char", rank=90),
        *on("kv.value", ["lbrace"], "text", "abort_block", "reprocess", rank=91),
        *[r for s in KV_STATES for r in (*on(s, [EOF_TRIGGER], "text", "abort_block_eof"),
                                         *on(s, [OVERFLOW], s, "abort_oversized"))],
    ),
    KeyValueModel,
)
KV_ARGS = Body(region=KV, entry="kv.start", begin="kv_begin", first="{", reads="args", label="{k=v; …}")

AT_CALLS = Dialect(
    "at_calls",
    "@calls @call(NAME){k=v; …} … @end, with a value grammar of its own",
    (Block(
        Marker("@calls", ("@calls",)),
        Many(Call(Marker(r"@call\((?P<name>\w{1,64})\)", ("@call(f)",), "@call(…)"), KV_ARGS, close=None), min=1),
        Marker("@end", ("@end",)),
    ),),
)
DOC = "Hi @calls @call(get_weather){city=Paris; days=3} @call(now){} @call(say){text=café \"ok\"; loud=true} @end bye"
EXPECTED = [
    ("get_weather", {"city": "Paris", "days": 3}),
    ("now", {}),
    ("say", {"text": 'café "ok"', "loud": True}),
]


def read(doc: str, parts: list[str], dialects: list[Any]) -> list[callsieve.Event]:
    got = run(parts, dialects=dialects)
    assert merged(got) == merged(run(parts, dialects=dialects, runner="reference"))
    assert "".join(e.raw for e in got) == doc
    return got


def deltas_are_canonical(events: list[callsieve.Event]) -> None:
    sent: dict[int, str] = {}
    for e in events:
        if isinstance(e, callsieve.ToolCallDelta):
            sent[e.index] = sent.get(e.index, "") + e.arguments
        elif isinstance(e, callsieve.ToolCall):
            assert sent.get(e.index, "") == json.dumps(e.arguments, ensure_ascii=False)


@pytest.mark.parametrize("dialects", [[AT_CALLS], [AT_CALLS, *callsieve.DIALECTS]], ids=["alone", "with-built-ins"])
@pytest.mark.parametrize("size", [0, 1, 2, 5])
def test_a_users_value_grammar_reads_its_calls(dialects: list[Any], size: int) -> None:
    parts = [DOC] if not size else [DOC[i : i + size] for i in range(0, len(DOC), size)]
    events = read(DOC, parts, dialects)
    assert calls(events) == EXPECTED
    assert texts(events) == "Hi  bye"
    deltas_are_canonical(events)


@given(st.data())
def test_a_users_value_grammar_in_any_chunking(data: st.DataObject) -> None:
    cuts = sorted(data.draw(st.sets(st.integers(1, len(DOC) - 1), max_size=16)))
    parts = [DOC[i:j] for i, j in zip([0, *cuts], [*cuts, len(DOC)])]
    events = read(DOC, parts, [AT_CALLS])
    assert calls(events) == EXPECTED
    deltas_are_canonical(events)


def test_a_call_the_value_grammar_refuses_is_released_alone() -> None:
    doc = "@calls @call(a){k=1} @call(b){k=1; k=2} @call(c){x=y} @end"
    for size in (0, 1, 3):
        parts = [doc] if not size else [doc[i : i + size] for i in range(0, len(doc), size)]
        events = read(doc, parts, [AT_CALLS])
        assert calls(events) == [("a", {"k": 1}), ("c", {"x": "y"})]
        bad = [e for e in events if isinstance(e, callsieve.Diagnostic)]
        assert [d.code for d in bad] == ["malformed_call"]
        assert "given twice" in bad[0].message and "abandoned" in bad[0].message
        (gone,) = [e for e in events if isinstance(e, callsieve.ToolCallAbandoned)]  # its start streamed: shown once
        assert (gone.name, gone.reason, gone.raw.strip()) == ("b", "malformed_call", "@call(b){k=1; k=2}")
        deltas_are_canonical(events)


def test_what_the_value_grammar_cannot_read_makes_the_block_text() -> None:
    doc = "@calls @call(a){k=1}} @end"
    events = read(doc, [doc], [AT_CALLS])
    assert calls(events) == [] and codes(events) == ["malformed_block"]
    # the call had streamed: its markup is on its ToolCallAbandoned, never text (shown
    # once), the rest of its block to the close too (issue 23: it reached Text)
    (gone,) = [e for e in events if isinstance(e, callsieve.ToolCallAbandoned)]
    assert gone.raw == doc and texts(events) == ""
    events = read("@calls junk @end", ["@calls junk @end"], [AT_CALLS])
    assert calls(events) == [] and texts(events) == "@calls junk @end"  # nothing streamed: text


def test_a_users_value_grammar_is_drawn() -> None:
    from callsieve.tools.diagrams import dialect_dot

    import re

    dot = dialect_dot([AT_CALLS])
    for state in ("kv.start", "kv.key", "kv.value"):
        assert f'"{state}"' in dot, state
    # the region's row to EXIT is drawn to what follows the body in the structure: the
    # dialect's position between calls, which listens for the next @call or @end
    # (the arrow leaves the box: its label is written in the box, beside the state it
    # goes to, as the JSON body's ways out are)
    after = re.search(r'"kv\.value" -> "(at_calls\.[a-z_0-9]+)" \[', dot)
    assert after is not None
    box = next(m.group(0) for m in re.finditer(r'^\s*"kv\.value" \[.*$', dot, re.M))
    assert re.search(r"rbrace / kv_value, kv_close,<br/>body_exit<br/>→ <b>" + re.escape(after.group(1)) + "</b>", box)
    assert re.search(rf'"{re.escape(after.group(1))}" -> "maybe_tag"', dot)
    # a tokenizer the dialect brings is drawn compactly, as the JSON body is: its states
    # list their moves to one another inside them, those arrows unlabelled
    node = next(m.group(0) for m in re.finditer(r'^\s*"kv\.key" \[.*$', dot, re.M))
    assert "→ <b>kv.value</b>" in node
    assert re.search(r'^\s*"kv\.key" -> "kv\.value" \[tooltip=', dot, re.M)


@pytest.mark.skipif(shutil.which("dot") is None, reason="graphviz dot is not installed")
def test_a_users_value_grammar_is_laid_out_by_graphviz() -> None:
    pytest.importorskip("graphviz")  # (the `diagrams` extra; a bare install has no layout)
    from callsieve.tools.diagrams import dialect_dot, label_overlaps

    dot = dialect_dot([AT_CALLS])
    svg = subprocess.run(["dot", "-Tsvg"], input=dot.encode("utf-8"), capture_output=True, check=True).stdout.decode("utf-8")
    assert "kv.value" in svg and "at_calls" in svg
    assert label_overlaps(dot) == []


def test_a_body_names_its_region_and_entry() -> None:
    """The structure compiler names no region's state: the body does, and a body that
    names what is not there is refused with the rule it breaks."""
    from dataclasses import replace

    def with_body(body: Body) -> Dialect:
        blk = AT_CALLS.blocks[0]
        inner = Many(Call(Marker(r"@call\((?P<name>\w{1,64})\)", ("@call(f)",)), body, close=None), min=1)
        return replace(AT_CALLS, name="at_bad", blocks=(replace(blk, body=inner),))

    for body, match in (
        (replace(KV_ARGS, entry="kv.nowhere"), r"begins in 'kv.nowhere', which is no state of its region 'kv' \(rule"),
        (replace(KV_ARGS, region="no_such_region"), r"names region 'no_such_region', which is neither"),
        (replace(KV_ARGS, begin="kv_no_such_action"), r"begins with action 'kv_no_such_action'.*\(rule"),
        (replace(KV_ARGS, reads="everything"), r"reads must be 'args', 'call' or 'calls'"),
        (replace(KV_ARGS, reads="calls"), r"makes calls \(reads='calls'\): it stands outside any Call"),
        (replace(KV_ARGS, region=replace(KV, rules=tuple(r for r in KV.rules if r.dest != EXIT))), r"has no row to EXIT"),
        (replace(KV_ARGS, region=replace(KV, states=tuple(replace(s, in_block=False) for s in KV.states))),
         r"is not in_block \(rule"),
    ):
        with pytest.raises(callsieve.GrammarError, match=match):
            callsieve.Sieve(dialects=[with_body(body)])


_ = ALL
