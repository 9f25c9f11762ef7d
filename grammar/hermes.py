"""Hermes / Qwen2.5 / Qwen3 JSON: ``<tool_call>{"name": …, "arguments": {…}}</tool_call>``.

Wire format (shared/reference/dialects.md §5)::

    <tool_call>
    {"name": "get_weather", "arguments": {"city": "Paris"}}
    </tool_call>

One call per block, several blocks in a row. The body is one strict JSON object: the
name under ``name``, the arguments object under ``arguments`` (or ``parameters``), in
any key order. A ``</tool_call>`` inside a JSON string is data (sglang PR #28698). It
shares ``<tool_call>`` with qwen3_coder (and GLM): what follows the opener decides.

Tolerated (each with its Diagnostic, none under ``strict``): the stream ending with
the close stripped (``missing_block_close``); Hermes-family wrappers llama.cpp reads:
``<function=NAME>{…}</function>`` and ``<function name="NAME">{…}</function>``
(``function_wrapper``), and, with ``tools=`` only, ``<tool>``, ``<tools>``,
``<response>``, ``<json>`` or ``<xml>`` around exactly ``{"name": …, "arguments": …}``
naming a known tool (``generic_wrapper``). Never in a fence, never bare JSON in prose.

``<tool_call>`` is a special token in Qwen2.5/3 and in some Granite 4 checkpoints
(the alias ``granite4``): serve those with ``skip_special_tokens=False``.
"""

from __future__ import annotations

import json

from callsieve.grammar.api import Alt, Block, Call, Dialect, JsonArgs, JsonCall, Marker, arguments_of
from callsieve.grammar.qwen3_coder import FUNCTION, FUNCTION_END
from callsieve.grammar.reasoning import THINK
from callsieve.grammar.tags import END, LT, close_tag, open_tag

TOOL_CALL = Marker(open_tag("tool_call"), ("<tool_call>",), "<tool_call>")
TOOL_CALL_END = Marker(close_tag("tool_call"), ("</tool_call>",), "</tool_call>")

#: Tolerated (vLLM reads it): the stream ends after the call's JSON with no
#: ``</tool_call>`` (``missing_block_close``).
BLOCK = Block(TOOL_CALL, JsonCall(), TOOL_CALL_END, eof_close="missing_block_close")

#: Tolerated (llama.cpp's Hermes 2 Pro parser, Functionary v3.1): a call written
#: ``<function=NAME>{…}</function>`` or ``<function name="NAME">{…}</function>``, its
#: arguments one JSON object (``function_wrapper``). ``<function=NAME>`` is
#: qwen3_coder's call open too (the same marker): what follows it decides (a fork),
#: ``{`` here, ``<parameter=`` or ``</function>`` there. With ``tools=``, its calls must
#: name known tools, else it is text.
FUNCTION_NAMED = Marker(rf"{LT}(?i:function)\s{{1,8}}(?i:name)\s{{0,4}}=\s{{0,4}}\"(?P<name>[^\"<>\uff1c\[\n]{{1,128}})\"{END}",
                        ('<function name="f">', '<function name="get_weather" >'), '<function name="…">')
#: (One call a block, as ``<tool_call>`` blocks are: each ``<function=`` is decided
#: apart, so a Qwen3-Coder call after one is read as Qwen3-Coder's.)
FUNCTIONS = Block(
    None,
    Alt(Call(FUNCTION, JsonArgs(), close=FUNCTION_END), Call(FUNCTION_NAMED, JsonArgs(), close=FUNCTION_END)),
    None,
    name="function",
    tolerance="function_wrapper",
)


def _wrapper(tag: str) -> Block:
    return Block(Marker(open_tag(tag), (f"<{tag}>",), f"<{tag}>"), JsonCall(name=("name",), arguments=("arguments",), only=True),
                 Marker(close_tag(tag), (f"</{tag}>",), f"</{tag}>"), name=tag, tolerance="generic_wrapper", needs_tools=True)


#: Tolerated (llama.cpp's Hermes 2 Pro parser): a call object wrapped in a tag the format
#: does not have, ``<tool>``, ``<tools>``, ``<response>``, ``<json>`` or ``<xml>`` (any case)
#: and its close, ``generic_wrapper``. Such tags are common in HTML and XML answers, so
#: the evidence must be strong: only with ``tools=``, the body exactly ``{"name": …,
#: "arguments": {…}}`` naming a known tool; its calls stream only once the close is read.
#: (``<response>`` is ERNIE 4.5's framing: with it enabled, framing.)
WRAPPERS = tuple(_wrapper(t) for t in ("tool", "tools", "response", "json", "xml"))


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
    blocks=(BLOCK, FUNCTIONS, *WRAPPERS),
    reasoning=(THINK,),
    # Qwen3 writes <tool_call> inside an unclosed <think>; its stacks take it as a call
    calls_in_reasoning=True,
    sample=render([("get_weather", [("city", "Paris", False), ("days", "3", True)])]),
    render=render,
)
