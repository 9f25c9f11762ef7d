"""DeepSeek V3 / R1 (fenced JSON) and V3.1 (raw JSON): one module, two dialects.

Wire formats (shared/reference/dialects.md §2, §3)::

    V3:   <｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>get_weather
          ```json
          {"location": "Tokyo"}
          ```<｜tool▁call▁end｜><｜tool▁calls▁end｜>
    V3.1: <｜tool▁calls▁begin｜><｜tool▁call▁begin｜>get_weather<｜tool▁sep｜>{"location": "Tokyo"}<｜tool▁call▁end｜><｜tool▁calls▁end｜>

Both open with the same two markers; only what follows ``<｜tool▁call▁begin｜>`` tells
them apart (``function<｜tool▁sep｜>NAME`` vs ``NAME<｜tool▁sep｜>{``), so each block
declares a ``decide`` pattern over the text after the section opener. In V3 the
```` ```json ```` fence is grammar, not prose.

The markers are special tokens: serve with ``skip_special_tokens=False``.

Tolerated (a Diagnostic each, none under ``strict``): ``missing_block_close`` (the
stream ends after a complete call, its section's close stripped),
``calls_open_variant``: R1 distills open the section with ``<｜tool▁calls｜>`` (no
``▁begin``; llama.cpp reads it), and ``orphan_token``: a section's or call's close or
``<｜tool▁sep｜>`` standing in prose alone is framing.
"""

from __future__ import annotations

import json

from callsieve.grammar.api import Block, Call, Capture, Dialect, JsonArgs, Many, Marker, Variant, arguments_of
from callsieve.grammar.reasoning import THINK

BAR, SP = "\uff5c", "\u2581"


def special(name: str) -> Marker:
    text = f"<{BAR}{name.replace(' ', SP)}{BAR}>"
    pattern = "<" + BAR + name.replace(" ", SP) + BAR + ">"
    return Marker(pattern, (text,), text)


#: Tolerated (llama.cpp's DeepSeek R1 parser accepts it): R1 distills' section opener
#: ``<｜tool▁calls｜>``, with no ``▁begin`` (``calls_open_variant``).
R1_CALLS = f"<{BAR}tool{SP}calls{BAR}>"
CALLS = Marker(
    special("tool calls begin").pattern, special("tool calls begin").examples, special("tool calls begin").label,
    variants=(Variant(R1_CALLS, (R1_CALLS,), "calls_open_variant", R1_CALLS),),
)
CALLS_END = special("tool calls end")
CALL = special("tool call begin")
CALL_END = special("tool call end")
SEP = special("tool sep")
FENCE = Marker(r"```(?i:json)", ("```json", "```JSON"), "```json")
FENCE_END = Marker(r"```", ("```",), "```")

NAME = r"\s*(?P<name>[^\s<{}]{1,128})\s*"
_C, _S = CALL.examples[0], SEP.examples[0]

V3_BLOCK = Block(
    CALLS,
    Many(Call(
        CALL, Capture(r"\s*function\s*", label="function"), SEP, Capture(NAME, end_chars="\n", label="NAME"),
        FENCE, JsonArgs(), FENCE_END, close=CALL_END,
    ), min=1),
    CALLS_END,
    eof_close="missing_block_close",  # the stream ends after <｜tool▁call▁end｜>
    decide=Marker(
        rf"\s*{_C}\s*function\s*{_S}\s*[^\s{{<]",
        (f"{_C}function{_S}g", f"\n{_C} function {_S} x"),
        "function<｜tool▁sep｜>NAME",
    ),
)
V31_BLOCK = Block(
    CALLS,
    Many(Call(CALL, Capture(NAME, label="NAME"), SEP, JsonArgs(), close=CALL_END), min=1),
    CALLS_END,
    eof_close="missing_block_close",  # the stream ends after <｜tool▁call▁end｜>
    decide=Marker(rf"\s*{_C}[^<]{{1,128}}{_S}\s*\{{", (f"{_C}get_weather{_S}{{", f"{_C}function{_S} {{"), "NAME<｜tool▁sep｜>{"),
)


#: Tolerated (``orphan_token``): the section's close, a call's close or the name's
#: separator standing in prose with no call around them (what a malformed or
#: half-stripped section leaves): framing, never visible text. (A section that fails is
#: text, its opener with it, as issue 23 pins for Kimi's.)
ORPHANS = ((CALLS_END, "orphan_token"), (CALL_END, "orphan_token"), (SEP, "orphan_token"))


def render_v3(calls: list[tuple[str, list[tuple[str, str, bool]]]], variant: int = 0) -> str:
    out = [CALLS.examples[0]]
    for i, (name, params) in enumerate(calls):
        args = arguments_of(params)
        body = json.dumps(args, ensure_ascii=False, indent=2 if variant % 2 else None)
        out.append(("\n" if i else "") + f"{_C}function{_S}{name}\n```json\n{body}\n```{CALL_END.examples[0]}")
    out.append(CALLS_END.examples[0])
    return "".join(out)


def render_v31(calls: list[tuple[str, list[tuple[str, str, bool]]]], variant: int = 0) -> str:
    out = [CALLS.examples[0]]
    for name, params in calls:
        args = arguments_of(params)
        out.append(f"{_C}{name}{_S}{json.dumps(args, ensure_ascii=False)}{CALL_END.examples[0]}")
    out.append(CALLS_END.examples[0])
    return "".join(out)


V3 = Dialect(
    name="deepseek_v3",
    title="DeepSeek V3 / R1 (function<｜tool▁sep｜>NAME + ```json)",
    blocks=(V3_BLOCK,),
    orphans=ORPHANS,
    reasoning=(THINK,),
    sample=render_v3([("get_weather", [("location", "Tokyo", False)])]),
    render=render_v3,
)
V31 = Dialect(
    name="deepseek_v31",
    title="DeepSeek V3.1 (NAME<｜tool▁sep｜>{…})",
    blocks=(V31_BLOCK,),
    orphans=ORPHANS,
    reasoning=(THINK,),
    # V3.1 puts the tool-call section at the end of an unclosed <think> (sglang PR #9446)
    calls_in_reasoning=True,
    sample=render_v31([("get_weather", [("location", "Tokyo", False)])]),
    render=render_v31,
)
