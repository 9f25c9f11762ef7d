"""The errors a declaration can raise, at the bottom of the import graph.

They live here, not in the engine, so that ``callsieve.grammar`` imports nothing from
the engine: the engine re-exports them (``callsieve.GrammarError``) with its own.
"""

from __future__ import annotations


class CallsieveError(Exception):
    """Base class of every error callsieve raises."""


class GrammarError(CallsieveError, ValueError):
    """A dialect or machine declaration that breaks a rule; the message names it."""


class UnknownDialectError(CallsieveError, ValueError):
    """A dialect name that is not registered."""
