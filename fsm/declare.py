"""Primitives for declaring the machine as data, and the checks a declaration must pass.

A transition is ``(trigger, source, dest, guards, actions, rank)``. Triggers are
character classes, ``eof`` (end of stream) and ``overflow`` (a held block passed
``max_block_chars``). For one (source, trigger), transitions are tried in ``rank``
order and the first whose guards all pass fires; the last must be unguarded, so every
character has somewhere to go.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable

from callsieve.errors import GrammarError

#: Character classes: the triggers the machine sees. Any other character is ``other``.
CLASSES: dict[str, str] = {
    "lt": "<\uff1c",
    "gt": ">",
    "ws": " \t\r",
    "nl": "\n",
    "tick": "`",
    "tilde": "~",
    "lbrack": "[",
    "rbrack": "]",
    "lbrace": "{",
    "rbrace": "}",
    "quote": '"',
    "bslash": "\\",
}
OTHER = "other"
EOF_TRIGGER = "eof"
OVERFLOW = "overflow"
CHAR_TRIGGERS: tuple[str, ...] = tuple(CLASSES) + (OTHER,)

#: Per-character actions that a self-loop may apply to a whole run at once.
RUN_FORMS: dict[str, str] = {
    "text_char": "text_run",
    "reasoning_char": "reasoning_run",
    "hold_char": "hold_run",
    "value_char": "value_run",
    "cdata_char": "cdata_run",
    "hold_ws": "hold_ws_run",
}


@dataclass(frozen=True)
class Transition:
    trigger: str
    source: str
    dest: str
    guards: tuple[str, ...] = ()
    actions: tuple[str, ...] = ()
    rank: int = 50

    def as_dict(self) -> dict[str, object]:
        """The form ``transitions.Machine`` takes."""
        return {
            "trigger": self.trigger,
            "source": self.source,
            "dest": self.dest,
            "conditions": list(self.guards),
            "before": list(self.actions),
        }


def on(
    source: str,
    triggers: Iterable[str],
    dest: str,
    *actions: str,
    when: Iterable[str] = (),
    rank: int = 50,
) -> list[Transition]:
    """Transitions from ``source`` on each of ``triggers``."""
    return [Transition(t, source, dest, tuple(when), tuple(actions), rank) for t in triggers]


def but(*excluded: str) -> tuple[str, ...]:
    """Every character trigger except those named."""
    return tuple(t for t in CHAR_TRIGGERS if t not in excluded)


@dataclass(frozen=True)
class StateDecl:
    name: str
    doc: str
    #: The block is open in this state: ``overflow`` must be handled.
    in_block: bool = False
    #: Who declared it: "core" or a body/dialect name (diagram clusters).
    owner: str = "core"


@dataclass(frozen=True)
class Declaration:
    states: tuple[StateDecl, ...]
    transitions: tuple[Transition, ...]
    initial: str = "text"

    def state_names(self) -> list[str]:
        return [s.name for s in self.states]

    def ordered(self) -> list[Transition]:
        """Transitions sorted by (source, trigger, rank): the order guards are tried in."""
        order = {s.name: i for i, s in enumerate(self.states)}
        trig = {t: i for i, t in enumerate(CHAR_TRIGGERS + (EOF_TRIGGER, OVERFLOW))}
        return sorted(self.transitions, key=lambda t: (order[t.source], trig[t.trigger], t.rank))


def validate(decl: Declaration, model: type) -> None:
    """Raise :class:`GrammarError` naming the state, trigger or callback at fault."""
    names = set(decl.state_names())
    if len(names) != len(decl.states):
        raise GrammarError("a state is declared twice")
    if decl.initial not in names:
        raise GrammarError(f"initial state {decl.initial!r} is not declared")
    by_pair: dict[tuple[str, str], list[Transition]] = {}
    for t in decl.ordered():
        where = f"transition {t.source} --{t.trigger}--> {t.dest}"
        if t.source not in names or t.dest not in names:
            raise GrammarError(f"{where}: unknown state")
        if t.trigger not in CHAR_TRIGGERS + (EOF_TRIGGER, OVERFLOW):
            raise GrammarError(f"{where}: unknown trigger {t.trigger!r}")
        for name in t.guards + t.actions:
            if not callable(getattr(model, name, None)):
                raise GrammarError(f"{where}: the model has no callback {name!r}")
        for a in t.actions:
            if a in RUN_FORMS and not callable(getattr(model, RUN_FORMS[a], None)):
                raise GrammarError(f"{where}: run form {RUN_FORMS[a]!r} of {a!r} is missing")
        by_pair.setdefault((t.source, t.trigger), []).append(t)
    for s in decl.states:
        needed = CHAR_TRIGGERS + (EOF_TRIGGER,) + ((OVERFLOW,) if s.in_block else ())
        for trig in needed:
            ts = by_pair.get((s.name, trig))
            if not ts:
                raise GrammarError(f"state {s.name!r} has no transition on {trig!r}")
            if ts[-1].guards:
                raise GrammarError(
                    f"state {s.name!r} on {trig!r}: the last transition is guarded "
                    f"({', '.join(ts[-1].guards)}); add an unguarded fallback"
                )
