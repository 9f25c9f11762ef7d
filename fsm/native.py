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


def is_compiled(module: Any) -> bool:
    """Whether ``module`` was loaded from a compiled extension, not a ``.py`` file."""
    path = getattr(module, "__file__", None) or ""
    return not path.endswith((".py", ".pyc"))


__all__ = ["is_compiled", "mypyc_attr", "trait"]
