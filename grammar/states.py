"""The vocabulary machines are declared in: states, transitions, triggers.

The engine's regions (``callsieve.regions.*``) and a dialect's own states (see
:class:`Region`) are written in it. A transition is ``(trigger, source, dest, guards,
actions, rank)``. Triggers are character classes, ``eof`` (end of stream) and
``overflow`` (a held block passed ``max_block_chars``). For one (source, trigger),
transitions are tried in ``rank`` order and the first whose guards all pass fires;
the last must be unguarded, so every character has somewhere to go.

Trigger sets are symbolic until the machine is composed: ``but("tick", START)`` is
"every character class but ``tick`` and this state's start classes", expanded against
the classes of the composed machine (a dialect whose markers begin with ``@`` adds a
class of its own). ``START`` alone stands for the classes of the characters that can
begin a marker the state listens for; they go to ``maybe_tag``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Iterable, Union

#: The base character classes. Any other character is ``other``; a start character
#: outside these gets a class of its own when a machine is composed.
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
#: Stands for a state's start classes inside a trigger set.
START = "<start>"
#: A body region's rows lead here when the body is complete: the composer puts, for
#: each place the structure names the body, what follows it there (a position of the
#: dialect, or the end of its block), guarded by ``body:LEAF`` (the body being read).
EXIT = "<exit>"

#: Per-character actions that a self-loop may apply to a whole run at once (the core's;
#: a region adds its own in ``Region.run_forms``).
RUN_FORMS: dict[str, str] = {
    "text_char": "text_run",
    "reasoning_char": "reasoning_run",
    "hold_char": "hold_run",
    "value_char": "value_run",
    "cdata_char": "cdata_run",
    "hold_ws": "hold_ws_run",
}

#: Rank bands in maybe_tag-like states: a held tag that may still grow, then complete
#: markers (one row per marker the origin listens for), then where a dead tag returns.
RANK_VIABLE = 5
RANK_HIT = 100
RANK_RETURN = 5000
RANK_FALLBACK = 9000


@dataclass(frozen=True)
class Triggers:
    """A symbolic set of triggers: the named ones, or every class but ``excluded``."""

    named: tuple[str, ...] = ()
    excluded: tuple[str, ...] | None = None

    def expand(self, classes: Iterable[str], start: Iterable[str]) -> tuple[str, ...]:
        start = tuple(start)
        classes = tuple(classes)
        if self.excluded is None:
            out: list[str] = []
            for t in self.named:
                out.extend(start if t == START else (t,))
                if t == OTHER:
                    # A class a composed machine adds for a start character outside the
                    # base classes (an ``a`` that begins a marker somewhere) is still an
                    # "other" character wherever that marker is not listened for: the
                    # JSON body's ``false`` must not lose its ``a``.
                    out.extend(c for c in classes if c not in CLASSES and c != OTHER and c not in start
                               and c not in self.named)
            return tuple(out)
        drop = set(start) if START in self.excluded else set()
        drop |= set(self.excluded)
        return tuple(c for c in classes if c not in drop)


ALL = Triggers(excluded=())


def but(*excluded: str) -> Triggers:
    """Every character trigger except those named (``START``: the state's start classes)."""
    return Triggers(excluded=excluded)


@dataclass(frozen=True)
class Transition:
    trigger: str
    source: str
    dest: str
    guards: tuple[str, ...] = ()
    actions: tuple[str, ...] = ()
    #: (a float: the composer ranks the rows it makes of one row between that row and
    #: the next, ``EXIT``)
    rank: float = 50

    def as_dict(self) -> dict[str, object]:
        """The form ``transitions.Machine`` takes."""
        return {
            "trigger": self.trigger,
            "source": self.source,
            "dest": self.dest,
            "conditions": list(self.guards),
            "before": list(self.actions),
        }


@dataclass(frozen=True)
class Rule:
    """Transitions from ``source`` on a (symbolic) trigger set, before expansion."""

    source: str
    triggers: Triggers
    dest: str
    actions: tuple[str, ...] = ()
    guards: tuple[str, ...] = ()
    rank: float = 50


def on(
    source: str,
    triggers: Iterable[str] | Triggers,
    dest: str,
    *actions: str,
    when: Iterable[str] = (),
    rank: int = 50,
) -> list[Rule]:
    """Transitions from ``source`` on each of ``triggers``."""
    if isinstance(triggers, str):
        triggers = (triggers,)  # START alone
    trig = triggers if isinstance(triggers, Triggers) else Triggers(named=tuple(triggers))
    return [Rule(source, trig, dest, tuple(actions), tuple(when), rank)]


@dataclass(frozen=True)
class StateDecl:
    name: str
    doc: str
    #: The block is open in this state: ``overflow`` must be handled.
    in_block: bool = False
    #: Who declared it: a region or dialect name (diagram clusters).
    owner: str = "core"
    #: The action a rejected tag's first character goes to when this state is the
    #: origin of a held tag (``text_char``, ``value_char``); "" for markup-only states,
    #: where a dead tag makes the block malformed.
    sink: str = ""


Row = Union[Rule, Transition]


@dataclass(frozen=True)
class Listen:
    """In state ``origin``, the complete marker ``marker`` leads to ``dest`` with
    ``actions``. The composer adds the marker to the origin's matcher, names the guard
    that is true when a held tag completes it (``hit:ORIGIN:MARKER``) and declares the
    row from ``maybe_tag``; the origin's start classes go to ``maybe_tag``."""

    origin: str
    marker: object  # callsieve.grammar.api.Marker (kept loose: api imports this module)
    dest: str
    actions: tuple[str, ...] = ()


@dataclass(frozen=True)
class Region:
    """One region of states, declared in one place (h11's Rule 1).

    ``states`` and ``rules`` are its part of the machine; ``model`` is a mixin class
    holding the guards and actions those rules name; ``listens`` are the markers its
    states listen for and where each leads (those of a dialect's blocks are derived
    from its structure instead). A dialect may carry regions of its own
    (``Dialect.regions``); their mixins join the model, their names must not collide.
    """

    name: str
    states: tuple[StateDecl, ...]
    rules: tuple[Row, ...]
    model: type | None = None
    listens: tuple[Listen, ...] = ()
    #: (per-character action, its run form ``action_run(s, i, j) -> j``) of this region
    run_forms: tuple[tuple[str, str], ...] = ()
    #: (state, method) pairs: *state runs*, runs that may pass through several of the
    #: region's states, where the same few characters keep the machine cycling (``]``
    #: runs in CDATA, a close refused again and again). ``method(s, i) -> j`` reads
    #: ``s[i:j]`` from ``state`` exactly as stepping each character would, leaves the
    #: model in the state the steps end in (``self.state``), stops where it cannot tell
    #: (a character it does not cover, the chunk's end, ``run_budget``) and returns ``i``
    #: when it takes nothing. Only the compiled runner uses them; the differential test
    #: holds each to the reference runner's steps.
    state_runs: tuple[tuple[str, str], ...] = ()


class BodyHelpers:
    """The base of a value grammar's model (``grammar.api.Body``): what its guards and
    actions may call on the machine's model, declared for type checkers only (at run
    time this class is empty, so the engine's own methods are the ones called).

    ``self.cfg.strict`` (every tolerance off), ``self.cfg.tools`` (the tool schemas by
    name, or None) and ``self.pos`` (the offset of the character read) may be read.
    """

    if TYPE_CHECKING:  # pragma: no cover
        cfg: Any
        pos: int

        def body_hold(self, s: str) -> None:
            """Keep input the body read (every character it reads)."""

        def body_call(self) -> None:
            """A call begins (a body that makes calls)."""

        def body_name(self, name: str) -> None:
            """The current call's name (its ToolCallStart goes out)."""

        def body_args(self, text: str) -> None:
            """Canonical JSON text of the current call's arguments, streamed."""

        def body_end_call(self) -> None:
            """The current call's markup ended."""

        def body_refuse(self, why: str) -> None:
            """The current call is no call: released alone, the block stands."""

        def body_fail(self, why: str) -> None:
            """The block is malformed (lead to ``text`` with ``abort_block``)."""

        def tolerate(self, code: str, what: str, offset: int) -> None:
            """A tolerated deviation was read (a Diagnostic with the block's calls)."""

        def run_budget(self) -> int:
            """Characters a run form may take before the block is full."""
