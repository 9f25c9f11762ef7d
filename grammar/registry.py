"""The built-in dialects, by name, and :func:`register` for a user's own."""

from __future__ import annotations

from typing import Iterable

from callsieve.grammar import deepseek, dsml, glm45, harmony, hermes, kimi_k2, minimax_m2, mistral, qwen3_coder, xml
from callsieve.grammar.api import Dialect, validate
from callsieve.grammar.errors import GrammarError, UnknownDialectError

REGISTRY: dict[str, Dialect] = {
    d.name: d
    for d in (
        dsml.DIALECT, xml.DIALECT, qwen3_coder.DIALECT, minimax_m2.DIALECT,
        hermes.DIALECT, glm45.DIALECT, kimi_k2.DIALECT, deepseek.V3, deepseek.V31, mistral.DIALECT, harmony.DIALECT,
    )
}
#: The built-in names; ``Sieve()`` (dialects=None) enables these, not registered extras.
BUILTIN: tuple[str, ...] = tuple(REGISTRY)
_checked: set[Dialect] = set()


def _checked_dialect(d: Dialect) -> Dialect:
    # Validated once per distinct dialect (dialects are frozen: equal ones are equally valid).
    if d not in _checked:
        validate(d)
        _checked.add(d)
    return d


def register(dialect: Dialect, *, replace: bool = False) -> Dialect:
    """Make ``dialect`` resolvable by its name (``Sieve(dialects=["acme"])``).

    The dialect is validated now. A name already registered raises unless
    ``replace=True``; the built-in names can never be replaced.
    """
    validate(dialect)
    if dialect.name in BUILTIN:
        raise GrammarError(f"dialect name {dialect.name!r} is a built-in dialect's; choose another")
    if dialect.name in REGISTRY and not replace and REGISTRY[dialect.name] is not dialect:
        raise GrammarError(f"dialect {dialect.name!r} is already registered (pass replace=True)")
    REGISTRY[dialect.name] = dialect
    return dialect


def resolve(dialects: Iterable[str | Dialect] | str | Dialect | None) -> tuple[Dialect, ...]:
    """Dialect objects for names (``None``: all built-in); unknown names raise."""
    if dialects is None:
        return tuple(_checked_dialect(REGISTRY[n]) for n in BUILTIN)
    if isinstance(dialects, (str, Dialect)):
        dialects = [dialects]
    out: list[Dialect] = []
    for d in dialects:
        if isinstance(d, Dialect):
            out.append(_checked_dialect(d))
            continue
        if not isinstance(d, str) or d not in REGISTRY:
            known = ", ".join(REGISTRY)
            raise UnknownDialectError(f"unknown dialect {d!r}; known: {known}")
        out.append(_checked_dialect(REGISTRY[d]))
    if not out:
        raise UnknownDialectError("no dialect given")
    names = [d.name for d in out]
    dup = {n for n in names if names.count(n) > 1}
    if dup:
        raise UnknownDialectError(f"dialect {sorted(dup)[0]!r} given twice")
    return tuple(out)
