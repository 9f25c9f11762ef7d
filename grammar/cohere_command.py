"""Cohere Command R7B / A (cmd3) and Command A 2026 (cmd4): ``<|START_ACTION|>[…]<|END_ACTION|>``.

Wire format (shared/reference/dialects-long-tail.md §10)::

    <|START_THINKING|>I should call both tools.<|END_THINKING|><|START_ACTION|>[
        {"tool_call_id": "0", "tool_name": "get_weather", "parameters": {"city": "Paris"}},
        {"tool_call_id": "1", "tool_name": "get_time", "parameters": {"tz": "CET"}}
    ]<|END_ACTION|><|END_OF_TURN_TOKEN|>

Special tokens (``skip_special_tokens=False``). The action is a strict JSON array of
calls: the name under ``tool_name``, the arguments under ``parameters``. The model's
``tool_call_id`` (``"0"``, ``"1"``: the same in every turn) is read and not used as
the call id: ids are minted unique, as SGLang does (vLLM passes the model's on).
Reasoning (the tool plan) is ``<|START_THINKING|>`` … ``<|END_THINKING|>``. A plain
answer is wrapped in ``<|START_TEXT|>`` … ``<|END_TEXT|>`` and the turn ends with
``<|END_OF_TURN_TOKEN|>``: framing, which rides in the ``raw`` of the text beside it.
"""

from __future__ import annotations

import json

from callsieve.grammar.api import Block, Dialect, JsonCall, JsonCalls, Reasoning, arguments_of
from callsieve.grammar.tags import special_token

START_ACTION = special_token("START_ACTION")
END_ACTION = special_token("END_ACTION")
END_OF_TURN = special_token("END_OF_TURN_TOKEN")
THINKING = Reasoning(special_token("START_THINKING"), special_token("END_THINKING"), "in_reasoning_cohere")

BLOCK = Block(START_ACTION, JsonCalls(JsonCall(name=("tool_name",), arguments=("parameters",))), END_ACTION)
#: Tokens around the answer and the turn: in the ``raw`` of the text beside them.
FRAMING = (special_token("START_TEXT"), special_token("END_TEXT"), END_OF_TURN)


def render(calls: list[tuple[str, list[tuple[str, str, bool]]]], variant: int = 0) -> str:
    """One action for all the calls, laid out as the template does (one call a line)
    or, in odd variants, on one line."""
    objs = [json.dumps({"tool_call_id": str(i), "tool_name": n, "parameters": arguments_of(p)}, ensure_ascii=False)
            for i, (n, p) in enumerate(calls)]
    if variant % 2:
        return "<|START_ACTION|>[" + ", ".join(objs) + "]<|END_ACTION|>"
    return "<|START_ACTION|>[\n" + ",\n".join("    " + o for o in objs) + "\n]<|END_ACTION|>"


def wrap_text(text: str, variant: int = 0) -> str:
    """Visible text as Command writes an answer: in ``<|START_TEXT|>`` … ``<|END_TEXT|>``
    (every other variant), the turn's end after it in some."""
    if variant % 2 == 0:
        return text
    return f"<|START_TEXT|>{text}<|END_TEXT|>" + ("<|END_OF_TURN_TOKEN|>" if variant % 4 == 3 else "")


DIALECT = Dialect(
    name="cohere_command",
    title='Cohere Command (<|START_ACTION|>[{"tool_name": …}]<|END_ACTION|>)',
    blocks=(BLOCK,),
    reasoning=(THINKING,),
    framing=FRAMING,
    sample="<|START_THINKING|>I should call both tools.<|END_THINKING|>"
    + render([("get_weather", [("city", "Paris", False)]), ("get_time", [("tz", "CET", False)])]),
    render=render,
    wrap_text=wrap_text,
)
