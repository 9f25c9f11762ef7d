"""Pythonic calls (Llama 3.2 1B/3B, Llama 4, ToolACE, ...): ``[f(a=1), g(b="x")]``.

Wire format (shared/reference/dialects-long-tail.md §2)::

    [get_weather(city="Paris", unit="celsius")]
    [get_weather(city="Paris"), get_time(tz="Europe/Paris", opts={"fmt": "24h"}, days=[1, 2])]

The whole output is the list: a block its own body opens (``Block(None,
PythonCalls())``), read only where the response begins (callsieve.regions.start), and
only when asked for: dialects named, or ``tools=`` given (then its first call must name
a known tool). Llama 4 may wrap it in ``<|python_start|>`` … ``<|python_end|>`` (vLLM's
``llama4_pythonic`` strips them): that block may stand anywhere. Arguments are keyword
arguments, Python literals, read by the engine's ``python_value`` region (never
``eval``); a call that is no literal call is released alone, with a Diagnostic, while
the others stand. Bracket depth ends the list, never the first ``]``.
"""

from __future__ import annotations

import json
from typing import Any

from callsieve.grammar.api import Block, Dialect, Marker, Opt, PythonCalls, Seq

PYTHON_START = Marker(r"<\|python_start\|>", ("<|python_start|>",))
PYTHON_END = Marker(r"<\|python_end\|>", ("<|python_end|>",))

#: One block: opened by ``<|python_start|>`` anywhere in prose, or by the list itself
#: where the response begins; ``<|python_end|>`` may follow the list.
BLOCK = Block(None, Seq(Opt(PYTHON_START), PythonCalls(), Opt(PYTHON_END)), None)


def literal(v: Any) -> str:
    """``v`` (a JSON value) as a Python literal: strings in double quotes with JSON's
    escapes (which Python reads alike), ``True``/``False``/``None``."""
    if isinstance(v, str):
        return json.dumps(v, ensure_ascii=False)
    if v is True or v is False or v is None:
        return repr(v)
    if isinstance(v, list):
        return "[" + ", ".join(literal(x) for x in v) + "]"
    if isinstance(v, dict):
        return "{" + ", ".join(f"{literal(k)}: {literal(x)}" for k, x in v.items()) + "}"
    return json.dumps(v)


def render(calls: list[tuple[str, list[tuple[str, str, bool]]]], variant: int = 0) -> str:
    """In ``<|python_start|>`` … ``<|python_end|>`` (a block that may stand anywhere);
    odd variants leave out the spaces and write the end marker apart."""
    sep, eq = (",", "=") if variant % 2 else (", ", "=")
    out = []
    for name, params in calls:
        args = [f"{k}{eq}{literal(json.loads(v) if is_json else v)}" for k, v, is_json in params]
        out.append(f"{name}({sep.join(args)})")
    end = ("\n" if variant % 4 == 3 else "") + PYTHON_END.examples[0]
    return PYTHON_START.examples[0] + "[" + sep.join(out) + "]" + end


DIALECT = Dialect(
    name="pythonic",
    title="Pythonic calls ([f(a=1), g(b='x')]; bare, or in <|python_start|>)",
    blocks=(BLOCK,),
    sample=render([("get_weather", [("city", "Paris", False), ("days", "3", True)])]),
    render=render,
)
