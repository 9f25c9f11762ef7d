"""The grammar API: what a dialect declares, and how a declaration is checked.

A dialect is data. It names the markers of its tool-call block (block, call and
parameter opens and closes, optional CDATA) as regular expressions over one complete
tag, gives concrete literal examples of each (every variant it accepts, used by the
property tests and the diagrams), and says how a parameter value is decoded. The
engine never branches on a dialect's name: it only reads these fields.

Rules every marker pattern obeys (checked by :func:`validate`, errors name the rule):

1. it compiles under both ``re`` (bulk scans) and ``regex`` (partial matching);
2. it begins with a *start character* and no start character can occur later in a
   match: a failed attempt at a marker then never hides a marker that starts inside
   it, which is what lets the compiled runner skip ahead without re-reading;
3. every example literal fully matches its pattern, and stays within ``MAX_TAG_CHARS``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from enum import Enum
from typing import Callable, Mapping

import regex

#: Longest tag the matcher will hold while deciding; longer is never a marker.
MAX_TAG_CHARS = 256

#: Characters that may begin a marker. ``＜`` (U+FF1C) is the fullwidth form seen in
#: leaked DSML; it is a start character for every dialect so that none can hide it.
START_CHARS = "<\uff1c"


class Kind(str, Enum):
    """What a recognised marker is, structurally."""

    THINK_OPEN = "think_open"
    THINK_CLOSE = "think_close"
    BLOCK_OPEN = "block_open"
    BLOCK_CLOSE = "block_close"
    CALL_OPEN = "call_open"
    CALL_CLOSE = "call_close"
    PARAM_OPEN = "param_open"
    PARAM_CLOSE = "param_close"
    CDATA_OPEN = "cdata_open"


@dataclass(frozen=True)
class Marker:
    """One marker: a pattern over a complete tag, and literal examples of it.

    Named groups the engine reads: ``name`` (call or parameter name), ``attrs``
    (an attribute list parsed for ``name`` and ``string``).
    """

    kind: Kind
    pattern: str
    examples: tuple[str, ...]
    label: str = ""

    def shown(self) -> str:
        return self.label or self.examples[0]


@dataclass(frozen=True)
class ValueStyle:
    """How a raw parameter value becomes a string.

    strip_newlines: drop one leading and one trailing newline (Qwen3-Coder writes the
      value on its own lines).
    unescape_entities: decode the five XML entities and numeric references outside
      CDATA sections.
    cdata: ``<![CDATA[ ... ]]>`` inside a value is raw data whose markup means nothing.
    """

    strip_newlines: bool = False
    unescape_entities: bool = False
    cdata: bool = False


@dataclass(frozen=True)
class Dialect:
    name: str
    title: str
    markers: tuple[Marker, ...]
    value: ValueStyle = ValueStyle()
    #: Body grammars this dialect uses besides raw text (e.g. ``"json"`` for
    #: DSML ``string="false"`` values). Each adds its states to the machine.
    bodies: tuple[str, ...] = ()
    #: A call open may stand in prose without its block (DeepSeek V4 falling back to
    #: text, sglang#40236 "bare invoke"): it opens an implied block, which ends with
    #: the last call when what follows is not grammar.
    bare_calls: bool = False
    #: Example of a whole, well-formed block (docs, demo, tests).
    sample: str = ""
    #: Build a well-formed block from (name, [(key, raw_value, is_json)]) calls;
    #: used by property tests to generate inputs in this dialect.
    render: Callable[[list[tuple[str, list[tuple[str, str, bool]]]]], str] | None = field(
        default=None, compare=False
    )

    def of(self, kind: Kind) -> tuple[Marker, ...]:
        return tuple(m for m in self.markers if m.kind is kind)


_ATTR = re.compile(r"""([\w:.-]+)\s*=\s*(?:"([^"]*)"|'([^']*)')""")


def parse_attrs(text: str) -> dict[str, str]:
    """Attributes of a tag, ``name="x" string='true'`` → ``{"name": "x", ...}``."""
    out: dict[str, str] = {}
    for m in _ATTR.finditer(text):
        out[m.group(1).lower()] = m.group(2) if m.group(2) is not None else m.group(3)
    return out


def tag_fields(match: "re.Match[str] | regex.Match[str]") -> dict[str, str]:
    """The name and attributes a marker match carries."""
    groups: Mapping[str, str | None] = match.groupdict()
    out: dict[str, str] = {}
    attrs = groups.get("attrs")
    if attrs:
        out.update(parse_attrs(attrs))
    name = groups.get("name")
    if name is not None:
        out["name"] = name.strip()
    return out


def validate(dialect: Dialect) -> None:
    """Raise :class:`callsieve.GrammarError` naming the marker and the rule it breaks."""
    # Imported here: grammar must import without pulling in the engine first.
    from callsieve.errors import GrammarError

    if not re.fullmatch(r"[a-z][a-z0-9_]*", dialect.name):
        raise GrammarError(f"dialect name {dialect.name!r}: use lower_snake_case")
    kinds = {m.kind for m in dialect.markers}
    for need in (Kind.BLOCK_OPEN, Kind.BLOCK_CLOSE, Kind.CALL_OPEN, Kind.PARAM_OPEN, Kind.PARAM_CLOSE):
        if need not in kinds:
            raise GrammarError(f"dialect {dialect.name}: no {need.value} marker")
    for m in dialect.markers:
        where = f"dialect {dialect.name}, {m.kind.value} marker {m.pattern!r}"
        try:
            re.compile(m.pattern)
            partial = regex.compile(m.pattern)
        except (re.error, regex.error) as e:
            raise GrammarError(f"{where}: does not compile: {e}") from None
        if not m.examples:
            raise GrammarError(f"{where}: give at least one example literal")
        for ex in m.examples:
            if not partial.fullmatch(ex):
                raise GrammarError(f"{where}: example {ex!r} does not match")
            if len(ex) > MAX_TAG_CHARS:
                raise GrammarError(f"{where}: example {ex!r} is longer than {MAX_TAG_CHARS}")
            if ex[0] not in START_CHARS:
                raise GrammarError(f"{where}: example {ex!r} must begin with one of {START_CHARS!r}")
            # Rule 2: no start character may continue a match.
            for k in range(1, len(ex)):
                for s in START_CHARS:
                    if partial.fullmatch(ex[:k] + s, partial=True):
                        raise GrammarError(
                            f"{where}: a start character {s!r} can continue {ex[:k]!r}; "
                            "markers may contain start characters only at their first position"
                        )
