"""Traces: which transitions an input fired, as the ``transitions`` machine decided.

A trace drives the reference runner (the ``transitions`` machine itself, one trigger per
character, every self-loop stepped; see :mod:`callsieve.reference`), so counts are exact. Each
``Transition.execute`` of that runner's machine is wrapped to record, when it fires, the
offset, the (source, trigger) pair, which alternative fired, the held tag text and where
``maybe_tag`` came from. The compiled runner, which users run, is not touched.

:func:`trace_marks` turns a trace into what ``callsieve diagram --trace`` draws (counts
per transition, visited states, the decisions) and a path log: one line per state change,
runs of self-loops folded, decision points starred. A *decision* is a state change that
some guard or the character's class chose between alternatives, or that hands the
character back to be read again (``↺``): a held tag becoming a marker or text, a held
``</parameter>`` confirmed or returned to the value, a backtick run opening a fence.
"""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass
from typing import Any, Callable, Iterable, Sequence

from callsieve.declare import Declaration
from callsieve.events import Diagnostic, Event, ToolCall
from callsieve.grammar.api import Dialect
from callsieve.grammar.states import EOF_TRIGGER, OVERFLOW
from callsieve.reference import ReferenceRunner
from callsieve.sieve import Sieve
from callsieve.tools.diagrams_read import Guards, Marks, View, actions_label, read_machine


@dataclass(frozen=True)
class Fire:
    """One fired transition."""

    #: Input offset of the character that fired it (for ``eof``: the input length).
    pos: int
    source: str
    trigger: str
    #: Which alternative of (source, trigger) fired, in the order they are tried.
    index: int
    dest: str
    #: The held tag text including this character (in ``maybe_tag``), else the character.
    held: str
    #: The state ``maybe_tag`` was entered from (the context's ``origin``).
    origin: str


@dataclass
class Trace:
    text: str
    dialects: tuple[Dialect, ...]
    decl: Declaration
    fires: list[Fire]
    events: list[Event]
    #: The sieve read blocks their own body opens (``Sieve(bare_calls=...)``, as decided).
    bare: bool = True


def _instrument(machine: Any, ctx: Any, fires: list[Fire]) -> None:
    for trigger, event in machine.events.items():
        for source, transitions in event.transitions.items():
            for index, tr in enumerate(transitions):
                dest = tr.dest if tr.dest is not None else source
                tr.execute = _recording(tr.execute, ctx, fires, source, trigger, index, dest)


def _recording(
    execute: Callable[[Any], bool],
    ctx: Any,
    fires: list[Fire],
    source: str,
    trigger: str,
    index: int,
    dest: str,
) -> Callable[[Any], bool]:
    def traced(event_data: Any) -> bool:
        pos = ctx.pos
        ch = event_data.args[0] if event_data.args else ""
        held = ctx.tag + ch
        origin = ctx.origin
        fired = bool(execute(event_data))
        if fired:
            fires.append(Fire(pos, source, trigger, index, dest, held, origin))
        return fired

    return traced


def trace(
    text: str,
    dialects: Iterable[str | Dialect] | str | None = None,
    tools: Iterable[Any] | None = None,
    **options: Any,
) -> Trace:
    """Run ``text`` (fed whole, then closed) through the reference machine, recording.

    ``tools`` and ``options`` are :class:`callsieve.Sieve`'s.
    """
    sieve = Sieve(dialects, tools, runner="reference", **options)
    runner = sieve.runner
    if not isinstance(runner, ReferenceRunner):  # pragma: no cover - runner="reference" above
        raise TypeError("a trace needs the reference runner")
    fires: list[Fire] = []
    # (a machine of its own: the shared one drives every other reference runner)
    _instrument(runner.isolate(), runner.ctx, fires)
    events = sieve.feed(text) + sieve.close()
    return Trace(text, sieve.dialects, sieve.machine.decl, fires, events, sieve.bare_calls)


def trace_marks(
    text: str,
    dialects: Sequence[str | Dialect] | None = None,
    tools: Iterable[Any] | None = None,
    **options: Any,
) -> tuple[View, Marks, list[str]]:
    """Trace ``text``: the view to draw it on, what to mark, and the path log."""
    t = trace(text, list(dialects) if dialects else None, tools, **options)
    view = View("trace", "callsieve trace: " + ", ".join(d.name for d in t.dialects), t.dialects,
                think=bool(options.get("reasoning", True)),
                calls_in_reasoning=str(options.get("calls_in_reasoning", "dialect")),
                strict=bool(options.get("strict", False)),
                bare=t.bare)
    _states, rows, _machine = read_machine(t.decl)
    by_pos = {(r.source, r.trigger, r.index): r for r in rows}
    alternatives: dict[tuple[str, str], set[tuple[str, tuple[str, ...]]]] = {}
    for r in rows:
        if r.reachable:
            alternatives.setdefault((r.source, r.trigger), set()).add((r.dest, r.actions))

    counts: Counter[tuple[str, str, int]] = Counter()
    visits: Counter[str] = Counter()
    notes: dict[tuple[str, str, Guards], list[str]] = {}
    totals: Counter[tuple[str, str, Guards]] = Counter()
    log: list[str] = []
    fold: list[Any] = []  # [source, what, count, start] of the self-loop run being folded

    def flush() -> None:
        if fold:
            src, what, n, start = fold
            log.append(f"{start:>7}  {src:<26} {n} × {what}")
            fold.clear()

    for f in t.fires:
        row = by_pos[(f.source, f.trigger, f.index)]
        if row.dest != f.dest:  # pragma: no cover - both machines come from one declaration
            raise AssertionError(f"trace and diagram disagree at {f}")
        counts[(f.source, f.trigger, f.index)] += 1
        visits[f.source] += 1
        if f.dest == f.source:
            what = "held" if f.source == "maybe_tag" else (" ".join(row.actions) or "-")
            if fold and fold[0] == f.source and fold[1] == what:
                fold[2] += 1
            else:
                flush()
                fold.extend([f.source, what, 1, f.pos])
            continue
        flush()
        decided = len(alternatives[(f.source, f.trigger)]) > 1 or "reprocess" in row.actions
        shown = f.trigger if f.trigger in (EOF_TRIGGER, OVERFLOW) else json.dumps(f.held, ensure_ascii=False)
        where = f.source + (f" (from {f.origin})" if f.source == "maybe_tag" else "")
        guards = ", ".join(row.guards)
        cond = f" [{guards}]" if guards else ""
        log.append(f"{f.pos:>7}{'*' if decided else ' '} {where:<26} {shown} {f.trigger}{cond} → {f.dest} {actions_label(row.actions)}".rstrip())
        if decided:
            key = (row.source, row.dest, row.guards)
            totals[key] += 1
            if len(notes.setdefault(key, [])) < 3:
                notes[key].append(f"@{f.pos} {shown}" + (f" from {f.origin}" if f.source == "maybe_tag" else ""))
    flush()

    n_calls = sum(1 for e in t.events if isinstance(e, ToolCall))
    n_diag = sum(1 for e in t.events if isinstance(e, Diagnostic))
    summary = [
        f"{len(text)} characters",
        f"{len(t.fires)} transitions fired",
        f"{sum(totals.values())} decisions",
        f"{n_calls} tool call{'' if n_calls == 1 else 's'}",
        f"{n_diag} diagnostic{'' if n_diag == 1 else 's'}",
    ]
    log += ["", "events:"] + ["  " + _event_line(e) for e in t.events]
    return view, Marks(counts, visits, notes, totals, summary), log


def _event_line(e: Event) -> str:
    fields = {k: getattr(e, k) for k in type(e).__slots__ if k != "raw"}
    return type(e).__name__ + " " + json.dumps(fields, ensure_ascii=False, default=str)
