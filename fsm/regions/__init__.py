"""The machine's regions: one module per region of states (h11's Rule 1).

Each module holds one region's states, its transitions (as rules), the guards and
actions those rules name (a mixin class), and the markers it listens for:

============  =====================================================================
``prose``     text, backtick/tilde runs, inline code, fences
``reasoning`` ``<think>`` … ``</think>``
``tag``       ``maybe_tag`` (a held marker), ``fork`` (a shared opener's lookahead),
              where a dead tag returns
``block``     a dialect's positions between markers (generated from its structure),
              holding, emitting and releasing a block
``value``     ``in_param`` (a raw value), ``after_close`` (a close held until what
              follows confirms it)
``cdata``     ``in_cdata`` and the states that find ``]]>``
``json_value`` ``json_value``, ``json_string``, ``json_escape``
============  =====================================================================

:class:`ModelBase` holds what every region shares: the output buffers, the position in
the stream, and the runner protocol's flags. The model a machine runs on is composed from
the region mixins (``callsieve.machine``); attribute lookups are resolved by Python's MRO
once, so composition costs nothing per character.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Callable

from callsieve.events import Event, Reasoning, Text, ToolCallDelta
from callsieve.grammar.states import OVERFLOW

if TYPE_CHECKING:
    from callsieve.matcher import Matcher
    from callsieve.regions.block import Block

#: 1 + the most indentation a fence may have (CommonMark: three spaces).
LINE_TAIL = 4
#: JSON string escaping (the C encoder behind json.dumps(..., ensure_ascii=False)).
quote: Any = json.encoder.encode_basestring


@dataclass
class Config:
    """Everything a model needs that does not change while it runs."""

    #: state → the matcher of the markers that state listens for
    matchers: dict[str, "Matcher"]
    #: state → value spec name → matcher, for the states a value body shares
    scoped: dict[str, dict[str, "Matcher"]]
    tools: dict[str, dict[str, Any]] | None
    on_malformed: str
    unknown_tool: str
    max_block_chars: int
    id_prefix: str


class ModelBase:
    """Shared buffers and the runner protocol.

    Runner protocol (both runners, ``callsieve.compiler`` and ``callsieve.reference``,
    follow it after every step through :meth:`settle`, in this order):

    1. ``pushback``: characters held earlier that must be read again now (a rejected
       tag's tail, a shared opener's lookahead); read them first, at their own offsets;
    2. ``redo``: the current character was not consumed: feed it again in the new state;
    3. ``overflow``: if the open block passed ``max_block_chars``, fire that trigger.

    Registers (the only state besides the machine's own that guards read):
    ``origin`` (the state a held tag returns to), ``scope`` (the body shared states
    read), ``block`` (the open block, its current call and parameter), the classification of the held tag (``_hit``), and the
    fence/code-span run counters of the prose region.
    """

    SINKS: dict[str, str] = {}
    #: The held tag (the tag region's register): it counts against the block limit.
    tag = ""

    def __init__(self, config: Config) -> None:
        self.cfg = config
        self.state = "text"
        self.out: list[Event] = []
        self.text_buf: list[str] = []
        self.reason_text: list[str] = []
        self.reason_raw: list[str] = []
        self.delta_buf: list[str] = []
        self.delta_index = -1
        #: The rest of an overflowed block under on_malformed="drop": it travels in the
        #: raw of a Text with no text (contract point 2), never shown.
        self.dropped: list[str] = []
        self.pos = 0
        self.next_index = 0
        self.block: Block | None = None
        self.origin = "text"
        #: The body that shared states (in_param, after_close, json_value, in_capture)
        #: read for now: its name picks their matcher (``Config.scoped``).
        self.scope = ""
        #: The last few characters of visible text: is the next one at a line start?
        self.line_tail = "\n"
        # runner control
        self.redo = False
        self.pushback = ""

    # ------------------------------------------------------------------ output
    def flush(self) -> None:
        """Emit whatever visible text, reasoning or argument fragment is pending."""
        if self.dropped:
            s = "".join(self.dropped)
            self.dropped = []
            self.out.append(Text("", s))
        if self.text_buf:
            s = "".join(self.text_buf)
            self.text_buf = []
            self.out.append(Text(s, s))
        if self.reason_raw:
            self.out.append(Reasoning("".join(self.reason_text), "".join(self.reason_raw)))
            self.reason_text = []
            self.reason_raw = []
        if self.delta_buf:
            s = "".join(self.delta_buf)
            self.delta_buf = []
            if s:
                self.out.append(ToolCallDelta(self.delta_index, s))

    def _emit(self, event: Event) -> None:
        self.flush()
        self.out.append(event)

    def _text(self, s: str) -> None:
        self.text_buf.append(s)
        # LINE_TAIL characters are enough to tell a line start: a newline and up to
        # three spaces of indentation (prose.LINE_START).
        if len(s) >= LINE_TAIL:
            self.line_tail = s[-LINE_TAIL:]
        else:
            self.line_tail = (self.line_tail + s)[-LINE_TAIL:]

    def reprocess(self, ch: str = "") -> None:
        self.redo = True

    def settle(self, rerun: Callable[[str, int], None], fire: Callable[[str, str], object], base: int, i: int) -> int:
        """The runner protocol after the step that read ``s[i]`` (``s`` at ``base``):
        read the pushback again at its own offsets, keep ``i`` if the character is to
        be read again, fire ``overflow`` if the block passed its limit. Returns the
        index of the next character to read. Both runners call this, and only this."""
        redo, self.redo = self.redo, False
        if self.pushback:
            pb, self.pushback = self.pushback, ""
            rerun(pb, base + i - len(pb))
        if not redo:
            i += 1
        if self.block is not None and self.over_limit():
            self.pos = base + i
            fire(OVERFLOW, "")
        return i

    def matcher(self, origin: str | None = None) -> "Matcher":
        origin = origin or self.origin
        m = self.cfg.matchers.get(origin)
        if m is not None:
            return m
        return self.cfg.scoped[origin][self.scope]

    def over_limit(self) -> bool:
        """The open block, with the tag held in it, passed ``max_block_chars`` (an
        overflowed block no longer holds anything, so it never passes it again)."""
        b = self.block
        return b is not None and not b.spilled and b.raw_len + len(self.tag) > self.cfg.max_block_chars

    def run_budget(self) -> int:
        """Characters a block may still take before ``overflow`` must fire."""
        b = self.block
        if b is None or b.spilled:
            return 1 << 62
        return max(1, self.cfg.max_block_chars + 1 - b.raw_len - len(self.tag))

    def _hold(self, s: str) -> None:
        b = self.block
        assert b is not None
        if b.spilled:
            self._spill(s)
            return
        b.raw.append(s)
        b.raw_len += len(s)

    def _spill(self, s: str) -> None:
        """Input of an overflowed block: released as it comes (finding 2 of issue 12).
        The states go on reading the block's structure, so its end is found where the
        grammar puts it and nothing inside the block ever becomes a call."""
        if self.cfg.on_malformed == "drop":
            self.dropped.append(s)
        else:
            self._text(s)
