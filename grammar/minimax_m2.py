"""MiniMax-M2: ``<minimax:tool_call>`` around ``<invoke name>`` / ``<parameter name>``.

Wire format (shared/reference/dialects.md §8)::

    <minimax:tool_call>
    <invoke name="get_weather">
    <parameter name="city">Paris</parameter>
    </invoke>
    </minimax:tool_call>

There is no ``string=`` attribute: values are raw text, typed by the tool schema.
"""

from __future__ import annotations

from callsieve.grammar.api import Dialect, Kind, Marker, ValueStyle
from callsieve.grammar.tags import close_tag, open_tag

MARKERS = (
    Marker(Kind.BLOCK_OPEN, open_tag("minimax:tool_call"), ("<minimax:tool_call>",), "<minimax:tool_call>"),
    Marker(Kind.BLOCK_CLOSE, close_tag("minimax:tool_call"), ("</minimax:tool_call>",), "</minimax:tool_call>"),
    Marker(Kind.CALL_OPEN, open_tag("invoke"), ('<invoke name="f">',), '<invoke name="…">'),
    Marker(Kind.CALL_CLOSE, close_tag("invoke"), ("</invoke>",), "</invoke>"),
    Marker(Kind.PARAM_OPEN, open_tag("parameter"), ('<parameter name="k">',), '<parameter name="…">'),
    Marker(Kind.PARAM_CLOSE, close_tag("parameter"), ("</parameter>",), "</parameter>"),
)


def render(calls: list[tuple[str, list[tuple[str, str, bool]]]], variant: int = 0) -> str:
    lines = ["<minimax:tool_call>"]
    for name, params in calls:
        lines.append(f'<invoke name="{name}">')
        for key, value, _is_json in params:
            lines.append(f'<parameter name="{key}">{value}</parameter>')
        lines.append("</invoke>")
    lines.append("</minimax:tool_call>")
    return "\n".join(lines)


DIALECT = Dialect(
    name="minimax_m2",
    title="MiniMax-M2 (<minimax:tool_call>)",
    markers=MARKERS,
    sample=render([("get_weather", [("city", "Paris", False), ("days", "3", False)])]),
    render=render,
)
