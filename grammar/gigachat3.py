"""GigaChat 3 / 3.5: ``<|message_sep|>function call<|role_sep|>`` then one JSON call.

Wire format (shared/reference/dialects-long-tail.md §21)::

    Сейчас проверю.<|message_sep|>function call<|role_sep|>
    {"name": "get_weather", "arguments": {"city": "Moscow"}}</s>

The visible text is what stands before ``<|message_sep|>``; the call message's header
is the text ``function call`` between two special tokens (the server must keep them:
``skip_special_tokens=False``), or the one token ``<|function_call|>``. The body is one
strict JSON object (``arguments`` an object; vLLM's ``json.loads(strict=False)`` takes
raw control characters in strings, read here as escaped, with a Diagnostic). One call
per message; a trailing ``</s>`` (end of sequence, when the server leaves it in) is
part of the block. A ``<|message_sep|>`` that opens anything but a function call is
released as text with a Diagnostic. No reasoning markers are documented for it.
"""

from __future__ import annotations

import json

from callsieve.grammar.api import Block, Capture, Dialect, JsonCall, Marker, Seq, arguments_of
from callsieve.grammar.tags import close_tag, special_token

MESSAGE_SEP = special_token("message_sep")
ROLE_SEP = special_token("role_sep")
FUNCTION_CALL = special_token("function_call")
#: The end of sequence, when the server does not strip it.
EOS = Marker(close_tag("s"), ("</s>",), "</s>")

BLOCKS = (
    Block(MESSAGE_SEP, Seq(Capture(r"\s*function call\s*", label="function call"), ROLE_SEP, JsonCall()), EOS,
          close_optional=True),
    Block(FUNCTION_CALL, JsonCall(), EOS, close_optional=True, name="token"),
)


def render(calls: list[tuple[str, list[tuple[str, str, bool]]]], variant: int = 0) -> str:
    """One call message per call, back to back; odd variants end it with ``</s>``,
    every third one writes the ``<|function_call|>`` token instead of the header."""
    out = []
    for n, p in calls:
        head = "<|function_call|>" if variant % 3 == 2 else "<|message_sep|>function call<|role_sep|>\n"
        out.append(head + json.dumps({"name": n, "arguments": arguments_of(p)}, ensure_ascii=False) + ("</s>" if variant % 2 else ""))
    return "".join(out)


DIALECT = Dialect(
    name="gigachat3",
    title="GigaChat 3 (<|message_sep|>function call<|role_sep|>{…})",
    blocks=BLOCKS,
    sample="Сейчас проверю." + render([("get_weather", [("city", "Moscow", False)])], 1),
    render=render,
)
