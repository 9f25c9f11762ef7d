"""The reference runner: the ``transitions`` machine itself, one trigger per character.

About 7 µs a trigger, so it is for tests: the differential test holds the compiled
runner to exactly what this runner does.
"""

from __future__ import annotations

import logging
from typing import Any

from callsieve.declare import Declaration
from callsieve.grammar.states import EOF_TRIGGER, OTHER
from callsieve.machine import build_machine
from callsieve.regions import ModelBase

# transitions logs every trigger; keep that out of test output and time.
logging.getLogger("transitions").setLevel(logging.WARNING)


class ReferenceRunner:
    def __init__(self, decl: Declaration, ctx: ModelBase, initial: str | None = None) -> None:
        self.ctx = ctx
        self.machine: Any = build_machine(decl, ctx, initial=initial)
        self.base = 0
        # Built here from the declaration's classes, not shared with the compiled
        # runner, so that a mistake in the compiled runner's table cannot hide in both.
        self.class_of = {ch: name for name, chars in decl.classes.items() for ch in chars}

    def feed(self, s: str) -> None:
        self._run(s, self.base)
        self.base += len(s)

    def _run(self, s: str, base: int) -> None:
        ctx: Any = self.ctx
        i = 0
        while i < len(s):
            ch = s[i]
            ctx.pos = base + i
            ctx.trigger(self.class_of.get(ch, OTHER), ch)
            i = ctx.settle(self._run, ctx.trigger, base, i)

    def eof(self) -> None:
        ctx: Any = self.ctx
        ctx.pos = self.base
        ctx.trigger(EOF_TRIGGER, "")
