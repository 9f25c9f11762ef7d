"""Issue 23's findings, one example test each, whole and chunked, on both runners,
strict and lenient: a tolerance's evidence is its own markup (a construct read only by
a tolerance ends where a real opener of any enabled dialect begins; GLM's value opener
assumed left out is not swallowed when it is there), harmony's ``<|end|>`` ending a
recipient message, nested CDATA, a heredoc cut by a markup close, and the rest of a
block given up part-way (never text once its calls streamed, or under
``on_malformed="drop"``).

Every test also checks *shown once* (``assert_shown_once``): the raw of the events is
the input, each streamed call ends once, and none of its markup is text."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, strategies as st

import callsieve
from strategies import any_dialect, calls, chunks, codes, document, run, texts
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


# ---------------------------------------------------------------- a tolerance ends at a real opener
READ = {"path": "a"}
WRAPPERLESS = {
    # (dialect, the tolerated construct (a call without its block), the real block after it)
    "qwen3_coder": ("<function=write_file><parameter=path>notes.txt</parameter><parameter=content>draft\n",
                    "<tool_call>\n<function=read_file>\n<parameter=path>\na\n</parameter>\n</function>\n</tool_call>"),
    "xml": ('<invoke name="write_file"><parameter name="path">x</parameter> then ',
            '<tool_calls><invoke name="read_file"><parameter name="path">a</parameter></invoke></tool_calls>'),
    "dsml": ('<｜DSML｜invoke name="write_file"><｜DSML｜parameter name="path" string="true">x</｜DSML｜parameter> then ',
             '<｜DSML｜tool_calls><｜DSML｜invoke name="read_file"><｜DSML｜parameter name="path" string="true">a'
             '</｜DSML｜parameter></｜DSML｜invoke></｜DSML｜tool_calls>'),
}


@pytest.mark.parametrize("with_tools", [False, True])
@pytest.mark.parametrize("strict", [False, True])
@pytest.mark.parametrize("dialect", sorted(WRAPPERLESS))
def test_a_call_without_its_block_ends_where_a_real_block_begins(dialect: str, strict: bool, with_tools: bool) -> None:
    """Issue 23: ``missing_block_open`` read over the real block after it, and its close
    as evidence: a ``write_file`` made of prose ran and ``read_file`` was lost. The
    tolerated construct ends at the real opener; it is no call (text, or abandoned if
    it had streamed); the real block is its own call. Under strict nothing is
    tolerated: the same one call."""
    tolerated, real = WRAPPERLESS[dialect]
    doc = "To save it I would write " + tolerated + real + " ok"
    kw: dict[str, Any] = {"strict": strict, "tools": tools("read_file", "write_file") if with_tools else None}
    for events in each(doc, **kw):
        assert calls(events) == [("read_file", READ)]
        assert texts(events).startswith("To save it I would write ") and texts(events).endswith(" ok")
        assert "missing_block_open" not in codes(events)
        # the tolerated markup went back as text or on an abandoned call, whole
        assert tolerated in texts(events) + "".join(abandoned(events))


@pytest.mark.parametrize("dialect", sorted(WRAPPERLESS))
def test_a_call_without_its_block_still_stands_on_its_own_markup(dialect: str) -> None:
    """The rule takes nothing from the tolerance when its evidence is its own: the same
    construct closed, with the real block after it, is two calls."""
    doc = {
        "qwen3_coder": "I would <function=write_file>\n<parameter=path>\nn\n</parameter>\n</function>\n",
        "xml": '<invoke name="write_file"><parameter name="path">n</parameter></invoke></tool_calls>\n',  # (its evidence)
        "dsml": '<｜DSML｜invoke name="write_file"><｜DSML｜parameter name="path" string="true">n</｜DSML｜parameter>'
                '</｜DSML｜invoke>\n',
    }[dialect] + WRAPPERLESS[dialect][1]
    for events in each(doc, tools=tools("read_file", "write_file")):
        assert calls(events) == [("write_file", {"path": "n"}), ("read_file", READ)]
        assert codes(events) == ["missing_block_open"]
    for events in each(doc, tools=tools("read_file", "write_file"), strict=True):
        assert calls(events) == [("read_file", READ)]


@pytest.mark.parametrize("strict", [False, True])
def test_glm_value_opener_that_is_there_is_not_swallowed(strict: bool) -> None:
    """Issue 23: ``</arg_key>x<arg_value>v`` gave the value ``x<arg_value>v`` (the
    opener assumed left out, then read as data). Text stands between the key and the
    opener: the block is malformed, its call abandoned."""
    doc = "<tool_call>f<arg_key>k</arg_key>x<arg_value>v</arg_value></tool_call>"
    for events in each(doc, dialects=["glm45"], strict=strict):
        assert calls(events) == [] and texts(events) == ""
        assert codes(events) == ["malformed_block"]
        assert abandoned(events) == [doc]


def test_glm_value_opener_left_out_is_still_tolerated() -> None:
    doc = "<tool_call>f<arg_key>k</arg_key>v</arg_value></tool_call>"
    for events in each(doc, dialects=["glm45"]):
        assert calls(events) == [("f", {"k": "v"})] and codes(events) == ["missing_value_open"]
    for events in each(doc, dialects=["glm45"], strict=True):
        assert calls(events) == [] and codes(events) == ["malformed_block"]


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


# ---------------------------------------------------------------- the rest of a block given up part-way
BROKEN = 'A <tool_call>{"name": "f", "arguments": {"a": 1}} junk {"b": 2}}</tool_call> B'


@pytest.mark.parametrize("strict", [False, True])
@pytest.mark.parametrize("policy", ["text", "drop"])
def test_the_rest_of_a_block_given_up_is_never_text(policy: str, strict: bool) -> None:
    """Issue 23: with ``on_malformed="drop"`` (and for a block whose call streamed) what
    followed the failure up to the block's close reached Text. It is the block's markup:
    on its abandoned call, to the close."""
    for events in each(BROKEN, dialects=["hermes"], on_malformed=policy, strict=strict):
        assert calls(events) == [] and texts(events) == "A  B"
        assert abandoned(events) == [BROKEN[2:-2]]
        assert codes(events) == ["malformed_block"]


@pytest.mark.parametrize("strict", [False, True])
def test_a_block_given_up_whose_close_never_comes_ends_where_it_failed(strict: bool) -> None:
    """Without its close before a real opener (or the end), a block read on after
    failing ends where it failed: what followed is prose again, and the next block its
    own call."""
    doc = 'A <tool_call>{"name": "f", "arguments": {"a": 1} junk <tool_call>{"name": "g", "arguments": {}}</tool_call> B'
    for events in each(doc, dialects=["hermes"], strict=strict):
        assert calls(events) == [("g", {})] and texts(events) == "A junk  B"
        assert abandoned(events) == ['<tool_call>{"name": "f", "arguments": {"a": 1} ']
    cut = 'A <tool_call>{"name": "f", "arguments": {"a": 1} junk and more'
    for events in each(cut, dialects=["hermes"], strict=strict):
        assert calls(events) == [] and texts(events) == "A junk and more"
        assert codes(events) == ["malformed_block"]


# ---------------------------------------------------------------- the strict-vs-lenient property
def spans(events: list[callsieve.Event]) -> list[tuple[str, int, int, bool]]:
    """Each call's (name, start, end, completed): the span of the input its
    ``ToolCall``'s (or ``ToolCallAbandoned``'s) raw holds (the events' raws, in order,
    are the input), without the whitespace at its ends: the spaces between two calls
    of a block are no one's markup (a block's raw is cut at each call's open, and the
    spaces before a refused call's open go to the call before it)."""
    at, out = 0, []
    for e in events:
        if isinstance(e, (callsieve.ToolCall, callsieve.ToolCallAbandoned)):
            lead = len(e.raw) - len(e.raw.lstrip())
            out.append((e.name, at + lead, at + lead + len(e.raw.strip()), isinstance(e, callsieve.ToolCall)))
        at += len(e.raw)
    return out


@st.composite
def broken_documents(draw: st.DrawFn) -> tuple[str, list[str] | None]:
    """One or two well-formed documents (of any dialects), then a few characters cut
    out or a marker's worth of junk put in, anywhere: markup a tolerance may read."""
    ds = draw(st.lists(any_dialect, min_size=1, max_size=2))
    doc = "".join(draw(document(d))[0] + draw(st.sampled_from(["", " ", "\n\n", " so "])) for d in ds)
    for _ in range(draw(st.integers(1, 2))):
        k = draw(st.integers(0, len(doc)))
        if draw(st.booleans()):
            doc = doc[:k] + doc[k + draw(st.integers(1, 14)) :]
        else:
            doc = doc[:k] + draw(st.sampled_from(["x", "</", "<", "\n", "]]>", "<tool_call>", "</tool_call>"])) + doc[k:]
    return doc, draw(st.sampled_from([list(dict.fromkeys(d.name for d in ds)), None]))


# What this property found, each fixed (issue 23): a tolerance that read on past its own
# block and took a real call after it. Lenient yields every call strict yields.
R_BLOCK = '<tool_calls><invoke name="r"><parameter name="p">a</parameter></invoke></tool_calls>'
KIMI_OPEN = 'I ran <|tool_call_begin|>functions.f:0<|tool_call_argument_begin|>{"a": "x then '
KIMI_REAL = ("<|tool_calls_section_begin|><|tool_call_begin|>functions.g:1<|tool_call_argument_begin|>{}<|tool_call_end|>"
             "<|tool_calls_section_end|>")
LENIENT_LOSES = {
    # GLM's missing_value_open: the value begun after </arg_key> ran past </tool_call>
    # and took the next block: it ends at the real opener (the block is malformed)
    "glm_value_open_missing": ('<tool_call>_\n<arg_key>_</arg_key>/arg_value>\n</tool_call><tool_call>_\n</tool_call>',
                               ["glm45", "dsml"], [("_", {})]),
    # a raw newline in a JSON key read as if escaped (raw_control_character): the call
    # object then had no name, and its block (granite_20b_fc has no close) took the next
    # <function_call>: a nameless call object ends its block there
    "granite_nameless_call": ('<function_call> {"\nname": "_", "arguments": {}} <function_call> {"name": "_", "arguments": {}}',
                              None, [("_", {})]),
    # (the same without the tolerance: a call object with no name, strict or lenient)
    "granite_call_object_without_name": ('<function_call> {"nam": "_", "arguments": {}} <function_call> '
                                         '{"name": "_", "arguments": {}}', None, [("_", {})]),
    # nested_cdata with no outer close before the end: the section ends at the first ]]>
    "nested_cdata_unclosed": ('<tool_calls><invoke name="w"><parameter name="c"><![CDATA[<![CDATA[x]]></parameter></invoke>'
                              '</tool_calls> ' + R_BLOCK, ["xml"], [("w", {"c": "<![CDATA[x"}), ("r", {"p": "a"})]),
    # nested_cdata whose outer close comes after the value's close and a real block
    "nested_cdata_past_its_value": ('<tool_calls><invoke name="w"><parameter name="c"><![CDATA[<![CDATA[x]]></parameter>'
                                    '</invoke></tool_calls> ' + R_BLOCK + " ]]> end", ["xml"],
                                    [("w", {"c": "<![CDATA[x"}), ("r", {"p": "a"})]),
    # a Kimi call with no section whose JSON string is left open, before a real section
    "kimi_bare_string_open": (KIMI_OPEN + KIMI_REAL + " ok", ["kimi_k2"], [("g", {})]),
    # ... and one whose string closes after the real section
    "kimi_bare_string_closed": (KIMI_OPEN + KIMI_REAL + ' ok"}<|tool_call_end|> end', ["kimi_k2"], [("g", {})]),
    # a gateway XML invoke without its block, a real block inside its CDATA section
    "bare_invoke_cdata": ('So <invoke name="w"><parameter name="c"><![CDATA[x ' + R_BLOCK + " ]]></parameter></invoke>"
                          "</tool_calls> end", ["xml"], [("r", {"p": "a"})]),
}


@pytest.mark.parametrize("strict", [False, True])
@pytest.mark.parametrize("case", sorted(LENIENT_LOSES))
def test_lenient_keeps_the_real_call_strict_finds(case: str, strict: bool) -> None:
    """Each loss the strict-vs-lenient property found: the tolerated construct ends
    where its own markup does (or at a real opener), so the real call after it is
    read, lenient or strict, whole or chunked, on both runners."""
    doc, dialects, expected = LENIENT_LOSES[case]
    for events in each(doc, dialects=dialects, strict=strict):
        assert calls(events) == expected
        completed = [(n, a) for n, a, _b, done in spans(events) if done]
        assert [n for n, _a in completed] == [n for n, _a in expected]


def test_a_nesting_with_its_own_evidence_still_holds() -> None:
    """Withdrawn only without evidence of its own: a nested section whose outer close
    comes before the value's close is read as before, a real block after it its own."""
    doc = NESTED.replace("</tool_calls>", "</tool_calls> ") + R_BLOCK
    for events in each(doc, dialects=["xml"]):
        assert calls(events) == [("w", {"c": "<x><![CDATA[in]]></x>"}), ("r", {"p": "a"})]
        assert codes(events) == ["nested_cdata"]


def test_a_nesting_withdrawn_reads_no_nesting_after_it() -> None:
    """Once withdrawn, what followed is read again once, as XML reads it: a later
    ``<![CDATA[`` in the block nests nothing (each character is read again at most once)."""
    doc = ('<tool_calls><invoke name="w"><parameter name="c"><![CDATA[<![CDATA[x]]></parameter>'
           '<parameter name="d"><![CDATA[<![CDATA[y]]>z]]></parameter></invoke></tool_calls>')
    for events in each(doc, dialects=["xml"]):
        assert calls(events) == [("w", {"c": "<![CDATA[x", "d": "<![CDATA[yz]]>"})] and codes(events) == []


@given(st.data())
def test_lenient_yields_every_call_strict_yields_and_only_calls_of_their_own_markup(data: st.DataObject) -> None:
    """Issue 23, the strict-vs-lenient property: on any document (here: well-formed ones
    broken anywhere) the lenient sieve yields every call the strict one yields (same
    name, same place; its arguments differ only where a tolerance says so), never
    fewer; and a call only the lenient one yields stands on markup of its own (the
    rule): it is a call the strict sieve reads from its block's markup alone (what
    came before may change how strict reads it: a backtick in prose a tolerated call
    took as its value), or a tolerance said what it assumed inside its own blocks."""
    doc, dialects = data.draw(broken_documents())
    chunked = data.draw(chunks(doc))
    strict = run(chunked, dialects=dialects, strict=True)
    lenient = run(chunked, dialects=dialects)
    assert_shown_once(lenient, doc)
    assert_shown_once(strict, doc)
    s_calls = [(n, a, b) for n, a, b, done in spans(strict) if done]
    l_calls = [(n, a, b) for n, a, b, done in spans(lenient) if done]
    tolerated = [e for e in lenient if isinstance(e, callsieve.Diagnostic) and e.severity == "tolerated"]
    by_start = {(n, a): (n, a, args) for (n, a, _b), (_n, args) in zip(l_calls, calls(lenient))}
    for (n, a, _b) in l_calls:
        # (a stray prefix a tolerance read as markup, a doubled `<`, said where it stands:
        # the call begins a character early; a Prefix is one character)
        if any(d.offset == a for d in tolerated):
            by_start.setdefault((n, a + 1), by_start[(n, a)])
    matched = set()
    for (name, start, _end), (_name, args) in zip(s_calls, calls(strict)):
        assert (name, start) in by_start, (name, start, l_calls)
        n, a, l_args = by_start[(name, start)]
        assert l_args == args or tolerated
        matched.add((n, a))
    blocks = call_runs(lenient)
    for (name, start, end), (_name, args) in zip(l_calls, calls(lenient)):
        if (name, start) in matched:
            continue
        first, last = next((a, b) for a, b in blocks if a <= start < b)
        if (name, args) in calls(run([doc[first:last]], dialects=dialects, strict=True)):
            continue  # the same call, its block read alone by the format
        assert any(first <= d.offset < last for d in tolerated), (name, start, end, s_calls, tolerated)


def test_a_call_only_lenient_yields_may_be_one_the_format_reads_alone() -> None:
    """What the property found at the thorough profile, which the rule allows: strict
    reads a value on past a misspelt close (``<x/parameter>``) and over the next block,
    to that block's ``</parameter>``; lenient ends the value at ``</function>``
    (``implied_param_close``), so the next block is a call of its own, the very call
    strict reads from that block's markup alone."""
    third = "<seed:tool_call>\n<function=_>\n<parameter=_>\n\n</parameter>\n</function>\n</seed:tool_call>"
    doc = ("<seed:tool_call>\n<function=_>\n<parameter=_>\n\n<x/parameter>\n</function>\n</seed:tool_call>" + third
           + "<seed:tool_call>\n<function=_>\n</function>\n</seed:tool_call>")
    strict = each(doc, dialects=["seed_oss"], strict=True)[0]
    assert [n for n, _a, _b, done in spans(strict) if done] == ["_", "_"]
    for events in each(doc, dialects=["seed_oss"]):
        assert calls(events) == [("_", {"_": "\n<x/parameter>"}), ("_", {"_": ""}), ("_", {})]
        assert codes(events) == ["implied_param_close"]
        assert [e.raw for e in events if isinstance(e, callsieve.ToolCall)][1] == third
    assert calls(run([third], dialects=["seed_oss"], strict=True)) == [("_", {"_": ""})]


def call_runs(events: list[callsieve.Event]) -> list[tuple[int, int]]:
    """The spans of the input that runs of calls (``ToolCall``, ``ToolCallAbandoned``)
    with nothing else read between them hold: a block's calls (or adjacent blocks')."""
    at, out = 0, []
    last_end = -1
    for e in events:
        if isinstance(e, (callsieve.ToolCall, callsieve.ToolCallAbandoned)):
            if out and last_end == at:
                out[-1] = (out[-1][0], at + len(e.raw))
            else:
                out.append((at, at + len(e.raw)))
            last_end = at + len(e.raw)
        at += len(e.raw)
    return out


@pytest.mark.parametrize("mid", ["</function>\n", "</function> x\n"])
def test_an_abandoned_block_stands_on_the_documents_lines_as_a_call_does(mid: str) -> None:
    """A block whose call streamed and was then abandoned is read past to its close
    (``block_rest``); the Markdown after it is read as after a call: here the block at
    column 0 ends the list, so the indented ``` opens a fence and the markup in it is
    code (CommonMark's reading; the oracle in test_commonmark found this)."""
    doc = ("* `a`\n\n<tool_call>\n<function=probe2>\n" + mid + "</tool_call>\n  ```\n\n"
           '<tool_calls><invoke name="probe3"></invoke></tool_calls>')
    for k in (len(doc), 1, 3):
        events = run([doc[i:i + k] for i in range(0, len(doc), k)])
        assert "probe3" not in [c for c, _a in calls(events)]
        assert texts(events).endswith('<tool_calls><invoke name="probe3"></invoke></tool_calls>')
