"""Marker recognition: which markers a context allows, and whether held text is one.

A :class:`Matcher` holds the markers one context allows (for example, in a parameter
value: the parameter close and, where the dialect has it, the CDATA open). It answers
two questions:

* ``classify(tag)``: is this held tag text a complete marker, still a prefix of one
  (``VIABLE``, keep holding), or neither (``DEAD``)? This is the guard behind
  ``maybe_tag``; it uses ``regex``'s partial matching, so a marker split across
  chunks is held, never leaked.
* where, at or after a position, could a marker begin? The compiled runner jumps
  there instead of stepping through every ``<``: ``scan_pattern`` finds complete
  markers (the alternatives factored behind one start-character class, so ``re``
  tests the rest only at a start character), and ``tail_viable`` says whether the
  text from the last start character to the end of a chunk is a prefix of one. By
  rule 2 of :mod:`grammar.api` (a start character only begins a marker), no other
  position can hold a marker that runs off the end of the chunk.

``classify`` is memoised per matcher (bounded): the same tags come back again and
again in a stream (``<tool_call``, ``<function=write_file``, ...).
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass
from typing import Any, Callable, Final

import regex

from callsieve.grammar.api import MAX_TAG_CHARS, Marker, first_chars, last_chars, tag_fields

# Final: the compiled build (mypyc) takes them as constants, also as attribute defaults.
DEAD: Final = 0
VIABLE: Final = 1
COMPLETE: Final = 2

_NAMED_GROUP = re.compile(r"\(\?P<\w+>")
#: The group names (this, then a number) of ``Matcher.word_quick`` that match where a
#: word marker's beginning runs off the chunk's end.
WORD_TAIL = "word_tail"
#: A marker pattern that is a literal word (``functools``).
_WORD = re.compile(r"\w+")
#: Entries kept in a matcher's classify memo before it is cleared.
_MEMO_LIMIT = 1024
#: Chunk tails up to this long are checked through the memo.
_MEMO_TAIL = 16


@dataclass(frozen=True, eq=False)
class Entry:
    """One marker a context listens for. ``key`` is the name of the guard that is true
    when the held tag completes this entry; ``data`` is what the actions read (the
    composer's listen rule: leaf, dialect, candidates of a shared opener)."""

    key: str
    marker: Marker
    #: (Any, not object: mypyc's dataclasses cannot take an ``object`` field)
    data: Any = None
    #: An open that must carry a name (call or parameter): without one it is no marker.
    needs_name: bool = False
    #: A tolerated variant of a marker (``grammar.api.Variant``, ``Prefix``): the
    #: Diagnostic codes recorded when it is read (none for the marker itself).
    codes: tuple[str, ...] = ()
    #: The marker after a tolerated stray prefix (``grammar.api.Prefix``): its start
    #: characters continue it by design (rule 2); its context checks tails exactly.
    prefixed: bool = False
    #: For a tolerated entry: how the marker it stands for is shown (its messages).
    reads_as: str = ""
    #: The body (capture, JSON) the marker leads into, if any (``data.enter``, read
    #: once: ``TagModel._take_tag`` asks it of every marker taken).
    enter: Any = None
    #: Where the marker may stand (``grammar.api.Marker.anchor``): "" anywhere,
    #: ``word`` not right after a word character, ``line`` at a line's start (after
    #: spaces or tabs only). Checked when a held tag completes (``TagModel.hit_key``).
    anchor: str = ""


class Hit:
    """A complete marker: which entry, and what it carried. (Read only: a plain slotted
    class rather than a frozen dataclass, whose ``__init__`` costs three times as much;
    one is made for every tag not seen before.)"""

    __slots__ = ("entry", "fields")

    def __init__(self, entry: Entry, fields: dict[str, str]) -> None:
        self.entry = entry
        self.fields = fields


class WordFinder:
    """Where the first word marker in ``s[i:j]`` begins (``finder(s, i, j)``), -1 if
    none: a literal word by ``str.find`` with its ``\\w`` anchor asked of the character
    before it, or any other word markers by a regex ``search``.

    ``last`` is what the literal's last search found: ``(s, i, k)``, the first word at
    or after ``i`` of the chunk ``s`` begins at ``k`` (``len(s)``: none). Scans read a
    chunk forward, asking again and again between the same two words (every code span,
    every stretch of prose after one): they are answered from it without a search, and
    the hottest callers ask it inline, without the call (:meth:`known`'s test). (One
    tuple in one slot: a finder is shared by the sieves of a machine, and a tuple is
    replaced whole.)"""

    __slots__ = ("word", "size", "search", "last")

    def __init__(self, word: str, search: Callable[[str, int, int], "re.Match[str] | None"] | None) -> None:
        self.word = word
        self.size = len(word)
        self.search = search
        self.last: tuple[Any, int, int] = (None, 0, 0)

    def __call__(self, s: str, i: int, j: int) -> int:
        search = self.search
        if search is not None:
            m = search(s, i, j)
            return m.start() if m is not None else -1
        got = self.last
        if got[0] is s and got[1] <= i <= got[2]:
            k = got[2]
        else:
            word = self.word
            k = s.find(word, i)
            while k > 0 and (s[k - 1].isalnum() or s[k - 1] == "_"):  # (``\w``, as ``re`` reads it)
                k = s.find(word, k + 1)
            if k < 0:
                k = len(s)
            self.last = (s, i, k)
        # (a later word ends later: none other lies in ``s[i:j]``)
        return k if k + self.size <= j else -1

    def known(self, s: str, i: int) -> int:
        """Where the first word at or after ``i`` of ``s`` begins, as ``last`` knows it
        (``len(s)``: none), or -1 where it does not know. (What the callers inline.)"""
        got = self.last
        return got[2] if got[0] is s and got[1] <= i <= got[2] else -1


class Matcher:
    def __init__(self, entries: list[Entry]) -> None:
        self.entries = tuple(entries)
        self._memo: dict[str, tuple[int, Hit | None]] = {}
        #: The last ``viable_end`` asked and its answer (one tuple, replaced whole:
        #: matchers are shared by every sieve of a machine).
        self._last_end: tuple[str | None, int, str, tuple[int, int]] = (None, -1, "", (-1, DEAD))
        #: The characters a marker of this context can begin with (rule 2, per context).
        self.start_chars = "".join(sorted({c for e in entries for c in e.marker.start_chars()}))
        #: Start characters that are a whole marker by themselves (Llama's ``;`` between
        #: calls): complete on their own character, they are not held (``tag_begin``
        #: classifies them at once). No longer marker of the context begins with one
        #: (checked when the machine is composed).
        self.one_chars = frozenset(c for c in self.start_chars if any(_reads_whole(e.marker.pattern, c) for e in entries))
        #: Start characters that are word characters (a marker spelt as a word: Phi-4's
        #: ``functools``): frequent in prose, so the scanners look for those markers
        #: whole (``word_scan``) rather than stopping at every such character.
        self.word_starts = "".join(c for c in self.start_chars if c.isalnum() or c == "_")
        self.symbol_starts = "".join(c for c in self.start_chars if c not in self.word_starts)
        #: Some marker can continue with its own start character (rule 2 broken within
        #: one start character): a chunk's tail is then checked from every start
        #: character. Otherwise a marker running off a chunk's end begins at the last
        #: occurrence of its own start character, which the scanners check for each
        #: start character. (A start character inside another's marker, a ``[`` in a
        #: tag's attribute beside Mistral's ``[TOOL_CALLS]``, breaks rule 2 across
        #: dialects, not this.)
        self.exact_tail = any(not e.prefixed and any(continuation(e.marker, c) is not None for c in e.marker.start_chars())
                              for e in entries)
        #: A marker after a stray one-character prefix (``grammar.api.Prefix``) is listened
        #: for here: its start character continues the prefix, so a marker running off a
        #: chunk's end may start one character before the last start character too (the
        #: marker itself keeps rule 2: nowhere else).
        self.prefix_tail = any(e.prefixed for e in entries)
        #: The characters a complete marker of this context can end with, or "" when
        #: some pattern's last atom does not say (``viable_end`` then steps).
        ends = [last_chars(e.marker.pattern) for e in entries]
        self.end_chars = "" if any(x is None for x in ends) else "".join(sorted(set().union(*(x or set() for x in ends))))
        self._ends = re.compile("[" + re.escape(self.end_chars) + "]" if self.end_chars else "(?!)")
        #: ``search`` for the next character a complete marker may end with, where that
        #: says something (``tag_end``); None where it does not (no pattern, or no known
        #: last characters): held tags are then stepped.
        self._search_ends: Any = self._ends.search if entries and self.end_chars else None
        #: The markers' patterns as one alternation, each the group ``M<i>``; compiled
        #: (``_partial``) when a tag is first classified in this context (``_load``):
        #: a machine has a matcher per context, most of which a stream never enters,
        #: and compiling them all was half of what composing a machine cost.
        self._alts = "|".join(f"(?P<M{i}>{e.marker.pattern})" for i, e in enumerate(entries))
        self._partial: Any = None
        self._word_finder: WordFinder | None = None
        self._by_group: dict[int, Entry] = {}
        self._field_groups: tuple[str, ...] = ()
        if entries:
            # (A marker after a stray prefix is not scanned for: the scan stops one
            # character early instead, where a start character stands right before a
            # marker it found; ``prefix_tail``.)
            plain = [_NAMED_GROUP.sub("(?:", e.marker.pattern) for e in entries if not e.prefixed]
            self.scan_rest, self.scan_other = _factored(plain, self.start_chars)
            #: The markers that begin with a word character, whole: a ``re`` search for
            #: them has a literal prefix (where a class of start characters would stop
            #: at every ``f`` of the prose).
            words = [e for e in entries if not e.prefixed and set(e.marker.start_chars()) & set(self.word_starts)]
            #: Every such marker is a literal word (letters, digits, ``_``) anchored
            #: ``word``: it may begin only where no word character stands before it,
            #: and a tail of it running off a chunk's end is the chunk's last word.
            #: (Before a chunk's first character the scanners cannot see: taken as a
            #: boundary, so they stop early there, which is never wrong.)
            self.words_anchored = bool(words) and all(
                e.anchor == "word" and isinstance(e.marker.pattern, str) and _WORD.fullmatch(e.marker.pattern) is not None
                for e in words)
            #: After a word start character was read (the pattern's last character):
            #: whether an anchored literal word marker, or a tail of one running off the
            #: chunk's end, begins there ("" unless ``words_anchored``). The text's fast
            #: path asks it behind one character class, beside the symbol characters
            #: (``re`` then skips ahead to that class).
            self.word_quick = ""
            if self.words_anchored:
                whole = sorted({str(e.marker.pattern) for e in words})
                parts: list[str] = []
                for c in sorted({w[0] for w in whole}):
                    rests = [re.escape(w[1:]) for w in whole if w[0] == c]
                    tails = sorted({re.escape(w[1:k]) for w in whole if w[0] == c for k in range(1, len(w))})
                    parts.append(f"(?<={re.escape(c)})(?<!\\w{re.escape(c)})(?:{'|'.join(rests)}"
                                 f"|(?P<{WORD_TAIL}{len(parts)}>(?:{'|'.join(tails)})\\Z))")
                self.word_quick = "|".join(parts)
            alternatives = "|".join("(?:" + _NAMED_GROUP.sub("(?:", e.marker.pattern) + ")" for e in words)
            if self.words_anchored:
                # (the anchor checked after the word, a lookbehind: a pattern that
                # begins with the word's letters gives ``re`` a literal prefix to skip
                # ahead to; one that begins with the anchor is tried at every position)
                alternatives = "|".join(f"{re.escape(w)}(?<!\\w{re.escape(w)})"
                                        for w in sorted({str(e.marker.pattern) for e in words}))
            self.word_scan = alternatives if words else ""
            #: The literal words of those markers, when they are all anchored literal
            #: words (``words_anchored``): see :meth:`word_finder`.
            self.word_literals: tuple[str, ...] = (
                tuple(sorted({str(e.marker.pattern) for e in words})) if self.words_anchored else ())
        else:
            self.word_literals = ()
            self.words_anchored = False
            self.word_quick = ""
            self.scan_rest = self.scan_other = ""
            self.word_scan = ""

    def word_finder(self) -> "WordFinder | None":
        """``find(s, i, j)``: where the first word marker (``word_scan``) in ``s[i:j]``
        begins, -1 if none; None where this context has no word marker. One anchored
        literal word (Phi-4's ``functools``) is found by ``str.find``, its anchor asked
        of the character before it, as ``word_scan``'s lookbehind asks: through prose
        that is several times faster than ``re``'s search for a literal prefix, which
        read a tenth of prose fed whole with every dialect enabled. (One finder per
        context: its scans share what it found.)"""
        if not self.word_scan:
            return None
        if self._word_finder is None:
            literal = self.word_literals[0] if len(self.word_literals) == 1 else ""
            self._word_finder = WordFinder(literal, None if literal else re.compile(self.word_scan).search)
        return self._word_finder

    def scan_pattern(self, stop_chars: str = "", start_chars: str | None = None) -> str:
        """A pattern matching at every stop character and at least wherever a marker
        matches: one leading character class (``re`` skips ahead to it quickly), then
        lookbehinds decide which kind of stop it is.

        ``start_chars``: a subset of the start characters, for text known to hold no
        other (``"<"`` alone gives ``re`` a literal prefix, several times faster).
        """
        if start_chars is None:
            start_chars = self.start_chars
        start = re.escape(start_chars)
        start_class = start if len(start_chars) == 1 else f"[{start}]"
        parts = []
        if stop_chars and self.scan_rest:
            stops = "[" + re.escape(stop_chars) + "]"
            both = "[" + re.escape(stop_chars + start_chars) + "]"
            parts.append(f"{both}(?:(?<={stops})|(?<={start_class}){self.scan_rest})")
        elif stop_chars:
            parts.append("[" + re.escape(stop_chars) + "]")
        elif self.scan_rest:
            parts.append(start_class + self.scan_rest)
        if self.scan_other:
            parts.append(self.scan_other)
        return "|".join(parts)

    def classify(self, tag: str) -> tuple[int, Hit | None]:
        memo = self._memo
        got = memo.get(tag)
        if got is None:
            got = self._classify(tag)
            if len(memo) >= _MEMO_LIMIT:
                memo.clear()
            memo[tag] = got
        return got

    def _load(self) -> Any:
        """The alternation compiled, and what a match of it is read by (once)."""
        partial = _compiled_alternation(self._alts)
        # The entry a match is of: its group ``M<i>`` wraps the whole alternative,
        # so it closes last and is the match's ``lastindex``.
        self._by_group = {partial.groupindex[f"M{i}"]: e for i, e in enumerate(self.entries)}
        #: the field groups (``tag_fields``) the patterns have
        self._field_groups = tuple(g for g in ("attrs", "name", "same") if g in partial.groupindex)
        self._partial = partial
        return partial

    def _classify(self, tag: str) -> tuple[int, Hit | None]:
        if not self._alts or len(tag) > MAX_TAG_CHARS:
            return DEAD, None
        partial = self._partial
        if partial is None:
            partial = self._load()
        m = None
        if self.end_chars and tag[-1] in self.end_chars:
            # Only a tag that ends like a marker can be a complete one: asked first
            # without partial matching (twice as fast; ``regex`` returns the same match
            # either way, preferring a complete match to a partial one).
            m = partial.fullmatch(tag)
        if m is None:
            m = partial.fullmatch(tag, partial=True)
            if m is None:
                return DEAD, None
            if m.partial:
                return VIABLE, None
        entry = self._by_group.get(m.lastindex)
        if entry is None:  # (not expected: every alternative is wrapped whole)
            entry = next(e for i, e in enumerate(self.entries) if m.group(f"M{i}") is not None)
        fields = tag_fields(m, self._field_groups)
        if entry.needs_name and not fields.get("name"):
            # An open without a name is not a marker we can act on.
            return DEAD, None
        return COMPLETE, Hit(entry, fields)

    def viable_end(self, tag: str, s: str, i: int) -> int:
        """The first ``j >= i`` at which ``tag + s[i:j + 1]`` is not ``VIABLE`` (or
        ``len(s)``): where holding the tag stops, exactly as classifying it one more
        character at a time would find, but decided at once when a complete marker
        lies inside ``s``: only the prefixes that end with one of ``end_chars`` can be
        complete, and only those are classified. With no complete marker in reach the
        characters are stepped (a dead tag dies within a few; a tag cut by the chunk's
        end runs to it)."""
        return self.tag_end(tag, s, i)[0]

    def tag_end(self, tag: str, s: str, i: int, first: Any = False) -> tuple[int, int]:
        """``viable_end``, and what ``tag + s[i:j + 1]`` is there: ``COMPLETE`` or
        ``DEAD`` (``VIABLE`` when the tag runs to the end of ``s``). ``first``: where a
        caller has searched ``s`` from ``i`` for an end character already, what it found
        (a match, or None), so that it is not searched again."""
        last = self._last_end
        if last[0] is s and last[1] == i and last[2] == tag:
            return last[3]  # (asked again at once: a state run looked ahead, then the steps)
        # (each prefix is asked through the memo first: most tags are markers seen
        # before, and a hit needs no call to ``classify``)
        memo = self._memo
        ends = self._search_ends
        if ends is not None:
            # A complete marker ends with one of ``end_chars``: the prefixes that do are
            # asked in turn up to the first one that is not viable. Complete: every
            # shorter prefix is viable (a prefix of a match), so that is the answer.
            # Dead, or no such prefix in reach: no marker is complete here, and stepping
            # finds where the tag dies (a dead tag mostly dies within a few characters)
            # or that it runs to the chunk's end.
            limit = i + (MAX_TAG_CHARS + 1) - len(tag)
            if first is False:
                e = ends(s, i, limit)
            else:
                e = first if first is None or first.end() <= limit else None
            if e is None and len(s) <= limit:
                # No end character before the chunk's end: no prefix is complete, and
                # if the whole rest is still a prefix of a marker, so is every shorter
                # one (a tag cut by a token-sized chunk: one question through the memo,
                # not one per character; issue 27).
                t = tag + s[i:]
                got = memo.get(t)
                if got is None:
                    got = self.classify(t)
                if got[0] == VIABLE:
                    end = (len(s), VIABLE)
                    self._last_end = (s, i, tag, end)
                    return end
            while e is not None:
                p = e.end()
                t = tag + s[i:p]
                got = memo.get(t)
                if got is None:
                    got = self.classify(t)
                at = got[0]
                if at == COMPLETE:
                    end = (p - 1, COMPLETE)
                    self._last_end = (s, i, tag, end)
                    return end
                if at == DEAD:
                    break
                e = ends(s, p, limit)
        n = len(s)
        j = i
        kind = VIABLE
        while j < n:
            t = tag + s[i : j + 1]
            got = memo.get(t)
            if got is None:
                got = self.classify(t)
            kind = got[0]
            if kind != VIABLE:
                break
            j += 1
        end = (j, kind)
        self._last_end = (s, i, tag, end)
        return end

    def find(self, s: str, i: int = 0) -> int:
        """Where the first complete marker of this context begins in ``s`` at or after
        ``i`` (-1 if none): a search of data a context read whole (a tolerated
        construct's strings, a nested CDATA section) for markup it passed over."""
        if not self._alts:
            return -1
        partial = self._partial
        if partial is None:
            partial = self._load()
        m = partial.search(s, i)
        return -1 if m is None else m.start()

    def tail_viable(self, s: str, k: int) -> bool:
        """Whether ``s[k:]`` may still become a marker in the next chunk.

        False when ``classify`` calls it dead: held as a tag, it would be rejected
        there, its first character returned to the run and the rest read again, which
        is the run itself (no start character follows ``k``). A complete marker at
        ``k`` is the scan's business, not this check's. Short tails (token-sized
        chunks) go through the classify memo; long ones are matched directly.
        """
        if not self._alts or len(s) - k > MAX_TAG_CHARS:
            return False
        if len(s) - k <= _MEMO_TAIL:
            return self.classify(s[k:])[0] != DEAD
        partial = self._partial
        if partial is None:
            partial = self._load()
        return partial.fullmatch(s, k, partial=True) is not None


@functools.lru_cache(maxsize=1024)
def _compiled_alternation(alts: str) -> Any:
    """A context's markers as one pattern (``Matcher._alts``), compiled once per process:
    the machines composed for sets of dialects that share a context (a dialect's
    values, with or without others enabled) share the compiled pattern, which nothing
    writes to."""
    return regex.compile(alts)


@functools.lru_cache(maxsize=8192)
def _reads_whole(pattern: str, c: str) -> bool:
    """Whether ``pattern`` matches the one character ``c`` whole (memoised: every machine
    composed asks it of its contexts' markers again)."""
    return regex.fullmatch(pattern, c) is not None


@functools.lru_cache(maxsize=8192)
def continuation(m: Marker, c: str) -> str | None:
    """A proper prefix of one of ``m``'s examples that ``c`` continues (the prefix plus
    ``c`` is still a prefix of a match), or None. Cached: every machine composed asks
    again about the same markers (rule 2 and ``exact_tail``)."""
    partial = regex.compile(m.pattern)
    for ex in m.examples:
        for k in range(1, len(ex)):
            if partial.fullmatch(ex[:k] + c, partial=True) is not None:
                return ex[:k]
    return None


def _lead_atom(p: str, start_chars: str) -> str | None:
    """The pattern's first atom when it is one start character or a class of them."""
    if not p:
        return None
    if p[0] == "\\":
        atom = p[:2]
    elif p[0] == "[":
        j = 1
        while j < len(p) and p[j] != "]":
            j += 2 if p[j] == "\\" else 1
        atom = p[: j + 1]
    elif p[0] in "()|?*+{.^$":
        return None
    else:
        atom = p[0]
    chars = first_chars(atom)
    if not chars or not chars <= set(start_chars):
        return None
    return atom


def _factored(patterns: list[str], start_chars: str) -> tuple[str, str]:
    """Split marker patterns into what follows a leading start character, and the rest.

    Returns ``(rest, other)``: ``[<＜]`` + ``rest`` (the context's start characters)
    matches at least wherever a pattern whose first atom is a start character matches
    (rule 2 of :mod:`callsieve.grammar.api`), and
    ``other`` is the alternation of the patterns that could not be split. Folding ``<``
    and ``＜`` together can only add matches (``＜![CDATA[``), never lose one; a false
    stop costs one step through ``maybe_tag``, which rejects it. With one start class
    in front, ``re`` tries the alternatives only where a start character stands.
    """
    rests: list[str] = []
    others: list[str] = []
    for whole in patterns:
        r, o = _factored_one(whole, start_chars)
        rests += r
        others += o
    rest = "(?:" + "|".join(f"(?:{r})" for r in rests) + ")" if rests else ""
    return rest, "|".join(others)


@functools.lru_cache(maxsize=8192)
def _factored_one(whole: str, start_chars: str) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """``_factored``'s split of one pattern: its branches' rests and the others
    (memoised: each machine composed factors the same markers' patterns again)."""
    rests: list[str] = []
    others: list[str] = []
    for p in _branches(whole):
        atom = _lead_atom(p, start_chars)
        if atom is None or p[len(atom) : len(atom) + 1] in ("?", "*", "+", "{") or _top_level_bar(p):
            others.append(f"(?:{p})")
        else:
            rests.append(p[len(atom):])
    return tuple(rests), tuple(others)


def _branches(p: str) -> list[str]:
    """``p``'s alternatives: split at its top-level bars, each one a whole ``(?:…)`` group
    unwrapped and split again. A shared opener's pattern is such an alternation
    (``(?:<tool_call…>)|(?:<tool_call…>)``); whole, it cannot be factored behind the
    start characters, and one unfactored alternative costs ``re`` its skip to the next
    start character: a try of the pattern at every position of the prose."""
    parts = _split_top(p)
    if len(parts) == 1:
        inner = _whole_group(p)
        return _branches(inner) if inner is not None else [p]
    return [b for part in parts for b in _branches(part)]


def _whole_group(p: str) -> str | None:
    """The inside of ``p`` when ``p`` is one ``(?:…)`` group, unquantified."""
    if not p.startswith("(?:"):
        return None
    bars = _split_top(p, until_close=True)
    return p[3:-1] if bars == [p] else None


def _split_top(p: str, until_close: bool = False) -> list[str]:
    """``p`` split at its top-level bars (outside every group and class). With
    ``until_close``: ``[p]`` only if ``p``'s first group closes at its last character."""
    depth = 0
    in_class = False
    i = 0
    start = 0
    out: list[str] = []
    while i < len(p):
        c = p[i]
        if c == "\\":
            i += 2
            continue
        if in_class:
            if c == "]":
                in_class = False
        elif c == "[":
            in_class = True
            if p[i + 1 : i + 2] == "^":
                i += 1
            if p[i + 1 : i + 2] == "]":
                i += 1
        elif c == "(":
            depth += 1
        elif c == ")":
            depth -= 1
            if until_close and depth == 0:
                return [p] if i == len(p) - 1 else []
        elif c == "|" and depth == 0:
            out.append(p[start:i])
            start = i + 1
        i += 1
    out.append(p[start:])
    return out


def _top_level_bar(p: str) -> bool:
    """Whether ``p`` has an alternation outside every group and class."""
    return len(_split_top(p)) > 1
