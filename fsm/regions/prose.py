"""Prose: visible text, backtick/tilde runs, inline code and fences, as CommonMark has them.

A backtick or tilde run may open inline code (``in_code_span``) or, at a line start, a
fence (``fence_info``, then ``in_fence``); inside them everything is text, so markup in
a fenced example is never a call. ``text`` sends its start characters (``START``: those
that may begin a marker it listens for) to ``maybe_tag``.

CommonMark, as far as a stream allows (issue 12, findings 4 and 5; docs/commonmark.md
says where callsieve differs):

* A fence opens with three or more backticks or tildes at a line start: indented at
  most three columns, or after list-item markers (``- ``, ``1. ``), where the fence
  starts the item's content. A backtick fence's info string holds no backtick (else
  the run opens inline code); the info string is text.
* In a list item it also ends where the item does: at a line starting left of the
  item's content column (``fence_line``).
* It closes only with a run of its own character, at least as long, indented within
  three columns of its container (the list item it opened in, if any), followed by
  nothing but spaces or tabs: ```` ```python ```` or ```` ```<tool_call> ```` inside a
  fence are content.
* Inline code runs from a backtick run to the next run of the same length, across line
  ends within the paragraph: a blank line, or a fence opening at a line start, ends the
  paragraph (and an unclosed span with it). A stream cannot wait for a paragraph's end
  forever: a span left open ends after ``SPAN_MAX_LINES`` line ends.

Markup in code (issue 22; docs/commonmark.md). The code states listen for the enabled
dialects' block openers and message header starts, and for the tokens that end a
message (``code_listens``, composed by the machine). In a fence (or its info string) an
opener is text, reported (``markup_in_code``). In an open span, whether its run opens a
span at all is known only at its close or its paragraph's end: from an opener on, the
input is *held* (``ModelBase.code_held``: ``flush`` keeps it back while the lines stay
readable) until the span, or a span opened inside it (``span_inner``), closes (code:
shown, reported) or the paragraph ends first (the run was literal: the held input is read
again as prose, ``pushback``). What is read again cannot be held again
(``run_unmatched``), so each character is read at most twice. A message's end token
ends any of these contexts (``code_token_end``).
"""

from __future__ import annotations

import re
from typing import Callable

from callsieve.native import mypyc_attr, trait
from callsieve.events import Diagnostic, Text
from callsieve.grammar.states import ALL, CLASSES, EOF_TRIGGER, RANK_RETURN, START, Listen, Region, StateDecl, but, on
from callsieve.grammar.api import MAX_TAG_CHARS
from callsieve.matcher import COMPLETE, Matcher, WordFinder
from callsieve.regions import LINE_TAIL, ModelBase
from callsieve.regions.tag import TagModel

#: The head of the current line, before a run: indentation and list-item markers
#: (``markers``: the run begins the content of a list item opened on this line).
LINE_HEAD = re.compile(r"\n(?P<markers>(?:[ \t]*(?:[-+*]|[0-9]{1,9}[.)])[ \t]+)*)(?P<indent>[ \t]*)\Z")
#: A line with nothing but spaces or tabs so far (a closing fence's head).
BLANK_HEAD = re.compile(r"\n([ \t]*)\Z")
#: A line that starts a block which interrupts a paragraph (an ATX heading, a block
#: quote, a list item that may interrupt one), up to where it is read.
#: (Inside a list an item, even an empty one, ends the paragraph of the item before.)
#: (An ordered item numbered past 1 cannot interrupt a paragraph.)
INTERRUPTS = r"[ \t]*(?:#{1,6}(?:[ \t]|\Z)|>|(?:[-+*]|0{0,8}1[.)])(?:[ \t]|\Z))"
#: (Before a run on the line, a marker must be followed by a space: ``*`` + run is not an item.)
INTERRUPT_HEAD = re.compile(r"\n" + INTERRUPTS.replace(r"(?:[ \t]|\Z)", r"[ \t]") + r"[^\n]*\Z")
#: The line a newline ends closes the paragraph (blank, a setext underline or a
#: thematic break) or was not part of it (a line in ``INTERRUPTS``).
PARAGRAPH_END = re.compile(
    r"\n(?:[ \t]*| {0,3}(?:=+|-+)[ \t]*| {0,3}(?:(?:\*[ \t]*){3,}|(?:-[ \t]*){3,}|(?:_[ \t]*){3,}))\Z"
)
INTERRUPT_LINE = re.compile(r"\n" + INTERRUPTS + r"[^\n]*\Z")
#: An ATX heading is one line: a span in it ends with it.
HEADING_LINE = re.compile(r"\n(?:[ \t]*(?:[-+*]|[0-9]{1,9}[.)]|>)[ \t]+)*[ \t]*#{1,6}(?:[ \t][^\n]*)?\Z")
#: Line ends an open code span may cross before it is given up (it then ends, and what
#: follows is prose again): CommonMark waits for the paragraph's end, a stream cannot.
SPAN_MAX_LINES = 8
#: A setext heading's underline made of "-" (it reads like an empty list item).
SETEXT = re.compile(r" {0,3}-+[ \t]*\Z")
#: A thematic break made of "-" or "*" (``- - -``, ``- --``, ``* * *``): it reads like a
#: list item, and CommonMark reads it as a break first.
BREAK = re.compile(r" {0,3}(?:(?:\*[ \t]*){3,}|(?:-[ \t]*){3,})\Z")
#: A run of one fence or span character (the state runs read runs whole).
_RUN_OF = {"`": re.compile("`+"), "~": re.compile("~+")}
_BLANKS = re.compile(r"[ \t]*")
#: Blanks and line ends (``fence_line`` loops on the ws and nl classes).
_LINE_BLANKS = re.compile(r"[ \t\r\n]*")
#: What may follow a closing fence's run on its line (``fence_tail``: the ws class).
_TAIL_BLANKS = re.compile(r"[ \t\r]*")
#: A fence character at the start of a later line, after blanks only.
_CLOSE_AT = {c: re.compile(r"\n([ \t]*)" + re.escape(c)) for c in "`~"}
_NEVER = re.compile(r"(?!)")
#: The states ``prose_run`` reads in (it stops in any other).
_PROSE_RUN_STATES = frozenset({"text", "tick_run", "fence_info", "fence_line", "in_fence", "fence_run", "fence_tail"})
#: A list item's first line: indentation, marker, the spaces before its content.
LIST_ITEM = re.compile(r"([ \t]*)([-+*]|[0-9]{1,9}[.)])([ \t]+|\Z)")
assert LINE_TAIL >= 64


def _container(before: str, width: int, near: bool = False, shallow: bool = False) -> int:
    """The content column of the innermost list item a line indented ``width`` columns
    belongs to, read from the lines ``before`` it (the recent visible text, oldest
    first), or 0. An item is open while no later line after a blank one starts left of
    its content (a line right after paragraph text is a lazy continuation: it does not
    close the item); a line in a deeper item belongs to it only if indented that far.

    ``near``: ``before`` is only the last lines of the window (``_container_near``):
    -1 where the answer would depend on a line above them. ``shallow``: whether a
    paragraph is open is told by each line's look alone (``_paragraph_open``)."""
    # The lines after the window's first newline, read from the last one back and split
    # off one at a time: most answers need the last line or two, not the whole window.
    end = len(before)
    line = _line_before(before, end)
    least = width  # lines since then that started left of a column close items there
    while line is not None:
        end -= len(line) + 1
        if not line.strip():
            line = _line_before(before, end)
            continue
        prev = _line_before(before, end)  # the line above (None: the window's first)
        if prev is None and near:
            return -1
        m = LIST_ITEM.match(line)
        lead = _columns(line[: len(line) - len(line.lstrip(" \t"))])
        if m is not None and SETEXT.match(line) and prev is not None and prev.strip() and not _empty_item(prev):
            m = None  # "-" under paragraph text: a setext heading's underline, no item
        elif m is not None and BREAK.match(line):
            m = None  # a thematic break, no item (it closes items left of it, as a line)
        elif m is not None and prev is not None and _paragraph_line(prev) and LIST_ITEM.match(prev) is None \
                and (_empty_item(line) or _late_number(m)):
            m = None  # an empty item, or one numbered past 1, cannot interrupt a paragraph
        if m is not None:
            # Markers one after another open items one inside another ("- 1. x", "- 1."):
            # the innermost whose content column the line reaches is its container.
            found = -1
            while m is not None:
                head = _columns(line[: m.end(2)])
                spaces = _columns(line[: m.end(3)]) - head
                content = head + (spaces if 1 <= spaces <= 4 else 1)
                if content > least:
                    break
                found = content
                if not 1 <= spaces <= 4:
                    break  # (nothing follows, or the item's indented code)
                m = LIST_ITEM.match(line, m.end())
            if found >= 0:
                return found
            least = min(least, lead)
        elif prev is None or _starts_block("\n" + line):
            least = min(least, lead)
        else:
            above = _paragraph_open(before, end, prev, near, shallow)
            if above < 0:
                return -1
            if not above:
                least = min(least, lead)
        if least == 0:
            return 0
        line = prev
    return -1 if near else 0


#: ``_container`` answers that a line and the one above it decide, by (those two
#: lines, width): list items repeat (bounded: cleared when full).
_NEAR: dict[tuple[str, int], int] = {}
_NEAR_LIMIT = 1024
#: ``ProseModel._column_of``: the lines near the run do not tell, ask the window.
_ASK = -2
#: Pairs of lines longer than this are not kept.
_NEAR_CHARS = 256


def _container_near(s: str, lo: int, end: int, width: int) -> int:
    """``_container`` of the text before ``s[end]`` (a line's newline), where the last
    two lines before it, each after a newline at or past ``lo``, decide it; else -1.
    ``s[lo:end]`` must be the window's end: lines there are the window's lines."""
    k = s.rfind("\n", lo, end)
    if k < 0:
        return -1
    k = s.rfind("\n", lo, k)
    if k < 0 or end - k > _NEAR_CHARS:
        return -1
    key = (s[k:end], width)
    c = _NEAR.get(key)
    if c is None:
        c = _container(key[0], width, True)
        if len(_NEAR) >= _NEAR_LIMIT:
            _NEAR.clear()
        _NEAR[key] = c
    return c


def _paragraph_open(before: str, end: int, line: str, near: bool, shallow: bool) -> int:
    """1 if a paragraph is open under ``line``, the line of ``before`` that ends at
    ``end``, else 0; -1 where that depends on a line above ``before``'s first (``near``).

    Told by the line's look (``_paragraph_line``), but for a line that reads like a
    fence line, a heading or a thematic break four columns or more past its container
    right under paragraph text: none of them is indented that far (CommonMark), so it
    is more of the paragraph. Its container is read by its look alone (``shallow``):
    one such line is asked about, not the ones above it too."""
    if _paragraph_line(line):
        if shallow or _columns(line[: len(line) - len(line.lstrip(" \t"))]) < 4:
            return 1
        return _indented_text_open(before, end, line, near)
    if shallow or not line.strip():
        return 0
    lead = _columns(line[: len(line) - len(line.lstrip(" \t"))])
    if lead < 4:
        return 0
    start = end - len(line) - 1
    above = _line_before(before, start)
    if above is None:
        return -1 if near else 0
    if not _paragraph_line(above):
        return 0
    c = _container(before[:start], lead, near, True)
    if c < 0:
        return -1
    return 1 if lead >= c + 4 else 0


def _indented_text_open(before: str, end: int, line: str, near: bool) -> int:
    """``_paragraph_open`` of text indented four columns or more: a paragraph only if
    it continues one (the lines above it, as far up as they are indented as far, begin
    under paragraph text with no blank line); else, four columns past its container, a
    line of an indented code block, which no line continues lazily (CommonMark)."""
    lead = _columns(line[: len(line) - len(line.lstrip(" \t"))])
    start = end - len(line) - 1
    k = start
    above = _line_before(before, k)
    while above is not None and above.strip() and _columns(above[: len(above) - len(above.lstrip(" \t"))]) >= 4:
        k -= len(above) + 1
        above = _line_before(before, k)
    if above is None:
        return -1 if near else 1
    if above.strip() and _paragraph_line(above):
        return 1
    c = _container(before[:start], lead, near, True)
    if c < 0:
        return -1
    return 0 if lead >= c + 4 else 1


def _line_before(text: str, end: int) -> str | None:
    """The line of ``text`` that ends at ``end`` (a newline or the end), or None when no
    newline comes before it (``text.split("\n")[1:]`` read backwards)."""
    k = text.rfind("\n", 0, end)
    return text[k + 1 : end] if k >= 0 else None


def _empty_item(line: str) -> bool:
    """A list item with nothing on its first line: no paragraph a line could continue."""
    m = LIST_ITEM.match(line)
    return m is not None and not line[m.end():].strip()


#: A line holding a fence's run (an opener or a closer: no paragraph text).
FENCE_LINE = re.compile(r"[ \t]*(?:(?:[-+*]|[0-9]{1,9}[.)])[ \t]+)*(?:```+[^`]*\Z|~~~)")


def _paragraph_line(line: str) -> bool:
    """A line a next line may continue lazily (paragraph text, as far as one line tells:
    past its list markers, something that starts no other block)."""
    rest = ITEM_MARKERS.sub("", line, count=1)
    return bool(rest.strip()) and FENCE_LINE.match(rest) is None and not _starts_block("\n" + rest.lstrip(" \t"))


#: The list-item markers at a line's start.
ITEM_MARKERS = re.compile(r"\A(?:[ \t]*(?:[-+*]|[0-9]{1,9}[.)])(?:[ \t]+|\Z))+")


def _starts_block(line: str) -> bool:
    """A heading, quote, thematic break or fence line: never a lazy continuation."""
    return bool(HEADING_LINE.match(line) or INTERRUPT_LINE.match(line) or PARAGRAPH_END.match(line)
                or FENCE_LINE.match(line[1:]))


def _late_number(m: "re.Match[str]") -> bool:
    return m.group(2)[0].isdigit() and int(m.group(2)[:-1]) != 1


def _indented_code(tail: str) -> bool:
    """The current line (after the last newline of ``tail``) is a line of an indented
    code block (CommonMark): four columns past its container, with no paragraph open
    for it to continue.

    Whether a paragraph is open under a line depends on the lines above it, so they
    are read from the first one that tells on its own: above the current line, the
    lines indented four columns or more are passed up to a blank line or the window's
    start (no paragraph open under it) or to a line indented less (one is open under
    paragraph text, not under a heading, a fence line or a thematic break). From there
    down, line by line: a line four columns past the container of the code block
    above goes on with it; paragraph text, or a line four columns past its container,
    under an open paragraph continues it (lazily, if left of its list item's
    content); else a line four columns past its container starts a code block, and
    any other line is paragraph text or a block of its own, as it reads. So a blank
    line ends a paragraph whatever its last line's indentation, and a fence line
    indented into a list item leaves no paragraph open, but under paragraph text a
    line four columns past its container is more of it, whatever it reads like
    (``    ---``, or a fence's run)."""
    k = tail.rfind("\n")
    if k < 0:
        return False
    current = tail[k + 1 :]
    if _columns(current[: len(current) - len(current.lstrip(" \t"))]) < 4:
        return False  # (decided before reading the lines above: the common case)
    top = k  # the newline before the first line read down
    para = False  # a paragraph is open under the line above
    while True:
        above = _line_before(tail, top)
        if above is None or not above.strip():
            break
        if _columns(above[: len(above) - len(above.lstrip(" \t"))]) < 4:
            para = _paragraph_line(above)
            break
        top -= len(above) + 1
    code = -1  # the container of the code block the line above is in, or -1
    while True:
        end = tail.find("\n", top + 1)
        if end < 0 and para:
            return False  # (the current line continues the paragraph, whatever it reads as)
        line = tail[top + 1 : end] if end >= 0 else tail[top + 1 :]
        width = _columns(line[: len(line) - len(line.lstrip(" \t"))])
        if code < 0 or width < code + 4:
            if para and _paragraph_line(line):
                code = -1
            else:
                c = _container(tail[:top], width)
                if width < c + 4:
                    code = -1
                    para = _paragraph_line(line)
                elif not para:
                    code = c
        if end < 0:
            return code >= 0
        top = end


def _lead_columns(line: str) -> int:
    """The indentation of a line read with its newline first (``_line``), in columns."""
    body = line[1:]
    return _columns(body[: len(body) - len(body.lstrip(" \t"))])


def _escaped(before: str) -> bool:
    """The character after ``before`` (read at its end) is backslash-escaped."""
    n = len(before) - len(before.rstrip("\\"))
    return n % 2 == 1


def _text_stop_chars(model: ModelBase) -> tuple["re.Pattern[str]", str]:
    """The characters ``text`` does not read as ``text_char`` at once: backticks and
    tildes, and its start characters (``START``: each start character's whole class
    goes to ``maybe_tag``), as a pattern, and the start characters alone."""
    starts = "".join(m.start_chars for m in [model.cfg.matchers.get("text")] if m is not None)
    starts += "".join(m.start_chars for m in model.cfg.scoped.get("text", {}).values())
    chars = set(starts)
    for c in starts:
        for cls in CLASSES.values():
            if c in cls:
                chars.update(cls)
    start = "".join(sorted(chars))
    return re.compile("[" + re.escape("`~" + start) + "]"), start


#: What ends inline code's text on its line: a backtick, or the line's end.
_SPAN_STOP = re.compile("[`\n]")


def _span_close_on_line(s: str, p: int, length: int) -> int:
    """Where inline code whose opening run of ``length`` backticks ends at ``s[p]`` is
    closed on the same line: the end of the first later run exactly that long, followed
    by a character of ``s`` (a run at the chunk's end may go on); -1 if a line end or
    the chunk's end comes first (then the steps read it: across lines, a span's rows ask
    about the paragraph). Runs of another length are the span's text (CommonMark)."""
    n = len(s)
    tick = _RUN_OF["`"]
    while True:
        m = _SPAN_STOP.search(s, p)
        if m is None or s[m.start()] == "\n":
            return -1
        k = m.start()
        run = tick.match(s, k)
        r = run.end() if run is not None else k + 1
        if r >= n:
            return -1
        if r - k == length:
            return r
        p = r


class _CodeScan:
    """How code is searched for the markers of one code matcher (``_code_scan``): the
    search for a complete marker begun by a symbol start character, the search for one
    of those characters (a marker running off the chunk's end), the search for a word
    marker (None: none), and a matcher that reads the same markers (``tail_viable``).
    Matchers that listen for the same markers share one (the three code states do), so
    that what one state's search found serves the others (``ProseModel._code_stop``)."""

    __slots__ = ("m", "full", "at", "ends", "symbol", "word")

    def __init__(self, m: Matcher) -> None:
        symbols = m.symbol_starts
        pattern = m.scan_pattern("", symbols) if symbols else ""
        self.m = m
        full = re.compile(pattern or "(?!)")
        self.full: Callable[[str, int], "re.Match[str] | None"] = full.search
        self.at: Callable[[str, int], "re.Match[str] | None"] = full.match
        #: the search for a character a complete marker may end with (None: not known)
        self.ends: Callable[[str, int, int], "re.Match[str] | None"] | None = (
            re.compile("[" + re.escape(m.end_chars) + "]").search if m.end_chars else None)
        self.symbol: Callable[[str, int, int], "re.Match[str] | None"] = re.compile(
            "[" + re.escape(symbols) + "]" if symbols else "(?!)").search
        self.word: WordFinder | None = m.word_finder()


#: Per code matcher: (it, its scan); the scans by the markers they read.
_CODE_SCANS: dict[int, tuple[Matcher, _CodeScan]] = {}
_CODE_SCANS_BY_MARKERS: dict[tuple[tuple[object, bool], ...], _CodeScan] = {}


def _code_scan(m: Matcher) -> _CodeScan:
    got = _CODE_SCANS.get(id(m))
    if got is not None and got[0] is m:
        return got[1]
    if len(_CODE_SCANS) >= 64:
        _CODE_SCANS.clear()
        _CODE_SCANS_BY_MARKERS.clear()
    key = tuple((e.marker.pattern, e.prefixed) for e in m.entries)
    scan = _CODE_SCANS_BY_MARKERS.get(key)
    if scan is None:
        scan = _CODE_SCANS_BY_MARKERS[key] = _CodeScan(m)
    _CODE_SCANS[id(m)] = (m, scan)
    return scan


#: How far ahead ``ProseModel._code_next`` searches a chunk at a time.
_CODE_AHEAD = 4096


def _code_marker_from(scan: _CodeScan, s: str, a: int, b: int, words: int) -> int:
    """The first offset in ``s[a:b]`` where a complete marker of ``scan`` begins (each
    start character asked once: a class search, then one match), or where a word marker
    begins that starts at or after ``words`` (at most ``a``) and ends by ``b``; -1 if
    none. ``b`` stays ``MAX_TAG_CHARS`` away from the chunk's end, where a marker may
    run off it (``_code_marker_in``'s). What it says of an offset depends on ``s``
    alone, so one search serves every later question about ``s[a:b]``
    (``ProseModel._code_next``)."""
    found = -1
    x = scan.symbol(s, a, b)
    while x is not None:
        k = x.start()
        if scan.at(s, k) is not None:
            found = k
            break
        x = scan.symbol(s, k + 1, b)
    if scan.word is not None:
        w = scan.word(s, words, b if found < 0 else found)
        if w >= 0:
            found = w
    return found


def _code_marker_in(scan: _CodeScan, s: str, a: int, b: int) -> int:
    """The first offset in ``s[a:b]`` where a marker of ``scan`` may begin: a complete
    one, or the start of one running off the chunk's end; -1 if none. Each of its start
    characters there is asked (a class search, then one match: most code holds none);
    early is never wrong (the steps read what is there). (``_code_marker_from`` answers
    away from the chunk's end, for a fence's lines, from one search of the chunk.)"""
    n = len(s)
    found = -1
    x = scan.symbol(s, a, b)
    while x is not None:
        k = x.start()
        if scan.at(s, k) is not None or (n - k <= MAX_TAG_CHARS and scan.m.tail_viable(s, k)):
            found = k
            break
        x = scan.symbol(s, k + 1, b)
    word = scan.word
    if word is not None:
        bound = b if found < 0 else found
        got = word.last  # (``WordFinder.known``, inlined: asked for every code span)
        if got[0] is s and got[1] <= a <= got[2]:
            w = got[2] if got[2] + word.size <= bound else -1
        else:
            w = word(s, a, bound)
        if w >= 0:
            found = w
        elif b >= n - MAX_TAG_CHARS and n and _WORD_CHAR.match(s[-1]) is not None:
            # (a word marker cut by the chunk's end: the chunk's last word, if it may be one)
            t = _LAST_WORD.search(s, max(a, n - MAX_TAG_CHARS))
            k = t.start() if t is not None else n
            if k < b and (found < 0 or k < found) and scan.m.tail_viable(s, k):
                found = k
    return found


#: ``ProseModel._markup_in_code``'s message for a fence.
_IN_FENCE = "tool-call markup in a fenced code block: shown as text, not run"

#: Per code matcher (by id, with it): the keys of its entries that are real openers
#: (``Config.openers``): those ``code_listens`` gave ``code_opener``'s row, the rest
#: (a message's end) ``code_token_end``'s; and the openers ``_fence_opener_end`` read,
#: by their text (their length).
_CODE_OPENER_KEYS: dict[int, tuple[Matcher, frozenset[str], dict[str, int]]] = {}


_WORD_CHAR = re.compile(r"\w")
_LAST_WORD = re.compile(r"\w+\Z")


def _columns(s: str) -> int:
    """Width of a line head, tabs to the next multiple of four (CommonMark)."""
    if "\t" not in s:
        return len(s)
    col = 0
    for c in s:
        col = (col // 4 + 1) * 4 if c == "\t" else col + 1
    return col


@trait
@mypyc_attr(allow_interpreted_subclasses=True)
class ProseModel(TagModel):
    run_char = ""
    run_len = 0
    #: the run began where a fence may open; the container column it would open in
    run_at_line_start = False
    run_container = 0
    #: the run stands in an indented code block: literal, neither fence nor span
    run_literal = False
    span_len = 0
    span_lines = 0
    fence_char = ""
    fence_len = 0
    #: the column of the fence's container (0 at top level, a list item's content column)
    fence_container = 0
    fence_over_span = 0
    #: The lengths of the backtick runs read inside the open span that, were its own
    #: run unmatched, would each open a span (the innermost last): an opener met in the
    #: span is code if a run of any of these lengths, or of the span's, follows in the
    #: paragraph (CommonMark matches a run with the next run exactly as long). None: none.
    span_inner: list[int] | None = None
    #: A hold (``code_held``, ``span_opener``): where it began, the line window then
    #: (joined) and whether that window had been cut; where the last backtick run of
    #: each length read in it began.
    hold_start = 0
    hold_window = ""
    hold_trimmed = False
    hold_runs: dict[int, int] | None = None
    #: where markup stood in a fence's info string read while holding (``code_opener``)
    hold_marks: list[int] | None = None
    #: the hold began in a backtick fence's info string (``info_opener``): the line's
    #: end makes it a fence (code), a backtick in it a span (the hold goes on there)
    hold_in_info = False
    #: Input read again after a hold ended unmatched runs up to this offset; the runs
    #: read in it (``hold_runs``) tell whether a span opened there closes in it
    #: (``run_unmatched``).
    reread_end = -1
    reread_runs: dict[int, int] | None = None

    def _line(self) -> str:
        """The current line so far, with the newline before it ("" past the window)."""
        # Read back through the pending text, then the window's pieces, to the last
        # newline: no Text event is cut and nothing is joined (the guards ask at every
        # run and line end). A line up to LINE_TAIL long is in the window whatever was
        # flushed when, so this is what the flushed window would say.
        size = 0
        for pieces in (self.text_buf, self.recent):
            k = len(pieces)
            while k:
                k -= 1
                piece = pieces[k]
                nl = piece.rfind("\n")
                if nl >= 0:
                    if size + len(piece) - nl > LINE_TAIL:
                        break
                    line = piece[nl:]
                    if k + 1 < len(pieces):
                        line += "".join(pieces[k + 1 :])
                    if pieces is self.recent and self.text_buf:
                        line += "".join(self.text_buf)
                    return line
                size += len(piece)
                if size > LINE_TAIL:
                    break
            else:
                continue
            break
        t = self.recent_text()
        k = t.rfind("\n")
        return t[k:] if k >= 0 else ""

    # guards
    #: (offset, state, column) of the last ``at_line_start``: ``run_begin`` in the
    #: same step asks the same question of the same line (read once, issue 12 item 5)
    #: (optional, as ``tag._cls``: mypyc 2.4 generates broken C for a tuple-typed
    #: attribute with a tuple default on a trait)
    _fc_asked: tuple[int, str, int | None] | None = None

    def at_line_start(self, ch: str) -> bool:
        """Only indentation and list-item markers on this line so far: a fence may
        open here (CommonMark: three columns at most, unless it starts an item)."""
        col = self._fence_column()
        self._fc_asked = (self.pos, self.state, col)
        return col is not None

    def _fence_column(self) -> int | None:
        """The container column a fence opening here would have, or None: only list
        markers (the fence starts an item: its content column) or indentation within
        three columns of the enclosing list item's content (or of the margin)."""
        return self._column_of(self._line())

    def _column_of(self, line: str, s: str = "", lo: int = 0, end: int = -1) -> int | None:
        """``_fence_column`` of the current line so far, ``line`` (``_line()``; the
        lines before it are read in the window). With ``end`` (the line's newline in
        ``s``, ``s[lo:end]`` the window's end), they are read there if the last two
        decide (``_container_near``), else it says ``_ASK``: the window must be asked."""
        head = line[1:]
        if line[:1] == "\n" and not head.strip(" "):
            markers = ""  # (spaces alone: what LINE_HEAD would say, without it)
            width = len(head)
        else:
            m = LINE_HEAD.match(line)
            if m is None:
                return None
            markers = m.group("markers")
            width = _columns(markers + m.group("indent"))
        if markers:
            # The run starts a list item's content, if that item's marker stands
            # where an item may (within three columns of its own container).
            lead = _columns(markers[: len(markers) - len(markers.lstrip(" \t"))])
            if lead <= 3:
                return width  # (no container is narrower than the margin)
            c = _container_near(s, lo, end, lead) if end >= 0 else self._container_here(lead)
            if c < 0:
                return _ASK
            return width if lead <= c + 3 else None
        if width == 0:
            return 0  # (a line at the margin belongs to no list item: _container says 0)
        c = _container_near(s, lo, end, width) if end >= 0 else self._container_here(width)
        if c < 0:
            return _ASK
        return c if width <= c + 3 else None

    def _container_here(self, width: int) -> int:
        """``_container`` of the current line (indented ``width``), read in the window."""
        tail = self.recent_text()
        return _container(tail[: tail.rfind("\n")], width) if "\n" in tail[:-1] else 0

    def same_run_char(self, ch: str) -> bool:
        return ch == self.run_char

    def run_opens_fence(self, ch: str) -> bool:
        return self.run_at_line_start and self.run_len >= 3

    def run_opens_span(self, ch: str) -> bool:
        return self.run_char == "`" and self.run_len > 0

    def run_is_literal(self, ch: str) -> bool:
        return self.run_literal

    def run_closes_span(self, ch: str) -> bool:
        return self.run_char == "`" and self.run_len == self.span_len

    def fence_may_close(self, ch: str) -> bool:
        if ch != self.fence_char:
            return False
        m = BLANK_HEAD.match(self._line())
        if m is None:
            return False
        col = _columns(m.group(1))
        return self.fence_container <= col <= self.fence_container + 3

    def run_closes_fence(self, ch: str) -> bool:
        return self.run_len >= self.fence_len

    def fence_is_ticks(self, ch: str) -> bool:
        return self.fence_char == "`"

    def line_is_blank(self, ch: str) -> bool:
        """The line this newline ends closes the paragraph, or was not part of it
        (blank, a setext underline, a thematic break, a heading, a list item, a quote):
        an open code span does not run past it."""
        line = self._line()
        if PARAGRAPH_END.match(line) is not None:
            return True
        # (The span's own first line may be such a line: it opened in that block.)
        if self.span_lines > 0:
            return INTERRUPT_LINE.match(line) is not None and self._within_container(line)
        return HEADING_LINE.match(line) is not None

    def run_starts_afresh(self, ch: str) -> bool:
        """A run on a later line of an open span, on a line that interrupts the
        paragraph: the span ended at that line's start, so the run is a new one. So is
        a run after a failed fence's run that closed the span (``fence_to_span``)."""
        if self.span_len == 0:
            return True
        if self.span_lines == 0:
            return False
        line = self._line()
        return INTERRUPT_HEAD.match(line[: len(line) - self.run_len]) is not None and self._within_container(line)

    def _within_container(self, line: str) -> bool:
        """The line's block marker stands within three columns of its container (more
        indented, it is paragraph text: CommonMark)."""
        lead = _columns(line[1 : len(line) - len(line[1:].lstrip(" \t"))])
        tail = self.recent_text()
        return lead <= _container(tail[: tail.rfind("\n")], lead) + 3

    def fence_in_item(self, ch: str) -> bool:
        return self.fence_container > 0

    def fence_outdented(self, ch: str) -> bool:
        """A line of a fence in a list item starts left of the item's content: the item
        ends, and the fence with it (CommonMark: fenced code has no lazy lines)."""
        m = BLANK_HEAD.match(self._line())
        return m is not None and _columns(m.group(1)) < self.fence_container

    def span_given_up(self, ch: str) -> bool:
        return self.span_lines >= SPAN_MAX_LINES

    # actions
    def text_char(self, ch: str) -> None:
        self._text(ch)

    def text_run(self, s: str, i: int, j: int) -> int:
        self._text(s[i:j])
        if j < len(s) and s[j] == "`" and self.state == "text":
            return self._inline_code(s, i, j)
        return j

    def _inline_code(self, s: str, i: int, j: int) -> int:
        """The text state's scan stopped at a backtick ``s[j]``, its line in ``s``
        (``s[i:j]`` just read): inline code opened and closed on that line is read here
        as the steps would read it (issue 27: prose fed whole stopped at every backtick
        twice, and stepped each), and where that is not told at once (the line's head
        may be a fence's column, indented code, an escape; the span crosses a line end
        or the chunk's end) ``j``: the steps read it. Where it is read: run_begin
        (mid-line, after text: no fence column, not literal), run_more through the run,
        open_span, in_code_span's text_char up to a run as long, run_begin and run_more
        through it, run_closes_span → text; the prose after it to the text state's
        next stop, stepped there."""
        n = len(s)
        tick = _RUN_OF["`"]
        matcher = self.matcher("text")
        got = self._inline_scan
        if got is None or got[0] is not matcher:
            # The text state's own scan (its stops, and a start character only where a
            # marker may begin there): a plain "<" in prose goes on as text.
            rx = re.compile(matcher.scan_pattern("`~") or "[`~]")
            # (markers spelt as words, Phi-4's ``functools``: searched for whole)
            got = self._inline_scan = (matcher, rx.search, rx.match, matcher.word_finder())
        search = got[1]
        match = got[2]
        word = got[3]
        starts = matcher.start_chars
        # Where the chunk holds no tilde and no start character but "<", the scan's
        # stops are its backticks and each "<" where a marker may begin: found with
        # str.find (C speed; the regex's class loop reads every character), each "<"
        # asked of the same pattern (issue 27).
        seen = self._inline_chunk
        if seen is None or seen[0] is not s:
            quick = (not matcher.scan_other and "~" not in s
                     and all(c == "<" or c not in s for c in matcher.symbol_starts)
                     and (word is None or matcher.words_anchored))
            self._inline_chunk = seen = (s, quick)
        quick = seen[1]
        lt = -1  # (quick: the next "<" from where the scan reads on)
        far = n - MAX_TAG_CHARS  # (past it, a marker may run off the chunk: the scan's)
        e = j  # the end of the last span read
        length = 0
        k = j  # a backtick a span may open at, where the text state's scan stopped
        first = True
        while True:
            if s[k - 1] == "\\":  # (j > i: a character before it)
                break  # (maybe escaped: run_begin reads it)
            if first or s.find("\n", e, k) >= 0:
                # (a later span on the same line: its head, read below, said the same)
                q = s.rfind("\n", i, k)
                if q < 0 or k - q > LINE_TAIL:
                    break
                line = s[q:k]
                if LINE_HEAD.match(line) is not None or _lead_columns(line) >= 4:
                    break
                first = False
            run = tick.match(s, k)
            r = run.end() if run is not None else k + 1
            f = _span_close_on_line(s, r, r - k) if r < n else -1
            if f < 0 or self._code_stop("in_code_span", s, r, f - (r - k)) >= 0:
                break  # (or markup in it: the steps report it)
            length = r - k
            e = k = f
            # The prose after it, read by the text state's scan: another span goes on
            # at a backtick; any other stop (a marker, a tilde) is stepped by the
            # runner, as after its own scan.
            if quick:
                t = s.find("`", e)
                if t < 0:
                    t = n
                if lt < e:
                    lt = s.find("<", e)
                    if lt < 0:
                        lt = n
                while lt < t:
                    if match(s, lt) is not None:
                        t = lt
                        break
                    lt = s.find("<", lt + 1)
                    if lt < 0:
                        lt = n
                if word is not None:
                    known = word.last  # (``WordFinder.known``, inlined: asked after every span)
                    if known[0] is s and known[1] <= e <= known[2]:
                        if known[2] + word.size <= t:
                            t = known[2]  # (a word marker: the runner's)
                    else:
                        w = word(s, e, t)
                        if w >= 0:
                            t = w
                if t >= n:
                    break
            else:
                m = search(s, e)
                if m is None:
                    break
                t = m.start()
            if t > far or s[t - 1] in starts:
                break  # (what the runner's scan decides at the chunk's end, or after a start character)
            k = t
            if s[t] != "`":
                break
        if k == j:
            return j
        self._text(s[j:k])
        self.span_len = self.run_len = length
        self.span_lines = 0
        self.run_char = "`"
        self.run_at_line_start = False
        self.run_container = 0
        self.run_literal = False
        return k

    def run_begin(self, ch: str) -> None:
        if self.state == "in_fence":
            # A run in a fence can only close it (``fence_run``), and ``fence_may_close``
            # has read its line: where a fence could open here is never asked.
            self.run_at_line_start = False
            self.run_container = 0
            self.run_literal = False
            self.run_char = ch
            self.run_len = 1
            self._text(ch)
            return
        # (the line read once: _fence_column is _column_of(_line()), and nothing
        # between the two reads changes it)
        line = self._line()
        asked = self._fc_asked
        if asked is not None and asked[0] == self.pos and asked[1] == self.state:
            col = asked[2]
            self._fc_asked = None
        else:
            col = self._column_of(line)
        self.run_at_line_start = col is not None
        self.run_container = col or 0
        # Only where it matters (a run in prose, off the fence columns): whether the
        # line is indented code, where backticks are literal (CommonMark).
        # (indented code needs four columns of indentation first: asked of the line)
        self.run_literal = (col is None and self.state == "text" and _lead_columns(line) >= 4
                            and _indented_code(self.recent_text()))
        self.run_char = ch
        self.run_len = 1
        if self.state == "text" and _escaped(line):
            self.run_len = 0  # "\`": that backtick is literal, the run starts after it
        self._text(ch)

    def run_recount(self, ch: str) -> None:
        """A run read inside inline code is read again as a new one: in prose a
        backslash before it escapes its first backtick."""
        line = self._line()
        if _escaped(line[: len(line) - self.run_len]):
            self.run_len -= 1

    def run_more(self, ch: str) -> None:
        self.run_len += 1
        self._text(ch)

    def open_fence(self, ch: str) -> None:
        # From inside inline code: the span this fence would end, kept in case the
        # fence is none after all (a backtick in its info string: then the run closes
        # that span if as long as its opening run, else is inside it), unless the line
        # ended the paragraph by itself (a list item's marker before the run), and the
        # span with it: then the run, no fence, opens a span of its own.
        self.fence_over_span = self.span_len if self.state == "span_run" and not self.run_starts_afresh(ch) else 0
        self.fence_char = self.run_char
        self.fence_len = self.run_len
        self.fence_container = self.run_container

    def open_span(self, ch: str) -> None:
        self.span_len = self.run_len
        self.span_lines = 0
        self.span_inner = None

    def fence_to_span(self, ch: str) -> None:
        """A backtick in a backtick fence's info string: no fence after all (CommonMark);
        its run opened inline code instead, or was inline in the span it would have
        ended, and this backtick is read in it. As long as that span's opening run, it
        closed the span: ``span_len`` 0 says no span is open, and ``run_starts_afresh``
        reads this backtick's run as a new one, in prose. (Rather than a row of its own
        to ``text``: the backtick's run is read where any run in an ended span is.)"""
        # (an opener held from the info string stands after the fence's run)
        held_after_run = self.hold_in_info and self.code_held is not None
        self.hold_in_info = False  # (an opener held from the info string: in the span now)
        if self.fence_over_span == self.fence_len:
            self.span_len = 0
            if self.code_held is not None:
                self.hold_as_code(ch)  # (a held opener was in that span: code)
        elif self.fence_over_span:
            self.span_len = self.fence_over_span  # the span it would have ended goes on
            self.run_char = "`"
            self.run_len = self.fence_len
            if self.run_closes_inner(ch):
                if held_after_run:
                    # (the inner span it closes ended before the held opener: not code)
                    inner = self.span_inner
                    assert inner is not None
                    del inner[inner.index(self.run_len):]
                else:
                    self.close_inner(ch)
            elif held_after_run:
                # The run stands before the held opener: a span it opens would hold it
                # (open_inner only notes runs after a held opener). Found by the
                # CommonMark oracle: ``y\n````a`b\n ```<opener> ```` ran the call.
                inner = self.span_inner
                if inner is None:
                    self.span_inner = [self.run_len]
                else:
                    inner.append(self.run_len)
            else:
                self.open_inner(ch)
        else:
            self.span_len = self.fence_len
            self.span_lines = 0
            self.span_inner = None

    def span_line_end(self, ch: str) -> None:
        self.span_lines += 1
        self._text(ch)

    # markup in code (issue 22, items 7 to 9)
    def _code_stop(self, state: str, s: str, a: int, b: int) -> int:
        """Where in ``s[a:b]`` a marker that the code state ``state`` listens for may
        begin (``_code_marker_in``), or -1: where prose's runs stop reading code, so
        that the steps read the marker. (A fence's lines ask ``_code_next``.)"""
        if a >= b:
            return -1
        scans = self._code_scans
        if scans is None:
            scans = self._code_scans = {}
        scan = scans.get(state)
        if scan is None:
            m = self.cfg.matchers.get(state)
            if m is None:
                return -1
            scan = scans[state] = _code_scan(m)
        return _code_marker_in(scan, s, a, b)

    #: (each code state's scan, as ``_code_stop`` first asked it; optional, as ``_fc_asked``)
    _code_scans: dict[str, _CodeScan] | None = None

    def _code_next(self, s: str, a: int, b: int) -> int:
        """``_code_stop`` of ``in_fence`` (and of ``fence_info``: ``_code_shared``) for
        ``s[a:b]``, ``b`` away from the chunk's last MAX_TAG_CHARS characters, through
        what an earlier search of the chunk found (``_code_seen``): a fence's lines asked
        one search each (issue 27, the hostile "fences" input). The chunk is searched
        ahead in windows of at least ``_CODE_AHEAD`` characters (``_code_marker_from``),
        each read once: where one found nothing, the next goes on from its end."""
        scan = self._fence_scan
        if scan is None:
            m = self.cfg.matchers.get("in_fence")
            if m is None:
                return -1
            scan = self._fence_scan = _code_scan(m)
        seen = self._code_seen
        frm = since = words = a
        if seen is not None and seen[0] is s and seen[1] is scan and seen[2] <= a:
            x = seen[4]
            if x >= a:
                return x if x < b else -1
            upto = seen[3]
            if x < 0 and b <= upto:
                return -1
            if x < 0 and a <= upto:
                # (nothing up to ``upto``: on from there; a word marker may have run past it)
                frm = seen[2]
                since = upto
                words = max(frm, upto - MAX_TAG_CHARS)
        upto = min(len(s) - MAX_TAG_CHARS, max(b, since + _CODE_AHEAD))
        x = _code_marker_from(scan, s, since, upto, words)
        if 0 <= x < a:
            frm = since = words = a  # (a word marker begun before ``a``: asked afresh from there)
            upto = min(len(s) - MAX_TAG_CHARS, max(b, a + _CODE_AHEAD))
            x = _code_marker_from(scan, s, a, upto, a)
        self._code_seen = (s, scan, frm, upto, x)
        return x if x < b else -1

    #: ``in_fence``'s scan (``_code_next``; optional, as ``_fc_asked``)
    _fence_scan: _CodeScan | None = None

    def _code_shared(self) -> bool:
        """``fence_info`` listens for the markers ``in_fence`` does (``code_listens``):
        ``_code_next`` answers for it too."""
        shared = self._code_info_shared
        if shared is None:
            m = self.cfg.matchers.get("in_fence")
            k = self.cfg.matchers.get("fence_info")
            shared = self._code_info_shared = m is not None and k is not None and _code_scan(m) is _code_scan(k)
        return shared

    #: (``_code_shared``, once asked: the configuration does not change)
    _code_info_shared: bool | None = None

    #: (the chunk, the scan, from where to where it was searched, the first marker
    #: found there or -1): see ``_code_next`` (optional, as ``_fc_asked``)
    _code_seen: tuple[str, _CodeScan, int, int, int] | None = None

    def span_holds(self, ch: str) -> bool:
        return self.code_held is not None

    def fence_left_span(self, ch: str) -> bool:
        """The fence's line had ended the paragraph, and the open span with it, before
        its run (``open_fence``). (A hold its info string began is no span's of before:
        ``fence_to_span`` goes on with it.)"""
        return self.fence_over_span == 0 and not self.hold_in_info

    def run_closes_inner(self, ch: str) -> bool:
        """A backtick run as long as one in ``span_inner``: it closes that span."""
        inner = self.span_inner
        return inner is not None and self.run_char == "`" and self.run_len in inner

    def run_unmatched(self, ch: str) -> bool:
        """A backtick run in input read again after a hold, with no run as long after it
        there (``reread_runs``): unmatched, so literal (CommonMark). That input ended
        where its paragraph did, so a span opened in it closes in it or not at all."""
        start = self.pos - self.run_len
        if start >= self.reread_end or self.run_char != "`" or self.run_len == 0:
            return False
        runs = self.reread_runs
        return runs is None or runs.get(self.run_len, -1) <= start

    def _unmatched_at(self, start: int, length: int) -> bool:
        """``run_unmatched`` of a run of ``length`` backticks at offset ``start``."""
        if start >= self.reread_end:
            return False
        runs = self.reread_runs
        return runs is None or runs.get(length, -1) <= start

    def _code_tag(self, ch: str) -> str:
        """The held tag, complete with ``ch``, taken as text (no block opens for it)."""
        tag = self.tag + ch
        self.tag = ""
        self._tag_version += 1
        return tag

    def _markup_in_code(self, offset: int, where: str) -> None:
        # (``_fence_opener_read`` writes the one for a fence itself: keep them alike)
        self._emit(Diagnostic("markup_in_code", f"tool-call markup in {where}: shown as text, not run", offset, "",
                              "noise"))

    def code_opener(self, ch: str) -> None:
        """A block opener (or a message header's start) in a fenced code block: text,
        reported, so that a proxy can tell a call was shown and not run."""
        start = self.tag_start
        tag = self._code_tag(ch)
        if self.code_held is None:
            self._markup_in_code(start, "a fenced code block")
        else:
            # (a fence's info string read in a span that holds an opener: reported with
            # the hold if it turns out code, read again if not)
            marks = self.hold_marks
            if marks is None:
                self.hold_marks = [start]
            else:
                marks.append(start)
        self._text(tag)

    def _fence_opener_end(self, s: str, k: int) -> int:
        """Where ``in_fence``'s scan stopped, at ``s[k]``: the end of the opener that the
        steps would read there as ``code_opener``'s row (``tag_begin_enter``, the held
        tag's run to the character that completes it, its hit: unanchored, no block
        open, an opener rather than a message's end), whole in ``s``; else -1 (the
        steps read it). Decided once per text the scan matches there (what the held
        tag's run reads is that text's when it ends inside it)."""
        m = self.cfg.matchers.get("in_fence")
        if m is None or self.block is not None or s[k] in m.one_chars:
            return -1
        got = _CODE_OPENER_KEYS.get(id(m))
        if got is None or got[0] is not m:
            if len(_CODE_OPENER_KEYS) >= 64:
                _CODE_OPENER_KEYS.clear()
            real = self.cfg.openers
            patterns = {e.marker.pattern for e in real.entries} if real is not None else set()
            got = _CODE_OPENER_KEYS[id(m)] = (m, frozenset(e.key for e in m.entries if e.marker.pattern in patterns), {})
        # A tag whose prefix up to the first character a marker may end with is complete
        # is that marker (``Matcher.tag_end``): its verdict is kept by that text.
        ends = _code_scan(m).ends
        x = ends(s, k + 1, k + MAX_TAG_CHARS) if ends is not None else None
        if x is None and ends is not None:
            return -1  # (no character a marker may end with in reach: none is complete here)
        seen = s[k : x.end()] if x is not None else ""
        if seen:
            length = got[2].get(seen)
            if length is not None:
                return k + length
        j, kind = m.tag_end(s[k], s, k + 1)
        if kind != COMPLETE:
            return -1
        hit = m.classify(s[k : j + 1])[1]
        if hit is None or hit.entry.anchor or hit.entry.key not in got[1]:
            return -1
        if seen and j + 1 == k + len(seen):
            verdicts = got[2]
            if len(verdicts) >= 1024:
                verdicts.clear()
            verdicts[seen] = j + 1 - k
        return j + 1

    def _fence_opener_read(self, start: int) -> None:
        """``code_opener`` of the opener at ``start`` that ``_fence_opener_end`` found
        (its text is read on with the fence's): what the steps leave of the held tag, and
        the report (``_markup_in_code``'s)."""
        self.origin = "in_fence"
        self.tag_start = start
        self.tag_matcher = self.cfg.matchers.get("in_fence")
        self._tag_version += 2  # (tag_begin_enter's, _code_tag's)
        self.flush()
        self.out.append(Diagnostic("markup_in_code", _IN_FENCE, start, "", "noise"))

    def info_opener(self, ch: str) -> None:
        """A block opener (or a message header's start) in a fence's info string. A
        tilde fence is certain: code. A backtick fence is one only if no backtick follows
        on its line (else its run opened inline code, CommonMark): from the opener on,
        the input is held until the line ends (a fence: code) or a backtick comes (a
        span: held on as any opener in a span, ``fence_to_span``)."""
        if self.code_held is not None or self.fence_char != "`" or self.tag_start < self.reread_end:
            self.code_opener(ch)
            return
        self.span_opener(ch)
        self.hold_in_info = True

    def span_held_before(self, ch: str) -> bool:
        """A hold from a span open before this fence's line (not one its info string began)."""
        return self.code_held is not None and not self.hold_in_info

    def info_holds(self, ch: str) -> bool:
        """An opener held from this fence's info string (``info_opener``): the end of its
        line, or of the stream, makes the fence, and the opener code."""
        return self.hold_in_info and self.code_held is not None

    def info_end(self, ch: str = "") -> None:
        """The info string's line ended: a fence. An opener held from the info string was
        code."""
        if self.hold_in_info:
            self.hold_as_code(ch)

    def span_opener(self, ch: str) -> None:
        """A block opener (or a message header's start) in an open code span. If the span
        closes, it was code; if its paragraph ends first, the span's run was literal and
        the opener markup. So from the opener on, the input is held (``code_held``: the
        text before it is shown at once) until one of them comes. In input read again
        after a hold, every span that opens closes there (``run_unmatched``): code at once."""
        start = self.tag_start
        tag = self._code_tag(ch)
        if self.code_held is not None:
            self._text(tag)  # (more of the hold)
            return
        if start < self.reread_end:
            self._markup_in_code(start, "a code span")
            self._text(tag)
            return
        self.hold_window = self.recent_text()  # (what is pending is shown: flushed first)
        self.hold_trimmed = self.recent_trimmed
        self.hold_start = start
        self.hold_runs = {}
        self.code_held = []
        self._text(tag)

    def open_inner(self, ch: str) -> None:
        """A backtick run inside an open span that closes nothing kept open: were the
        span's own run unmatched, it would open a span (``span_inner``). While a hold is
        on, runs stand after the held opener and cannot put it in code: only noted."""
        if self.run_char != "`" or self.run_len == 0:
            return
        runs = self.hold_runs
        if self.code_held is not None and runs is not None:
            runs[self.run_len] = self.pos - self.run_len
            return
        inner = self.span_inner
        if inner is None:
            self.span_inner = [self.run_len]
        else:
            inner.append(self.run_len)

    def close_inner(self, ch: str) -> None:
        """A backtick run that closes a span opened inside the open one (and every span
        opened after that one). A held opener stands inside it: code."""
        inner = self.span_inner
        assert inner is not None
        del inner[inner.index(self.run_len):]
        if self.code_held is not None:
            self.hold_as_code(ch)

    def hold_as_code(self, ch: str = "") -> None:
        """The span a held opener stands in closed: it was code. What was held is shown,
        with a ``markup_in_code`` Diagnostic."""
        held = self.code_held or []
        self.code_held = None
        self.hold_runs = None
        self.hold_window = ""
        where = "a fenced code block" if self.hold_in_info else "a code span"
        self.hold_in_info = False
        # (not _emit: what is pending in text_buf came after the held text)
        self.out.append(Diagnostic("markup_in_code", f"tool-call markup in {where}: shown as text, not run",
                                   self.hold_start, "", "noise"))
        for at in self.hold_marks or ():
            self.out.append(Diagnostic("markup_in_code", "tool-call markup in a fence's info string, shown as text and "
                                       "not run (docs/commonmark.md)", at, "", "noise"))
        self.hold_marks = None
        text = "".join(held)
        if text:
            self.out.append(Text(text, text))

    def hold_as_markup(self, ch: str = "") -> None:
        """The paragraph ended (a blank line, a line that interrupts it, a fence, the span
        given up, the stream's end, a message's end) with the held opener's span
        unmatched: its run was literal (CommonMark) and the opener markup. The held
        input is read again as prose (``pushback``, before ``ch``, read again too), on
        the line window as it was when the hold began; a run read in it again that has
        no run as long after it there opens no span (``run_unmatched``)."""
        held = "".join(self.code_held or ()) + "".join(self.text_buf)
        self.code_held = None
        self.hold_in_info = False
        self.text_buf = []
        w = self.hold_window
        self.recent = [w]
        self.recent_len = len(w)
        self.recent_trimmed = self.hold_trimmed
        self.hold_window = ""
        # (a run that ended it is read again as the first thing past that input)
        self.reread_end = self.pos - (self.run_len if self.state == "span_run" else 0)
        self.reread_runs = self.hold_runs
        self.hold_runs = None
        self.hold_marks = None
        self.span_inner = None
        self.span_len = 0
        self.pushback = held + self.pushback

    def code_token_end(self, ch: str) -> None:
        """A token that ends a message (harmony's ``<|end|>``) in code: it ends every
        Markdown context opened in the message (an open span was unmatched: a hold is
        read again, the token after it). Framing, as in prose; the next message begins
        on a line of its own."""
        if self.code_held is not None:
            tag, self.tag = self.tag, ""
            self._tag_version += 1
            start = self.tag_start
            self.hold_as_markup(ch)
            self.reread_end = start
            self.pushback += tag
            self.redo = True
            return
        tag = self._code_tag(ch)
        self.flush()
        self.out.append(Text("", tag))
        self._saw("\n\n")

    # state runs (issue 12, item 5: backtick-dense prose stepped every character)
    def run_more_run(self, s: str, i: int) -> int:
        """The state run of ``span_run``: the rest of the run of ``run_char``
        (``same_run_char`` → ``run_more`` on each, a self-loop)."""
        m = _RUN_OF[self.run_char].match(s, i) if self.run_char in _RUN_OF else None
        if m is None:
            return i
        j = m.end()
        self.run_len += j - i
        self._text(s[i:j])
        return j

    def prose_run(self, s: str, i: int) -> int:
        """The state run of ``tick_run`` and of every fence state (``fence_info``,
        ``in_fence``, ``fence_line``, ``fence_run``, ``fence_tail``): it reads on from
        state to state as their rows would, through a fence's opening run, its info
        string, its lines (the text up to a line that may close it, or end its list
        item), its closing line, and the prose after it up to the next backtick or
        tilde run, which it reads too. A fence after a fence is one call, not one per
        state (issue 12: the hostile "fences" input changed state every few characters,
        and the runner asked a state run again at each change).

        It stops, leaving the machine in the state the steps would, where its states
        hand over: at the chunk's end, at a start character in prose (``maybe_tag``), in
        inline code (``in_code_span``: a span's rows read the lines of its paragraph).
        Every character it reads is text: what it takes, ``s[a:p]``, goes to the
        buffer in one piece, before any guard reads the window and when it stops.

        The current line, which the guards read (``_line()``), is cut from ``s`` when
        it began at or after ``i`` (within LINE_TAIL: what ``_line()`` would return);
        else the text so far goes to the buffer and ``_line()`` is asked.

        A run's registers (``run_*``) are read only in the run's own states, which are
        entered through ``run_begin`` only, which sets them all: a run read whole here
        (it opens a fence, or closes one, or is text) leaves them as they were; they
        are set where the chunk ends in the run.

        The states are taken in the order a fence goes through them, each falling
        into the next (a state above is reached by going round): a fence is read in
        one or two rounds. The state is kept in a local and set when it stops: nothing
        it calls reads it."""
        if self.code_held is not None:
            return i  # (a fence's info string read in a span that holds an opener: stepped)
        n = len(s)
        p = i
        a = i  # s[a:p]: read, not yet in the buffer
        st = self.state
        # (Code's markers are asked of ``_code_next`` away from the chunk's end, of
        # ``_code_stop`` within MAX_TAG_CHARS of it: a marker may run off it there.)
        near_end = n - MAX_TAG_CHARS
        while p < n:
            if st == "in_fence":
                # text_char up to where a run may close the fence (fence_may_close:
                # the fence's character, the line blank so far and indented within
                # three columns of its container), or in a list item up to the line's
                # end (fence_in_item → fence_line). A run there that cannot close it
                # (shorter than the fence's, or followed by blanks and then anything
                # but a line end) is read through: the steps (fence_run, fence_tail)
                # only send its characters back here as text.
                c = self.fence_char
                lo = self.fence_container
                hi = lo + 3
                stop = n
                if lo > 0:
                    k = s.find("\n", p)
                    if k >= 0:
                        stop = k
                j = stop
                close = 0  # at j < stop: _past_close's verdict (-1: the chunk ends first)
                # On the current line: its head so far is blank, then blanks, then c.
                # (What BLANK_HEAD finds in _line(), told by the last character read
                # where it is a line end or no blank: most lines, and every character
                # fed alone, are told without reading the line back.)
                if p > i:
                    last = s[p - 1]
                else:
                    last = self.text_buf[-1][-1:] if self.text_buf else self.recent[-1][-1:]
                head: str | None = None
                if last == "\n":
                    head = ""
                elif last == " " or last == "\t" or not last:
                    q = s.rfind("\n", i, p) if p > i else -1
                    if q >= 0 and p - q <= LINE_TAIL:
                        head = s[q + 1 : p]
                        if head.strip(" \t"):
                            head = None
                    else:
                        if p > a:
                            self._text(s[a:p])
                            a = p
                        h = BLANK_HEAD.match(self._line())
                        head = h.group(1) if h is not None else None
                if head is not None:
                    b = p
                    if s[b] in " \t":
                        m = _BLANKS.match(s, p)
                        b = m.end() if m is not None else p
                    # (blanks hold no line end: b is on the current line)
                    if b < stop and s[b] == c and lo <= (len(head) + b - p if "\t" not in head and "\t" not in s[p:b]
                                                          else _columns(head + s[p:b])) <= hi:
                        close = self._past_close(s, b)
                        if close < 0:
                            j = b
                # On a later line: a newline, blanks, then c.
                if j == stop:
                    k = s.find("\n", p, stop)
                    if k >= 0:
                        rx = _CLOSE_AT.get(c, _NEVER)
                        while True:
                            m = rx.search(s, k, stop)
                            if m is None:
                                break
                            r = m.end() - 1
                            k = r
                            if lo <= _columns(m.group(1)) <= hi:
                                close = self._past_close(s, r)
                                if close < 0:
                                    j = r
                                    break
                                k = close
                seen = self._code_seen
                if j >= near_end:
                    mk = self._code_stop("in_fence", s, p, j)
                elif seen is not None and seen[0] is s and seen[4] >= p and seen[2] <= p and seen[1] is self._fence_scan:
                    mk = seen[4] if seen[4] < j else -1  # (``_code_next``'s first answer, inline)
                else:
                    mk = self._code_next(s, p, j)
                while mk >= 0:
                    # An opener whole in the chunk: code_opener's row, read here (issue 27:
                    # the hostile "fences" input left the run at every one); anything else
                    # (a message's end, a marker cut by the chunk's end) the steps read.
                    # (Not asked in a token-sized chunk's last MAX_TAG_CHARS: a marker
                    # there is mostly cut by its end.)
                    if mk >= near_end:
                        break
                    e = self._fence_opener_end(s, mk)
                    if e < 0 or e > j:
                        break
                    if mk > a:
                        self.text_buf.append(s[a:mk])
                        a = mk
                    self._fence_opener_read(self.pos - i + mk)
                    p = e
                    if j >= near_end:
                        mk = self._code_stop("in_fence", s, p, j)
                    else:
                        mk = self._code_next(s, p, j)
                if mk >= 0:
                    p = mk  # (markup, or a message's end: the steps read it)
                    break
                p = j
                if p >= n:
                    break
                if p == stop:
                    p += 1
                    st = "fence_line"
                    if p >= n:
                        break
                elif close < -1:
                    # fence_may_close → run_begin, run_more through the run,
                    # run_closes_fence → fence_tail, blanks, and the line end closes it
                    p = -close - 1
                    st = "text"
                    if p >= n:
                        break
                else:
                    # the same, up to the chunk's end: in the run, or in its blanks
                    self.run_at_line_start = False
                    self.run_container = 0
                    self.run_literal = False
                    self.run_char = c
                    m = _RUN_OF[c].match(s, p)
                    r = m.end() if m is not None else p + 1
                    self.run_len = r - p
                    st = "fence_run" if r >= n else "fence_tail"
                    p = n
                    break
            if st == "fence_line":
                # blanks and line ends, then at the first other character: fence_outdented
                # → text, else in_fence (read again there)
                m = _LINE_BLANKS.match(s, p)
                if m is not None:
                    p = m.end()
                    if p >= n:
                        break
                if p > i:
                    last = s[p - 1]
                else:
                    last = self.text_buf[-1][-1:] if self.text_buf else self.recent[-1][-1:]
                if last == "\n":
                    outdented = self.fence_container > 0  # (at the line's start: column 0)
                else:
                    q = s.rfind("\n", i, p) if p > i else -1
                    if q >= 0 and p - q <= LINE_TAIL:
                        line = s[q:p]
                    else:
                        if p > a:
                            self._text(s[a:p])
                            a = p
                        line = self._line()
                    h = BLANK_HEAD.match(line)
                    outdented = h is not None and _columns(h.group(1)) < self.fence_container
                if not outdented:
                    st = "in_fence"
                    continue
                st = "text"
            if st == "fence_run":
                # (a chunk ended in a closing run) run_more; then run_closes_fence →
                # fence_tail, else in_fence: the character after it is read again there
                m = _RUN_OF[self.run_char].match(s, p) if self.run_char in _RUN_OF else None
                if m is not None:
                    self.run_len += m.end() - p
                    p = m.end()
                    if p >= n:
                        break
                if self.run_len < self.fence_len:
                    st = "in_fence"
                    continue
                st = "fence_tail"
            if st == "fence_tail":
                # blanks; a line end closes the fence (text), anything else goes back in
                m = _TAIL_BLANKS.match(s, p)
                if m is not None:
                    p = m.end()
                    if p >= n:
                        break
                if s[p] != "\n":
                    st = "in_fence"
                    continue
                p += 1
                st = "text"
                if p >= n:
                    break
            if st == "text":
                # text_char up to a backtick, a tilde or a start character
                stops = self._text_stops
                if stops is None:
                    stops = self._text_stops = _text_stop_chars(self)
                m = stops[0].search(s, p)
                if m is None:
                    p = n
                    break
                p = m.start()
                ch = s[p]
                if ch in stops[1]:
                    break  # (a start character: maybe_tag, the runner's)
                q = s.rfind("\n", i, p) if p > i else -1
                if q >= 0 and p - q <= LINE_TAIL:
                    line = s[q:p]
                else:
                    if p > a:
                        self._text(s[a:p])
                        a = p
                    line = self._line()
                    q = -1
                if line == "\n":
                    col: int | None = 0  # (what _column_of says of a line start, at once)
                else:
                    # the lines before, read in s where the two above decide (the window's
                    # end: LINE_TAIL characters back at most), else in the window
                    col = self._column_of(line, s, i if p - LINE_TAIL < i else p - LINE_TAIL, q) if q >= 0 else _ASK
                    if col == _ASK:
                        if p > a:
                            self._text(s[a:p])
                            a = p
                        col = self._column_of(line)
                if col is None and ch == "~":
                    p += 1  # (at_line_start fails: text_char)
                    continue
                # run_begin, in prose (a backslash before it escapes its first backtick)
                literal = False
                if col is None and _lead_columns(line) >= 4:
                    if p > a:
                        self._text(s[a:p])  # (the lines before are read in the window)
                        a = p
                    literal = _indented_code(self.recent_text())
                run_len = 0 if line[-1:] == "\\" and _escaped(line) else 1
                # run_more through the run, then tick_run's rows for the character after
                # it, which is read again where they lead
                m = _RUN_OF[ch].match(s, p)
                r = m.end() if m is not None else p + 1
                run_len += r - p - 1
                if r >= n:
                    self.run_at_line_start = col is not None
                    self.run_container = col or 0
                    self.run_literal = literal
                    self.run_char = ch
                    self.run_len = run_len
                    st = "tick_run"
                    p = n
                    break
                p = r
                if col is not None and run_len >= 3:
                    self.fence_over_span = 0  # open_fence (from tick_run: no span to keep)
                    self.fence_char = ch
                    self.fence_len = run_len
                    self.fence_container = col
                    st = "fence_info"
                elif literal:
                    continue  # (text)
                elif ch == "`" and run_len > 0 and self._unmatched_at(self.pos - i + p - run_len, run_len):
                    continue  # (text: run_unmatched)
                elif ch == "`" and run_len > 0:
                    self.span_len = run_len  # open_span
                    self.span_lines = 0
                    self.span_inner = None
                    e = _span_close_on_line(s, p, run_len)
                    if e < 0 or self._code_stop("in_code_span", s, p, e - run_len) >= 0:
                        st = "in_code_span"
                        break
                    # Inline code closed on this line (issue 27: most spans): what the
                    # steps do, read here. in_code_span's text_char up to the closing
                    # run; its run_begin there (mid-line: no fence column; not in
                    # prose: neither literal nor escaped) and run_more through it; then
                    # span_run's run_closes_span → text, the character after it read
                    # again there: by the text state's own scan, so it stops here.
                    self.run_at_line_start = False
                    self.run_container = 0
                    self.run_literal = False
                    self.run_char = "`"
                    self.run_len = run_len
                    p = e
                    st = "text"
                    break
                else:
                    continue  # (text)
            if st == "tick_run":
                # (a chunk ended in the run) the same, from its registers
                c = self.run_char
                m = _RUN_OF[c].match(s, p) if c in _RUN_OF else None
                if m is not None:
                    self.run_len += m.end() - p
                    p = m.end()
                    if p >= n:
                        break
                if self.run_at_line_start and self.run_len >= 3:
                    self.fence_over_span = 0
                    self.fence_char = c
                    self.fence_len = self.run_len
                    self.fence_container = self.run_container
                    st = "fence_info"
                elif self.run_literal:
                    st = "text"
                    continue
                elif c == "`" and self.run_len > 0 and self._unmatched_at(self.pos - i + p - self.run_len, self.run_len):
                    st = "text"
                    continue
                elif c == "`" and self.run_len > 0:
                    self.span_len = self.run_len
                    self.span_lines = 0
                    self.span_inner = None
                    e = _span_close_on_line(s, p, self.run_len)
                    if e < 0 or self._code_stop("in_code_span", s, p, e - self.run_len) >= 0:
                        st = "in_code_span"
                        break
                    # (closed on this line: as below, from the text state)
                    self.run_at_line_start = False
                    self.run_container = 0
                    self.run_literal = False
                    p = e
                    st = "text"
                    break
                else:
                    st = "text"
                    continue
            if st == "fence_info":
                # text_char through the line end (fence_in_item → fence_line, else
                # in_fence); a backtick in a backtick fence's info string is stepped
                # (no fence after all)
                k = s.find("\n", p)
                if self.fence_char == "`":
                    t = s.find("`", p, k if k >= 0 else n)
                    if t >= 0:
                        k = t  # (read up to it, markup before it stepped first)
                t = k if k >= 0 else n
                shared = self._code_info_shared
                if p >= t:
                    mk = -1
                elif t >= near_end or not (shared if shared is not None else self._code_shared()):
                    mk = self._code_stop("fence_info", s, p, t)
                else:
                    mk = self._code_next(s, p, t)
                if mk >= 0:
                    p = mk
                    break
                if k >= 0 and s[k] == "`":
                    p = k
                    break
                if k < 0:
                    p = n
                    break
                p = k + 1
                st = "fence_line" if self.fence_container > 0 else "in_fence"
            elif st not in _PROSE_RUN_STATES:
                break
        self.state = st
        if p > a:
            self._text(s[a:p])
        return p

    #: (the text state's matcher, its scan's search): ``_inline_code``'s (optional, as
    #: ``_fc_asked``)
    _inline_scan: tuple[Matcher, Callable[[str, int], re.Match[str] | None],
                        Callable[[str, int], re.Match[str] | None],
                        WordFinder | None] | None = None
    #: (the chunk, whether ``_inline_code`` finds its stops with str.find) (optional)
    _inline_chunk: tuple[str, bool] | None = None

    #: (the pattern of the characters prose stops at, its start characters): see
    #: ``_text_stop_chars``; None until first asked (optional, as ``_fc_asked``)
    _text_stops: tuple["re.Pattern[str]", str] | None = None

    def _past_close(self, s: str, p: int) -> int:
        """For a run of the fence's character at ``p`` where a closing fence may stand:
        where reading goes on in ``in_fence`` when it closes nothing (shorter than the
        fence, or followed by blanks and more on its line); when it closes the fence,
        ``-2 - t`` for the line end at ``t``; -1 when the chunk ends before that is
        known."""
        run = _RUN_OF[self.fence_char].match(s, p)
        r = run.end() if run is not None else p
        n = len(s)
        if r >= n:
            return -1
        if r - p < self.fence_len:
            return r
        tail = _TAIL_BLANKS.match(s, r)
        t = tail.end() if tail is not None else r
        if t >= n:
            return -1
        if s[t] == "\n":
            return -2 - t
        return t


STATES = (
    StateDecl("text", "visible prose", owner="prose", sink="text_char"),
    StateDecl("tick_run", "a run of backticks or tildes in prose: code span or fence?", owner="prose"),
    StateDecl("in_code_span", "inline code: markup is text", owner="prose", sink="text_char"),
    StateDecl("span_run", "backticks inside inline code: does the span close?", owner="prose"),
    StateDecl("fence_info", "the rest of a fence's opening line: its info string", owner="prose", sink="text_char"),
    StateDecl("in_fence", "a fenced code block: markup is text", owner="prose", sink="text_char"),
    StateDecl("fence_line", "the indentation of a line in a fence in a list item: does the item end?", owner="prose"),
    StateDecl("fence_run", "backticks or tildes at a line start in a fence: does it close?", owner="prose"),
    StateDecl("fence_tail", "after a closing run: only spaces may follow a closing fence", owner="prose"),
)

RULES = (
    *on("text", START, "maybe_tag", "tag_begin", rank=1),
    *on("text", ["tick"], "tick_run", "run_begin"),
    *on("text", ["tilde"], "tick_run", "run_begin", when=["at_line_start"], rank=10),
    *on("text", but("tick", START), "text", "text_char", rank=90),
    *on("text", [EOF_TRIGGER], "text"),
    # backtick/tilde runs: inline code or a fence
    *on("tick_run", ["tick", "tilde"], "tick_run", "run_more", when=["same_run_char"], rank=10),
    *on("tick_run", ALL, "fence_info", "open_fence", "reprocess", when=["run_opens_fence"], rank=20),
    *on("tick_run", ALL, "text", "reprocess", when=["run_is_literal"], rank=25),
    *on("tick_run", ALL, "text", "reprocess", when=["run_unmatched"], rank=27),
    *on("tick_run", ALL, "in_code_span", "open_span", "reprocess", when=["run_opens_span"], rank=30),
    *on("tick_run", ALL, "text", "reprocess", rank=90),
    *on("tick_run", [EOF_TRIGGER], "text"),
    # inline code: across line ends within a paragraph
    *on("in_code_span", START, "maybe_tag", "tag_begin", rank=1),
    *on("in_code_span", ["tick"], "span_run", "run_begin"),
    *on("in_code_span", ["tilde"], "span_run", "run_begin", when=["at_line_start"], rank=10),
    # (the paragraph ends with a held opener's span unmatched: the opener was markup)
    *on("in_code_span", ["nl"], "text", "hold_as_markup", "reprocess", when=["span_holds", "line_is_blank"], rank=8),
    *on("in_code_span", ["nl"], "text", "hold_as_markup", "reprocess", when=["span_holds", "span_given_up"], rank=9),
    *on("in_code_span", ["nl"], "text", "text_char", when=["line_is_blank"], rank=10),
    *on("in_code_span", ["nl"], "text", "text_char", when=["span_given_up"], rank=20),
    *on("in_code_span", ["nl"], "in_code_span", "span_line_end", rank=90),
    *on("in_code_span", but("tick", "nl", START), "in_code_span", "text_char", rank=90),
    *on("in_code_span", [EOF_TRIGGER], "text", "hold_as_markup", when=["span_holds"], rank=10),
    *on("in_code_span", [EOF_TRIGGER], "text", rank=90),
    # (a hold is on only in a span, or in a fence's info string read in one: the tag is
    # from there; one the info string began ends with its line, the stream's end too:
    # a fence, the opener code)
    *on("maybe_tag", [EOF_TRIGGER], "text", "tag_release_eof", "info_end", when=["info_holds"],
        rank=RANK_RETURN - 1001),
    *on("maybe_tag", [EOF_TRIGGER], "text", "tag_release_eof", "hold_as_markup", when=["span_holds"],
        rank=RANK_RETURN - 1000),
    *on("span_run", ["tick", "tilde"], "span_run", "run_more", when=["same_run_char"], rank=10),
    # a fence opening at a line start ends the paragraph, and the span with it
    *on("span_run", ALL, "fence_info", "open_fence", "reprocess", when=["run_opens_fence"], rank=15),
    *on("span_run", ALL, "text", "hold_as_markup", "reprocess", when=["span_holds", "run_starts_afresh"], rank=16),
    *on("span_run", ALL, "tick_run", "run_recount", "reprocess", when=["run_starts_afresh"], rank=17),
    *on("span_run", ALL, "text", "hold_as_code", "reprocess", when=["span_holds", "run_closes_span"], rank=19),
    *on("span_run", ALL, "text", "reprocess", when=["run_closes_span"], rank=20),
    # (a run that, were the span's own unmatched, would close a span opened in it, or open one)
    *on("span_run", ALL, "in_code_span", "close_inner", "reprocess", when=["run_closes_inner"], rank=80),
    *on("span_run", ALL, "in_code_span", "open_inner", "reprocess", rank=90),
    *on("span_run", [EOF_TRIGGER], "text", "hold_as_markup", when=["span_holds", "run_opens_fence"], rank=6),
    *on("span_run", [EOF_TRIGGER], "text", "hold_as_code", when=["span_holds", "run_closes_span"], rank=7),
    *on("span_run", [EOF_TRIGGER], "text", "close_inner", when=["span_holds", "run_closes_inner"], rank=8),
    # (a run the stream ends in stands in the paragraph: noted, it may close a span that a
    # run read again opens)
    *on("span_run", [EOF_TRIGGER], "text", "open_inner", "hold_as_markup", when=["span_holds"], rank=10),
    *on("span_run", [EOF_TRIGGER], "text", rank=90),
    # the opening line of a fence
    *on("fence_info", START, "maybe_tag", "tag_begin", rank=1),
    # (opened in a span that holds an opener: a fence ends the paragraph, the span
    # unmatched; no fence after all, its run is one more in the span, unless the line
    # had ended the paragraph before it: ``fence_to_span``)
    *on("fence_info", ["tick"], "text", "hold_as_markup", "reprocess", when=["span_holds", "fence_is_ticks", "fence_left_span"],
        rank=5),
    *on("fence_info", ["nl"], "text", "hold_as_markup", "reprocess", when=["span_held_before"], rank=5),
    *on("fence_info", [EOF_TRIGGER], "text", "hold_as_markup", when=["span_held_before"], rank=5),
    *on("fence_info", ["tick"], "in_code_span", "fence_to_span", "reprocess", when=["fence_is_ticks"], rank=10),
    # (an opener held from the info string: the line's end makes the fence, code; a
    # backtick makes the run a span's, ``fence_to_span``, the hold going on there)
    *on("fence_info", ["nl"], "fence_line", "info_end", "text_char", when=["fence_in_item"], rank=10),
    *on("fence_info", ["nl"], "in_fence", "info_end", "text_char", rank=90),
    *on("fence_info", but("nl", START), "fence_info", "text_char", rank=90),
    *on("fence_info", [EOF_TRIGGER], "text", "info_end", rank=90),
    # the fence's content, and its closing line
    *on("in_fence", START, "maybe_tag", "tag_begin", rank=1),
    *on("in_fence", ["tick", "tilde"], "fence_run", "run_begin", when=["fence_may_close"], rank=10),
    *on("in_fence", ["nl"], "fence_line", "text_char", when=["fence_in_item"], rank=20),
    *on("in_fence", but(START), "in_fence", "text_char", rank=90),
    *on("fence_line", ["ws", "nl"], "fence_line", "text_char"),
    *on("fence_line", but("ws", "nl"), "text", "reprocess", when=["fence_outdented"], rank=10),
    *on("fence_line", but("ws", "nl"), "in_fence", "reprocess", rank=90),
    *on("fence_line", [EOF_TRIGGER], "text"),
    *on("in_fence", [EOF_TRIGGER], "text"),
    *on("fence_run", ["tick", "tilde"], "fence_run", "run_more", when=["same_run_char"], rank=10),
    *on("fence_run", ALL, "fence_tail", "reprocess", when=["run_closes_fence"], rank=20),
    *on("fence_run", ALL, "in_fence", "reprocess", rank=90),
    *on("fence_run", [EOF_TRIGGER], "text"),
    *on("fence_tail", ["ws"], "fence_tail", "text_char"),
    *on("fence_tail", ["nl"], "text", "text_char"),
    *on("fence_tail", but("ws", "nl"), "in_fence", "reprocess"),
    *on("fence_tail", [EOF_TRIGGER], "text"),
)

#: The states of code, where the enabled dialects' openers and message ends are
#: listened for (``code_listens``).
CODE_STATES = ("in_code_span", "fence_info", "in_fence")


def code_listens(openers: list[object], ends: list[object]) -> list[Listen]:
    """What code listens for (issue 22): a block opener or a message header's start
    (``openers``) is held in an open span (``span_opener``) and reported in a fence
    (``code_opener``); a token that ends a message (``ends``) ends the code
    (``code_token_end``). Composed by the machine from the enabled dialects."""
    out: list[Listen] = []
    for st in CODE_STATES:
        for m in openers:
            action = {"in_code_span": "span_opener", "fence_info": "info_opener"}.get(st, "code_opener")
            out.append(Listen(st, m, st, (action,)))
        for m in ends:
            out.append(Listen(st, m, "text", ("code_token_end",)))
    return out


REGION = Region("prose", STATES, RULES, ProseModel, state_runs=(
    ("tick_run", "prose_run"), ("span_run", "run_more_run"), ("fence_run", "prose_run"), ("in_fence", "prose_run"),
    ("fence_info", "prose_run"), ("fence_line", "prose_run"), ("fence_tail", "prose_run"),
))
