"""Qwen3-Coder XML: ``<tool_call><function=N><parameter=K>…</parameter></function></tool_call>``.

Wire format (shared/reference/dialects.md §4)::

    <tool_call>
    <function=write_file>
    <parameter=path>
    src/a.py
    </parameter>
    </function>
    </tool_call>

Values are raw and unescaped; exactly one leading and one trailing newline is stripped.
A literal ``</parameter>`` inside a value is data unless what follows it is another
parameter, the call close or the block close (the seed 004 bug).
"""

from __future__ import annotations

from callsieve.grammar.api import Block, Call, Dialect, Many, Marker, Param, Raw, ValueStyle
from callsieve.grammar.reasoning import THINK
from callsieve.grammar.tags import END, LT, close_tag, open_tag

NAME = r"(?P<name>[^<>\uff1c\n]{1,128})"

TOOL_CALL = Marker(open_tag("tool_call"), ("<tool_call>",), "<tool_call>")
TOOL_CALL_END = Marker(close_tag("tool_call"), ("</tool_call>",), "</tool_call>")
FUNCTION = Marker(f"{LT}(?i:function)={NAME}{END}", ("<function=f>", "<function=write_file>"), "<function=…>")
FUNCTION_END = Marker(close_tag("function"), ("</function>",), "</function>")
PARAMETER = Marker(f"{LT}(?i:parameter)={NAME}{END}", ("<parameter=k>", "<parameter=content>"), "<parameter=…>")
PARAMETER_END = Marker(close_tag("parameter"), ("</parameter>",), "</parameter>")

BLOCK = Block(
    TOOL_CALL,
    Many(Call(FUNCTION, Many(Param(PARAMETER, Raw(PARAMETER_END, ValueStyle(strip_newlines=True)))), close=FUNCTION_END), min=1),
    TOOL_CALL_END,
)


def render(calls: list[tuple[str, list[tuple[str, str, bool]]]], variant: int = 0) -> str:
    """Well-formed blocks, one per call, as the chat template writes them."""
    out = []
    for name, params in calls:
        parts = [f"<tool_call>\n<function={name}>\n"]
        for key, value, _is_json in params:
            parts.append(f"<parameter={key}>\n{value}\n</parameter>\n")
        parts.append("</function>\n</tool_call>")
        out.append("".join(parts))
    return "\n".join(out)


DIALECT = Dialect(
    name="qwen3_coder",
    title="Qwen3-Coder XML (<tool_call><function=…>)",
    blocks=(BLOCK,),
    reasoning=(THINK,),  # Qwen3.5/3.6 thinking variants
    sample=render([("write_file", [("path", "src/a.py", False), ("content", "def f():\n    return 1", False)])]),
    render=render,
)
