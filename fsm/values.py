"""Parameter values: from raw wire text to a decoded string, incrementally.

A :class:`ValueDecoder` is fed the raw value in pieces (tagged as CDATA or not) and
returns, each time, only output that can no longer change: a trailing newline that
Qwen3-Coder would strip, or an ``&am`` that may become ``&``, is held back until the
next piece or the end decides it. So streamed argument fragments never need retracting.
"""

from __future__ import annotations

import re

from callsieve.grammar.api import ValueStyle

_ENTITY = re.compile(r"&(lt|gt|amp|quot|apos|#[0-9]{1,7}|#[xX][0-9a-fA-F]{1,6});")
_NAMED = {"lt": "<", "gt": ">", "amp": "&", "quot": '"', "apos": "'"}
#: Longest entity reference, so a longer tail after "&" can be released as is.
_ENTITY_MAX = 10


def _entity(m: "re.Match[str]") -> str:
    body = m.group(1)
    if body in _NAMED:
        return _NAMED[body]
    code = int(body[2:], 16) if body[1] in "xX" else int(body[1:])
    # A reference to NUL, to a surrogate (half of a UTF-16 pair, never a character on
    # its own: it makes the arguments unencodable as UTF-8) or past U+10FFFF names no
    # character XML allows; it is kept as written rather than decoded into bad data.
    if code == 0 or 0xD800 <= code <= 0xDFFF or code > 0x10FFFF:
        return m.group(0)
    return chr(code)


def unescape_xml(text: str) -> str:
    """The five XML entities and numeric character references; nothing else."""
    return _ENTITY.sub(_entity, text) if "&" in text else text


class ValueDecoder:
    __slots__ = ("strip", "unescape", "started", "entity_tail", "newline_held", "starts_with_newline")

    def __init__(self, style: ValueStyle) -> None:
        self.strip = style.strip_newlines
        self.unescape = style.unescape_entities
        self.started = False
        self.entity_tail = ""
        self.newline_held = False
        #: the first piece began with a newline (stripped, with ``strip``)
        self.starts_with_newline = False

    def feed(self, piece: str, cdata: bool = False) -> str:
        if not piece:
            return ""
        if self.unescape and not cdata:
            if not self.started:
                self.started = True
                if self.strip and piece[0] == "\n":
                    piece = piece[1:]
                    if not piece:
                        return ""
            text = self.entity_tail + piece
            self.entity_tail = ""
            amp = text.rfind("&")
            if amp >= 0 and ";" not in text[amp:] and len(text) - amp < _ENTITY_MAX:
                self.entity_tail = text[amp:]
                text = text[:amp]
            return self._hold_newline(unescape_xml(text))
        # A raw value (the common case): at most one slice, however large the piece.
        start = 0
        if not self.started:
            self.started = True
            if self.strip and piece[0] == "\n":
                start = 1
                self.starts_with_newline = True
                if len(piece) == 1:
                    return ""
        if self.entity_tail:
            piece = self.entity_tail + piece[start:]
            self.entity_tail = ""
            start = 0
        if not self.strip:
            return piece[start:] if start else piece
        end = len(piece)
        held = self.newline_held
        self.newline_held = piece[-1] == "\n"
        if self.newline_held:
            end -= 1
        out = piece[start:end] if start or end < len(piece) else piece
        return "\n" + out if held else out

    def _hold_newline(self, out: str) -> str:
        if not self.strip or not out:
            return out
        if self.newline_held:
            out = "\n" + out
            self.newline_held = False
        if out[-1] == "\n":
            self.newline_held = True
            out = out[:-1]
        return out

    def finish(self) -> str:
        """What is left at the value's close (a held trailing newline is dropped)."""
        out = self.entity_tail
        self.entity_tail = ""
        if out:
            return self._hold_newline(out)
        return ""
