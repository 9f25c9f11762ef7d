"""The compiled runner does exactly what the reference runner (the transitions machine) does.

Inputs are built from the grammar's own literals (every marker example, every bar
variant, think tags, CDATA, fences) so that both runners visit every state; each runner
gets its own random chunking, so bulk scans, held prefixes and pushback are all compared.
"""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings, strategies as st

import callsieve
from callsieve.events import merged
from strategies import REASONING_POLICIES, prefills, any_dialect, chunks, document, run, soup

TOOLS = [
    {"type": "function", "function": {"name": "f", "parameters": {"properties": {
        "k": {"type": "integer"}, "s": {"type": "string"}, "o": {"anyOf": [{"type": "object"}, {"type": "null"}]},
    }}}},
    {"type": "function", "function": {"name": "write", "parameters": {"properties": {"content": {"type": "string"}}}}},
]


def both(doc: str, data: st.DataObject, **kw: Any) -> None:
    compiled = run(data.draw(chunks(doc)), **kw)
    reference = run(data.draw(chunks(doc)), runner="reference", **kw)
    assert merged(compiled) == merged(reference)
    raw = "".join(e.raw for e in compiled)
    if kw.get("on_malformed") == "raise" and compiled and isinstance(compiled[-1], callsieve.Diagnostic):
        assert doc.startswith(raw)  # the stream stopped at the block that raised
    else:
        assert raw == doc


@given(st.data())
def test_runners_agree_on_grammar_soup(data: st.DataObject) -> None:
    both(data.draw(soup()), data)


@given(st.data())
def test_runners_agree_per_dialect_with_tools_and_policies(data: st.DataObject) -> None:
    d = data.draw(any_dialect)
    doc = data.draw(soup())
    both(
        doc,
        data,
        dialects=[d.name],
        tools=data.draw(st.sampled_from([None, TOOLS])),
        unknown_tool=data.draw(st.sampled_from(["call", "text", "drop"])),
        on_malformed=data.draw(st.sampled_from(["text", "drop", "raise"])),
        start_in_reasoning=data.draw(st.booleans()) and prefills([d.name]),
        calls_in_reasoning=data.draw(REASONING_POLICIES),
        max_block_chars=data.draw(st.sampled_from([1 << 20, 30, 1, 7, 64])),
    )


@given(st.data())
def test_runners_agree_on_overflowing_documents(data: st.DataObject) -> None:
    """Blocks past max_block_chars spill (issue 12, finding 2): both runners read the
    rest of the block the same way, wherever the limit falls, under every policy."""
    d = data.draw(any_dialect)
    doc, _ = data.draw(document(d))
    noise = data.draw(soup(4))
    at = data.draw(st.integers(0, len(doc)))
    doc = doc[:at] + noise + doc[at:]
    both(
        doc,
        data,
        dialects=data.draw(st.sampled_from([[d.name], None])),
        on_malformed=data.draw(st.sampled_from(["text", "drop", "raise"])),
        max_block_chars=data.draw(st.integers(1, max(1, len(doc)))),
    )


@given(st.data())
def test_runners_agree_on_documents_with_noise(data: st.DataObject) -> None:
    d = data.draw(any_dialect)
    doc, _ = data.draw(document(d))
    noise = data.draw(soup(6))
    at = data.draw(st.integers(0, len(doc)))
    both(doc[:at] + noise + doc[at:], data)


@given(st.data())
def test_runners_agree_on_bracket_runs_in_cdata(data: st.DataObject) -> None:
    """``]`` runs after ``]]`` are taken whole by the compiled runner (one run form):
    the value keeps every bracket, whatever the run lengths and the chunking."""
    value = data.draw(st.text("]x>", max_size=40).filter(lambda v: "]]>" not in v and not v.endswith("]")))
    doc = f'<tool_calls>\n<invoke name="w">\n<parameter name="c"><![CDATA[{value}]]></parameter>\n</invoke>\n</tool_calls>'
    both(doc, data, dialects=["xml"])
    calls = [e for e in run(data.draw(chunks(doc)), dialects=["xml"]) if isinstance(e, callsieve.ToolCall)]
    assert [c.arguments for c in calls] == [{"c": value}]


def test_reference_runners_share_one_machine_and_each_keeps_its_own_stream() -> None:
    """The reference runners of one composition drive one ``transitions`` machine (built
    once: callsieve.reference); interleaved streams through it end as each does alone,
    and a trace instruments a machine of its own, not the shared one."""
    from callsieve.tools.trace import trace

    docs = ['a <tool_call>{"name": "f", "arguments": {"k": 1}}</tool_call> b',
            "<think>x</think><tool_calls>\n<invoke name=\"w\">\n<parameter name=\"c\">1</parameter>\n</invoke>\n</tool_calls>"]
    alone = [merged(run([d], runner="reference")) for d in docs]
    sieves = [callsieve.Sieve(runner="reference", id_prefix="call_") for _ in docs]
    assert sieves[0].runner.machine is sieves[1].runner.machine
    out: list[list[callsieve.Event]] = [[], []]
    for i in range(max(map(len, docs))):
        for k, d in enumerate(docs):
            out[k] += sieves[k].feed(d[i : i + 1])
    assert [merged(o + s.close()) for o, s in zip(out, sieves)] == alone
    assert alone[0] == merged(run([docs[0]]))  # and the compiled runner agrees
    assert any(isinstance(e, callsieve.ToolCall) for e in alone[0]) and any(isinstance(e, callsieve.ToolCall) for e in alone[1])

    t = trace(docs[0])
    assert t.fires
    shared = callsieve.Sieve(runner="reference").runner.machine
    assert all(tr.execute.__name__ != "traced" for ev in shared.events.values()
               for trs in ev.transitions.values() for tr in trs)


#: id(declaration) -> (it, the machine ``transitions``' own classes build from it, with
#: no model): built once per declaration, as the reference runner's is (a machine of
#: every dialect takes a few tenths of a second to build).
_LIBRARY_MACHINES: dict[int, tuple[object, Any]] = {}


def _library_read(parts: list[str], kw: dict[str, Any]) -> list[callsieve.Event]:
    """``parts`` read by a reference runner whose machine is built from ``transitions``'
    own classes (every row tried in turn, as the library does)."""
    from callsieve.machine import build_machine

    s = callsieve.Sieve(runner="reference", id_prefix="call_", **kw)
    decl = s.machine.decl
    built = _LIBRARY_MACHINES.get(id(decl))
    if built is None or built[0] is not decl:
        built = _LIBRARY_MACHINES[id(decl)] = (decl, build_machine(decl, None, library_classes=True))
    s.runner.machine = built[1]
    s.runner.machine.set_state(s.state, model=s.runner.ctx)
    out: list[callsieve.Event] = []
    for p in parts:
        out += s.feed(p)
    return out + s.close()


@settings(max_examples=max(10, settings().max_examples // 5))
@given(st.data())
def test_the_reference_runners_dispatch_is_the_librarys(data: st.DataObject) -> None:
    """The reference runner's machine asks ``hit_key`` once for a run of ``hit:`` rows
    and tries only that key's rows (callsieve.machine, ``ReferenceEvent``); the library's
    own machine tries every row in order. Both read every document alike, with one
    dialect or all (where ``maybe_tag`` has thousands of rows), strict or not.
    (A fifth of the examples: the library's machine with every dialect tries some 2,400
    rows for each tag that dies.)"""
    d = data.draw(any_dialect)
    doc = data.draw(st.one_of(soup(), document(d).map(lambda t: t[0])))
    kw: dict[str, Any] = dict(dialects=data.draw(st.sampled_from([[d.name], None])), strict=data.draw(st.booleans()))
    parts = data.draw(chunks(doc))
    assert merged(_library_read(parts, kw)) == merged(run(parts, runner="reference", **kw))


@st.composite
def hostile_pieces(draw: st.DrawFn) -> tuple[str, str]:
    """A piece of one of the bench's hostile inputs (``HOSTILE``: the inputs the state
    runs and run forms were built for), from its start or from anywhere, with a few of
    its own characters changed or put in; and the input's name."""
    from callsieve.tools.bench_workloads import HOSTILE

    h = draw(st.sampled_from(HOSTILE))
    text = h.build(draw(st.integers(40, 320)), draw(st.integers(0, 3)))
    b = draw(st.integers(0, len(text)))
    a = 0 if draw(st.booleans()) else draw(st.integers(max(0, b - 300), b))
    piece = text[a:b][:300]
    alphabet = sorted(set(text)) + ["\n", " ", "<", "x"]
    for _ in range(draw(st.integers(0, 3))):
        at = draw(st.integers(0, len(piece)))
        cut = draw(st.integers(0, 1))
        piece = piece[:at] + draw(st.sampled_from(alphabet)) + piece[at + cut :]
    return h.name, piece


@given(st.data())
def test_runners_agree_on_pieces_of_the_hostile_inputs(data: st.DataObject) -> None:
    """The state runs and run forms (CDATA spans, tick runs, refused closes, JSON
    bracket runs, ...) read the hostile inputs, and pieces of them cut anywhere and
    changed here and there, as the reference runner steps them, wherever a block
    limit falls."""
    name, doc = data.draw(hostile_pieces())
    both(doc, data, max_block_chars=data.draw(st.sampled_from([1 << 20, 1 << 20, 16, 64, 200])),
         on_malformed=data.draw(st.sampled_from(["text", "drop"])))


#: Pieces of prose that keep the prose region's runs busy: backtick and tilde runs of
#: every length, at line starts (indented, in list items) and inside lines, fences
#: with and without info strings, blank lines, tabs, markup.
PROSE_PIECES = ["`", "``", "```", "````", "~", "~~~", "~~~~", " ", "  ", "    ", "\t", "\n", "\n\n", "a", "\\",
                "```py\n", "~~~ x\n", "- ", "* ", "1. ", "  - ```\n", "> ", "# ", "---\n", "<tool_call>", "<b>",
                # a whole call: whether it is read as one shows whether the runs left
                # the machine in code or in prose
                "<tool_call>\n<function=f>\n<parameter=a>\nv\n</parameter>\n</function>\n</tool_call>"]


#: Lines that open, close or fail to close fences (every length, indentation and list
#: item), code, and a whole call: after each line, whether the call is read as one
#: says which context the runs left the machine in.
FENCE_LINES = ["```", "````", "~~~", "~~~~", "```py", "``` x", "```x`", "```  ", "``` `", " ```", "   ```", "    ```",
               "  ```", "  ~~~", "- ```", "- ~~~", "1. ```", "  - ```", "```~", "~~~```", "code", "", "  code", "- item",
               "`a`", "``b``", "`open", "\t```",
               "<tool_call>\n<function=f>\n<parameter=a>\nv\n</parameter>\n</function>\n</tool_call>"]


@given(st.data())
def test_runners_agree_on_fence_lines(data: st.DataObject) -> None:
    """The prose state runs on documents of fence lines: opening, closing (exactly as
    long, longer, indented, with blanks or more after), and lines that close nothing,
    with calls between them."""
    lines = st.sampled_from(FENCE_LINES)
    opener = st.sampled_from([ln for ln in FENCE_LINES if ln.lstrip(" -1.\t")[:3] in ("```", "~~~")])
    # A fence, lines in it, a line that may close it, then a call: read as a call
    # exactly when the fence was closed before it.
    section = st.tuples(opener, st.lists(lines, max_size=3), lines, st.just(FENCE_LINES[-1]))
    doc = "\n".join(ln for sec in data.draw(st.lists(section, min_size=1, max_size=3))
                    for ln in (sec[0], *sec[1], sec[2], sec[3]))
    both(doc, data, dialects=["qwen3_coder"])


@given(st.data())
def test_runners_agree_on_tick_runs_and_fences(data: st.DataObject) -> None:
    """The prose state runs (a backtick or tilde run read whole; a fence's text up to
    the next line that could close it, or end its list item) read as stepping does."""
    doc = "".join(data.draw(st.lists(st.sampled_from(PROSE_PIECES), max_size=60)))
    both(doc, data, dialects=data.draw(st.sampled_from([["qwen3_coder"], None])))


@given(st.data())
def test_runners_agree_on_json_values_of_brackets_strings_and_markup(data: st.DataObject) -> None:
    """The JSON value state runs (brackets counted in runs, a start character read as
    data inside brackets, strings and their escapes taken whole) read as stepping does,
    wherever the block's limit falls."""
    pieces = ["[", "]", "{", "}", '"', '\\"', "\\\\", "\\", "<", "x", " ", ",", ":", "1", f"</{DSML_BAR}parameter>",
              f"</{DSML_BAR}parameter>\n</{DSML_BAR}invoke>"]
    value = "".join(data.draw(st.lists(st.sampled_from(pieces), max_size=30)))
    doc = (f"<{DSML_BAR}tool_calls>\n<{DSML_BAR}invoke name=\"f\">\n<{DSML_BAR}parameter name=\"k\" string=\"false\">"
           f"{value}</{DSML_BAR}parameter>\n</{DSML_BAR}invoke>\n</{DSML_BAR}tool_calls>")
    both(doc, data, dialects=["dsml"], max_block_chars=data.draw(st.sampled_from([1 << 20, 40, 90, 130])))


DSML_BAR = "\uff5cDSML\uff5c"


@given(st.data())
def test_runners_agree_on_closes_refused_again_and_again(data: st.DataObject) -> None:
    """The ``after_close`` state run (a close followed by what starts no marker FOLLOW
    allows goes back to the value at once, the tag not held) reads as stepping does:
    values of parameter closes followed by whitespace and text, markup, partial
    markers, a real next parameter, wherever the block's limit falls."""
    d = data.draw(st.sampled_from(["qwen3_coder", "xml", "dsml"]))
    close = {"qwen3_coder": "</parameter>", "xml": "</parameter>", "dsml": f"</{DSML_BAR}parameter>"}[d]
    after = ["\n", " ", "\n\n", "x", "<", "</", "<p", "</par", close, "<parameter=b>", "</function>", "</invoke>",
             '<parameter name="b">', f"<{DSML_BAR}parameter", "<tool_call>", "]]>", "\t"]
    value = "".join(data.draw(st.lists(st.sampled_from([close] + after), max_size=25)))
    if d == "qwen3_coder":
        doc = f"<tool_call>\n<function=f>\n<parameter=a>\n{value}\n</parameter>\n</function>\n</tool_call>"
    elif d == "xml":
        doc = f'<tool_calls>\n<invoke name="f">\n<parameter name="a">{value}</parameter>\n</invoke>\n</tool_calls>'
    else:
        doc = (f"<{DSML_BAR}tool_calls>\n<{DSML_BAR}invoke name=\"f\">\n<{DSML_BAR}parameter name=\"a\" string=\"true\">"
               f"{value}</{DSML_BAR}parameter>\n</{DSML_BAR}invoke>\n</{DSML_BAR}tool_calls>")
    both(doc, data, dialects=data.draw(st.sampled_from([[d], None])),
         max_block_chars=data.draw(st.sampled_from([1 << 20, 50, 120, 300])))


#: Pieces of lines holding inline code: spans closed on their line (runs of one to three
#: backticks, runs of another length inside, markup and a call inside), spans left open
#: across a line end or a blank line, escaped and indented runs, list items, fences.
INLINE_PIECES = ["`", "``", "```", "a", " ", "    ", "\\", "\n", "\n\n", "- ", "~", "x`y`z", "`<tool_call>`",
                 "``a`b``", "`a``b`", "\\`q`", "<b>", " < ",
                 # spans, then prose and a stop on the same line: a plain "<", a marker
                 "`s` a < b `t` c", "`s` and <tool_call>\n<function=f>\n<parameter=a>\nv\n</parameter>\n</function>\n</tool_call>",
                 "<tool_call>\n<function=f>\n<parameter=a>\nv\n</parameter>\n</function>\n</tool_call>"]


@given(st.data())
def test_runners_agree_on_inline_code_read_on_its_line(data: st.DataObject) -> None:
    """Inline code opened and closed on one line is read by the text state's run
    (``ProseModel._inline_code``, issue 27) as the steps read it; fed whole half the
    time, so that the line and its span are in one chunk."""
    doc = "".join(data.draw(st.lists(st.sampled_from(INLINE_PIECES), max_size=40)))
    doc += " more" * data.draw(st.sampled_from([0, 60]))  # (stops before the chunk's last MAX_TAG_CHARS)
    dialects = data.draw(st.sampled_from([["qwen3_coder"], None]))
    reference = run([doc], runner="reference", dialects=dialects)
    compiled = run([doc] if data.draw(st.booleans()) else data.draw(chunks(doc)), dialects=dialects)
    assert merged(compiled) == merged(reference)
    assert "".join(e.raw for e in compiled) == doc


@given(st.data())
def test_runners_agree_on_lines_of_spans_prose_and_stops(data: st.DataObject) -> None:
    """Lines of text, spans and stops (a plain "<", a tilde, markup, a call), each line
    after a line end in the chunk, so the text state's run reads span after span and
    hands over at the stop after the last (``_inline_code``), with or without prose
    after them past ``MAX_TAG_CHARS``."""
    piece = st.sampled_from(["a", " ", "`s`", "``t``", "`u``", " < ", "~", "\\", "<b>", INLINE_PIECES[-1]])
    lines = data.draw(st.lists(st.lists(piece, max_size=8).map("".join), min_size=1, max_size=6))
    # (and prose after them: a stop within MAX_TAG_CHARS of the chunk's end is the
    # runner's scan's to decide)
    doc = "p\n" + "\n".join(lines) + "\nand " * data.draw(st.sampled_from([0, 80]))
    dialects = data.draw(st.sampled_from([["qwen3_coder"], None]))
    reference = run([doc], runner="reference", dialects=dialects)
    compiled = run([doc] if data.draw(st.booleans()) else data.draw(chunks(doc)), dialects=dialects)
    assert merged(compiled) == merged(reference)
    assert "".join(e.raw for e in compiled) == doc


#: Lines of fenced code with markup in it (issue 22's ``markup_in_code``, read inside the
#: fence's run since issue 27): openers of several dialects, a message's end, a word
#: marker, a tag that is none, an opener cut short; fence lines of both characters,
#: longer and indented closers, runs that close nothing, info strings (with markup),
#: list items and block quotes; a whole call, read as one only outside code.
MARKUP_FENCE_LINES = ["```", "````", "~~~", "~~~~", "```py", "~~~ <tool_call>", "```<tool_call>", "``` x",
                      "   ```", "    ```", "  ~~~", "```  ", "``` y", "~~~~~", "- ```", "- ~~~", "1. ```", "  - ~~~",
                      "> ```", "> ~~~", "> code <tool_call>", "\t```", "",
                      "code <tool_call>", "<tool_call>", "a <tool_call> b <tool_calls> c", "<|end|>",
                      "x <|start|>assistant", "functools", "a functools b", "afunctools", "<b>", "<tool_call",
                      "  <tool_call>  ", "<minimax:tool_call> <|tool_call_start|>", "[TOOL_CALLS]",
                      "<tool_call>\n<function=f>\n<parameter=a>\nv\n</parameter>\n</function>\n</tool_call>"]


@given(st.data())
def test_runners_agree_on_markup_in_fences(data: st.DataObject) -> None:
    """Markup in fenced code is text, reported (``markup_in_code``): the fence's run
    reads a whole opener on its lines itself (``ProseModel._fence_opener_end``) and
    searches the chunk for markup once for all its lines (``_code_stop``), as the
    steps read them: fences closed or not (the document may end in one), by a longer
    or indented run or by nothing, of backticks and tildes, with info strings, in list
    items and block quotes; fed whole, or in pieces of 1, 2, 3 or 7 characters, or at
    random, with prose after it or not (a marker within MAX_TAG_CHARS of the chunk's end
    is the steps' to decide)."""
    lines = data.draw(st.lists(st.sampled_from(MARKUP_FENCE_LINES), min_size=1, max_size=14))
    doc = "\n".join(lines) + data.draw(st.sampled_from(["", "\n", "\nand after" * 40]))
    dialects = data.draw(st.sampled_from([None, ["qwen3_coder"], ["harmony", "hermes"]]))
    how = data.draw(st.sampled_from(["whole", 1, 2, 3, 7, "random"]))
    if how == "whole":
        pieces = [doc]
    elif how == "random":
        pieces = data.draw(chunks(doc))
    else:
        pieces = [doc[k : k + how] for k in range(0, len(doc), how)]
    reference = run([doc], runner="reference", dialects=dialects)
    compiled = run(pieces, dialects=dialects)
    assert merged(compiled) == merged(reference)
    assert "".join(e.raw for e in compiled) == doc


@given(st.data())
def test_a_step_decision_tree_fires_the_rows_first_passing_row_asking_each_guard_once(data: st.DataObject) -> None:
    """``_step`` walks a list of rows as a decision tree (issue 27): it must fire the row
    the rows would (the first whose guards all pass), ask no guard twice, and ask no
    guard the rows would not have asked. The oracles: the rows walked as written (the
    row fired, what may be asked), and the rows walked with each answer remembered
    (what is asked, in order)."""
    from callsieve.compiler import DECISION_MAX_NODES, _decision

    names = "abcde"
    values = data.draw(st.fixed_dictionaries({n: st.booleans() for n in names}))
    asked: list[str] = []

    def guard(name: str) -> Any:
        def g(ctx: object, ch: str) -> bool:
            asked.append(name)
            return values[name]
        return g

    guards = {n: guard(n) for n in names}
    shape = data.draw(st.lists(st.tuples(st.lists(st.sampled_from(names), max_size=3, unique=True),
                                         st.sampled_from(["s1", "s2", "s3"])), min_size=1, max_size=8))
    rows = tuple((tuple((guards[n], True) for n in gs), (), dest) for gs, dest in shape)
    # the rows, as ``_step`` walked them before: the guards each row asks, in order
    expected_dest = ""
    expected_asked: list[str] = []
    for gs, dest in shape:
        passed = True
        for n in gs:
            expected_asked.append(n)
            if not values[n]:
                passed = False
                break
        if passed:
            expected_dest = dest
            break
    node = _decision(rows)
    g = node[0]
    while g is not None:
        node = node[1] if g(None, "x") == True else node[2]  # noqa: E712
        g = node[0]
    assert node[2] == expected_dest
    assert len(asked) == len(set(asked))  # each guard at most once
    assert set(asked) <= set(expected_asked)  # nothing the rows would not have asked
    # In order: the rows walked with each answer remembered. A row holding a guard
    # already refused is passed over without asking its other guards, so a guard may
    # be asked later than as written (found by this test: rows [d], [a, d], [b, a]
    # with only b passing ask d, a, b as written, and d, b, a remembering).
    remembered: dict[str, bool] = {}
    in_order: list[str] = []
    for gs, _dest in shape:
        if any(remembered.get(n) is False for n in gs):
            continue
        passed = True
        for n in gs:
            if n not in remembered:
                remembered[n] = values[n]
                in_order.append(n)
            if not remembered[n]:
                passed = False
                break
        if passed:
            break
    assert asked == in_order
    assert DECISION_MAX_NODES >= 8  # (a list this small is always a tree, never chained)


def test_a_character_that_begins_no_marker_in_its_value_is_the_values_at_the_end_of_the_stream() -> None:
    """Found by ``test_runners_agree_on_pieces_of_the_hostile_inputs`` (on ba26ebf): with
    every dialect, a DSML string value's rows send ``[`` to ``maybe_tag`` (a marker of
    another scope begins with it), but no marker of the value's own scope does. The
    reference runner held it there; the compiled runner's scan, which asks the scope,
    read it as the value's and streamed it. At the end of the stream the reference
    abandoned the block with ``[`` held, never streamed: the runners' deltas differed.
    A held tag that is already dead at the end of the stream is its origin's now, as the
    next character would have made it."""
    doc = '<｜DSML｜tool_calls>\n<｜DSML｜invoke name="f">\n<｜DSML｜parameter name="k" string="\nfalse">['
    got = {}
    for runner in ("compiled", "reference"):
        s = callsieve.Sieve(max_block_chars=1 << 20, on_malformed="text", runner=runner)
        got[runner] = merged(s.feed(doc) + s.close())
        assert "".join(e.raw for e in got[runner]) == doc
    assert [e.arguments for e in got["reference"] if isinstance(e, callsieve.ToolCallDelta)] == ['{"k": "[']
    assert [type(e).__name__ for e in got["compiled"]] == [type(e).__name__ for e in got["reference"]]
    assert [getattr(e, "arguments", None) for e in got["compiled"]] == [getattr(e, "arguments", None) for e in got["reference"]]
