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

from callsieve.grammar.api import Block, Call, Dialect, Many, Marker, Param, Raw
from callsieve.grammar.reasoning import THINK
from callsieve.grammar.tags import close_tag, open_tag

BLOCK = Block(
    Marker(open_tag("minimax:tool_call"), ("<minimax:tool_call>",), "<minimax:tool_call>"),
    Many(Call(
        Marker(open_tag("invoke"), ('<invoke name="f">',), '<invoke name="…">'),
        Many(Param(
            Marker(open_tag("parameter"), ('<parameter name="k">',), '<parameter name="…">'),
            Raw(Marker(close_tag("parameter"), ("</parameter>",), "</parameter>")),
        )),
        close=Marker(close_tag("invoke"), ("</invoke>",), "</invoke>"),
    ), min=1),
    Marker(close_tag("minimax:tool_call"), ("</minimax:tool_call>",), "</minimax:tool_call>"),
    # Tolerated (SGLang reads it): the stream ends after a closed invoke with no
    # </minimax:tool_call> (missing_block_close).
    eof_close="missing_block_close",
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
    blocks=(BLOCK,),
    reasoning=(THINK,),
    sample=render([("get_weather", [("city", "Paris", False), ("days", "3", False)])]),
    render=render,
)
