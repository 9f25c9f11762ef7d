"""A composed declaration, and the checks it must pass before anything runs.

The vocabulary (``Transition``, ``StateDecl``, ``on``, ``but``, triggers) lives in
``callsieve.grammar.states``; this module holds the expanded result and validates it
against the model class: every (state, trigger) pair total, every callback present,
run forms present, no rank tie, every state reachable, no dead end.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property
from operator import attrgetter

from callsieve.grammar.errors import GrammarError
from callsieve.grammar.states import CLASSES, EOF_TRIGGER, OTHER, OVERFLOW, RUN_FORMS, StateDecl, Transition

__all__ = ["Declaration", "validate"]


@dataclass(frozen=True)
class Declaration:
    states: tuple[StateDecl, ...]
    transitions: tuple[Transition, ...]
    initial: str = "text"
    #: character class name → its characters (the base classes and any a start
    #: character of this machine needed); any other character is ``other``
    classes: dict[str, str] = field(default_factory=lambda: dict(CLASSES), compare=False, hash=False)
    #: per-character action → its run form (the core's and the regions')
    run_forms: dict[str, str] = field(default_factory=lambda: dict(RUN_FORMS), compare=False, hash=False)
    #: state → the method of its state run (``Region.state_runs``)
    state_runs: dict[str, str] = field(default_factory=dict, compare=False, hash=False)
    #: States a sieve may begin in besides ``initial`` (the first: where it begins by
    #: default: ``header_start`` where a prompt may have ended inside a message header,
    #: ``Header.at_start``; ``start`` where a block its own body opens is listened for).
    entries: tuple[str, ...] = ()

    @property
    def char_triggers(self) -> tuple[str, ...]:
        return tuple(self.classes) + (OTHER,)

    def class_of(self) -> dict[str, str]:
        return {ch: name for name, chars in self.classes.items() for ch in chars}

    def state_names(self) -> list[str]:
        return [s.name for s in self.states]

    def ordered(self) -> list[Transition]:
        """Transitions sorted by (source, trigger, rank): the order guards are tried in."""
        return list(self._ordered)

    @cached_property
    def _ordered(self) -> tuple[Transition, ...]:
        # (sorted once: validation, both runners and the diagrams each read the order,
        # some 41,000 rows with every dialect; the keys made by C-level maps, not a
        # Python function per row)
        order = {s.name: i for i, s in enumerate(self.states)}
        trig = {t: i for i, t in enumerate(self.char_triggers + (EOF_TRIGGER, OVERFLOW))}
        rows = self.transitions
        keys = list(zip(map(order.__getitem__, map(attrgetter("source"), rows)),
                        map(trig.__getitem__, map(attrgetter("trigger"), rows)), map(attrgetter("rank"), rows)))
        return tuple(rows[i] for i in sorted(range(len(rows)), key=keys.__getitem__))


#: A row by the names of its guards, actions and destination (the declaration's form).
Named = tuple[tuple[str, ...], tuple[str, ...], str]


def declared_rows(decl: Declaration) -> dict[str, dict[str, list[Named]]]:
    """state → trigger → the names of its rows (guards, actions, dest), in the order they
    are tried: exactly what ``transitions`` holds in ``events[trigger].transitions[state]``
    for the machine :func:`~callsieve.machine.build_machine` builds from ``decl`` (its
    rows added in ``decl.ordered()``; each trigger's event made at its first row, a
    state's list at its first row on that trigger), with the keys in that order too.
    Read from the declaration: the compiled runner and the diagrams never run that
    machine, and building it (some 41,000 rows with every dialect) cost more than all
    the rest of compiling.
    ``tests/test_composition.py`` holds the two equal."""
    names: dict[str, dict[str, list[Named]]] = {s: {} for s in decl.state_names()}
    first_seen: dict[str, int] = {}  # trigger → when its event was made
    source = trigger = ""
    rows: list[Named] = []
    for t in decl.ordered():  # (sorted by state and trigger: each pair's rows are one run)
        if t.trigger != trigger or t.source != source:
            source, trigger = t.source, t.trigger
            rows = names[source][trigger] = []
            first_seen.setdefault(trigger, len(first_seen))
        rows.append((t.guards, t.actions, t.dest))
    return {s: {k: by[k] for k in sorted(by, key=first_seen.__getitem__)} for s, by in names.items()}


def validate(decl: Declaration, model: type) -> None:
    """Raise :class:`GrammarError` naming the state, trigger or callback at fault."""
    names = set(decl.state_names())
    if len(names) != len(decl.states):
        raise GrammarError("a state is declared twice")
    if decl.initial not in names:
        raise GrammarError(f"initial state {decl.initial!r} is not declared")
    all_triggers = frozenset(decl.char_triggers + (EOF_TRIGGER, OVERFLOW))
    by_pair: dict[tuple[str, str], list[Transition]] = {}
    # (the callbacks of each distinct (guards, actions) checked once: some 41,000 rows
    # with every dialect name a few hundred callbacks; the rows come sorted by source
    # and trigger, so each pair's rows are one run)
    # (rows expanded from one rule share its guards and actions tuples: checked by the
    # tuples' identities, alive in the declaration while this runs)
    checked: set[tuple[int, int]] = set()
    pair: tuple[str, str] = ("", "")
    rows: list[Transition] = []
    for t in decl.ordered():
        if t.source not in names or t.dest not in names:
            missing = t.source if t.source not in names else t.dest
            raise GrammarError(f"transition {t.source} --{t.trigger}--> {t.dest}: unknown state {missing!r}")
        if t.trigger not in all_triggers:
            raise GrammarError(f"transition {t.source} --{t.trigger}--> {t.dest}: unknown trigger {t.trigger!r}")
        calls = (id(t.guards), id(t.actions))
        if calls not in checked:
            _check_callbacks(t, model, decl.run_forms)
            checked.add(calls)
        if t.source != pair[0] or t.trigger != pair[1]:
            pair = (t.source, t.trigger)
            rows = by_pair.setdefault(pair, [])
        rows.append(t)
    for state, method in decl.state_runs.items():
        if state not in names:
            raise GrammarError(f"state run {method!r}: unknown state {state!r}")
        if not callable(getattr(model, method, None)):
            raise GrammarError(f"state {state!r}: its state run {method!r} is missing from the model")
    for (source, trig), rows in by_pair.items():
        for one, two in zip(rows, rows[1:]):
            if one.rank == two.rank:
                raise GrammarError(
                    f"state {source!r} on {trig!r}: two transitions share rank {one.rank} "
                    f"(to {one.dest} when {list(one.guards)} and to {two.dest} when {list(two.guards)}); "
                    "rule: the order rows are tried in is declared by their rank, never left to list order; "
                    "fix: give one of them another rank (a region of a dialect's own: rank its rows apart from "
                    "the engine's and from other dialects' regions)"
                )
        for k, row in enumerate(rows[:-1]):
            if not row.guards:
                raise GrammarError(
                    f"state {source!r} on {trig!r}: the transition to {rows[k + 1].dest} can never fire "
                    f"(the unguarded transition to {row.dest} comes first)"
                )
    for s in decl.states:
        needed = decl.char_triggers + (EOF_TRIGGER,) + ((OVERFLOW,) if s.in_block else ())
        for trig in needed:
            got = by_pair.get((s.name, trig))
            if not got:
                raise GrammarError(f"state {s.name!r} has no transition on {trig!r}")
            if got[-1].guards:
                raise GrammarError(
                    f"state {s.name!r} on {trig!r}: the last transition is guarded "
                    f"({', '.join(got[-1].guards)}); add an unguarded fallback"
                )
    _check_reachable(decl)


def _check_callbacks(t: Transition, model: type, run_forms: dict[str, str]) -> None:
    """The model has each guard and action ``t`` names, and each action's run form."""
    for name in t.guards + t.actions:
        if not callable(getattr(model, name, None)):
            raise GrammarError(f"transition {t.source} --{t.trigger}--> {t.dest}: the model has no callback {name!r}")
    for a in t.actions:
        if a in run_forms and not callable(getattr(model, run_forms[a], None)):
            raise GrammarError(f"transition {t.source} --{t.trigger}--> {t.dest}: run form {run_forms[a]!r} of {a!r} is missing")


def _check_reachable(decl: Declaration) -> None:
    """Every state reachable from the initial one (or from ``in_reasoning``, where a
    sieve may start), and every state able to get back to ``text`` without ``eof``."""
    succ: dict[str, set[str]] = {s.name: set() for s in decl.states}
    pred: dict[str, set[str]] = {s.name: set() for s in decl.states}
    # (each edge once: some 41,000 rows with every dialect join a few thousand pairs)
    for source, dest in {(t.source, t.dest) for t in decl.transitions if t.trigger not in (EOF_TRIGGER, OVERFLOW)}:
        succ[source].add(dest)
        pred[dest].add(source)
    starts = {decl.initial, *decl.entries} | ({"in_reasoning"} if "in_reasoning" in succ else set())
    seen = _closure(starts, succ)
    unreachable = [s.name for s in decl.states if s.name not in seen]
    if unreachable:
        raise GrammarError(
            f"unreachable state {unreachable[0]!r}: no transition leads to it from {decl.initial!r} (rule: every "
            "declared state can be reached); fix: listen for a marker that leads into it (a Listen of its region, "
            "or a structure node), or leave the state out"
        )
    back = _closure({decl.initial}, pred)
    dead = [s.name for s in decl.states if s.name not in back]
    if dead:
        raise GrammarError(
            f"dead end: from state {dead[0]!r} no transition leads back to {decl.initial!r}, only eof does (rule: "
            "a stream can leave every state without ending, so that what follows is read); fix: give the state "
            "a way out (a Listen for a close marker back to text, or an unguarded row to text for what it "
            "cannot read)"
        )


def _closure(start: set[str], edges: dict[str, set[str]]) -> set[str]:
    seen = set(start)
    todo = list(start)
    while todo:
        s = todo.pop()
        for n in edges[s]:
            if n not in seen:
                seen.add(n)
                todo.append(n)
    return seen
