"""Fences and code spans as CommonMark defines them, with markdown-it-py as the oracle.

Generated Markdown documents (fences of every length and character, info strings,
closing fences with trailing text or spaces, indentation, list items, code spans
across line ends, unclosed spans) carry *probes*: tool-call markup naming a unique
tool. Whatever markdown-it-py renders as code (a fence or a code span) must come out
of callsieve as text: a probe inside code is never a call.

Where callsieve must differ from CommonMark (see docs/commonmark.md):
indented code blocks (four spaces, no fence) are not treated as code, and a code span
left open waits for its close only until the paragraph ends or
``prose.SPAN_MAX_LINES`` line ends have passed; the generator stays inside both
bounds. A block released as text is not read again for Markdown: probes after one that
holds a backtick or a tilde are excused (``after_released_ticks``). The generator also
writes no list-item lines while a fence may be open
(callsieve reads a fence's container from the lines before it without re-reading
fenced code among them, so an item line shown in a fence could be taken for an item),
and no empty list items: "- " under paragraph text is a setext heading's underline in
CommonMark, or an empty sibling item when that paragraph is in a list item, and
callsieve reads the lines before a fence only far enough to find its container
(``prose._container``), not to tell those apart; nor lines that could start an HTML
block (``<b>`` alone), which callsieve reads as paragraph text. For the same reason
(fenced code among the lines before is not read again) a line of a list item's fence
reads as paragraph text, and a line right under it that starts left of the item's
content, ending the item and the fence, as a lazy continuation that keeps the item
open: the generator puts a blank line before every line that starts left of a fence's
run while the fence may be open (it cannot always tell which item a fence is in).
(``put`` keeps every line to this.)
"""

from __future__ import annotations

import re

import pytest
from hypothesis import given, strategies as st

import callsieve
from strategies import chunks, run

markdown_it = pytest.importorskip("markdown_it")

PROBE = re.compile(r"probe\d+")


def probe_markup(n: int, kind: int) -> list[str]:
    """The lines of a call to ``probe{n}`` in one of three dialects."""
    name = f"probe{n}"
    if kind == 0:
        return [f'<tool_calls><invoke name="{name}"></invoke></tool_calls>']
    if kind == 1:
        return ["<tool_call>", f"<function={name}>", "</function>", "</tool_call>"]
    return [f'<\uff5cDSML\uff5ctool_calls><\uff5cDSML\uff5cinvoke name="{name}"></\uff5cDSML\uff5cinvoke></\uff5cDSML\uff5ctool_calls>']


WORDS = st.sampled_from(["see", "the", "code", "a", "b", "x()", "*", "_", "#", "1.", "-", "~", "\\", "<b>", "</b>", "[", "]"])
RUN = st.sampled_from(["```", "````", "~~~", "~~~~", "`````", "~~~~~"])
INDENT = st.sampled_from(["", " ", "  ", "   "])
LIST = st.sampled_from(["", "", "- ", "* ", "1. ", "1) ", "-   "])
INFO = st.sampled_from(["", "", "python", "markdown", " json", "a`b", "x ~~~", "<tool_call>", "```"])
TRAIL = st.sampled_from(["", "", " ", "  \t", " x", "python", "`", "<tool_call>"])


#: A line that reads like a list item's first line, and one that is an empty item.
ITEMISH = re.compile(r" *(?:[-+*]|[0-9]{1,9}[.)])(?: |$)")
EMPTY_ITEM = re.compile(r" *(?:[-+*]|[0-9]{1,9}[.)]) *$")
#: A line that may open a fence (markers before its run open items it is in; a
#: backtick fence's info string holds no backtick).
OPENER = re.compile(r"( *)((?:(?:[-+*]|[0-9]{1,9}[.)]) +)*)(`{3,}(?=[^`]*$)|~{3,})")
#: A line that is an HTML block's first line if no paragraph is open (an inline tag
#: alone, after list markers).
HTML_LINE = re.compile(r" *(?:(?:[-+*]|[0-9]{1,9}[.)]) +)*</?[a-z]+> *$")
CLOSER = re.compile(r"( *)(`{3,}|~{3,})[ \t]*$")


@st.composite
def markdown(draw: st.DrawFn) -> tuple[str, int]:
    """A Markdown document with probes; returns it and the number of probes."""
    lines: list[str] = []
    probes = 0
    container = ""  # the indentation that keeps lines inside the current list item
    fenced = ""  # roughly: the run of the last fence line, until a line could close it
    # The run of a fence that may be open (any line that may open one counts), until a
    # line surely closes it or ends the list item it is in; that item's content column
    # (0: at the top level).
    open_run = ""
    item_col = 0
    open_col = 0  # the column of that fence's run

    def put(line: str) -> None:
        """Add a line, kept within what callsieve reads as CommonMark does (module
        docstring): while a fence may be open, no line reads like a list item, and one
        that starts left of the fence's run stands after a blank line (it may end the
        list item the fence is in, which the generator does not always know of: an item
        line written as prose); no empty items, and no line that could be an HTML block."""
        nonlocal open_run, item_col, open_col
        lead = len(line) - len(line.lstrip(" "))
        if HTML_LINE.match(line):
            line += " x"
        if open_run and line.strip() and lead < open_col:
            if lines and lines[-1].strip():
                lines.append("")
            if item_col and lead < item_col:
                open_run, item_col = "", 0  # (the line ends the item, and its fence)
        if (open_run and ITEMISH.match(line)) or EMPTY_ITEM.match(line):
            line = line[:lead] + "x " + line[lead:]
        lines.append(line)
        if open_run:
            c = CLOSER.match(line)
            if c and c.group(2)[0] == open_run[0] and len(c.group(2)) >= len(open_run) \
                    and item_col <= len(c.group(1)) <= item_col + 3:
                open_run, item_col = "", 0
        else:
            o = OPENER.match(line)
            if o and (len(o.group(1)) - len(container) <= 3 if len(o.group(1)) >= len(container)
                      else len(o.group(1)) <= 3):
                open_run = o.group(3)
                open_col = len(o.group(1)) + len(o.group(2))
                item_col = len(o.group(1)) + len(o.group(2)) if o.group(2) else \
                    (len(container) if len(o.group(1)) >= len(container) else 0)

    for _ in range(draw(st.integers(1, 14))):
        kind = draw(st.integers(0, 9))
        if kind == 0:
            put("")
            if draw(st.booleans()):
                container = ""
        elif kind == 1 and not fenced and not open_run:  # a list item: what follows may be indented into it
            marker = draw(LIST) or "- "
            # (never empty: an empty item and a setext underline "- " are not told
            # apart by callsieve, see the module docstring)
            put(draw(INDENT) + marker + " ".join(draw(st.lists(WORDS, min_size=1, max_size=3))))
            container = " " * (len(lines[-1]) - len(lines[-1].lstrip()) + len(marker))
        elif kind in (2, 3):  # a fence opener (possibly opening a list item)
            run_ = draw(RUN)
            put(container + draw(INDENT) + draw(LIST) + run_ + draw(INFO))
            fenced = fenced or run_
        elif kind == 4:  # a closing candidate: runs, indentation, trailing text
            run_ = draw(RUN)
            put(container + draw(st.sampled_from(["", " ", "  ", "   ", "    "])) + run_ + draw(TRAIL))
            if fenced and run_[0] == fenced[0] and len(run_) >= len(fenced):
                fenced = ""
        elif kind in (5, 6):  # a probe on its own lines
            for line in probe_markup(probes, draw(st.integers(0, 2))):
                put(container + draw(INDENT) * 0 + line)
            probes += 1
        else:  # prose with code spans (balanced, unbalanced, across a line end), a probe inside or after
            ticks = draw(st.sampled_from(["`", "``", "```", "`` "]))
            close = draw(st.sampled_from([ticks, ticks, ticks.strip(), "`", "``", ""]))
            body = probe_markup(probes, draw(st.sampled_from([0, 2])))[0]
            probes += 1
            before = " ".join(draw(st.lists(WORDS, max_size=3)))
            sep = draw(st.sampled_from([" ", "\n", " ", "\n" + container]))
            after = draw(st.sampled_from(["", " and ", "\n"]))
            text = f"{before} {ticks}{body}{sep}{' '.join(draw(st.lists(WORDS, max_size=2)))}{close}{after}"
            if draw(st.booleans()):
                text += probe_markup(probes, 0)[0]
                probes += 1
            for k, t in enumerate(text.split("\n")):
                put(container + t if k else t)
    return "\n".join(lines), probes


def code_probes(doc: str) -> tuple[set[str], set[str]]:
    """Probe names markdown-it-py puts in code (fences, code spans); and those of them
    where callsieve differs by design (docs/commonmark.md): in an indented code block, or in a
    code span of a paragraph longer than ``SPAN_MAX_LINES`` + 1 lines."""
    from callsieve.regions.prose import SPAN_MAX_LINES

    md = markdown_it.MarkdownIt("commonmark")
    found: set[str] = set()
    excused: set[str] = set()
    lines = 0  # of the paragraph (or heading) the inline tokens belong to
    for t in md.parse(doc):
        if t.type in ("paragraph_open", "heading_open") and t.map:
            lines = t.map[1] - t.map[0]
        if t.type == "fence":
            # (its info string too: never run, as its content, docs/commonmark.md)
            found |= set(PROBE.findall(t.info)) | set(PROBE.findall(t.content))
        elif t.type == "code_block":
            excused |= set(PROBE.findall(t.content))
        for c in t.children or []:
            if c.type == "code_inline":
                names = set(PROBE.findall(c.content))
                found |= names
                if lines > SPAN_MAX_LINES + 1:
                    excused |= names
    return found, excused


def called(events: list[object]) -> set[str]:
    return {getattr(e, "name") for e in events if type(e).__name__ == "ToolCall"}


#: Diagnostics of a block released as text (or dropped: then the Diagnostic holds it).
RELEASED = ("malformed_block", "unterminated_block", "block_too_large")


def after_released_ticks(doc: str, pieces: list[str]) -> set[str]:
    """Probes that stand after a block released as text whose raw holds a backtick or a
    tilde: callsieve does not read a released block again for Markdown (docs/commonmark.md),
    so a fence or span it would open opens nothing. The same stream is run
    with ``on_malformed="drop"`` to see each released block's raw on its Diagnostic (or,
    where calls of it had been streamed, on their ``ToolCallAbandoned`` events)."""
    start = None
    at = 0  # where the next event's raw begins
    for e in run(pieces, on_malformed="drop"):
        if isinstance(e, callsieve.Diagnostic) and e.code in RELEASED and ("`" in e.raw or "~" in e.raw):
            start = e.offset
            break
        if isinstance(e, callsieve.ToolCallAbandoned) and ("`" in e.raw or "~" in e.raw):
            start = at
            break
        at += len(e.raw)
    if start is None:
        return set()
    return {m.group() for m in PROBE.finditer(doc) if m.start() > start}


@given(st.data())
def test_what_commonmark_renders_as_code_is_never_a_call(data: st.DataObject) -> None:
    doc, _n = data.draw(markdown())
    in_code, excused = code_probes(doc)
    pieces = data.draw(chunks(doc))
    events = run(pieces)
    assert "".join(e.raw for e in events) == doc
    wrong = (in_code - excused) & called(events)
    if wrong:
        wrong -= after_released_ticks(doc, pieces)
    assert not wrong, (doc, sorted(wrong))


# Found by the deep run (issue 12 item 7): "```" was taken for a GLM call's name, the
# block read on, turned out malformed and was released as text with its fence line in
# it; CommonMark reads that line as a fence, so probe1..3 are code. Since the fork reads
# what follows <tool_call> as each dialect's grammar does (issue 22), no grammar takes
# "\n  ```" there: the opener alone is released and the fence line is read as one.
GLM_FENCE = ("    ```<tool_call>\n  ```\n\n `" + '<tool_calls><invoke name="probe1"></invoke></tool_calls>'
             + " `\nsee see see `" + '<tool_calls><invoke name="probe2"></invoke></tool_calls>'
             + "\n    ` and " + '<tool_calls><invoke name="probe3"></invoke></tool_calls>')


def test_a_fence_line_after_a_refused_opener_opens_a_fence() -> None:
    in_code, excused = code_probes(GLM_FENCE)
    assert in_code - excused == {"probe1", "probe2", "probe3"}, "the oracle says code"
    for pieces in chunked(GLM_FENCE):
        events = run(pieces)
        assert not called(events), len(pieces)
        # (each probe in code is reported: issue 22 item 9)
        assert [e.code for e in events if isinstance(e, callsieve.Diagnostic)] == ["malformed_block"] + ["markup_in_code"] * 3


# A block that holds up to a fence line, then breaks its grammar (a character where
# only markup may stand), is released as text with that line in it; CommonMark reads
# the line as a fence, so probe1 is code. callsieve does not read a released block
# again for Markdown (docs/commonmark.md): probe1 runs. A limitation: strict, so that a fix shows
# here; the property excuses probes after such a block (``after_released_ticks``).
RELEASED_FENCE = ("<tool_call>\n<function=f>\n<parameter=a>\nv\n```\n</parameter>\n</function>\nX\n"
                  + '<tool_calls><invoke name="probe1"></invoke></tool_calls>')


def test_a_fence_line_inside_a_released_block_is_excused_by_the_property() -> None:
    in_code, excused = code_probes(RELEASED_FENCE)
    assert in_code - excused == {"probe1"}, "the oracle says code"
    events = run([RELEASED_FENCE])
    assert called(events) == {"probe1"}  # (what the strict xfail below says is wrong)
    assert after_released_ticks(RELEASED_FENCE, [RELEASED_FENCE]) == {"probe1"}


@pytest.mark.xfail(strict=True, reason="a block released as text is not read again for Markdown (docs/commonmark.md)")
def test_a_fence_line_inside_a_released_block_opens_a_fence() -> None:
    for pieces in chunked(RELEASED_FENCE):
        assert not called(run(pieces)), len(pieces)


def test_a_list_item_line_ends_an_open_span_so_its_failed_fence_opens_a_span_of_its_own() -> None:
    # Found by the property above: a span left open on the paragraph's first line, then
    # a list item whose run would open a fence but for the backtick in its info string.
    # The item's line ended the paragraph and the old span with it, so the run opens
    # a span of three backticks, closed on the last line: probe2 is code. callsieve used
    # to carry the old one-backtick span on, closed it at the next line's backtick, and
    # ran probe2.
    doc = ('\n\n `<tool_calls><invoke name="probe0"></invoke></tool_calls> ``\n'
           '<tool_calls><invoke name="probe1"></invoke></tool_calls>\n- ```a`b\n'
           ' `<tool_calls><invoke name="probe2"></invoke></tool_calls> `\n'
           ' ```<tool_calls><invoke name="probe3"></invoke></tool_calls> ```')
    in_code, _ = code_probes(doc)
    assert "probe2" in in_code, "the oracle says code"
    for n in (len(doc), 1, 3, 7):
        events = run([doc[i : i + n] for i in range(0, len(doc), n)])
        assert "".join(e.raw for e in events) == doc
        assert "probe2" not in called(events), n


def test_a_fence_line_the_stream_ends_in_while_a_tag_is_held_in_its_info_string_is_a_fence() -> None:
    # Found by the property above: the stream ended on the fence's line while a
    # character that may begin a marker (``[``) was held after the opener in its info
    # string. The end of the stream ends the line: a fence, so probe1 is code (as
    # where the stream ends on any other character). callsieve released the opener as
    # markup and ran probe1.
    doc = ('\n\n\n- ```\n\n\n\n `<tool_calls><invoke name="probe0"></invoke></tool_calls> `\n'
           ' ```<tool_calls><invoke name="probe1"></invoke></tool_calls> [')
    in_code, _ = code_probes(doc)
    assert in_code == {"probe0", "probe1"}, "the oracle says code"
    for tail in (" [", "[", " y"):
        for pieces in chunked(doc[: -2] + tail):
            events = run(pieces)
            assert "".join(e.raw for e in events) == doc[: -2] + tail
            assert not called(events), (tail, len(pieces))
            assert [e.code for e in events if isinstance(e, callsieve.Diagnostic)] == ["markup_in_code"] * 2


P0 = '<tool_calls><invoke name="probe0"></invoke></tool_calls>'


def chunked(doc: str) -> list[list[str]]:
    """``doc`` whole and cut every 1, 3 and 7 characters."""
    return [[doc[i : i + n] for i in range(0, len(doc), n)] for n in (len(doc), 1, 3, 7)]


@pytest.mark.parametrize(
    "doc",
    [
        # Found by the property above (thorough profile): a list item's fence, a blank
        # line, then a line indented four columns, left of the item's content (column
        # 5): it ends the item and its fence, and is indented code, so its backtick is
        # literal and the next line's code span holds probe0. callsieve used to take
        # the fence line indented into the item for the start of a run of indented
        # lines right under paragraph text ("see"), read the line as a lazy
        # continuation of that paragraph, and open a span at its backtick, which the
        # next line's first backtick closed: probe0 ran.
        "\n\n\n\n\n\n   - see\n     ```\n\n    ~~~`\n `" + P0 + " `",
        # The same through a line of the code block above it: "    ~~~" is code (after
        # the blank), so "    ~~~`" goes on with it.
        "   - see\n     ```\n\n    ~~~\n    ~~~`\n `" + P0 + " `",
        # No blank line: right under the item's fence line there is no paragraph.
        "   - see\n     ```\n    ~~~`\n `" + P0 + " `",
        # A blank line ends a paragraph, even one whose last line was indented four
        # columns: the indented line after it is code, not more of that paragraph.
        "para\n    cont\n\n    code`\n`" + P0 + "`",
    ],
)
def test_an_indented_line_where_no_paragraph_is_open_is_code_whatever_is_indented_above_it(doc: str) -> None:
    in_code, excused = code_probes(doc)
    assert "probe0" in in_code - excused, "the oracle says code"
    for pieces in chunked(doc):
        events = run(pieces)
        assert "".join(e.raw for e in events) == doc
        assert "probe0" not in called(events), len(pieces)


@pytest.mark.parametrize(
    "doc",
    [
        # "    y`" right under "text", the paragraph of the item at column 5, is a lazy
        # continuation line, whatever the blank line above "text": its backtick opens a
        # span, closed by the next line's first one, and the markup after that is
        # prose, a call. callsieve used to take the blank line for the start of a run
        # of indented lines, read "    y`" as indented code, and show the call.
        "   - see\n\n     text\n    y`\n `" + P0 + " `",
        # Under paragraph text a line that would be a fence line with less indentation
        # is more of the paragraph, and so is the line under it: "`" opens a span that
        # holds probe0.
        "see `x`\n    ```\n    ~~~`" + P0 + "`",
    ],
)
def test_an_indented_line_under_paragraph_text_continues_it_so_its_backtick_is_inline(doc: str) -> None:
    in_code, excused = code_probes(doc)
    assert not excused
    for pieces in chunked(doc):
        events = run(pieces)
        assert called(events) == {"probe0"} - in_code, len(pieces)


def test_a_failed_fences_run_as_long_as_the_open_span_closes_it() -> None:
    # Found by the property above (thorough profile). "```a`b" opens no fence (a
    # backtick in its info string): its run opens a span of three backticks, which
    # " ```<probe1> ```<probe2>" closes at its first run, a fence but for the backtick
    # in its info string. Its second run opens a span that holds probe2, closed on the
    # last line. callsieve used to carry the first span on past the failed fence's
    # run, closed it at the second run, and ran probe2. (probe1 and probe3, read in
    # what might have been info strings, are shown, not run: docs/commonmark.md.)
    doc = ("- ```\n```a`b\n `" + P0 + " `\n ```" + P0.replace("probe0", "probe1") + " ```"
           + P0.replace("probe0", "probe2") + "\n ```" + P0.replace("probe0", "probe3") + " ```")
    in_code, excused = code_probes(doc)
    assert in_code - excused == {"probe0", "probe2"}, "the oracle says code"
    for pieces in chunked(doc):
        events = run(pieces)
        assert "".join(e.raw for e in events) == doc
        assert not called(events) & {"probe0", "probe2"}, len(pieces)


def test_a_failed_fences_run_inside_a_span_opens_a_span_holding_the_opener_in_its_info_string() -> None:
    # Found by the property above. "````a`b" opens no fence (a backtick in its info
    # string): its run opens a span of four, never closed, so its backticks are text and
    # the runs after it pair up; " ```<probe0> ```" is no fence either, and its two runs
    # make a span that holds probe0. callsieve read the line's first run as one inside
    # the open span but, the opener being held from the info string, only noted it (as
    # runs after a held opener are), so the second run closed nothing and probe0 ran.
    doc = "y\n````a`b\n ```" + P0 + " ```"
    in_code, excused = code_probes(doc)
    assert in_code - excused == {"probe0"}, "the oracle says code"
    for pieces in chunked(doc):
        for runner in ("compiled", "reference"):
            events = run(pieces, runner=runner)
            assert "".join(e.raw for e in events) == doc
            assert not called(events), (len(pieces), runner)


def test_markers_one_after_another_open_nested_items_and_a_fence_in_the_inner_one_ends_with_it() -> None:
    # Found by the property above (thorough profile). "- 1." opens an item holding an
    # empty item (content column 5), which holds the fence below it; "  ```", left of
    # column 5, ends the inner item and its fence and opens a fence in the outer item,
    # which holds probe0. callsieve used to read only the first marker, put the fence
    # in the outer item (column 2), closed it at "  ```", and ran probe0.
    doc = "- 1.\n     ```\n  ```\n\n  " + P0
    in_code, excused = code_probes(doc)
    assert in_code - excused == {"probe0"}, "the oracle says code"
    for pieces in chunked(doc):
        events = run(pieces)
        assert "".join(e.raw for e in events) == doc
        assert "probe0" not in called(events), len(pieces)


def test_a_line_that_reads_like_a_fence_four_columns_past_its_item_under_paragraph_text_is_more_of_it() -> None:
    # Found by the property above (thorough profile). "      ```" stands four columns
    # past the item's content (column 2), right under its paragraph: no fence, more of
    # the paragraph, so " `<probe0> `" under it is a lazy continuation and the item
    # goes on; "    ```" after the blank lines opens a fence in the item, and probe1
    # is in it. callsieve used to take "      ```" for a fence line by its look, and
    # " `<probe0> `" for a line that ended the item: "    ```" was then no fence
    # (four columns at the top level) and probe1 ran.
    doc = "- see\n      ```\n `" + P0 + " `\n\n\n\n\n\n\n\n    ```\n  " + P0.replace("probe0", "probe1")
    in_code, excused = code_probes(doc)
    assert in_code - excused == {"probe0", "probe1"}, "the oracle says code"
    for pieces in chunked(doc):
        events = run(pieces)
        assert "".join(e.raw for e in events) == doc
        assert not called(events), len(pieces)


@pytest.mark.parametrize("rule", ["- --", "* * *", "- - -"])
def test_a_thematic_break_that_reads_like_a_list_item_opens_no_item(rule: str) -> None:
    # Found by a longer search of the property above. "- --" is a thematic break
    # (CommonMark reads a break before an item): "  ```" under it opens a fence at the
    # top level, which holds probe0. callsieve used to take the line for an item at
    # column 2, open the fence in it, end it at the unindented line, and run probe0.
    doc = rule + "\n  ```\n" + P0
    in_code, excused = code_probes(doc)
    assert in_code - excused == {"probe0"}, "the oracle says code"
    for pieces in chunked(doc):
        events = run(pieces)
        assert "".join(e.raw for e in events) == doc
        assert not called(events), len(pieces)


# Each finding of issue 12 as an example (findings 4 and 5) ------------------------------
BLOCK = '<tool_calls><invoke name="rm"></invoke></tool_calls>'


@pytest.mark.parametrize(
    "doc",
    [
        # 4: a closing fence has no info string: ```python inside a ``` fence is content
        f"```\nexample:\n```python\n{BLOCK}\n```\n",
        # 4: the nested pattern: a ````markdown fence showing a ```python block
        f"````markdown\n```python\n{BLOCK}\n```\n{BLOCK}\n````\n",
        # 5: a fence indented inside a list item
        f"- step one:\n\n    ```\n    {BLOCK}\n    ```\n",
        f"1. step:\n   ```bash\n   {BLOCK}\n   ```\n",
        # 5: a run followed by markup is no closing fence
        f"```\n```{BLOCK}\n```\n",
        # 5: inline code across a line end
        f"use `the\n{BLOCK}` command\n",
        # a closing fence needs the opener's character and length
        f"~~~\n```\n{BLOCK}\n~~~\n",
        f"````\n```\n{BLOCK}\n````\n",
    ],
)
def test_issue_12_commonmark_examples_are_code_and_text(doc: str) -> None:
    in_code, _ = code_probes(doc.replace('"rm"', '"probe0"'))
    assert in_code == {"probe0"}, "the oracle says code"
    events = run([doc])
    assert not called(events)
    assert "".join(getattr(e, "text", "") for e in events if type(e).__name__ == "Text") == doc


@pytest.mark.parametrize(
    "doc",
    [
        f"```\ncode\n```  \n{BLOCK}\n",  # a closing fence may carry trailing spaces
        f"```\ncode\n   ```\n{BLOCK}\n",  # and up to three spaces of indentation
        f"````\ncode\n``````\n{BLOCK}\n",  # and be longer than the opener
        f"- item\n  ```\n  code\n  ```\n{BLOCK}\n",  # a fence in a list item closes
        f"`a\n\n{BLOCK}`\n",  # a blank line ends the paragraph: the backtick was literal
    ],
)
def test_markup_after_code_that_commonmark_closed_is_a_call(doc: str) -> None:
    in_code, _ = code_probes(doc.replace('"rm"', '"probe0"'))
    assert in_code == set(), "the oracle says prose"
    assert called(run([doc])) == {"rm"}


# Unmatched backticks and fences before markup (issue 22 item 7) --------------------------
#: Paragraph pieces: words, backtick runs of every length (matched or not), probes.
PIECE = st.sampled_from(["see", "the", "x()", "a.", "`", "``", "```", "`", "``", "PROBE", "PROBE"])
FENCE_LINE = st.sampled_from(["```", "````", "~~~", "```python", "~~~ x"])


@st.composite
def backtick_paragraphs(draw: st.DrawFn) -> tuple[str, int]:
    """Paragraphs of words, backtick runs and probes, blank lines and fence lines, at the
    margin: within what callsieve reads as CommonMark does (no list, no indentation, no
    heading, no escape, no paragraph longer than ``SPAN_MAX_LINES`` lines; a paragraph
    line begins with a word, so a run never opens a fence with a backtick in its info
    string)."""
    from callsieve.regions.prose import SPAN_MAX_LINES

    lines: list[str] = []
    probes = 0
    para = 0
    for _ in range(draw(st.integers(1, 12))):
        kind = draw(st.integers(0, 5))
        if kind == 0 or para >= SPAN_MAX_LINES:
            lines.append("")
            para = 0
        elif kind == 1:
            lines.append(draw(FENCE_LINE))
            para = 0
        else:
            words = ["see"]
            for piece in draw(st.lists(PIECE, min_size=1, max_size=6)):
                if piece == "PROBE":
                    piece = probe_markup(probes, draw(st.sampled_from([0, 2])))[0]
                    probes += 1
                words.append(piece)
            glue = draw(st.sampled_from([" ", ""]))
            lines.append(glue.join(words) if glue else " ".join(words[:1]) + "".join(words[1:]))
            para += 1
    return "\n".join(lines) + draw(st.sampled_from(["", "\n"])), probes


@given(st.data())
def test_what_commonmark_renders_as_prose_after_backtick_runs_and_fences_is_a_call(data: st.DataObject) -> None:
    """Both ways: a probe in code (a span, a fence, an unclosed fence) is no call and is
    reported; a probe CommonMark leaves in prose (after a run that matches nothing, after
    a span that closed, after a fence that closed) is a call."""
    doc, n = data.draw(backtick_paragraphs())
    in_code, excused = code_probes(doc)
    assert not excused
    events = run(data.draw(chunks(doc)))
    assert "".join(e.raw for e in events) == doc
    assert called(events) == {f"probe{k}" for k in range(n)} - in_code, doc
    reported = sum(1 for e in events if isinstance(e, callsieve.Diagnostic) and e.code == "markup_in_code")
    assert bool(reported) == bool(in_code), doc


@pytest.mark.parametrize(
    "doc",
    [
        "Use the `x flag. " + P0,  # a stray backtick: literal
        "Use the `x flag. " + P0 + "\n\nand `this` too.",  # the paragraph ends first
        "Use ``x ` " + P0 + " `` too",  # a run of another length inside: the span closes
        "Use `a ``b`` " + P0 + " c",  # a span inside what the stray run would have opened
        "Use `a\n```\n" + P0 + "\n```\n" + P0.replace("probe0", "probe1"),  # a fence ends the paragraph
        "see ```\n" + P0,  # a run mid-line opens no fence
        # Found by the property above: a run the stream ends in closes a span that a run
        # read again after the hold opens (it was not noted, so that run was literal)
        "x ` " + P0 + " ``" + P0.replace("probe0", "probe1") + " ``",
        "- ```\n\n ```" + P0 + " `\n" + P0.replace("probe0", "probe1") + "\n ``" + P0.replace("probe0", "probe2") + " ``",
        # an opener in a backtick fence's info string is held to the line's end: a backtick
        # after it makes the run a span's (here unmatched: a call), none makes a fence
        "```" + P0 + " `\nmore",
        "```" + P0 + " `x`\nmore",
        "```" + P0 + "\nmore\n```\n",
        "- a\n\n ```" + P0 + " `",
        "~~~" + P0 + " `\nmore\n~~~\n",
        # text four columns past its list item after a blank line is indented code, which
        # no line continues lazily: the line after it, left of the item, ends the item,
        # so the fence after that is at the margin and holds the rest (found by the
        # property above)
        "- a\n\n      c\n b\n\n  ```\n\nx\n\n" + P0,
        "- a\n\n      c\n      d\n b\n\n  ```\n\nx\n\n" + P0,
        "- a\n      c\n b\n\n  ```\n\nx\n\n" + P0,  # (here a lazy line: the item goes on)
    ],
)
def test_unmatched_backticks_and_fences_before_markup_agree_with_commonmark(doc: str) -> None:
    in_code, _ = code_probes(doc)
    probes = set(PROBE.findall(doc))
    for pieces in chunked(doc):
        for runner in ("compiled", "reference"):
            events = run(pieces, runner=runner)
            assert "".join(e.raw for e in events) == doc
            assert called(events) == probes - in_code, (len(pieces), runner)
