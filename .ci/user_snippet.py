"""What a user writes against the installed wheel (with its openai extra); .ci/run type-checks it with mypy --strict
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

# The OpenAI adapter's types, as a user's editor sees them (the wheel is installed with
# its `openai` extra): each way of streaming keeps the SDK's own types.
from openai import OpenAI
from openai.types.chat import ChatCompletionChunk
from openai.types.responses import ResponseStreamEvent

from callsieve.openai import SievedStream, sieve_stream


def chat(client: OpenAI) -> str:
    stream: SievedStream[ChatCompletionChunk] = sieve_stream(
        client.chat.completions.create(model="m", messages=[{"role": "user", "content": "hi"}], stream=True)
    )
    with stream as chunks:
        return "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)


def helper(client: OpenAI) -> str | None:
    with sieve_stream(client.chat.completions.stream(model="m", messages=[{"role": "user", "content": "hi"}])) as s:
        return s.get_final_completion().choices[0].message.content


def responses(client: OpenAI) -> list[ResponseStreamEvent]:
    return list(sieve_stream(client.responses.create(model="m", input="hi", stream=True)))
