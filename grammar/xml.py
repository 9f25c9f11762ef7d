"""Gateway XML: ``<tool_calls>`` / ``<function_calls>`` around ``<invoke>`` and ``<parameter>``.

Wire format (shared/reference/dialects.md §10, the canonical form of ds2api)::

    <tool_calls>
      <invoke name="NAME">
        <parameter name="KEY"><![CDATA[raw value, may contain </parameter>]]></parameter>
      </invoke>
    </tool_calls>

CDATA values are kept raw; outside CDATA the XML entities are unescaped.

Tolerated (each with its Diagnostic, none under ``strict``): invokes without the opening
wrapper when the closing one follows them (``missing_block_open``), a parameter repeated
under an array schema (``repeated_param_array``), ``</invoke>`` left out before the next
invoke or ``</tool_calls>`` (``implied_call_close``, as DSML), the block's close left
out after a closed invoke at the end of the stream (``missing_block_close``), and an
invoke whose arguments are one JSON object instead of parameters (``json_invoke_body``;
SGLang and ds2api read it).
"""

from __future__ import annotations

from callsieve.grammar.api import Alt, Block, Call, Dialect, JsonArgs, Many, Marker, Opt, Param, Raw, ValueStyle
from callsieve.grammar.reasoning import THINK
from callsieve.grammar.tags import close_tag, open_tag

BLOCK = "tool_calls|function_calls"

#: Tolerated (SGLang, ds2api): the arguments written as one JSON object where the
#: parameters belong, ``<invoke name="f">{"city": "Paris"}</invoke>`` (``json_invoke_body``).
JSON_BODY = Opt(JsonArgs(), stray="json_invoke_body")

CALLS = Many(Call(
        Marker(open_tag("invoke"), ('<invoke name="f">', "<invoke name='f' >"), '<invoke name="…">'),
        Alt(Many(Param(
            Marker(open_tag("parameter"), ('<parameter name="k">', '<parameter name="k" string="true">'), '<parameter name="…">'),
            Raw(
                Marker(close_tag("parameter"), ("</parameter>",), "</parameter>"),
                ValueStyle(unescape_entities=True, cdata=True),
            ),
        )), JSON_BODY),
        close=Marker(close_tag("invoke"), ("</invoke>",), "</invoke>"),
        repeated="repeated_param_array",
        # Tolerated (seed 000's fallback, as DSML): </invoke> left out before the next
        # invoke or </tool_calls>, in a block with its own open
        implied_close="implied_call_close",
    ), min=1)
CLOSE = Marker(close_tag(f"(?:{BLOCK})"), ("</tool_calls>", "</function_calls>"), "</tool_calls>")
STRUCTURE = Block(
    Marker(open_tag(f"(?:{BLOCK})"), ("<tool_calls>", "<function_calls>", "<TOOL_CALLS >"), "<tool_calls>"),
    CALLS,
    CLOSE,
    eof_close="missing_block_close",  # the stream ends after </invoke>, no </tool_calls>
)
#: Tolerance (ds2api's ``repairMissingXMLToolCallsOpeningWrapper``): invokes whose
#: ``<tool_calls>`` was lost, read as a block when the closing wrapper follows them;
#: without it they are text (an invoke standing alone in prose is no call here).
BARE = Block(None, CALLS, CLOSE, name="bare", tolerance="missing_block_open")


def _escape(value: str) -> str:
    return value.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def render(calls: list[tuple[str, list[tuple[str, str, bool]]]], variant: int = 0) -> str:
    """A well-formed block; odd variants wrap values in CDATA, others escape them."""
    block = ("tool_calls", "function_calls")[(variant // 2) % 2]
    lines = [f"<{block}>"]
    for name, params in calls:
        lines.append(f'  <invoke name="{name}">')
        for key, value, _is_json in params:
            if variant % 2 and "]]>" not in value:
                body = f"<![CDATA[{value}]]>"
            else:
                body = _escape(value)
            lines.append(f'    <parameter name="{key}">{body}</parameter>')
        lines.append("  </invoke>")
    lines.append(f"</{block}>")
    return "\n".join(lines)


DIALECT = Dialect(
    name="xml",
    title="Gateway XML (<tool_calls>/<invoke>/<parameter>)",
    blocks=(STRUCTURE, BARE),
    reasoning=(THINK,),  # ds2api asks for <think>…</think> before the block
    sample=render([("read_file", [("path", "a.md", False)])], 1),
    render=render,
)
