"""Step3 "steptml": special-token sections around ``<steptml:invoke>`` calls.

Wire format (shared/reference/dialects-long-tail.md §15)::

    Let me check.<｜tool_calls_begin｜><｜tool_call_begin｜>function<｜tool_sep｜><steptml:invoke name="get_weather"><steptml:parameter name="city">Paris</steptml:parameter><steptml:parameter name="days">3</steptml:parameter></steptml:invoke><｜tool_call_end｜><｜tool_calls_end｜>

The tokens' bars are U+FF5C and their underscores ASCII (DeepSeek writes U+2581
there, a different token); the server must keep them (``skip_special_tokens=False``).
Each call is ``function`` (the only call type) then an invoke whose ``name`` attribute
names it; values are raw text, typed by the tool schema. A ``</steptml:parameter>``
closes a value only where another parameter or ``</steptml:invoke>`` follows, so a
value may hold ``<`` and even the close itself (vLLM's ``[^<]*`` drops such a
parameter). Step3 reasons in ``<think>`` … ``</think>``. Step 3.5 writes Qwen3-Coder
XML instead (the alias ``step3p5``).
"""

from __future__ import annotations

from callsieve.grammar.api import Block, Call, Capture, Dialect, Many, Marker, Param, Raw, Seq
from callsieve.grammar.reasoning import THINK
from callsieve.grammar.tags import close_tag, open_tag

BAR = "\uff5c"


def token(name: str) -> Marker:
    """``<｜NAME｜>`` with U+FF5C bars."""
    text = f"<{BAR}{name}{BAR}>"
    return Marker(f"<{BAR}{name}{BAR}>", (text,), text)


CALLS = token("tool_calls_begin")
CALLS_END = token("tool_calls_end")
CALL = token("tool_call_begin")
CALL_END = token("tool_call_end")
SEP = token("tool_sep")
INVOKE = Marker(open_tag("steptml:invoke"), ('<steptml:invoke name="f">',), '<steptml:invoke name="…">')
INVOKE_END = Marker(close_tag("steptml:invoke"), ("</steptml:invoke>",), "</steptml:invoke>")
PARAMETER = Marker(open_tag("steptml:parameter"), ('<steptml:parameter name="k">',), '<steptml:parameter name="…">')
PARAMETER_END = Marker(close_tag("steptml:parameter"), ("</steptml:parameter>",), "</steptml:parameter>")

INVOKE_CALL = Call(INVOKE, Many(Param(PARAMETER, Raw(PARAMETER_END))), close=INVOKE_END)
BLOCK = Block(
    CALLS,
    Many(Seq(CALL, Capture(r"\s*function\s*", label="function"), SEP, INVOKE_CALL, CALL_END), min=1),
    CALLS_END,
)


def render(calls: list[tuple[str, list[tuple[str, str, bool]]]], variant: int = 0) -> str:
    """One section for all the calls, as the template writes it (odd variants put a
    newline between calls)."""
    sep = "\n" if variant % 2 else ""
    parts = [CALLS.examples[0]]
    for i, (name, params) in enumerate(calls):
        body = "".join(f'<steptml:parameter name="{k}">{v}</steptml:parameter>' for k, v, _j in params)
        parts.append((sep if i else "") + f'{CALL.examples[0]}function{SEP.examples[0]}<steptml:invoke name="{name}">{body}'
                     f"</steptml:invoke>{CALL_END.examples[0]}")
    parts.append(CALLS_END.examples[0])
    return "".join(parts)


DIALECT = Dialect(
    name="step3",
    title='Step3 (<｜tool_call_begin｜>function<｜tool_sep｜><steptml:invoke name="…">)',
    blocks=(BLOCK,),
    reasoning=(THINK,),
    sample=render([("get_weather", [("city", "Paris", False), ("days", "3", False)])]),
    render=render,
)
