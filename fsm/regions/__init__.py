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
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Callable

from callsieve.accum import FLUSH_AT
from callsieve.native import mypyc_attr, trait
from callsieve.events import Event, Reasoning, Text, ToolCallDelta
from callsieve.grammar.states import OVERFLOW

if TYPE_CHECKING:
    from callsieve.matcher import Matcher
    from callsieve.regions.block import Block

#: Visible characters kept to read the current line's head and the lines before it
#: (``prose``): where a fence may open or close depends on its container, the list
#: item it is in, which an earlier line opened. Lines further back are not consulted.
LINE_TAIL = 1024
#: The line window is trimmed once it holds more than this.
SAW_TRIM_AT = 2 * LINE_TAIL
#: JSON string escaping (the C encoder behind json.dumps(..., ensure_ascii=False)).
quote: Any = json.encoder.encode_basestring
#: ``json.dumps(o, ensure_ascii=False)``, one encoder for every call (``dumps`` builds a
#: new one each time it is given an option: a tenth of a markup-dense block's time).
dumps: Callable[[Any], str] = json.JSONEncoder(ensure_ascii=False).encode


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
    #: every tolerance off (``Sieve(strict=True)``): also what the schema typing reads
    strict: bool = False
    #: state → its sink action, where a dead tag's first character goes (``Machine.sinks``)
    sinks: dict[str, str] = field(default_factory=dict)
    #: the enabled dialects' real openers (a block opener that is no deviation, a
    #: message header's start): a tolerated construct ends where one begins, even in
    #: data it read whole (a JSON string, a CDATA section), searched there when it ends
    openers: "Matcher | None" = None


@trait
@mypyc_attr(allow_interpreted_subclasses=True)
class ModelBase:
    """Shared buffers and the runner protocol.

    Runner protocol (both runners, ``callsieve.compiler`` and ``callsieve.reference``,
    follow it after every step through :meth:`settle`, in this order):

    1. ``pushback``: characters held earlier that must be read again now (a rejected
       tag's tail, a shared opener's lookahead); read them first, at their own offsets;
    2. ``redo``: the current character was not consumed: feed it again in the new state;
    3. ``overflow``: if the open block passed ``max_block_chars``, fire that trigger
       (checked first of the three: the step that passed the limit decides it).

    Registers (the only state besides the machine's own that guards read):
    ``origin`` (the state a held tag returns to), ``scope`` (the body shared states
    read), ``block`` (the open block, its current call and parameter), the classification of the held tag (``_hit``), and the
    fence/code-span run counters of the prose region.
    """


    def __init__(self, config: Config) -> None:
        self.cfg = config
        self.state = "text"
        self.out: list[Event] = []
        self.text_buf: list[str] = []
        self.reason_text: list[str] = []
        self.reason_raw: list[str] = []
        #: The last LINE_TAIL characters of the reasoning raw flushed so far; starts as
        #: a line start (``text_before_tag``).
        self.reason_tail = "\n"
        self.delta_buf: list[str] = []
        self.delta_index = -1
        #: The rest of an overflowed block under on_malformed="drop": it travels in the
        #: raw of a Text with no text (contract point 2), never shown.
        self.dropped: list[str] = []
        self.pos = 0
        self.next_index = 0
        #: the call ids given so far (a wire id seen twice is made unique)
        self.ids_seen: set[str] = set()
        self.block: Block | None = None
        #: tolerated deviations read before their block opened (``BlockModel.tolerate``)
        self.notes: list[Any] = []
        self.origin = "text"
        #: Where the open block (or fork) began: the state its opener was read in. A block
        #: opened in reasoning ends back there, and is released there (issue 22). Set by
        #: every block and fork as it opens; read only while one is open.
        self.home = "text"
        #: The body that shared states (in_param, after_close, json_value, in_capture)
        #: read for now: its name picks their matcher (``Config.scoped``).
        self.scope = ""
        #: Recent visible text, flushed pieces (``recent_text``): where lines start.
        #: Kept between LINE_TAIL and 2 * LINE_TAIL characters, so a feed costs one
        #: append and a query one join.
        self.recent: list[str] = ["\n"]
        self.recent_len = 1
        #: The line window was cut back once (more was written than it keeps).
        self.recent_trimmed = False
        #: Visible text read after a block opener inside an open code span, held until
        #: the span closes (it was code: shown) or its paragraph ends first (it was
        #: markup: read again as prose); ``flush`` keeps it here, not in ``out``, while
        #: the line window still reads it (``prose``, issue 22 item 7). None: no hold.
        self.code_held: list[str] | None = None
        #: Something visible was written (``StartModel.at_response_start``, once it said
        #: no: the response has begun for good).
        self.spoke = False
        # runner control
        self.redo = False
        self.pushback = ""
        #: Set by a state run that stopped at a character the runner is to step at once
        #: (the compiled runner would otherwise scan from it first, and stop there).
        self.run_stopped = False

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
            if self.code_held is None:
                self.out.append(Text(s, s))
            else:
                self.code_held.append(s)
            self._saw(s)
        if self.reason_raw:
            raw = "".join(self.reason_raw)
            self.out.append(Reasoning("".join(self.reason_text), raw))
            self.reason_text = []
            self.reason_raw = []
            # (the end of what reasoning read, for anchored markers: ``text_before_tag``)
            self.reason_tail = raw[-LINE_TAIL:] if len(raw) >= LINE_TAIL else (self.reason_tail + raw)[-LINE_TAIL:]
        if self.delta_buf:
            s = "".join(self.delta_buf)
            self.delta_buf = []
            if s:
                self.out.append(ToolCallDelta(self.delta_index, s))

    def _emit(self, event: Event) -> None:
        self.flush()
        self.out.append(event)

    def _saw(self, s: str) -> None:
        """``s`` stands on the lines of the document: visible text as it is flushed, and
        input that became no text (a block of calls), since the prose region reads line
        heads from the text before them (``recent_text``)."""
        if len(s) > 2 * LINE_TAIL:
            # What the trim below would keep, without joining a long block's raw text
            # (megabytes) to the window first only to cut the window back out of it.
            self.recent = [s[-LINE_TAIL:]]
            self.recent_len = LINE_TAIL
            self.recent_trimmed = True
            return
        self.recent.append(s)
        self.recent_len += len(s)
        if self.recent_len > SAW_TRIM_AT:
            self.trim_recent()

    def trim_recent(self) -> None:
        """Cut the line window back to its last LINE_TAIL characters (due once it holds
        more than SAW_TRIM_AT; ``Sieve.feed``'s fast path appends and calls this)."""
        t = "".join(self.recent)[-LINE_TAIL:]
        self.recent = [t]
        self.recent_len = len(t)
        self.recent_trimmed = True

    def recent_text(self) -> str:
        """The last LINE_TAIL or more characters of the document's visible lines, up to
        now. Pending text is flushed first (a Text event sooner: merged, the events do
        not change), so asking costs O(LINE_TAIL), and only when a guard asks."""
        if self.text_buf:
            self.flush()
        if len(self.recent) > 1:
            self.recent = ["".join(self.recent)]
        return self.recent[0]

    def _text(self, s: str) -> None:
        self.text_buf.append(s)

    # ------------------------------------------------------------------ anchors
    def text_before_tag(self) -> str:
        """What the held tag's origin read before the tag, as far back as a line needs
        (``Marker.anchor``): the visible text for a prose state (``recent_text``: the
        document's lines, a block of calls included), the raw reasoning for a reasoning
        state; "" elsewhere (markup: the composer listens for anchored markers only in
        prose and reasoning)."""
        sink = self.cfg.sinks.get(self.origin, "")
        if sink == "text_char":
            return self.recent_text()
        if sink == "reasoning_char":
            tail = []
            got = 0
            for piece in reversed(self.reason_raw):  # (the last line is enough)
                tail.append(piece)
                got += len(piece)
                if "\n" in piece or got >= LINE_TAIL:
                    break
            else:
                tail.append(self.reason_tail)
            return "".join(reversed(tail))
        return ""

    def anchored(self, anchor: str) -> bool:
        """A marker anchored ``word`` (no word character right before it) or ``line``
        (nothing but spaces or tabs before it on its line, or the stream's start) may
        stand where the held tag began."""
        before = self.text_before_tag()
        if anchor == "word":
            return not before or not (before[-1].isalnum() or before[-1] == "_")
        k = before.rfind("\n")
        return k >= 0 and not before[k + 1 :].strip(" \t")

    def reprocess(self, ch: str = "") -> None:
        self.redo = True

    def settle(self, rerun: Callable[[str, int], None], fire: Callable[[str, str], object], base: int, i: int) -> int:
        """The runner protocol after the step that read ``s[i]`` (``s`` at ``base``):
        read the pushback again at its own offsets, keep ``i`` if the character is to
        be read again, fire ``overflow`` if the block passed its limit. Returns the
        index of the next character to read. Both runners call this, and only this."""
        redo, self.redo = self.redo, False
        # Overflow first: the step that took the block past its limit decides it, before
        # any pushback is read again (else the runners would disagree on whether the
        # pushback's first character is read into the block or spilled).
        if self.block is not None and self.over_limit():
            self.pos = base + i + 1
            fire(OVERFLOW, "")
        if self.pushback:
            pb, self.pushback = self.pushback, ""
            rerun(pb, base + i - len(pb))
        if not redo:
            i += 1
        return i

    def home_is_reasoning(self) -> bool:
        """The open block (or fork) began in reasoning (a state whose sink is the
        reasoning's): it ends there, and what of it is not a call is reasoning."""
        home = self.home
        return home != "text" and self.cfg.sinks.get(home) == "reasoning_char"

    def matcher(self, origin: str | None = None) -> "Matcher":
        origin = origin or self.origin
        m = self.cfg.matchers.get(origin)
        if m is not None:
            return m
        return self.cfg.scoped[origin][self.scope]

    def over_limit(self) -> bool:
        """The open block passed ``max_block_chars`` (an overflowed block no longer
        holds anything, so it never passes it again). A tag being decided counts once
        it is taken into the block: the compiled runner never holds a ``<`` that cannot
        begin a marker, so counting held tags would make the runners disagree; a held
        tag is at most ``MAX_TAG_CHARS``, and a block past the limit is never emitted
        (``BlockModel._end``)."""
        b = self.block
        return b is not None and not b.spilled and b.raw_len > self.cfg.max_block_chars

    def run_budget(self) -> int:
        """Characters a run may take before the block is full: the character that
        passes the limit is not taken by a run but stepped through the table, as the
        reference runner reads it (a value character, or the start of a held tag)."""
        b = self.block
        if b is None or b.spilled:
            return 1 << 62
        return max(0, self.cfg.max_block_chars - b.raw_len)

    def _hold(self, s: str) -> None:
        b = self.block
        assert b is not None
        if b.spilled:
            self._spill(s)
            return
        # (``b.raw.append(s)``, inline: a token stream holds a piece a chunk or more)
        k = len(s)
        raw = b.raw
        recent = raw.recent
        recent.append(s)
        raw.length += k
        if len(recent) >= FLUSH_AT:
            raw.fold()
        b.raw_len += k

    def _spill(self, s: str) -> None:
        """Input of an overflowed block: released as it comes (finding 2 of issue 12).
        The states go on reading the block's structure, so its end is found where the
        grammar puts it and nothing inside the block ever becomes a call."""
        b = self.block
        if b is not None and b.abandoned:
            self.dropped.append(s)  # a streamed call's markup: never text (shown once)
        elif self.home_is_reasoning():
            self.reason_text.append(s)  # (reasoning is private: no policy drops it)
            self.reason_raw.append(s)
        elif self.cfg.on_malformed == "drop" and not (b is not None and b.tolerance):
            self.dropped.append(s)
        else:
            self._text(s)  # (a block that is itself a deviation is released as text, always)
