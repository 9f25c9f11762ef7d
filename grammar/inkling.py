"""Inkling: a model message whose header names the tool, then ``{"name", "args"}``.

Wire format (shared/reference/dialects-long-tail.md §25)::

    <|message_model|>get_weather<|content_invoke_tool_json|>{"name":"get_weather","args":{"city":"Paris"}}<|end_message|>

Special tokens (``skip_special_tokens=False``). The header between
``<|message_model|>`` and ``<|content_invoke_tool_json|>`` holds the tool's name; the
payload is one strict JSON object whose ``args`` (or ``arguments``) is the arguments
object and whose ``name`` names the call. SGLang rejects a call whose header and
payload names differ; here the payload's name is the call's (the header is read, not
compared). Calls to undeclared tools follow ``unknown_tool`` as every call does.
"""

from __future__ import annotations

import json

from callsieve.grammar.api import Block, Capture, Dialect, JsonCall, Seq, arguments_of
from callsieve.grammar.tags import special_token

MESSAGE_MODEL = special_token("message_model")
INVOKE_JSON = special_token("content_invoke_tool_json")
END_MESSAGE = special_token("end_message")

#: The header: the tool's name (no spaces, no ``<``).
HEADER_NAME = r"\s*[^\s<]{1,128}\s*"

BLOCK = Block(
    MESSAGE_MODEL,
    Seq(Capture(HEADER_NAME, label="NAME"), INVOKE_JSON, JsonCall(arguments=("args", "arguments"))),
    END_MESSAGE,
)


def render(calls: list[tuple[str, list[tuple[str, str, bool]]]], variant: int = 0) -> str:
    """One message per call, back to back; odd variants space the JSON."""
    sep = (", ", ": ") if variant % 2 else (",", ":")
    return "".join(
        f"<|message_model|>{n}<|content_invoke_tool_json|>"
        + json.dumps({"name": n, "args": arguments_of(p)}, ensure_ascii=False, separators=sep)
        + "<|end_message|>"
        for n, p in calls
    )


DIALECT = Dialect(
    name="inkling",
    title='Inkling (<|message_model|>NAME<|content_invoke_tool_json|>{"name", "args"})',
    blocks=(BLOCK,),
    sample=render([("get_weather", [("city", "Paris", False)])]),
    render=render,
)
