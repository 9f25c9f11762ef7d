"""What a whole (non-streaming) response costs the simplest parser that reads it: the
yardsticks ``callsieve bench`` sets the sieve against when a workload is fed whole.

* :func:`regex_pass` (many small calls): one ``finditer`` over the text for the blocks,
  the visible text joined from what lies between them, and per call what a server's
  non-streaming parser then does: ``json.loads`` of the block's body (Hermes), or one
  ``finditer`` over the call's parameters (Qwen3-Coder's XML). No hold-back, no code
  fences, no grammar-aware close, no reasoning: the least a correct answer on these
  inputs can cost in Python.
* :func:`find_opener` (prose with one call): a bare ``str.find`` for the dialect's block
  opener, the least any reader of the text can do.

Both are hand-written for the dialects the workloads use (tools may name dialects; the
engine never does). :func:`regex_pass` returns the calls it read, so the bench can check
they are the sieve's before it times anything.
"""

from __future__ import annotations

import json
import re
from typing import Any, Callable

Calls = list[tuple[str, dict[str, Any]]]

_HERMES_BLOCK = re.compile(r"<tool_call>\s*(.*?)\s*</tool_call>", re.S)
_QWEN3_CODER_BLOCK = re.compile(r"<tool_call>\s*<function=([^>\n]+)>(.*?)</function>\s*</tool_call>", re.S)
_QWEN3_CODER_PARAM = re.compile(r"<parameter=([^>\n]+)>\n?(.*?)\n?</parameter>", re.S)


def _hermes(text: str) -> tuple[str, Calls]:
    visible: list[str] = []
    calls: Calls = []
    at = 0
    loads = json.loads
    for m in _HERMES_BLOCK.finditer(text):
        visible.append(text[at : m.start()])
        obj = loads(m.group(1))
        calls.append((obj["name"], obj["arguments"]))
        at = m.end()
    visible.append(text[at:])
    return "".join(visible), calls


def _qwen3_coder(text: str) -> tuple[str, Calls]:
    visible: list[str] = []
    calls: Calls = []
    at = 0
    params = _QWEN3_CODER_PARAM.findall
    for m in _QWEN3_CODER_BLOCK.finditer(text):
        visible.append(text[at : m.start()])
        calls.append((m.group(1), dict(params(m.group(2)))))
        at = m.end()
    visible.append(text[at:])
    return "".join(visible), calls


#: The regex pass for each dialect a many-calls workload uses.
REGEX_PASSES: dict[str, Callable[[str], tuple[str, Calls]]] = {"hermes": _hermes, "qwen3_coder": _qwen3_coder}

#: The block opener a bare find looks for, per dialect.
OPENERS: dict[str, str] = {"hermes": "<tool_call>", "qwen3_coder": "<tool_call>"}


def regex_pass(dialect: str) -> Callable[[str], tuple[str, Calls]]:
    """The one-pass parser of ``dialect``'s whole responses: text → (visible text, calls)."""
    return REGEX_PASSES[dialect]


def find_opener(dialect: str) -> Callable[[str], int]:
    """``str.find`` of ``dialect``'s block opener: text → its first index (or -1)."""
    opener = OPENERS[dialect]

    def find(text: str) -> int:
        return text.find(opener)

    return find
