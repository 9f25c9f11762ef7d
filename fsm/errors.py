"""Typed errors. Only API misuse raises; content never does (unless a policy asks).

``CallsieveError``, ``GrammarError`` and ``UnknownDialectError`` are defined in
``callsieve.grammar.errors`` (the grammar imports nothing from the engine) and
re-exported here.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from callsieve.grammar.errors import CallsieveError, GrammarError, UnknownDialectError

if TYPE_CHECKING:
    from callsieve.events import Diagnostic, Event

__all__ = [
    "CallsieveError",
    "GrammarError",
    "UnknownDialectError",
    "FeedAfterCloseError",
    "InvalidToolSchemaError",
    "InvalidOptionError",
    "MalformedBlockError",
]


class FeedAfterCloseError(CallsieveError):
    """``feed()`` or ``close()`` was called on a sieve that is already closed."""


class InvalidToolSchemaError(CallsieveError, ValueError):
    """``tools=`` is not a list of OpenAI tool schemas."""


class InvalidOptionError(CallsieveError, ValueError):
    """A ``Sieve`` option has a value it does not take (raised when it is built)."""


class MalformedBlockError(CallsieveError):
    """Raised only with ``on_malformed="raise"``: a block was malformed or unterminated.

    ``events``: every event the raising ``feed()``/``close()`` had decided, in order,
    ending with ``diagnostic`` (whose ``raw`` is the block's input). Together with what
    earlier calls returned, that is the same whatever the chunking. The sieve is closed
    afterwards; input after the block was not read.
    """

    def __init__(self, message: str, diagnostic: "Diagnostic") -> None:
        super().__init__(message)
        self.diagnostic = diagnostic
        self.events: "list[Event]" = []
