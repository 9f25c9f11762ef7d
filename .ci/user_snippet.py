"""What a user writes against the installed wheel; .ci/run type-checks it with mypy --strict
(outside the source tree, so only the wheel's own files and py.typed markers are seen)."""

import callsieve
from callsieve import Diagnostic, Event, Sieve, Text, ToolCall, ToolCallDelta, ToolCallStart

sieve: Sieve = callsieve.Sieve(dialects=["qwen3_coder"], on_malformed="text")
events: list[Event] = sieve.feed("Saving.\n<tool_call>\n<function=save>\n<parameter=path>\na.md\n</parameter>\n")
events += sieve.close()
calls: list[ToolCall] = [e for e in events if isinstance(e, ToolCall)]
text: str = "".join(e.text for e in events if isinstance(e, Text))
names: list[str] = [e.name for e in events if isinstance(e, ToolCallStart)]
fragments: str = "".join(e.arguments for e in events if isinstance(e, ToolCallDelta))
codes: list[str] = [e.code for e in events if isinstance(e, Diagnostic)]
raw: str = "".join(e.raw for e in events)
parsed = callsieve.parse("Hi", dialects=None, tools=None)
visible: str = parsed.text
version: str = callsieve.__version__
dialects: tuple[str, ...] = callsieve.DIALECTS
try:
    callsieve.Sieve(dialects=["nope"])
except callsieve.UnknownDialectError as error:
    message: str = str(error)
