"""InternLM2 / InternLM2.5 / Intern-S1 actions: ``<|action_start|><|plugin|>{…}<|action_end|>``.

Wire format (shared/reference/dialects-long-tail.md §13)::

    I'll search.<|action_start|><|plugin|>
    {"name": "search", "parameters": {"query": "vllm"}}<|action_end|>

Special tokens: the server must keep them (``skip_special_tokens=False``). The two
opening tokens are two markers (a marker holds no ``<`` past its first character,
grammar rule 2); the body is one strict JSON object, the arguments under
``parameters`` or ``arguments``. One call per action, as the format has it; a second
action is a second block (vLLM's ``split`` raises on it, losing the turn). An action
for another plugin (``<|action_start|><|interpreter|>``) is no tool call: the block is
released as text with a Diagnostic. Intern-S1 reasons in ``<think>`` … ``</think>``.
"""

from __future__ import annotations

import json

from callsieve.grammar.api import Block, Dialect, JsonCall, Seq, arguments_of
from callsieve.grammar.reasoning import THINK
from callsieve.grammar.tags import special_token

ACTION_START = special_token("action_start")
PLUGIN = special_token("plugin")
ACTION_END = special_token("action_end")

BLOCK = Block(ACTION_START, Seq(PLUGIN, JsonCall(arguments=("parameters", "arguments"))), ACTION_END)


def render(calls: list[tuple[str, list[tuple[str, str, bool]]]], variant: int = 0) -> str:
    """One action per call, back to back, as the template writes them (a newline
    after ``<|plugin|>``; none in odd variants)."""
    nl = "" if variant % 2 else "\n"
    return "".join(
        f"<|action_start|><|plugin|>{nl}{json.dumps({'name': n, 'parameters': arguments_of(p)}, ensure_ascii=False)}<|action_end|>"
        for n, p in calls
    )


DIALECT = Dialect(
    name="internlm",
    title="InternLM2 / Intern-S1 (<|action_start|><|plugin|>{…}<|action_end|>)",
    blocks=(BLOCK,),
    reasoning=(THINK,),
    sample=render([("search", [("query", "vllm", False)])]),
    render=render,
)
