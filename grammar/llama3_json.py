"""Llama 3.x JSON (custom tools): ``{"name": …, "parameters": {…}}``, bare at the start
of the response or after ``<|python_tag|>``; ``;`` between calls.

Wire format (shared/reference/dialects-long-tail.md §1, dialects.md §9b)::

    {"name": "get_weather", "parameters": {"city": "Paris"}}
    <|python_tag|>{"name": "get_weather", "parameters": {"city": "Paris"}}; {"name": "get_time", "parameters": {"tz": "Europe/Paris"}}

The arguments are under ``parameters`` or ``arguments``. There is no close marker: the
calls end where their grammar stops (``<|eot_id|>``, ``<|eom_id|>`` then end the turn:
framing). The bare form has no marker at all: it is a block its own body opens
(``Block(None, …)`` beginning with ``JsonCall``), read only where the response begins
(callsieve.regions.start), and only when asked for: dialects named, or ``tools=`` given
(then its first call must name a known tool). Built-in tools (``<|python_tag|>
brave_search.call(query="…")``) are Python code, not read as calls.

``<|python_tag|>``, ``<|eot_id|>`` and ``<|eom_id|>`` are special tokens: the server must
keep them (``skip_special_tokens=False``) for the tagged form and the framing to be seen;
the bare form needs no token.
"""

from __future__ import annotations

import json

from callsieve.grammar.api import Block, Dialect, JsonCall, Many, Marker, Opt, Seq, arguments_of

PYTHON_TAG = Marker(r"<\|python_tag\|>", ("<|python_tag|>",))
SEMI = Marker(";", (";",))
#: vLLM asserts a call does not carry both; either is read, the first given.
CALL = JsonCall(name=("name",), arguments=("parameters", "arguments"))
#: One call, or several with ";" between them (vLLM skips "; "; SGLang splits on ";");
#: a ";" after the last one ends nothing.
CALLS = Seq(CALL, Many(Seq(SEMI, Opt(CALL))))

#: One block: opened by ``<|python_tag|>`` anywhere in prose, or by its own first call
#: where the response begins (a bare block: its first leaves are the tag and the body).
BLOCK = Block(None, Seq(Opt(PYTHON_TAG), CALLS), None)
#: End-of-turn tokens: framing wherever they stand in prose.
EOT = Marker(r"<\|eot_id\|>", ("<|eot_id|>",))
EOM = Marker(r"<\|eom_id\|>", ("<|eom_id|>",))


def render(calls: list[tuple[str, list[tuple[str, str, bool]]]], variant: int = 0) -> str:
    """After ``<|python_tag|>`` (a block that may stand anywhere); odd variants use
    ``arguments`` and no space after the ``;``."""
    key = "arguments" if variant % 2 else "parameters"
    sep = ";" if variant % 2 else "; "
    return PYTHON_TAG.examples[0] + sep.join(
        json.dumps({"name": name, key: arguments_of(params)}, ensure_ascii=False) for name, params in calls)


DIALECT = Dialect(
    name="llama3_json",
    title='Llama 3.x JSON ({"name": …, "parameters": {…}}; bare or after <|python_tag|>)',
    blocks=(BLOCK,),
    framing=(EOT, EOM),
    sample=render([("get_weather", [("city", "Paris", False)])]),
    render=render,
)
