"""The compiled runner: a table of the rows the ``transitions`` machine holds, plus bulk scans.

The table is not a second copy of the logic: :func:`compile_machine` reads the rows of
the declaration in the order the ``transitions`` machine built from it holds them
(:func:`declared_rows`: ``machine.events[trigger].transitions[state]``, without building
that machine; ``tests/test_composition.py`` holds the two equal) and turns each into
``(guards, actions, dest)`` rows of plain functions.

Bulk scans: in a state where a character class only loops back with one action that
has a run form (``text_char`` → ``text_run``), the runner finds the next character that
could leave the state with one compiled regex and applies the run form to everything
before it. Where a start character (``<``) leads to ``maybe_tag``, the scan looks for
the next place a marker of the current context could begin (a full match, or a prefix
running off the end of the chunk) instead of stopping at every ``<``: a ``<`` that
cannot begin a marker would come straight back to this state, as the same run.

State runs (``Region.state_runs``): a region may declare, for one of its states, a run
that reads through several of its states at once where the same few characters keep
the machine cycling (``]`` runs in CDATA, tick runs and fence lines, a close refused
again and again, JSON brackets). The runner asks it before the state's bulk rule, and
again whenever it left the machine in another state; it must read exactly what the
steps would (the differential tests hold each to the reference runner).

A scan may stop early (stepping a character through the table is always exact); it
must never stop late. Scanners are built once per (state, matcher) and kept on the
:class:`CompiledMachine`, so every sieve over the same dialects shares them.

Cost per ``feed()``: the loop keeps the last scanner it used, so a chunk that is all
one run costs one regex search, one run action and no table lookup. A chunk shorter
than ``MAX_TAG_CHARS`` may end inside a marker: only the text after its last start
character can (grammar rule 2), so that one suffix is checked, and only if it exists.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, Callable, Sequence

from callsieve.events import Event, Text, ToolCallDelta
from callsieve.grammar.api import MAX_TAG_CHARS
from callsieve.grammar.states import EOF_TRIGGER, OTHER, OVERFLOW
from callsieve.declare import Named, declared_rows
from callsieve.machine import Machine
from callsieve.matcher import COMPLETE, VIABLE, Matcher
from callsieve.regions import SAW_TRIM_AT
from callsieve.regions.engine import EngineModel as Context
from callsieve.regions.json_run import STATES as JSON_RUN_STATES
from callsieve.regions.whole import WholeBlocks

Guard = tuple[Callable[[Context, str], bool], bool]
Row = tuple[tuple[Guard, ...], tuple[Callable[[Context, str], None], ...], str]


@dataclass
class BulkRule:
    """How to skip through a state: which characters stop, and the run action."""

    stop_chars: str
    run: Callable[[Context, str, int, int], int]
    marker_aware: bool
    #: When set, the run is made of these characters only (the loop is on a few
    #: classes, everything else leaves: ``after_close`` on whitespace) and the scan
    #: stops at the first character outside them; ``stop_chars`` is then unused.
    loop_chars: str = ""
    #: Characters at which the scan stops at once (a stop character; for a loop, any
    #: character outside it is told by ``loop_set``): the runner steps them without
    #: choosing or calling a scanner (markup-dense input changes state every few
    #: characters, and most scans there would find nothing to take).
    stop_set: frozenset[str] = frozenset()
    loop_set: frozenset[str] = frozenset()

    def __post_init__(self) -> None:
        self.stop_set = frozenset(self.stop_chars) if not self.loop_chars else frozenset()
        self.loop_set = frozenset(self.loop_chars)


class HitIndex:
    """The rows of (``maybe_tag``, trigger) by the held tag's key (``hit_rows``), where a
    step finds them in ``CompiledMachine.steps``."""

    __slots__ = ("by_key", "by_origin", "other")

    def __init__(self, by_key: dict[str, tuple[Row, ...]], dead_names: Sequence[tuple[str, ...]]) -> None:
        self.by_key = by_key
        # A dead tag (no key) may fire only the rows of no key (``by_key[""]``) that
        # return to its own origin, or that name no origin. They are chosen here, by the
        # guards' names, once: not at run time by the rows' identities, which the compiled
        # build does not keep (mypyc boxes a row tuple afresh each time it reads one).
        dead = by_key[""]
        assert len(dead) == len(dead_names)
        origins = {g[0][len("from:"):] for g in dead_names if g and g[0].startswith("from:")}
        self.other: tuple[Row, ...] = tuple(r for r, g in zip(dead, dead_names) if not (g and g[0].startswith("from:")))
        self.by_origin: dict[str, tuple[Row, ...]] = {
            o: tuple(r for r, g in zip(dead, dead_names) if not (g and g[0].startswith("from:")) or g[0] == "from:" + o)
            for o in origins}


Scanner = Callable[[str, int], int]
#: A whole block is not looked for in fewer characters than this (a block's opener,
#: one call and its close are longer): token-sized chunks never hold one.
WHOLE_MIN = 24
#: Chunks up to this long are first checked for any stop or start character at all.
QUICK_CHARS = 64


@dataclass
class CompiledMachine:
    table: dict[str, dict[str, tuple[Row, ...]]]
    bulk: dict[str, BulkRule]
    initial: str
    #: character → its trigger (class name); any other character is ``other``
    class_of: dict[str, str]
    #: state → (guards, actions) of a guarded self-loop that is the first transition
    #: tried on every character (``maybe_tag``: ``tag_viable`` → ``tag_push``).
    first_loops: dict[str, "GuardedLoop"] = field(default_factory=dict)
    #: (state, matcher or None) → scanner; filled on first use, shared by all runners.
    scanners: dict[tuple[str, Matcher | None], Scanner] = field(default_factory=dict)
    #: (state, trigger) → (start, end, key → rows): the rows ``start:end`` are each
    #: guarded first by a hit guard (``hit_key(ch) == key``, one per listened marker);
    #: only those of the held tag's key can fire, so only they are tried (issue 12,
    #: finding 9: a completed tag tried every marker's row in turn).
    hit_rows: dict[tuple[str, str], tuple[int, int, dict[str, tuple[Row, ...]]]] = field(default_factory=dict)
    #: state → its state run (``Region.state_runs``): tried before the state's bulk
    #: rule, it may read through several states at once.
    state_runs: dict[str, Callable[[Context, str, int], int]] = field(default_factory=dict)
    #: state → its first loop, where that loop has a run form and the state has no state
    #: run and no bulk rule (nothing the runner would try before the loop).
    direct_loops: dict[str, "GuardedLoop"] = field(default_factory=dict)
    #: state → trigger → (actions, dest, dest's direct loop) where the trigger's rows are
    #: one unguarded row (a start character into ``maybe_tag``, a newline in a position,
    #: ...): the runner fires it without a step.
    simple: dict[str, dict[str, tuple[tuple[Callable[[Context, str], None], ...], str, "GuardedLoop | None",
                                      Callable[[Context, str, int], int] | None]]] = field(default_factory=dict)
    #: state → key → (actions, dest) of the row a completed marker of that key fires
    #: after a failed first loop, whatever the character's class, where that row is the
    #: first and has no guard left (the key decided its hit guard): the runner fires it
    #: without a step.
    fires: dict[str, dict[str, tuple[tuple[Callable[[Context, str], None], ...], str]]] = field(default_factory=dict)
    #: state → (its state run, its bulk rule), either None: what the runner tries before
    #: stepping a character, in one lookup.
    plans: dict[str, tuple[Callable[[Context, str, int], int] | None, BulkRule | None]] = field(default_factory=dict)
    #: What a step reads, state → trigger → its rows, or their index by key where the
    #: rows are hit rows (``table`` and ``hit_rows`` in one lookup); ``steps_rest``: the
    #: same once the runner has seen the state's first loop fail on the character (its
    #: row, the first on every class, left out: it would fail again).
    steps: dict[str, dict[str, "tuple[Row, ...] | HitIndex"]] = field(default_factory=dict)
    steps_rest: dict[str, dict[str, "tuple[Row, ...] | HitIndex"]] = field(default_factory=dict)
    #: ``steps`` and ``steps_rest`` with each list of rows made a decision tree
    #: (:func:`_decision`) when first stepped: what ``_step`` walks, each guard asked at
    #: most once a step.
    decide: dict[str, dict[str, "Decision | HitIndex"]] = field(default_factory=dict)
    decide_rest: dict[str, dict[str, "Decision | HitIndex"]] = field(default_factory=dict)
    #: the trees made, by the identity of their list of rows (lists are shared)
    trees: dict[int, "Decision | HitIndex"] = field(default_factory=dict)

    def decision(self, state: str, trigger: str, after_loop: bool) -> "Decision | HitIndex":
        """The tree ``_step`` walks for (state, trigger), made once."""
        got = (self.steps_rest if after_loop else self.steps)[state][trigger]
        tree = _decided(self.trees, got)
        (self.decide_rest if after_loop else self.decide)[state][trigger] = tree
        return tree

    def scanner(self, state: str, matcher: Matcher | None) -> Scanner:
        key = (state, matcher)
        sc = self.scanners.get(key)
        if sc is None:
            sc = _make_scanner(self.bulk[state], matcher)
            self.scanners[key] = sc
        return sc


def compile_machine(composed: Machine) -> CompiledMachine:
    """Read the machine's rows into a dispatch table and derive bulk-scan rules.

    Equal rows, and equal lists of rows, are made once and shared (``maybe_tag`` has the
    same ~2,000 rows on every character class), and so is everything derived from a list
    (its hit index, the list past its first loop): read only, they are the same
    whichever (state, trigger) they are reached from."""
    decl = composed.decl
    model = composed.model
    names = declared_rows(decl)
    char_triggers = decl.char_triggers
    callbacks: dict[str, Any] = {}
    made: dict[Named, Row] = {}
    lists: dict[tuple[Named, ...], tuple[Row, ...]] = {}
    frozen: dict[str, dict[str, tuple[Row, ...]]] = {}
    for state, by in names.items():
        frozen[state] = {}
        for trigger, named in by.items():
            key = tuple(named)
            got = lists.get(key)
            if got is None:
                out: list[Row] = []
                for nr in named:
                    row = made.get(nr)
                    if row is None:
                        g, a, d = nr
                        row = made[nr] = (tuple((_callback(model, callbacks, c), True) for c in g),
                                          tuple(_callback(model, callbacks, x) for x in a), d)
                    out.append(row)
                got = lists[key] = tuple(out)
            frozen[state][trigger] = got
    bulk: dict[str, BulkRule] = {}
    for state, by_trigger in names.items():
        rule = _bulk_rule(state, by_trigger, char_triggers, decl.classes, model, decl.run_forms)
        if rule is not None:
            bulk[state] = rule
    first_loops = {}
    for state in frozen:
        loop = _first_loop(state, frozen[state], names[state], char_triggers, model)
        if loop is not None:
            first_loops[state] = loop
    # (keyed by the identity of a shared list of rows: one answer per distinct list)
    indexed: dict[int, tuple[int, int, dict[str, tuple[Row, ...]]] | None] = {}
    hit_rows = {}
    for state, by in names.items():
        for trigger, named in by.items():
            rows = frozen[state][trigger]
            if id(rows) not in indexed:
                indexed[id(rows)] = _hit_index(named, rows)
            index = indexed[id(rows)]
            if index is not None:
                hit_rows[(state, trigger)] = index
    state_runs = {state: getattr(model, method) for state, method in decl.state_runs.items()}
    # Where the runner has seen a first loop's guards fail on a character, its row (the
    # first on every class, ``_first_loop``) would fail again: the step starts after it.
    rest: dict[str, dict[str, tuple[Row, ...]]] = {}
    hit_rows_rest = {}
    past_first: dict[int, tuple[Row, ...]] = {}
    indexed_rest: dict[int, tuple[int, int, dict[str, tuple[Row, ...]]]] = {}
    for state, loop in first_loops.items():
        rows_of = frozen[state]
        assert all(rows[0] == (loop.guards, loop.actions, loop.dest) for t, rows in rows_of.items() if t in char_triggers)
        rest[state] = {}
        for t, rows in rows_of.items():
            if t in char_triggers:
                if id(rows) not in past_first:
                    past_first[id(rows)] = rows[1:]
                rest[state][t] = past_first[id(rows)]
            else:
                rest[state][t] = rows
        for t in char_triggers:
            index = hit_rows.get((state, t))
            if index is not None:
                start, end, full = index
                assert start > 0  # (each key's rows begin with the rows before the hit rows: the loop's first)
                if id(full) not in indexed_rest:
                    indexed_rest[id(full)] = (start, end, {k: rows[1:] for k, rows in full.items()})
                hit_rows_rest[(state, t)] = indexed_rest[id(full)]
    hit_indexes: dict[tuple[int, int], HitIndex] = {}
    steps: dict[str, dict[str, tuple[Row, ...] | HitIndex]] = {}
    for s, rows_by in frozen.items():
        steps[s] = {}
        for t, step in rows_by.items():
            index = hit_rows.get((s, t))
            steps[s][t] = step if index is None else _shared_index(hit_indexes, index, names[s][t], 0)
    steps_rest: dict[str, dict[str, tuple[Row, ...] | HitIndex]] = {}
    for s, rows_by in rest.items():
        steps_rest[s] = {}
        for t, step in rows_by.items():
            index = hit_rows_rest.get((s, t))
            steps_rest[s][t] = step if index is None else _shared_index(hit_indexes, index, names[s][t], 1)
    fires: dict[str, dict[str, tuple[tuple[Callable[[Context, str], None], ...], str]]] = {}
    firsts: dict[int, dict[str, tuple[tuple[Callable[[Context, str], None], ...], str]]] = {}
    for s, step_rows in steps_rest.items():
        common: dict[str, tuple[tuple[Callable[[Context, str], None], ...], str]] | None = None
        for t in char_triggers:
            got_rows = step_rows.get(t)
            if not isinstance(got_rows, HitIndex):
                common = None
                break
            if id(got_rows) not in firsts:
                firsts[id(got_rows)] = {k: (rows[0][1], rows[0][2]) for k, rows in got_rows.by_key.items()
                                        if k and rows and not rows[0][0]}
            here = firsts[id(got_rows)]
            common = here if common is None else {k: v for k, v in common.items() if here.get(k) == v}
        if common:
            fires[s] = common
    direct_loops = {s: loop for s, loop in first_loops.items()
                    if loop.guard_run is not None and s not in state_runs and s not in bulk}
    all_rest = {**steps, **steps_rest}
    # (filled as steps are taken: most of a machine's lists are never stepped)
    decide: dict[str, dict[str, Decision | HitIndex]] = {st: {} for st in steps}
    decide_rest: dict[str, dict[str, Decision | HitIndex]] = {st: {} for st in all_rest}
    return CompiledMachine(frozen, bulk, decl.initial, decl.class_of(), first_loops, hit_rows=hit_rows,
                           state_runs=state_runs, direct_loops=direct_loops, steps=steps,
                           steps_rest=all_rest, decide=decide, decide_rest=decide_rest,
                           plans={s: (state_runs.get(s), bulk.get(s)) for s in frozen}, fires=fires,
                           simple={s: {t: (rows[0][1], rows[0][2], direct_loops.get(rows[0][2]),
                                           _enter_run(model, names[s][t][0][1], direct_loops.get(rows[0][2])))
                                       for t, rows in by.items()
                                       if len(rows) == 1 and not rows[0][0] and (s, t) not in hit_rows}
                                   for s, by in frozen.items()})


#: A list of rows as a decision tree: a branch ``(guard, if it passes, if not)``, a leaf
#: ``(None, actions, dest)`` (``dest`` "" where no row fires). Typed ``Any`` inside: a
#: tree's nodes are tuples of either shape.
Decision = tuple[Any, Any, Any]
#: A tree grows with the guards rows share; past this many nodes the list is walked as
#: rows (a tree of one branch per row).
DECISION_MAX_NODES = 256


def _decided(made: dict[int, "Decision | HitIndex"], got: "tuple[Row, ...] | HitIndex") -> "Decision | HitIndex":
    """``got``'s decision tree (a :class:`HitIndex` stays one), made once per list."""
    if isinstance(got, HitIndex):
        return got
    tree = made.get(id(got))
    if tree is None:
        tree = made[id(got)] = _decision(got)
    return tree


def _decision(rows: tuple[Row, ...]) -> Decision:
    """The first row of ``rows`` whose guards all pass, found as the rows would find it,
    each guard asked at most once (issue 27: ``j_outermost`` stood in eight rows of a
    JSON body's ``}``, and was asked eight times).

    Sound because a step asks only what the rows would, minus the repeats: the next
    question is always the first guard not yet answered of the first row not yet
    refused (a row holding a guard already refused is passed over without asking its
    other guards, which the rows, walked as written, would ask first); a row's own
    guards are asked in its order; no action runs between two guards, so a guard asked
    again would answer the same (guards decide, they do not act; the differential tests
    hold this runner to the reference, which asks every row)."""
    nodes = [0]

    def build(left: list[tuple[tuple[Any, ...], tuple[Any, ...], str]]) -> Decision:
        nodes[0] += 1
        if nodes[0] > DECISION_MAX_NODES:
            return (None, (), "")  # (given up: the rows are chained below)
        if not left:
            return (None, (), "")
        guards, actions, dest = left[0]
        if not guards:
            return (None, actions, dest)
        g = guards[0]
        passed: list[tuple[tuple[Any, ...], tuple[Any, ...], str]] = []
        failed: list[tuple[tuple[Any, ...], tuple[Any, ...], str]] = []
        for gs, a, d in left:
            if any(x is g for x in gs):
                passed.append((tuple(x for x in gs if x is not g), a, d))
            else:
                passed.append((gs, a, d))
                failed.append((gs, a, d))
        return (g, build(passed), build(failed))

    if all(target is True for guards, _a, _d in rows for _g, target in guards):
        tree = build([(tuple(g for g, _t in guards), actions, dest) for guards, actions, dest in rows])
        if nodes[0] <= DECISION_MAX_NODES:
            return tree
    # (rows as a chain: each row's guards in turn, then the next row)
    out: Decision = (None, (), "")
    for guards, actions, dest in reversed(rows):
        node: Decision = (None, actions, dest)
        for g, target in reversed(guards):
            node = (g, node, out) if target is True else (g, out, node)
        out = node
    return out


def _callback(model: type, made: dict[str, Any], name: str) -> Any:
    """The model's guard or action ``name`` (looked up once per name)."""
    got = made.get(name)
    if got is None:
        got = made[name] = getattr(model, name)
    return got


def _shared_index(made: dict[tuple[int, int], HitIndex], index: tuple[int, int, dict[str, tuple[Row, ...]]],
                  named: list[Named], skip: int) -> HitIndex:
    """The :class:`HitIndex` of ``index`` (of the rows ``named``, their first ``skip`` left
    out), made once per index."""
    key = (id(index), skip)
    got = made.get(key)
    if got is None:
        got = made[key] = HitIndex(index[2], _dead_names(named, index)[skip:])
    return got


def _enter_run(model: type, actions: tuple[str, ...], loop: "GuardedLoop | None") -> Callable[[Context, str, int], int] | None:
    """A row's one action and the run of the first loop of the state it leads into, as
    one model method (``A_enter(s, i) -> j``: A at ``s[i]``, then the loop's run from
    ``i + 1``; where it stops), if the model offers it. Only an action that holds
    nothing and asks nothing of the runner protocol may offer one: the runner checks
    neither between the two."""
    if loop is None or len(actions) != 1:
        return None
    enter: Callable[[Context, str, int], int] | None = getattr(model, actions[0] + "_enter", None)
    return enter


def _dead_names(named: list[tuple[tuple[str, ...], tuple[str, ...], str]],
                index: tuple[int, int, dict[str, tuple[Row, ...]]]) -> list[tuple[str, ...]]:
    """The guards' names of the rows a dead tag may fire (``by_key[""]``: those before
    and after the hit rows), in their order."""
    start, end, _full = index
    return [g for g, _a, _d in named[:start] + named[end:]]


def _hit_index(named: list[tuple[tuple[str, ...], tuple[str, ...], str]],
               rows: tuple[Row, ...]) -> tuple[int, int, dict[str, tuple[Row, ...]]] | None:
    """The longest run of rows whose first guard is a hit guard, indexed by its key."""
    hit = [bool(g) and (g[0].startswith("hit:") or g[0].startswith("fork:")) for g, _a, _d in named]
    if sum(hit) < 4:
        return None
    start = hit.index(True)
    end = start
    while end < len(hit) and hit[end]:
        end += 1
    if any(hit[end:]):
        return None
    by_key: dict[str, list[Row]] = {}
    for k in range(start, end):
        # (the row's first guard is ``hit_key(ch) == key``: looking the key up decided it)
        guards, actions, dest = rows[k]
        by_key.setdefault(named[k][0][0], []).append((guards[1:], actions, dest))
    # Each key's whole row list is built here, once, not at every step.
    before, after = rows[:start], rows[end:]
    full = {key: before + tuple(r) + after for key, r in by_key.items()}
    full[""] = before + after
    return start, end, full


@dataclass(frozen=True)
class GuardedLoop:
    """A guarded self-loop tried first on every character of its state.

    When its guards pass it fires whatever the character's class, so the runner tests
    it before (and instead of) looking the class up. With *run forms* on the model (a
    guard ``g`` with ``g_run(s, i) -> j``: the end of the longest run each character of
    which ``g`` would accept in turn; each action ``a`` with ``a_run(s, i, j)``), the
    runner takes the whole run in one call, as bulk rules do for unguarded loops.
    """

    guards: tuple[Guard, ...]
    actions: tuple[Callable[[Context, str], None], ...]
    dest: str
    guard_run: Callable[[Context, str, int], int] | None = None
    action_runs: tuple[Callable[[Context, str, int, int], int], ...] = ()


def _first_loop(
    state: str,
    by_trigger: dict[str, tuple[Row, ...]],
    named: dict[str, list[tuple[tuple[str, ...], tuple[str, ...], str]]],
    char_triggers: tuple[str, ...],
    model: type,
) -> GuardedLoop | None:
    """The guarded self-loop tried first on every character trigger of ``state``."""
    firsts = set()
    for trig in char_triggers:
        rows = by_trigger.get(trig)
        if not rows:
            return None
        firsts.add((rows[0], tuple(map(tuple, named[trig][0][:2]))))
    if len(firsts) != 1:
        return None
    (guards, actions, dest), (guard_names, action_names) = firsts.pop()
    if not guards or dest != state:
        return None
    loop = GuardedLoop(guards, actions, dest)
    if len(guards) == 1 and guards[0][1]:
        guard_run = getattr(model, guard_names[0] + "_run", None)
        action_runs = [getattr(model, a + "_run", None) for a in action_names]
        if guard_run is not None and all(r is not None for r in action_runs):
            loop = GuardedLoop(guards, actions, dest, guard_run, tuple(r for r in action_runs if r is not None))
    return loop


def _bulk_rule(
    state: str,
    by_trigger: dict[str, list[tuple[tuple[str, ...], tuple[str, ...], str]]],
    char_triggers: tuple[str, ...],
    classes: dict[str, str],
    model: type,
    run_forms: dict[str, str],
) -> BulkRule | None:
    other = by_trigger.get(OTHER, [])
    if len(other) != 1:
        return _class_loop(state, by_trigger, char_triggers, classes, model, run_forms)
    guards, actions, dest = other[0]
    if guards or dest != state or len(actions) != 1 or actions[0] not in run_forms:
        return _class_loop(state, by_trigger, char_triggers, classes, model, run_forms)
    action = actions[0]
    stops: list[str] = []
    marker_aware = False
    for trig in char_triggers:
        if trig == OTHER:
            continue
        rows = by_trigger.get(trig, [])
        if len(rows) == 1 and rows[0] == ((), (action,), state):
            continue  # same self-loop: part of the run
        if len(rows) == 1 and rows[0] == ((), ("tag_begin",), "maybe_tag"):
            # A start class: the scan looks for where a marker of the state's context
            # may begin instead of stopping at every such character.
            marker_aware = True
            continue
        stops.append(classes[trig])
    return BulkRule("".join(stops), getattr(model, run_forms[action]), marker_aware)


def _class_loop(
    state: str,
    by_trigger: dict[str, list[tuple[tuple[str, ...], tuple[str, ...], str]]],
    char_triggers: tuple[str, ...],
    classes: dict[str, str],
    model: type,
    run_forms: dict[str, str],
) -> BulkRule | None:
    """A state that loops on a few classes only, with one action that has a run form
    (``after_close``: ``hold_ws`` on whitespace; a position: ``hold_char``): runs of
    those characters are taken whole (issue 12, finding 9: they were stepped one by one)."""
    loops = {t: rows[0][1][0] for t, rows in by_trigger.items()
             if t in char_triggers and t != OTHER and len(rows) == 1 and not rows[0][0]
             and rows[0][2] == state and len(rows[0][1]) == 1 and rows[0][1][0] in run_forms}
    actions = set(loops.values())
    if len(actions) != 1:
        return None
    action = actions.pop()
    chars = "".join(classes[t] for t in loops)
    return BulkRule("", getattr(model, run_forms[action]), False, chars)


class CompiledRunner:
    """Drives a :class:`Context` from the compiled table."""

    def __init__(self, compiled: CompiledMachine, ctx: Context, whole: WholeBlocks | None = None) -> None:
        self.c = compiled
        self.ctx = ctx
        #: What :meth:`feed_events` hands a chunk that is not a ``str`` to, and shows
        #: what raised in it to before it propagates (the sieve sets both).
        self.not_str: Callable[[object], list[Event]] = _not_str
        self.failed: Callable[[BaseException], None] = _failed_nothing
        #: Set by the sieve when it closes or fails: :meth:`feed_events` hands every
        #: chunk to ``not_str`` from then on (a ``feed`` bound while it was open raises
        #: as the sieve's own does).
        self.shut = False
        #: ``max_block_chars`` (fixed for the sieve), read on every feed
        self._limit = ctx.cfg.max_block_chars
        ctx.state = compiled.initial
        self.base = 0
        #: What the runner tries first in each state (``CompiledMachine.plans``), with the
        #: whole-block readers (``callsieve.regions.whole``, issue 27) put before the state
        #: run of each state they are entered in: a block whose text up to its close is in
        #: the chunk and plainly simple is decided there in one step.
        self._plans = compiled.plans
        self.whole = whole
        #: ``maybe_tag``'s first loop, where it has run forms (the held tag grows).
        self._held_loop: GuardedLoop | None = compiled.direct_loops.get("maybe_tag")
        held = self._held_loop
        #: the rows a completed held tag fires by its key (``CompiledMachine.fires``)
        self._held_fires = compiled.fires.get("maybe_tag")
        #: That loop is the held tag's own (``tag_viable`` → ``tag_push``, back to
        #: ``maybe_tag``): :meth:`feed_events` may then grow the tag without it.
        self._held_plain = held is not None and held.dest == "maybe_tag" \
            and getattr(held.guard_run, "__name__", "") == "tag_viable_run" \
            and [getattr(a, "__name__", "") for a in held.action_runs] == ["tag_push_run"]
        #: Where the text state's scan stops at one of these, ``read_text`` is asked
        #: first: a block opener there, and the whole block after it, decided at once.
        self._whole_text: Callable[[Context, str, int], int] | None = None
        self._whole_starts = ""
        if whole is not None and whole.opener_starts:
            self._whole_text = whole.read_text
            self._whole_starts = whole.opener_starts
        if whole is not None and (whole.entries or whole.json_run is not None or whole.capture_run is not None):
            plans = dict(compiled.plans)
            for state in whole.entries:
                if state in plans:
                    form, rule = plans[state]
                    plans[state] = (_whole_first(whole.read, form), rule)
            json_run = whole.json_run
            if json_run is not None:
                # The JSON body's structure in runs (``callsieve.regions.json_run``).
                for state in JSON_RUN_STATES:
                    form, rule = plans[state]
                    plans[state] = (_whole_first(json_run.run, form), rule)
            capture_run = whole.capture_run
            if capture_run is not None and "in_capture" in plans:
                # A capture's characters in one run (``callsieve.regions.capture``).
                form, rule = plans["in_capture"]
                plans["in_capture"] = (_whole_first(capture_run.run, form), rule)
            self._plans = plans
        # The scanner used last, and for which (state, scope) it was chosen (the scope
        # decides a state's matcher, ``ModelBase.matcher``).
        self._sc_state = ""
        self._sc_scope = ""
        self._sc: Scanner = _scan_nothing
        self._sc_run: Callable[[Context, str, int, int], int] = _run_nothing
        #: The lane of the last run (``_LANES``): 0 none, else which of the model's
        #: chunk readers takes a whole chunk of it (a streamed value's, a JSON string's).
        self._sc_lane = 0
        self._sc_cache: dict[tuple[str, str], Scanner] = {}
        #: The states whose run is a JSON string's (read by ``j_str_chunk`` when a chunk
        #: of one comes where the last run was another state's).
        #: (Only where the JSON body's structure is read in runs: its rows are the ones
        #: ``callsieve.regions.json_run`` checked.)
        self._str_states = frozenset(
            state for state, rule in compiled.bulk.items()
            if _LANES.get(getattr(rule.run, "__name__", "")) == _LANE_JSON_STRING
        ) if whole is not None and whole.json_run is not None else frozenset()
        #: ``search`` for any character that stops the prose run (a start character of
        #: the text state's markers, a fence or span character), when the text state's
        #: run action is the plain one: a chunk it finds nothing in is one run of
        #: visible text (``Sieve.feed``'s fast path). Otherwise it finds something in
        #: every chunk (the empty pattern), so the fast path is never taken.
        self.text_quick: Callable[[str], object] = re.compile("").search
        #: ``text_quick`` names (``matcher.WORD_TAIL``) where an anchored word marker's
        #: beginning runs off a chunk's end (``… f``, ``… fun``): the fast path then
        #: gives the text before it and keeps the word back for the next chunk
        #: (``word_held``), as the table would hold it, without the table's steps (a
        #: word like ``for`` cut after its ``f`` is common in prose fed in pieces).
        self.holds_words = False
        self.word_held = ""
        rule = compiled.bulk.get("text")
        if rule is not None and not rule.loop_chars and getattr(rule.run, "__name__", "") == "text_run" \
                and "text" in ctx.cfg.matchers:
            matcher = ctx.cfg.matchers["text"]
            stops = rule.stop_chars + (matcher.symbol_starts if rule.marker_aware else "")
            quick: Callable[[str], object] = re.compile("[" + re.escape(stops) + "]").search if stops else (lambda s: None)
            self.text_quick = quick
            words = matcher.word_starts if rule.marker_aware else ""
            if words and matcher.words_anchored:
                # Anchored literal words (``functools``) begin only after no word
                # character: one search finds a symbol start character, such a word, or
                # the start of one running off the chunk's end (``of``'s ``f`` is none).
                after = ["(?<=[" + re.escape(stops) + "])"] if stops else []
                self.text_quick = re.compile("[" + re.escape(stops + words) + "](?:" + "|".join(after + [matcher.word_quick])
                                             + ")").search
                self.holds_words = True
            elif words:
                # A word start character (``functools``'s ``f``) is frequent in prose: a
                # chunk holding one is still one run of text when the text state's own
                # scan finds nothing in it (no marker, no tail that may become one).
                has_word = re.compile("[" + re.escape(words) + "]").search
                scan = compiled.scanner("text", matcher)

                def quick_words(s: str) -> object:
                    m = quick(s)
                    if m is not None or has_word(s) is None:
                        return m
                    return None if scan(s, 0) == len(s) else s
                self.text_quick = quick_words
        #: What ``_run`` reads on every call, in one tuple (one load and an unpack
        #: rather than a load each: after a tag ends in a token-sized chunk, ``_run``
        #: reads the few characters left, so its setup is a good part of its cost).
        self._run_locals: tuple[Context, CompiledMachine,
                                dict[str, tuple[Callable[[Context, str, int], int] | None, BulkRule | None]],
                                Callable[[Context, str, int], int] | None, str,
                                dict[str, GuardedLoop], dict[str, str]] = (
            ctx, compiled, self._plans, self._whole_text, self._whole_starts, compiled.first_loops, compiled.class_of)

    # -- scanning
    def _scanner(self, state: str, rule: BulkRule) -> Scanner:
        ctx = self.ctx
        # (state, scope) decides the matcher (``ModelBase.matcher``): kept per runner, so
        # markup-dense input that changes state at every few characters finds its
        # scanner with one lookup.
        key = (state, ctx.scope)
        sc = self._sc_cache.get(key)
        if sc is None:
            sc = self._sc_cache[key] = self.c.scanner(state, ctx.matcher(state) if rule.marker_aware else None)
        self._sc_state, self._sc_scope, self._sc, self._sc_run = state, ctx.scope, sc, rule.run
        self._sc_lane = _LANES.get(getattr(rule.run, "__name__", ""), 0)
        return sc

    # -- stepping
    def _step(self, trigger: str, ch: str, after_loop: bool = False) -> None:
        """Fire the first row of (state, trigger) whose guards pass. ``after_loop``: the
        runner has just seen the state's first loop fail on ``ch``; its row is skipped."""
        ctx = self.ctx
        state = ctx.state
        c = self.c
        got = (c.decide_rest if after_loop else c.decide)[state].get(trigger)
        if got is None:
            got = c.decision(state, trigger, after_loop)
        if isinstance(got, tuple):
            # The rows' decision tree: a guard at each branch, asked once.
            node = got
            g = node[0]
            while g is not None:
                node = node[1] if g(ctx, ch) == True else node[2]  # noqa: E712 (as the rows compare)
                g = node[0]
            if not node[2]:
                raise AssertionError(f"no transition from {ctx.state} on {trigger}")  # validate() prevents this
            for a in node[1]:
                a(ctx, ch)
            ctx.state = node[2]
            return
        else:
            # Only the held tag's key's rows can fire; a dead tag (no key) only its
            # origin's return rows (a complete one fires its hit row before those).
            key = ctx.hit_key(ch)
            by_key = got.by_key
            if key:
                rows = by_key.get(key) or by_key[""]
            else:
                rows = got.by_origin.get(ctx.origin, got.other)
        for guards, actions, dest in rows:
            for g, target in guards:
                if g(ctx, ch) != target:
                    break
            else:
                for a in actions:
                    a(ctx, ch)
                ctx.state = dest
                return
        raise AssertionError(f"no transition from {ctx.state} on {trigger}")  # validate() prevents this

    def feed(self, s: str) -> None:
        # Fast path: the chunk starts with a run of the state the last chunk ended in
        # (most chunks of prose, reasoning or a value are all one run): one scan, one
        # run action, no table lookup.
        if self.word_held:
            # (the text state, nothing pending, when it was kept back: read from there)
            s = self.word_held + s
            self.word_held = ""
        ctx = self.ctx
        n = len(s)
        if n and ctx.state == self._sc_state and ctx.scope is self._sc_scope:
            j = self._sc(s, 0)
            if j:
                i = self._sc_run(ctx, s, 0, j)
                if ctx.block is not None and ctx.over_limit():
                    ctx.pos = self.base + i
                    self._step(OVERFLOW, "")
                if i < n:
                    self._run(s, self.base, i, True)
            else:
                self._run(s, self.base, 0, True)
        elif n:
            loop = self._held_loop
            b = ctx.block
            if loop is not None and ctx.state == "maybe_tag" and (b is None or b.spilled
                                                                  or b.raw_len <= ctx.cfg.max_block_chars):
                # A tag held from the last chunk, and this whole chunk still a prefix of a
                # marker (token-sized chunks cut most tags): the held tag's loop takes it
                # in one run, as ``_run`` would, without its loop (issue 27).
                ctx.pos = self.base
                if loop.guard_run is not None and loop.guard_run(ctx, s, 0) == n:
                    for run in loop.action_runs:
                        run(ctx, s, 0, n)
                    ctx.state = loop.dest
                    self.base += n
                    return
            self._run(s, self.base, 0, False)
        self.base += n

    def _run(self, s: str, base: int, i: int = 0, stopped: bool = False, asked: bool = False) -> None:
        """Consume ``s[i:]``. ``stopped``: a scan already stopped at ``i``, so step it.
        ``asked``: the state's run has just stopped at ``i`` (its bulk rule goes on)."""
        # (Only what most iterations read is a local: fed one character at a time, this
        # runs once per character, and each local costs as much as one use.)
        ctx, c, plans, whole_text, whole_starts, first_loops, class_of = self._run_locals
        step = self._step
        # (``ctx.over_limit()``, read inline on the hot path: a block not spilled that
        # holds more than the limit)
        limit = self._limit
        n = len(s)
        while i < n:
            if stopped:
                stopped = False
            else:
                state = ctx.state
                form, rule = plans[state]
                if asked:
                    asked = False
                elif form is not None:
                    # A state run first; where it stops, the bulk rule of the state it
                    # ended in (or a step) goes on: a run is not asked twice in a row.
                    ctx.pos = base + i
                    j = form(ctx, s, i)
                    if j > i:
                        i = j
                        b = ctx.block
                        if b is not None and not b.spilled and b.raw_len > limit:
                            ctx.pos = base + i
                            step(OVERFLOW, "")
                            continue
                        if i >= n:
                            break
                    if ctx.run_stopped:
                        ctx.run_stopped = False
                        stopped = True
                        continue  # (the run asks for s[i] to be stepped)
                    if ctx.state != state:
                        continue  # (in another state now: its own state run, if it has one)
                if rule is not None:
                    if rule.loop_chars:
                        loop_set = rule.loop_set
                        if s[i] not in loop_set:
                            rule = None  # (the scan would stop here: stepped at once)
                        elif i + 1 == n or s[i + 1] not in loop_set:
                            j = i + 1  # a run of one (a newline between markers): no scan
                        else:
                            j = self._scanner(state, rule)(s, i)
                    elif s[i] in rule.stop_set:
                        rule = None  # (the scan would stop here: stepped at once)
                    elif state == self._sc_state and ctx.scope is self._sc_scope:
                        j = self._sc(s, i)
                    else:
                        j = self._scanner(state, rule)(s, i)
                if rule is not None:
                    if j > i:
                        i = rule.run(ctx, s, i, j)
                        b = ctx.block
                        if b is not None and not b.spilled and b.raw_len > limit:
                            ctx.pos = base + i
                            step(OVERFLOW, "")
                        if i >= n:
                            break
                        # The scan stopped here: step this character (always exact).
                    if (whole_text is not None and state == "text" and s[i] in whole_starts and n - i > WHOLE_MIN
                            and ctx.state == "text"):
                        # A block opener may begin here: the whole block, if it is in the
                        # chunk and plainly simple, is decided at once (issue 27).
                        ctx.pos = base + i
                        j = whole_text(ctx, s, i)
                        if j > i:
                            i = j
                            if i >= n:
                                break
                            continue
            ch = s[i]
            ctx.pos = base + i
            state = ctx.state
            loop = first_loops.get(state)
            entered = False
            if loop is None:
                trigger = class_of.get(ch, OTHER)
                one = c.simple[state].get(trigger)
                if one is None:
                    step(trigger, ch)
                elif one[3] is not None:
                    # The row's action and the run of the loop it leads into in one call
                    # (``tag_begin_enter``: a start character, and the tag held from it).
                    j = one[3](ctx, s, i)
                    ctx.state = one[1]
                    loop = one[2]
                    if j >= n:
                        break
                    i = j
                    ch = s[i]
                    ctx.pos = base + i
                    entered = True
                else:
                    # (one unguarded row: what ``_step`` would fire, without its call)
                    for a in one[0]:
                        a(ctx, ch)
                    ctx.state = one[1]
                    # Into a state whose first loop has a run form and nothing else to try
                    # first (no state run, no bulk rule: a start character into
                    # ``maybe_tag``), that loop's run goes on at the next character.
                    loop = one[2]
                if loop is not None and not entered:
                    b = ctx.block
                    if ctx.redo or ctx.pushback or i + 1 >= n or (b is not None and not b.spilled and b.raw_len > limit):
                        loop = None  # (the runner protocol first, below)
                    else:
                        i += 1
                        ch = s[i]
                        ctx.pos = base + i
            if loop is None:
                pass
            elif loop.guard_run is not None:
                # The loop's run form: every character up to j passes, s[j] does not.
                j = i if entered else loop.guard_run(ctx, s, i)
                if j > i:
                    for run in loop.action_runs:
                        run(ctx, s, i, j)
                    ctx.state = loop.dest
                    i = j
                    b = ctx.block
                    if b is not None and not b.spilled and b.raw_len > limit:
                        ctx.pos = base + i
                        step(OVERFLOW, "")
                        continue
                    if i >= n:
                        break
                    ch = s[i]
                    ctx.pos = base + i
                # The character that ends the loop's run; where it completes a marker whose
                # first row has no guard left (its hit guard is the key, ``_hit_index``),
                # that row fires, as ``_step`` would, without its call.
                by_key = c.fires.get(ctx.state)
                fire = by_key.get(ctx.hit_key(ch)) if by_key is not None else None
                if fire is None:
                    step(class_of.get(ch, OTHER), ch, True)
                else:
                    for a in fire[0]:
                        a(ctx, ch)
                    ctx.state = fire[1]
            else:
                # The state's first transition on every class is this guarded self-loop:
                # fire it while its guards pass (what _step would do, minus the lookups),
                # and hand anything unusual to the generic bookkeeping below.
                guards, actions, dest = loop.guards, loop.actions, loop.dest
                while True:
                    if not _passes(guards, ctx, ch):
                        step(class_of.get(ch, OTHER), ch, True)
                        break
                    for a in actions:
                        a(ctx, ch)
                    ctx.state = dest
                    if ctx.redo or ctx.pushback or i + 1 >= n or (ctx.block is not None and ctx.over_limit()):
                        break
                    i += 1
                    ch = s[i]
                    ctx.pos = base + i
            # The runner protocol after a step (``ctx.settle``), its common case inline:
            # nothing to read again and no block past its limit is the next character.
            if ctx.redo or ctx.pushback:
                i = ctx.settle(self._run, step, base, i)
            else:
                b = ctx.block
                if b is not None and not b.spilled and b.raw_len > limit:
                    i = ctx.settle(self._run, step, base, i)
                else:
                    i += 1

    def eof(self) -> None:
        if self.word_held:
            self.feed("")
        ctx = self.ctx
        ctx.pos = self.base
        self._step(EOF_TRIGGER, "")
        while ctx.pushback:
            # What the end of the stream gave back to be read again (a block read on past
            # where it failed, whose close never came): read it, then the end again.
            pb, ctx.pushback = ctx.pushback, ""
            self._run(pb, self.base - len(pb))
            ctx.pos = self.base
            self._step(EOF_TRIGGER, "")

    def feed_events(self, chunk: object) -> list[Event]:
        """``Sieve.feed`` for an open sieve given a ``str``: :meth:`feed`, then the events
        decided (what the sieve's drain does), in one call from the sieve (issue 27:
        token-sized chunks paid for several), and, in the compiled build, native. The
        common chunks of a token stream are read here without ``feed``: a chunk of
        plain prose, one that grows or ends a held tag, one that continues the last
        run, and one the state's run takes.

        An open sieve of this runner calls it as its own ``feed`` (issue 27: one
        call per chunk, no frame of the sieve's around it): what is not a ``str``, and
        every chunk once the sieve is ``shut``, is handed to ``not_str`` (the sieve's
        own path), and whatever raises is shown to ``failed`` (the sieve closes, a
        MalformedBlockError gets its events) first."""
        if type(chunk) is not str or self.shut:
            return self.not_str(chunk)
        try:
            ctx = self.ctx
            n = len(chunk)
            state = ctx.state
            if state == "text" and n and ctx.block is None and not ctx.text_buf and not ctx.out and not ctx.dropped \
                    and not ctx.reason_raw:
                # A chunk of prose that holds no character the text state stops at, with
                # nothing pending, is one Text event: what ``feed`` and the drain would make
                # of it, without their calls (the differential tests compare both).
                held = self.word_held
                s = held + chunk if held else chunk
                m = self.text_quick(s)
                k = -1
                if m is None:
                    k = len(s)
                    self.word_held = ""
                elif self.holds_words and isinstance(m, re.Match) and m.lastgroup is not None:
                    # an anchored word's beginning at the end, nothing before it: held
                    k = m.start()
                    self.word_held = s[k:]
                    if not k:
                        return []
                    s = s[:k]
                if k >= 0:
                    self.base += k
                    # ctx._saw(s), inlined but for its trim, which it does when due
                    ctx.recent.append(s)
                    ctx.recent_len += k
                    if ctx.recent_len > SAW_TRIM_AT:
                        ctx.trim_recent()
                    return [Text(s, s)]
            if not n or self.word_held:
                self.feed(chunk)
            elif state == "maybe_tag":
                # A tag held from the last chunk (token-sized chunks cut most tags): the
                # held loop's guard and action (``tag_viable_run``, ``tag_push_run``) inline.
                m = ctx.tag_matcher
                b = ctx.block
                if m is not None and self._held_plain and (b is None or b.spilled or b.raw_len <= self._limit):
                    tag = ctx.tag
                    ends = m._search_ends
                    complete = None
                    e: Any = False  # (not searched)
                    if ends is not None:
                        e = ends(chunk)
                        if e is None:
                            # Whether ``tag + chunk`` is, as the matcher's memo already
                            # knows, a prefix of a marker, the chunk holding no end
                            # character (so no prefix of it is complete): ``tag_end`` would
                            # say (n, VIABLE). Most chunks of a token stream in markup: one
                            # search, one lookup.
                            grown = tag + chunk
                            got = m._memo.get(grown)
                            if got is not None and got[0] == VIABLE:
                                # The whole chunk still a prefix of a marker: it grows the
                                # tag and decides nothing (nothing is pending between
                                # feeds: every call flushes below).
                                ctx.tag = grown
                                ctx._tag_version += 1
                                self.base += n
                                return []
                        else:
                            # The tag up to the chunk's first end character a marker the
                            # memo knows complete: ``tag_end``'s first question, and its
                            # answer (every shorter prefix of a marker is viable). Most
                            # tags' ends.
                            p = e.end()
                            got = m._memo.get(tag + chunk[:p])
                            if got is not None and got[0] == COMPLETE:
                                complete = got
                    if complete is not None:
                        j = p - 1
                    else:
                        # (what was searched for is not searched again)
                        ctx.pos = self.base
                        j = m.tag_end(tag, chunk, 0, e)[0]
                        if j == n:
                            ctx.tag = tag + chunk
                            ctx._tag_version += 1
                            self.base += n
                            return []
                    if j:
                        ctx.tag = tag + chunk[:j]
                        ctx._tag_version += 1
                    # The tag ends at chunk[j] (complete with it, or dead): what ``_run``'s
                    # loop does there, without its first round: the row its key fires
                    # (``fires``), or the step after the loop failed, then the runner
                    # protocol, then ``_run`` for the rest of the chunk.
                    ch = chunk[j]
                    base = self.base
                    ctx.pos = base + j
                    fires = self._held_fires
                    if fires is None:
                        fire = None
                    else:
                        hit = complete[1] if complete is not None else None
                        if hit is not None and not hit.entry.anchor and (b is None or b.same is None):
                            # (``hit_key``'s answer, as it would cache it: the marker
                            # complete, with no anchor or back-reference to ask about)
                            ctx._cls = complete
                            ctx._cls_version = ctx._tag_version
                            ctx._cls_ch = ch
                            key = ctx._cls_key = hit.entry.key
                        else:
                            key = ctx.hit_key(ch)
                        fire = fires.get(key)
                    if fire is None:
                        self._step(self.c.class_of.get(ch, OTHER), ch, True)
                    else:
                        for a in fire[0]:
                            a(ctx, ch)
                        ctx.state = fire[1]
                    b = ctx.block
                    if ctx.redo or ctx.pushback or (b is not None and not b.spilled and b.raw_len > self._limit):
                        j = ctx.settle(self._run, self._step, base, j)
                    else:
                        j += 1
                    if j < n:
                        self._run(chunk, base, j)
                    self.base = base + n
                else:
                    self.feed(chunk)
            elif state == self._sc_state and ctx.scope is self._sc_scope:
                # ``feed``'s first path, inline (a chunk that continues the last run: most
                # chunks of a value), one call fewer a feed
                j = self._sc(chunk, 0)
                lane = self._sc_lane
                if j == n and lane and not ctx.delta_buf and not ctx.out and not ctx.text_buf and not ctx.reason_raw \
                        and not ctx.dropped:
                    # The whole chunk is the run's, and nothing is pending: a streamed
                    # value's or a JSON string's chunk is read by the model's chunk reader
                    # (its one fragment, the feed's one event), or, where it is not that
                    # plain, by the run below (issue 27).
                    piece = ctx.value_chunk(chunk) if lane == _LANE_VALUE else ctx.j_str_chunk(chunk)
                    if piece is not None:
                        self.base += n
                        return [ToolCallDelta(ctx.delta_index, piece)] if piece else []
                if j:
                    i = self._sc_run(ctx, chunk, 0, j)
                    b = ctx.block
                    if b is not None and not b.spilled and b.raw_len > self._limit:
                        ctx.pos = self.base + i
                        self._step(OVERFLOW, "")
                    if i < n:
                        self._run(chunk, self.base, i, True)
                else:
                    self._run(chunk, self.base, 0, True)
                self.base += n
            else:
                if state in self._str_states and '"' not in chunk and "\\" not in chunk and not ctx.delta_buf \
                        and not ctx.out and not ctx.text_buf and not ctx.reason_raw and not ctx.dropped:
                    # A JSON string's chunk (its own run, ``j_str_chunk``), as above; one
                    # that ends the string or escapes (what ``j_str_chunk`` refuses first)
                    # goes to the state's run at once.
                    piece = ctx.j_str_chunk(chunk)
                    if piece is not None:
                        self.base += n
                        return [ToolCallDelta(ctx.delta_index, piece)] if piece else []
                form = self._plans[state][0]
                if form is None:
                    self.feed(chunk)
                else:
                    # ``_run``'s first question, asked here: the state's run (a JSON
                    # string's chunk, ...), which mostly takes the whole chunk; then
                    # ``_run`` goes on from where it stopped as it would have.
                    ctx.pos = self.base
                    j = form(ctx, chunk, 0)
                    b = ctx.block
                    if j > 0 and b is not None and not b.spilled and b.raw_len > self._limit:
                        ctx.pos = self.base + j
                        self._step(OVERFLOW, "")
                        if j < n:
                            self._run(chunk, self.base, j)
                    elif j < n:
                        if ctx.run_stopped:
                            ctx.run_stopped = False
                            self._run(chunk, self.base, j, True)
                        else:
                            self._run(chunk, self.base, j, False, ctx.state == state)
                    self.base += n
            buf = ctx.delta_buf
            if buf:
                if ctx.text_buf or ctx.reason_raw or ctx.dropped:
                    ctx.flush()
                else:
                    # (``flush`` when only an argument fragment is pending: a streamed value's
                    # chunk, mostly one piece, and mostly the feed's only event)
                    ctx.delta_buf = []
                    s = buf[0] if len(buf) == 1 else "".join(buf)
                    if s:
                        out = ctx.out
                        if not out:
                            return [ToolCallDelta(ctx.delta_index, s)]
                        out.append(ToolCallDelta(ctx.delta_index, s))
            elif ctx.text_buf or ctx.reason_raw or ctx.dropped:
                ctx.flush()
            out = ctx.out
            if not out:
                return []
            ctx.out = []
            return out

        except BaseException as e:
            self.failed(e)
            raise


def _not_str(chunk: object) -> list[Event]:
    raise TypeError(f"feed() takes str, not {type(chunk).__name__}")


def _failed_nothing(e: BaseException) -> None:
    return None


#: The run actions whose whole chunks a model method reads in one call, with nothing
#: pending (``CompiledRunner.feed_events``): a streamed raw value's
#: (``ValueModel.value_chunk``) and a JSON string's (``JsonBodyExtras.j_str_chunk``).
_LANE_VALUE = 1
_LANE_JSON_STRING = 2
_LANES: dict[str, int] = {"value_run": _LANE_VALUE, "j_str_run": _LANE_JSON_STRING}


def _whole_first(read: Callable[[Context, str, int], int],
                 form: Callable[[Context, str, int], int] | None) -> Callable[[Context, str, int], int]:
    """A state's run with a whole-block reader tried first: where the reader decides
    nothing, the state's own run (if any) goes on from the same place."""
    if form is None:
        return read

    def run(ctx: Context, s: str, i: int) -> int:
        j = read(ctx, s, i)
        return j if j > i else form(ctx, s, i)
    return run


def _passes(guards: tuple[Guard, ...], ctx: Context, ch: str) -> bool:
    for g, target in guards:
        if g(ctx, ch) != target:
            return False
    return True


def _scan_nothing(s: str, i: int) -> int:
    return i


def _run_nothing(ctx: Context, s: str, i: int, j: int) -> int:
    return i


def _is_word(c: str) -> bool:
    """What a marker anchored ``word`` may not follow (``TagModel.anchored``)."""
    return c.isalnum() or c == "_"


def _make_scanner(rule: BulkRule, matcher: Matcher | None) -> Scanner:
    if rule.loop_chars:
        search_out = re.compile("[^" + re.escape(rule.loop_chars) + "]").search

        def scan_loop(s: str, i: int) -> int:
            m = search_out(s, i)
            return m.start() if m else len(s)
        return scan_loop
    if matcher is not None:
        pattern = matcher.scan_pattern(rule.stop_chars)
    else:
        pattern = "[" + re.escape(rule.stop_chars) + "]" if rule.stop_chars else ""
    if not pattern:
        return lambda s, i: len(s)
    search_any = re.compile(pattern).search
    if matcher is None or matcher.entries == ():
        def scan(s: str, i: int) -> int:
            m = search_any(s, i)
            return m.start() if m else len(s)
        return scan
    tail_viable = matcher.tail_viable
    starts = matcher.start_chars
    exact_tail = matcher.exact_tail
    prefix_tail = matcher.prefix_tail
    # Start characters that are word characters (``functools``) are frequent in prose:
    # their markers are searched for whole (a literal prefix), never by the character.
    symbols = matcher.symbol_starts
    first = "<" if "<" in symbols else symbols[:1]
    rare = symbols.replace(first, "") if first else ""
    stops_only = "[" + re.escape(rule.stop_chars) + "]" if rule.stop_chars else "(?!)"
    if symbols:
        search_any = re.compile(matcher.scan_pattern(rule.stop_chars, symbols)).search
        # Chunks holding no rare start character (``＜`` is rare; so is ``[`` in most
        # prose) are scanned with a pattern whose only start character is the common
        # one: a literal prefix, which ``re`` finds several times faster than a class.
        search_first = re.compile(matcher.scan_pattern(rule.stop_chars, first)).search
    else:
        search_any = search_first = re.compile(stops_only).search
    search_word = matcher.word_finder()
    words_anchored = matcher.words_anchored
    word_starts = matcher.word_starts
    # (the start characters whose last occurrence may begin a tail)
    tail_starts = symbols if words_anchored else starts
    rare_one = rare if len(rare) == 1 else ""  # one rare start character: test with `in`
    has_rare = re.compile("[" + re.escape(rare) + "]" if rare else "(?!)").search
    # A short chunk with no stop and no start character at all is one run.
    quick = re.compile("[" + re.escape(rule.stop_chars + starts) + "]").search

    # Whether the chunk holds a rare start character is asked once per chunk, not once
    # per scan: a chunk fed whole is scanned again after every stop, and asking the
    # whole chunk each time made stop-dense input quadratic (the hostile "fences" input).
    # So is where the next word marker stands (one search per chunk and per marker
    # passed, not per scan). (One tuple in one slot: scanners are shared by every sieve
    # of a machine, and a tuple is replaced whole, so a sieve in another thread never
    # reads a mixed pair.)
    last: list[tuple[Any, bool]] = [(None, False)]
    last_word: list[tuple[Any, int, int]] = [(None, 0, 0)]

    def next_word(s: str, i: int) -> int:
        """Where the first word marker at or after ``i`` begins (``len(s)``: none)."""
        got = last_word[0]
        if got[0] is s and got[1] <= i <= got[2]:
            return got[2]
        assert search_word is not None
        k = search_word(s, i, len(s))
        if k < 0:
            k = len(s)
        last_word[0] = (s, i, k)
        return k

    def scan_markers(s: str, i: int) -> int:
        n = len(s)
        if n - i <= QUICK_CHARS and quick(s, i) is None:
            return n
        seen = last[0]
        if seen[0] is s:
            rare_here = seen[1]
        else:
            rare_here = (rare_one in s) if rare_one else (has_rare(s) is not None)
            last[0] = (s, rare_here)
        if rare_here:
            m = search_any(s, i)
        else:
            m = search_first(s, i)
        j = m.start() if m else n
        if search_word is not None:
            w = next_word(s, i)
            if w < j:
                j = w
        if prefix_tail and i < j < n and s[j - 1] in starts:
            # (markers after a stray prefix are not in the scan pattern: stop on the
            # start character before what it found, which may be that prefix; stepping
            # it through the table is exact, and early is never wrong)
            j -= 1
        lo = n - MAX_TAG_CHARS
        if lo < i:
            lo = i
        if j > lo:
            if exact_tail:
                # Rule 2 does not hold here: the first start character whose tail may
                # still become a marker decides.
                for k in range(lo, j):
                    if s[k] in starts and tail_viable(s, k):
                        return k
                return j
            # A marker running off the end begins at the last occurrence of its own
            # start character (no marker continues with its own start character); a
            # literal word marker anchored ``word``, at the start of the chunk's last
            # word (``of``'s ``f`` begins no ``functools``).
            if words_anchored:
                k = n
                while k > lo and _is_word(s[k - 1]):
                    k -= 1
                if k < j and s[k] in word_starts and (k == 0 or not _is_word(s[k - 1])) and tail_viable(s, k):
                    j = k
            for c in tail_starts:
                k = s.rfind(c, lo)
                if 0 <= k < j:
                    if prefix_tail and k > lo and s[k - 1] in starts and tail_viable(s, k - 1):
                        j = k - 1  # a stray prefix (one start character) before that marker
                    elif tail_viable(s, k):
                        j = k
        return j
    return scan_markers
