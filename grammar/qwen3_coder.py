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

Tolerated (dialects.md §12; each with its Diagnostic, none under ``strict``):

- ``missing_block_open``: a call without ``<tool_call>`` (``<function=NAME>`` …
  ``</function>``, with or without a trailing ``</tool_call>``): a bare block. With
  ``tools=`` given, its calls must name known tools, else it stays text.
- ``implied_param_close``: a ``</parameter>`` left out before the next
  ``<parameter=`` (a key not given yet; with ``tools=``, one the schema has) or
  ``</function>``: the value ends there.
- ``param_close_variant``: ``</parameter/>``, ``</parameter1>``, ``</parameter_function>``
  (Qwen3.6) read as ``</parameter>``, where ``</parameter>`` would close the value.
- ``unwrapped_arguments``: every argument wrapped in one ``arguments`` parameter.
"""

from __future__ import annotations

from callsieve.grammar.api import Block, Call, Dialect, Many, Marker, Param, Raw, ValueStyle, Variant
from callsieve.grammar.reasoning import THINK
from callsieve.grammar.tags import END, LT, close_tag, open_tag

NAME = r"(?P<name>[^<>\uff1c\n]{1,128})"
#: A function name: no ``[`` either, since ``<function=`` is listened for in prose
#: (the call without its wrapper) where ``[`` may begin another dialect's marker (rule 2).
FUNCTION_NAME = r"(?P<name>[^<>\uff1c\n\[]{1,128})"

TOOL_CALL = Marker(open_tag("tool_call"), ("<tool_call>",), "<tool_call>")
TOOL_CALL_END = Marker(close_tag("tool_call"), ("</tool_call>",), "</tool_call>")
FUNCTION = Marker(f"{LT}(?i:function)={FUNCTION_NAME}{END}", ("<function=f>", "<function=write_file>"), "<function=…>")
FUNCTION_END = Marker(close_tag("function"), ("</function>",), "</function>")
PARAMETER = Marker(f"{LT}(?i:parameter)={NAME}{END}", ("<parameter=k>", "<parameter=content>"), "<parameter=…>")
#: Tolerated (Qwen3.6, sglang PR #27337): malformed end tags ``</parameter/>``,
#: ``</parameter1>`` (a digit), ``</parameter_function>``, read as ``</parameter>``;
#: like it, only where what follows may follow a value (after-close lookahead).
PARAMETER_END_VARIANT = Variant(
    f"{LT}/(?i:parameter)(?:/|[0-9]{{1,3}}|_(?i:function)){END}",
    ("</parameter/>", "</parameter1>", "</parameter_function>"),
    "param_close_variant",
    "</parameter~>",
)
PARAMETER_END = Marker(close_tag("parameter"), ("</parameter>",), "</parameter>", variants=(PARAMETER_END_VARIANT,))

VALUE = Raw(PARAMETER_END, ValueStyle(strip_newlines=True), implied_close="implied_param_close")
CALL = Call(FUNCTION, Many(Param(PARAMETER, VALUE)), close=FUNCTION_END, wrapped=("arguments", "parameters"))

#: (``missing_block_close``: the stream ends after ``</function>`` with no ``</tool_call>``.)
BLOCK = Block(TOOL_CALL, Many(CALL, min=1), TOOL_CALL_END, eof_close="missing_block_close")
#: A call whose ``<tool_call>`` was dropped (ollama#16686): a bare block, ended where the
#: grammar stops or by a ``</tool_call>`` after its calls.
BARE = Block(None, Many(CALL, min=1), TOOL_CALL_END, close_optional=True, name="bare", tolerance="missing_block_open")


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
    blocks=(BLOCK, BARE),
    reasoning=(THINK,),  # Qwen3.5/3.6 thinking variants
    sample=render([("write_file", [("path", "src/a.py", False), ("content", "def f():\n    return 1", False)])]),
    render=render,
)
