"""IBM Granite 3.x (``granite``) and granite-20b-functioncalling (``granite_20b_fc``).

Wire formats (shared/reference/dialects-long-tail.md §5, §7)::

    granite:         <|tool_call|>[{"name": "get_weather", "arguments": {"city": "Paris"}}, {"name": "get_time", "arguments": {"tz": "CET"}}]
    granite_20b_fc:  Sure.<function_call> {"name": "get_weather", "arguments": {"city": "Paris"}} <function_call> {"name": "get_time", "arguments": {"tz": "CET"}}

Granite 3.0 writes the special token ``<|tool_call|>`` (``skip_special_tokens=False``),
3.1 and later the text ``<tool_call>``; then a strict JSON array of calls (the
arguments may come before the name), with no close: the block ends where the array
does. A ``</tool_call>`` after the array is read as its close (xLAM writes one).
``<tool_call>`` is shared with hermes, qwen3_coder and glm45: the ``[`` after it
decides. vLLM reads Granite's calls only at the start of the output; here text may
come before them. Granite 3.2/3.3's plain-text reasoning headers ("Here is my thought
process:") are not read (unverified in the reference; they stay text).

granite-20b-functioncalling writes ``<function_call>`` before each call object and no
close: one bare block of calls, ended where the grammar stops.
"""

from __future__ import annotations

import json

from callsieve.grammar.api import Block, Dialect, JsonCall, JsonCalls, Many, Marker, Seq, arguments_of
from callsieve.grammar.tags import close_tag, open_tag, special_token

TOOL_CALL_TOKEN = special_token("tool_call")
TOOL_CALL = Marker(open_tag("tool_call"), ("<tool_call>",), "<tool_call>")
TOOL_CALL_END = Marker(close_tag("tool_call"), ("</tool_call>",), "</tool_call>")
FUNCTION_CALL = Marker(open_tag("function_call"), ("<function_call>",), "<function_call>")

BLOCKS = (
    Block(TOOL_CALL_TOKEN, JsonCalls(), None),
    Block(TOOL_CALL, JsonCalls(), TOOL_CALL_END, close_optional=True, name="tag"),
)
FC_BLOCK = Block(None, Many(Seq(FUNCTION_CALL, JsonCall()), min=1), None)


def _objects(calls: list[tuple[str, list[tuple[str, str, bool]]]], variant: int) -> list[dict[str, object]]:
    # (Granite "emits arguments before name": odd variants do too)
    return [{"arguments": arguments_of(p), "name": n} if variant % 2 else {"name": n, "arguments": arguments_of(p)}
            for n, p in calls]


def render(calls: list[tuple[str, list[tuple[str, str, bool]]]], variant: int = 0) -> str:
    """One block for all the calls: the 3.0 token, or (variant % 4 >= 2) the 3.1 tag."""
    head = "<tool_call>" if variant % 4 >= 2 else "<|tool_call|>"
    return head + json.dumps(_objects(calls, variant), ensure_ascii=False)


def render_20b(calls: list[tuple[str, list[tuple[str, str, bool]]]], variant: int = 0) -> str:
    """``<function_call> {…}`` per call, spaced as the model writes them."""
    return " ".join(f"<function_call> {json.dumps(o, ensure_ascii=False)}" for o in _objects(calls, variant))


DIALECT = Dialect(
    name="granite",
    title='Granite 3.x (<|tool_call|>[{"name": …}, …])',
    blocks=BLOCKS,
    sample=render([("get_weather", [("city", "Paris", False)]), ("get_time", [("tz", "CET", False)])]),
    render=render,
)
DIALECT_20B = Dialect(
    name="granite_20b_fc",
    title='granite-20b-functioncalling (<function_call> {"name": …})',
    blocks=(FC_BLOCK,),
    sample="Sure." + render_20b([("get_weather", [("city", "Paris", False)]), ("get_time", [("tz", "CET", False)])]),
    render=render_20b,
)
