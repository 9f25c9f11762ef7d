"""CDATA inside a raw value: ``<![CDATA[`` enters ``in_cdata``, left only by ``]]>``.

The open is a marker ``in_param`` listens for when the value's style says ``cdata``
(the composer adds it); ``]]>`` is found by states (``cdata_rb``, ``cdata_rbrb``), since
``]`` may repeat. Nothing inside is markup.

Tolerated (``nested_cdata``; not under strict, XML has no nesting): a ``<![CDATA[``
inside a section opens a nested one, whose ``]]>`` is data of the outer section (a
model wrapping an XML file that holds CDATA in CDATA): the value is not cut at the
inner close.

State run (``cdata_span``): from ``in_cdata``, everything up to the next ``]]>`` is
value, however its ``]`` runs send the machine through ``cdata_rb`` and ``cdata_rbrb``
and back (each releases its held brackets into the value before the next character),
so the stretch is taken whole; it ends short of any ``]`` before the close or at the
chunk's end, so the states that find ``]]>`` step those (issue 12, item 5).
"""

from __future__ import annotations

from callsieve.native import mypyc_attr, trait
from callsieve.grammar.states import EOF_TRIGGER, OVERFLOW, Region, StateDecl, but, on
from callsieve.regions.value import ValueModel


@trait
@mypyc_attr(allow_interpreted_subclasses=True)
class CdataModel(ValueModel):
    def open_cdata(self, ch: str) -> None:
        self._hold(self._take_tag(ch))
        b = self._block()
        b.cdata_depth = 0
        b.cdata_tail = ""

    def cdata_nested(self, ch: str) -> bool:
        """A ``]]>`` that closes a section opened inside this one (tolerated; XML has
        no nesting, so never under strict, where ``_value`` counts none)."""
        b = self.block
        return b is not None and b.cdata_depth > 0

    def close_inner_cdata(self, ch: str) -> None:
        """The ``]]>`` of a nested section: data of the outer one, which goes on."""
        b = self._block()
        if b.cdata_depth and not b.spilled and b.param is not None:
            self.tolerate("nested_cdata", f"a CDATA section nested in the value of {b.param.name!r} closed at offset "
                          f"{self.pos - 2}; read as data of the section around it", self.pos - 2)
        b.cdata_depth -= 1
        self._hold(ch)
        self._value(b.cdata_held + ch, cdata=True)
        b.cdata_held = ""

    def cdata_char(self, ch: str) -> None:
        self._hold(ch)
        self._value(ch, cdata=True)

    def cdata_run(self, s: str, i: int, j: int) -> int:
        j = min(j, i + self.run_budget())
        seg = s[i:j]
        self._hold(seg)
        self._value(seg, cdata=True)
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
            self._value(seg, cdata=True)
        return j

    def cdata_hold(self, ch: str) -> None:
        b = self._block()
        self._hold(ch)
        b.cdata_held += ch

    def cdata_shift(self, ch: str) -> None:
        b = self._block()
        self._hold(ch)
        self._value(b.cdata_held[0], cdata=True)
        b.cdata_held = b.cdata_held[1:] + ch

    def cdata_shift_run(self, s: str, i: int, j: int) -> int:
        """A run of ``]`` after ``]]``: each one shifts a ``]`` into the value and two
        stay held (``cdata_held`` is ``"]]"`` throughout), so the run is taken whole."""
        j = min(j, i + self.run_budget())
        self._hold(s[i:j])
        self._value("]" * (j - i), cdata=True)
        return j

    def cdata_release(self, ch: str) -> None:
        b = self._block()
        self._value(b.cdata_held, cdata=True)
        b.cdata_held = ""

    def close_cdata(self, ch: str) -> None:
        b = self._block()
        self._hold(ch)
        b.cdata_held = ""


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
        *on(s, [EOF_TRIGGER], "text", "abort_block_eof"),
        *on(s, [OVERFLOW], s, "abort_oversized"),  # the block spills, the state stays
    )],
)

REGION = Region("cdata", STATES, RULES, CdataModel, run_forms=(("cdata_shift", "cdata_shift_run"),),
                state_runs=(("in_cdata", "cdata_span"),))
