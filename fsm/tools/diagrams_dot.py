"""The DOT text of one view: states clustered by region, edges grouped and labelled.

Drawing rules (the legend in each picture says the same to its reader):

1. One box per region of states (the ``owner`` of each state: prose, tag, reasoning,
   value, cdata, json, json_body, capture) and one per dialect for the positions its structure compiled
   into; the regions that only run inside a held block sit in one "tool block" box.
2. One drawn edge per (source, destination, guards), except that the rows a complete
   marker decides (``hit:`` guards, the shared opener, a fork's choice) share one edge
   per (source, destination): the edge out of ``maybe_tag`` into ``after_close`` lists
   every value close that leads there; so do a state's edges out of its box to one
   state (``j_next`` to where a JSON body leads, on ``}`` or ``]``). Each guard line is
   numbered in the order the state tries it; ``[else]`` is the fallback when no guard
   passes.
3. A marker guard is shown as the dialect spells the marker and where it is listened
   for (``</parameter> in in_param (xml raw)``), read off ``Machine.hits``.
4. Each line under a guard is one set of actions with the character classes that take
   it: ``*`` any character, ``* − lt|tick`` any but those, ``eof``, ``overflow``. A
   class that an earlier unguarded alternative always takes is not listed.
5. An edge into ``maybe_tag`` says which markers it looks for when it comes from there.
6. An arm every state of a box has (``overflow`` in a tool block, ``[j_bad]`` in the
   JSON body), or all but a few that the label names (``eof``, which ends a bare block
   complete in its last positions and releases every other held block), is drawn once,
   from the box's border; so is each state's own ``[else]`` when they all lead to one
   place with one action (``[else] any other character / j_abort``: the characters
   differ by state, and are those its other edges do not take; the tooltip lists them),
   and its guarded twin (``[rest_follows] any other character``: the block read on).
   Never one into ``maybe_tag`` (rule 5 is per state).
7. A self-loop's label is listed inside its state under a rule (``↻``, UML's internal
   transitions); on a busy state a loop label would otherwise land on other edges.
8. ``fork`` (an opener several dialects share) is a diamond, UML's choice: one edge per
   dialect, labelled with the markers that choose it, and ``[else]`` back to text.
9. In a compact region (the JSON body's tokenizer) each state lists its moves to the
   other states of the region inside itself (``→ j_string: [else] quote / …``), and
   those arrows carry no label: as eleven states' labelled arrows they cover one
   another, and where the body leads (its edges out of the box) is what an auditor
   follows. The tooltips of the arrows still list every transition.
   So does a state with more than one way out of the region (the JSON body's close
   into the position after it, one per dialect with such a body): ``→ out of the
   box: rbrace / j_close_body`` and, a line each, the guard that picks the
   destination (``4. [j_outermost, j_in_object, body:hermes.json_call1] → hermes.after_json_call``),
   and those arrows carry no label either. Why this holds where routing did not: dot
   puts the labels of one state's exits into other boxes in the one gap beside its
   box, and which of them it stacks changes with every dialect added or left out
   (measured with label_overlaps on machines of subsets of the dialects: leaving out
   any one JSON dialect overlapped under the former rule, sending every other exit by
   the bottom). Listed inside the state, no two such labels exist: a node's label is
   laid out as part of the node, which dot never overlaps with another. A state with
   one exit (a dialect's own view) keeps its label on the arrow. Where several dialects
   are drawn, a dialect's position with several exits into bodies (Mistral's name or
   array: the capture, the JSON body) lists them the same way.

The text is deterministic: everything is emitted in declaration order, with no ids.
"""

from __future__ import annotations

import functools
import html
import math
import re
import unicodedata
from dataclasses import dataclass, field
from typing import Callable, Iterable, Sequence

from callsieve.declare import Declaration
from callsieve.grammar.api import Alt as AltNode, Opt, Block, Call, Choose, Dialect, JsonValue, Many, Marker, Param, Raw, Seq
from callsieve.grammar.states import EOF_TRIGGER, OTHER, OVERFLOW, Region, StateDecl
from callsieve.tools.diagrams_read import (
    Guards, Marks, Names, Row, View, actions_label, opener_stem, read_machine, triggers_label,
)

_HUB = "maybe_tag"
#: The prose region's code states, which listen for markers only to report them.
_CODE_STATES = frozenset({"in_code_span", "fence_info", "in_fence"})
_REST = "block_rest"
_FORK = "fork"
_BLUE = "#1f5fbf"
_RED = "#b03a2e"
_GREY = "#a8a8a8"
_HOT = "#d35400"

#: Region owner → (box label, fill). A region not named here (a dialect's own) gets a
#: plain box; a dialect's positions get the dialect's box.
_REGIONS: dict[str, tuple[str, str]] = {
    "prose": ("prose: visible text; in a code span or fence, markup is text", "#eef6ee"),
    "tag": ("held markers: a possible marker is held until it is decided", "#fdf1e2"),
    "reasoning": ("reasoning", "#f3eefa"),
    "value": ("parameter values: a close is held until what follows confirms it", "#e6f0fa"),
    "cdata": ("CDATA: nothing is markup until ]]>", "#f6ead0"),
    "json": ("JSON value: markup in a string is data", "#e6f0fa"),
    "json_body": ("JSON body, checked token by token: markup in a string is data; "
                  "each state lists its moves (→)", "#e6f0fa"),
    "capture": ("capture: a name or an id between markers", "#f4f4f4"),
    "block_rest": ("a block given up, read on to its close: its markup, never text", "#fdecea"),
    "python_value": ("Python calls, read as literals token by token (never eval); "
                     "each state lists its moves (→)", "#e6f0fa"),
    "start": ("where the response begins: a block its own body opens", "#eef6ee"),
}
_BLOCK = "cluster_block"
#: Regions drawn compactly (rule 9): the JSON tokenizer's token-by-token moves matter
#: less to an auditor than where a body leads, and as labelled arrows between its
#: eleven states they cover one another; the same holds for the CommonMark prose states
#: (fence info, tails, list lines) and CDATA's bracket counting, measured with
#: label_overlaps on every view; so for the JSON value's three states (a string, its
#: escapes), whose moves stacked on the labels of the dialects' positions beside them,
#: and for the Python-call tokenizer's, as the JSON body's.
_COMPACT = frozenset({"json_body", "prose", "cdata", "json", "python_value"})


def _compact(view: View) -> frozenset[str]:
    """The owners drawn compactly in ``view``: those above, and the states of a value
    grammar a dialect brings (a ``Body`` naming its own ``Region``, or
    ``Dialect.regions``: Gemma's object syntax, a user's): a tokenizer too, whose moves
    between two states stacked their labels on one another in the overview (measured
    with label_overlaps, gemma4's key and value)."""
    brought = [r for d in view.dialects for r in d.regions]
    for layout in view.machine.layouts:
        for lf in layout.leaves:
            region = getattr(lf.body, "region", None)
            if isinstance(region, Region):
                brought.append(region)
    return _COMPACT | {s.owner for r in brought for s in r.states}
#: Characters of the drawing's own notation (explained in the legend); any other
#: character outside Latin-1 is named by code point there, since it may render as an
#: empty box without a CJK font.
_NOTATION = "↺↻−×…→·–◇"


# ------------------------------------------------------------------------- clusters


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


def _clusters(states: Sequence[StateDecl], dialects: Iterable[str]) -> list[Cluster]:
    """One cluster per owner, in declaration order; those of held blocks in one box."""
    dialects = set(dialects)
    by_owner: dict[str, Cluster] = {}
    block = Cluster(_BLOCK, "tool block: held until it closes, or released as text", "#fff7e0", [])
    top: list[Cluster] = []
    for s in states:
        c = by_owner.get(s.owner)
        if c is None:
            if s.owner in dialects:
                label, fill = f"dialect {s.owner}: between its markers", "#f4f4f4"
            else:
                label, fill = _REGIONS.get(s.owner, (f"region {s.owner}", "#f4f4f4"))
            c = by_owner[s.owner] = Cluster(f"cluster_{s.owner}", label, fill, [])
            (block.children if s.in_block else top).append(c)
        c.members.append(s.name)
    if block.children:
        top.append(block)
    return top


def _walk(cs: list[Cluster]) -> Iterable[Cluster]:
    for c in cs:
        yield c
        yield from _walk(c.children)


# ---------------------------------------------------------------------------- edges


def _unique(items: Iterable[str]) -> list[str]:
    out: list[str] = []
    for x in items:
        if x not in out:
            out.append(x)
    return out


@dataclass
class Arm:
    """The rows of one guard set that share actions: one line of a label."""

    actions: tuple[str, ...]
    rows: list[Row] = field(default_factory=list)

    def triggers(self) -> list[str]:
        return _unique(r.trigger for r in self.rows if r.reachable)

    def shadowed(self) -> list[str]:
        return _unique(r.trigger for r in self.rows if not r.reachable)


@dataclass
class Alt:
    """One guard set of an edge, with its arms and its place in the try order."""

    guards: Guards
    arms: list[Arm] = field(default_factory=list)
    #: Position among the source's guarded alternatives (0: not numbered).
    order: int = 0
    #: On a box's ``[else]`` edge (``Edge.fallback``), the one state this alternative
    #: leaves: its tooltip section names it, with the characters it falls back on.
    source: str = ""

    def add(self, r: Row) -> None:
        for a in self.arms:
            if a.actions == r.actions:
                a.rows.append(r)
                return
        self.arms.append(Arm(r.actions, [r]))


@dataclass
class Edge:
    sources: tuple[str, ...]
    dest: str
    alts: list[Alt] = field(default_factory=list)
    #: Drawn from this cluster's border: every state in it has this edge, but these.
    cluster: str = ""
    marker: bool = False
    but: tuple[str, ...] = ()
    #: A box edge standing for each state's own ``[else]`` on the characters it has no
    #: other edge for (the triggers differ by state; the tooltip lists each one's).
    fallback: bool = False

    def rows(self) -> list[Row]:
        return [r for alt in self.alts for a in alt.arms for r in a.rows]

    def reachable(self) -> bool:
        return any(r.reachable for r in self.rows())


def _edges(rows: list[Row], names: Names, tried: list[Row]) -> list[Edge]:
    """Edges of ``rows``, numbered by the try order of ``tried`` (all the machine's
    rows: a path-only picture keeps the numbers of the whole machine)."""
    edges: dict[tuple[object, ...], Edge] = {}
    alts: dict[tuple[str, str, Guards], Alt] = {}
    for r in rows:
        marker = any(names.is_marker(g) for g in r.guards)
        key: tuple[object, ...] = (r.source, r.dest, "marker") if marker else (r.source, r.dest, r.guards)
        e = edges.setdefault(key, Edge((r.source,), r.dest, marker=marker))
        alt = alts.get((r.source, r.dest, r.guards))
        if alt is None:
            alt = alts[(r.source, r.dest, r.guards)] = Alt(r.guards)
            e.alts.append(alt)
        alt.add(r)
    _number(alts, tried)
    return list(edges.values())


def _number(alts: dict[tuple[str, str, Guards], Alt], tried: list[Row]) -> None:
    """Number the guarded alternatives of each state in the order they are tried.

    The order is per (state, trigger); where two triggers try the same alternatives
    in different orders, a topological order of "tried before" is used.
    """
    chains: dict[tuple[str, str], list[tuple[str, str, Guards]]] = {}
    for r in tried:
        if r.reachable and r.guards:
            chains.setdefault((r.source, r.trigger), []).append((r.source, r.dest, r.guards))
    contested = {src for (src, _), chain in chains.items() if len(chain) > 1}
    first: dict[tuple[str, str, Guards], int] = {}
    after: dict[tuple[str, str, Guards], set[tuple[str, str, Guards]]] = {}
    for chain in chains.values():
        for k in chain:
            first.setdefault(k, len(first))
        for a, b in zip(chain, chain[1:]):
            if a != b:
                after.setdefault(b, set()).add(a)
    by_source: dict[str, list[tuple[str, str, Guards]]] = {}
    for k in first:  # (in ``first``'s order)
        by_source.setdefault(k[0], []).append(k)
    for src in sorted(contested):
        pending = by_source.get(src, [])[:]
        left = set(pending)
        done: list[tuple[str, str, Guards]] = []
        while pending:
            # the first alternative none still pending is tried before (else the first)
            ready = next((k for k in pending if not (after.get(k, set()) & left)), pending[0])
            done.append(ready)
            pending.remove(ready)
            left.discard(ready)
        for n, k in enumerate(done, 1):
            if k in alts:
                alts[k].order = n


def _exceptions_allowed(members: Sequence[str]) -> int:
    """How many states of a box an edge from its border may name as not having it.

    Each is named in the label ("from every state in the box but …"), so a few stay
    readable: one in a box of four to seven states, two from eight, three from twelve,
    and in a large box (the overview's tool block, every dialect's positions) one in
    six, which names each position where a bare block ends complete (the long tail's
    close-less formats, Granite's, Apertus's, Phi-4's, xLAM's, ..., are sixteen of 126).
    A box of fewer than four has none: there the separate edges read as easily.
    """
    return min(max(3, len(members) // 6), len(members) // 4)


def _collapse(edges: list[Edge], clusters: list[Cluster], rows: list[Row], chars: Sequence[str]) -> list[Edge]:
    """Draw once, from a box's border, what its states share (rule 6), outer box first:

    * an arm (guards, destination, actions and triggers) every state of the box has,
      or all but the few :func:`_exceptions_allowed` names: ``overflow`` in a tool block,
      ``eof`` everywhere but the positions where a bare block ends complete, the JSON
      tokenizer's ``[j_bad]``;
    * each state's own ``[else]`` to one place with one set of actions, on whatever
      characters that state has no other edge for (the JSON tokenizer's ``j_abort``);
    * a state's edges out of a box of states (no nested box) to one state: one edge
      (``j_next``'s ``}`` and ``]`` to where a JSON body leads).

    Never into the hub: each edge into ``maybe_tag`` says what its source looks for.
    """
    for c in _walk(clusters):
        members = c.all_members()
        if len(members) < 2:
            continue
        edges = _shared_arms(edges, c, members)
        edges = _fallbacks(edges, c, members, rows, chars)
        edges = _exits(edges, c, members)
    return edges


def _leaving(e: Edge, members: Sequence[str]) -> bool:
    """A single state's edge (not a marker's, not already a box's) out of the box."""
    return (len(e.sources) == 1 and not e.cluster and not e.marker and e.sources[0] in members
            and e.dest not in members and e.dest != _HUB)


def _shared_arms(edges: list[Edge], c: Cluster, members: list[str]) -> list[Edge]:
    #: (destination, guards, actions, triggers, shadowed triggers) → the arms that have it
    by_sig: dict[tuple[str, Guards, tuple[str, ...], tuple[str, ...], tuple[str, ...]], list[tuple[Edge, Arm]]] = {}
    for e in edges:
        if _leaving(e, members):
            alt = e.alts[0]
            for a in alt.arms:
                sig = (e.dest, alt.guards, a.actions, tuple(a.triggers()), tuple(a.shadowed()))
                by_sig.setdefault(sig, []).append((e, a))
    merged: dict[tuple[str, Guards, tuple[str, ...]], Edge] = {}
    for (_dest, guards, _actions, _trig, _shadowed), pairs in by_sig.items():
        sources = [e.sources[0] for e, _ in pairs]
        but = tuple(m for m in members if m not in sources)
        if len(sources) != len(set(sources)) or len(but) > _exceptions_allowed(members):
            continue
        first = pairs[0][0]
        m = merged.get((first.dest, guards, but))
        if m is None:
            shared = tuple(x for x in members if x not in but)
            # The number each state gives this guard, when they all give the same one.
            orders = {e.alts[0].order for e, _ in pairs}
            alt = Alt(guards, order=orders.pop() if len(orders) == 1 else 0)
            m = merged[(first.dest, guards, but)] = Edge(shared, first.dest, [alt], cluster=c.key, but=but)
            edges.insert(edges.index(first), m)
        m.alts[0].arms.append(Arm(pairs[0][1].actions, [r for _, a in pairs for r in a.rows]))
        for e, a in pairs:
            e.alts[0].arms.remove(a)
    return [e for e in edges if e.alts[0].arms]


def _fallbacks(edges: list[Edge], c: Cluster, members: list[str], rows: list[Row], chars: Sequence[str]) -> list[Edge]:
    # For each state, the character triggers some unguarded alternative takes.
    taken: dict[tuple[str, str], set[str]] = {}
    for r in rows:
        if r.reachable and not r.guards and r.source in members:
            taken.setdefault((r.source, r.dest), set()).add(r.trigger)
    by_sig: dict[tuple[str, tuple[str, ...], Guards], list[tuple[Edge, Arm]]] = {}
    #: each state's "any other character" triggers
    other: dict[str, set[str]] = {}
    for e in edges:
        if not _leaving(e, members) or e.alts[0].guards:
            continue
        src = e.sources[0]
        for a in e.alts[0].arms:
            trig = set(a.triggers())
            others = set().union(*(t for (s, d), t in taken.items() if s == src and d != e.dest))
            # Exactly "any other character": only characters, and every character this
            # arm does not take has another unguarded edge of the state.
            if trig and trig <= set(chars) and trig | others >= set(chars) and not trig & others:
                by_sig.setdefault((e.dest, a.actions, ()), []).append((e, a))
                other[src] = trig
    # A guarded twin of a state's fallback (the same characters, its guard tried first:
    # a block given up that is read on, ``block_rest``) is drawn once from the box too.
    for e in edges:
        if _leaving(e, members) and e.alts[0].guards:
            for a in e.alts[0].arms:
                if other.get(e.sources[0]) == set(a.triggers()):
                    by_sig.setdefault((e.dest, a.actions, e.alts[0].guards), []).append((e, a))
    for (dest, actions, guards), pairs in by_sig.items():
        sources = [e.sources[0] for e, _ in pairs]
        but = tuple(m for m in members if m not in sources)
        if len(sources) < 2 or len(sources) != len(set(sources)) or len(but) > _exceptions_allowed(members):
            continue
        alts = [Alt(guards, [a], source=e.sources[0]) for e, a in pairs]
        shared = tuple(x for x in members if x not in but)
        edges.insert(edges.index(pairs[0][0]), Edge(shared, dest, alts, cluster=c.key, but=but, fallback=True))
        for e, a in pairs:
            e.alts[0].arms.remove(a)
    return [e for e in edges if e.cluster or e.alts[0].arms]


def _exits(edges: list[Edge], c: Cluster, members: list[str]) -> list[Edge]:
    # Drawn from the states themselves, not from the border: with ``ltail`` the label
    # sits where the hidden part of the spline runs, inside the box, far from the line
    # a reader follows. One edge per state and destination keeps the labels of a state
    # with several ways out to one place (j_next's } and ] closing a body) in one block.
    if c.children:
        return edges
    by: dict[tuple[str, str, bool], list[Edge]] = {}
    for e in edges:
        if _leaving(e, members) and e.dest != "text":
            # A release (red) never shares an edge with a move that keeps the block.
            release = _is_release(a for r in e.rows() for a in r.actions)
            by.setdefault((e.sources[0], e.dest, release), []).append(e)
    for (src, dest, _release), es in by.items():
        if len(es) < 2:
            continue
        alts = [alt for e in es for alt in e.alts]
        edges.insert(edges.index(es[0]), Edge((src,), dest, alts))
        for e in es:
            edges.remove(e)
    return edges


# --------------------------------------------------------------------------- labels


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


def _font(text: str, color: str = "", size: str = "", bold: bool = False, italic: bool = False) -> str:
    attrs = (f' color="{color}"' if color else "") + (f' point-size="{size}"' if size else "")
    if bold:
        text = f"<b>{text}</b>"
    if italic:
        text = f"<i>{text}</i>"
    return f"<font{attrs}>{text}</font>" if attrs else text


_CLASS_SHOWN = {" ": "space", "\t": "tab", "\r": "CR", "\n": "LF"}


def _class_chars(chars: str) -> str:
    return " ".join(_CLASS_SHOWN.get(c, c) for c in chars)


def _is_release(actions: Iterable[str]) -> bool:
    return any(a.startswith("abort_") or a.startswith("fork_release") for a in actions)


class _Look:
    """How one edge is drawn: its label lines, tooltip, colours and weight."""

    def __init__(self, e: Edge, names: Names, marks: Marks | None, chars: Sequence[str], brief: bool = False) -> None:
        counts = {
            id(a): sum(marks.counts.get((r.source, r.trigger, r.index), 0) for r in a.rows) if marks is not None else 0
            for alt in e.alts for a in alt.arms
        }
        self.total = sum(counts.values())
        self.dead = not e.reachable()
        self.marker = e.marker
        color = _BLUE if e.marker else (_RED if _is_release(a for alt in e.alts for arm in alt.arms for a in arm.actions) else "black")
        if self.dead or (marks is not None and not self.total):
            color = _GREY
        elif marks is not None:
            color = _HOT
        self.color = color
        self.ink = "black" if color != _GREY else _GREY
        guard_ink = color if color != _HOT else self.ink

        lines: list[str] = []
        #: (guard line, arm lines) of each alternative not merged into a marker line:
        #: what a compact state's list of its exits shares or tells apart (rule 9).
        self.parts: list[tuple[int, str, tuple[str, ...]]] = []
        tip = ["from: " + " ".join(e.sources), "to: " + e.dest]
        #: (marker, other guards, arm lines) → [numbers, places]: in a marker edge, the
        #: alternatives that differ only in where the marker was listened for share a line
        merged: dict[tuple[str, tuple[str, ...], tuple[str, ...]], tuple[list[str], list[tuple[str, str]]]] = {}
        if e.fallback:
            # One line for every state's own fallback; which characters each state
            # falls back on is in the tooltip (they are the ones its other edges lack).
            n = sum(counts.values())
            count = " " + _font(f"×{n}", _HOT, bold=True) if n else ""
            guards = e.alts[0].guards
            when = f"[{', '.join(guards)}]" if guards else "[else]"
            text = f"{when} any other character {actions_label(e.alts[0].arms[0].actions)}"
            lines.append("<br/>".join(_h(x) for x in _wrap(text, 34)) + count)
        for alt in e.alts:
            if e.fallback:
                tip += _tooltip(alt)
                continue
            arm_lines = []
            for arm in alt.arms:
                trig = arm.triggers()
                text = " ".join(x for x in (triggers_label(trig, chars), actions_label(arm.actions)) if x)
                if not trig:
                    text = f"never ({triggers_label(arm.shadowed(), chars)} is taken earlier)"
                n = counts[id(arm)]
                count = " " + _font(f"×{n}", _HOT, bold=True) if n else ""
                # UML's [else]: on each of these triggers some guard was tried first.
                if not alt.guards and trig and not e.cluster and all(r.index > 0 for r in arm.rows if r.reachable):
                    text = "[else] " + text
                arm_lines.append("<br/>".join(_h(x) for x in _wrap(text, 34)) + count)
            tip += _tooltip(alt)
            num = f"{alt.order}." if alt.order else ""
            if e.marker and len(arm_lines) == 1 and "<br/>" not in arm_lines[0]:
                marker, place, rest = names.marker_parts(alt.guards)
                nums, places = merged.setdefault((marker, rest, tuple(arm_lines)), ([], []))
                nums.append(num)
                places.append(place)
                continue
            guard_line = ""
            if alt.guards:
                g = _h(", ".join(names.guard(g) for g in alt.guards))
                guard_line = _font((f"<b>{num}</b> " if num else "") + f"[{g}]", guard_ink)
                lines.append(guard_line)
            lines += arm_lines
            self.parts.append((alt.order, guard_line, tuple(arm_lines)))
        for (marker, rest, one), (nums, places) in merged.items():
            # A marker and its one action on one line: a hub edge stays a short list.
            what = marker + (" in " + _places(places) if any(st for st, _ in places) else "") + "".join(", " + x for x in rest)
            num = ", ".join(n.rstrip(".") for n in nums if n)
            text = "<br/>".join(_h(x) for x in _wrap(f"[{what}]", 40 if brief else 64, " "))
            lines.append(_font((f"<b>{num}.</b> " if num else "") + text, guard_ink) + " " + one[0])
        if e.dest == _HUB and len(e.sources) == 1 and e.sources[0] != _HUB and not brief:
            looks = names.looks.get(e.sources[0], [])
            body = "<br/>".join(_h(x) for x in _wrap("looks for: " + ("  ".join(looks) or "nothing"), 40, " "))
            lines.append(_font(_font(body, italic=True), "#666666", "9"))
        if e.cluster:
            but = f" but {', '.join(e.but)}" if e.but else ""
            lines.append(_font(f"<i>from every state in the box{_h(but)}</i>", "#666666", "9"))
        for alt in e.alts:
            key = (e.sources[0], e.dest, alt.guards)
            if marks is not None and key in marks.decisions:
                notes = marks.decisions[key][: 1 if brief else None]
                more = marks.decision_totals[key] - len(notes)
                body = "<br/>".join(_h(x) for n in notes for x in _wrap(n, 44, " ")) + (f"<br/>… {more} more" if more > 0 else "")
                lines.append(_font(body, _HOT, "9"))
        self.lines = lines
        self.tooltip = "\n".join(tip)


def _places(places: list[tuple[str, str]]) -> str:
    """(in_param, xml raw), (in_param, qwen3_coder raw) → ``in_param (xml raw | qwen3_coder raw)``."""
    by_state: dict[str, list[str]] = {}
    for state, spec in places:
        by_state.setdefault(state, []).append(spec)
    return " | ".join(f"{st} ({' | '.join(_unique(sp))})" if any(sp) else st for st, sp in by_state.items())


def _tooltip(alt: Alt) -> list[str]:
    """The tooltip lines of one alternative: its guards by their declared names, and
    every trigger with the actions it runs (what the tests read back)."""
    # Guards joined as GraphMachine joins them: a marker's label may hold spaces.
    # An alternative of one state on a box's edge opens its own section: "from: S".
    out = [f"from: {alt.source}"] if alt.source else []
    out += [(f"{alt.order}. " if alt.order else "") + "if: " + " & ".join(alt.guards)] if alt.guards else []
    for arm in alt.arms:
        acts = " ".join(arm.actions) or "-"
        if arm.triggers():
            out.append(f"on {' '.join(arm.triggers())}: {acts}")
        if arm.shadowed():
            out.append(f"unreachable on {' '.join(arm.shadowed())}: {acts}")
    return out


# ------------------------------------------------------------------------------ dot


def _q(s: str) -> str:
    """A DOT quoted string (escString: newlines become ``\\n``)."""
    return '"' + s.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"'


#: A cell (or any text between two tags) that is nothing but ``]``.
_LONE_BRACKETS = re.compile(r">\]+<")


def _attr(k: str, v: str) -> str:
    if k == "label" and v.startswith("<") and v.endswith(">"):
        # An HTML label. Graphviz (2.43 at least) misplaces a cell whose whole text is
        # ``]``: the legend's rbrack row came out empty and the next one read "]lbrace".
        # As character references the brackets are only text.
        return f"{k}={_LONE_BRACKETS.sub(lambda m: '>' + '&#93;' * (len(m.group(0)) - 2) + '<', v)}"
    return f"{k}={_q(v)}"


class _Dot:
    def __init__(self) -> None:
        self.lines: list[str] = []
        self.depth = 1

    def add(self, line: str) -> None:
        self.lines.append("\t" * self.depth + line)

    def attrs(self, attrs: Sequence[tuple[str, str]]) -> str:
        return "[" + ", ".join(_attr(k, v) for k, v in attrs) + "]"

    def node(self, name: str, attrs: Sequence[tuple[str, str]]) -> None:
        self.add(f"{_q(name)} {self.attrs(attrs)}")

    def edge(self, a: str, b: str, attrs: Sequence[tuple[str, str]]) -> None:
        self.add(f"{_q(a)} -> {_q(b)} {self.attrs(attrs)}")

    def open(self, name: str, attrs: Sequence[tuple[str, str]]) -> None:
        self.add(f"subgraph {_q(name)} {{")
        self.depth += 1
        for k, v in attrs:
            self.add(_attr(k, v))

    def close(self) -> None:
        self.depth -= 1
        self.add("}")


def _table(rows: Iterable[str], pad: int = 1) -> str:
    return f'<table border="0" cellborder="0" cellspacing="0" cellpadding="{pad}">' + "".join(rows) + "</table>"


def _row(*cells: str) -> str:
    return "<tr>" + "".join(f'<td align="left">{c}</td>' for c in cells) + "</tr>"


# ---------------------------------------------------------------------------- views


def render_dot(view: View, marks: Marks | None = None, path_only: bool = False) -> str:
    """The ``.dot`` text of a view (deterministic).

    With ``marks`` (a trace), fired edges carry their counts; ``path_only`` draws only
    the states the trace visited and the edges it fired, small enough for a screen.
    """
    if marks is None and not path_only:
        return _render_plain(view)
    return _render(view, marks, path_only)


@functools.lru_cache(maxsize=64)
def _render_plain(view: View) -> str:
    # (Deterministic, and asked again by generate, check and the index for one view:
    # with every dialect's view, rendering them again was most of a check's time.)
    return _render(view, None, False)


def _render(view: View, marks: Marks | None, path_only: bool) -> str:
    m = view.machine
    decl = m.decl
    states, rows, _machine = read_machine(decl)
    names = Names(m)
    drawn = rows
    if path_only and marks is not None:
        drawn = [r for r in rows if marks.counts.get((r.source, r.trigger, r.index))]
    edges = _edges(drawn, names, rows)
    kept = {decl.initial} | {s for e in edges for s in (*e.sources, e.dest)} if path_only else set(states)
    decls = [s for s in decl.states if s.name in kept]
    clusters = _clusters(decls, (layout.dialect.name for layout in m.layouts))
    edges = _collapse(edges, clusters, drawn, decl.char_triggers)
    looks = {id(e): _Look(e, names, marks, decl.char_triggers, brief=path_only) for e in edges}
    # A return edge of a two-way pair away from the hub (fence_run -> in_fence back
    # from in_fence -> fence_run) is routed below: measured with label_overlaps, the
    # pair's two labels otherwise share the gap between the states and overlap.
    order = {s.name: i for i, s in enumerate(decl.states)}
    pairs = {(e.sources[0], e.dest) for e in edges if len(e.sources) == 1 and not e.cluster}
    returns = {(a, b) for a, b in pairs if (b, a) in pairs and a != b and _HUB not in (a, b) and order[a] > order[b]}
    # Listed inside their source state: self-loops (rule 7) and, in a compact region,
    # every transition between its states (rule 9); those arrows carry no label.
    owner = {s.name: s.owner for s in decl.states}
    compact = _compact(view)
    listed: dict[str, list[Edge]] = {}
    for e in edges:
        src = e.sources[0]
        if e.sources == (e.dest,):
            listed.setdefault(src, []).append(e)
    for e in edges:
        src = e.sources[0]
        if (len(e.sources) == 1 and not e.cluster and src != e.dest and owner.get(src) in compact
                and owner.get(e.dest) == owner[src]):
            listed.setdefault(src, []).append(e)
    # A compact state's exits out of its box (the JSON body's close into the position
    # after the body, one per dialect that has such a body) are listed inside it too
    # when it has more than one (rule 9): its arrows then carry no label, so however
    # many dialects a machine composes, no two of that state's exit labels exist to be
    # stacked in the gap beside the box. The shared text (``rbrace / j_close_body``) is
    # written once, each exit's guard and destination a line under it. With one exit
    # (a dialect's own view) there is nothing to stack with and the arrow keeps it.
    # So are a dialect position's exits into the bodies (a capture, a JSON body) where
    # several dialects are drawn: one position may lead into several bodies (Mistral's
    # name or array), and their labels stack in the gap beside its box the same way.
    # So are a capture's exits into the body after it, where several captures lead
    # there (Mistral's name and id, each before a ``{`` whose ``[ARGS]`` was left out):
    # two such labels stacked beside ``in_capture`` (measured with label_overlaps).
    dialect_names = {layout.dialect.name for layout in m.layouts}
    listing = compact | (dialect_names | {"capture"} if len(dialect_names) > 1 else frozenset())
    leaving: dict[str, list[Edge]] = {}
    for e in edges:
        src = e.sources[0]
        if (len(e.sources) == 1 and not e.cluster and not e.marker and src != e.dest and e.dest != _HUB
                and owner.get(src) in listing and owner.get(e.dest) != owner[src]):
            leaving.setdefault(src, []).append(e)
    exits = {src: es for src, es in leaving.items() if len(es) > 1}
    unlabelled = {id(e) for es in (*listed.values(), *exits.values()) for e in es}
    # A dialect box's edge into block_rest is the twin of its edge that gives the block
    # up (the same characters, ``rest_follows`` tried first, ``enter_rest`` before its
    # actions): in a view of several dialects their labels, one a box, stacked
    # (measured with label_overlaps). Unlabelled: the legend says so, the tooltip lists
    # its rows.
    unlabelled |= {id(e) for e in edges if e.dest == _REST and e.cluster[len("cluster_"):] in dialect_names}

    dot = _Dot()
    sub = "drawn from the declaration the runners are compiled from · regenerate: callsieve diagram"
    if marks is not None:
        sub = ("path only · " if path_only else "") + "trace: " + " · ".join(marks.summary)
    dot.lines.append("digraph callsieve {")
    title = f'<<b><font point-size="16">{_h(view.title)}</font></b><br/><font point-size="10">{_h(sub)}</font>>'
    for k, v in (
        # ranksep 0.5, not 0.45: with the JSON body's states, measured with label_overlaps,
        # 0.45 lets dot stack two of the overview's labels at one rank; nodesep 0.8, not 0.3:
        # with the nine dialects and the spill self-loops, 0.3 stacks two hub labels, and
        # with the long tail's, 0.4 (at any mclimit) the three labels between in_param and
        # the hub. mclimit 0.5: at the default, those three stack at every nodesep from
        # 0.3 to 0.8 (measured). Measured again with 26 dialects, mclimit 0.3 to 1: 0.8
        # overlapped at none, 0.5 to 0.7 at some. With issue 24's rows (eof closes, Kimi's
        # bare block) no nodesep from 0.5 to 1.5 at mclimit 0.3 to 1 kept the overview
        # clear; of 220 drawn settings (nodesep 0.5-1.5, mclimit 0.3-2, ranksep
        # 0.45-0.7), nodesep 1.4, mclimit 2, ranksep 0.45 left no view overlapping; with
        # gemma4 and olmo3, nodesep 1.5, mclimit 1.5, ranksep 0.55 (drawn the same way);
        # with code listening for markers (issue 22), ranksep 0.5 (0.55 and 0.6 stacked
        # two labels into text; nodesep 1.6 cleared the overview too); with issues 22, 23
        # and 27 together, mclimit 2 (of 18 settings, nodesep 1.4-1.6, mclimit 1-2, ranksep
        # 0.5-0.55, three cleared the overview: 1.5/2/0.5 kept the rest as they were). A
        # trace's path picture, a strip for a screen, keeps nodesep 0.4, mclimit 0.5 and
        # ranksep 0.5 (its height).
        ("graph", [("rankdir", "LR"), ("compound", "true"), ("newrank", "true"),
                   ("nodesep", "0.4" if path_only else "1.5"), ("mclimit", "0.5" if path_only else "2"),
                   ("ranksep", "0.5"), ("fontname", "Helvetica"), ("fontsize", "12"), ("labelloc", "t"), ("label", title)]),
        ("node", [("shape", "box"), ("style", "rounded,filled"), ("fillcolor", "white"), ("fontname", "Helvetica"),
                  ("fontsize", "11"), ("margin", "0.08,0.04")]),
        ("edge", [("fontname", "Helvetica"), ("fontsize", "10"), ("arrowsize", "0.7")]),
    ):
        dot.add(f"{k} {dot.attrs(v)}")

    docs = {s.name: s for s in decl.states}
    for c in clusters:
        _draw_cluster(dot, c, lambda name: _draw_state(dot, docs[name], decl, listed, exits, looks, marks, path_only))
    # Of several labelled edges between the same two states (a marker's and a dead
    # tag's, maybe_tag -> in_param), dot bundles those with the same ports into one
    # chain and stacks their labels on one another: all but the first go by the bottom.
    # (A compact state's several exits stack the same way beside its box; they are
    # listed inside it instead, above.)
    # A fork's exits into a body several dialects begin in (the JSON tokenizer's
    # ``j_start``: hermes's ``{``, granite's ``[``, gateway XML's JSON invoke body) go by
    # the bottom too: beside the diamond their label stacked on a position's (measured
    # with label_overlaps, the ``<tool_calls>`` opener's view).
    bodies = {"json_body"}  # (not the Python tokenizer's: olmo3's then stacked on the JSON one's below)
    seen: set[tuple[str, str]] = set()
    for e in edges:
        pair = (e.sources[0], e.dest)
        again = pair in seen and not e.cluster and id(e) not in unlabelled and e.sources != (e.dest,)
        seen.add(pair)
        into_body = e.sources == (_FORK,) and owner.get(e.dest) in bodies
        _draw_edge(dot, e, looks[id(e)], {c.key: c for c in _walk(clusters)}, pair in returns or again or into_body,
                   labelled=id(e) not in unlabelled)
    if not path_only:
        _draw_panels(dot, view, decl, anchor="in_param" if "in_param" in docs else decl.initial)
    else:  # only what the path shows needs naming
        _draw_legend(dot, [])
    dot.lines.append("}")
    return "\n".join(dot.lines) + "\n"


def _draw_cluster(dot: _Dot, c: Cluster, draw_state: Callable[[str], None]) -> None:
    dot.open(c.key, [("label", f"<<i>{_h(c.label)}</i>>"), ("style", "rounded,filled"), ("fillcolor", c.fill),
                     ("color", "#999999"), ("fontsize", "10"), ("labeljust", "r")])
    for name in c.members:
        draw_state(name)
    for child in c.children:
        _draw_cluster(dot, child, draw_state)
    dot.close()


def _draw_state(dot: _Dot, s: StateDecl, decl: Declaration, listed: dict[str, list[Edge]], exits: dict[str, list[Edge]],
                looks: dict[int, _Look], marks: Marks | None, path_only: bool) -> None:
    name = s.name
    fill = {"maybe_tag": "#fde2c0", "in_reasoning": "#ece4f7", _FORK: "#fde2c0"}.get(name, "white")
    color = "black"
    extra = ""
    if marks is not None:
        n = marks.visits.get(name, 0)
        if n:
            fill = "#ffd9b0"
            extra = "<br/>" + _font(f"<b>read ×{n}</b>", _HOT, "9")
        else:
            color = _GREY
    rows = [f"<tr><td><b>{_h(name)}</b></td></tr>"]
    if not path_only:
        doc = "<br/>".join(_h(x) for x in _wrap(s.doc, 26))
        rows.append(f"<tr><td>{_font(doc, '#555555', '9')}{extra}</td></tr>")
    elif extra:
        rows.append(f"<tr><td>{extra[5:]}</td></tr>")
    for n, e in enumerate(listed.get(name, [])):
        look = looks[id(e)]
        body = ("↻ " if e.dest == name else f"→ <b>{_h(e.dest)}</b>: ") + "<br/>".join(look.lines)
        rows.append(("<hr/>" if n == 0 else "") + f"<tr><td>{_font(body, look.ink, '10')}</td></tr>")
    rows += _exit_rows(exits.get(name, []), looks, first=not listed.get(name))
    attrs = [("label", f"<{_table(rows)}>"), ("fillcolor", fill), ("color", color), ("fontcolor", color),
             ("tooltip", f"{name}: {s.doc}")]
    if name == _FORK:
        attrs += [("shape", "diamond"), ("style", "filled"), ("margin", "0")]
    if name == decl.initial:
        attrs.append(("peripheries", "2"))
    if name in (_HUB, _FORK):
        attrs.append(("penwidth", "1.6"))
    dot.node(name, attrs)


def _exit_rows(exits: list[Edge], looks: dict[int, _Look], first: bool) -> list[str]:
    """A compact state's exits out of its box (rule 9), in the order it tries them:
    what they share (the triggers and actions, ``rbrace / j_close_body``) once, then
    each one's guard and where it leads (``4. [j_outermost, j_in_object, body:hermes.json_call1]
    → hermes.after_json_call``)."""
    #: (ink, arm lines) → (try order, guard line, destination) of each alternative that has them
    groups: dict[tuple[str, tuple[str, ...]], list[tuple[int, str, str]]] = {}
    for e in exits:
        look = looks[id(e)]
        for order, guard_line, arm_lines in look.parts:
            groups.setdefault((look.ink, arm_lines), []).append((order, guard_line, e.dest))
    rows: list[str] = []
    for (ink, arm_lines), where in groups.items():
        head = "→ <i>out of the box</i>: " + "<br/>".join(arm_lines)
        # In the order the state tries them (sorted is stable: unnumbered ones keep theirs).
        body = [head] + [(guard + " " if guard else "") + f"→ <b>{_h(dest)}</b>"
                         for _order, guard, dest in sorted(where, key=lambda w: w[0])]
        rows.append(("<hr/>" if first and not rows else "") + f"<tr><td>{_font('<br/>'.join(body), ink, '10')}</td></tr>")
    return rows


def _draw_edge(dot: _Dot, e: Edge, look: _Look, clusters: dict[str, Cluster], below: bool = False,
               labelled: bool = True) -> None:
    attrs: list[tuple[str, str]] = [("tailport", "s"), ("headport", "s")] if below else []
    if labelled:  # else its label is listed inside its source state
        attrs.append(("label", "<" + "<br/>".join(look.lines) + ">"))
    attrs += [("tooltip", look.tooltip), ("color", look.color), ("fontcolor", look.ink)]
    if look.total:
        attrs.append(("penwidth", f"{1.2 + min(3.0, math.log10(look.total + 1)):.1f}"))
    elif look.marker and not look.dead:
        attrs.append(("penwidth", "1.4"))
    if look.dead:
        attrs.append(("style", "dotted"))
    tail = e.sources[0]
    if e.cluster:
        c = clusters[e.cluster]
        # Leave from inside a nested box: the label then lands clear of the hub's
        # edges into the box (the tail is layout only; ltail draws it from the border).
        tail = (c.children[0].all_members() if c.children else c.all_members())[0]
        attrs.append(("ltail", e.cluster))
    if _CODE_STATES & {tail, e.dest} and _HUB in (tail, e.dest):
        # (code's markers, to and from the hub, rank nothing: ranked, they pulled the
        # hub, and every block after it, past the fence's states, where the fork's
        # labels had no room; measured with label_overlaps)
        attrs.append(("constraint", "false"))
    dot.edge(tail, e.dest, attrs)


# --------------------------------------------------------------------------- panels

#: The notation, for each picture's legend and the diagrams/README.md index.
HOW_TO_READ: tuple[tuple[str, str], ...] = (
    ("3. [guard]", "a state tries its guards in this order; the first that passes fires"),
    ("[else]", "the fallback: taken when no guard passes"),
    ("[m in s]", "the held tag is the marker m, listened for in state s (value spec)"),
    ("/ action ↺", "actions run; ↺: the character is read again in the new state"),
    ("↻", "a self-loop: listed inside its state"),
    ("→ s:", "in a compact box (JSON body): a move to state s, listed inside its state; so are a state's "
             "several ways out of the box (→ out of the box)"),
    ("blue", "a complete marker decided it"),
    ("red", "the block is released as text, with a Diagnostic"),
    ("box edge", "an edge from a box's border leaves every state in it, but those it names"),
    ("box → block_rest", "unlabelled: where a dialect's block is given up, [rest_follows] is tried first and reads "
                         "it on to its close (enter_rest); the tooltip lists the rows"),
    ("◇ fork", "an opener several dialects share: what follows it decides the dialect"),
    ("[home:s] → s", "a block or shared opener begun in reasoning state s ends back in s: each edge that ends "
                     "one into text (or binds a fork) has such a twin, tried first, not drawn"),
)


def grammar_text(node: object) -> str:
    """A dialect's structure as one line: markers in order, ``( … )*`` repetition."""
    if isinstance(node, Block):
        parts = [node.open.shown() if node.open is not None else "(bare)", grammar_text(node.body)]
        if node.close is not None:
            parts.append(node.close.shown() + ("?" if node.close_optional else ""))
        return " ".join(parts)
    if isinstance(node, Marker):
        return node.shown()
    if isinstance(node, Seq):
        return " ".join(grammar_text(x) for x in node.items)
    if isinstance(node, Many):
        return f"( {grammar_text(node.item)} ){'+' if node.min >= 1 else '*'}"
    if isinstance(node, Call):
        close = [node.close.shown()] if node.close is not None else []
        opening = [node.open.shown()] if node.open is not None else []
        return " ".join([*opening, *(grammar_text(x) for x in node.items), *close])
    if isinstance(node, Opt):
        code = node.stray or node.missing  # a tolerance: which side of it is the deviation
        return f"( {grammar_text(node.item)} )?" + (f" ~{code}" if code else "")
    if isinstance(node, AltNode):
        return "( " + " | ".join(grammar_text(x) for x in node.items) + " )"
    if isinstance(node, Param):
        return " ".join([node.open.shown(), *(grammar_text(x) for x in node.between), grammar_text(node.value)])
    if isinstance(node, Raw):
        return f"text {node.close.shown()}"
    if isinstance(node, JsonValue):
        return f"JSON {node.close.shown()}"
    if isinstance(node, Choose):
        cases = " | ".join(f"{node.field}={v}: {grammar_text(b).split(' ')[0]}" for v, b in node.cases)
        closes = _unique(b.close.shown() for b in node.bodies())
        return f"{{{cases} | else: {grammar_text(node.default).split(' ')[0]}}} {' | '.join(closes)}"
    label = getattr(node, "label", None)  # any other node kind (a capture, JSON arguments): its label
    if isinstance(label, str):
        return label
    raise TypeError(f"not a structure node: {node!r}")


def _value_styles(d: Dialect) -> str:
    out: list[str] = []
    for b in d.values():
        if isinstance(b, JsonValue):
            out.append("JSON")
            continue
        st = b.style
        got = [n for n, on in (("strip newlines", st.strip_newlines), ("XML entities", st.unescape_entities),
                               ("CDATA", st.cdata), ("JSON when it parses", st.json_when_valid)) if on]
        out.append("text" + (f" ({', '.join(got)})" if got else ""))
    return ", ".join(_unique(out))


def _draw_panels(dot: _Dot, view: View, decl: Declaration, anchor: str) -> None:
    """One panel per dialect (its grammar), then the legend; placed right of the states."""
    for d in view.dialects:
        trs = [_row(_h(x)) for b in d.blocks for x in _wrap(grammar_text(b), 56, " ")]
        if _value_styles(d):
            trs.append(_row(_font(_h("values: " + _value_styles(d)), "#555555")))
        dot.open(f"cluster_dialect_{d.name}", [("label", f"<<b>dialect {_h(d.name)}</b>>"), ("style", "rounded,filled"),
                                                ("fillcolor", "#f4f4f4"), ("color", "#999999"), ("fontsize", "10")])
        dot.node(f"dialect_{d.name}", [("shape", "plaintext"), ("style", ""), ("fontsize", "9"), ("label", f"<{_table(trs)}>")])
        dot.close()
    rows = [_row("<b>how to read</b>", "")]
    rows += [_row(_font(_h(k), {"blue": _BLUE, "red": _RED}.get(k, "")), _h(v)) for k, v in HOW_TO_READ
             if (k != "◇ fork" or any(s.name == _FORK for s in decl.states))
             and (k != "→ s:" or any(s.owner in _compact(view) for s in decl.states))]
    rows.append(_row("<b>character classes (triggers)</b>", ""))
    for name, chars in decl.classes.items():
        rows.append(_row(_h(name), _h(_class_chars(chars))))
    rows += [
        _row(OTHER, "any other character"),
        _row("*", "any character;  * − a|b: any but a or b"),
        _row(EOF_TRIGGER, "the stream ended (close())"),
        _row(OVERFLOW, "the held block passed max_block_chars"),
    ]
    _draw_legend(dot, rows)
    # Invisible edges only place the panels: right of the states, out of the edges' way.
    for panel in ["legend"] + [f"dialect_{d.name}" for d in view.dialects]:
        dot.edge(anchor, panel, [("style", "invis")])


def _draw_legend(dot: _Dot, rows: list[str]) -> None:
    """The legend: ``rows``, then every character outside Latin-1 the picture shows,
    named by code point (without a CJK font ``｜`` renders as an empty box)."""
    wide = _wide_chars("\n".join(dot.lines) + "".join(rows))
    if wide:
        rows = rows + [_row("<b>characters by code point</b>", "(they may show as boxes without a CJK font)")]
        rows += [_row(_h(c), _h(f"U+{ord(c):04X} {unicodedata.name(c, 'unnamed')}")) for c in wide]
    if not rows:
        return
    dot.open("cluster_legend", [("label", "<<b>legend</b>>"), ("style", "rounded"), ("color", "#bbbbbb"), ("fontsize", "10")])
    dot.node("legend", [("shape", "plaintext"), ("style", ""), ("fontsize", "9"), ("label", f"<{_table(rows, 2)}>")])
    dot.close()


def _wide_chars(text: str) -> list[str]:
    """Characters outside Latin-1 in ``text`` that are not the drawing's own notation."""
    return sorted({c for c in text if ord(c) > 0xFF and c not in _NOTATION})


# ---------------------------------------------------------------------------- the index


def _openers(d: Dialect) -> list[tuple[str, bool]]:
    """What opens a dialect's blocks from prose, each once: (marker as written, whether
    it is a tolerated deviation: a call standing without its block's opener)."""
    out: list[tuple[str, bool]] = []
    for h in d.headers:
        out += [(m.shown(), False) for m, _ in h.starts]
    for b in d.blocks:
        if not b.prose:
            continue  # opened by a header's case, not from prose
        if b.open is not None:
            out.append((b.open.shown(), False))
            continue
        first = _first_marker(b.body)
        if first is not None:
            out.append((first.shown(), bool(b.tolerance)))
    return list(dict.fromkeys(out))


def _first_marker(node: object) -> Marker | None:
    if isinstance(node, Marker):
        return node
    if isinstance(node, Call):
        return node.open if node.open is not None else next(
            (m for m in (_first_marker(x) for x in node.items) if m is not None), None)
    if isinstance(node, (Many, Opt)):
        return _first_marker(node.item)
    if isinstance(node, (Seq, AltNode)):
        return next((m for m in (_first_marker(x) for x in node.items) if m is not None), None)
    return None


def index_dot(dialects: Sequence[Dialect], forks: Sequence[tuple[str, Sequence[str]]]) -> str:
    """The index: the text state, one box per dialect (its models and grammar, a link to
    its own diagram), the openers that lead from text into each, and the ``fork`` where
    several dialects share one (a link to that opener's view). Small enough to read on a
    screen, where the overview (every state of every dialect) is not."""
    dot = _Dot()
    dot.lines = ["digraph index {"]
    for line in ('rankdir="LR"', 'nodesep="0.12"', 'ranksep="0.9"', 'fontname="Helvetica"',
                 'node [fontname="Helvetica", fontsize="10"]', 'edge [fontname="Helvetica", fontsize="9", color="#555555"]',
                 'label=<<b>callsieve: the dialects</b> (click a box for its state diagram)>', 'labelloc="t"'):
        dot.add(line)
    dot.node("text", [("shape", "box"), ("style", "rounded,filled"), ("fillcolor", "#e8eef8"), ("URL", "overview.svg"),
                      ("target", "_top"), ("tooltip", "every state of every dialect: overview.svg"),
                      ("label", "<<b>text</b><br/><font point-size=\"9\">prose; Markdown code<br/>is text, never a call<br/>"
                                "(the whole machine)</font>>")])
    shared = {label: names for label, names in forks}
    for label, names in forks:
        dot.node(f"fork {label}", [("shape", "diamond"), ("style", "filled"), ("fillcolor", "#fff4d6"),
                                   ("URL", f"{opener_stem(label)}.svg"), ("target", "_top"),
                                   ("tooltip", f"{label} opens {', '.join(names)}: what follows it decides"),
                                   ("label", f"<{_h(label)}<br/><font point-size=\"8\">fork</font>>")])
        dot.edge("text", f"fork {label}", [])
    for d in dialects:
        # (two lines a box: its name and title; the grammar is on the dialect's own view)
        reasoning = ", ".join(_unique(r.open.shown() for r in d.reasoning))
        rows = [_row(f"<b>{_h(d.name)}</b>" + (_font(_h("  reasoning " + reasoning), "#777777") if reasoning else "")),
                _row(_font(_h(d.title), "#333333"))]
        dot.node(f"dialect {d.name}", [("shape", "box"), ("style", "rounded"), ("URL", f"dialect-{d.name}.svg"),
                                       ("target", "_top"), ("tooltip", f"{d.name}: {d.title}"),
                                       ("label", f"<{_table(rows)}>")])
        for opener, tolerated in _openers(d):
            if opener in shared and d.name in shared[opener]:
                dot.edge(f"fork {opener}", f"dialect {d.name}", [])
            else:
                attrs = [("label", f"<{_h(opener)}{' (tolerated)' if tolerated else ''}>")]
                dot.edge("text", f"dialect {d.name}", attrs + ([("style", "dashed")] if tolerated else []))
    dot.lines.append("}")
    return "\n".join(dot.lines) + "\n"
