"""An append-only string accumulator that stays compact when fed tiny pieces.

A block streamed in token-sized chunks arrives as hundreds of thousands of 1–8
character strings; a plain list of them costs ~50 bytes of object header per piece,
several times the text itself. Every ``FLUSH_AT`` pieces are joined into one string, so
memory stays close to the text's own size and the final ``join`` is still linear.
"""

from __future__ import annotations

from typing import Final

FLUSH_AT: Final = 256


class Pieces:
    """The text appended so far. ``append`` adds a piece; the hottest callers (a block's
    raw text taking a token-sized chunk) write its three steps inline, without a
    call: ``recent.append(s)``, ``length += len(s)``, and ``fold()`` once ``recent``
    holds ``FLUSH_AT`` pieces."""

    __slots__ = ("_done", "recent", "length")

    def __init__(self) -> None:
        self._done: list[str] = []
        self.recent: list[str] = []
        self.length = 0

    def append(self, s: str) -> None:
        recent = self.recent
        recent.append(s)
        self.length += len(s)
        if len(recent) >= FLUSH_AT:
            self.fold()

    def fold(self) -> None:
        """The recent pieces joined into one (memory stays near the text's own size)."""
        self._done.append("".join(self.recent))
        self.recent = []

    def join(self) -> str:
        if self.recent:
            self.fold()
        if len(self._done) > 1:
            self._done = ["".join(self._done)]
        return self._done[0] if self._done else ""

    def since(self, offset: int) -> str:
        """The text from ``offset`` to the end, joining only the pieces it spans (the
        tail of a long block costs its own length, not the block's)."""
        need = self.length - offset
        if need <= 0:
            return ""
        parts: list[str] = []
        got = 0
        for piece in reversed(self.recent):
            if got >= need:
                break
            parts.append(piece)
            got += len(piece)
        for piece in reversed(self._done):
            if got >= need:
                break
            parts.append(piece)
            got += len(piece)
        parts.reverse()
        text = "".join(parts)
        return text[len(text) - need:]

    def __bool__(self) -> bool:
        return self.length > 0
