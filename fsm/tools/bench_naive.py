"""The reference a serving stack would be: re-parse the whole buffer on every chunk.

:class:`NaiveStream` is what the streaming tool parsers of well-known servers do:
append the chunk to the accumulated text, then search that whole text again from the
start with regular expressions (reasoning close, every block open, every call and
parameter inside), rebuild the visible text and the arguments JSON, and send the
difference from what was sent before. Each chunk costs time proportional to everything
received so far, so a stream costs O(n²) in its length; fed whole, it is one regex
pass and fast. It uses the dialects' own marker patterns, so it does the same kind of
matching work as the sieve, minus everything the sieve adds (no-leak hold-back across
chunks, grammar-aware closes, code fences).
"""

from __future__ import annotations

import json
import re
from dataclasses import replace
from typing import Any

from callsieve.grammar import reasoning
from callsieve.grammar.api import tag_fields
from callsieve.grammar.registry import resolve


def _alt(patterns: list[str]) -> "re.Pattern[str]":
    # No marker of that role: a pattern that never matches (an empty one would match
    # everywhere, and a loop over its matches would never advance).
    return re.compile("|".join(f"(?:{p})" for p in patterns) if patterns else "(?!)")


_JSON = json.JSONDecoder()
_HARMONY_ANALYSIS = re.compile(r"<\|channel\|>analysis<\|message\|>(.*?)(?:<\|end\|>|$)", re.S)
_HARMONY_CALL = re.compile(r"to=(?:functions\.)?([^\s<]+)[^<]*?(?:<\|constrain\|>)?\s*(?:json)?<\|message\|>(.*?)(?:<\|call\|>|$)", re.S)


def _json_at(buf: str, at: int, end: int) -> dict[str, Any] | None:
    """The JSON object starting at the first ``{`` in ``buf[at:end]``, if one parses."""
    k = buf.find("{", at, end)
    if k < 0:
        return None
    try:
        v, _ = _JSON.raw_decode(buf, k)
    except ValueError:
        return None
    return v if isinstance(v, dict) else None


class NaiveStream:
    def __init__(self, dialects: tuple[str, ...] | None = None) -> None:
        ds = resolve(dialects)
        self.dialects = ds
        self.think_open = re.compile(reasoning.THINK_OPEN.pattern)
        self.think_close = re.compile(reasoning.THINK_CLOSE.pattern)
        # One (block open, block close, call open, param open, param close) set per dialect.
        self.grammars = []
        #: Harmony (gpt-oss), as SGLang's gpt_oss detector reads it: every analysis body,
        #: every recipient's JSON, found again from the start (one pattern each).
        self.harmony = any(d.headers for d in ds)
        for d in ds:
            # (the format as written, as a server's parser reads it: no tolerated block,
            # the Hermes family's wrappers, Qwen3-Coder's calls without <tool_call>)
            roles = replace(d, blocks=tuple(b for b in d.blocks if not b.tolerance)).markers_by_role()
            if d.headers:
                continue  # read by the harmony patterns below
            if not roles["block_open"]:
                continue  # a bare-block dialect (Mistral): no block to search for

            def of(role: str) -> "re.Pattern[str]":
                return _alt([m.pattern for m in roles[role]])

            self.grammars.append(
                (of("block_open"), of("block_close"), of("call_open"), of("param_open"), of("value_close"))
            )
        self.buf = ""
        self.sent_text = 0
        self.sent_reasoning = 0
        self.sent_args = ""
        self.calls: list[tuple[str, dict[str, Any]]] = []

    def feed(self, chunk: str) -> list[tuple[str, str]]:
        """Append ``chunk``, re-parse everything, return (kind, delta) pairs."""
        self.buf += chunk
        return self._parse(final=False)

    def close(self) -> list[tuple[str, str]]:
        return self._parse(final=True)

    def _parse_harmony(self, buf: str) -> list[tuple[str, str]]:
        out: list[tuple[str, str]] = []
        reasoning_text = "".join(m.group(1) for m in _HARMONY_ANALYSIS.finditer(buf))
        if len(reasoning_text) > self.sent_reasoning:
            out.append(("reasoning", reasoning_text[self.sent_reasoning :]))
            self.sent_reasoning = len(reasoning_text)
        calls: list[tuple[str, dict[str, Any]]] = []
        for c in _HARMONY_CALL.finditer(buf):
            args = _json_at(buf, c.start(2), c.end(2))
            if args is not None:
                calls.append((c.group(1), args))
        self.calls = calls
        return out

    def _parse(self, final: bool) -> list[tuple[str, str]]:
        buf = self.buf
        out: list[tuple[str, str]] = []
        start = 0
        if self.harmony:
            return self._parse_harmony(buf)
        m = self.think_open.match(buf)
        if m is not None:
            close = self.think_close.search(buf, m.end())
            end = close.start() if close else len(buf)
            reasoning_text = buf[m.end() : end]
            if len(reasoning_text) > self.sent_reasoning:
                out.append(("reasoning", reasoning_text[self.sent_reasoning :]))
                self.sent_reasoning = len(reasoning_text)
            if close is None:
                return out
            start = close.end()
        # Every block, every call, every parameter: found again from the start.
        text_parts: list[str] = []
        calls: list[tuple[str, dict[str, Any]]] = []
        pos = start
        while True:
            first = None
            for g in self.grammars:
                b = g[0].search(buf, pos)
                if b is not None and (first is None or b.start() < first[0].start()):
                    first = (b, g)
            if first is None:
                break
            b, (_bo, block_close, call_open, param_open, param_close) = first
            text_parts.append(buf[pos : b.start()])
            bc = block_close.search(buf, b.end())
            body_end = bc.start() if bc else len(buf)
            if call_open.pattern == "(?!)":
                # The whole call is a JSON object (Hermes): parse it as the servers do.
                obj = _json_at(buf, b.end(), body_end)
                if obj is not None:
                    a = obj.get("arguments", obj.get("parameters", {}))
                    calls.append((str(obj.get("name", "")), a if isinstance(a, dict) else {}))
            opens = list(call_open.finditer(buf, b.end(), body_end))
            for k, c in enumerate(opens):
                call_end = opens[k + 1].start() if k + 1 < len(opens) else body_end
                args: dict[str, Any] = {}
                at = c.end()
                if param_open.pattern == "(?!)":  # JSON arguments after the call open
                    args = _json_at(buf, at, call_end) or {}
                while param_open.pattern != "(?!)":
                    p = param_open.search(buf, at, call_end)
                    if p is None:
                        break
                    pc = param_close.search(buf, p.end(), call_end)
                    args[tag_fields(p).get("name", "")] = buf[p.end() : pc.start() if pc else call_end]
                    at = pc.end() if pc else call_end
                calls.append((tag_fields(c).get("name", ""), args))
            if bc is None:
                pos = len(buf)
                break
            pos = bc.end()
        tail = buf[pos:]
        if not final:
            # Hold back a possible partial tag at the end.
            lt = tail.rfind("<", max(0, len(tail) - 32))
            if lt >= 0:
                tail = tail[:lt]
        text_parts.append(tail)
        text = "".join(text_parts)
        if len(text) > self.sent_text:
            out.append(("text", text[self.sent_text :]))
            self.sent_text = len(text)
        self.calls = calls
        args_json = json.dumps([a for _n, a in calls], ensure_ascii=False)
        # Send what extends what was sent; the last few characters (closing quote and
        # brackets of a value still streaming) wait, as server parsers do.
        stable = args_json if final else args_json[: max(0, len(args_json) - 8)]
        if stable.startswith(self.sent_args):
            if len(stable) > len(self.sent_args):
                out.append(("arguments", stable[len(self.sent_args) :]))
                self.sent_args = stable
        else:
            out.append(("arguments", stable))
            self.sent_args = stable
        return out
