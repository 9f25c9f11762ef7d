"""Reasoning tags: ``<think>`` … ``</think>``.

Many models (DeepSeek V3.1/V3.2 thinking, MiniMax-M2, QwQ, Qwen3-thinking-2507) start
generating *inside* reasoning because the prompt ended with ``<think>``; the sieve's
``start_in_reasoning=True`` models that, and the output then carries only ``</think>``.
"""

from __future__ import annotations

from callsieve.grammar.api import Marker
from callsieve.grammar.tags import END, LT

THINK_OPEN = Marker(f"{LT}(?i:think){END}", ("<think>", "<THINK>"), "<think>")
THINK_CLOSE = Marker(f"{LT}/(?i:think){END}", ("</think>",), "</think>")
MARKERS = (THINK_OPEN, THINK_CLOSE)
