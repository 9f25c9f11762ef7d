"""Hunyuan-A13B and AI21 Jamba: ``<tool_calls>`` around a JSON array of calls.

Wire format (shared/reference/dialects-long-tail.md §14, §18)::

    <think>…</think>
    <tool_calls>[{"name": "get_weather", "arguments": {"city": "Paris"}}, {"name": "get_time", "arguments": {"tz": "CET"}}]</tool_calls>

One block holds every call: a strict JSON array of ``{"name", "arguments"}`` objects
(``parameters`` is read too), so brackets and ``</tool_calls>`` inside strings are data
and nesting is read to any depth (Hunyuan's streaming regex reads one level of ``{}``;
Jamba's swaps ``'`` for ``"`` to find its deltas). Jamba writes the same block with
``<tool_calls>`` as a vocabulary token (``skip_special_tokens=False``); it has no
reasoning, Hunyuan reasons in ``<think>`` … ``</think>``, and a block inside reasoning
is reasoning (Hunyuan's parser ignores it there).

It shares ``<tool_calls>`` with the gateway ``xml`` dialect (``<tool_calls><invoke …>``):
what follows the opener decides, a ``[`` here. Not read: Hunyuan's ``<answer>``
wrapper (unverified in the reference) and its ``助手：`` template prefix, which stay text.
"""

from __future__ import annotations

import json

from callsieve.grammar.api import Block, Dialect, JsonCalls, Marker, arguments_of
from callsieve.grammar.reasoning import THINK
from callsieve.grammar.tags import close_tag, open_tag

OPEN = Marker(open_tag("tool_calls"), ("<tool_calls>",), "<tool_calls>")
CLOSE = Marker(close_tag("tool_calls"), ("</tool_calls>",), "</tool_calls>")

BLOCK = Block(OPEN, JsonCalls(), CLOSE)


def render(calls: list[tuple[str, list[tuple[str, str, bool]]]], variant: int = 0) -> str:
    """One block for all the calls; odd variants indent the array, every third one
    puts the arguments before the name."""
    objs = [{"arguments": arguments_of(p), "name": n} if variant % 3 == 2 else {"name": n, "arguments": arguments_of(p)}
            for n, p in calls]
    return "<tool_calls>" + json.dumps(objs, ensure_ascii=False, indent=2 if variant % 2 else None) + "</tool_calls>"


DIALECT = Dialect(
    name="hunyuan",
    title='Hunyuan-A13B / Jamba (<tool_calls>[{"name": …}, …]</tool_calls>)',
    blocks=(BLOCK,),
    reasoning=(THINK,),
    sample=render([("get_weather", [("city", "Paris", False)]), ("get_time", [("tz", "CET", False)])]),
    render=render,
)
