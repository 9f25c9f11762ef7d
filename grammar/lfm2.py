"""Liquid LFM2 / LFM2.5: ``<|tool_call_start|>`` … ``<|tool_call_end|>`` around a list of calls.

Wire format (shared/reference/dialects-long-tail.md §11)::

    Let me check.<|tool_call_start|>[get_weather(city="Paris"), get_time(tz="CET")]<|tool_call_end|>
    <|tool_call_start|>[{"name": "get_weather", "arguments": {"city": "Paris"}}]<|tool_call_end|>

Special tokens (``skip_special_tokens=False``), no separator between blocks. The body
is a JSON array of ``{"name", "arguments"}`` objects (read strictly: brackets and the
close inside strings are data), or a Python list of calls. Not yet read: the Python
list (it needs a value grammar of Python literals): such a block is released as text
with a Diagnostic.
"""

from __future__ import annotations

import json

from callsieve.grammar.api import Block, Dialect, JsonCalls, arguments_of
from callsieve.grammar.tags import special_token

START = special_token("tool_call_start")
END = special_token("tool_call_end")

BLOCK = Block(START, JsonCalls(), END)


def render(calls: list[tuple[str, list[tuple[str, str, bool]]]], variant: int = 0) -> str:
    """One block for all the calls, in its JSON form."""
    return "<|tool_call_start|>" + json.dumps([{"name": n, "arguments": arguments_of(p)} for n, p in calls],
                                               ensure_ascii=False) + "<|tool_call_end|>"


DIALECT = Dialect(
    name="lfm2",
    title="LFM2 (<|tool_call_start|>[…]<|tool_call_end|>)",
    blocks=(BLOCK,),
    sample="Let me check." + render([("get_weather", [("city", "Paris", False)])]),
    render=render,
)
