"""CDATA inside a raw value: ``<![CDATA[`` enters ``in_cdata``, left only by ``]]>``.

The open is a marker ``in_param`` listens for when the value's style says ``cdata``
(the composer adds it); ``]]>`` is found by states (``cdata_rb``, ``cdata_rbrb``), since
``]`` may repeat. Nothing inside is markup.

Tolerated (``nested_cdata``; not under strict, XML has no nesting): a ``<![CDATA[``
inside a section opens a nested one, whose ``]]>`` is data of the outer section (a
model wrapping an XML file that holds CDATA in CDATA): the value is not cut at the
inner close. Its evidence is its own markup (issue 23): what follows the first inner
``]]>`` is held (``Block.cdata_pending``) until the outer section closes, and is the
value's only if neither the value's close nor a real opener stands in it; else the
nesting is withdrawn, the section ends at that first ``]]>`` as XML reads it, and what
followed is read again as the value (once: the block reads no nesting after that). The
end of the stream before the outer close withdraws it too. In a block that is itself
a deviation, a real opener in a section ends the block there, as one in its value does
(what follows it is read again in the value, which listens for it).

State run (``cdata_span``): from ``in_cdata``, everything up to the next ``]]>`` is
value, however its ``]`` runs send the machine through ``cdata_rb`` and ``cdata_rbrb``
and back (each releases its held brackets into the value before the next character),
so the stretch is taken whole; it ends short of any ``]`` before the close or at the
chunk's end, so the states that find ``]]>`` step those (issue 12, item 5).
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any

import regex

from callsieve.accum import Pieces
from callsieve.native import mypyc_attr, trait
from callsieve.grammar.states import EOF_TRIGGER, OVERFLOW, Region, StateDecl, but, on
from callsieve.regions.value import ValueModel


@lru_cache(maxsize=256)
def _closes(patterns: tuple[str, ...]) -> Any:
    """One search for any of a value's close patterns (the marker and its variants)."""
    return regex.compile("|".join(f"(?:{p})" for p in patterns))


@trait
@mypyc_attr(allow_interpreted_subclasses=True)
class CdataModel(ValueModel):
    def open_cdata(self, ch: str) -> None:
        self._hold(self._take_tag(ch))
        b = self._block()
        b.cdata_depth = 0
        b.cdata_tail = ""
        b.cdata_open_at = b.raw_len

    def _cdata(self, s: str) -> None:
        """Data of the open section: the value's, or held while a nesting in it is
        undecided (``cdata_pending``)."""
        b = self._block()
        if not self.cfg.strict and not b.cdata_withdrawn:
            # Nested CDATA (tolerated): a ``<![CDATA[`` inside a section opens one its
            # ``]]>`` closes as data (``cdata_nested``). (It cannot overlap itself, so
            # counting it in the last 8 characters and this piece counts each once.)
            seen = b.cdata_tail + s
            if "<![CDATA[" in seen:
                b.cdata_depth += seen.count("<![CDATA[")
            b.cdata_tail = seen[-8:]
        pending = b.cdata_pending
        if pending is not None and not b.spilled:
            pending.append(s)
            return
        self._value(s, cdata=True)

    def cdata_nested(self, ch: str) -> bool:
        """A ``]]>`` that closes a section opened inside this one (tolerated; XML has
        no nesting, so never under strict, where ``_cdata`` counts none)."""
        b = self.block
        return b is not None and b.cdata_depth > 0

    def close_inner_cdata(self, ch: str) -> None:
        """The ``]]>`` of a nested section: data of the outer one, which goes on. The
        first one is where XML's reading and the nesting part: what follows is held
        until the outer section closes (``close_cdata`` decides)."""
        b = self._block()
        b.cdata_depth -= 1
        self._hold(ch)
        closing = b.cdata_held + ch
        b.cdata_held = ""
        if b.cdata_pending is None and not b.spilled and b.param is not None:
            b.cdata_pending = Pieces()
            b.cdata_from = b.raw_len
            b.cdata_note_at = self.pos - 2
        self._cdata(closing)

    def cdata_char(self, ch: str) -> None:
        self._hold(ch)
        self._cdata(ch)

    def cdata_run(self, s: str, i: int, j: int) -> int:
        j = min(j, i + self.run_budget())
        seg = s[i:j]
        self._hold(seg)
        self._cdata(seg)
        return j

    def cdata_span(self, s: str, i: int) -> int:
        """The state run of ``in_cdata``: ``s[i:j]``, up to the next ``]]>`` or the
        chunk's end and never ending in ``]``, read as stepping would read it (every
        character held and given to the value; back in ``in_cdata`` after it)."""
        k = s.find("]]>", i)
        j = len(s) if k < 0 else k
        budget = self.run_budget()
        if j - i > budget:
            j = i + budget
        while j > i and s[j - 1] == "]":
            j -= 1  # a "]" would leave cdata_rb or cdata_rbrb holding it: stepped
        if j > i:
            seg = s[i:j]
            self._hold(seg)
            self._cdata(seg)
        return j

    def cdata_hold(self, ch: str) -> None:
        b = self._block()
        self._hold(ch)
        b.cdata_held += ch

    def cdata_shift(self, ch: str) -> None:
        b = self._block()
        self._hold(ch)
        self._cdata(b.cdata_held[0])
        b.cdata_held = b.cdata_held[1:] + ch

    def cdata_shift_run(self, s: str, i: int, j: int) -> int:
        """A run of ``]`` after ``]]``: each one shifts a ``]`` into the value and two
        stay held (``cdata_held`` is ``"]]"`` throughout), so the run is taken whole."""
        j = min(j, i + self.run_budget())
        self._hold(s[i:j])
        self._cdata("]" * (j - i))
        return j

    def cdata_release(self, ch: str) -> None:
        b = self._block()
        self._cdata(b.cdata_held)
        b.cdata_held = ""

    def close_cdata(self, ch: str) -> None:
        """The section's ``]]>``. After a nesting (``cdata_pending``): the nesting holds
        if what followed its first inner close has neither the value's close nor a
        real opener in it (its evidence is its own); else it is withdrawn. In a block
        that is itself a deviation, a real opener in the section ends the block: what
        follows it is read again in the value, which listens for real openers (and
        ends the block at this one)."""
        b = self._block()
        self._hold(ch)
        b.cdata_held = ""
        at = self.opener_inside(b.cdata_open_at)
        if at >= 0:
            b.cdata_pending = None
            raw = b.raw.join()
            b.raw = Pieces()
            b.raw.append(raw[:at])
            b.raw_len = at
            self.pushback = raw[at:] + self.pushback
            return
        pending = b.cdata_pending
        if pending is None:
            return
        b.cdata_pending = None
        p = b.param
        if b.spilled or p is None:
            return
        text = pending.join()
        if self._nesting_holds(text):
            self.tolerate("nested_cdata", f"a CDATA section nested in the value of {p.name!r} closed at offset "
                          f"{b.cdata_note_at}; read as data of the section around it", b.cdata_note_at)
            self._value(text, cdata=True)
            return
        self.withdraw_nesting()

    def _nesting_holds(self, text: str) -> bool:
        b = self._block()
        close = getattr(b.param.spec.body, "close", None) if b.param is not None else None
        if close is not None:
            patterns = (close.pattern,) + tuple(v.pattern for v in close.variants)
            if _closes(patterns).search(text) is not None:
                return False
        openers = self.cfg.openers
        return openers is None or openers.find(text) < 0

    def withdraw_nesting(self, ch: str = "") -> None:
        """The nesting had no evidence of its own (or the stream ended before the outer
        close): the section ends at its first inner ``]]>``, as XML reads it, and what
        followed is read again, as the value (the machine is in ``in_param``), once."""
        b = self._block()
        b.cdata_pending = None
        b.cdata_withdrawn = True
        b.cdata_depth = 0
        b.cdata_held = ""
        raw = b.raw.join()
        b.raw = Pieces()
        b.raw.append(raw[: b.cdata_from])
        b.raw_len = b.cdata_from
        self.pushback = raw[b.cdata_from :] + self.pushback

    def cdata_undecided(self, ch: str) -> bool:
        """A nesting is held undecided in the open section (``cdata_pending``)."""
        b = self.block
        return b is not None and b.cdata_pending is not None and not b.spilled



STATES = (
    StateDecl("in_cdata", "a CDATA section in a value: nothing is markup", in_block=True, owner="cdata"),
    StateDecl("cdata_rb", "] seen in CDATA", in_block=True, owner="cdata"),
    StateDecl("cdata_rbrb", "]] seen in CDATA", in_block=True, owner="cdata"),
)

RULES = (
    *on("in_cdata", ["rbrack"], "cdata_rb", "cdata_hold"),
    *on("in_cdata", but("rbrack"), "in_cdata", "cdata_char"),
    *on("cdata_rb", ["rbrack"], "cdata_rbrb", "cdata_hold"),
    *on("cdata_rb", but("rbrack"), "in_cdata", "cdata_release", "reprocess"),
    *on("cdata_rbrb", ["rbrack"], "cdata_rbrb", "cdata_shift"),
    *on("cdata_rbrb", ["gt"], "in_cdata", "close_inner_cdata", when=["cdata_nested"], rank=10),
    *on("cdata_rbrb", ["gt"], "in_param", "close_cdata", rank=20),
    *on("cdata_rbrb", but("rbrack", "gt"), "in_cdata", "cdata_release", "reprocess"),
    *[r for s in ("in_cdata", "cdata_rb", "cdata_rbrb") for r in (
        # (a nesting still undecided at the end: withdrawn, what followed it read again)
        *on(s, [EOF_TRIGGER], "in_param", "withdraw_nesting", when=["cdata_undecided"], rank=40),
        *on(s, [EOF_TRIGGER], "text", "abort_block_eof"),
        *on(s, [OVERFLOW], s, "abort_oversized"),  # the block spills, the state stays
    )],
)

REGION = Region("cdata", STATES, RULES, CdataModel, run_forms=(("cdata_shift", "cdata_shift_run"),),
                state_runs=(("in_cdata", "cdata_span"),))
