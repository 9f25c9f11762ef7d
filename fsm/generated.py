"""The guards and actions the composer generates, one per name a machine's rows use.

``callsieve.machine`` reads the declaration's needs (a guard per listened marker, per
origin state, per dialect sharing an opener, ...) and makes each callback with one of
these factories; the compiled runner calls them as ``g(ctx, ch)``, ``transitions`` as
methods of the composed model. They live in a module of their own, typed over
:class:`EngineModel`, so that the compiled build (mypyc) compiles them with the regions:
each reads the model's registers natively instead of through an interpreted closure.
"""

from __future__ import annotations

from typing import Any, Callable

from callsieve.regions.engine import EngineModel
from callsieve.regions.value import chosen
from callsieve.structure import Leaf, ValueSpec

Guard = Callable[[EngineModel, str], bool]
Action = Callable[[EngineModel, str], None]


def enter_action(leaf: Leaf) -> Action:
    if leaf.stray:
        # Tolerance (``Opt(JsonArgs(), stray=CODE)``): the body is no part of the format
        # where it stands; reported at its first character.
        code, label = leaf.stray, leaf.label()

        def tolerated(self: EngineModel, ch: str) -> None:
            self.tolerate(code, f"{label} written where the format has markup ({code})", self.pos)
            self.enter_target = leaf
            self.enter_body(ch)

        tolerated.__name__ = f"enter~{code}:{leaf.name}"
        return tolerated

    def action(self: EngineModel, ch: str) -> None:
        self.enter_target = leaf
        self.enter_body(ch)

    action.__name__ = f"enter:{leaf.name}"
    return action


def imply_open_action(spec: ValueSpec, code: str) -> Action:
    def action(self: EngineModel, ch: str) -> None:
        self.imply_value_open(spec, code)

    action.__name__ = f"imply_open:{spec.name}"
    return action


def imply_mark_action(leaf_name: str, code: str, label: str) -> Action:
    """Tolerance (``Opt(marker, missing=CODE)`` before a body): ``label`` was left out;
    the body begins at this character."""

    def action(self: EngineModel, ch: str) -> None:
        self.tolerate(code, f"{label} left out before {ch!r}; what follows is read as after it", self.pos)

    action.__name__ = f"imply_mark:{leaf_name}"
    return action


def capture_guard(name: str) -> Guard:
    def guard(self: EngineModel, ch: str) -> bool:
        return self.capture_is(name)

    guard.__name__ = f"capture:{name}"
    return guard


def body_guard(name: str) -> Guard:
    def guard(self: EngineModel, ch: str) -> bool:
        return self.body_leaf_name == name

    guard.__name__ = f"body:{name}"
    return guard


def char_guard(c: str) -> Guard:
    def guard(self: EngineModel, ch: str) -> bool:
        return ch == c

    guard.__name__ = f"char:{c!r}"
    return guard


def hit_guard(key: str) -> Guard:
    def guard(self: EngineModel, ch: str) -> bool:
        return self.hit_key(ch) == key

    guard.__name__ = key
    return guard


def from_guard(state: str) -> Guard:
    def guard(self: EngineModel, ch: str) -> bool:
        return self.origin == state

    guard.__name__ = f"from:{state}"
    return guard


def home_guard(state: str) -> Guard:
    def guard(self: EngineModel, ch: str) -> bool:
        return self.home == state

    guard.__name__ = f"home:{state}"
    return guard


def fork_guard(dialect: str, label: str, name: str) -> Guard:
    def guard(self: EngineModel, ch: str) -> bool:
        fork = self.fork
        return fork is not None and fork.opener_label == label and self.fork_choice(ch) == dialect

    guard.__name__ = name
    return guard


def held_opener_guard(name: str, scope: str | None, rx: Any) -> Guard:
    """A dead tag held in a state that gives way at block openers, in ``scope``, that
    begins with one of them: an opener that yielded to a longer marker of the state,
    which did not come (``_Composer._gives_way``)."""

    def guard(self: EngineModel, ch: str) -> bool:
        return (scope is None or self.scope == scope) and rx.match(self.tag) is not None

    guard.__name__ = name
    return guard


def tools_given_guard() -> Guard:
    """``tools=`` was given (``Block(needs_tools=True)``: its opener is a marker only then).
    Made as the other guards are: a module-level function compiled by mypyc does not
    bind as a method where the model holds it, a closure does."""

    def guard(self: EngineModel, ch: str) -> bool:
        return self.cfg.tools is not None

    guard.__name__ = "tools_given"
    return guard


def case_guard(spec_name: str) -> Guard:
    def guard(self: EngineModel, ch: str) -> bool:
        hit = self._hit(ch)
        specs = getattr(hit.entry.data, "values")
        return chosen(specs, hit.fields).name == spec_name

    guard.__name__ = f"case:{spec_name}"
    return guard
