"""ByteDance Seed-OSS: Qwen3-Coder XML calls inside ``<seed:tool_call>`` blocks.

Wire format (shared/reference/dialects-long-tail.md §12)::

    <seed:think>Need weather.</seed:think>Checking.<seed:tool_call>
    <function=get_weather>
    <parameter=city>
    Paris
    </parameter>
    </function>
    </seed:tool_call>

Inside the block the grammar is Qwen3-Coder's (``callsieve.grammar.qwen3_coder``, its
tolerances included): raw values with one leading and one trailing newline stripped,
typed by the tool schema, and a ``</parameter>`` that closes a value only where another
parameter, ``</function>`` or the block's close follows (vLLM cuts at the first one).
``<seed:tool_call>`` and ``</seed:tool_call>`` are vocabulary tokens (vLLM refuses to
start without them): a server that marks them special must keep them
(``skip_special_tokens=False``). Reasoning is
``<seed:think>`` … ``</seed:think>`` (vLLM returns it inside the content; here it is
reasoning). Not yet read: bare ``<function=…>`` blocks without the wrapper, which
vLLM parses too (qwen3_coder reads those, as its ``missing_block_open`` tolerance).
"""

from __future__ import annotations

from callsieve.grammar.api import Block, Dialect, Many, Marker, Reasoning
from callsieve.grammar.qwen3_coder import CALL
from callsieve.grammar.tags import close_tag, open_tag

OPEN = Marker(open_tag("seed:tool_call"), ("<seed:tool_call>",), "<seed:tool_call>")
CLOSE = Marker(close_tag("seed:tool_call"), ("</seed:tool_call>",), "</seed:tool_call>")
THINK = Reasoning(
    Marker(open_tag("seed:think"), ("<seed:think>",), "<seed:think>"),
    Marker(close_tag("seed:think"), ("</seed:think>",), "</seed:think>"),
    "in_reasoning_seed",
)

BLOCK = Block(OPEN, Many(CALL, min=1), CLOSE)


def render(calls: list[tuple[str, list[tuple[str, str, bool]]]], variant: int = 0) -> str:
    """One block per call, back to back, as the chat template writes them."""
    out = []
    for name, params in calls:
        parts = [f"<seed:tool_call>\n<function={name}>\n"]
        for key, value, _is_json in params:
            parts.append(f"<parameter={key}>\n{value}\n</parameter>\n")
        parts.append("</function>\n</seed:tool_call>")
        out.append("".join(parts))
    return "".join(out)


DIALECT = Dialect(
    name="seed_oss",
    title="Seed-OSS (<seed:tool_call><function=…><parameter=…>)",
    blocks=(BLOCK,),
    reasoning=(THINK,),
    sample="<seed:think>Need weather.</seed:think>Checking."
    + render([("get_weather", [("city", "Paris", False), ("days", "3", False)])]),
    render=render,
)
