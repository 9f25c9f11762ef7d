"""Typed errors. Only API misuse raises; content never does (unless a policy asks)."""

from __future__ import annotations


class CallsieveError(Exception):
    """Base class of every error callsieve raises."""


class FeedAfterCloseError(CallsieveError):
    """``feed()`` or ``close()`` was called on a sieve that is already closed."""


class UnknownDialectError(CallsieveError, ValueError):
    """A dialect name that is not registered."""


class GrammarError(CallsieveError, ValueError):
    """A dialect or machine declaration that breaks a rule; the message names it."""


class InvalidToolSchemaError(CallsieveError, ValueError):
    """``tools=`` is not a list of OpenAI tool schemas."""


class MalformedBlockError(CallsieveError):
    """Raised only with ``on_malformed="raise"``: a block was malformed or unterminated."""

    def __init__(self, message: str, diagnostic: object) -> None:
        super().__init__(message)
        self.diagnostic = diagnostic
