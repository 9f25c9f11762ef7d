"""State diagrams of the machine, drawn from the declaration the runners are built from.

``callsieve diagram`` builds, for each view, the machine with ``transitions``'
``GraphMachine`` (graphviz engine) over a fresh model (a live machine would highlight
its current state), reads its states and events, and draws them grouped for reading:

1. One drawn edge per (source, destination, guards). Each line of its label is one set
   of actions with the character classes that take it: ``*`` any character,
   ``* − lt|tick`` any but those, ``eof``, ``overflow``. A class that an earlier
   unguarded alternative always takes is not listed (it can never reach this edge).
2. The guards of a state are numbered in the order they are tried; an edge without a
   guard is the fallback.
3. Marker guards are shown by the grammar's names: the marker kind (``param_close``) in
   the overview, the dialect's own marker text (``</parameter>``) in a dialect diagram,
   where a guard whose marker the dialect lacks is drawn grey and dotted (it never
   fires) and states reachable only through such guards are greyed too.
4. An edge into ``maybe_tag`` says which markers ``maybe_tag`` looks for when it comes
   from there (the context's matcher, ``callsieve.sieve.matchers``).
5. An unguarded edge that every state of a cluster has (``eof`` and ``overflow`` in a
   tool block) is drawn once, from the cluster's border.
6. A self-loop's label is listed inside its state under a rule (``↻``, UML's internal
   transitions); the loop itself is drawn unlabelled. On a busy state such as
   ``maybe_tag`` a loop label would otherwise land on other edges.

Views: ``overview`` (every built-in dialect: core states, body grammars, each dialect a
labelled cluster listing its markers) and ``dialect-NAME`` (the machine that dialect
alone builds). ``diagrams/`` holds each as ``.dot`` and ``.svg`` plus a generated
``README.md`` index. The ``.dot`` text is deterministic (everything is emitted in
declaration order, no ids or timestamps) and is what ``--check`` compares; SVG bytes
depend on the ``dot`` version, so they are regenerated alongside but not compared.

``--trace FILE`` runs an input through the reference machine (:mod:`callsieve.tools.trace`) and
draws the path it took: fired edges with their counts, visited states, and at decisions
(see :mod:`callsieve.tools.trace`) the offsets and held text that decided. Each edge's SVG tooltip
lists every trigger, guard and action it stands for, by their declared names.
"""

from __future__ import annotations

import argparse
import html
import json
import math
import os
import shutil
import sys
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable, Sequence

from callsieve.declare import CHAR_TRIGGERS, CLASSES, EOF_TRIGGER, OTHER, OVERFLOW, Declaration, StateDecl
from callsieve.machine import build_machine, declare
from callsieve.grammar.api import Dialect, Kind
from callsieve.grammar.registry import REGISTRY, resolve

Guards = tuple[tuple[str, bool], ...]
TRIGGERS: tuple[str, ...] = CHAR_TRIGGERS + (EOF_TRIGGER, OVERFLOW)
FORMATS = ("dot", "svg", "png")

# --------------------------------------------------------------------------- reading


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


def read_machine(decl: Declaration) -> tuple[list[str], list[Row], Any]:
    """States and transitions of a fresh ``GraphMachine`` built from ``decl``."""
    machine = build_machine(decl, _Fresh(), graph=True)
    states = [str(s) for s in machine.states]
    order = {s: i for i, s in enumerate(states)}
    trig_order = {t: i for i, t in enumerate(TRIGGERS)}
    rows: list[Row] = []
    for trigger, event in machine.events.items():
        for source, transitions in event.transitions.items():
            blocked = False
            for index, tr in enumerate(transitions):
                guards = tuple((str(c.func), bool(c.target)) for c in tr.conditions)
                dest = str(tr.dest) if tr.dest is not None else source
                rows.append(Row(source, str(trigger), index, dest, guards, tuple(str(a) for a in tr.before), not blocked))
                blocked = blocked or not guards
    rows.sort(key=lambda r: (order[r.source], trig_order.get(r.trigger, len(trig_order)), r.trigger, r.index))
    return states, rows, machine


# ---------------------------------------------------------------------------- naming


def _marker_guard(name: str) -> tuple[Kind, str] | None:
    """``is_param_open_json`` → (PARAM_OPEN, "json"); None for non-marker guards."""
    if not name.startswith("is_"):
        return None
    rest = name[3:]
    for kind in sorted(Kind, key=lambda k: -len(k.value)):
        if rest == kind.value:
            return kind, ""
        if rest.startswith(kind.value + "_"):
            return kind, rest[len(kind.value) + 1 :]
    return None


class Names:
    """How one view names guards and markers, and which markers it has at all."""

    def __init__(self, dialects: tuple[Dialect, ...], own: Dialect | None, guard_names: Iterable[str]) -> None:
        from callsieve.sieve import matchers

        self.own = own
        text_m, block_m = matchers(dialects, True)
        per_origin: dict[str, list[tuple[Kind, str]]] = {}
        for origin, m in text_m.items():
            per_origin.setdefault(origin, []).extend((e.kind, e.marker.shown()) for e in m.entries)
        for d in dialects:
            for origin, m in block_m[d.name].items():
                per_origin.setdefault(origin, []).extend((e.kind, e.marker.shown()) for e in m.entries)
        self.markers: dict[Kind, list[str]] = {}
        self.looks: dict[str, list[str]] = {}
        kind_order = list(Kind)
        for origin, entries in per_origin.items():
            seen: list[str] = []
            for kind, shown in sorted(entries, key=lambda e: kind_order.index(e[0])):
                if shown not in self.markers.setdefault(kind, []):
                    self.markers[kind].append(shown)
                label = shown if own is not None else kind.value
                if label not in seen:
                    seen.append(label)
            self.looks[origin] = seen
        self.bodies = {b for d in dialects for b in d.bodies}
        guard_names = set(guard_names)
        self.qualified = {mg[0] for g in guard_names if (mg := _marker_guard(g)) is not None and mg[1]}

    def marker(self, kind: Kind) -> str:
        if self.own is None:
            return kind.value
        return " | ".join(self.markers.get(kind, [kind.value]))

    def guard(self, name: str, target: bool) -> str:
        mg = _marker_guard(name)
        if mg is None:
            label = name
        else:
            kind, body = mg
            label = self.marker(kind)
            if body:
                label += f" ({body} body)"
            elif kind in self.qualified:
                label += " (raw body)"
        return label if target else f"not {label}"

    def live(self, name: str, target: bool) -> bool:
        """Can this guard pass in this view? A marker the view lacks never matches."""
        mg = _marker_guard(name)
        if mg is None or not target:
            return True
        kind, body = mg
        return kind in self.markers and (not body or body in self.bodies)

    def is_marker(self, name: str) -> bool:
        return _marker_guard(name) is not None


# ------------------------------------------------------------------------- clusters

#: Presentation only: which core states share a box. States not named here fall back
#: to their declaration (``in_block``, ``owner``), so a new state is always drawn.
_CODE_STATES = ("tick_run", "in_code_span", "span_run", "in_fence", "fence_run")
_CDATA_STATES = ("in_cdata", "cdata_rb", "cdata_rbrb")
_HUB = "maybe_tag"


@dataclass
class Cluster:
    key: str
    label: str
    fill: str
    members: list[str]
    children: list[Cluster] = field(default_factory=list)

    def all_members(self) -> list[str]:
        out = list(self.members)
        for c in self.children:
            out += c.all_members()
        return out


def _clusters(states: Sequence[StateDecl], dialects: tuple[Dialect, ...]) -> tuple[list[Cluster], list[str]]:
    """Top-level clusters and the states drawn outside any."""
    names = [s.name for s in states]
    code = Cluster("cluster_code", "code span or fence: markup here is text", "#eef6ee", [n for n in _CODE_STATES if n in names])
    block = Cluster("cluster_block", "tool block: held until it closes, or released as text", "#fff7e0", [])
    cdata = Cluster("cluster_cdata", "CDATA section: nothing is markup until ]]>", "#f6ead0", [])
    bodies: dict[str, Cluster] = {}
    loose: list[str] = []
    extra: dict[str, Cluster] = {}
    for s in states:
        if s.name in code.members:
            continue
        if s.owner != "core":
            users = ", ".join(d.name for d in dialects if s.owner in d.bodies)
            label = f"{s.owner} body grammar (used by {users}): markup in a string is data"
            if s.in_block:
                c = bodies.setdefault(s.owner, Cluster(f"cluster_body_{s.owner}", label, "#e6f0fa", []))
            else:
                c = extra.setdefault(s.owner, Cluster(f"cluster_body_{s.owner}", label, "#e6f0fa", []))
            c.members.append(s.name)
        elif s.in_block:
            (cdata if s.name in _CDATA_STATES else block).members.append(s.name)
        else:
            loose.append(s.name)
    if cdata.members:
        block.children.append(cdata)
    block.children += list(bodies.values())
    top = [c for c in (code, block) if c.all_members()] + list(extra.values())
    return top, loose


# ---------------------------------------------------------------------------- edges


@dataclass
class Arm:
    """The rows of one edge that share actions: one line of its label."""

    actions: tuple[str, ...]
    rows: list[Row] = field(default_factory=list)

    def triggers(self) -> list[str]:
        return _unique(r.trigger for r in self.rows if r.reachable)

    def shadowed(self) -> list[str]:
        return _unique(r.trigger for r in self.rows if not r.reachable)


@dataclass
class Edge:
    sources: tuple[str, ...]
    dest: str
    guards: Guards
    arms: list[Arm] = field(default_factory=list)
    #: Drawn from this cluster's border: every state in it has this edge.
    cluster: str = ""
    #: Position among the source's guarded edges (0: not numbered).
    order: int = 0
    live: bool = True

    def rows(self) -> list[Row]:
        return [r for a in self.arms for r in a.rows]

    def reachable(self) -> bool:
        return any(r.reachable for r in self.rows())

    def signature(self) -> tuple[object, ...]:
        return (self.dest, self.guards, tuple((a.actions, tuple(a.triggers()), tuple(a.shadowed())) for a in self.arms))


def _unique(items: Iterable[str]) -> list[str]:
    out: list[str] = []
    for x in items:
        if x not in out:
            out.append(x)
    return out


def _edges(rows: list[Row]) -> list[Edge]:
    edges: dict[tuple[str, str, Guards], Edge] = {}
    for r in rows:
        e = edges.setdefault((r.source, r.dest, r.guards), Edge((r.source,), r.dest, r.guards))
        for a in e.arms:
            if a.actions == r.actions:
                a.rows.append(r)
                break
        else:
            e.arms.append(Arm(r.actions, [r]))
    _number(list(edges.values()), rows)
    return list(edges.values())


def _number(edges: list[Edge], rows: list[Row]) -> None:
    """Number the guarded edges of each state in the order they are tried."""
    key_of = {(r.source, r.trigger, r.index): (r.source, r.dest, r.guards) for r in rows}
    by_key = {(e.sources[0], e.dest, e.guards): e for e in edges}
    chains: dict[tuple[str, str], list[tuple[str, str, Guards]]] = {}
    for r in rows:
        if r.reachable and r.guards:
            chains.setdefault((r.source, r.trigger), []).append(key_of[(r.source, r.trigger, r.index)])
    contested = {src for (src, _), chain in chains.items() if len(chain) > 1}
    first: dict[tuple[str, str, Guards], int] = {}
    after: dict[tuple[str, str, Guards], set[tuple[str, str, Guards]]] = {}
    for (src, _), chain in chains.items():
        for k in chain:
            first.setdefault(k, len(first))
        for a, b in zip(chain, chain[1:]):
            if a != b:
                after.setdefault(b, set()).add(a)
    for src in contested:
        pending = sorted((k for k in first if k[0] == src), key=first.__getitem__)
        done: list[tuple[str, str, Guards]] = []
        while pending:
            ready = [k for k in pending if not (after.get(k, set()) & set(pending))] or pending[:1]
            k = ready[0]
            done.append(k)
            pending.remove(k)
        for n, k in enumerate(done, 1):
            by_key[k].order = n


def _collapse(edges: list[Edge], clusters: list[Cluster]) -> list[Edge]:
    """Draw once, from the border, an unguarded arm every state of a cluster has."""
    for c in _walk(clusters):
        members = c.all_members()
        if len(members) < 2:
            continue
        by_sig: dict[tuple[object, ...], list[tuple[Edge, Arm]]] = {}
        for e in edges:
            if len(e.sources) == 1 and e.sources[0] in members and not e.guards and e.dest not in members:
                for a in e.arms:
                    sig = (e.dest, a.actions, tuple(a.triggers()), tuple(a.shadowed()))
                    by_sig.setdefault(sig, []).append((e, a))
        merged: dict[str, Edge] = {}
        for pairs in by_sig.values():
            if sorted(e.sources[0] for e, _ in pairs) != sorted(members):
                continue
            first = pairs[0][0]
            m = merged.get(first.dest)
            if m is None:
                m = merged[first.dest] = Edge(tuple(members), first.dest, (), cluster=c.key)
                edges.insert(edges.index(first), m)
            m.arms.append(Arm(pairs[0][1].actions, [r for _, a in pairs for r in a.rows]))
            for e, a in pairs:
                e.arms.remove(a)
        edges = [e for e in edges if e.arms]
    return edges


# --------------------------------------------------------------------------- labels


def triggers_label(triggers: Iterable[str]) -> str:
    """``*``, ``* − lt|tick``, ``ws|nl``, ``eof``: the shortest honest spelling."""
    s = set(triggers)
    chars = [t for t in CHAR_TRIGGERS if t in s]
    parts: list[str] = []
    if chars:
        missing = [t for t in CHAR_TRIGGERS if t not in s]
        listed = "|".join(chars)
        if not missing:
            parts.append("*")
        elif len("* − " + "|".join(missing)) < len(listed):
            parts.append("* − " + "|".join(missing))
        else:
            parts.append(listed)
    parts += [t for t in (EOF_TRIGGER, OVERFLOW) if t in s]
    parts += sorted(t for t in s if t not in TRIGGERS)
    return ", ".join(parts)


def actions_label(actions: Sequence[str]) -> str:
    shown = [a for a in actions if a != "reprocess"]
    out = ", ".join(shown)
    if "reprocess" in actions:
        out = (out + " ↺").strip()
    return f"/ {out}" if out else ""


def _h(s: str) -> str:
    return html.escape(s, quote=False)


def _wrap(text: str, width: int, seps: str = " |") -> list[str]:
    """Break ``text`` into lines of about ``width`` at spaces or bars."""
    lines: list[str] = []
    cur = ""
    token = ""
    for ch in text + "\0":
        if ch == "\0" or ch in seps:
            piece = token + (ch if ch != "\0" else "")
            if cur and len(cur) + len(piece.rstrip()) > width:
                lines.append(cur.rstrip())
                cur = piece.lstrip()
            else:
                cur += piece
            token = ""
        else:
            token += ch
    if cur.strip():
        lines.append(cur.rstrip())
    return lines or [""]


_CLASS_SHOWN = {" ": "space", "\t": "tab", "\r": "CR", "\n": "LF"}


def _class_chars(chars: str) -> str:
    return " ".join(_CLASS_SHOWN.get(c, c) for c in chars)


# ------------------------------------------------------------------------------ dot


def _q(s: str) -> str:
    """A DOT quoted string (escString: newlines become ``\\n``)."""
    return '"' + s.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"'


def _attrs(attrs: Sequence[tuple[str, str]]) -> str:
    parts = []
    for k, v in attrs:
        parts.append(f"{k}={v}" if k == "label" and v.startswith("<") and v.endswith(">") else f"{k}={_q(v)}")
    return "[" + ", ".join(parts) + "]"


class _Dot:
    def __init__(self) -> None:
        self.lines: list[str] = []
        self.depth = 1

    def add(self, line: str) -> None:
        self.lines.append("\t" * self.depth + line)

    def node(self, name: str, attrs: Sequence[tuple[str, str]]) -> None:
        self.add(f"{_q(name)} {_attrs(attrs)}")

    def edge(self, a: str, b: str, attrs: Sequence[tuple[str, str]]) -> None:
        self.add(f"{_q(a)} -> {_q(b)} {_attrs(attrs)}")

    def open(self, name: str, attrs: Sequence[tuple[str, str]]) -> None:
        self.add(f"subgraph {_q(name)} {{")
        self.depth += 1
        for k, v in attrs:
            self.add(f"{k}={v}" if k == "label" and v.startswith("<") and v.endswith(">") else f"{k}={_q(v)}")

    def close(self) -> None:
        self.depth -= 1
        self.add("}")


# ---------------------------------------------------------------------------- views


@dataclass(frozen=True)
class View:
    #: File stem: ``overview`` or ``dialect-NAME``.
    name: str
    title: str
    dialects: tuple[Dialect, ...]
    #: Label marker guards with this dialect's own marker text.
    own: Dialect | None


def views(selected: Sequence[str] | None = None) -> list[View]:
    """The overview and one view per dialect (``selected``: dialect names only)."""
    out: list[View] = []
    if not selected:
        out.append(View("overview", "callsieve: the machine for every built-in dialect", tuple(REGISTRY.values()), None))
    for d in resolve(list(selected) if selected else None):
        out.append(View(f"dialect-{d.name}", f"callsieve: {d.title}", (d,), d))
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


_BLUE = "#1f5fbf"
_RED = "#b03a2e"
_GREY = "#a8a8a8"
_HOT = "#d35400"


def render_dot(view: View, marks: Marks | None = None) -> str:
    """The ``.dot`` text of a view (deterministic)."""
    decl = declare(view.dialects)
    states, rows, _machine = read_machine(decl)
    names = Names(view.dialects, view.own, (g for r in rows for g, _ in r.guards))
    clusters, loose = _clusters(decl.states, view.dialects)
    edges = _collapse(_edges(rows), clusters)
    for e in edges:
        e.live = all(names.live(g, t) for g, t in e.guards)
    reach = _reachable(decl.initial, edges)
    for e in edges:
        if not any(src in reach for src in e.sources):
            e.live = False
    docs = {s.name: s for s in decl.states}
    # Self-loops are listed inside their state (UML's internal transitions): a label on
    # a loop of a busy state such as maybe_tag always lands on other edges.
    looks = {id(e): _Look(e, names, marks) for e in edges}
    loops: dict[str, list[Edge]] = {}
    for e in edges:
        if e.sources == (e.dest,):
            loops.setdefault(e.dest, []).append(e)

    dot = _Dot()
    title = _h(view.title)
    sub = "drawn from the declaration the runners are compiled from · regenerate: callsieve diagram"
    if marks is not None:
        sub = "trace: " + " · ".join(marks.summary)
    dot.lines.append("digraph callsieve {")
    for k, v in (
        ("graph", [("rankdir", "LR"), ("compound", "true"), ("newrank", "true"), ("nodesep", "0.3"),
                   ("ranksep", "0.45"), ("fontname", "Helvetica"), ("fontsize", "12"), ("labelloc", "t"),
                   ("label", f'<<b><font point-size="16">{title}</font></b><br/><font point-size="10">{_h(sub)}</font>>')]),
        ("node", [("shape", "box"), ("style", "rounded,filled"), ("fillcolor", "white"), ("fontname", "Helvetica"),
                  ("fontsize", "11"), ("margin", "0.08,0.04")]),
        ("edge", [("fontname", "Helvetica"), ("fontsize", "10"), ("arrowsize", "0.7")]),
    ):
        dot.add(f"{k} {_attrs(v)}")

    def draw_state(name: str) -> None:
        s = docs[name]
        doc = "<br/>".join(_h(x) for x in _wrap(s.doc, 26))
        extra = ""
        fill = "white"
        color = "black"
        if name == _HUB:
            fill = "#fde2c0"
        elif name == "in_reasoning":
            fill = "#ece4f7"
        if name not in reach:
            color = _GREY
            extra = f'<br/><font point-size="9" color="{_GREY}">never reached: its markers are not in this dialect</font>'
        if marks is not None:
            n = marks.visits.get(name, 0)
            if n:
                fill = "#ffd9b0"
                extra += f'<br/><font point-size="9" color="{_HOT}"><b>read ×{n}</b></font>'
            else:
                color = _GREY
        rows = [f"<tr><td><b>{_h(name)}</b></td></tr>",
                f'<tr><td><font point-size="9" color="#555555">{doc}</font>{extra}</td></tr>']
        for n, loop in enumerate(loops.get(name, [])):
            look = looks[id(loop)]
            body = "<br/>".join(look.lines)
            rows.append(("<hr/>" if n == 0 else "") + f'<tr><td><font point-size="10" color="{look.ink}">↻ {body}</font></td></tr>')
        label = '<<table border="0" cellborder="0" cellspacing="0" cellpadding="1">' + "".join(rows) + "</table>>"
        attrs = [("label", label), ("fillcolor", fill), ("color", color), ("fontcolor", color),
                 ("tooltip", f"{name}: {s.doc}")]
        if name == decl.initial:
            attrs.append(("peripheries", "2"))
        if name == _HUB:
            attrs.append(("penwidth", "1.6"))
        dot.node(name, attrs)

    def draw_cluster(c: Cluster) -> None:
        dot.open(c.key, [("label", f"<<i>{_h(c.label)}</i>>"), ("style", "rounded,filled"), ("fillcolor", c.fill),
                         ("color", "#999999"), ("fontsize", "10"), ("labeljust", "r")])
        for m in c.members:
            draw_state(m)
        for child in c.children:
            draw_cluster(child)
        dot.close()

    for name in loose:
        draw_state(name)
    for c in clusters:
        draw_cluster(c)

    rep = {c.key: c for c in _walk(clusters)}
    for e in edges:
        _draw_edge(dot, e, looks[id(e)], rep)

    _draw_panels(dot, view, names, anchor="in_param" if "in_param" in docs else decl.initial)
    dot.lines.append("}")
    return "\n".join(dot.lines) + "\n"


def _walk(cs: list[Cluster]) -> Iterable[Cluster]:
    for c in cs:
        yield c
        yield from _walk(c.children)


def _reachable(initial: str, edges: list[Edge]) -> set[str]:
    """States some input can reach over edges that can fire (``in_reasoning`` is an
    initial state too: ``Sieve(start_in_reasoning=True)``)."""
    seen = {initial, "in_reasoning"} & {s for e in edges for s in e.sources}
    frontier = list(seen)
    while frontier:
        s = frontier.pop()
        for e in edges:
            if s in e.sources and e.live and e.reachable() and e.dest not in seen:
                seen.add(e.dest)
                frontier.append(e.dest)
    return seen


class _Look:
    """How one edge is drawn: its label lines, colours and weight."""

    def __init__(self, e: Edge, names: Names, marks: Marks | None) -> None:
        marker = any(names.is_marker(g) for g, _ in e.guards)
        release = any(a.startswith("abort_") for arm in e.arms for a in arm.actions)
        counts = [
            sum(marks.counts.get((r.source, r.trigger, r.index), 0) for r in arm.rows) if marks is not None else 0
            for arm in e.arms
        ]
        self.total = sum(counts)
        self.dead = not e.live or not e.reachable()
        self.marker = marker
        color = _BLUE if marker else (_RED if release else "black")
        if self.dead or (marks is not None and not self.total):
            color = _GREY
        elif marks is not None:
            color = _HOT
        self.color = color
        self.ink = "black" if color != _GREY else _GREY
        self.traced = marks is not None

        lines: list[str] = []
        if e.guards:
            g = ", ".join(names.guard(n, t) for n, t in e.guards)
            num = f"<b>{e.order}.</b> " if e.order else ""
            lines.append(f'<font color="{color if color != _HOT else self.ink}">{num}[{_h(g)}]</font>')
        for arm, n in zip(e.arms, counts):
            trig = arm.triggers()
            text = " ".join(x for x in (triggers_label(trig), actions_label(arm.actions)) if x)
            if not trig:
                text = f"never ({triggers_label(arm.shadowed())} is taken earlier)"
            count = f' <font color="{_HOT}"><b>×{n}</b></font>' if n else ""
            lines.append("<br/>".join(_h(x) for x in _wrap(text, 34)) + count)
        if e.dest == _HUB and len(e.sources) == 1 and e.sources[0] != _HUB:
            looks = names.looks.get(e.sources[0], [])
            body = "<br/>".join(_h(x) for x in _wrap("looks for: " + ("  ".join(looks) or "nothing"), 40, " "))
            lines.append(f'<font point-size="9" color="#666666"><i>{body}</i></font>')
        if not e.live and any(not names.live(g, t) for g, t in e.guards):
            lines.append(f'<font point-size="9" color="{_GREY}"><i>never fires: no such marker here</i></font>')
        if e.cluster:
            lines.append('<font point-size="9" color="#666666"><i>from every state in the box</i></font>')
        key = (e.sources[0], e.dest, e.guards)
        if marks is not None and key in marks.decisions:
            notes = marks.decisions[key]
            more = marks.decision_totals[key] - len(notes)
            body = "<br/>".join(_h(x) for n in notes for x in _wrap(n, 44, " ")) + (f"<br/>… {more} more" if more > 0 else "")
            lines.append(f'<font point-size="9" color="{_HOT}">{body}</font>')
        self.lines = lines

        tip = ["from: " + " ".join(e.sources), "to: " + e.dest]
        if e.guards:
            tip.append("if: " + " ".join(n if t else f"not {n}" for n, t in e.guards))
        for arm in e.arms:
            acts = " ".join(arm.actions) or "-"
            if arm.triggers():
                tip.append(f"on {' '.join(arm.triggers())}: {acts}")
            if arm.shadowed():
                tip.append(f"unreachable on {' '.join(arm.shadowed())}: {acts}")
        self.tooltip = "\n".join(tip)


def _draw_edge(dot: _Dot, e: Edge, look: _Look, clusters: dict[str, Cluster]) -> None:
    attrs: list[tuple[str, str]] = []
    if e.sources != (e.dest,):  # a self-loop's label is inside its state
        attrs.append(("label", "<" + "<br/>".join(look.lines) + ">"))
    attrs += [("tooltip", look.tooltip), ("color", look.color), ("fontcolor", look.ink)]
    if look.total:
        attrs.append(("penwidth", f"{1.2 + min(3.0, math.log10(look.total + 1)):.1f}"))
    elif look.marker and not look.dead and not look.traced:
        attrs.append(("penwidth", "1.4"))
    if look.dead:
        attrs.append(("style", "dotted"))
    tail = e.sources[0]
    if e.cluster:
        c = clusters[e.cluster]
        # Leave from inside a nested box: measured on these views, the label then
        # lands clear of the hub's edges into the box (tail choice is layout only).
        tail = (c.children[0].all_members() if c.children else c.all_members())[0]
        attrs.append(("ltail", e.cluster))
    dot.edge(tail, e.dest, attrs)


def _draw_panels(dot: _Dot, view: View, names: Names, anchor: str) -> None:
    """The legend, and in the overview one labelled cluster per dialect."""
    rows = [
        '<tr><td colspan="2" align="left"><b>how to read</b></td></tr>',
        '<tr><td align="left">3. [guard]</td><td align="left">a state tries its guards in this order; the first that passes fires</td></tr>',
        '<tr><td align="left">no guard</td><td align="left">the fallback: taken when no guard passes</td></tr>',
        '<tr><td align="left">/ action ↺</td><td align="left">actions run; ↺: the character is read again in the new state</td></tr>',
        f'<tr><td align="left"><font color="{_BLUE}">blue</font></td><td align="left">a complete marker decided it</td></tr>',
        f'<tr><td align="left"><font color="{_RED}">red</font></td><td align="left">the block is released as text, with a Diagnostic</td></tr>',
        '<tr><td align="left">box edge</td><td align="left">an edge from a box\'s border leaves every state in it</td></tr>',
        '<tr><td colspan="2" align="left"><b>character classes (triggers)</b></td></tr>',
    ]
    for name, chars in CLASSES.items():
        rows.append(f'<tr><td align="left">{_h(name)}</td><td align="left">{_h(_class_chars(chars))}</td></tr>')
    rows += [
        f'<tr><td align="left">{OTHER}</td><td align="left">any other character</td></tr>',
        '<tr><td align="left">*</td><td align="left">any character;  * − a|b: any but a or b</td></tr>',
        f'<tr><td align="left">{EOF_TRIGGER}</td><td align="left">the stream ended (close())</td></tr>',
        f'<tr><td align="left">{OVERFLOW}</td><td align="left">the held block passed max_block_chars</td></tr>',
    ]
    table = '<table border="0" cellborder="0" cellspacing="0" cellpadding="2">' + "".join(rows) + "</table>"
    dot.open("cluster_legend", [("label", "<<b>legend</b>>"), ("style", "rounded"), ("color", "#bbbbbb"), ("fontsize", "10")])
    dot.node("legend", [("shape", "plaintext"), ("style", ""), ("fontsize", "9"), ("label", f"<{table}>")])
    dot.close()
    dialects = view.dialects if view.own is None else (view.own,)
    from callsieve.grammar import cdata

    for d in dialects:
        trs = []
        for m in d.markers:
            trs.append(f'<tr><td align="left">{_h(m.kind.value)}</td><td align="left">{_h(m.shown())}</td></tr>')
        if d.value.cdata:
            trs.append(f'<tr><td align="left">{_h(Kind.CDATA_OPEN.value)}</td><td align="left">{_h(cdata.CDATA_OPEN.shown())}</td></tr>')
        style = [n for n, on in (("strip newlines", d.value.strip_newlines), ("XML entities", d.value.unescape_entities),
                                 ("CDATA", d.value.cdata)) if on]
        trs.append(f'<tr><td align="left">values</td><td align="left">{_h(", ".join(style) or "raw text")}</td></tr>')
        if d.bodies:
            trs.append(f'<tr><td align="left">bodies</td><td align="left">{_h(", ".join(d.bodies))}</td></tr>')
        table = '<table border="0" cellborder="0" cellspacing="0" cellpadding="1">' + "".join(trs) + "</table>"
        dot.open(f"cluster_dialect_{d.name}", [("label", f"<<b>dialect {_h(d.name)}</b>>"), ("style", "rounded,filled"),
                                                ("fillcolor", "#f4f4f4"), ("color", "#999999"), ("fontsize", "10")])
        dot.node(f"dialect_{d.name}", [("shape", "plaintext"), ("style", ""), ("fontsize", "9"), ("label", f"<{table}>")])
        dot.close()
    # Invisible edges only place the panels: right of the states, out of the edges' way.
    for panel in ["legend"] + [f"dialect_{d.name}" for d in dialects]:
        dot.edge(anchor, panel, [("style", "invis")])


# ---------------------------------------------------------------------------- files


def index_markdown(vs: Sequence[View]) -> str:
    lines = [
        "# State diagrams",
        "",
        "Generated by `callsieve diagram` from the machine declaration (`callsieve.machine.declare`),",
        "drawn with `transitions`' GraphMachine; never edit by hand. `callsieve diagram --check`",
        "(run by the tests) fails when a `.dot` here is stale. Each view has a legend; hover an",
        "edge in the SVG for every trigger, guard and action it stands for.",
        "",
    ]
    for v in vs:
        what = v.own.title if v.own is not None else "the machine for every built-in dialect, each dialect's markers in its own box"
        lines.append(f"- [{v.name}]({v.name}.svg) ([dot]({v.name}.dot)): {_h(what)}")
    lines += ["", "![overview](overview.svg)", ""]
    return "\n".join(lines)


def generate(vs: Sequence[View]) -> dict[str, str]:
    """File name → text of every generated text file for these views."""
    out = {f"{v.name}.dot": render_dot(v) for v in vs}
    if any(v.name == "overview" for v in vs):
        out["README.md"] = index_markdown(views())
    return out


def render_bytes(dot_source: str, fmt: str) -> bytes:
    """Run graphviz ``dot`` on a DOT text."""
    import graphviz

    data: bytes = graphviz.Source(dot_source).pipe(format=fmt)
    return data


def default_out() -> Path:
    """``diagrams/`` of the source checkout this package runs from, else ``./diagrams``."""
    root = Path(__file__).resolve().parent.parent.parent
    if (root / "pyproject.toml").is_file() and (root / "fsm").is_dir():
        return root / "diagrams"
    return Path("diagrams")


def _shown(p: Path) -> str:
    try:
        return os.path.relpath(p)
    except ValueError:  # pragma: no cover - other drive on Windows
        return str(p)


def check(out: Path, vs: Sequence[View]) -> list[str]:
    """Problems with the committed files: stale, missing or no longer generated."""
    problems: list[str] = []
    wanted = generate(vs)
    for name, text in wanted.items():
        p = out / name
        if not p.is_file():
            problems.append(f"{_shown(p)} is missing")
        elif p.read_text(encoding="utf-8") != text:
            problems.append(f"{_shown(p)} is stale: the machine declaration changed since it was drawn")
        if name.endswith(".dot") and not (out / name).with_suffix(".svg").is_file():
            problems.append(f"{_shown((out / name).with_suffix('.svg'))} is missing")
    if any(v.name == "overview" for v in vs) and out.is_dir():
        for p in sorted(out.glob("*.dot")):
            if p.name not in wanted:
                problems.append(f"{_shown(p)} is not generated any more: delete it")
    return problems


def write(out: Path, vs: Sequence[View], formats: Sequence[str]) -> list[Path]:
    out.mkdir(parents=True, exist_ok=True)
    written: list[Path] = []
    for name, text in generate(vs).items():
        if name.endswith(".dot"):
            if "dot" in formats:
                written.append(_write_text(out / name, text))
            for fmt in formats:
                if fmt != "dot":
                    p = (out / name).with_suffix("." + fmt)
                    p.write_bytes(render_bytes(text, fmt))
                    written.append(p)
        elif "dot" in formats:
            written.append(_write_text(out / name, text))
    return written


def _write_text(p: Path, text: str) -> Path:
    with open(p, "w", encoding="utf-8", newline="\n") as f:
        f.write(text)
    return p


# ------------------------------------------------------------------ label overlaps


def label_overlaps(dot_source: str) -> list[str]:
    """Pairs of labels (edge, node, cluster) whose laid-out boxes overlap, by ``dot``."""
    layout = json.loads(render_bytes(dot_source, "json").decode("utf-8"))
    boxes: list[tuple[str, tuple[float, float, float, float]]] = []

    def text_box(ops: list[dict[str, Any]]) -> tuple[float, float, float, float] | None:
        box: tuple[float, float, float, float] | None = None
        size = 10.0
        for op in ops:
            if op.get("op") == "F":
                size = float(op["size"])
            if op.get("op") != "T":
                continue
            x, y = float(op["pt"][0]), float(op["pt"][1])
            w = float(op["width"])
            x0 = {"l": x, "r": x - w}.get(op.get("align", "c"), x - w / 2)
            b = (x0, y - 0.25 * size, x0 + w, y + 0.8 * size)
            box = b if box is None else (min(box[0], b[0]), min(box[1], b[1]), max(box[2], b[2]), max(box[3], b[3]))
        return box

    names = {o["_gvid"]: o.get("name", "") for o in layout.get("objects", [])}
    for o in layout.get("objects", []):
        if "nodes" in o or "subgraphs" in o:
            b = text_box(o.get("_ldraw_", []))
            if b:
                boxes.append((f"cluster {o['name']} label", b))
            continue
        if "pos" in o and "width" in o:
            x, y = (float(v) for v in o["pos"].split(","))
            w, h = float(o["width"]) * 36, float(o["height"]) * 36
            boxes.append((f"node {o['name']}", (x - w, y - h, x + w, y + h)))
    for e in layout.get("edges", []):
        b = text_box(e.get("_ldraw_", []))
        if b:
            boxes.append((f"label of {names[e['tail']]} -> {names[e['head']]}", b))
    out: list[str] = []
    for i, (a, ba) in enumerate(boxes):
        for b_name, bb in boxes[i + 1 :]:
            if a.startswith("node") and b_name.startswith("node"):
                continue
            if a.startswith("cluster") and b_name.startswith("node"):
                continue
            ix = min(ba[2], bb[2]) - max(ba[0], bb[0])
            iy = min(ba[3], bb[3]) - max(ba[1], bb[1])
            if ix > 1.0 and iy > 1.0:
                out.append(f"{a} overlaps {b_name}")
    return out


# ------------------------------------------------------------------------------ CLI


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--dialect", action="append", metavar="NAME",
                        help="only this dialect's diagram (repeatable); with --trace, the dialects to parse with")
    parser.add_argument("--all", action="store_true", help="the overview and every dialect's diagram (the default)")
    parser.add_argument("--format", action="append", metavar="FMT",
                        help="dot, svg, png (repeatable or comma-separated; default: dot and svg)")
    parser.add_argument("--out", metavar="DIR",
                        help="where to write (default: the checkout's diagrams/; with --trace: .); '-' prints the dot text")
    parser.add_argument("--check", action="store_true",
                        help="write nothing; exit 1 naming each stale, missing or extra file in --out")
    parser.add_argument("--trace", metavar="FILE",
                        help="run FILE ('-': stdin) through the machine and draw the path it took (trace.*)")


def _formats(args: argparse.Namespace) -> list[str]:
    fmts = [f.strip() for spec in (args.format or ["dot,svg"]) for f in spec.split(",") if f.strip()]
    bad = [f for f in fmts if f not in FORMATS]
    if bad:
        raise ValueError(f"unknown format {bad[0]!r}; choose from {', '.join(FORMATS)}")
    return _unique(fmts)


def run(args: argparse.Namespace) -> int:
    try:
        fmts = _formats(args)
    except ValueError as e:
        print(f"callsieve diagram: {e}", file=sys.stderr)
        return 2
    if any(f != "dot" for f in fmts) and not args.check and args.out != "-" and shutil.which("dot") is None:
        print("callsieve diagram: graphviz `dot` is not installed (apt-get install graphviz); "
              "use --format dot", file=sys.stderr)
        return 2
    if args.trace:
        return _run_trace(args, fmts)
    if args.all and args.dialect:
        print("callsieve diagram: give --dialect or --all, not both", file=sys.stderr)
        return 2
    try:
        vs = views(args.dialect)
    except Exception as e:  # UnknownDialectError
        print(f"callsieve diagram: {e}", file=sys.stderr)
        return 2
    out = Path(args.out) if args.out and args.out != "-" else default_out()
    if args.check:
        problems = check(out, vs)
        for problem in problems:
            print(f"callsieve diagram --check: {problem}", file=sys.stderr)
        if problems:
            print("regenerate with: callsieve diagram   (then commit diagrams/)", file=sys.stderr)
            return 1
        print(f"callsieve diagram --check: {len(vs)} diagram(s) in {_shown(out)} are up to date")
        return 0
    if args.out == "-":
        for v in vs:
            sys.stdout.write(render_dot(v))
        return 0
    for p in write(out, vs, fmts):
        print(_shown(p))
    return 0


def _run_trace(args: argparse.Namespace, fmts: list[str]) -> int:
    if args.trace == "-":
        text = sys.stdin.read()
    else:
        try:
            text = Path(args.trace).read_text(encoding="utf-8")
        except OSError as e:
            print(f"callsieve diagram --trace: {e}", file=sys.stderr)
            return 2
    try:
        from callsieve.tools.trace import trace_marks

        view, marks, log = trace_marks(text, args.dialect)
    except Exception as e:  # UnknownDialectError
        print(f"callsieve diagram --trace: {e}", file=sys.stderr)
        return 2
    source = render_dot(view, marks)
    logstream = sys.stderr if args.out == "-" else sys.stdout
    print("offset   state                      input, trigger [guards] → state / actions   (* a decision)",
          file=logstream)
    for line in log:
        print(line, file=logstream)
    if args.out == "-":
        sys.stdout.write(source)
        return 0
    out = Path(args.out or ".")
    out.mkdir(parents=True, exist_ok=True)
    for fmt in fmts:
        p = out / f"trace.{fmt}"
        if fmt == "dot":
            _write_text(p, source)
        else:
            p.write_bytes(render_bytes(source, fmt))
        print(f"wrote {_shown(p)}", file=logstream)
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="callsieve diagram")
    add_arguments(parser)
    return run(parser.parse_args(argv))


if __name__ == "__main__":
    sys.exit(main())
