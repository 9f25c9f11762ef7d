"""A dialect's structure, compiled into grammar positions (states) and listen rules.

The structure (``callsieve.grammar.api``: ``Block``, ``Call``, ``Param``, ``Many``,
``Seq``, value bodies) is a regular expression over *leaves*: markers and values. Each
leaf occurrence gets an id; FIRST, LAST and FOLLOW sets are computed as in Glushkov's
construction. A *position* is "just after a leaf": the markers that may come next are
FOLLOW(leaf), and the block may end there if the leaf can be the block's last.
Positions with the same FOLLOW set and the same ending are one state. So the table of
which markers a state listens for, and the set of markers that confirm a value's close
(FOLLOW of the value), are derived, never written by hand.

Leaf kinds say which role action runs when the leaf is read: ``block_open``,
``block_close``, ``call_open``, ``call_close``, ``param_begin`` (a parameter's open
when its key stands between markers after it), ``param_open`` (the marker a value
follows), ``mark`` (any other marker), ``capture`` (text read whole: a call's name or
id, a parameter's key), the JSON bodies, ``body`` (a value grammar: ``PythonCalls``,
``PythonCall``, a dialect's own ``Body``), and ``value`` (a value body, whose own close
marker is part of the body). A body names the region that reads it and the state it
begins in (``Body.region``, ``Body.entry``; ``Raw.entry`` is ``in_param``): this module
names no region's state.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Union

from callsieve.grammar.api import (
    Block,
    Body,
    ValueBody,
    Call,
    Capture,
    Choose,
    Dialect,
    Alt,
    JsonArgs,
    JsonCall,
    JsonCalls,
    JsonValue,
    Many,
    Opt,
    Marker,
    Node,
    Param,
    PythonCall,
    PythonCalls,
    Raw,
    Seq,
    Value,
)
from callsieve.grammar.errors import GrammarError


@dataclass(eq=False)
class BlockSpec:
    """One block of one dialect: what the engine needs to hold and emit it."""

    dialect: Dialect
    block: Block
    prefix: str  # state-name prefix: "qwen3_coder." or "dsml.bare."

    @property
    def bare(self) -> bool:
        return self.block.open is None


#: Leaves read by a body region of their own rather than as a marker (``body``: a value
#: grammar, ``grammar.api.Body``, or a built-in one named like it).
BODY_KINDS = ("capture", "json_args", "json_call", "json_calls", "body")
#: The structure nodes a body region reads, as a type.
BodyNode = Union[Capture, JsonArgs, JsonCall, JsonCalls, PythonCalls, PythonCall, Body]


@dataclass(eq=False)
class Leaf:
    id: int
    # block_open | block_close | call_open | call_close | mark | param_begin | param_open
    # | value | capture | json_args | json_call
    kind: str
    spec: BlockSpec
    marker: Marker | None = None
    value: Value | None = None
    #: The parameter a leaf belongs to (a value, its opens, a capture giving its key).
    param: Param | None = None
    #: The body node of a body leaf (capture, JSON, a value grammar).
    body: BodyNode | None = None
    #: The call this leaf belongs to (its ``ids`` policy), if any.
    call: Call | None = None
    #: The leaf begins its call (a call with no open marker starts here).
    starts_call: bool = False
    #: Tolerance (``Opt(marker, stray=CODE)``): the marker is no part of the format but
    #: models write it; read, it is reported with this code ("" : a marker of the format).
    stray: str = ""
    #: Tolerance (``Opt(marker, missing=CODE)`` as a value's opener): the marker may be
    #: left out, the value then begins where it was expected ("" : it is required).
    missing: str = ""

    def label(self) -> str:
        if self.marker is not None:
            return self.marker.shown()
        if self.body is not None:
            return self.body.label
        return "value"

    @property
    def name(self) -> str:
        """A name for the states and guards of this leaf's body (``kimi_k2.capture1``)."""
        return f"{self.spec.prefix}{self.kind}{self.id}"

    @property
    def makes_calls(self) -> bool:
        """The leaf is a body that makes its own calls (a whole call, or several)."""
        return self.body is not None and getattr(self.body, "reads", "") in ("call", "calls")


@dataclass(eq=False)
class Position:
    """A state of the dialect between markers."""

    name: str
    spec: BlockSpec
    follow: tuple[Leaf, ...]
    can_end: bool
    #: Only ever "after a capture": the capture state listens for its markers itself.
    captured: bool = False


@dataclass(eq=False)
class ValueSpec:
    """One body of one value leaf (a Choose gives one spec per body)."""

    name: str
    leaf: Leaf
    body: ValueBody
    #: The position a confirmed close leads to: FOLLOW of the value.
    follow: tuple[Leaf, ...]
    can_end: bool

    @property
    def state(self) -> str:
        """The state the value begins in: its body's (``Raw``: ``in_param``)."""
        return self.body.entry

    @property
    def spec(self) -> BlockSpec:
        return self.leaf.spec


@dataclass(eq=False)
class Layout:
    """A dialect compiled: its positions, where each leaf leads, what opens a block."""

    dialect: Dialect
    positions: list[Position] = field(default_factory=list)
    #: leaf id → position after it (absent: the leaf ends the block, or is a value).
    after: dict[int, Position] = field(default_factory=dict)
    #: leaf id → the value specs entered when that param_open leaf is read.
    values: dict[int, tuple[ValueSpec, ...]] = field(default_factory=dict)
    #: Leaves that open a block from prose (block opens; first markers of bare blocks).
    openers: list[Leaf] = field(default_factory=list)
    leaves: list[Leaf] = field(default_factory=list)


_Sets = tuple[set[int], set[int], bool]  # FIRST, LAST, nullable


class _Builder:
    def __init__(self, dialect: Dialect, strict: bool = False) -> None:
        self.dialect = dialect
        self.strict = strict
        self.leaves: list[Leaf] = []
        self.follow: dict[int, set[int]] = {}
        self.spec: BlockSpec | None = None

    call: Call | None = None

    def leaf(self, kind: str, marker: Marker | None = None, value: Value | None = None, param: Param | None = None,
             body: BodyNode | None = None) -> _Sets:
        assert self.spec is not None
        lf = Leaf(len(self.leaves), kind, self.spec, marker, value, param, body, self.call)
        self.leaves.append(lf)
        self.follow[lf.id] = set()
        return {lf.id}, {lf.id}, False

    def seq(self, parts: list[_Sets]) -> _Sets:
        first: set[int] = set()
        last: set[int] = set()
        nullable = True
        for f, l, n in parts:
            for x in last:
                self.follow[x] |= f
            if nullable:
                first |= f
            last = (last | l) if n else set(l)
            nullable = nullable and n
        return first, last, nullable

    def node(self, n: Node, kind: str = "mark") -> _Sets:
        if isinstance(n, Marker):
            return self.leaf(kind, n)
        if isinstance(n, Capture):
            return self.leaf("capture", body=n)
        if isinstance(n, JsonArgs):
            return self.leaf("json_args", body=n)
        if isinstance(n, JsonCall):
            return self.leaf("json_call", body=n)
        if isinstance(n, JsonCalls):
            return self.leaf("json_calls", body=n)
        if isinstance(n, (PythonCalls, PythonCall, Body)):
            if n.reads not in ("args", "call", "calls"):
                raise GrammarError(f"dialect {self.dialect.name}: body {n.label!r}: reads must be 'args', 'call' or 'calls', "
                                   f"not {n.reads!r}")
            if n.reads == "args" and self.call is None:
                raise GrammarError(f"dialect {self.dialect.name}: body {n.label!r} reads a call's arguments "
                                   "(reads='args'): it stands inside a Call")
            if n.reads != "args" and self.call is not None:
                raise GrammarError(f"dialect {self.dialect.name}: body {n.label!r} makes calls (reads={n.reads!r}): "
                                   "it stands outside any Call")
            return self.leaf("body", body=n)
        if isinstance(n, Opt):
            if n.stray and self.strict:
                return set(), set(), True  # a stray marker is no part of the format
            if n.missing and self.strict:
                return self.node(n.item)  # a marker of the format: required
            f, l, _n = self.node(n.item)
            if n.stray:
                for leaf_id in f:
                    self.leaves[leaf_id].stray = n.stray
            if n.missing:  # (a marker before a body; a value's opener is read in Param)
                for leaf_id in f:
                    self.leaves[leaf_id].missing = n.missing
            return f, l, True
        if isinstance(n, Alt):
            first: set[int] = set()
            last: set[int] = set()
            nullable = False
            for item in n.items:
                f, l, nx = self.node(item)
                first |= f
                last |= l
                nullable = nullable or nx
            return first, last, nullable
        if isinstance(n, Seq):
            return self.seq([self.node(x) for x in n.items])
        if isinstance(n, Many):
            f, l, nullable = self.node(n.item)
            for leaf_id in l:
                self.follow[leaf_id] |= f
            return f, l, nullable or n.min == 0
        if isinstance(n, Call):
            outer, self.call = self.call, n
            parts = [self.leaf("call_open", n.open)] if n.open is not None else []
            mark = len(self.leaves)
            parts += [self.node(x) for x in n.items]
            assert self.spec is not None
            if n.open is None and self.spec.block.prose:
                f, _l, _n = parts[0]
                for leaf_id in f:
                    self.leaves[leaf_id].starts_call = True
                if (any(self.leaves[i].kind != "capture" for i in f) or mark not in f) and self.spec.block.prose:
                    raise GrammarError(f"dialect {self.dialect.name}: a call without an open marker must begin with a capture")
            if n.close is not None:
                f, l, _n = self.leaf("call_close", n.close)
                # Tolerance: the call's close left out before what may follow the call,
                # in a block that has its own open (a bare block needs the close).
                implied = (bool(n.implied_close) and not self.strict and self.spec is not None
                           and self.spec.block.open is not None)
                parts.append((f, l, implied))
            self.call = outer
            return self.seq(parts)
        if isinstance(n, Param):
            if not n.between:
                return self.seq([self.leaf("param_open", n.open, param=n), self.leaf("value", value=n.value, param=n)])
            # A key between markers (GLM <arg_key>KEY</arg_key><arg_value>): the open
            # begins the parameter, its capture gives the key, the last marker opens
            # the value.
            parts = [self.leaf("param_begin", n.open, param=n)]
            for x in n.between[:-1]:
                parts.append(self.leaf("capture", body=x, param=n) if isinstance(x, Capture) else self.node(x))
            value_open = n.between[-1]
            missing = ""
            if isinstance(value_open, Opt):  # the value's opener may be left out (a tolerance)
                missing = "" if self.strict else value_open.missing
                value_open = value_open.item
            assert isinstance(value_open, Marker)
            parts.append(self.leaf("param_open", value_open, param=n))
            self.leaves[-1].missing = missing
            parts.append(self.leaf("value", value=n.value, param=n))
            return self.seq(parts)
        raise GrammarError(f"dialect {self.dialect.name}: {type(n).__name__} is not a structure node")


def _role(after: Leaf, follow: tuple[Leaf, ...]) -> str:
    kinds = {lf.kind for lf in follow}
    if kinds & {"call_open"} or any(lf.starts_call or lf.makes_calls for lf in follow):
        return "in_block"
    if kinds & {"param_begin"} or any(lf.kind == "param_open" and not (lf.param and lf.param.between) for lf in follow):
        return "in_call"
    if kinds & {"param_open"}:
        return "before_value"
    return f"after_{after.kind}"


def _bodies(v: Value) -> tuple[ValueBody, ...]:
    return v.bodies() if isinstance(v, Choose) else (v,)


def _first_nodes(n: object) -> tuple[list[object], bool]:
    """The leaves (markers, bodies) a structure node may begin with, and whether it may
    be empty."""
    if isinstance(n, Opt):
        return _first_nodes(n.item)[0], True
    if isinstance(n, Many):
        got, empty = _first_nodes(n.item)
        return got, empty or n.min == 0
    if isinstance(n, Alt):
        out: list[object] = []
        empty = False
        for x in n.items:
            got, e = _first_nodes(x)
            out += got
            empty = empty or e
        return out, empty
    if isinstance(n, Seq):
        out = []
        for x in n.items:
            got, e = _first_nodes(x)
            out += got
            if not e:
                return out, False
        return out, True
    if isinstance(n, Call):
        return _first_nodes(Seq(*((n.open,) if n.open is not None else ()), *n.items))
    if isinstance(n, Param):
        return [n.open], False
    return [n], False


def opened_by_body(block: Block, only: bool = False) -> bool:
    """A bare block that may begin with a body, no marker (Llama's bare JSON, a bare
    pythonic list): its body opens it, only where the response begins. ``only``: it may
    begin with nothing else (no marker of its own opens it either)."""
    firsts = _first_nodes(block.body)[0]
    bodies = [x for x in firsts if not isinstance(x, Marker)]
    return block.open is None and bool(bodies) and (not only or len(bodies) == len(firsts))


def compile_dialect(d: Dialect, strict: bool = False, bare: bool = True) -> Layout:
    """Compile ``d``'s blocks into positions; raise GrammarError naming what is ambiguous.
    ``strict``: without the tolerances the grammar declares (bare blocks that are
    deviations, implied call closes; the composer leaves out variants and implied
    value closes). ``bare``: with the blocks their own body opens (else left out)."""
    b = _Builder(d, strict)
    layout = Layout(d)
    ends: dict[int, set[int]] = {}  # block index → leaves that may end it
    specs: list[BlockSpec] = []
    for i, block in enumerate(d.blocks):
        if strict and block.tolerance:
            continue
        if not bare and opened_by_body(block, only=True):
            continue  # (a block a marker may open too keeps it: only its body's opening is left out)
        prefix = f"{d.name}." + (f"{block.name}." if block.name else ("" if i == 0 else f"block{i}."))
        spec = BlockSpec(d, block, prefix)
        specs.append(spec)
        b.spec = spec
        parts: list[_Sets] = []
        if block.open is not None:
            parts.append(b.leaf("block_open", block.open))
        parts.append(b.node(block.body))
        if block.close is not None:
            f, l, _n = b.leaf("block_close", block.close)
            parts.append((f, l, block.close_optional))
        first, last, nullable = b.seq(parts)
        if nullable:
            raise GrammarError(f"dialect {d.name}: block {prefix.rstrip('.')} can be empty")
        layout.openers += [b.leaves[x] for x in sorted(first)]
        ends[len(specs) - 1] = last
    layout.leaves = b.leaves
    # Positions, one per distinct (block, FOLLOW, may end) after a non-value leaf.
    by_key: dict[tuple[int, frozenset[int], bool], Position] = {}
    names: set[str] = set()
    for lf in b.leaves:
        bi = specs.index(lf.spec)
        follow_ids = frozenset(b.follow[lf.id])
        can_end = lf.id in ends[bi] and lf.kind != "block_close"
        if lf.kind in ("block_close", "value", "param_open"):
            continue
        if not follow_ids and not can_end:
            continue
        key = (bi, follow_ids, can_end)
        pos = by_key.get(key)
        if pos is None:
            follow = tuple(b.leaves[x] for x in sorted(follow_ids))
            role = _role(lf, follow)
            name = lf.spec.prefix + role
            k = 2
            while name in names:
                name = f"{lf.spec.prefix}{role}_{k}"
                k += 1
            names.add(name)
            pos = Position(name, lf.spec, follow, can_end)
            by_key[key] = pos
            layout.positions.append(pos)
        layout.after[lf.id] = pos
        if lf.kind == "capture" and not getattr(lf.body, "end_chars", ""):
            pos.captured = True
    # Values: each param_open leaf enters its value's bodies.
    value_names: set[str] = set()
    for lf in b.leaves:
        if lf.kind != "value":
            continue
        assert lf.value is not None
        opener = next(x for x in b.leaves if x.kind == "param_open" and b.follow[x.id] == {lf.id})
        bi = specs.index(lf.spec)
        follow = tuple(b.leaves[x] for x in sorted(b.follow[lf.id]))
        can_end = lf.id in ends[bi]
        if not follow:
            raise GrammarError(
                f"dialect {d.name}: unconfirmable close: no marker may follow the value after {opener.label()!r}, "
                "so nothing can confirm that its close ends it"
            )
        unmarked = [x for x in follow if x.marker is None]
        if unmarked:
            raise GrammarError(
                f"dialect {d.name}: unconfirmable close: {unmarked[0].label()!r} may follow the value after "
                f"{opener.label()!r}, and only a marker can confirm that a value's close ends it (rule: what may "
                "follow a value begins with a marker); put a marker between the value and what follows it"
            )
        specs_for: list[ValueSpec] = []
        for body in _bodies(lf.value):
            kind = "json" if isinstance(body, JsonValue) else "raw"
            # (a second value of one block, a parameter the format does not have there
            # beside its own, ``Opt(Param(...), stray=)``: named apart, its scope its own)
            name = f"{lf.spec.prefix}value.{kind}"
            k = 2
            while name in value_names:
                name = f"{lf.spec.prefix}value{k}.{kind}"
                k += 1
            value_names.add(name)
            specs_for.append(ValueSpec(name, lf, body, follow, can_end))
        layout.values[opener.id] = tuple(specs_for)
    _check_ambiguous(d, layout)
    return layout


def _cross_match(a: Marker, b: Marker) -> bool:
    import regex

    pa, pb = regex.compile(a.pattern), regex.compile(b.pattern)
    return any(pb.fullmatch(ex) for ex in a.examples) or any(pa.fullmatch(ex) for ex in b.examples)


def _check_ambiguous(d: Dialect, layout: Layout) -> None:
    """Two markers allowed at one position must not read the same text."""
    groups: list[tuple[str, tuple[Leaf, ...]]] = [(p.name, p.follow) for p in layout.positions]
    for specs in layout.values.values():
        groups += [(f"after the close of {s.name}", s.follow) for s in specs]
    for where, leaves in groups:
        markers = [lf for lf in leaves if lf.marker is not None]
        for i, x in enumerate(markers):
            for y in markers[i + 1 :]:
                assert x.marker is not None and y.marker is not None
                if x.marker is not y.marker and _cross_match(x.marker, y.marker):
                    raise GrammarError(
                        f"dialect {d.name}: ambiguous markers at {where}: {x.label()!r} and {y.label()!r} "
                        "read the same text"
                    )


Origin = Union[str, tuple[str, str]]
