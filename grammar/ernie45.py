"""Baidu ERNIE 4.5 (thinking variants): Hermes blocks, with ``<response>`` around a plain answer.

Wire format (shared/reference/dialects-long-tail.md §16)::

    The user wants weather.
    </think>


    <tool_call>
    {"name": "get_weather", "arguments": {"city": "Paris"}}
    </tool_call>

Reasoning ends with ``</think>`` (the prompt opened it: ``start_in_reasoning=True``),
then three newlines. A call is Hermes's block (``callsieve.grammar.hermes``: one strict
JSON object per ``<tool_call>``), the same block object: with both dialects enabled it
is read once, as hermes's. A plain answer is wrapped in ``<response>`` … ``</response>``:
framing, in the ``raw`` of the text beside it (vLLM's streaming parser strips them and
the newline after each).
"""

from __future__ import annotations

from callsieve.grammar import hermes
from callsieve.grammar.api import Dialect, Marker
from callsieve.grammar.reasoning import THINK
from callsieve.grammar.tags import close_tag, open_tag

RESPONSE = Marker(open_tag("response"), ("<response>",), "<response>")
RESPONSE_END = Marker(close_tag("response"), ("</response>",), "</response>")


def render(calls: list[tuple[str, list[tuple[str, str, bool]]]], variant: int = 0) -> str:
    """One Hermes block per call, back to back."""
    return "".join(hermes.render([c], variant) for c in calls)


def wrap_text(text: str, variant: int = 0) -> str:
    """Visible text as ERNIE writes a plain answer, in odd variants (the newlines the
    model writes after the tags are text: left out, so the text is ``text``)."""
    return f"<response>{text}</response>" if variant % 2 else text


DIALECT = Dialect(
    name="ernie45",
    title="ERNIE 4.5 (<tool_call>{…}</tool_call>, <response>…</response>)",
    blocks=(hermes.BLOCK,),
    reasoning=(THINK,),
    framing=(RESPONSE, RESPONSE_END),
    sample="The user wants weather.\n</think>\n\n\n" + render([("get_weather", [("city", "Paris", False)])]),
    render=render,
    wrap_text=wrap_text,
)
