"""LongCat-Flash: Hermes with its tags renamed, ``<longcat_tool_call>{…}</longcat_tool_call>``.

Wire format (shared/reference/dialects-long-tail.md §17)::

    <longcat_tool_call>{"name": "get_weather", "arguments": {"city": "Paris"}}</longcat_tool_call>

One call per block, several blocks in a row; the body is one strict JSON object (the
name under ``name``, the arguments under ``arguments`` or ``parameters``, any key
order), so a ``</longcat_tool_call>`` inside a JSON string is data. vLLM also reads an
unterminated last block (``<longcat_tool_call>(.*)``); here a block the stream ends in
is released as text with an ``unterminated_block`` Diagnostic, as every block is.
No reasoning markers are documented for it.
"""

from __future__ import annotations

import json

from callsieve.grammar.api import Block, Dialect, JsonCall, Marker, arguments_of
from callsieve.grammar.tags import close_tag, open_tag

OPEN = Marker(open_tag("longcat_tool_call"), ("<longcat_tool_call>",), "<longcat_tool_call>")
CLOSE = Marker(close_tag("longcat_tool_call"), ("</longcat_tool_call>",), "</longcat_tool_call>")

BLOCK = Block(OPEN, JsonCall(), CLOSE)


def render(calls: list[tuple[str, list[tuple[str, str, bool]]]], variant: int = 0) -> str:
    """One block per call, back to back; odd variants put a newline around the body."""
    nl = "\n" if variant % 2 else ""
    return "".join(
        f"<longcat_tool_call>{nl}{json.dumps({'name': n, 'arguments': arguments_of(p)}, ensure_ascii=variant % 4 == 3)}{nl}"
        "</longcat_tool_call>"
        for n, p in calls
    )


DIALECT = Dialect(
    name="longcat",
    title='LongCat-Flash (<longcat_tool_call>{"name": …}</longcat_tool_call>)',
    blocks=(BLOCK,),
    sample=render([("get_weather", [("city", "Paris", False)])]),
    render=render,
)
