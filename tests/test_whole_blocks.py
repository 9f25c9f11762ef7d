"""Blocks decided whole (``callsieve.regions.whole``, issue 27): the compiled runner reads a
plainly simple block whose text is in the chunk in one step. It must decide exactly what
the steps decide: the same events (not only once merged: the same ones, in the same
order) as the compiled runner without the readers, and what the reference runner
decides, whole and however the stream is cut; and anything not plainly simple is left
to the steps."""

from __future__ import annotations

import contextlib
import json
from typing import Any, Iterator
from unittest import mock

import pytest
from hypothesis import given, strategies as st

import callsieve
import callsieve.sieve
from callsieve.events import merged
from strategies import NAME, chunks, run

#: The dialects with a whole-block reader: JSON call bodies and the XML family.
READ_WHOLE = ["hermes", "qwen3_coder", "minimax_m2", "xml", "dsml"]

TOOLS = [
    {"type": "function", "function": {"name": "f", "parameters": {"properties": {
        "s": {"type": "string"}, "k": {"type": "integer"}, "o": {"type": "object"}}}}},
    {"type": "function", "function": {"name": "write", "parameters": {"properties": {"content": {"type": "string"}}}}},
]


@contextlib.contextmanager
def no_whole_blocks() -> Iterator[None]:
    """Sieves made inside run without the whole-block readers (the steps alone)."""
    with mock.patch.object(callsieve.sieve, "whole_blocks", lambda machine: None):
        yield


def taken(**kw: Any) -> int:
    """How many blocks the readers of a sieve made with ``kw`` decided whole so far (the
    readers are shared by every sieve of one composition)."""
    runner = callsieve.Sieve(**kw).runner
    whole = getattr(runner, "whole", None)
    return whole.taken if whole is not None else 0


def three_ways(doc: str, pieces: list[str], **kw: Any) -> list[callsieve.Event]:
    """The compiled runner with the readers, fed ``pieces``: its events are exactly those
    without them, and, merged, the reference runner's."""
    got = run(pieces, **kw)
    with no_whole_blocks():
        stepped = run(pieces, **kw)
    assert got == stepped
    assert merged(got) == merged(run(pieces, runner="reference", **kw))
    if not (kw.get("on_malformed") == "raise" and got and isinstance(got[-1], callsieve.Diagnostic)):
        assert "".join(e.raw for e in got) == doc
    return got


# ------------------------------------------------------------------ documents
VALUE_ALPHABET = list("ab z\n\t>&;\"'/=[]{}é杭`~\\") + ["<", "</parameter>", "&amp;", "&lt;", "]]>", "\n\n", "<<EOF"]


@st.composite
def value_text(draw: st.DrawFn) -> str:
    return "".join(draw(st.lists(st.sampled_from(VALUE_ALPHABET), max_size=6)))


@st.composite
def block_call(draw: st.DrawFn) -> tuple[str, list[tuple[str, str, bool]]]:
    name = draw(st.sampled_from(["f", "write", "other"]) | NAME)
    keys = draw(st.lists(st.sampled_from(["s", "k", "o", "content", "path", "arguments"]) | NAME, max_size=3))
    params = []
    for key in keys:
        if draw(st.booleans()):
            v: Any = draw(st.one_of(st.integers(-5, 5), st.booleans(), st.none(), value_text(),
                                    st.dictionaries(NAME, value_text(), max_size=2)))
            params.append((key, json.dumps(v, ensure_ascii=draw(st.booleans())), True))
        else:
            params.append((key, draw(value_text()), False))
    return name, params


#: What an edit may put into a document: markup of every kind the readers meet.
EDITS = ["<", ">", "\n", " ", "x", "</parameter>", "</parameter/>", "</function>", "<function=g>", "<parameter=s>",
         "</tool_call>", "<tool_call>", "<think>", "</think>", "```\n", "`", '{"name": "g"}', '"name": "h", ',
         '"arguments": "{}"', "\\ud800", "NaN", "1e999", "</invoke>", '<invoke name="g">', '<parameter name="s">',
         "</tool_calls>", "<![CDATA[", "&amp;", "\uff1c"]


@st.composite
def whole_document(draw: st.DrawFn, dialect: str) -> str:
    render = callsieve.grammar.registry.REGISTRY[dialect].render
    assert render is not None
    parts = []
    for _ in range(draw(st.integers(1, 4))):
        parts.append(draw(st.sampled_from(["", "Step.\n", "text ", "\n\n", "a `<tool_call>` b\n", "    "])))
        calls = draw(st.lists(block_call(), min_size=1, max_size=3))
        parts.append(render(calls, draw(st.integers(0, 40))))
    doc = "".join(parts) + draw(st.sampled_from(["", "\n", "done."]))
    for _ in range(draw(st.integers(0, 2))):
        at = draw(st.integers(0, len(doc)))
        if draw(st.booleans()):
            doc = doc[:at] + draw(st.sampled_from(EDITS)) + doc[at:]
        else:
            doc = doc[:at] + doc[at + draw(st.integers(1, 12)):]
    return doc


@given(st.data())
def test_blocks_read_whole_decide_what_the_steps_decide(data: st.DataObject) -> None:
    """Plain blocks and every deviation an edit makes (values holding markup, entities,
    a close left out or misspelt, a duplicate key, JSON the body reads otherwise), fed
    whole and cut anywhere, under tools and policies."""
    dialect = data.draw(st.sampled_from(READ_WHOLE))
    doc = data.draw(whole_document(dialect))
    kw: dict[str, Any] = dict(
        dialects=data.draw(st.sampled_from([[dialect], sorted({dialect, "qwen3_coder"}), sorted({dialect, "hermes"})])),
        tools=data.draw(st.sampled_from([None, TOOLS])),
        unknown_tool=data.draw(st.sampled_from(["call", "text", "drop"])),
        on_malformed=data.draw(st.sampled_from(["text", "drop", "raise"])),
        calls_in_reasoning=data.draw(st.sampled_from(["dialect", "call", "reasoning"])),
        max_block_chars=data.draw(st.sampled_from([1 << 20, 1 << 20, 40, 90])),
        strict=data.draw(st.booleans()),
    )
    pieces = [doc] if data.draw(st.booleans()) else data.draw(chunks(doc))
    three_ways(doc, pieces, **kw)


@given(st.data())
def test_runs_of_plain_blocks_read_whole_decide_what_the_steps_decide(data: st.DataObject) -> None:
    """Unedited documents, mostly plain: the readers take most of their blocks."""
    dialect = data.draw(st.sampled_from(READ_WHOLE))
    doc = "".join(data.draw(st.lists(st.sampled_from(["Step 1.\n", "ok "]), max_size=2))) + \
        callsieve.grammar.registry.REGISTRY[dialect].render(data.draw(st.lists(block_call(), min_size=1, max_size=3)),
                                                             data.draw(st.integers(0, 40)))
    doc = doc + "\n" + doc
    pieces = [doc] if data.draw(st.booleans()) else data.draw(chunks(doc))
    three_ways(doc, pieces, dialects=[dialect], tools=data.draw(st.sampled_from([None, TOOLS])))


# ------------------------------------------------------------------ examples
QWEN = ("Step 0: write it.\n<tool_call>\n<function=write_file>\n<parameter=path>\nsrc/a.py\n</parameter>\n"
        "<parameter=content>\ndef f():\n    return 1\n</parameter>\n</function>\n</tool_call>\nDone.\n")
HERMES = ('Step 0: write it.\n<tool_call>\n{"name": "write_file", "arguments": {"path": "src/a.py", '
          '"content": "def f():\\n    return 1", "n": [1, 2.50, -0, true, null]}}\n</tool_call>\nDone.\n')
MINIMAX = ('Go.\n<minimax:tool_call>\n<invoke name="f">\n<parameter name="s">x</parameter>\n</invoke>\n'
           '<invoke name="g">\n</invoke>\n</minimax:tool_call> after')


@pytest.mark.parametrize("size", [0, 1, 2, 3, 7])
@pytest.mark.parametrize("doc, dialect", [(QWEN, "qwen3_coder"), (HERMES, "hermes"), (MINIMAX, "minimax_m2")])
def test_plain_blocks_are_read_whole_and_mean_what_the_steps_read(doc: str, dialect: str, size: int) -> None:
    pieces = [doc] if not size else [doc[k : k + size] for k in range(0, len(doc), size)]
    before = taken(dialects=[dialect])
    got = three_ways(doc, pieces, dialects=[dialect])
    # Fed whole, the block is decided in one step; in small pieces, never.
    assert taken(dialects=[dialect]) - before == (1 if not size else 0)
    calls = [e for e in got if isinstance(e, callsieve.ToolCall)]
    assert calls and all(c.dialect == dialect for c in calls)
    if dialect == "hermes":
        assert calls[0].arguments == {"path": "src/a.py", "content": "def f():\n    return 1", "n": [1, 2.5, 0, True, None]}
        deltas = "".join(e.arguments for e in got if isinstance(e, callsieve.ToolCallDelta))
        assert deltas == calls[0].arguments_json
    if dialect == "qwen3_coder":
        assert calls[0].arguments == {"path": "src/a.py", "content": "def f():\n    return 1"}
        assert calls[0].raw == QWEN[QWEN.index("<tool_call>") : QWEN.index("</tool_call>") + len("</tool_call>")]


@pytest.mark.parametrize("doc, dialect, why", [
    (QWEN.replace("return 1", "return 1 < 2"), "qwen3_coder", "a value holding a start character"),
    (QWEN.replace("src/a.py\n</parameter>\n", "src/a.py\n</parameter>x\n"), "qwen3_coder", "a close refused"),
    (QWEN.replace("</parameter>\n<parameter=content>", "<parameter=content>"), "qwen3_coder", "a close left out"),
    (QWEN.replace("</parameter>\n<parameter=content>", "</parameter/>\n<parameter=content>"), "qwen3_coder",
     "a close variant"),
    (QWEN.replace("</function>\n</tool_call>", "</tool_call>"), "qwen3_coder", "a call close left out"),
    (QWEN.replace("content>", "path>"), "qwen3_coder", "a parameter given twice"),
    (HERMES.replace('"n":', '"path":'), "hermes", "a duplicate key"),
    (HERMES.replace("2.50", "NaN"), "hermes", "not JSON"),
    (HERMES.replace("src/a.py", "\\ud800"), "hermes", "a lone surrogate"),
    (HERMES.replace("def f()", "def\x01f()"), "hermes", "a raw control character"),
    (HERMES.replace('"arguments": {', '"arguments": "{').replace("null]}}", 'null]}"}'), "hermes",
     "arguments as a string"),
    (HERMES.replace("</tool_call>", "</tool_call"), "hermes", "no close"),
])
def test_blocks_not_plainly_simple_are_left_to_the_steps(doc: str, dialect: str, why: str) -> None:
    before = taken(dialects=[dialect])
    for pieces in ([doc], [doc[k : k + 3] for k in range(0, len(doc), 3)]):
        three_ways(doc, pieces, dialects=[dialect])
    assert taken(dialects=[dialect]) == before, why


def test_a_block_in_reasoning_is_left_to_the_steps() -> None:
    doc = "<think>\n" + HERMES + "</think>\nanswer"
    before = taken(dialects=["hermes"])
    three_ways(doc, [doc], dialects=["hermes"])
    assert taken(dialects=["hermes"]) == before


def test_typed_parameters_are_left_to_the_steps_and_string_ones_read_whole() -> None:
    tools = [{"type": "function", "function": {"name": "f", "parameters": {"properties": {
        "s": {"type": "string"}, "k": {"type": "integer"}}}}}]
    plain = "<tool_call>\n<function=f>\n<parameter=s>\nx\n</parameter>\n</function>\n</tool_call>"
    typed = plain.replace("<parameter=s>\nx", "<parameter=k>\n3")
    before = taken(dialects=["qwen3_coder"], tools=tools)
    three_ways(plain, [plain], dialects=["qwen3_coder"], tools=tools)
    assert taken(dialects=["qwen3_coder"], tools=tools) == before + 1
    got = three_ways(typed, [typed], dialects=["qwen3_coder"], tools=tools)
    assert taken(dialects=["qwen3_coder"], tools=tools) == before + 1
    assert [e.arguments for e in got if isinstance(e, callsieve.ToolCall)] == [{"k": 3}]


def test_hermes_type_problems_are_reported_by_the_reader_as_by_the_steps() -> None:
    doc = '<tool_call>{"name": "f", "arguments": {"k": "three"}}</tool_call>'
    before = taken(dialects=["hermes"], tools=TOOLS)
    got = three_ways(doc, [doc], dialects=["hermes"], tools=TOOLS)
    assert taken(dialects=["hermes"], tools=TOOLS) == before + 1
    assert [e.code for e in got if isinstance(e, callsieve.Diagnostic)] == ["type_mismatch"]


# ------------------------------------------------------- JSON structure in runs
@st.composite
def spaced_json(draw: st.DrawFn, value: Any) -> str:
    """``value`` as JSON with whitespace of every kind between its tokens."""
    def ws() -> str:
        return draw(st.text(alphabet=" \t\r\n", max_size=2))

    if isinstance(value, dict):
        items = [ws() + json.dumps(k) + ws() + ":" + ws() + draw(spaced_json(v)) + ws() for k, v in value.items()]
        return "{" + ",".join(items) + "}" if items else "{" + ws() + "}"
    if isinstance(value, list):
        return "[" + ",".join(ws() + draw(spaced_json(v)) + ws() for v in value) + "]"
    return json.dumps(value, ensure_ascii=draw(st.booleans()))


JSON_LEAF = st.one_of(st.integers(-9, 99), st.booleans(), st.none(), value_text(), st.sampled_from(['"', "\\", "a\\\"b"]))


@given(st.data())
def test_json_bodies_read_in_runs_decide_what_the_steps_decide(data: st.DataObject) -> None:
    """Hermes bodies with whitespace anywhere between tokens, nested objects and arrays,
    escapes and keys given twice, cut anywhere: the JSON structure's run
    (``callsieve.regions.json_run``) and the whole-block reader against the steps."""
    args = data.draw(st.recursive(st.dictionaries(NAME, JSON_LEAF, max_size=3),
                                  lambda inner: st.dictionaries(NAME, inner | st.lists(inner, max_size=2), max_size=3),
                                  max_leaves=8))
    body = data.draw(spaced_json({"name": data.draw(st.sampled_from(["f", "write", "g"])), "arguments": args}))
    if data.draw(st.booleans()):
        k = data.draw(st.integers(0, len(body)))
        body = body[:k] + data.draw(st.sampled_from(['"name": "h", ', ", ", ":", '"', "\\", " ", "}"])) + body[k:]
    doc = "Go.\n<tool_call>" + data.draw(st.sampled_from(["", "\n", " "])) + body + "\n</tool_call>\nok"
    pieces = [doc] if data.draw(st.booleans()) else data.draw(chunks(doc))
    three_ways(doc, pieces, dialects=["hermes"], tools=data.draw(st.sampled_from([None, TOOLS])),
               max_block_chars=data.draw(st.sampled_from([1 << 20, 30, 60])))


# ------------------------------------------------------------- captures in runs
#: Dialects whose calls hold a capture (a name, an id, a key as text between markers).
CAPTURED = ["glm45", "kimi_k2", "deepseek_v31", "deepseek_v3", "mistral"]
CAPTURE_EDITS = ["<", ">", "\n", " ", ".", ":", "-", "x" * 70, "é", "functions.", "<tool_call>", "</arg_key>",
                 "<arg_key>", "<|tool_call_begin|>", "<|tool_call_argument_begin|>", "<｜tool▁sep｜>",
                 "<｜tool▁call▁begin｜>", "[TOOL_CALLS]", "[ARGS]", "[CALL_ID]", "`", "{", "\\"]


@given(st.data())
def test_captures_read_in_runs_decide_what_the_steps_decide(data: st.DataObject) -> None:
    """Names, ids and keys held as text between markers (Kimi ``functions.NAME:IDX``,
    DeepSeek V3.1's name, GLM's keys, Mistral's name), plain or edited with characters
    their pattern cannot take, openers and overlong text, cut anywhere: the capture's
    run (``callsieve.regions.capture.CaptureRun``) against the steps."""
    dialect = data.draw(st.sampled_from(CAPTURED))
    render = callsieve.grammar.registry.REGISTRY[dialect].render
    assert render is not None
    doc = "Go.\n" + render(data.draw(st.lists(block_call(), min_size=1, max_size=2)), data.draw(st.integers(0, 40))) + "\nok"
    for _ in range(data.draw(st.integers(0, 2))):
        at = data.draw(st.integers(0, len(doc)))
        doc = doc[:at] + data.draw(st.sampled_from(CAPTURE_EDITS)) + doc[at:]
    pieces = [doc] if data.draw(st.booleans()) else data.draw(chunks(doc))
    three_ways(doc, pieces, dialects=[dialect], tools=data.draw(st.sampled_from([None, TOOLS])),
               strict=data.draw(st.booleans()), max_block_chars=data.draw(st.sampled_from([1 << 20, 30, 60])))


@pytest.mark.parametrize("dialect", CAPTURED)
def test_a_capture_streamed_in_pieces_is_read_in_runs(dialect: str) -> None:
    """Fed a few characters at a time, a call's name (and id, and keys) is read by the
    capture's run, not a step per character; the events are the steps'."""
    from callsieve.regions.capture import CaptureRun

    render = callsieve.grammar.registry.REGISTRY[dialect].render
    assert render is not None
    doc = "Go.\n" + render([("write_file", [("path", "src/a.py", False), ("content", "x = 1", False)])], 0) + "\nok"
    pieces = [doc[i:i + 3] for i in range(0, len(doc), 3)]
    took: list[int] = []
    real = CaptureRun.run

    def counting(self: CaptureRun, ctx: Any, s: str, i: int) -> int:
        j = real(self, ctx, s, i)
        took.append(j - i)
        return j

    with mock.patch.object(CaptureRun, "run", counting):
        got = three_ways(doc, pieces, dialects=[dialect])
    assert sum(took) >= len("write_file") - 2, took
    assert [e.name for e in got if isinstance(e, callsieve.ToolCall)] == ["write_file"]


# ------------------------------------------------------------ token-sized chunks
@pytest.mark.parametrize("dialect", ["qwen3_coder", "glm45", "kimi_k2", "hermes"])
@pytest.mark.parametrize("size", [1, 2, 3, 5])
def test_chunks_that_only_grow_a_held_tag_skip_the_runner(dialect: str, size: int) -> None:
    """Cut into token-sized pieces, most chunks inside markup only grow the tag held
    (``CompiledRunner.feed_events``, asking the matcher's memo): those decide nothing and never
    reach the runner's general path (``CompiledRunner.feed``); every other chunk is
    read as before, and the events are the reference runner's."""
    from callsieve.compiler import CompiledRunner

    render = callsieve.grammar.registry.REGISTRY[dialect].render
    assert render is not None
    call = render([("write_file", [("path", "src/a.py", False), ("content", "x = 1", False)])], 0)
    doc = "Go.\n" + call + "\nand\n" + call + "\nok"
    pieces = [doc[i:i + size] for i in range(0, len(doc), size)]
    general: list[str] = []
    real = CompiledRunner.feed

    def counting(self: CompiledRunner, s: str) -> None:
        general.append(s)
        real(self, s)

    with mock.patch.object(CompiledRunner, "feed", counting):
        s = callsieve.Sieve(dialects=[dialect], id_prefix="call_")
        ctx = s._ctx
        got: list[callsieve.Event] = []
        grew = 0
        for p in pieces:
            before, tag = ctx.state, ctx.tag
            seen = len(general)
            out = s.feed(p)
            got += out
            if before == "maybe_tag" and ctx.state == "maybe_tag" and ctx.tag == tag + p:
                grew += 1
                assert out == [] and len(general) == seen, (p, tag)
        got += s.close()
    assert grew >= 4 * 2 // size  # (the later tags of each call are cut by the pieces)
    assert merged(got) == merged(run(pieces, dialects=[dialect], runner="reference"))
    assert "".join(e.raw for e in got) == doc
