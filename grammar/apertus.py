"""Swiss AI Apertus: ``<|tools_prefix|>`` then a JSON array of calls keyed by their names.

Wire format (shared/reference/dialects-long-tail.md §20)::

    I will check. <|tools_prefix|>[{"get_weather": {"city": "Paris"}}, {"get_time": {"tz": "CET"}}]<|tools_suffix|>

Special tokens (``skip_special_tokens=False``). Each call is an object of one key, the
function's name, whose value is the arguments object (``JsonCall(keyed=True)``): there
is no ``"name"`` field. ``<|tools_suffix|>`` may be missing (a truncated stream): the
block then ends where the array does. Text may stand before and after the block.
Apertus's reasoning delimiters were not read for the reference: none is declared.
"""

from __future__ import annotations

import json

from callsieve.grammar.api import Block, Dialect, JsonCall, JsonCalls, arguments_of
from callsieve.grammar.tags import special_token

PREFIX = special_token("tools_prefix")
SUFFIX = special_token("tools_suffix")

BLOCK = Block(PREFIX, JsonCalls(JsonCall(keyed=True, label='{"NAME": {…}}'), label='[{"NAME": {…}}, …]'), SUFFIX,
              close_optional=True)


def render(calls: list[tuple[str, list[tuple[str, str, bool]]]], variant: int = 0) -> str:
    """One block for all the calls; every third variant leaves the suffix out."""
    body = json.dumps([{n: arguments_of(p)} for n, p in calls], ensure_ascii=False)
    return "<|tools_prefix|>" + body + ("" if variant % 3 == 2 else "<|tools_suffix|>")


DIALECT = Dialect(
    name="apertus",
    title='Apertus (<|tools_prefix|>[{"NAME": {…}}, …]<|tools_suffix|>)',
    blocks=(BLOCK,),
    sample="I will check. " + render([("get_weather", [("city", "Paris", False)]), ("get_time", [("tz", "CET", False)])]),
    render=render,
)
