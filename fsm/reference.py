"""The reference runner: the ``transitions`` machine itself, one trigger per character.

About 4 µs a trigger, so it is for tests: the differential test holds the compiled
runner to exactly what this runner does.

One ``transitions.Machine`` is built per declaration and shared by every runner of it:
a runner fires the machine's events on its own model (``machine.events[t].trigger(ctx,
ch)``, what the ``trigger`` method transitions adds to a model calls), so the rows,
their order, guards and actions are that one machine's, and all per-stream state is on
the model (its ``state`` included). The shared machine registers no model: it is
never written to while it runs, and holds no stream alive. Building it (some 41,000 rows
with every dialect, a few tenths of a second) for every sieve was most of what the
differential tests spent on the reference side. A runner whose machine is to be
instrumented (``callsieve diagram --trace``) takes a machine of its own first
(:meth:`ReferenceRunner.isolate`), so no other runner is traced.
"""

from __future__ import annotations

import logging
import weakref
from typing import Any

from callsieve.declare import Declaration
from callsieve.grammar.states import EOF_TRIGGER, OTHER
from callsieve.machine import build_machine
from callsieve.regions import ModelBase

# transitions logs every trigger; keep that out of test output and time.
logging.getLogger("transitions").setLevel(logging.WARNING)


#: id(declaration) -> (a weak reference to it, its machine). Keyed by identity: a
#: Declaration hashes its thousands of rows, and ``compose`` is cached, so a
#: composition has one declaration object. The entry goes when the declaration does.
_SHARED: dict[int, tuple["weakref.ref[Declaration]", Any]] = {}


def shared_machine(decl: Declaration) -> Any:
    """The ``transitions`` machine of ``decl``, built once (with no model)."""
    key = id(decl)
    hit = _SHARED.get(key)
    if hit is not None and hit[0]() is decl:
        return hit[1]
    machine = build_machine(decl, None)
    _SHARED[key] = (weakref.ref(decl, lambda _ref: _SHARED.pop(key, None)), machine)
    return machine


#: Model classes found to have no on_enter_/on_exit_ callbacks.
_WITHOUT_STATE_CALLBACKS: "weakref.WeakSet[type]" = weakref.WeakSet()


class ReferenceRunner:
    def __init__(self, decl: Declaration, ctx: ModelBase, initial: str | None = None) -> None:
        # transitions adds a state's on_enter_X/on_exit_X callbacks when it registers a
        # model that has them; these runners register none, so no model may rely on them.
        # (Checked once per model class: a composed class has thousands of names.)
        if type(ctx) not in _WITHOUT_STATE_CALLBACKS:
            assert not any(n.startswith(("on_enter_", "on_exit_")) for n in dir(type(ctx))), "unregistered model"
            _WITHOUT_STATE_CALLBACKS.add(type(ctx))
        self.ctx = ctx
        self.decl = decl
        self.machine: Any = shared_machine(decl)
        self.machine.set_state(initial or decl.initial, model=ctx)
        self.base = 0
        # Built here from the declaration's classes, not shared with the compiled
        # runner, so that a mistake in the compiled runner's table cannot hide in both.
        self.class_of = {ch: name for name, chars in decl.classes.items() for ch in chars}

    def isolate(self) -> Any:
        """Give this runner a machine of its own, built from the same declaration, and
        return it: for instrumenting the machine (traces) without touching the runners
        that share one."""
        self.machine = build_machine(self.decl, None)
        return self.machine

    def fire(self, trigger: str, ch: str) -> object:
        """Fire ``trigger`` on this runner's model, reading ``ch``."""
        return self.machine.events[trigger].trigger(self.ctx, ch)

    def feed(self, s: str) -> None:
        self._run(s, self.base)
        self.base += len(s)

    def _run(self, s: str, base: int) -> None:
        ctx: Any = self.ctx
        i = 0
        while i < len(s):
            ch = s[i]
            ctx.pos = base + i
            self.fire(self.class_of.get(ch, OTHER), ch)
            i = ctx.settle(self._run, self.fire, base, i)

    def eof(self) -> None:
        ctx: Any = self.ctx
        ctx.pos = self.base
        self.fire(EOF_TRIGGER, "")
        while ctx.pushback:
            # (what the end of the stream gave back: read again, then the end again)
            pb, ctx.pushback = ctx.pushback, ""
            self._run(pb, self.base - len(pb))
            ctx.pos = self.base
            self.fire(EOF_TRIGGER, "")
