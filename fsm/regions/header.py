"""Message headers that decide their body (``grammar.api.Header``: gpt-oss harmony).

A header starts at one of its start markers in prose and is read in one state per
*part* (``harmony.role`` after ``<|start|>``, ``harmony.channel`` after ``<|channel|>``,
``harmony.constrain`` after ``<|constrain|>``): each holds the header's short text and
listens for the markers that open the other parts and for the end marker
(``<|message|>``). There the header is *decided*: one row per case out of ``maybe_tag``,
guarded by ``header:NAME.CASE`` (the first case whose pattern matches the header as
written), leads to the body: the header's reasoning state (``harmony.analysis``, read
until an end marker or a new header), ``text`` (visible text is prose), or the call
block the case opens (its JSON arguments). The header and the end markers are framing:
they ride in the ``raw`` of the Reasoning next to them, of an empty-text ``Text`` (which
merges into the text beside it), or of the call. A header past ``max_chars``, or one the
stream ends in, is released as text with a Diagnostic; so is one broken off by a
block opener of any enabled dialect (listened for by the composer), which is then read
again in prose. (A start marker inside a header is its text: a doubled
``<|start|>assistant``, sglang PR #9097, is still decided; with ``Header.restart`` it
releases the header so far and begins a new one.)
"""

from __future__ import annotations

from typing import Any, Callable

import regex

from callsieve.native import mypyc_attr, trait
from callsieve.events import Text
from callsieve.grammar.api import Header, Variant
from callsieve.grammar.states import ALL, EOF_TRIGGER, RANK_FALLBACK, RANK_RETURN, START, Listen, Region, Rule, StateDecl, but, on
from callsieve.regions.block import BlockModel


@trait
@mypyc_attr(allow_interpreted_subclasses=True)
class HeaderModel(BlockModel):
    hdr_raw = ""
    hdr_start = 0
    hdr_decl: object = None
    #: (None, not an empty tuple: a tuple-typed attribute of a trait trips mypyc 2.4's C code)
    _hdr_memo: tuple[str, int, object] | None = None
    _hdr_m: Any = None

    def header_begin(self, ch: str) -> None:
        """A start marker: the header opens (what was pending before it goes out first)."""
        tag = self._take_tag(ch)
        self.flush()
        self.hdr_raw = tag
        self.hdr_start = self.tag_start

    def header_char(self, ch: str) -> None:
        self.hdr_raw += ch

    def header_run(self, s: str, i: int, j: int) -> int:
        self.hdr_raw += s[i:j]
        return j

    def header_mark(self, ch: str) -> None:
        self.hdr_raw += self._take_tag(ch)

    def header_too_long(self, ch: str) -> bool:
        h = self.hdr_decl
        return isinstance(h, Header) and len(self.hdr_raw) >= h.max_chars

    def header_match(self, h: Header) -> tuple[int, Any]:
        """The index of the first case matching the header so far, and its match."""
        memo = self._hdr_memo
        if memo is not None and memo[0] == self.hdr_raw and memo[2] is h:
            return memo[1], self._hdr_m
        got, m = len(h.cases), None
        for k, c in enumerate(h.cases):
            m = regex.search(c.pattern, self.hdr_raw)
            if m is not None:
                got = k
                break
        self._hdr_memo = (self.hdr_raw, got, h)
        self._hdr_m = m
        return got, m

    def _header_taken(self, ch: str) -> str:
        raw = self.hdr_raw + self._take_tag(ch)
        self.hdr_raw = ""
        return raw

    def header_text(self, ch: str) -> None:
        """The body is visible text: the header is framing in an empty-text Text."""
        self.out.append(Text("", self._header_taken(ch)))

    def header_reasoning(self, ch: str) -> None:
        self.reason_raw.append(self._header_taken(ch))

    def header_call(self, ch: str) -> None:
        """The body is a call's arguments: its block opens with the header as its raw."""
        h = self.hdr_decl
        assert isinstance(h, Header)
        k, m = self.header_match(h)
        hit = self._hit(ch)
        leaf = getattr(hit.entry.data, "leaf")
        name = (m.group("name") or "").strip() if m is not None else ""
        other, code = self._header_variant(h.cases[k].variants if k < len(h.cases) else (), name)
        raw = self._header_taken(ch)
        self.bind_block(leaf.spec, raw, self.hdr_start)
        call = self.new_call(self._block())
        if code:
            self.tolerate(code, f"the recipient {name!r} read as {other!r} (the header's other reading)", self.hdr_start)
            name = other
        self.name_call(call, name)
        self.enter_body(ch)

    def _header_variant(self, variants: tuple[Variant, ...], name: str) -> tuple[str, str]:
        """The name and code of the first variant reading of the header that is taken
        (``HeaderCase.variants``), or ``("", "")``."""
        if self.cfg.strict:
            return "", ""
        tools = self.cfg.tools
        for v in variants:
            mv = regex.search(v.pattern, self.hdr_raw)
            other = (mv.group("name") or "").strip() if mv is not None else ""
            # A reading that changes the call's name needs a known tool for evidence
            # (issue 23: without tools=, ``geojson`` stayed ``geojson``, not ``geo``).
            if other and other != name and tools is not None and name not in tools and other in tools:
                return other, v.code
        return "", ""

    def header_release(self, ch: str) -> None:
        """Too long to be a header: its text is text, with a Diagnostic; ``ch`` is read again."""
        raw, self.hdr_raw = self.hdr_raw, ""
        self.release_text(raw, self.hdr_start, "malformed_block", f"a message header longer than its limit: {raw[:40]!r}")

    def header_gives_way(self, ch: str) -> None:
        """A block opener stands in the header: the header was none; its text is text,
        with a Diagnostic, and the opener (held, and ``ch``, read again) is read in prose."""
        tag = self.tag
        self.tag = ""
        self._tag_version += 1
        raw, self.hdr_raw = self.hdr_raw, ""
        self.release_text(raw, self.hdr_start, "malformed_block",
                          f"a message header {raw[:40]!r} broken off by {(tag + ch)[:40]!r}")
        self.pushback = tag

    def header_restart(self, ch: str) -> None:
        """A start marker in a header that restarts (``Header.restart``): the header so
        far was none; its text is text, with a Diagnostic, and a new header opens."""
        raw, self.hdr_raw = self.hdr_raw, ""
        self.release_text(raw, self.hdr_start, "malformed_block",
                          f"a message header {raw[:40]!r} broken off by another")
        self.header_begin(ch)

    def header_eof(self, ch: str = "") -> None:
        raw, self.hdr_raw = self.hdr_raw, ""
        self.release_text(raw, self.hdr_start, "unterminated_block", f"the stream ended inside a message header {raw[:40]!r}")

    def header_unresumed(self, ch: str) -> None:
        """At the output's start, what began like a header's part (``Header.at_start``)
        is none: it is read again as prose, from the start (``ch`` after it)."""
        self.pushback = self.tag
        self.tag = ""
        self._tag_version += 1

    def header_unresumed_eof(self, ch: str = "") -> None:
        tag, self.tag = self.tag, ""
        self._tag_version += 1
        self._text(tag)

    def framing(self, ch: str) -> None:
        """A message token standing in text (``<|end|>``, ``<|return|>``): framing. What
        follows begins on a line of its own, after a blank one (issue 22 item 8: a
        message's end ends every Markdown context opened in it; the lines prose reads
        are the next message's)."""
        tag = self._take_tag(ch)
        self.flush()
        self.out.append(Text("", tag))
        self._saw("\n\n")

    def orphan_framing(self, ch: str) -> None:
        """A block's marker standing in prose alone (``Dialect.orphans``): framing, and
        the Diagnostic its code says (noted when the tag was taken; no block opens to
        carry it)."""
        tag = self._take_tag(ch)
        self.flush()
        notes, self.notes = self.notes, []
        for d in notes:
            self._emit(d)
        self.out.append(Text("", tag))


#: Ranks each header's rows out of ``maybe_tag`` may take (one per part).
HEADER_RANKS = 32


def part_state(h: Header, part: str) -> str:
    return f"{h.name}.{part}"


def reasoning_state(h: Header) -> str:
    return f"{h.name}.analysis"


#: Where a stream begins when an enabled header may be open at the output's start
#: (``Header.at_start``: a prompt that ended inside it).
START_STATE = "header_start"


def start_region(then: str = "text") -> Region:
    """The output's very start, after a prompt that may have ended inside a header: the
    headers' ``at_start`` markers are listened for (their listens are the headers');
    anything else is read again from the start in ``then``: prose, or ``start`` where a
    block its own body opens is listened for (a held tag too: it is at most a marker
    long). Composed once, when an enabled header declares ``at_start``."""
    st = START_STATE
    states = (StateDecl(st, "the output's start, where a prompt that ended inside a message header may go on "
                        "with it (Header.at_start)", owner="header"),)
    rules = (
        *on(st, START, "maybe_tag", "tag_begin", rank=10),
        *on(st, but(START), then, "reprocess", rank=90),
        *on(st, [EOF_TRIGGER], "text"),
        *on("maybe_tag", ALL, then, "header_unresumed", "reprocess", when=[f"from:{st}"], rank=RANK_FALLBACK - 1),
        *on("maybe_tag", [EOF_TRIGGER], "text", "header_unresumed_eof", when=[f"from:{st}"], rank=RANK_FALLBACK - 1),
    )
    return Region("header_start", states, rules, None)


def header_region(h: Header, index: int = 0) -> tuple[Region, list[tuple[str, Callable[[Any, str], bool]]]]:
    """The states, rules and listens of one header (the decision rows are the
    composer's: they lead into the dialect's call block) and its generated guards.
    ``index``: the header's place among the machine's headers (their rows out of
    ``maybe_tag`` are ranked apart)."""
    parts = sorted({p for _m, p in h.starts} | {p for _m, p in h.parts} | {p for _m, p in h.at_start})
    states: list[StateDecl] = []
    rules: list[Rule] = []
    listens: list[Listen] = []
    guards: list[tuple[str, Callable[[Any, str], bool]]] = []
    for n, p in enumerate(parts):
        s = part_state(h, p)
        states.append(StateDecl(s, f"a message header's {p} part: its text until {h.end.shown()} decides the body",
                                owner=f"{h.name}_header", sink="header_char"))
        rules += on(s, but(START), "text", "header_release", "reprocess", when=["header_too_long"], rank=1)
        rules += on(s, START, "maybe_tag", "tag_begin", rank=10)
        rules += on(s, but(START), s, "header_char", rank=90)
        rules += on(s, [EOF_TRIGGER], "text", "header_eof")
        rules += on("maybe_tag", [EOF_TRIGGER], "text", "tag_release_eof", "header_eof", when=[f"from:{s}"],
                    rank=RANK_RETURN - 1 - index * HEADER_RANKS - n)
        for m, q in h.parts:
            listens.append(Listen(s, m, part_state(h, q), ("header_mark",)))
        if h.restart:
            for m, q in h.starts:
                listens.append(Listen(s, m, part_state(h, q), (f"header_use:{h.name}", "header_restart")))
    an = reasoning_state(h)
    states.append(StateDecl(an, f"a message the header made reasoning, until {' or '.join(m.shown() for m in h.ends)}",
                            owner=f"{h.name}_header", sink="reasoning_char"))
    rules += on(an, START, "maybe_tag", "tag_begin", rank=1)
    rules += on(an, but(START), an, "reasoning_char", rank=90)
    rules += on(an, [EOF_TRIGGER], an)
    for m in h.ends:
        listens.append(Listen(an, m, "text", ("leave_reasoning",)))
        listens.append(Listen("text", m, "text", ("framing",)))
    use = f"header_use:{h.name}"
    for m, p in h.at_start:
        listens.append(Listen(START_STATE, m, part_state(h, p), (use, "header_begin")))
    for m, p in h.starts:
        listens.append(Listen("text", m, part_state(h, p), (use, "header_begin")))
        listens.append(Listen(an, m, part_state(h, p), (use, "header_begin")))
    taken = {m for m, _ in h.starts} | set(h.ends)
    for m in h.tokens:
        if m not in taken:
            listens.append(Listen("text", m, "text", ("framing",)))
    for k, c in enumerate(h.cases):
        guards.append((f"header:{h.name}.{c.label}", _case_guard(h, k)))
    return Region(f"header:{h.name}", tuple(states), tuple(rules), None, tuple(listens), (("header_char", "header_run"),)), guards


def _case_guard(h: Header, k: int) -> Callable[[Any, str], bool]:
    def guard(self: Any, ch: str) -> bool:
        self.hdr_decl = h
        return bool(self.header_match(h)[0] == k)

    guard.__name__ = f"header:{h.name}.{h.cases[k].label}"
    return guard


def use_action(h: Header) -> tuple[str, Callable[[Any, str], None]]:
    """The generated action that makes ``h`` the header being read."""

    def action(self: Any, ch: str) -> None:
        self.hdr_decl = h

    action.__name__ = f"header_use:{h.name}"
    return action.__name__, action
