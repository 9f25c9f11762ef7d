"""Python call syntax as a value grammar (``PythonCalls``, ``PythonCall``; issue 21,
item 1): Python literals read by states, never ``eval``, streamed as canonical JSON;
a call that is no literal call released alone, the others standing; bracket depth,
never the first ``]``.

The oracle is Python itself: arguments are generated as values, written with
``repr`` (Python's own spelling of a literal) in varied quoting and spacing, and must
come back equal, their deltas spelling ``json.dumps(arguments, ensure_ascii=False)``."""

from __future__ import annotations

import json
import keyword
from typing import Any

import pytest
from hypothesis import given, strategies as st

import callsieve
from callsieve.events import merged
from callsieve.grammar import Block, Dialect, JsonCall, Many, Marker, PythonCall, PythonCalls
from strategies import NAME, calls, codes, run, texts

OPEN = Marker("<calls>", ("<calls>",))
CLOSE = Marker("</calls>", ("</calls>",))
PY = Dialect("py_calls", "a list of Python calls", (Block(OPEN, PythonCalls(), CLOSE),))
PYJ = Dialect("py_json", "Python calls, JSON words, call objects",
              (Block(OPEN, PythonCalls(json_literals=True, objects=JsonCall()), CLOSE),))
LINES = Dialect("py_lines", "one Python call per line",
                (Block(Marker("<function_calls>", ("<function_calls>",)), Many(PythonCall(json_literals=True), min=1),
                       Marker("</function_calls>", ("</function_calls>",))),))


def read(doc: str, dialect: Dialect, size: int = 0, **kw: Any) -> list[callsieve.Event]:
    """Both runners agree, every character comes back once, and every call's deltas
    spell its final arguments' JSON."""
    parts = [doc] if not size else [doc[i : i + size] for i in range(0, len(doc), size)]
    got = run(parts, dialects=[dialect], **kw)
    assert merged(got) == merged(run(parts, dialects=[dialect], runner="reference", **kw))
    assert "".join(e.raw for e in got) == doc
    sent: dict[int, str] = {}
    for e in got:
        if isinstance(e, callsieve.ToolCallDelta):
            sent[e.index] = sent.get(e.index, "") + e.arguments
        elif isinstance(e, callsieve.ToolCall):
            assert sent.get(e.index, "") == json.dumps(e.arguments, ensure_ascii=False)
    return got


def args_of(doc: str, dialect: Dialect = PY, size: int = 0, **kw: Any) -> list[tuple[str, dict[str, Any]]]:
    return calls(read(doc, dialect, size, **kw))


# ---------------------------------------------------------------- the oracle: repr
NAMES = NAME.filter(lambda n: not keyword.iskeyword(n))
SCALARS = st.one_of(
    st.text(max_size=12),
    st.integers(-(10**30), 10**30),
    st.floats(allow_nan=False, allow_infinity=False),
    st.booleans(),
    st.none(),
)
VALUES = st.recursive(
    SCALARS,
    lambda inner: st.one_of(st.lists(inner, max_size=4), st.dictionaries(st.text(max_size=6), inner, max_size=4)),
    max_leaves=12,
)


@st.composite
def written(draw: st.DrawFn, v: Any) -> str:
    """``v`` as a Python literal: ``repr`` for scalars (strings in either quote,
    sometimes triple-quoted), containers with random spacing and trailing commas."""
    sp = draw(st.sampled_from(["", " ", "\n  "]))
    if isinstance(v, str):
        r = repr(v)
        style = draw(st.integers(0, 2))
        if style == 1 and r[0] == "'":
            return "'''" + r[1:-1] + "'''" if not r[1:-1].endswith("\\") else r
        if style == 2:
            return json.dumps(v, ensure_ascii=False)  # a double-quoted string is Python too
        return r
    if isinstance(v, list):
        items = [draw(written(x)) for x in v]
        trail = "," if items and draw(st.booleans()) else ""
        return "[" + sp + ("," + sp).join(items) + trail + "]"
    if isinstance(v, dict):
        items = [draw(written(k)) + sp + ":" + sp + draw(written(x)) for k, x in v.items()]
        return "{" + sp + ("," + sp).join(items) + "}"
    return repr(v)


@st.composite
def python_calls(draw: st.DrawFn) -> tuple[str, list[tuple[str, dict[str, Any]]]]:
    out = []
    texts_ = []
    for _ in range(draw(st.integers(1, 3))):
        name = draw(NAMES)
        args = draw(st.dictionaries(NAMES, VALUES, max_size=4))
        sp = draw(st.sampled_from(["", " "]))
        texts_.append(f"{name}(" + ("," + sp).join(f"{k}{sp}={sp}{draw(written(v))}" for k, v in args.items()) + ")")
        out.append((name, json.loads(json.dumps(args))))
    return "[" + ", ".join(texts_) + "]", out


@given(python_calls(), st.data())
def test_python_literals_come_back_as_python_reads_them(case: tuple[str, list[Any]], data: st.DataObject) -> None:
    body, expected = case
    doc = "a <calls>" + body + "</calls> b"
    cuts = sorted(data.draw(st.sets(st.integers(1, len(doc) - 1), max_size=10)))
    parts = [doc[i:j] for i, j in zip([0, *cuts], [*cuts, len(doc)])]
    got = run(parts, dialects=[PY])
    assert calls(got) == expected
    assert texts(got) == "a  b"
    assert not codes(got)
    assert "".join(e.raw for e in got) == doc


@given(python_calls())
def test_runners_agree_on_python_calls(case: tuple[str, list[Any]]) -> None:
    body, expected = case
    for size in (1, 7):
        assert args_of("<calls>" + body + "</calls>", PY, size) == expected


# ---------------------------------------------------------------- what Python writes
@pytest.mark.parametrize("size", [0, 1, 3])
def test_strings_escapes_and_prefixes(size: int) -> None:
    doc = ('<calls>[f(a="\\x41\\u00e9\\U0001F600\\N{BULLET}\\101\\0", b=\'it\\\'s\', c=r"\\d\\"", '
           'd="""x\n"y\'""", e=u"ok", f="a\\\nb", g="\\q", h=\'\', i="""""")]</calls>')
    assert args_of(doc, PY, size) == [("f", {
        "a": "Aé😀•A\x00", "b": "it's", "c": '\\d\\"', "d": "x\n\"y'", "e": "ok", "f": "ab", "g": "\\q", "h": "", "i": "",
    })]


@pytest.mark.parametrize("size", [0, 1])
def test_numbers(size: int) -> None:
    doc = "<calls>[f(a=1_000, b=0x1F, c=0o17, d=0b11, e=1e3, f=.5, g=5., h=-2.5E-3, i=+7, j=0, k=00)]</calls>"
    assert args_of(doc, PY, size) == [("f", {
        "a": 1000, "b": 31, "c": 15, "d": 3, "e": 1000.0, "f": 0.5, "g": 5.0, "h": -0.0025, "i": 7, "j": 0, "k": 0,
    })]


def test_a_surrogate_pair_is_its_character_and_a_lone_half_is_replaced() -> None:
    doc = '<calls>[f(a="\\ud83d\\ude00", b="x\\ud83dy", c="\\udc00")]</calls>'
    events = read(doc, PY, 1)
    assert calls(events) == [("f", {"a": "😀", "b": "x\ufffdy", "c": "\ufffd"})]
    assert codes(events) == ["lone_surrogate", "lone_surrogate"]
    strict = read(doc, PY, strict=True)
    assert calls(strict) == [] and codes(strict) == ["malformed_block"]


def test_words_and_json_words() -> None:
    assert args_of("<calls>[f(a=True, b=False, c=None)]</calls>") == [("f", {"a": True, "b": False, "c": None})]
    assert args_of("<calls>[f(a=true, b=false, c=null, d=True)]</calls>", PYJ) == [("f", {"a": True, "b": False, "c": None, "d": True})]
    events = read("<calls>[f(a=true), g(b=1)]</calls>", PY)
    assert calls(events) == [("g", {"b": 1})] and codes(events) == ["malformed_call"]


def test_a_list_argument_ends_nothing_bracket_depth_decides() -> None:
    """SGLang's pythonic stream cut at the first ``]``; depth decides here."""
    doc = '<calls>[f(days=[1, [2, "]"]], m={"k": ["]", ")"]}), g(s=")]")]</calls>'
    assert args_of(doc, PY, 1) == [("f", {"days": [1, [2, "]"]], "m": {"k": ["]", ")"]}}), ("g", {"s": ")]"})]


def test_spacing_and_trailing_commas() -> None:
    doc = "<calls>[ f ( a = 1 , ) ,\n g( ) , ]</calls>"
    assert args_of(doc, PY, 1) == [("f", {"a": 1}), ("g", {})]


# ---------------------------------------------------------------- refused calls
@pytest.mark.parametrize("bad", [
    "g(a=x)", "g(a=h(1))", "g(1)", 'g("pos")', "g(a=(1, 2))", "g(a={1, 2})", "a.b(c=1)", "g(a=1, a=2)",
    'g(a={"k": 1, "k": 2})', "g(a=1j)", "g(a=1e999)", "g(a=b'x')", "g(a=f'{x}')", "g(a=1 + 2)", "g(a=[1, x])",
    'g(a="\\x4")', "g(a=-)", "g(a={[1]: 2})", 'g(a=x, s=")")', "g(a=x, s='''a)\"b''')", 'g(a="\\N{NOPE}")',
    'g(a="\\N")', 'g(a=1, "k")', "g(a=1)(b=2)",
])
def test_a_call_that_is_no_literal_call_is_released_alone(bad: str) -> None:
    doc = f"<calls>[f(a=1), {bad}, h(b=[2])]</calls>"
    for size in (0, 1):
        events = read(doc, PY, size)
        assert calls(events) == [("f", {"a": 1}), ("h", {"b": [2]})], bad
        diags = [e for e in events if isinstance(e, callsieve.Diagnostic)]
        assert [d.code for d in diags] == ["malformed_call"], bad
        gone = [e for e in events if isinstance(e, callsieve.ToolCallAbandoned)]
        # its own span: on the ToolCallAbandoned when its start streamed, else on the Diagnostic
        assert (gone[0].raw if gone else diags[0].raw).strip(", ") == bad
        assert texts(events) == ""


def test_a_refused_call_whose_start_streamed_is_abandoned() -> None:
    events = read("<calls>[f(a=1, b=x)]</calls>", PY)
    assert calls(events) == [] and codes(events) == ["malformed_block"]  # no call stands: the block is text
    events = read("<calls>[f(a=1, b=x), g()]</calls>", PY)
    starts = [e.name for e in events if isinstance(e, callsieve.ToolCallStart)]
    assert starts == ["f", "g"]
    diag = next(e for e in events if isinstance(e, callsieve.Diagnostic))
    (gone,) = [e for e in events if isinstance(e, callsieve.ToolCallAbandoned)]
    assert "call 0 abandoned" in diag.message and gone.raw.endswith("f(a=1, b=x)") and gone.index == 0
    # the abandoned call's fragments never make a whole JSON object
    sent = "".join(e.arguments for e in events if isinstance(e, callsieve.ToolCallDelta) and e.index == 0)
    # (a refused call is sent nothing of what was withheld, the space after the key included)
    assert sent == '{"a": 1, "b":'
    assert events.index(gone) < events.index(diag)


@pytest.mark.parametrize("broken", ["[f(a=1) g()]", "[f(a=1)", "f(a=1)]", "[f(a=1),, g()]", "[f(a='x)]"])
def test_what_breaks_the_list_makes_the_block_text(broken: str) -> None:
    doc = f"<calls>{broken}</calls>"
    events = read(doc, PY)
    assert calls(events) == []
    assert set(codes(events)) <= {"malformed_block", "unterminated_block"} and codes(events)
    # f's start streamed: its markup rides on its ToolCallAbandoned, never in text (shown once)
    gone = [e for e in events if isinstance(e, callsieve.ToolCallAbandoned)]
    if broken.startswith("["):
        assert gone and gone[0].name == "f" and "f(a=" in gone[0].raw and "f(a=" not in texts(events)
    else:  # no call began: the block is text
        assert not gone and texts(events) == doc


def test_nesting_past_the_limit_refuses_the_call() -> None:
    deep = "[" * 250 + "]" * 250
    events = read(f"<calls>[f(a={deep}), g(b=1)]</calls>", PY)
    assert calls(events) == [("g", {"b": 1})] and codes(events) == ["malformed_call"]


# ---------------------------------------------------------------- tolerances
def test_what_lfm2s_repairs_read_is_tolerated_with_a_diagnostic() -> None:
    doc = '<calls>[f(month=07, from="x", s="a\nb")]</calls>'
    events = read(doc, PY, 1)
    assert calls(events) == [("f", {"month": 7, "from": "x", "s": "a\nb"})]
    assert sorted(codes(events)) == ["keyword_argument_name", "leading_zero_number", "raw_newline_in_string"]
    strict = read(doc, PY, strict=True)
    assert calls(strict) == [] and codes(strict) == ["malformed_block"]


# ---------------------------------------------------------------- call objects, one call per line
def test_call_objects_beside_python_calls() -> None:
    doc = ('<calls>[{"name": "f", "arguments": {"a": [1, true]}}, g(b=null), '
           "{'arguments': {'c': None}, 'name': 'h', 'id': 7}, {\"name\": \"k\"}]</calls>")
    assert args_of(doc, PYJ, 1) == [("f", {"a": [1, True]}), ("g", {"b": None}), ("h", {"c": None}), ("k", {})]


@pytest.mark.parametrize("bad", ['{"arguments": {}}', '{"name": 1}', '{"name": "x", "arguments": [1]}',
                                 '{"name": "x", "arguments": {}, "parameters": {}}', '{"name": x}'])
def test_a_call_object_that_is_no_call_is_released_alone(bad: str) -> None:
    events = read(f"<calls>[{bad}, g(b=1)]</calls>", PYJ, 1)
    assert calls(events) == [("g", {"b": 1})] and codes(events) == ["malformed_call"], bad


def test_one_python_call_per_line() -> None:
    doc = '<function_calls>\nget_weather(city="Paris")\nbad(x=y)\nget_time(tz="CET", dst=true)\n</function_calls>'
    for size in (0, 1, 4):
        events = read(doc, LINES, size)
        assert calls(events) == [("get_weather", {"city": "Paris"}), ("get_time", {"tz": "CET", "dst": True})]
        assert codes(events) == ["malformed_call"]


def test_python_calls_with_tools_type_nothing_but_report() -> None:
    tools = [{"type": "function", "function": {"name": "f", "parameters": {"properties": {"a": {"type": "string"}}}}}]
    events = read("<calls>[f(a=1), g()]</calls>", PY, tools=tools)
    assert calls(events) == [("f", {"a": 1}), ("g", {})]
    assert sorted(codes(events)) == ["type_mismatch", "unknown_tool"]


@pytest.mark.parametrize("mention", [" then say so.\n", " tags are markup. ", "s, and more: ", " block with the city.\n\n"])
def test_words_after_a_mentioned_opener_are_no_call_and_the_real_call_after_them_stands(mention: str) -> None:
    """Before its ``(`` a lone call opened no bracket, so there is no end to skip to: a
    name followed by anything but ``(`` breaks the body, the opener is text, and the
    real block after it is read (before, the refused "call" was skipped to the real
    call's ``)`` and swallowed it; found by test_mention's property on olmo3)."""
    real = "<function_calls>\n_()\n</function_calls>"
    for size in (0, 1):
        events = read("<function_calls>" + mention + real, LINES, size)
        assert calls(events) == [("_", {})]
        assert texts(events) == "<function_calls>" + mention
        assert codes(events) == ["malformed_block"]
