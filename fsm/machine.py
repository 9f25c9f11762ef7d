"""The callsieve machine, composed from its regions and the dialects' structures.

Theory of operation
===================

1. The input is read one character at a time. Each character is a *trigger*: its
   character class (``lt`` for ``<`` and ``＜``, ``nl``, ``tick``, ... or ``other``;
   a start character outside the base classes gets a class of its own). ``eof`` ends
   the stream; ``overflow`` fires when a held block passes ``max_block_chars``. Every
   (state, trigger) pair has transitions; they are tried in rank order and the first
   whose guards pass fires. An unguarded last transition makes every pair total: an
   unexpected character is a transition too, never an exception.

2. The machine is composed from *regions* (``callsieve.regions``), each declared in one
   module with its states, rules, guards, actions and the markers it listens for:
   prose, reasoning, tag, block, value, CDATA, JSON, and any region a dialect brings.
   Dialects declare *structure* (``callsieve.grammar.api``); ``callsieve.structure``
   compiles it into *positions*, states between markers, one per FOLLOW set.

3. Rule: what each state listens for is a *listen rule* (origin state, marker, dest,
   actions). For a dialect's positions and values they are derived from its structure;
   the reasoning region's are built from the union of the dialects' reasoning families
   (``Dialect.reasoning``), a header region's from its ``Header`` (harmony), and a
   dialect whose models write calls inside unclosed reasoning has its block openers
   listened for in the reasoning states too (policy ``calls_in_reasoning``). The
   composer turns each into a matcher entry and one row out of ``maybe_tag`` guarded by
   ``hit:ORIGIN:MARKER``. A state's start classes (``START`` in its rules) are the
   classes of the characters that may begin one of its markers, so adding a dialect
   never slows or breaks another's scan.

4. Rule: besides its state, the machine reads only these registers: ``origin`` (where a
   held tag returns: guards ``from:STATE``), the held tag's classification (``hit:``
   guards), the open block (its dialect, current call, parameter and value spec; the
   JSON depth), the fork's candidates, and the prose region's run counters.

5. Grammar-aware termination: a value's close goes to ``after_close``, whose matcher is
   FOLLOW of the value (derived): one of those markers confirms the close, anything else
   returns the held text to the value.

6. Shared openers: when enabled dialects' openers read the same text, the opener leads
   to ``fork``, which decides by lookahead against what each dialect's grammar reads
   after its opener (derived from its structure: ``tag.derive_decider``), binds a
   dialect once its lookahead has matched whole and no other's may, and replays the
   held text in the chosen grammar (``callsieve.regions.tag``).

7. Table-driven: states, triggers, guards, actions, their order. Not table-driven: what
   a guard computes (marker matching in ``callsieve.matcher``) and what an action does
   with the text (the region mixins). The engine never branches on a dialect's name.

8. Three artefacts come from this one declaration: the reference runner (the
   ``transitions`` machine, one trigger per character), the compiled runner (a table
   read from that machine's events, with bulk scans of self-loops and the regions'
   state runs, which read through several of their states at once), and the diagrams.
   The compiled runner reads ``transitions`` internals (``events[t].transitions``,
   ``conditions[i].func/.target``, ``before``) in one place, ``callsieve.compiler``.
"""

from __future__ import annotations

import re
from collections import OrderedDict
from dataclasses import dataclass, field, replace
from functools import lru_cache
from typing import Any, Callable, Generic, Iterable, TypeVar

import regex

from callsieve import generated
from callsieve.declare import Declaration, validate
from dataclasses import replace

from callsieve.grammar.api import Body, Dialect, JsonValue, Marker, Raw, Variant, validate_marker
from callsieve.grammar.cdata import CDATA_OPEN
from callsieve.grammar.errors import GrammarError
from callsieve.grammar.states import (
    ALL,
    CLASSES,
    EOF_TRIGGER,
    EXIT,
    OTHER,
    RANK_HIT,
    RANK_RETURN,
    RUN_FORMS,
    START,
    Listen,
    Region,
    Rule,
    StateDecl,
    Transition,
    Triggers,
    but,
    on,
)
from callsieve.matcher import Entry, Matcher, continuation
from callsieve.regions import ModelBase, capture, cdata, header, json_body, json_value, prose, python_value, reasoning, start, tag, value
from callsieve.regions.block import REST_STATE, position_rules, position_state, rest_region, rest_rows, rest_scope
from callsieve.regions.engine import ENGINE_MODELS, EngineModel
from callsieve.regions.tag import Fork, ForkCandidate
from callsieve.structure import Layout, Leaf, Position, ValueSpec, compile_dialect



@dataclass(frozen=True, eq=False)
class Act:
    """What a complete structural marker does: the leaf it is, for a parameter open the
    value specs it may enter, and the body (capture, JSON) it leads into. Carried on
    the matcher entry for the actions."""

    leaf: Leaf
    values: tuple[ValueSpec, ...] = ()
    enter: Leaf | None = None

    @property
    def spec(self) -> object:
        return self.leaf.spec


#: The engine's regions a body may name (``grammar.api.Body.region`` as a string; the
#: built-in bodies name theirs so: ``JsonArgs.region == "json_body"``).
ENGINE_BODY_REGIONS: dict[str, Region] = {
    r.name: r for r in (capture.REGION, json_body.REGION, python_value.REGION)
}


def body_region(body: object, dialect: str = "") -> Region:
    """The region a body names (a ``Region`` of a dialect's own, or an engine region's name)."""
    region = getattr(body, "region", None)
    if isinstance(region, Region):
        return region
    if isinstance(region, str) and region in ENGINE_BODY_REGIONS:
        return ENGINE_BODY_REGIONS[region]
    raise GrammarError(f"dialect {dialect}: body {getattr(body, 'label', body)!r} names region {region!r}, which is neither "
                       f"a Region nor an engine body region ({', '.join(sorted(ENGINE_BODY_REGIONS))})")


def entry_of(lf: Leaf) -> str:
    """The state a body leaf is read from: its body's ``entry``."""
    return str(getattr(lf.body, "entry"))


@dataclass(eq=False)
class Machine:
    """A composed machine: the declaration, its model class and matchers, and what
    tools read to draw it."""

    decl: Declaration
    model: type
    matchers: dict[str, Matcher]
    scoped: dict[str, dict[str, Matcher]]
    layouts: tuple[Layout, ...]
    #: state (or "state@spec") → the listen rules of that origin, for diagrams
    listens: dict[str, list[tuple[str, Marker, str]]] = field(default_factory=dict)
    forks: list[Fork] = field(default_factory=list)
    #: guard name → (origin, marker label): the hit guards, for diagrams and traces
    hits: dict[str, tuple[str, str]] = field(default_factory=dict)
    #: state → its sink action: where the first character of a dead tag goes
    sinks: dict[str, str] = field(default_factory=dict)
    #: The class the compiled runner's model is made from: :class:`EngineModel` itself
    #: when no dialect brings a region model (the generated guards and actions are
    #: called from the table, not looked up on it), else the composed ``model``. (In the
    #: compiled build an instance of the native class runs its own methods directly;
    #: an interpreted subclass sends every call between them through Python.)
    runner_model: type = EngineModel
    #: The enabled dialects' real openers (``_real_openers``), searched for in data a
    #: tolerated construct read (``Config.openers``); None when there are none.
    openers: Matcher | None = None

    @property
    def start(self) -> str:
        """The state a sieve begins in: ``header_start`` where a prompt may have ended
        inside an enabled header (``Header.at_start``), else ``start`` where a block its
        own body opens is listened for (callsieve.regions.start), else ``text``."""
        return self.decl.entries[0] if self.decl.entries else self.decl.initial


#: ``Sieve(calls_in_reasoning=...)``: whether a tool-call block inside unclosed
#: reasoning is a call (ending the reasoning) as each dialect declares, always, or never.
CALLS_IN_REASONING = ("dialect", "call", "reasoning")


class _Composer:
    def __init__(self, dialects: tuple[Dialect, ...], think: bool, calls_in_reasoning: str = "dialect",
                 strict: bool = False, bare: bool = True) -> None:
        self.dialects = dialects
        #: With the blocks their own body opens (listened for where the response begins).
        self.bare = bare
        #: Those blocks' first leaves, when there are any (the ``start`` state is then in).
        self.body_openers: list[tuple[Layout, Leaf]] = []
        self.think = think
        self.calls_in_reasoning = calls_in_reasoning
        #: the reasoning states (their family's), when the reasoning region is in
        self.reasoning_states: tuple[str, ...] = ()
        #: Leave every tolerance out (``grammar.api``: variants, implied closes, bare
        #: blocks that are deviations).
        self.strict = strict
        self.states: list[StateDecl] = []
        self.rules: list[Rule | Transition] = []
        self.models: list[type] = []
        #: origin → [(entry, dest, actions, extra guard rows)]
        self.entries: dict[str, list[tuple[Entry, list[tuple[tuple[str, ...], str, tuple[str, ...]]]]]] = {}
        self.scoped_entries: dict[str, dict[str, list[tuple[Entry, list[tuple[tuple[str, ...], str, tuple[str, ...]]]]]]] = {}
        self.guards: dict[str, Callable[..., bool]] = {}
        self.listens: dict[str, list[tuple[str, Marker, str]]] = {}
        self.forks: list[Fork] = []
        self.hits: dict[str, tuple[str, str]] = {}
        #: (state, character, dest, actions, guard): rows on one character's class
        self.char_rows: list[tuple[str, str, str, tuple[str, ...], str]] = []
        #: body leaves by the region that reads them (``EXIT`` rows expand per leaf)
        self.body_leaves: dict[str, list[tuple[Layout, Leaf]]] = {}
        self.fork_rows = 0
        self.run_forms: dict[str, str] = dict(RUN_FORMS)
        self.state_runs: dict[str, str] = {}
        #: generated actions (``enter:LEAF``), added to the model like the guards
        self.actions: dict[str, Callable[..., None]] = {}
        #: hit key → the one dialect a region's marker belongs to (rule 2 reads it)
        self.owner: dict[str, str] = {}
        #: the block openers in prose, those that read the same text together
        self.groups: list[list[tuple[Layout, Leaf]]] = []
        #: rows that begin a body whose marker was left out, so far (``_capture``: each
        #: ranked apart, before the capture's own)
        self.implied_bodies = 0
        #: positions where a value's opener may be left out, so far (``_implied_open``)
        self.implied_opens = 0
        #: headers composed so far (each ranks its rows apart: ``header.header_region``)
        self.header_count = 0
        #: the enabled dialects' real openers and their messages' ends (``_real_openers``,
        #: ``_message_ends``), with the data their listens carry
        self.real_openers: list[tuple[Marker, object]] = []
        self.message_ends: list[Marker] = []

    # ------------------------------------------------------------ listen rules
    def listen(self, origin: str, marker: Marker, rows: list[tuple[tuple[str, ...], str, tuple[str, ...]]],
               data: object = None, needs_name: bool = False, scope: str | None = None, key: str = "",
               codes: tuple[str, ...] = (), prefixed: bool = False, reads_as: str = "") -> None:
        where = f"{origin}@{scope}" if scope else origin
        key = key or f"hit:{where}:{marker.shown()}"
        if key in self.hits:
            raise GrammarError(
                f"two markers shown as {marker.shown()!r} listened for in {where} (rule: what a state listens for is "
                "told apart by how each marker is shown); fix: if two dialects declare it, enable one of them; "
                "else give the markers distinct labels"
            )
        self.hits[key] = (where, marker.shown())
        entry = Entry(key, marker, data, needs_name, codes, prefixed, reads_as, getattr(data, "enter", None), marker.anchor)
        if scope is None:
            self.entries.setdefault(origin, []).append((entry, rows))
        else:
            self.scoped_entries.setdefault(origin, {}).setdefault(scope, []).append((entry, rows))
        self.listens.setdefault(where, []).extend((key, marker, dest) for _g, dest, _a in rows)
        if not self.strict and not codes:
            # Tolerated variants and stray prefixes: entries of their own (their rows are
            # the marker's), so that the diagrams draw the tolerated path beside the
            # marker's. A prefix goes before the marker and before each variant.
            shown = repr(marker.shown())
            for v in marker.variants:
                self.listen(origin, marker.as_variant(v), rows, data, needs_name, scope, codes=(v.code,), reads_as=shown)
            for p in marker.prefixes:
                self.listen(origin, marker.with_prefix(p), rows, data, needs_name, scope, codes=(p.code,), prefixed=True,
                            reads_as=shown)
                for v in marker.variants:
                    self.listen(origin, marker.as_variant(v).with_prefix(p), rows, data, needs_name, scope,
                                codes=(p.code, v.code), prefixed=True, reads_as=shown)

    def target(self, lf: Leaf, layout: Layout) -> tuple[str, Leaf | None]:
        """Where reading ``lf`` leads: the position after it, or straight into the body
        that alone may follow it (a capture, a JSON body)."""
        if lf.kind == "block_close":
            return "text", None
        after = layout.after.get(lf.id)
        if after is None:
            raise GrammarError(f"dialect {layout.dialect.name}: nothing may follow {lf.label()!r} and the block cannot end there")
        bodies = [x for x in after.follow if x.body is not None]
        if len(bodies) == 1 and len(after.follow) == 1 and not after.can_end:
            return entry_of(bodies[0]), bodies[0]
        return after.name, None  # a position; with several bodies it routes by first character

    def structural(self, origin: str, lf: Leaf, layout: Layout, scope: str | None = None, first: tuple[str, ...] = (),
                   guards: tuple[str, ...] = (), trailing: Variant | None = None) -> None:
        """The listen rule of a structural marker leaf read at ``origin``. ``trailing``:
        tolerated text before the marker, after a value's close (``Raw(trailing=)``),
        read with it as one marker, reported."""
        assert lf.marker is not None
        marker = lf.marker
        codes: tuple[str, ...] = ()
        reads = ""
        if lf.stray:
            # Tolerance (``Opt(..., stray=CODE)``): a marker the format does not have
            # there, read where models write it, reported; shown apart in the diagrams
            # (a parameter's open: ``Opt(Param(...), stray=CODE)``, the parameter it begins).
            marker, codes = _stray_marker(lf.marker, lf.stray), (lf.stray,)
            reads = ("nothing: a marker the format does not have there" if lf.kind == "mark"
                     else f"{lf.marker.shown()!r}, a marker the format does not have there")
        if trailing is not None:
            marker = Marker(f"(?:{trailing.pattern})[ \t\r\n]{{0,8}}(?:{marker.pattern})",
                            tuple(t + ex for t in trailing.examples[:1] for ex in marker.examples)
                            + tuple(t + marker.examples[0] for t in trailing.examples[1:]),
                            f"~{trailing.examples[0]}{marker.shown()}", anchor=marker.anchor)
            codes = (trailing.code,) + codes
            reads = reads or f"{lf.marker.shown()!r} after the value's close"
        if lf.kind == "param_open":
            specs = layout.values[lf.id]
            # Choose: one row per case (its guard reads the open's fields), the default last.
            rows: list[tuple[tuple[str, ...], str, tuple[str, ...]]] = [
                (guards + (f"case:{s.name}",), s.state, first + ("open_param",)) for s in specs[:-1]
            ]
            rows.append((guards, specs[-1].state, first + ("open_param",)))
            # Its key is its own name, unless it stands after the parameter's open (``between``).
            keyed_before = lf.param is not None and bool(lf.param.between)
            self.listen(origin, marker, rows, Act(lf, specs), needs_name=not keyed_before, scope=scope, codes=codes,
                        reads_as=reads)
            return
        if lf.kind == "block_close":
            self.listen(origin, marker, [(guards, "text", first + ("close_block",))], Act(lf), scope=scope, codes=codes,
                        reads_as=reads)
            return
        dest, enter = self.target(lf, layout)
        action = {"call_open": "open_call", "call_close": "close_call", "block_open": "open_block", "mark": "hold_mark",
                  "param_begin": "begin_param"}[lf.kind]
        named = lf.kind == "call_open" and ("(?P<name>" in lf.marker.pattern or "(?P<attrs>" in lf.marker.pattern)
        if lf.kind == "param_begin":
            named = lf.param is not None and lf.param.key_capture() is None  # else a capture gives the key
        self.listen(origin, marker, [(guards, dest, first + (action,))], Act(lf, (), enter), needs_name=named, scope=scope,
                    codes=codes, reads_as=reads)

    # ------------------------------------------------------------ composition
    def compose(self) -> Machine:
        layouts = tuple(compile_dialect(d, self.strict, self.bare) for d in _blocks_counted_once(self.dialects))
        regions: list[Region] = [prose.REGION, tag_region()]
        self.body_openers = [(layout, lf) for layout in layouts for lf in layout.openers
                             if lf.marker is None and lf.spec.block.prose] if self.bare else []
        if self.body_openers:
            regions.append(start.REGION)
        declared = tuple(r for d in self.dialects for r in d.reasoning)
        if self.think and declared:
            rr = reasoning.region(declared)
            regions.append(rr)
            self.reasoning_states = tuple(st.name for st in rr.states)
        if any(True for d in self.dialects for _ in d.values()):
            regions.append(value.REGION)
        if any(d.has_cdata() for d in self.dialects):
            regions.append(cdata.REGION)
        if any(d.has_json_values() for d in self.dialects):
            regions.append(json_value.REGION)
        if any(lf.kind == "block_close" for layout in layouts for lf in layout.leaves):
            # (before the bodies' regions: so drawn, no label of the overview overlaps another)
            regions.append(rest_region())
        # The regions the bodies name, each once (the engine's first, in their order),
        # with the leaves each reads.
        named: list[Region] = []
        for layout in layouts:
            for lf in layout.leaves:
                if lf.body is None:
                    continue
                br = body_region(lf.body, layout.dialect.name)
                if br not in named:
                    named.append(br)
                self.body_leaves.setdefault(br.name, []).append((layout, lf))
                if lf.kind == "body":
                    _check_body(layout.dialect.name, lf, br)
        engine_order = list(ENGINE_BODY_REGIONS.values())
        for br in sorted(named, key=lambda r: engine_order.index(r) if r in engine_order else len(engine_order)):
            if br not in regions:
                if any(r.name == br.name for r in regions):
                    raise GrammarError(f"two regions are named {br.name!r} (rule: region names are unique); rename one")
                regions.append(br)
        if any(h.at_start for d in self.dialects for h in d.headers):
            regions.append(header.start_region("start" if self.body_openers else "text"))
        for d in self.dialects:
            regions += [r for r in d.regions if r not in regions]
            for h in d.headers:
                hr, guards = header.header_region(h, self.header_count)
                self.header_count += 1
                regions.append(hr)
                self.guards.update(guards)
                name, act = header.use_action(h)
                self.actions[name] = act
        self.real_openers = _real_openers(layouts)
        self.message_ends = _message_ends(self.dialects)
        for r in regions:
            self.states += r.states
            self.rules += self._exits(r)
            self.run_forms.update(r.run_forms)
            for state, method in r.state_runs:
                if state in self.state_runs:
                    raise GrammarError(f"state {state!r} has two state runs ({self.state_runs[state]!r}, {method!r})")
                self.state_runs[state] = method
            engine = r.model is not None and any(issubclass(e, r.model) for e in ENGINE_MODELS)
            if r.model is not None and not engine and r.model not in self.models:
                self.models.append(r.model)
            for ls in r.listens:
                assert isinstance(ls.marker, Marker)
                rows: list[tuple[tuple[str, ...], str, tuple[str, ...]]] = [((), ls.dest, tuple(ls.actions))]
                if self.body_openers and r.name == "reasoning" and ls.origin != "text" and ls.dest == "text":
                    # Reasoning that closes before anything visible was written leaves the
                    # response at its start, where a block its own body opens may stand.
                    rows.insert(0, (("at_response_start",), "start", tuple(ls.actions)))
                self.listen(ls.origin, ls.marker, rows)
                owners = {d.name for d in self.dialects for x in d.reasoning if ls.marker in (x.open, x.close)}
                if len(owners) == 1 and r.name == "reasoning":  # rule 2 counts it as that dialect's
                    self.owner[f"hit:{ls.origin}:{ls.marker.shown()}"] = owners.pop()
        self.groups = self._opener_groups(layouts)
        for layout in layouts:
            self._dialect(layout)
            for h in layout.dialect.headers:
                self._header(h, layout)
        self._openers(layouts)
        self._framing()
        self._code(layouts)
        return self._finish(layouts)

    def _code(self, layouts: tuple[Layout, ...]) -> None:
        """Markup in code (issue 22): the enabled dialects' real openers (as written,
        anchored as in prose: ``_real_openers``) and their headers' message ends,
        listened for in prose's code states (``prose.code_listens``)."""
        found = _real_openers(layouts, keep_anchor=True)
        openers = [replace(m, variants=(), prefixes=()) for m, _d in found]
        data = {id(o): d for o, (_m, d) in zip(openers, found)}
        ends = [e for d in self.dialects for h in d.headers for e in h.ends]
        ends = [e for k, e in enumerate(ends) if not any(_cross_match(e, f) for f in ends[:k])]
        for ls in prose.code_listens(list(openers), list(ends)):
            assert isinstance(ls.marker, Marker)
            self.listen(ls.origin, ls.marker, [((), ls.dest, tuple(ls.actions))], data.get(id(ls.marker)))

    def _framing(self) -> None:
        """Framing tokens (``Dialect.framing``): in prose an empty-text ``Text`` carries
        each in its raw; in reasoning, ``Reasoning.raw`` (equal declarations count once)."""
        seen: list[Marker] = []
        owner: dict[int, str] = {}
        for d in self.dialects:
            for m in d.framing:
                if m in seen:
                    continue
                seen.append(m)
                owner[id(m)] = d.name
                for origin, dest, action in (("text", "text", "framing"),
                                             *((st, st, "reasoning_framing") for st in self.reasoning_states)):
                    clash = next((e for e, _r in self.entries.get(origin, []) if _cross_match(e.marker, m)), None)
                    if clash is not None:
                        raise GrammarError(
                            f"dialect {d.name}: framing marker {m.shown()!r} reads the same text as {clash.marker.shown()!r}, "
                            f"which {origin} listens for already (rule: one marker per text in a state); "
                            "leave one of them out of the dialects, or out of the framing"
                        )
                    self.listen(origin, m, [((), dest, (action,))])
                    self.owner[f"hit:{origin}:{m.shown()}"] = d.name
        if self.strict:
            return
        openers = [lf.marker for grp in self.groups for _l, lf in grp if lf.marker is not None]
        for d in self.dialects:
            # Tolerated: a block's marker standing in prose alone (``Dialect.orphans``):
            # framing, reported with its code (``_take_tag`` notes it).
            for m, code in d.orphans:
                key = f"hit:text:{m.shown()}"
                if key in self.hits:
                    continue  # (declared by another dialect too)
                if m in openers:
                    continue  # a block's opener: framing when its block fails (``BlockModel._release``)
                clash = next((e for e, _r in self.entries.get("text", []) if _cross_match(e.marker, m)), None)
                if clash is not None:
                    raise GrammarError(
                        f"dialect {d.name}: orphan marker {m.shown()!r} reads the same text as {clash.marker.shown()!r}, "
                        "which text listens for already (rule: one marker per text in a state); leave it out of the orphans"
                    )
                self.listen("text", m, [((), "text", ("orphan_framing",))], codes=(code,), reads_as="framing")
                self.owner[key] = d.name

    def _exits(self, r: Region) -> list[Rule | Transition]:
        """A region's rows, each that leads to ``EXIT`` made one per body leaf it reads:
        to what follows the body there, guarded by ``body:LEAF``, ranked in turn between
        the row's rank and the next (arguments that end a call with no close of its
        own end the call: ``body_exit``)."""
        out: list[Rule | Transition] = []
        for row in r.rules:
            if row.dest != EXIT:
                out.append(row)
                continue
            # (a body that opens with a bracket ends with its pair: a row that ends one on
            # the other bracket is not made for it, JSON's `]` for an object's body)
            leaves = [(layout, lf) for layout, lf in self.body_leaves.get(r.name, []) if _may_end(row, lf)]
            for k, (layout, lf) in enumerate(leaves):
                dest, enter = self.target(lf, layout) if lf.id in layout.after else ("text", None)
                # (the last needs no guard: a body the others are not is this one)
                g: tuple[str, ...] = ()
                if k < len(leaves) - 1:
                    g = (f"body:{lf.name}",)
                    self.guards[g[0]] = generated.body_guard(lf.name)
                # (arguments that end a call with no close of its own end the call)
                ends_call = getattr(lf.body, "reads", "") == "args" and lf.call is not None and lf.call.close is None
                acts = row.actions + (("body_exit",) if ends_call else ())
                if enter is not None:  # a body right after this one: entered here
                    acts += (self._enter_action(enter),)
                out.append(replace(row, dest=dest, guards=row.guards + g, actions=acts, rank=row.rank + k / 1000))
        return out

    def _dialect(self, layout: Layout) -> None:
        entered = {p.name for lf in layout.leaves if lf.kind not in ("capture", "value", "param_open", "block_close")
                   for p in [layout.after.get(lf.id)] if p is not None}
        for lf in layout.leaves:
            p = layout.after.get(lf.id)
            if lf.kind == "capture" and p is not None and not p.captured:
                entered.add(p.name)  # a capture that ends at a character leads here
        for pos in layout.positions:
            bodies = [x for x in pos.follow if x.body is not None]
            if (len(bodies) == 1 and len(pos.follow) == 1 and not pos.can_end) or pos.name not in entered:
                continue  # a marker leads straight into the body, or only a capture is before it
            self.states.append(position_state(pos))
            covered, rest = self._route(pos, bodies, layout)
            eof_close = (not self.strict and bool(pos.spec.block.eof_close)
                         and any(lf.kind in ("block_close", "call_close") for lf in pos.follow))
            self.rules += position_rules(pos, covered, rest, self._implied_open(pos, layout), eof_close)
            for lf in pos.follow:
                if lf.marker is not None:
                    self.structural(pos.name, lf, layout)
        for lf in layout.leaves:
            if lf.kind == "capture":
                self._capture(lf, layout)
            elif lf.kind == "block_close" and not lf.spec.block.tolerance:
                # A block given up part-way, read on (``block_rest``): to its close, or to
                # a real opener or a message's end before it. (Not a block that is itself
                # a deviation: it is never read on, ``BlockModel.rest_follows``.)
                self.structural(REST_STATE, lf, layout, scope=rest_scope(lf.spec))
                self._opener_ends(REST_STATE, rest_scope(lf.spec), [(m, None) for m in self.message_ends])
        for specs in layout.values.values():
            for s in specs:
                body = s.body
                self.listen(s.state, body.close, [((), "after_close", ("hold_close",))], s, scope=s.name)
                if isinstance(body, Raw) and body.style.cdata:
                    self.listen(s.state, CDATA_OPEN, [((), "in_cdata", ("open_cdata",))], s, scope=s.name)
                for lf in s.follow:
                    if lf.marker is not None:
                        self.structural("after_close", lf, layout, scope=s.name, first=("commit_value",))
                        for t in (body.trailing if isinstance(body, Raw) and not self.strict else ()):
                            # Tolerance (``Raw(trailing=)``): text where whitespace belongs,
                            # read with the marker after it, which confirms the close.
                            self.structural("after_close", lf, layout, scope=s.name, first=("commit_value",),
                                            trailing=t)
                if isinstance(body, Raw) and body.implied_close and not self.strict:
                    # Tolerance: the close left out. A marker FOLLOW allows, standing
                    # where the close should be, ends the value (``implied_ok`` asks for
                    # the evidence: a parameter key not given yet, known to the schema).
                    for lf in s.follow:
                        if lf.marker is not None:
                            self.structural(s.state, lf, layout, scope=s.name, first=("imply_value_close",),
                                            guards=("implied_ok",))
                    # A value that quotes its dialect's markup (a call or block open in
                    # it) implies no close from then on: that markup is data.
                    taken = [lf.marker for lf in s.follow if lf.marker is not None] + [body.close]
                    quoted = ("call_open",) if s.leaf.spec.block.tolerance else ("call_open", "block_open")
                    for lf in layout.leaves:
                        m = lf.marker
                        if lf.kind in quoted and m is not None and m not in taken:
                            taken.append(m)
                            self.listen(s.state, m, [((), s.state, ("value_quote",))], s, scope=s.name)
                if s.leaf.spec.block.tolerance:
                    # Rule: a tolerated construct ends where a real opener begins (its
                    # evidence is its own markup, never a later real block's).
                    self._opener_ends(s.state, s.name)

    def _opener_ends(self, origin: str, scope: str, more: list[tuple[Marker, object]] = [],
                     guards: tuple[str, ...] = ()) -> None:
        """The enabled dialects' real openers (and ``more``), listened for at ``origin``
        (in ``scope``) unless it listens for their text already: each ends the block
        there (``opener_ends_block``) and is read again as prose (where ``guards``
        pass: else the tag is the state's data, as any other)."""
        have = [e.marker for e, _rows in self.scoped_entries.get(origin, {}).get(scope, [])]
        for m, data in self.real_openers + more:
            if not any(_cross_match(m, h) for h in have):
                have.append(m)
                self.listen(origin, m, [(guards, "text", ("opener_ends_block", "reprocess"))], data, scope=scope)

    def _implied_open(self, pos: Position, layout: Layout) -> tuple[str, str] | None:
        """Tolerance (``Opt(marker, missing=CODE)``): where a value's opener is expected
        and something else stands (a character, or a held tag that is no marker of this
        position), the value begins there. Returns the value's state and the action."""
        opens = [lf for lf in pos.follow if lf.kind == "param_open" and lf.missing]
        if not opens:
            return None
        if len(opens) > 1 or len(pos.follow) != 1:
            raise GrammarError(f"dialect {layout.dialect.name}: at {pos.name} a value's opener that may be left out must be "
                               "the only thing that may follow (else nothing tells what the text is)")
        lf = opens[0]
        spec = layout.values[lf.id][-1]  # the default body: no open marker's fields to choose by
        act = f"imply_open:{lf.name}"
        self.actions[act] = generated.imply_open_action(spec, lf.missing)
        assert lf.marker is not None
        # The opener read after all, in a value it was assumed left out of: the tolerance
        # borrowed evidence (the text before it is no value), the block is malformed.
        # (The marker alone: a variant may hold a start character of the value past its first.)
        self.listen(spec.state, replace(lf.marker, variants=(), prefixes=()),
                    [(("value_open_missing",), "text", ("opener_after_text", "abort_block", "reprocess"))], spec, scope=spec.name)
        # The value so begun is a tolerated construct: it ends where a real opener begins
        # (its evidence is its own markup, never a later block's; issue 23).
        self._opener_ends(spec.state, spec.name, guards=("value_open_missing",))
        self.implied_opens += 1  # (each position's row ranked apart)
        self.rules += on("maybe_tag", ALL, spec.state, act, "reprocess", when=[f"from:{pos.name}"],
                         rank=RANK_RETURN + 900 + self.implied_opens)
        return spec.state, act

    def _route(self, pos: object, bodies: list[Leaf], layout: Layout) -> tuple[tuple[str, ...], bool]:
        """A position where several bodies may begin: the first character decides
        (each body's ``first`` characters: ``{``/``[`` for JSON; the one body that may
        begin with any character, a capture, takes every other)."""
        name = getattr(pos, "name")
        anything = [b for b in bodies if not getattr(b.body, "first", "")]
        if len(anything) > 1:
            raise GrammarError(
                f"dialect {layout.dialect.name}: {anything[0].label()!r} and {anything[1].label()!r} may both begin at {name} "
                "with any character (rule: bodies that may begin at one place are told apart by their first "
                "characters); fix: give one of them its first characters (Body(first=...)), or a marker before it"
            )
        taken: list[str] = []
        chars: list[str] = []
        for k, b in enumerate(bodies):
            act = self._enter_action(b)
            for c in getattr(b.body, "first", ""):
                if c in chars:
                    raise GrammarError(
                        f"dialect {layout.dialect.name}: two bodies may begin with {c!r} at {name} (rule: bodies that may "
                        "begin at one place are told apart by their first characters)"
                    )
                chars.append(c)
                cls = next((n for n, cs in CLASSES.items() if cs == c), "")
                if cls:  # a class of its own: its row needs no guard
                    taken.append(cls)
                    self.rules += on(name, [cls], entry_of(b), act, "reprocess", rank=30 + k)
                else:
                    self.char_rows.append((name, c, entry_of(b), (act, "reprocess"), ""))
        for b in anything:
            act = self._enter_action(b)
            self.rules += on(name, but("ws", "nl", START, *taken), entry_of(b), act, "reprocess", rank=80)
        return tuple(taken), bool(anything)

    def _enter_action(self, lf: Leaf) -> str:
        """The action that enters body ``lf`` (made once): ``enter:LEAF``; for a body
        the format does not have there (``Opt(JsonArgs(), stray=CODE)``), one that
        reports it as it begins, named apart so that the diagrams show the tolerated
        path (``enter~CODE:LEAF``)."""
        act = f"enter~{lf.stray}:{lf.name}" if lf.stray else f"enter:{lf.name}"
        if act not in self.actions:
            self.actions[act] = generated.enter_action(lf)
        return act

    def _capture(self, lf: Leaf, layout: Layout) -> None:
        """A capture listens for what may follow it; ``end_chars`` end it too."""
        from callsieve.grammar.api import Capture

        body = lf.body
        assert isinstance(body, Capture)
        if not body.end_chars:  # else the position after the end character listens
            for q in _follow(layout, lf):
                if q.marker is not None:
                    self.structural("in_capture", q, layout, scope=lf.name, first=("end_capture",))
        self.scoped_entries.setdefault("in_capture", {}).setdefault(lf.name, [])
        self._gives_way("in_capture", ("abort_at_opener", "reprocess"), scope=lf.name)
        g = f"capture:{lf.name}"
        self.guards[g] = generated.capture_guard(lf.name)
        follow = _follow(layout, lf)
        missing = [q for q in follow if q.missing and q.marker is not None]
        if missing and not body.end_chars:
            # Tolerance (``Opt(marker, missing=CODE)`` before a body): the marker left
            # out, the body's first character ends the capture and begins the body.
            for q in follow:
                if q.kind not in ("json_args", "json_call", "json_calls"):
                    continue
                enter, imply = self._enter_action(q), f"imply_mark:{q.name}"
                self.actions[imply] = generated.imply_mark_action(q.name, missing[0].missing, missing[0].label())
                for c in getattr(q.body, "first", ""):
                    # (before the capture's own rows: to its pattern the character is one
                    # it can never take, ``capture_fails``)
                    cls = next((n for n, cs in CLASSES.items() if cs == c), "")
                    if not cls:
                        raise GrammarError(f"dialect {layout.dialect.name}: a body that begins with {c!r} may follow "
                                           f"{lf.label()!r} with its marker left out; only a bracket can begin it there")
                    self.implied_bodies += 1
                    self.rules += on("in_capture", [cls], entry_of(q), "end_capture", imply, enter, "reprocess",
                                     when=[g], rank=-self.implied_bodies)
        if body.end_chars:
            after = layout.after[lf.id]
            for c in body.end_chars:
                self.char_rows.append(("in_capture", c, after.name, ("end_capture_char",), g))

    def _gives_way(self, origin: str, actions: tuple[str, ...], scope: str | None = None, also: tuple[Marker, ...] = ()) -> None:
        """``origin`` (a capture, a message header: text that stands for markup) ends at
        a block opener of any enabled dialect, where its markup is malformed: the
        opener is read again where the block came from (``actions``; issue 22). One
        entry for every opener and its tolerated spellings, but those ``origin`` already
        listens for. Such states are stepped, never scanned in bulk (their text is
        short), so rule 2 has nothing to protect there: the entry is ``prefixed``."""
        if not self.groups and not also:
            return
        have = self.scoped_entries.get(origin, {}).get(scope, []) if scope is not None else self.entries.get(origin, [])
        here = [e.marker.pattern for e, _rows in have]
        alts = [m for grp in self.groups for _l, o in grp if o.marker is not None
                for m in tag.marker_spellings(o.marker, self.strict) if m.pattern not in here]
        alts += [m for a in also for m in tag.marker_spellings(a, self.strict) if m.pattern not in here]
        # An opener that a longer marker listened for here begins with (GLM's
        # ``<tool_call>KEY</arg_key>``, a key written with the opener) yields to it: it
        # is held on as that marker's beginning, and gives way only if that marker dies
        # (the held tag, beginning with the opener, is read again where the block came
        # from), never before the marker could complete.
        longer = [e.marker for e, _rows in have]
        deferred = [m for m in alts if any(_continues(h, ex) for h in longer for ex in m.examples)]
        alts = [m for m in alts if m not in deferred]
        if deferred:
            where = f"{origin}@{scope}" if scope is not None else origin
            g = f"held_opener:{where}"
            rx = regex.compile("|".join(f"(?:{tag.unnamed(m.pattern)})" for m in deferred))
            self.guards[g] = generated.held_opener_guard(g, scope, rx)
            self.rules += on("maybe_tag", ALL, "text", *actions, when=[f"from:{origin}", g], rank=RANK_RETURN - 1)
        if not alts:
            return
        opener = Marker("|".join(f"(?:{tag.unnamed(m.pattern)})" for m in alts),
                        tuple(ex for m in alts for ex in m.examples), "any dialect's block opener")
        self.listen(origin, opener, [((), "text", actions)], scope=scope, prefixed=True)

    def _opener_groups(self, layouts: tuple[Layout, ...]) -> list[list[tuple[Layout, Leaf]]]:
        """Block openers in prose, those that read the same text together (a block its
        own body opens is opened where the response begins: ``_body_openers``)."""
        openers = [(layout, lf) for layout in layouts for lf in layout.openers if lf.spec.block.prose and lf.marker is not None]
        # A tolerance never overrides another enabled dialect's format: a tolerated
        # wrapper whose opener reads the same text as a framing token (Hermes-family
        # ``<response>``, ERNIE's framing) is left out.
        framing = [m for d in self.dialects for m in d.framing]
        openers = [(layout, lf) for layout, lf in openers
                   if not (lf.spec.block.tolerance and any(_cross_match(lf.marker, m) for m in framing))]
        groups: list[list[tuple[Layout, Leaf]]] = []
        for item in openers:
            for g in groups:
                if any(_cross_match(item[1].marker, other[1].marker) and item[0] is not other[0] for other in g):
                    g.append(item)
                    break
            else:
                groups.append([item])
        return groups

    def _body_openers(self) -> None:
        """Blocks their own body opens: each body's lead is listened for where the
        response begins (``start``); complete, it opens the block and is read again by
        the body (``open_by_body``)."""
        for layout, lf in self.body_openers:
            block = lf.spec.block
            where = f"dialect {layout.dialect.name}, block {lf.spec.prefix.rstrip('.')}"
            if lf.body is None:
                raise GrammarError(f"{where}: a bare block (open=None) begins with {lf.label()!r}, which is neither a "
                                   "marker nor a body (rule: a block opens at a marker, or at a body where the "
                                   "response begins); fix: give the block an open marker")
            lead = block.decide if block.decide is not None else getattr(lf.body, "lead", None)
            if lead is None:
                raise GrammarError(
                    f"{where}: its body {lf.label()!r} opens it, and nothing says what that body begins with (rule: a "
                    "block its own body opens is told by the body's lead, where the response begins); fix: declare "
                    "Block(decide=Marker(...)) with the pattern the body begins with, or use a body that opens a "
                    "block (JsonCall, JsonCalls, PythonCalls, a Body with lead=)"
                )
            validate_marker(lead, f"{where}, lead {lead.shown()!r}")
            for other, _rows in self.entries.get("start", []):
                if _cross_match(other.marker, lead):
                    raise GrammarError(
                        f"{where}: its lead {lead.shown()!r} reads the same text as {other.marker.shown()!r}, which "
                        "another block opened by its own body begins with (rule: where the response begins, what a "
                        "body begins with tells the block); fix: enable one of the two dialects, or give one "
                        "Block(decide=...)"
                    )
            self.listen("start", lead, [((), entry_of(lf), ("open_by_body", "reprocess"))], Act(lf, (), lf))
            self.owner[f"hit:start:{lead.shown()}"] = layout.dialect.name

    def _openers(self, layouts: tuple[Layout, ...]) -> None:
        """Block openers in prose; those several dialects share become forks."""
        self._body_openers()
        for g in self.groups:
            for origin in ("text", *self._in_reasoning(g)):
                first: tuple[str, ...] = ()
                if len(g) > 1:
                    self._fork(g, origin, first)
                    continue
                layout, lf = g[0]
                if lf.marker is None:
                    raise GrammarError(
                        f"dialect {layout.dialect.name}: a bare block (open=None) begins with {lf.label()!r}, no marker "
                        "(rule: a block opens at a marker it begins with); fix: give the block an open marker"
                    )
                # (a block read only with tools= given: its opener is no marker without them)
                needs = ("tools_given",) if lf.spec.block.needs_tools else ()
                if needs:
                    self.guards["tools_given"] = generated.tools_given_guard()
                if lf.kind == "block_open":
                    self.structural(origin, lf, layout, first=first, guards=needs)
                elif lf.kind == "mark":  # a bare block's first marker that opens no call
                    dest, enter = self.target(lf, layout)
                    self.listen(origin, lf.marker, [(needs, dest, first + ("open_bare_block",))], Act(lf, (), enter))
                else:  # the first call of a bare block (named by its open, or by a capture after it)
                    dest, enter = self.target(lf, layout)
                    named = "(?P<name>" in lf.marker.pattern or "(?P<attrs>" in lf.marker.pattern
                    self.listen(origin, lf.marker, [(needs, dest, first + ("open_bare_call",))], Act(lf, (), enter),
                                needs_name=named)

    def _header(self, h: Any, layout: Layout) -> None:
        """The decision at a header's end marker: one row per case, in order."""
        opens = [lf for lf in layout.openers if lf.spec.block == h.call]
        if len(opens) != 1:
            raise GrammarError(f"dialect {layout.dialect.name}: header {h.name}: its call block must be one of the dialect's blocks")
        lf = opens[0]
        dest, enter = self.target(lf, layout)
        rows: list[tuple[tuple[str, ...], str, tuple[str, ...]]] = []
        for c in h.cases:
            to = {"reasoning": (header.reasoning_state(h), "header_reasoning"), "text": ("text", "header_text"),
                  "call": (dest, "header_call")}[c.body]
            rows.append(((f"header:{h.name}.{c.label}",), to[0], (to[1],)))
        parts = sorted({p for _m, p in h.starts} | {p for _m, p in h.parts} | {p for _m, p in h.at_start})
        # (another dialect's header start ends it too: Kimi K3's ``<|open|>call …`` after
        # a harmony ``<|channel|>`` mentioned in prose was held in the header to the end)
        others = tuple(m for d in self.dialects if d.name != layout.dialect.name for hh in d.headers for m, _p in hh.starts)
        for p in parts:
            self.listen(header.part_state(h, p), h.end, rows, Act(lf, (), enter))
            self._gives_way(header.part_state(h, p), ("header_gives_way", "reprocess"), also=others)

    def _homes(self) -> dict[str, set[str]]:
        """The reasoning states some block opener is listened for in, each with the
        dialects whose blocks may begin there: a block begun there ends back there
        (``_back_home``)."""
        policy = self.calls_in_reasoning
        out: dict[str, set[str]] = {}
        for g in self.groups:
            for r in self._in_reasoning(g):
                out.setdefault(r, set()).update(layout.dialect.name for layout, _ in g
                                                if policy == "call" or layout.dialect.calls_in_reasoning)
        return {r: out[r] for r in self.reasoning_states if r in out}

    def _in_reasoning(self, group: list[tuple[Layout, Leaf]]) -> tuple[str, ...]:
        """The reasoning states that listen for this opener (policy
        ``calls_in_reasoning``): those of the reasoning families its dialects declare,
        of the dialects whose blocks are read in reasoning (``"dialect"``: those that
        declare ``calls_in_reasoning``; ``"call"``: all). A block begun there is held
        until the reasoning resolves it (``callsieve.regions.reasoning``)."""
        policy = self.calls_in_reasoning
        if policy == "reasoning" or not self.reasoning_states:
            return ()
        states = {r.state for layout, _ in group if policy == "call" or layout.dialect.calls_in_reasoning
                  for r in layout.dialect.reasoning}
        return tuple(s for s in self.reasoning_states if s in states)

    def _fork(self, group: list[tuple[Layout, Leaf]], origin: str = "text", first: tuple[str, ...] = ()) -> None:
        cands: list[ForkCandidate] = []
        dests: dict[str, str] = {}
        for layout, lf in group:
            # A bare block's first marker that opens no call (Mistral's ``[TOOL_CALLS]``)
            # is a block opener too: bound, it opens the block, as ``open_bare_block``
            # does. A bare block's first call's open (qwen3_coder's and the Hermes
            # family's ``<function=…>``), bound, opens the implied block and that call
            # (``BlockModel.bind_call``), as ``open_bare_call`` does.
            if lf.spec.block.needs_tools:
                raise GrammarError(f"dialect {layout.dialect.name}: the opener {lf.label()!r} of a block read only with "
                                   "tools= is shared with another dialect (rule: a fork decides by what follows, never "
                                   "by the options); fix: give it an opener of its own")
            dest, enter = self.target(lf, layout)
            dests[layout.dialect.name] = dest
            decider = tag.derive_decider(layout, lf, enter, self.strict, self._reads_space)
            cands.append(ForkCandidate(layout.dialect.name, lf.spec, decider, lf.marker, enter,
                                       lf if lf.kind == "call_open" else None))
        tag.check_deciders(tuple(cands), group[0][1].label())
        label = group[0][1].label()
        fork = Fork(label, tuple(cands))
        if not self.forks:
            self.states += tag.FORK_STATES
            self.rules += tag.FORK_RULES
        elif origin != "text":  # the same opener, listened for in reasoning too
            fork = next(f for f in self.forks if f.opener_label == label)
            self._fork_listen(group, origin, first, fork, label)
            return
        self.forks.append(fork)
        self._fork_listen(group, origin, first, fork, label)
        homes = self._in_reasoning(group)
        for n, c in enumerate(cands):
            dest = dests[c.dialect]
            # (a dialect in several forks, qwen3_coder's ``<tool_call>`` and ``<function=…>``:
            # a guard per fork, named by its opener after the first)
            gname = f"fork_is:{c.dialect}"
            if gname in self.guards:
                gname = f"fork_is:{c.dialect}@{label}"
            self.guards[gname] = generated.fork_guard(c.dialect, label, gname)
            layout = group[n][0]
            if not (self.calls_in_reasoning == "call" or layout.dialect.calls_in_reasoning):
                # Bound in reasoning, a dialect whose calls are not read there follows
                # its own rule: its markup is reasoning (``ReasoningModel.fork_to_reasoning``).
                for r in homes:
                    hg = f"home:{r}"
                    self.guards[hg] = generated.home_guard(r)
                    self.rules += on("fork", ALL, r, "fork_to_reasoning", "reprocess", when=[gname, hg],
                                     rank=RANK_HIT + self.fork_rows)
                    self.fork_rows += 1
            self.rules += on("fork", ALL, dest, "fork_bind", "reprocess", when=[gname], rank=RANK_HIT + self.fork_rows)
            self.fork_rows += 1

    def _reads_space(self, state: str) -> bool:
        """``state`` reads whitespace and stays (a JSON body's ``j_start``): a fork's
        decider skips it before the body's first character."""
        loops: set[str] = set()
        for r in self.rules:
            if isinstance(r, Rule) and r.source == state and r.dest == state and not r.guards:
                loops.update(r.triggers.expand(tuple(CLASSES) + (OTHER,), ()))
        return {"ws", "nl"} <= loops

    def _fork_listen(self, group: list[tuple[Layout, Leaf]], origin: str, first: tuple[str, ...], fork: Fork, label: str) -> None:
        shared = _shared_marker(group)
        self.listen(origin, shared, [((), "fork", first + ("fork_begin",))], fork, key=f"fork:{origin}:{label}")

    def _finish(self, layouts: tuple[Layout, ...]) -> Machine:
        names = [s.name for s in self.states]
        dup = {n for n in names if names.count(n) > 1}
        if dup:
            raise GrammarError(f"state {sorted(dup)[0]!r} is declared twice (two regions or dialects name it)")
        # matchers
        matchers = {o: Matcher([e for e, _ in es]) for o, es in self.entries.items()}
        scoped = {o: {sc: Matcher([e for e, _ in es]) for sc, es in by.items()} for o, by in self.scoped_entries.items()}
        _check_one_chars_and_anchors(self.states, matchers, scoped)
        # start characters → classes
        starts: dict[str, set[str]] = {}
        for o, m in matchers.items():
            starts.setdefault(o, set()).update(m.start_chars)
        for o, by in scoped.items():
            for m in by.values():
                starts.setdefault(o, set()).update(m.start_chars)
        classes = dict(CLASSES)
        class_of = {c: name for name, chars in CLASSES.items() for c in chars}
        for chars in starts.values():
            for c in sorted(chars):
                if c not in class_of:
                    name = f"u{ord(c):04x}"
                    classes[name] = c
                    class_of[c] = name
        triggers = tuple(classes) + (OTHER,)
        start_classes = {o: tuple(sorted({class_of[c] for c in chars}, key=triggers.index)) for o, chars in starts.items()}
        # hit rows out of maybe_tag, in listen order
        rank = RANK_HIT
        for o, es in list(self.entries.items()) + [(o, e) for o, by in self.scoped_entries.items() for e in by.values()]:
            for entry, rows in es:
                self.guards[entry.key] = generated.hit_guard(entry.key)
                for extra, dest, actions in rows:
                    self.rules += on("maybe_tag", ALL, dest, *actions, when=[entry.key, *extra], rank=rank)
                    rank += 1
                    for g in extra:
                        if g.startswith("case:") and g not in self.guards:
                            self.guards[g] = generated.case_guard(g[len("case:"):])
        # where a dead tag returns
        sinks = {s.name: s.sink for s in self.states if s.sink}
        ret = RANK_RETURN
        origins = set(self.entries) | set(self.scoped_entries) | {r.source for r in self.rules if r.dest == "maybe_tag"}
        for s in self.states:
            if s.name not in origins:
                continue
            g = f"from:{s.name}"
            self.guards[g] = generated.from_guard(s.name)
            if s.sink:
                self.rules += on("maybe_tag", ALL, s.name, "tag_reject", "reprocess", when=[g], rank=ret)
                if not s.in_block:
                    self.rules += on("maybe_tag", [EOF_TRIGGER], s.name, "tag_release_eof", when=[g], rank=ret)
            ret += 1
        for layout in layouts:
            for pos in layout.positions:
                if pos.can_end:
                    g = f"from:{pos.name}"
                    self.rules += on("maybe_tag", ALL, "text", "end_bare_block", "reprocess", when=[g], rank=ret)
                    self.rules += on("maybe_tag", [EOF_TRIGGER], "text", "end_bare_block", when=[g], rank=ret)
                    ret += 1
        for k, (state, c, dest, actions, g) in enumerate(self.char_rows):
            cls = class_of.get(c, OTHER)
            if cls in start_classes.get(state, ()):
                raise GrammarError(
                    f"at {state}, {c!r} begins a marker listened for there and leads to {dest} too (rule: a character "
                    "that may begin a marker is held as one); fix: begin the body, or end the capture, otherwise"
                )
            cg = f"char:{c!r}"
            self.guards[cg] = generated.char_guard(c)
            self.rules += on(state, [cls], dest, *actions, when=[g, cg] if g else [cg], rank=20 + k)
        if REST_STATE in names:
            self.rules += rest_rows(self.rules)  # (after every row that gives a block up is made)
        homes = self._homes()
        transitions = _back_home(_expand(self.rules, triggers, start_classes, 8 if homes else 1), self.states, homes,
                                 {layout.dialect.name for layout in layouts}, self.guards)
        # (a prompt that may have ended inside a header is listened for first; what is
        # no header goes on to where a block its own body opens, if one is enabled)
        entries = tuple(s for s in (header.START_STATE, "start") if any(st.name == s for st in self.states))
        decl = Declaration(tuple(self.states), tuple(transitions), "text", classes, self.run_forms, self.state_runs,
                           entries)
        ns: dict[str, Any] = dict(self.guards)
        ns.update(self.actions)
        ns["__module__"] = __name__
        _check_mixins(self.models)
        # A dialect's own mixins come first, so that they may subclass an engine region
        # (to call its helpers) and the MRO stays consistent; they may not redefine one.
        # EngineModel joins the engine's regions (compiled, in the mypyc build); the
        # class made here stays interpreted (regions.engine).
        model = type("Model", (*self.models, EngineModel), ns)
        validate(decl, model)
        for leaves in self.body_leaves.values():
            for layout, lf in leaves:
                begin = getattr(lf.body, "begin", "")
                if begin and not callable(getattr(model, begin, None)):
                    raise GrammarError(f"dialect {layout.dialect.name}: body {lf.label()!r} begins with action {begin!r}, "
                                       "which the model has not (rule: a body's begin is an action of its region's model)")
        _check_rule2(decl, matchers, scoped, start_classes, classes, self.owner)
        openers = Matcher([Entry(f"opener:{m.shown()}", m) for m, _d in self.real_openers]) if self.real_openers else None
        return Machine(decl, model, matchers, scoped, layouts, self.listens, self.forks, self.hits, sinks,
                       model if self.models else EngineModel, openers)


def _continues(longer: Marker, text: str) -> bool:
    """``longer`` reads ``text`` as a proper beginning of one of its matches (partial,
    not whole)."""
    m = regex.compile(longer.pattern).fullmatch(text, partial=True)
    return m is not None and m.partial


def _stray_marker(m: Marker, code: str) -> Marker:
    """A marker read where the format does not have it (``Opt(..., stray=CODE)``), shown
    apart (its variants are not: a stray marker's misspelling is no marker)."""
    return Marker(m.pattern, m.examples, f"{m.shown()} ~{code}", anchor=m.anchor)


_CLOSERS = {"{": "rbrace", "[": "rbrack"}


def _may_end(row: Rule | Transition, lf: Leaf) -> bool:
    """Whether a row to EXIT on closing brackets may end this body: one that begins
    with an opening bracket (its ``first``) ends with the bracket's pair."""
    closer = _CLOSERS.get(getattr(lf.body, "first", ""))
    if closer is None:
        return True
    named = row.triggers.named if isinstance(row, Rule) and row.triggers.excluded is None else (
        (row.trigger,) if isinstance(row, Transition) else ())
    return not named or not set(named) <= set(_CLOSERS.values()) or closer in named


def _check_body(dialect: str, lf: Leaf, region: Region) -> None:
    """A value grammar's body names a state of its region to begin in, and that region's
    states hold the block (``in_block``: an overflow must be handled in each)."""
    names = {st.name for st in region.states}
    entry = entry_of(lf)
    if entry not in names:
        raise GrammarError(f"dialect {dialect}: body {lf.label()!r} begins in {entry!r}, which is no state of its region "
                           f"{region.name!r} (rule: a body's entry is a state of the region that reads it)")
    for st in region.states:
        if not st.in_block:
            raise GrammarError(f"dialect {dialect}: state {st.name!r} of body region {region.name!r} is not in_block (rule: "
                               "a body is read inside its block, so each of its states handles overflow); "
                               "fix: StateDecl(..., in_block=True)")
    if not any(getattr(row, "dest", "") == EXIT for row in region.rules):
        raise GrammarError(f"dialect {dialect}: body region {region.name!r} has no row to EXIT (rule: a body ends by a "
                           "row whose dest is callsieve.grammar.states.EXIT, where what follows it is read)")


def _check_mixins(mixins: list[type]) -> None:
    engine: set[str] = set()
    for m in ENGINE_MODELS:
        for klass in m.__mro__:
            engine.update(k for k in vars(klass) if not k.startswith("__"))
    for m in mixins:
        clash = sorted(k for k in vars(m) if not k.startswith("__") and k in engine)
        if clash:
            raise GrammarError(f"region model {m.__name__}: {clash[0]!r} is already an engine guard or action; name yours apart")


def _check_one_chars_and_anchors(states: list[StateDecl], matchers: dict[str, Matcher],
                                 scoped: dict[str, dict[str, Matcher]]) -> None:
    """A one-character marker begins no longer marker of its state (it is taken at its
    own character, never held); an anchored marker stands only where a state reads
    prose or reasoning (what is before it is known there)."""
    sinks = {st.name: st.sink for st in states}
    every = [(o, m) for o, m in matchers.items()] + [(o, m) for o, by in scoped.items() for m in by.values()]
    for origin, m in every:
        for c in sorted(m.one_chars):
            longer = next((e for e in m.entries for ex in e.marker.examples if len(ex) > 1 and ex[0] == c), None)
            if longer is not None:
                one = next(e for e in m.entries if c in e.marker.examples)
                raise GrammarError(
                    f"marker {one.marker.shown()!r} is one character, and {longer.marker.shown()!r} begins with it; both "
                    f"are listened for in {origin} (rule: a one-character marker is taken at its own character, so no "
                    "other marker of its state may begin with it): change one of them"
                )
        for e in m.entries:
            if e.anchor and sinks.get(origin) not in ("text_char", "reasoning_char"):
                raise GrammarError(
                    f"marker {e.marker.shown()!r} is anchored ({e.anchor!r}) and listened for in {origin}, which reads "
                    "no prose (rule: an anchor is checked against the prose or reasoning before the marker); "
                    "anchor only markers that open a block or frame text"
                )


def _real_openers(layouts: tuple[Layout, ...], keep_anchor: bool = False) -> list[tuple[Marker, object]]:
    """The openers of the enabled dialects that are real: a block's open marker (or a
    bare block's first marker that opens no call) of a block read in prose that is not
    itself a deviation, and a message header's start; one per text they read (shared
    ones once), each with the data its listen carries. (An anchored one is listened
    for unanchored: in markup, what stands before it is no prose.)"""
    out: list[tuple[Marker, object]] = []
    for layout in layouts:
        found: list[tuple[Marker, object]] = []
        for lf in layout.openers:
            blk = lf.spec.block
            if lf.kind in ("block_open", "mark") and lf.marker is not None and not blk.tolerance and blk.prose:
                found.append((lf.marker if keep_anchor else replace(lf.marker, anchor=""), Act(lf)))
        found += [(m, None) for h in layout.dialect.headers for m, _part in h.starts]
        for m, data in found:
            if not any(_cross_match(m, o) for o, _d in out):
                out.append((m, data))
    return out


def _message_ends(dialects: tuple[Dialect, ...]) -> list[Marker]:
    """What ends a model's message in the enabled dialects: a header's ends (harmony's
    ``<|end|>``) and the framing tokens (``<|im_end|>``). A block read on after failing
    ends there (its close did not come)."""
    out: list[Marker] = []
    for d in dialects:
        for m in [*(e for h in d.headers for e in h.ends), *d.framing]:
            if not any(_cross_match(m, o) for o in out):
                out.append(replace(m, anchor=""))
    return out


def _blocks_counted_once(dialects: tuple[Dialect, ...]) -> tuple[Dialect, ...]:
    """The dialects, a block equal to one an earlier dialect declares left out of the
    later one: as equal reasoning and framing declarations count once, so do equal
    blocks (ERNIE 4.5 writes Hermes's blocks, with framing of its own). Its calls are
    then the earlier dialect's; enabled alone, the later dialect reads them itself."""
    seen: list[object] = []
    out: list[Dialect] = []
    for d in dialects:
        kept = tuple(b for b in d.blocks if not (b.prose and b in seen))
        seen.extend(d.blocks)
        out.append(d if len(kept) == len(d.blocks) else replace(d, blocks=kept))
    return tuple(out)


def tag_region() -> Region:
    return Region("tag", tag.STATES, tag.RULES, None)


def _expand(rules: Iterable[Rule | Transition], triggers: tuple[str, ...], start: dict[str, tuple[str, ...]],
            scale: int = 1) -> list[Transition]:
    """The rules as transitions, one per trigger, their ranks times ``scale`` (``_back_home``
    makes room before each row; scaled here, each row is made once)."""
    out: list[Transition] = []
    # (the rules share a few trigger sets: ``maybe_tag``'s ~2,000 hit rules are all ALL)
    expanded: dict[tuple[Triggers, tuple[str, ...]], tuple[str, ...]] = {}
    for r in rules:
        if isinstance(r, Transition):
            out.append(r if scale == 1 else replace(r, rank=r.rank * scale))
            continue
        rank = r.rank * scale
        key = (r.triggers, start.get(r.source, ()))
        got = expanded.get(key)
        if got is None:
            got = expanded[key] = r.triggers.expand(triggers, key[1])
        for t in got:
            out.append(Transition(t, r.source, r.dest, r.guards, r.actions, rank))
    return out


def _shared_marker(group: list[tuple[Layout, Leaf]]) -> Marker:
    """One marker for the openers of ``group`` (a shared opener). The dialects' own group
    names would repeat in one pattern (``attrs``), and nothing reads a field of it:
    groups unnamed."""
    if len(group) == 1 and group[0][1].marker is not None:
        return group[0][1].marker
    markers = [lf.marker for _l, lf in group if lf.marker is not None]
    pattern = "|".join(f"(?:{re.sub(r'[(][?]P<[A-Za-z_][A-Za-z0-9_]*>', '(?:', m.pattern)})" for m in markers)
    examples = tuple(ex for m in markers for ex in m.examples)
    # (their tolerated spellings too, each once: the fork binds the dialects whose
    # opener reads the spelling, ``tag._opens``)
    variants = tuple(dict.fromkeys(v for m in markers for v in m.variants))
    prefixes = tuple(dict.fromkeys(p for m in markers for p in m.prefixes))
    return Marker(pattern, examples, group[0][1].label(), variants=variants, prefixes=prefixes)


def _back_home(transitions: list[Transition], states: list[StateDecl], homes: dict[str, set[str]],
               dialects: set[str], guards: dict[str, Callable[..., bool]]) -> list[Transition]:
    """Where a block (or a fork) ends, it goes back to the state it began in (issue 22):
    each transition that ends one into ``text`` gets a twin into each reasoning state in
    ``homes`` where such a block may begin, guarded by ``home:STATE``, tried first; at the
    end of the stream the twin also decides what the reasoning held (``reasoning_eof``).
    A transition ends a block if it leaves a state inside one (``StateDecl.in_block``,
    the fork) for ``text``, or leaves ``maybe_tag`` for it holding a tag begun in such a
    state (its first guard names that origin), or is ``maybe_tag``'s fallback (a dead
    tag where only markup may stand). The block is a dialect's where the state (or the
    origin's scope) is one of its own; the engine's shared states may hold any block.
    ``transitions`` come with their ranks scaled by 8 (``_expand``), so that the twins fit
    before the rows they copy."""
    if not homes:
        return transitions
    owner = {s.name: s.owner for s in states if s.in_block}
    owner["fork"] = ""
    for r in homes:
        guards[f"home:{r}"] = generated.home_guard(r)
    out: list[Transition] = []
    # (whose block a row ends depends on its source and first guard alone: the rows a
    # rule expands to, one per trigger, are asked once)
    ended: dict[tuple[str, str | None], str | None] = {}
    for t in transitions:
        out.append(t)
        if t.dest != "text":
            continue
        key = (t.source, t.guards[0] if t.guards else None)
        whose = ended[key] if key in ended else ended.setdefault(key, _block_ended(t, owner, dialects))
        if whose is None:
            continue
        eof = ("reasoning_eof",) if t.trigger == EOF_TRIGGER else ()
        for k, (r, ds) in enumerate(homes.items()):
            if not whose or whose in ds:
                out.append(Transition(t.trigger, t.source, r, t.guards + (f"home:{r}",), t.actions + eof,
                                      t.rank - 1 - k))
    return out


def _block_ended(t: Transition, owner: dict[str, str], dialects: set[str]) -> str | None:
    """Whose block ``t`` ends: a dialect's name, "" for any (a state the engine's
    regions share), None when it ends none."""
    if t.source in owner:
        return owner[t.source] if owner[t.source] in dialects else ""
    if t.source != "maybe_tag":
        return None
    if not t.guards:
        return ""  # the fallback: a dead tag where only markup may stand
    first = t.guards[0]
    if not first.startswith(("hit:", "from:")):
        return None
    where = first.split(":")[1]
    origin, _, scope = where.partition("@")
    if origin not in owner:
        return None
    mine = scope.split(".")[0] if scope else owner[origin]
    return mine if mine in dialects else ""


def _follow(layout: Layout, lf: Leaf) -> list[Leaf]:
    pos = layout.after.get(lf.id)
    return list(pos.follow) if pos is not None else []


def _cross_match(a: Marker | None, b: Marker | None) -> bool:
    """Whether one marker's pattern reads an example of the other (they read the same text)."""
    if a is None or b is None:
        return False
    return _reads_same(a.pattern, a.examples, b.pattern, b.examples)


@lru_cache(maxsize=1 << 16)
def _reads_same(pa: str, ea: tuple[str, ...], pb: str, eb: tuple[str, ...]) -> bool:
    # Memoised by the patterns and examples it reads: a composition asks about the same
    # pairs of markers again and again (each opener against what a state listens for
    # already), and every composition of a set of dialects asks what others did; a
    # ``regex.compile`` that hits regex's own cache still cost ~10 µs a call.
    ca, cb = _pattern(pa), _pattern(pb)
    return any(cb.fullmatch(ex) for ex in ea) or any(ca.fullmatch(ex) for ex in eb)


@lru_cache(maxsize=4096)
def _pattern(p: str) -> Any:
    import regex

    return regex.compile(p)


def _dialect_of(e: Entry, owner: dict[str, str] | None = None) -> str:
    if owner and e.key in owner:
        return owner[e.key]
    spec = getattr(e.data, "spec", None)
    return getattr(getattr(spec, "dialect", None), "name", "")


def _check_rule2(decl: Declaration, matchers: dict[str, Matcher], scoped: dict[str, dict[str, Matcher]],
                 start_classes: dict[str, tuple[str, ...]], classes: dict[str, str], owner: dict[str, str] | None = None) -> None:
    """Rule 2, per context: in a state that scans in bulk and takes a dead tag back, no
    start character of a dialect's own markers there may continue one of them. (Across
    dialects sharing a context the matcher checks chunk tails exactly instead.)"""
    # (A state whose other characters are guarded, a capture that dies at a character
    # its pattern cannot take, is stepped: a dead tag's rest is read again there, never
    # skipped by a scan, so a marker may hold its start characters.)
    scanned = {t.source for t in decl.transitions if t.trigger == OTHER and t.dest == t.source and not t.guards}
    guarded = {t.source for t in decl.transitions if t.trigger == OTHER and t.guards}
    sinks = {s.name for s in decl.states if s.sink and s.name in scanned and s.name not in guarded}
    for state in sinks:
        ms = [matchers[state]] if state in matchers else list(scoped.get(state, {}).values())
        for m in ms:
            for e in m.entries:
                if e.prefixed:
                    continue  # broken by design; the matcher checks this context's tails exactly
                own = _dialect_of(e, owner)
                chars = "".join(sorted({c for x in m.entries if _dialect_of(x, owner) in (own, "") for c in x.marker.start_chars()}))
                for s in chars:
                    prefix = continuation(e.marker, s)
                    if prefix is not None:
                        raise GrammarError(
                            f"{'dialect ' + own + ', ' if own else ''}marker {e.marker.shown()!r} listened for in "
                            f"{state}: a start character {s!r} of {state} can continue {prefix!r} (rule 2: markers "
                            "may contain the start characters of their context only at their first position). "
                            f"Fix: split it before that {s!r} into two markers, one after the other in the "
                            f"structure (the second begins with {s!r}); or, if the {s!r} is a stray character "
                            "a model writes before the marker, declare it as the marker's Prefix"
                        )


#: A machine composed from this many dialects or more is a large one (every built-in
#: dialect: some 30,000-60,000 rows by the options, 45,000 for the default ``Sieve()``;
#: with 30,000, ~11 MB with its compiled table and ~15 MB more for the reference runner's
#: ``transitions`` machine; one dialect: some 1,000-5,000 rows). The caches of whole
#: machines keep large ones apart.
MANY_DIALECTS = 8
#: Machines of fewer dialects kept by each cache of whole machines (``compose`` by
#: identity and by value, ``callsieve.sieve.compiled`` and ``whole_blocks``) ...
_COMPOSED_MAX = 64
#: ... and, apart, machines of :data:`MANY_DIALECTS` or more: a stream of small
#: compositions never evicts the large machine a program uses (the tests compose some
#: 260 distinct machines per process, and recomposed the default one up to four times),
#: and at most this many large machines are kept.
_COMPOSED_MANY_MAX = 8

_K = TypeVar("_K")
_V = TypeVar("_V")


class KeptBySize(Generic[_K, _V]):
    """A bounded cache of whole machines (or what is made from one) in two parts, each
    least recently used first out: what is made from fewer than :data:`MANY_DIALECTS`
    dialects (at most ``few``) and, apart, from more (at most ``many``). The caller says
    which part a key is in (``many``: by the number of dialects, known before composing).
    Safe to share between threads as ``lru_cache`` is: two threads that miss together
    may both make the value, and the last one kept wins."""

    def __init__(self, few: int, many: int) -> None:
        self.bounds = (few, many)
        self.parts: tuple[OrderedDict[_K, _V], OrderedDict[_K, _V]] = (OrderedDict(), OrderedDict())

    def get(self, key: _K, many: bool) -> _V | None:
        part = self.parts[many]
        hit = part.get(key)
        if hit is not None:
            try:
                part.move_to_end(key)
            except KeyError:  # (taken out by another thread meanwhile)
                pass
        return hit

    def put(self, key: _K, value: _V, many: bool) -> None:
        part, bound = self.parts[many], self.bounds[many]
        while len(part) >= bound:
            try:
                part.popitem(last=False)
            except KeyError:  # (emptied by another thread meanwhile)
                break
        part[key] = value

    def __len__(self) -> int:
        return len(self.parts[0]) + len(self.parts[1])

    def clear(self) -> None:
        for part in self.parts:
            part.clear()


def composed_of_many(machine: Machine) -> bool:
    """Whether ``machine`` was composed from :data:`MANY_DIALECTS` dialects or more (one
    layout per dialect): which part of a cache of whole machines keeps it."""
    return len(machine.layouts) >= MANY_DIALECTS


def compose(dialects: tuple[Dialect, ...], think: bool = True, calls_in_reasoning: str = "dialect",
            strict: bool = False, bare: bool = True) -> Machine:
    """The machine for these dialects (and their reasoning region unless ``think=False``;
    ``calls_in_reasoning``: one of :data:`CALLS_IN_REASONING`; ``strict``: without any
    tolerance the grammar declares; ``bare``: with the blocks their own body opens,
    where the response begins). Cached: equal dialects and options, one machine (as
    long as it is kept: see :data:`_COMPOSED_MAX`)."""
    key = (tuple(map(id, dialects)), think, calls_in_reasoning, strict, bare)
    many = len(dialects) >= MANY_DIALECTS
    hit = _composed_by_identity.get(key, many)
    if hit is not None and len(hit[0]) == len(dialects) and all(a is b for a, b in zip(hit[0], dialects)):
        return hit[1]
    machine = _compose(dialects, think, calls_in_reasoning, strict, bare)
    _composed_by_identity.put(key, (dialects, machine), many)
    return machine


#: (the dialects' ids, the options) → (those dialects, kept alive so that their ids are
#: no other objects', their machine): the same dialect objects are found without
#: hashing them (a dialect hashes its whole declaration: with every dialect, ~0.7 ms a
#: Sieve() spent in ``_compose``'s cache key); equal ones that are other objects are
#: found by ``_compose``'s cache. As many machines kept as ``_compose`` keeps.
_composed_by_identity: KeptBySize[tuple[object, ...], tuple[tuple[Dialect, ...], Machine]] = KeptBySize(
    _COMPOSED_MAX, _COMPOSED_MANY_MAX)



class _HashedOnce(list[object]):
    """A cache key whose hash is taken once (as ``functools.lru_cache``'s): a dialect
    hashes its whole declaration, and a hit looks the key up twice."""

    __slots__ = ("hashvalue",)

    def __init__(self, items: tuple[object, ...]) -> None:
        super().__init__(items)
        self.hashvalue = hash(items)

    def __hash__(self) -> int:  # type: ignore[override]
        return self.hashvalue


#: (the dialects, the options) → their machine, by value.
_composed_by_value: KeptBySize[_HashedOnce, Machine] = KeptBySize(_COMPOSED_MAX, _COMPOSED_MANY_MAX)


def _compose(dialects: tuple[Dialect, ...], think: bool, calls_in_reasoning: str, strict: bool, bare: bool) -> Machine:
    key = _HashedOnce((dialects, think, calls_in_reasoning, strict, bare))
    many = len(dialects) >= MANY_DIALECTS
    hit = _composed_by_value.get(key, many)
    if hit is not None:
        return hit
    if calls_in_reasoning not in CALLS_IN_REASONING:
        raise GrammarError(f"calls_in_reasoning={calls_in_reasoning!r}: one of {CALLS_IN_REASONING}")
    machine = _Composer(dialects, think, calls_in_reasoning, strict, bare).compose()
    _composed_by_value.put(key, machine, many)
    return machine


def declare(dialects: tuple[Dialect, ...], think: bool = True, calls_in_reasoning: str = "dialect",
            strict: bool = False, bare: bool = True) -> Declaration:
    """The declaration of :func:`compose` (states and transitions as data)."""
    return compose(dialects, think, calls_in_reasoning, strict, bare).decl


def build_machine(decl: Declaration, model: Any, initial: str | None = None, graph: bool = False,
                  library_classes: bool = False) -> Any:
    """A ``transitions`` machine over ``model`` from the declaration.

    ``graph=True`` builds a ``GraphMachine`` (graphviz engine) for diagrams; build it
    from a fresh model, since a live machine highlights its current state.
    ``library_classes=True`` builds it from ``transitions``' own ``Machine``, events and
    rows, as the library runs them, without the reference runner's dispatch of hit rows
    (the test that holds that dispatch to the library's takes it).
    """
    kwargs: dict[str, Any] = dict(
        model=model,
        states=decl.state_names(),
        transitions=[t.as_dict() for t in decl.ordered()],
        initial=initial or decl.initial,
        auto_transitions=False,
        ignore_invalid_triggers=False,
        send_event=False,
    )
    if graph:
        from transitions.extensions import GraphMachine

        return GraphMachine(graph_engine="graphviz", show_conditions=True, **kwargs)
    if library_classes:
        from transitions import Machine as TMachine

        return TMachine(**kwargs)
    return _reference_machine(**kwargs)


def _reference_classes() -> type:
    """``transitions.Machine`` as the reference runner runs it: the same events, rows in
    the same order, guards and actions resolved on the model by name, but a row's
    ``execute`` and a guard's ``check`` without the library's logging and generic
    resolution. Why: the reference runner tries some twenty rows per character (every
    ``hit:`` row of a tag's end), and each try made four ``logging`` calls and resolved
    its guard's name through ``resolve_callable``: two thirds of the test suite's time
    went to the differential tests' reference side, half of that to this overhead. What
    a row does is ``Transition.execute``'s, step for step (prepare, conditions in order,
    before, the state change, after); tracing still wraps each row's ``execute``. An
    event's trigger, its state change and the machine's callbacks likewise, step for
    step without the log lines and the ``partial`` (issue 21: the reference runner was
    still a seventh of the test suite's CPU; these take it from ~16 to ~9 µs a character
    with every dialect, 3-character chunks)."""
    import itertools
    import logging

    from transitions import Machine as TMachine
    from transitions.core import Condition, Event, EventData, Transition as TTransition

    class ReferenceCondition(Condition):
        def check(self, event_data: Any) -> bool:
            func = self.func
            predicate = getattr(event_data.model, func) if isinstance(func, str) else func
            return bool(predicate(*event_data.args, **event_data.kwargs) == self.target)

    class ReferenceTransition(TTransition):
        condition_cls = ReferenceCondition

        def execute(self, event_data: Any) -> bool:
            machine = event_data.machine
            if self.prepare:
                machine.callbacks(self.prepare, event_data)
            model = event_data.model
            args = event_data.args
            for cond in self.conditions:
                # (ReferenceCondition.check inlined: a row's try is most of the runner)
                func = cond.func
                predicate = getattr(model, func) if isinstance(func, str) else func
                if predicate(*args, **event_data.kwargs) != cond.target:
                    return False
            if machine.before_state_change or self.before:
                machine.callbacks(itertools.chain(machine.before_state_change, self.before), event_data)
            if self.dest:
                self._change_state(event_data)
            if self.after or machine.after_state_change:
                machine.callbacks(itertools.chain(self.after, machine.after_state_change), event_data)
            return True

        def _change_state(self, event_data: Any) -> None:
            # (``Transition._change_state`` step for step: the source's exit callbacks,
            # the model's new state, the dest's enter callbacks, the final callbacks)
            machine = event_data.machine
            states = machine.states
            source = states[self.source]
            if source.on_exit:
                machine.callbacks(source.on_exit, event_data)
            dest = states[self.dest]
            setattr(event_data.model, machine.model_attribute, dest.value)
            event_data.state = dest
            if dest.on_enter:
                machine.callbacks(dest.on_enter, event_data)
            if dest.final:
                machine.callbacks(machine.on_final, event_data)

    class ReferenceEvent(Event):
        """``Event.trigger`` and ``Event._trigger`` as the library runs them on a machine
        without a queue (this one: ``Machine._process`` then calls the trigger at once),
        without the ``partial`` and the logging; and ``Event._process``: the state's rows
        tried in order until one fires, but a run
        of rows whose first guard is a ``hit:KEY`` guard (``generated.hit_guard``: true
        exactly when ``hit_key(ch) == KEY``) asks ``hit_key`` once and tries only the
        rows of that key, in their order: every other row of the run would fail its first
        guard. With every dialect, ``maybe_tag`` holds some 2,400 rows per trigger and a
        tag that dies tried each (the reference runner's cost of a dead tag)."""

        def trigger(self, model: Any, *args: Any, **kwargs: Any) -> Any:
            if self.machine.has_queue:
                return super().trigger(model, *args, **kwargs)
            return self._trigger(EventData(None, self, self.machine, model, args=args, kwargs=kwargs))

        def _trigger(self, event_data: Any) -> Any:
            machine = self.machine
            state = event_data.state = machine.states[getattr(event_data.model, machine.model_attribute)]
            try:
                if self._is_valid_source(state):
                    self._process(event_data)
            except BaseException as err:
                event_data.error = err
                if machine.on_exception:
                    machine.callbacks(machine.on_exception, event_data)
                else:
                    raise
            finally:
                if machine.finalize_event:
                    try:
                        machine.callbacks(machine.finalize_event, event_data)
                    except BaseException as err:  # (as the library: logged, not raised)
                        logging.getLogger("transitions.core").error(
                            "%sWhile executing finalize callbacks a %s occurred: %s.", machine.name,
                            type(err).__name__, str(err))
            return event_data.result

        def _process(self, event_data: Any) -> bool:
            machine = self.machine
            if machine.prepare_event:
                machine.callbacks(machine.prepare_event, event_data)
            rows = self.transitions[event_data.state.name]
            plan = self._plan(rows)
            for step in plan:
                if isinstance(step, dict):
                    key = event_data.model.hit_key(*event_data.args)
                    candidates = step.get(key, ())
                else:
                    candidates = (step,)
                for trans in candidates:
                    event_data.transition = trans
                    if trans.execute(event_data):
                        event_data.result = True
                        return True
            return False

        def _plan(self, rows: list[Any]) -> list[Any]:
            plans: dict[int, tuple[list[Any], int, list[Any]]] = self.__dict__.setdefault("_plans", {})
            hit = plans.get(id(rows))
            if hit is not None and hit[0] is rows and hit[1] == len(rows):
                return hit[2]
            plan: list[Any] = []
            for trans in rows:
                first = trans.conditions[0].func if trans.conditions else None
                if isinstance(first, str) and first.startswith("hit:") and trans.conditions[0].target:
                    if not plan or not isinstance(plan[-1], dict):
                        plan.append({})
                    plan[-1].setdefault(first, []).append(trans)
                else:
                    plan.append(trans)
            plans[id(rows)] = (rows, len(rows), plan)
            return plan

    class ReferenceMachine(TMachine):
        transition_cls = ReferenceTransition
        event_cls = ReferenceEvent

        def callbacks(self, funcs: Any, event_data: Any) -> None:
            # (``Machine.callbacks`` without a log line per callback)
            for func in funcs:
                self.callback(func, event_data)

        def callback(self, func: Any, event_data: Any) -> None:
            # A model's method named by a string, called at once; anything else (a
            # property, a dotted path, a callable) as the library resolves it.
            if isinstance(func, str) and not self.send_event:
                method = getattr(event_data.model, func, None)
                if method is not None and callable(method):
                    method(*event_data.args, **event_data.kwargs)
                    return
            super().callback(func, event_data)

    return ReferenceMachine


_ReferenceMachine: Any = None


def _reference_machine(**kwargs: Any) -> Any:
    global _ReferenceMachine
    if _ReferenceMachine is None:
        _ReferenceMachine = _reference_classes()
    return _ReferenceMachine(**kwargs)


_ = (JsonValue, START, Triggers, ModelBase)
