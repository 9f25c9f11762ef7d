"""Phi-4-mini / Phi-4-multimodal: the word ``functools`` then a JSON array of calls.

Wire format (shared/reference/dialects-long-tail.md §9)::

    functools[{"name": "get_weather", "arguments": {"city": "Paris"}}, {"name": "get_time", "arguments": {"tz": "CET"}}]

The official system prompt asks to "prefix function calls with functools marker (no
closing marker required)": the block is ``functools`` (a word: not inside
``myfunctools``), then a strict JSON array of ``{"name", "arguments"}`` objects
(``parameters`` read too); it ends where the array does. vLLM cuts the array at its
first ``]`` (``functools\\[(.*?)\\]``): a ``]`` inside an argument is data here, and the
calls stream (vLLM's parser does not stream at all). Text before the block is kept
(vLLM discards it). ``functools`` written in prose without a ``[`` after it is released
as text, with a Diagnostic. The prompt's other form, ``<|tool_calls|>[…]<|/tool_calls|>``,
is not read (vLLM ignores it too).
"""

from __future__ import annotations

import json

from callsieve.grammar.api import Block, Dialect, JsonCalls, Marker, arguments_of

FUNCTOOLS = Marker(r"functools", ("functools",), "functools", anchor="word")

BLOCK = Block(FUNCTOOLS, JsonCalls(), None)


def render(calls: list[tuple[str, list[tuple[str, str, bool]]]], variant: int = 0) -> str:
    """One block for all the calls."""
    return "functools" + json.dumps([{"name": n, "arguments": arguments_of(p)} for n, p in calls], ensure_ascii=False)


DIALECT = Dialect(
    name="phi4_mini",
    title='Phi-4-mini (functools[{"name": …}, …])',
    blocks=(BLOCK,),
    sample=render([("get_weather", [("city", "Paris", False)]), ("get_time", [("tz", "CET", False)])]),
    render=render,
)
