"""Captures: text up to whatever the structure allows next, read whole by a pattern.

A call's name and id may stand as text between markers (Kimi ``functions.NAME:IDX``
before ``<|tool_call_argument_begin|>``, DeepSeek V3.1 ``NAME`` before
``<｜tool▁sep｜>``), and so may a parameter's key (GLM ``<arg_key>city</arg_key>``).
``in_capture`` holds that text; it listens for the markers that
may follow the capture (FOLLOW, derived) and, for a capture with ``end_chars``, ends at
one of those characters (DeepSeek V3's name line). The held text must match the
capture's pattern whole; its ``name`` and ``id`` groups go to the call (a key
capture's ``name`` to the parameter that follows). A capture that does not match, or
runs past ``max_chars``, makes the block malformed.

A capture dies where it can no longer be one: at the first character its pattern can
never take (the held text is no longer a prefix of a match: ``capture_fails``), and at
a block opener of any enabled dialect (listened for in every capture by the composer).
Its block is malformed there, and the character, or the opener, is read again where
the block came from: a name capture opened by a prose mention of a marker (Mistral's
``[TOOL_CALLS]``, GLM's ``<tool_call>``) gives way to the real call after it instead
of reading on into it.
"""

from __future__ import annotations

import re

import regex

from functools import lru_cache
from typing import Any

from callsieve.native import mypyc_attr, trait
from callsieve.grammar.api import Capture, Variant
from callsieve.grammar.states import EOF_TRIGGER, OVERFLOW, START, Region, StateDecl, but, on
from callsieve.regions.block import BlockModel
from callsieve.regions.tag import unnamed as tag_unnamed


@trait
@mypyc_attr(allow_interpreted_subclasses=True)
class CaptureModel(BlockModel):
    captured = ""
    capture_leaf: object = None
    #: the capture's pattern, compiled (partial matching tells where it dies)
    capture_rx: Any = None
    #: a character its pattern can never take was read (a rejected tag's first
    #: character, taken by the sink): the capture dies at the next character that is
    #: no start character (``capture_fails``), or at its end (``end_capture``)
    capture_spoilt = False

    def capture_begin(self, ch: str = "") -> None:
        """Enter the capture the last structural marker leads to (``enter`` target)."""
        self.captured = ""
        self.capture_spoilt = False
        leaf = self.enter_target
        self.capture_leaf = leaf
        body = getattr(leaf, "body", None)
        # (what the capture may still become: its pattern, or, lenient, a reading its
        # tolerances take: an id ``3 `` lives on for a nameless variant)
        self.capture_rx = _compiled(_readings(body, self.cfg.strict)) if isinstance(body, Capture) else None
        self.scope = getattr(leaf, "name", "")
        if getattr(leaf, "starts_call", False):
            call = self.new_call(self._block())
            call.wire_ids = getattr(getattr(leaf, "call", None), "ids", "") == "wire"

    def capture_char(self, ch: str) -> None:
        self._hold(ch)
        self.captured += ch

    def capture_run(self, s: str, i: int, j: int) -> int:
        j = min(j, i + self.run_budget())
        seg = s[i:j]
        self._hold(seg)
        self.captured += seg
        return j

    def capture_sink(self, ch: str) -> None:
        """The first character of a tag that is no marker here: taken as text of the
        capture, which dies at the next step if its pattern cannot take it."""
        self.capture_char(ch)
        rx = self.capture_rx
        if rx is not None and rx.fullmatch(self.captured, partial=True) is None:
            self.capture_spoilt = True

    def capture_fails(self, ch: str) -> bool:
        """The capture cannot go on with ``ch``: it is ``max_chars`` long already, or
        ``ch`` (or a character taken before it) is one its pattern can never take there
        (no text that begins with what is held would match it), unless ``ch`` is one of
        its end characters, which end it and belong to the markup."""
        body = getattr(self.capture_leaf, "body", None)
        if not isinstance(body, Capture):
            return False
        if len(self.captured) >= body.max_chars or self.capture_spoilt:
            return True
        rx = self.capture_rx
        return rx is not None and ch not in body.end_chars and rx.fullmatch(self.captured + ch, partial=True) is None

    def capture_is(self, leaf_name: str) -> bool:
        return getattr(self.capture_leaf, "name", None) == leaf_name

    def end_capture(self, ch: str = "") -> None:
        """The capture ended (a marker that may follow it, or an end character)."""
        leaf = self.capture_leaf
        body = getattr(leaf, "body", None)
        assert isinstance(body, Capture)
        b = self._block()
        m = _compiled(body.pattern).fullmatch(self.captured)
        self.capture_leaf = None
        loose = ""
        if m is None and body.loose is not None and not self.cfg.strict:
            # Tolerance (``Capture(loose=)``): text the format does not read, read otherwise.
            m = _compiled(body.loose.pattern).fullmatch(self.captured)
            loose = body.loose.code if m is not None else ""
        tools = self.cfg.tools
        idonly: Variant | None = None
        if m is None and not self.cfg.strict and tools is not None and len(tools) == 1:
            # (an id with no name, which the format does not read: the one declared
            # tool, and only then: a variant with no name group)
            for v in body.variants:
                mv = _compiled(v.pattern).fullmatch(self.captured)
                if mv is not None and "name" not in mv.groupdict():
                    m, idonly = mv, v
                    break
        if m is None:
            b.malformed_reason = f"{self.captured[:60]!r} is not {body.label} ({body.pattern})"
            return
        groups = m.groupdict()
        if getattr(leaf, "param", None) is not None:
            b.key = (groups.get("name") or "").strip()  # a parameter's key (GLM <arg_key>)
            return
        call = b.call
        if call is None:
            return
        if groups.get("id"):
            call.wire_id = groups["id"]
        name = (groups.get("name") or "").strip()
        if idonly is not None and tools is not None:
            name = next(iter(tools))
            self.tolerate(idonly.code, f"{self.captured.strip()!r} read as a call to {name!r} "
                          "(an id with no name: the one tool declared)", b.start)
        if name and body.variants and tools is not None and name not in tools and not self.cfg.strict:
            for v in body.variants:
                mv = _compiled(v.pattern).fullmatch(self.captured)
                nameless = mv is not None and "name" not in mv.groupdict()
                if nameless:
                    # (an id with no name: the one declared tool, and only then)
                    other = next(iter(tools)) if len(tools) == 1 else ""
                else:
                    other = (mv.group("name") or "").strip() if mv is not None else ""
                if other in tools:
                    self.tolerate(v.code, f"{self.captured.strip()!r} read as a call to {other!r} "
                                  + ("(an id with no name: the one tool declared)" if nameless else "(a known tool)"), b.start)
                    name = other
                    loose = ""
                    break
        if loose:
            self.tolerate(loose, f"{self.captured.strip()!r} is not {body.label}; read as a call to {name!r}", b.start)
        if name:
            self.name_call(call, name)

    def end_capture_char(self, ch: str) -> None:
        self.end_capture(ch)
        self._hold(ch)


def _readings(body: Capture, strict: bool) -> str:
    """The capture's pattern, and under tolerances its loose reading and variants: one
    pattern for what the captured text may still become."""
    if strict:
        return body.pattern
    if body.loose is None and not body.variants:
        return body.pattern
    return _lenient_readings(body)


@lru_cache(maxsize=256)
def _lenient_readings(body: Capture) -> str:
    # (memoised: every capture of a token stream asked, and its groups were unnamed by a
    # regex each time)
    pats = [body.pattern] + ([body.loose.pattern] if body.loose is not None else []) + [v.pattern for v in body.variants]
    return "|".join(f"(?:{tag_unnamed(p)})" for p in pats)


@lru_cache(maxsize=256)
def _compiled(pattern: str) -> Any:
    return regex.compile(pattern)


def _row_names(row: Any) -> tuple[tuple[tuple[str, bool], ...], tuple[str, ...], str]:
    guards, actions, dest = row
    return (tuple((str(getattr(g, "__name__", "")), bool(t)) for g, t in guards),
            tuple(str(getattr(a, "__name__", "")) for a in actions), dest)


class CaptureRun:
    """``in_capture``'s characters read in one run (issue 27: a name, an id or a key
    streamed in token-sized chunks was stepped a character at a time, each step asking
    ``capture_fails`` once per abort row before ``capture_char`` fired).

    On every class but those that stop it (a start character, ...) the state's rows
    are rows guarded first by ``capture_fails`` (the capture dies there), then the
    unguarded ``capture_char`` loop; :meth:`of` reads that from the compiled table
    when it is built (a machine whose rows differ gets no run). The run takes
    ``s[i:j]`` up to the first character of another class, one of the capture's end
    characters, its ``max_chars`` or the block's limit, where the held text and all of
    it is still a prefix of a match of the capture's pattern: each character on the
    way is then one ``capture_fails`` would pass (a prefix of a prefix of a match is
    one), so the steps would have fired ``capture_char`` for each. Anything else
    (a spoilt capture, a character the pattern cannot take, a spilled block) is left to
    the steps, where it stops."""

    def __init__(self, stops: str) -> None:
        self._stop: Any = re.compile("[" + re.escape(stops) + "]").search if stops else None

    @staticmethod
    def of(table: dict[str, dict[str, Any]], class_of: dict[str, str]) -> "CaptureRun | None":
        rows_of = table.get("in_capture")
        if rows_of is None:
            return None
        loop = ((), ("capture_char",), "in_capture")
        looping: set[str] = set()
        for trigger, rows in rows_of.items():
            named = [_row_names(r) for r in rows]
            if named and named[-1] == loop and all(g[:1] == (("capture_fails", True),) for g, _a, _d in named[:-1]):
                looping.add(trigger)
        if "other" not in looping:
            return None
        return CaptureRun("".join(sorted(c for c, k in class_of.items() if k not in looping)))

    def run(self, ctx: CaptureModel, s: str, i: int) -> int:
        """Read from ``s[i]`` in ``in_capture``; the index where the steps take over."""
        b = ctx.block
        body = getattr(ctx.capture_leaf, "body", None)
        if b is None or b.spilled or ctx.capture_spoilt or ctx.redo or ctx.pushback or not isinstance(body, Capture):
            return i
        n = len(s)
        m = self._stop(s, i) if self._stop is not None else None
        j = m.start() if m is not None else n
        room = min(body.max_chars - len(ctx.captured), ctx.cfg.max_block_chars - b.raw_len)
        if j - i > room:
            j = i + room
        for c in body.end_chars:
            k = s.find(c, i, j)
            if k >= 0:
                j = k
        if j <= i:
            return i
        seg = s[i:j]
        rx = ctx.capture_rx
        if rx is not None and rx.fullmatch(ctx.captured + seg, partial=True) is None:
            return i  # (a character the pattern cannot take: the steps find which)
        ctx._hold(seg)
        ctx.captured += seg
        return j


STATES = (StateDecl("in_capture", "text up to what the structure allows next (a name, an id)", in_block=True, owner="capture", sink="capture_sink"),)

RULES = (
    *on("in_capture", but(START), "text", "abort_block", "reprocess", when=["capture_fails"], rank=1),
    *on("in_capture", START, "maybe_tag", "tag_begin", rank=10),
    *on("in_capture", but(START), "in_capture", "capture_char", rank=90),
    *on("in_capture", [EOF_TRIGGER], "text", "abort_block_eof"),
    *on("in_capture", [OVERFLOW], "in_capture", "abort_oversized"),  # the block spills, the state stays
)

REGION = Region("capture", STATES, RULES, CaptureModel, run_forms=(("capture_char", "capture_run"),))
