"""The two mypyc decorators the engine's region models carry, without needing mypy.

The region models are mixins that the composer joins at run time
(``callsieve.machine``); for the compiled build (``CALLSIEVE_COMPILE=1``, see setup.py)
each is a mypyc *trait* (a native class that allows multiple inheritance) that
interpreted classes may subclass: the composed model, and a dialect's own region models.
mypyc reads the decorators when it compiles; at run time, pure Python or compiled, they
change nothing, so without mypy_extensions installed they are stand-ins that return
the class as it is.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable, TypeVar

if TYPE_CHECKING:
    from mypy_extensions import mypyc_attr, trait
else:
    T = TypeVar("T")

    def trait(cls: T) -> T:
        return cls

    def mypyc_attr(*attrs: str, **kwattrs: object) -> Callable[[T], T]:
        return lambda cls: cls


#: The modules the compiled build compiles (setup.py reads this list): the runner, the
#: matcher, every region (the guards and actions the runner calls per character) and the
#: generated guards. Left interpreted: Sieve (its options are checked in Python, with
#: Python's errors; feed()'s fast path is the runner's), the composer, structure compiler
#: and declaration checks (run once per dialect combination), the public event and error
#: classes, the reference runner, the adapters and the tools.
COMPILED_MODULES = (
    "callsieve.compiler",
    "callsieve.matcher",
    "callsieve.accum",
    "callsieve.values",
    "callsieve.generated",
    "callsieve.regions",
    "callsieve.regions.prose",
    "callsieve.regions.tag",
    "callsieve.regions.reasoning",
    "callsieve.regions.block",
    "callsieve.regions.value",
    "callsieve.regions.cdata",
    "callsieve.regions.json_value",
    "callsieve.regions.capture",
    "callsieve.regions.json_body",
    "callsieve.regions.python_value",
    "callsieve.regions.header",
    "callsieve.regions.start",
    "callsieve.regions.engine",
    "callsieve.regions.json_run",
    "callsieve.regions.whole",
)


def is_compiled(module: Any) -> bool:
    """Whether ``module`` was loaded from a compiled extension, not a ``.py`` file."""
    path = getattr(module, "__file__", None) or ""
    return not path.endswith((".py", ".pyc"))


def compiled_modules() -> dict[str, bool]:
    """Each of :data:`COMPILED_MODULES`, and whether it is compiled in this install."""
    import importlib

    return {name: is_compiled(importlib.import_module(name)) for name in COMPILED_MODULES}


def build() -> str:
    """Which build is installed: ``"pure Python"``, ``"compiled (mypyc)"``, or, should
    only some of the modules be compiled, ``"partly compiled (mypyc)"``."""
    got = compiled_modules().values()
    return "compiled (mypyc)" if all(got) else "partly compiled (mypyc)" if any(got) else "pure Python"


__all__ = ["COMPILED_MODULES", "build", "compiled_modules", "is_compiled", "mypyc_attr", "trait"]
