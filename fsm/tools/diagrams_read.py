"""What the diagram and trace tools read off a composed machine.

Both ``callsieve diagram`` (:mod:`callsieve.tools.diagrams`) and traces
(:mod:`callsieve.tools.trace`) import this module and nothing of each other's drawing, so
there is no import cycle between them. It holds:

* :func:`read_machine`: the transitions of the ``transitions`` machine built from the
  declaration (read from the declaration in that machine's order), as rows in the order
  their guards are tried (but the twins that end a block begun in reasoning back there,
  :func:`home_twin`);
* :class:`Names`: how a guard is shown to a person, read off the composed
  :class:`~callsieve.machine.Machine` (``hits``, ``listens``, ``forks``), never parsed
  from a guard's spelling beyond its documented prefix;
* :class:`View` (one picture: a file stem, a title, the dialects it composes) and
  :class:`Marks` (what a trace adds to a view);
* the compact spellings of trigger sets and action lists every label uses.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass
from typing import Any, Iterable, Sequence

from callsieve.declare import Declaration, declared_rows
from callsieve.grammar.api import Choose, Dialect, JsonValue
from callsieve.grammar.registry import resolve
from callsieve.grammar.states import CLASSES, EOF_TRIGGER, OTHER, OVERFLOW
from callsieve.machine import Machine, build_machine, compose

#: The guards of one transition, in the order ``transitions`` evaluates them.
Guards = tuple[str, ...]
#: The character triggers every machine has; a machine may add classes of its own
#: (``u0040`` for a dialect whose markers begin with ``@``).
BASE_CHAR_TRIGGERS: tuple[str, ...] = tuple(CLASSES) + (OTHER,)


@dataclass(frozen=True)
class Row:
    """One transition as the machine holds it."""

    source: str
    trigger: str
    #: Position among the (source, trigger) alternatives: the order guards are tried.
    index: int
    dest: str
    guards: Guards
    actions: tuple[str, ...]
    #: False when an unguarded alternative before it always fires first.
    reachable: bool


class _Fresh:
    """A model that has never run: its machine highlights no current state."""


def read_machine(decl: Declaration, graph: bool = False) -> tuple[list[str], list[Row], Any]:
    """States and transitions of the ``transitions`` machine built from ``decl``, as rows
    in the order their guards are tried (and the machine read, or None).

    The rows a ``transitions`` machine built from ``decl`` holds, in its order: read from
    the declaration (:func:`~callsieve.declare.declared_rows`, which the compiled runner
    reads too; ``tests/test_composition.py`` holds it to what that machine holds) rather
    than by building the machine, which cost more than drawing; or, with ``graph=True``,
    from a fresh ``GraphMachine`` with a model of its own, whose ``get_graph()`` draws it
    as ``transitions`` does (``tests/test_diagrams.py`` holds every edge it draws drawn).
    """
    if graph:
        machine = build_machine(decl, _Fresh(), graph=True)
        states = [str(s) for s in machine.states]
        by_state: dict[str, dict[str, list[tuple[tuple[str, ...], tuple[str, ...], str]]]] = {s: {} for s in states}
        for trigger, event in machine.events.items():
            for source, transitions in event.transitions.items():
                if not all(c.target for tr in transitions for c in tr.conditions):  # pragma: no cover - the declaration has no `unless`
                    raise ValueError(f"{source} --{trigger}-->: negated conditions are not drawn")
                by_state[source][str(trigger)] = [
                    (tuple(str(c.func) for c in tr.conditions), tuple(str(a) for a in tr.before),
                     str(tr.dest) if tr.dest is not None else source) for tr in transitions]
    else:
        machine = None
        states = decl.state_names()
        by_state = declared_rows(decl)
    order = {s: i for i, s in enumerate(states)}
    trig_order = {t: i for i, t in enumerate(decl.char_triggers + (EOF_TRIGGER, OVERFLOW))}
    rows: list[Row] = []
    for source, by_trigger in by_state.items():
        for trigger, named in by_trigger.items():
            blocked = False
            for index, (guards, actions, dest) in enumerate(named):
                if home_twin(dest, guards, actions):
                    continue
                rows.append(Row(source, trigger, index, dest, guards, actions, not blocked))
                blocked = blocked or not guards
    rows.sort(key=lambda r: (order[r.source], trig_order.get(r.trigger, len(trig_order)), r.trigger, r.index))
    return states, rows, machine


def home_twin(dest: str, guards: Guards, actions: tuple[str, ...]) -> bool:
    """A row that ends a block (or a shared opener) begun in reasoning back in that
    reasoning state, guarded last by ``home:STATE``: the composer's ``_back_home`` twin
    of a row into ``text``, tried before it, or a fork's ``fork_to_reasoning`` beside
    its binding row (a dialect whose calls are not read in reasoning gives the opener
    back). Not drawn: one per row that ends a block, they would double the tool
    block's edges; the legend says so (``[home:s] → s``)."""
    return bool(guards) and guards[-1] == f"home:{dest}"


# ---------------------------------------------------------------------------- views


@dataclass(frozen=True)
class View:
    #: File stem: ``overview``, ``dialect-NAME``, ``opener-NAME`` or the user's choice.
    name: str
    title: str
    dialects: tuple[Dialect, ...]
    #: What the view is for, one line (diagrams/README.md).
    about: str = ""
    #: With the reasoning region (``Sieve(reasoning=...)``).
    think: bool = True
    #: ``Sieve(calls_in_reasoning=...)`` and ``Sieve(strict=...)``: a trace is drawn on
    #: the machine it ran.
    calls_in_reasoning: str = "dialect"
    strict: bool = False
    #: With the blocks their own body opens (``Sieve(bare_calls=...)``, as it decided).
    bare: bool = True

    @property
    def machine(self) -> Machine:
        return compose(self.dialects, self.think, self.calls_in_reasoning, self.strict, self.bare)


def view_of(dialects: Sequence[Dialect | str], name: str = "") -> View:
    """A view of the machine these dialects compose: a user's own dialect too."""
    ds = resolve(list(dialects))
    title = "callsieve: " + (ds[0].title if len(ds) == 1 else ", ".join(d.name for d in ds))
    return View(name or "dialect-" + "+".join(d.name for d in ds), title, ds)


def opener_stem(label: str) -> str:
    """The file stem of the view of a shared opener (``<tool_call>`` → ``opener-tool_call``)."""
    return "opener-" + (re.sub(r"[^0-9A-Za-z_]+", "_", label).strip("_") or "shared")


def views(selected: Sequence[str | Dialect] | None = None) -> list[View]:
    """The overview, one view per dialect, and one per opener several dialects share
    (``selected``: those dialects' views only, and their shared openers)."""
    out: list[View] = []
    every = resolve(list(selected) if selected else None)
    if not selected:
        out.append(View("overview", "callsieve: the machine for every built-in dialect", every,
                        "the machine for every built-in dialect; each dialect's positions in its own box"))
    for d in every:
        out.append(View(f"dialect-{d.name}", f"callsieve: {d.title}", (d,), d.title))
    for fork in compose(every).forks:
        names = [c.dialect for c in fork.candidates]
        ds = tuple(d for d in every if d.name in names)
        stem = opener_stem(fork.opener_label)
        about = f"{fork.opener_label} opens {', '.join(names)}: the lookahead that decides"
        out.append(View(stem, f"callsieve: the shared opener {fork.opener_label}", ds, about))
    return out


@dataclass
class Marks:
    """What a trace adds to a view: counts per row, and decisions to annotate."""

    counts: Counter[tuple[str, str, int]]
    visits: Counter[str]
    #: (source, dest, guards) → up to a few ``@offset "held"`` notes.
    decisions: dict[tuple[str, str, Guards], list[str]]
    decision_totals: Counter[tuple[str, str, Guards]]
    summary: list[str]


# ---------------------------------------------------------------------------- names


class Names:
    """How one machine's guards read to a person.

    ``hit:ORIGIN:LABEL`` shows the marker as the dialect spells it and where it is
    listened for; ``fork:…`` the shared opener; ``fork_is:D`` the dialect the lookahead
    chose and the markers that chose it; ``case:SPEC`` the value body an attribute
    picked; ``from:S`` where a dead tag returns. Any other guard is shown by its name.
    """

    def __init__(self, machine: Machine) -> None:
        self.hits = machine.hits
        names = {d.name for layout in machine.layouts for d in (layout.dialect,)}
        one = len(names) == 1
        #: value spec name → (its block, shown without the dialect when the machine has
        #: one, and its body kind): ``dsml.bare.value.json`` → ("dsml.bare", "json")
        self.specs: dict[str, tuple[str, str]] = {}
        #: value spec → the attribute that chooses it (``string="false"``), for ``case:``
        self.cases: dict[str, str] = {}
        for layout in machine.layouts:
            for specs in layout.values.values():
                for vs in specs:
                    block = vs.leaf.spec.prefix.rstrip(".")
                    if one:
                        block = block[len(layout.dialect.name) + 1:]
                    self.specs[vs.name] = (block, "json" if isinstance(vs.body, JsonValue) else "raw")
                    value = vs.leaf.value
                    if isinstance(value, Choose):
                        self.cases.update({vs.name: f'{value.field}="{v}"' for v, body in value.cases if body is vs.body})
        #: shared opener → the dialects that share it
        self.sharing = {f.opener_label: [c.dialect for c in f.candidates] for f in machine.forks}
        #: (dialect, the shared opener) → what decides it there; a dialect's first fork's
        #: guard is ``fork_is:D``, a later one's ``fork_is:D@OPENER``
        self.deciders: dict[tuple[str, str], list[str]] = {}
        for f in machine.forks:
            for c in f.candidates:
                key = (c.dialect, "" if not any(d == c.dialect for d, _o in self.deciders) else f.opener_label)
                self.deciders[key] = [e.marker.shown() for e in c.decider.entries]
        #: origin state → the markers it listens for (every value spec of it merged)
        self.looks: dict[str, list[str]] = {}
        for where, entries in machine.listens.items():
            seen = self.looks.setdefault(where.split("@", 1)[0], [])
            for _key, marker, _dest in entries:
                if marker.shown() not in seen:
                    seen.append(marker.shown())

    def spec(self, name: str) -> str:
        """``dsml.bare.value.json`` → ``dsml.bare json`` (``bare json`` in a dsml view)."""
        block, kind = self.specs.get(name, (name, ""))
        return f"{block} {kind}".strip()

    def origin(self, where: str) -> str:
        state, _, spec = where.partition("@")
        return f"{state} ({self.spec(spec)})" if spec else state

    def is_marker(self, guard: str) -> bool:
        """A complete marker (or the shared opener's lookahead) decides this guard."""
        return guard in self.hits or guard.startswith(("fork:", "fork_is:"))

    def marker_parts(self, guards: Guards) -> tuple[str, tuple[str, str], tuple[str, ...]]:
        """(marker, where it is listened for: (state, value spec shown), the other
        guards shown) of a marker alternative; the drawing merges the lines that differ
        only in the place."""
        rest = tuple(self.guard(g) for g in guards[1:])
        first = guards[0]
        if first.startswith("fork:"):
            where, label = self.hits[first]
            return label, (where, ""), (f"shared by {' | '.join(self.sharing.get(label, []))}",) + rest
        if first in self.hits:
            where, label = self.hits[first]
            state, _, spec = where.partition("@")
            return label, (state, self.spec(spec) if spec else ""), rest
        return self.guard(first), ("", ""), rest

    def guard(self, name: str) -> str:
        if name in self.hits:
            where, label = self.hits[name]
            return f"{label} in {self.origin(where)}"
        if name.startswith("from:"):
            return f"from {name[len('from:'):]}"
        if name.startswith("fork:"):
            label, (where, _), shared = self.marker_parts((name,))
            return f"{label} in {where}, {shared[0]}"
        if name.startswith("fork_is:"):
            dialect, _, opener = name[len("fork_is:"):].partition("@")
            return f"{dialect}: next is {' | '.join(self.deciders.get((dialect, opener), [])) or '?'}"
        if name.startswith("case:"):
            spec = name[len("case:"):]
            return f"{self.cases.get(spec, spec)} picks {self.specs.get(spec, ('', spec))[1]}"
        return name


# --------------------------------------------------------------------------- labels


def _added_class(trigger: str) -> bool:
    """A character class the composer added for one start character (``u0066``)."""
    return len(trigger) >= 5 and trigger[0] == "u" and all(c in "0123456789abcdef" for c in trigger[1:])


def triggers_label(triggers: Iterable[str], chars: Sequence[str] = BASE_CHAR_TRIGGERS) -> str:
    """``*``, ``* − lt|tick``, ``ws|nl``, ``eof``: the shortest honest spelling.

    ``chars``: the machine's character triggers (``Declaration.char_triggers``), so
    that ``*`` means every class of that machine.
    """
    s = set(triggers)
    added = [t for t in chars if t not in BASE_CHAR_TRIGGERS and _added_class(t)]
    # A class a machine adds for a start character outside the base classes (``u0066``
    # for Phi-4's ``functools``) is "any other character" wherever a rule names
    # ``other``: there it goes with ``other``, and only the added classes left out are
    # named (``other − u003b``).
    except_added: list[str] = []
    if "other" in s and any(t in s for t in added):
        except_added = [t for t in added if t not in s]
        chars = [t for t in chars if t not in added]
        s = {t for t in s if t not in added}
    listed = [t for t in chars if t in s]
    parts: list[str] = []
    if listed:
        missing = [t for t in chars if t not in s]
        if not missing:
            parts.append("* − " + "|".join(except_added) if except_added else "*")
        elif len("* − " + "|".join(missing)) < len("|".join(listed)):
            parts.append("* − " + "|".join(missing + except_added))
        else:
            parts.append("|".join(listed) + (" − " + "|".join(except_added) if except_added else ""))
    parts += [t for t in (EOF_TRIGGER, OVERFLOW) if t in s]
    parts += sorted(t for t in s if t not in chars and t not in (EOF_TRIGGER, OVERFLOW))
    return ", ".join(parts)


def actions_label(actions: Sequence[str]) -> str:
    """``/ open_param ↺``: the actions, ``↺`` when the character is read again."""
    shown = [a for a in actions if a != "reprocess"]
    out = ", ".join(shown)
    if "reprocess" in actions:
        out = (out + " ↺").strip()
    return f"/ {out}" if out else ""
