"""callsieve: split a streamed model response into text, reasoning and tool calls.

>>> import callsieve
>>> s = callsieve.Sieve()
>>> events = s.feed("Hi <tool_call>\\n<function=f>\\n</function>\\n</tool_call>") + s.close()
"""

from importlib import metadata as _metadata

from callsieve.errors import (
    CallsieveError,
    FeedAfterCloseError,
    GrammarError,
    InvalidOptionError,
    InvalidToolSchemaError,
    MalformedBlockError,
    UnknownDialectError,
)
from callsieve.events import (
    Diagnostic,
    Event,
    Reasoning,
    Text,
    ToolCall,
    ToolCallDelta,
    ToolCallAbandoned,
    ToolCallStart,
    merged,
)
from callsieve.sieve import Parsed, Sieve, parse
from callsieve.grammar.api import Dialect
from callsieve.grammar.registry import BUILTIN as _BUILTIN
from callsieve.grammar.registry import register

try:
    #: The installed distribution's version (one source of truth: pyproject.toml).
    __version__: str = _metadata.version("callsieve")
except _metadata.PackageNotFoundError:  # imported from a source tree that was never installed
    __version__ = "0+unknown"

#: The built-in dialect names.
DIALECTS: tuple[str, ...] = _BUILTIN

__all__ = [
    "__version__",
    "DIALECTS",
    "Dialect",
    "register",
    "Sieve",
    "parse",
    "Parsed",
    "Event",
    "Text",
    "Reasoning",
    "ToolCallStart",
    "ToolCallDelta",
    "ToolCall",
    "ToolCallAbandoned",
    "Diagnostic",
    "merged",
    "CallsieveError",
    "FeedAfterCloseError",
    "GrammarError",
    "InvalidOptionError",
    "InvalidToolSchemaError",
    "MalformedBlockError",
    "UnknownDialectError",
]
