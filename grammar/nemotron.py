"""NVIDIA Nemotron JSON: ``<TOOLCALL>[…]</TOOLCALL>``.

Wire format (shared/reference/dialects-long-tail.md §8)::

    I'll look that up.<TOOLCALL>[{"name": "get_weather", "arguments": {"city": "Paris"}}, {"name": "get_time", "arguments": {"tz": "CET"}}]</TOOLCALL>

The body is a strict JSON array of ``{"name", "arguments"}`` objects, or one such
object alone (both are the format); several blocks may follow one another, and text
may stand around them. The server must keep the tags (``skip_special_tokens=False``).
Reasoning: ``<think>`` … ``</think>`` (unverified for this family in the reference).
Nemotron-3-Nano writes Qwen3-Coder XML instead: pick the dialect by checkpoint.
``arguments`` written as a JSON-encoded string (vLLM passes it through) is decoded once
when it holds an object, with an ``arguments_as_string`` Diagnostic; any other string
makes the block malformed.
"""

from __future__ import annotations

import json

from callsieve.grammar.api import Alt, Block, Dialect, JsonCall, JsonCalls, Marker, arguments_of
from callsieve.grammar.reasoning import THINK
from callsieve.grammar.tags import close_tag, open_tag

OPEN = Marker(open_tag("toolcall"), ("<TOOLCALL>",), "<TOOLCALL>")
CLOSE = Marker(close_tag("toolcall"), ("</TOOLCALL>",), "</TOOLCALL>")

BLOCK = Block(OPEN, Alt(JsonCalls(), JsonCall()), CLOSE)


def render(calls: list[tuple[str, list[tuple[str, str, bool]]]], variant: int = 0) -> str:
    """One block for all the calls; a lone call is written as a bare object in odd
    variants."""
    objs = [{"name": n, "arguments": arguments_of(p)} for n, p in calls]
    body = objs[0] if len(objs) == 1 and variant % 2 else objs
    return "<TOOLCALL>" + json.dumps(body, ensure_ascii=False) + "</TOOLCALL>"


DIALECT = Dialect(
    name="nemotron",
    title='Nemotron (<TOOLCALL>[{"name": …}, …]</TOOLCALL>)',
    blocks=(BLOCK,),
    reasoning=(THINK,),
    sample=render([("get_weather", [("city", "Paris", False)]), ("get_time", [("tz", "CET", False)])]),
    render=render,
)
