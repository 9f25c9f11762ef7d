"""Shared pieces of XML-like tag patterns (see ``grammar.api`` for the rules)."""

from __future__ import annotations

import re

from callsieve.grammar.api import Marker

#: Opening angle bracket: ASCII or fullwidth (U+FF1C), as leaked DSML shows both.
LT = "[<\uff1c]"
#: Closing angle bracket, ASCII or fullwidth (U+FF1E).
GT = "[>\uff1e]"
#: Attribute list: ``name="v"`` pairs; values hold no angle brackets.
ATTRS = r"""(?P<attrs>(?:\s+[\w:.-]{1,32}\s*=\s*(?:"[^"<>\uff1c]{0,160}"|'[^'<>\uff1c]{0,160}'))*)"""
#: Optional space before the closing bracket.
END = r"\s{0,8}" + GT


def open_tag(name_re: str) -> str:
    """``<NAME attrs>`` where NAME is a regex (case-insensitive)."""
    return f"{LT}(?i:{name_re}){ATTRS}{END}"


def close_tag(name_re: str) -> str:
    """``</NAME>``."""
    return f"{LT}/(?i:{name_re}){END}"


def special_token(name: str, *more: str) -> Marker:
    """A special token ``<|NAME|>`` (or any of several names): the framing many
    tokenizers write for tool calls (``<|action_start|>``, ``<|tools_prefix|>``)."""
    names = (name, *more)
    alts = "|".join(re.escape(n) for n in names)
    return Marker(rf"<\|(?:{alts})\|>", tuple(f"<|{n}|>" for n in names), f"<|{name}|>")
