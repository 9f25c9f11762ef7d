"""The reference runner: the ``transitions`` machine itself, one trigger per character.

About 7 µs a trigger, so it is for tests: the differential test holds the compiled
runner to exactly what this runner does.
"""

from __future__ import annotations

import logging
from typing import Any

from callsieve.context import Context
from callsieve.declare import CLASSES, EOF_TRIGGER, OTHER, OVERFLOW, Declaration
from callsieve.machine import build_machine

# transitions logs every trigger; keep that out of test output and time.
logging.getLogger("transitions").setLevel(logging.WARNING)

# Built here from the declaration, not shared with the compiled runner, so that a
# mistake in the compiled runner's character table cannot hide in both.
CLASS_OF: dict[str, str] = {ch: name for name, chars in CLASSES.items() for ch in chars}


class ReferenceRunner:
    def __init__(self, decl: Declaration, ctx: Context, initial: str | None = None) -> None:
        self.ctx = ctx
        self.machine: Any = build_machine(decl, ctx, initial=initial)
        self.base = 0

    def feed(self, s: str) -> None:
        self._run(s, self.base)
        self.base += len(s)

    def _run(self, s: str, base: int) -> None:
        ctx: Any = self.ctx
        i = 0
        while i < len(s):
            ch = s[i]
            ctx.pos = base + i
            ctx.trigger(CLASS_OF.get(ch, OTHER), ch)
            redo, ctx.redo = ctx.redo, False
            if ctx.pushback:
                pb, ctx.pushback = ctx.pushback, ""
                self._run(pb, base + i - len(pb))
            if not redo:
                i += 1
            if ctx.block is not None and ctx.over_limit():
                ctx.pos = base + i
                ctx.trigger(OVERFLOW, "")

    def eof(self) -> None:
        ctx: Any = self.ctx
        ctx.pos = self.base
        ctx.trigger(EOF_TRIGGER, "")
