"""Kimi K2: special-token sections, ``functions.NAME:IDX`` call ids, JSON arguments.

Wire format (shared/reference/dialects.md §7)::

    <|tool_calls_section_begin|><|tool_call_begin|>functions.get_weather:0<|tool_call_argument_begin|>{"city": "Beijing"}<|tool_call_end|><|tool_calls_section_end|>

The call text is the wire id (kept as the call's id) and holds the name; names may
hold ``-`` and ``.`` (SGLang's ``[\\w.]+`` drops the first; vLLM's ``split(".")[-1]``
cuts ``mcp.read`` to ``read``). vLLM's singular section spelling is accepted.

The markers are special tokens: serve with ``skip_special_tokens=False``.
"""

from __future__ import annotations

import json

from callsieve.grammar.api import Block, Call, Capture, Dialect, JsonArgs, Many, Marker, Variant, arguments_of
from callsieve.grammar.reasoning import THINK


def special(*names: str) -> Marker:
    alts = "|".join(names)
    return Marker(rf"<\|(?:{alts})\|>", tuple(f"<|{n}|>" for n in names), f"<|{names[0]}|>")


SECTION = special("tool_calls_section_begin", "tool_call_section_begin")
SECTION_END = special("tool_calls_section_end", "tool_call_section_end")
CALL = special("tool_call_begin")
ARGUMENTS = special("tool_call_argument_begin")
CALL_END = special("tool_call_end")

#: ``functions.NAME:IDX`` (``functions.`` may be left out, as SGLang and vLLM read it);
#: the whole is the id, NAME the name. A name is never digits alone (``0:1`` names
#: nothing).
CALL_ID = r"\s*(?P<id>(?:functions\.)?+(?P<name>(?![0-9]*:)[^\s:<]{1,128}):[0-9]{1,9})\s*"

#: Tolerance (``call_id_as_written``): an id in no such form (``functions.get_weather``,
#: ``get_weather``, ``functionsexec5``) names the call as written (``functions.``
#: dropped), with a Diagnostic; an id that holds no name (``0``: digits alone) is none.
CALL_ID_AS_WRITTEN = Variant(
    r"\s*(?P<id>(?:functions\.)?+(?P<name>(?![0-9]*\s*\Z)[^\s:<]{1,128}))\s*",
    ("functions.get_weather", "get_weather", "functionsexec5"),
    "call_id_as_written",
)

#: Tolerance (dialects.md §12): ids written otherwise (``functionsexec5``, sglang#21377;
#: ``functions_read_file_3``, exo#2282; ``call00003``, sglang#25362): the name read
#: without the ``functions`` prefix and the index, when that names a known tool.
CALL_ID_VARIANT = Variant(
    r"\s*(?P<id>(?:functions[._]?)?(?P<name>[^\s:<]{1,128}?)(?:[_:]?[0-9]{1,9})?)\s*",
    ("functionsexec5", "functions_read_file_3", "call00003"),
    "call_id_variant",
)
#: Tolerance (vLLM's rule): an id and no name (``<|tool_call_begin|>0<|tool_call_argument_begin|>``)
#: names the one tool declared, only when ``tools=`` declares exactly one; never a
#: guess from the argument keys.
NAMELESS_ID = Variant(r"\s*(?P<id>[0-9]{1,9})\s*", ("0", "12", " 3 "), "nameless_call")

CALLS = Many(Call(CALL, Capture(CALL_ID, label="functions.NAME:IDX", variants=(CALL_ID_VARIANT, NAMELESS_ID),
                          loose=CALL_ID_AS_WRITTEN), ARGUMENTS, JsonArgs(), close=CALL_END, ids="wire"), min=1)
#: Tolerated (``missing_block_close``): the stream ends after a call's JSON arguments
#: with ``<|tool_call_end|>`` and the section's close left out (stop tokens stripped).
BLOCK = Block(SECTION, CALLS, SECTION_END, eof_close="missing_block_close")
#: Tolerated (``missing_block_open``; llama.cpp reads it, real output): calls with no
#: section around them, ``<|tool_call_begin|>`` standing in prose; ended where the
#: grammar stops, by a section close, or (``missing_block_close``) by the end of the
#: stream after complete JSON arguments. With ``tools=``, every call must name a known
#: tool; a call streams once its arguments or its close are read.
BARE = Block(None, CALLS, SECTION_END, close_optional=True, name="bare", tolerance="missing_block_open",
             eof_close="missing_block_close")


def render(calls: list[tuple[str, list[tuple[str, str, bool]]]], variant: int = 0) -> str:
    parts = ["<|tool_calls_section_begin|>"]
    sep = "\n" if variant % 2 else ""
    for i, (name, params) in enumerate(calls):
        args = arguments_of(params)
        parts.append(f"{sep}<|tool_call_begin|>functions.{name}:{i}<|tool_call_argument_begin|>{json.dumps(args, ensure_ascii=False)}<|tool_call_end|>")
    parts.append(f"{sep}<|tool_calls_section_end|>")
    return "".join(parts)


DIALECT = Dialect(
    name="kimi_k2",
    title="Kimi K2 (<|tool_call_begin|>functions.NAME:IDX)",
    blocks=(BLOCK, BARE),
    # Tolerated (``orphan_token``): the section's close, a call's close or its arguments'
    # opener standing in prose with no call around it (what is left of a failed section)
    # are framing, never visible text.
    orphans=((SECTION_END, "orphan_token"), (CALL_END, "orphan_token"), (ARGUMENTS, "orphan_token")),
    reasoning=(THINK,),
    # Kimi-K2-Thinking ends an unclosed <think> with its tool-call section (dialects.md §12)
    calls_in_reasoning=True,
    sample=render([("get_weather", [("city", "Beijing", False)])]),
    render=render,
)
