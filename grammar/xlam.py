"""Salesforce xLAM-2: a bare JSON array of calls, ``[{"name": …, "arguments": {…}}, …]``.

Wire format (shared/reference/dialects-long-tail.md §19)::

    [{"name": "get_weather", "arguments": {"city": "Paris"}}, {"name": "get_time", "arguments": {"tz": "CET"}}]

The canonical output is the array alone: a block its own body opens (``Block(None,
JsonCalls())``, its lead ``[`` then ``{``), read only where the response begins
(callsieve.regions.start: after whitespace or a reasoning section's ``</think>``), and
only when asked for: dialects named, or ``tools=`` given (then its first call must name
a known tool), as Llama's bare JSON is (docs/bare-calls.md). vLLM's parser also takes the
array

- inside ``<tool_call>`` … ``</tool_call>``: Granite 3.1's block (``granite.BLOCKS``), the
  same declaration, so with both dialects enabled it counts once and its calls are
  Granite's (``dialect="granite"``); enabled alone, xLAM reads it;
- after ``[TOOL_CALLS]``: Mistral's block (``mistral.BLOCK``), likewise (with ``mistral``
  enabled its calls are Mistral's). Declared apart, the two would share the bare first
  marker ``[TOOL_CALLS]`` with the same array after it: no fork could tell them apart.
  ``[TOOL_CALLS]`` is a special token: the server must keep it
  (``skip_special_tokens=False``) for this form to be seen.
- after ``</think>``: the response begins there (``THINK``).

Not read: the array inside a Markdown code fence (```` ```json ````), which vLLM strips:
in a fence markup is text (the contract's CommonMark rule), and a fenced JSON array is
what a user asking for JSON gets. An item with no ``name`` makes the array malformed (it
is released as text, with a Diagnostic, as every JSON array of calls is here; vLLM skips
the item), one with no ``arguments`` is a call with none (``{}``). Ids are minted (none
on the wire).
"""

from __future__ import annotations

import json

from callsieve.grammar import granite, mistral
from callsieve.grammar.api import Block, Dialect, JsonCall, JsonCalls, arguments_of
from callsieve.grammar.reasoning import THINK

#: The bare array, where the response begins.
BARE = Block(None, JsonCalls(JsonCall(name=("name",), arguments=("arguments",))), None)
#: ``<tool_call>[…]</tool_call>``: Granite's block, declared once for both.
TAG = granite.BLOCKS[1]


def render(calls: list[tuple[str, list[tuple[str, str, bool]]]], variant: int = 0) -> str:
    """In a wrapper that may stand anywhere: ``<tool_call>`` … ``</tool_call>`` (even
    variants) or after ``[TOOL_CALLS]`` (odd); the bare array stands only at the start."""
    array = json.dumps([{"name": n, "arguments": arguments_of(p)} for n, p in calls], ensure_ascii=False)
    return f"[TOOL_CALLS]{array}" if variant % 2 else f"<tool_call>{array}</tool_call>"


DIALECT = Dialect(
    name="xlam",
    title='xLAM-2 ([{"name": …, "arguments": {…}}]; bare, in <tool_call>, after [TOOL_CALLS])',
    blocks=(BARE, TAG, mistral.BLOCK),
    # (Mistral's block, Mistral's tolerance: its [TOOL_CALLS] of a block that failed is
    # framing, ``orphan_token``, whichever of the two dialects the block counts as)
    orphans=tuple(o for o in mistral.DIALECT.orphans if o[0] == mistral.TOOL_CALLS),
    reasoning=(THINK,),
    sample=render([("get_weather", [("city", "Paris", False)]), ("get_time", [("tz", "CET", False)])]),
    render=render,
)
