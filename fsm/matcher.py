"""Marker recognition: which markers a context allows, and whether held text is one.

A :class:`Matcher` holds the markers one context allows (for example, in a parameter
value: the parameter close and, where the dialect has it, the CDATA open). It answers
two questions:

* ``classify(tag)``: is this held tag text a complete marker, still a prefix of one
  (``VIABLE``, keep holding), or neither (``DEAD``)? This is the guard behind
  ``maybe_tag``; it uses ``regex``'s partial matching, so a marker split across
  chunks is held, never leaked.
* ``next_start(s, pos)``: where, at or after ``pos``, could a marker begin? The
  compiled runner jumps there instead of stepping through every ``<`` (a full-match
  scan with ``re``, plus a partial-match look at the last ``MAX_TAG_CHARS``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

import regex

from grammar.api import MAX_TAG_CHARS, Dialect, Kind, Marker, tag_fields

DEAD, VIABLE, COMPLETE = 0, 1, 2

_NAMED_GROUP = re.compile(r"\(\?P<\w+>")


@dataclass(frozen=True)
class Entry:
    kind: Kind
    dialect: Dialect | None
    marker: Marker


@dataclass(frozen=True)
class Hit:
    """A complete marker: what it is, from which dialect, and what it carried."""

    kind: Kind
    dialect: Dialect | None
    fields: dict[str, str]
    marker: Marker


class Matcher:
    def __init__(self, entries: list[Entry]) -> None:
        self.entries = tuple(entries)
        if entries:
            alts = "|".join(f"(?P<M{i}>{e.marker.pattern})" for i, e in enumerate(entries))
            self._partial: Any = regex.compile(alts)
            plain = "|".join(f"(?:{_NAMED_GROUP.sub('(?:', e.marker.pattern)})" for e in entries)
            self.full_pattern = plain
        else:
            self._partial = None
            self.full_pattern = ""

    def classify(self, tag: str) -> tuple[int, Hit | None]:
        if self._partial is None or len(tag) > MAX_TAG_CHARS:
            return DEAD, None
        m = self._partial.fullmatch(tag, partial=True)
        if m is None:
            return DEAD, None
        if m.partial:
            return VIABLE, None
        entry = next(e for i, e in enumerate(self.entries) if m.group(f"M{i}") is not None)
        fields = tag_fields(m)
        if entry.kind in (Kind.CALL_OPEN, Kind.PARAM_OPEN) and not fields.get("name"):
            # An open without a name is not a marker we can act on.
            return DEAD, None
        return COMPLETE, Hit(entry.kind, entry.dialect, fields, entry.marker)

    def partial_start(self, s: str, pos: int) -> int:
        """Leftmost position ≥ pos where a marker matches or runs off the end of s."""
        if self._partial is None:
            return len(s)
        m = self._partial.search(s, max(pos, len(s) - MAX_TAG_CHARS), partial=True)
        return m.start() if m else len(s)

    def kinds(self) -> set[Kind]:
        return {e.kind for e in self.entries}
