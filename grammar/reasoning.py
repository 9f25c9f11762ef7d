"""Reasoning families, declared by the dialects (``Dialect.reasoning``).

``THINK``: ``<think>`` … ``</think>`` (DeepSeek R1/V3.1/V3.2, Qwen3, QwQ, GLM, MiniMax-M2,
Kimi-K2-Thinking, older Magistral). Many of these models start generating *inside*
reasoning because the prompt ended with ``<think>`` (DeepSeek V3.1/V3.2 thinking,
MiniMax-M2, QwQ, Qwen3-thinking-2507, GLM-4.7): ``prefill``, so the sieve's
``start_in_reasoning=True`` starts here and the output carries only ``</think>``.

``BRACKETS``: Magistral's ``[THINK]`` … ``[/THINK]`` control tokens (mistral-common v13+).
Not ``prefill``: vLLM enters it only when ``[THINK]`` appears in the output, and system
prompts may hold ``[THINK]`` themselves (dialects.md §9a).

gpt-oss harmony's analysis channel is no pair of markers: its message header decides
it (``callsieve.grammar.harmony``).
"""

from __future__ import annotations

from callsieve.grammar.api import Marker, Reasoning
from callsieve.grammar.tags import END, LT

THINK_OPEN = Marker(f"{LT}(?i:think){END}", ("<think>", "<THINK>"), "<think>")
THINK_CLOSE = Marker(f"{LT}/(?i:think){END}", ("</think>",), "</think>")
THINK = Reasoning(THINK_OPEN, THINK_CLOSE, "in_reasoning", prefill=True)

BRACKET_OPEN = Marker(r"\[THINK\]", ("[THINK]",))
BRACKET_CLOSE = Marker(r"\[/THINK\]", ("[/THINK]",))
BRACKETS = Reasoning(BRACKET_OPEN, BRACKET_CLOSE, "in_reasoning_brackets")

MARKERS = (THINK_OPEN, THINK_CLOSE, BRACKET_OPEN, BRACKET_CLOSE)
