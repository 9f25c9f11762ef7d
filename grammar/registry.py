"""The built-in dialects, by name. Adding a dialect: write its module, list it here."""

from __future__ import annotations

from typing import Iterable

from callsieve.grammar import dsml, minimax_m2, qwen3_coder, xml
from callsieve.grammar.api import Dialect, validate

REGISTRY: dict[str, Dialect] = {d.name: d for d in (dsml.DIALECT, xml.DIALECT, qwen3_coder.DIALECT, minimax_m2.DIALECT)}
_checked: set[str] = set()


def _checked_builtin(d: Dialect) -> Dialect:
    # Checked on first use rather than at import, so that importing grammar does not
    # pull in the engine (whose errors validate() raises).
    if d.name not in _checked:
        validate(d)
        _checked.add(d.name)
    return d


def resolve(dialects: Iterable[str | Dialect] | str | None) -> tuple[Dialect, ...]:
    """Dialect objects for names (``None``: all built-in); unknown names raise."""
    from callsieve.errors import UnknownDialectError

    if dialects is None:
        return tuple(_checked_builtin(d) for d in REGISTRY.values())
    if isinstance(dialects, (str, Dialect)):
        dialects = [dialects]
    out: list[Dialect] = []
    for d in dialects:
        if isinstance(d, Dialect):
            validate(d)
            out.append(d)
            continue
        if d not in REGISTRY:
            known = ", ".join(REGISTRY)
            raise UnknownDialectError(f"unknown dialect {d!r}; known: {known}")
        out.append(_checked_builtin(REGISTRY[d]))
    if not out:
        raise UnknownDialectError("no dialect given")
    return tuple(out)
