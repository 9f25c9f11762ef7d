"""Liquid LFM2 / LFM2.5: ``<|tool_call_start|>`` … ``<|tool_call_end|>`` around a list of calls.

Wire format (shared/reference/dialects-long-tail.md §11)::

    Let me check.<|tool_call_start|>[get_weather(city="Paris"), get_time(tz="CET")]<|tool_call_end|>
    <|tool_call_start|>[{"name": "get_weather", "arguments": {"city": "Paris"}}]<|tool_call_end|>

Special tokens (``skip_special_tokens=False``), no separator between blocks. The body
is a Python list (``PythonCalls``): items are calls with keyword arguments as Python
literals (JSON's ``true``/``false``/``null`` too), or call objects
``{"name": …, "arguments": {…}}``; streamed as canonical JSON, never ``eval``'d, with
bracket depth (SGLang's streaming capture ends at the first ``]``). A call that is no
literal call is released alone, with a Diagnostic, while the others stand. SGLang's
repairs are read as tolerances (each with its Diagnostic, none under ``strict``): a raw
newline in a string, a leading-zero integer (``month=07``), a Python keyword as a
parameter name (``from=``).
"""

from __future__ import annotations

import json

from callsieve.grammar.api import Block, Dialect, JsonCall, PythonCalls, arguments_of
from callsieve.grammar.tags import special_token

START = special_token("tool_call_start")
END = special_token("tool_call_end")

BLOCK = Block(START, PythonCalls(json_literals=True, objects=JsonCall()), END)


def _py(v: object) -> str:
    """A JSON value as a Python literal (``True``, ``None``; strings in double quotes)."""
    if isinstance(v, str):
        return json.dumps(v, ensure_ascii=False)
    if isinstance(v, dict):
        return "{" + ", ".join(f"{_py(k)}: {_py(x)}" for k, x in v.items()) + "}"
    if isinstance(v, list):
        return "[" + ", ".join(_py(x) for x in v) + "]"
    return repr(v)


def render(calls: list[tuple[str, list[tuple[str, str, bool]]]], variant: int = 0) -> str:
    """One block for all the calls: Python calls (keyword arguments as Python literals)
    or, every third variant, call objects."""
    if variant % 3 == 2:
        body = json.dumps([{"name": n, "arguments": arguments_of(p)} for n, p in calls], ensure_ascii=False)
    else:
        body = "[" + ", ".join(f"{n}(" + ", ".join(f"{k}={_py(v)}" for k, v in arguments_of(p).items()) + ")"
                               for n, p in calls) + "]"
    return "<|tool_call_start|>" + body + "<|tool_call_end|>"


DIALECT = Dialect(
    name="lfm2",
    title="LFM2 (<|tool_call_start|>[…]<|tool_call_end|>)",
    blocks=(BLOCK,),
    sample="Let me check." + render([("get_weather", [("city", "Paris", False)]), ("get_time", [("tz", "CET", False)])]),
    render=render,
)
