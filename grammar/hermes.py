"""Hermes / Qwen2.5 / Qwen3 JSON: ``<tool_call>{"name": …, "arguments": {…}}</tool_call>``.

Wire format (shared/reference/dialects.md §5)::

    <tool_call>
    {"name": "get_weather", "arguments": {"city": "Paris"}}
    </tool_call>

One call per block, several blocks in a row. The body is one strict JSON object: the
name under ``name``, the arguments object under ``arguments`` (or ``parameters``), in
any key order. A ``</tool_call>`` inside a JSON string is data (sglang PR #28698). It
shares ``<tool_call>`` with qwen3_coder (and GLM): what follows the opener decides.

``<tool_call>`` is a special token in Qwen2.5/3 and in some Granite 4 checkpoints
(the alias ``granite4``): serve those with ``skip_special_tokens=False``.
"""

from __future__ import annotations

import json

from callsieve.grammar.api import Block, Dialect, JsonCall, Marker, arguments_of
from callsieve.grammar.reasoning import THINK
from callsieve.grammar.tags import close_tag, open_tag

TOOL_CALL = Marker(open_tag("tool_call"), ("<tool_call>",), "<tool_call>")
TOOL_CALL_END = Marker(close_tag("tool_call"), ("</tool_call>",), "</tool_call>")

#: Tolerated (vLLM reads it): the stream ends after the call's JSON with no
#: ``</tool_call>`` (``missing_block_close``).
BLOCK = Block(TOOL_CALL, JsonCall(), TOOL_CALL_END, eof_close="missing_block_close")


def render(calls: list[tuple[str, list[tuple[str, str, bool]]]], variant: int = 0) -> str:
    """One block per call, as the Qwen template writes them; odd variants put the
    arguments before the name, and every third one leaves out the newlines."""
    out = []
    for name, params in calls:
        args = arguments_of(params)
        body = {"arguments": args, "name": name} if variant % 2 else {"name": name, "arguments": args}
        nl = "" if variant % 3 == 2 else "\n"
        out.append(f"<tool_call>{nl}{json.dumps(body, ensure_ascii=variant % 4 == 3)}{nl}</tool_call>")
    return "\n".join(out)


DIALECT = Dialect(
    name="hermes",
    title='Hermes / Qwen JSON (<tool_call>{"name": …}</tool_call>)',
    blocks=(BLOCK,),
    reasoning=(THINK,),
    # Qwen3 writes <tool_call> inside an unclosed <think>; its stacks take it as a call
    calls_in_reasoning=True,
    sample=render([("get_weather", [("city", "Paris", False), ("days", "3", True)])]),
    render=render,
)
