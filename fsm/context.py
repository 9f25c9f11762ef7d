"""The machine's model: the named guards and actions its transitions refer to.

Both runners drive the same :class:`Context`: the reference runner through
``transitions`` (one trigger per character), the compiled runner through a table read
from that machine. A guard is a method ``guard(ch) -> bool``; an action is a method
``action(ch)``. An action that a self-loop repeats may also have a *run* form,
``action_run(s, i, j)``, equal to applying ``action`` to each of ``s[i:j]``; the
compiled runner uses it to consume a run of characters in one call.

Control flags the runners read after every step:

* ``redo``: the character was not consumed; feed it again in the new state.
* ``pushback``: characters held earlier that must be read again, before ``redo``'s
  character (a rejected tag's tail, for instance).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any, Callable

from callsieve.accum import Pieces
from callsieve.errors import MalformedBlockError
from callsieve.events import Diagnostic, Event, Reasoning, Text, ToolCall, ToolCallDelta, ToolCallStart
from callsieve.matcher import VIABLE, Hit, Matcher
from callsieve.schema import coerce, is_string_only, parse_json_value, types_of
from callsieve.values import ValueDecoder
from callsieve.grammar.api import Dialect, Kind

_LINE_START = re.compile(r"(?:^|\n)[ \t]{0,3}\Z")
#: JSON string escaping (the C encoder behind json.dumps(..., ensure_ascii=False)).
_quote: Any = json.encoder.encode_basestring


@dataclass
class Config:
    """Everything a context needs that does not change while it runs."""

    text_matchers: dict[str, Matcher]
    block_matchers: dict[str, dict[str, Matcher]]
    tools: dict[str, dict[str, Any]] | None
    on_malformed: str
    unknown_tool: str
    max_block_chars: int
    id_prefix: str


@dataclass
class Param:
    name: str
    body: str  # "raw" or "json"
    streaming: bool
    decoder: ValueDecoder
    schema: dict[str, Any] | None
    decoded: Pieces = field(default_factory=Pieces)
    raw_value: Pieces = field(default_factory=Pieces)


@dataclass
class Call:
    name: str
    index: int | None  # None: not streamed (unknown tool under a text/drop policy)
    id: str
    known: bool
    raw_start: int
    raw_end: int = -1
    args: dict[str, Any] = field(default_factory=dict)
    problems: list[str] = field(default_factory=list)
    opened_json: bool = False


@dataclass
class Block:
    dialect: Dialect
    start: int
    raw: Pieces = field(default_factory=Pieces)
    raw_len: int = 0
    calls: list[Call] = field(default_factory=list)
    call: Call | None = None
    param: Param | None = None
    held: list[str] = field(default_factory=list)  # after_close: the close tag and spaces
    cdata_held: str = ""
    json_depth: int = 0
    fatal: str = ""
    bare: bool = False  # implied by a bare call in prose; no block markup of its own


def _kind_guard(kind: Kind) -> Callable[["Context", str], bool]:
    """``is_<kind>``: the held tag plus ``ch`` is a complete marker of this kind.

    One call per guard: maybe_tag tries tag_viable first, so the classification of
    (tag, ch) is already cached when these run; only a miss goes through _classify.
    """

    def guard(self: "Context", ch: str) -> bool:
        if self._peek_version != self._tag_version or self._peek_ch != ch:
            self._classify(ch)
        return self._peek_kind is kind

    guard.__name__ = f"is_{kind.value}"
    return guard


class Context:
    def __init__(self, config: Config) -> None:
        self.cfg = config
        self.state = "text"
        self.out: list[Event] = []
        self.text_buf: list[str] = []
        self.reason_text: list[str] = []
        self.reason_raw: list[str] = []
        self.delta_buf: list[str] = []
        self.delta_index = -1
        self.line_tail = "\n"
        self.pos = 0
        self.next_index = 0
        # maybe_tag
        self.tag = ""
        self.origin = "text"
        self.tag_start = 0
        self._peek_version = -1
        self._peek_ch = ""
        self._peek: tuple[int, Hit | None] = (0, None)
        self._peek_kind: Kind | None = None
        self._tag_version = 0
        # backtick/tilde runs and fences
        self.run_char = ""
        self.run_len = 0
        self.run_at_line_start = False
        self.span_len = 0
        self.fence_char = ""
        self.fence_len = 0
        # tool block
        self.block: Block | None = None
        # runner control
        self.redo = False
        self.pushback = ""

    # ------------------------------------------------------------------ output
    def flush(self) -> None:
        """Emit whatever visible text, reasoning or argument fragment is pending."""
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
        if len(s) >= 4:
            self.line_tail = s[-4:]
        else:
            self.line_tail = (self.line_tail + s)[-4:]

    def _delta(self, call: Call, s: str) -> None:
        if call.index is None or not s:
            return
        if self.delta_index != call.index and self.delta_buf:
            self.flush()
        self.delta_index = call.index
        self.delta_buf.append(s)

    # ------------------------------------------------------------- text guards
    def at_line_start(self, ch: str) -> bool:
        return _LINE_START.search(self.line_tail) is not None

    def same_run_char(self, ch: str) -> bool:
        return ch == self.run_char

    def run_opens_fence(self, ch: str) -> bool:
        return self.run_at_line_start and self.run_len >= 3

    def run_opens_span(self, ch: str) -> bool:
        return self.run_char == "`"

    def run_closes_span(self, ch: str) -> bool:
        return self.run_len == self.span_len

    def fence_may_close(self, ch: str) -> bool:
        return ch == self.fence_char and self.at_line_start(ch)

    def run_closes_fence(self, ch: str) -> bool:
        return self.run_len >= self.fence_len

    # ------------------------------------------------------------ text actions
    def text_char(self, ch: str) -> None:
        self._text(ch)

    def text_run(self, s: str, i: int, j: int) -> int:
        self._text(s[i:j])
        return j

    def run_begin(self, ch: str) -> None:
        self.run_at_line_start = self.at_line_start(ch)
        self.run_char = ch
        self.run_len = 1
        self._text(ch)

    def run_more(self, ch: str) -> None:
        self.run_len += 1
        self._text(ch)

    def open_fence(self, ch: str) -> None:
        self.fence_char = self.run_char
        self.fence_len = self.run_len

    def open_span(self, ch: str) -> None:
        self.span_len = self.run_len

    def reprocess(self, ch: str = "") -> None:
        self.redo = True

    def reasoning_char(self, ch: str) -> None:
        self.reason_text.append(ch)
        self.reason_raw.append(ch)

    def reasoning_run(self, s: str, i: int, j: int) -> int:
        seg = s[i:j]
        self.reason_text.append(seg)
        self.reason_raw.append(seg)
        return j

    # ------------------------------------------------------------- maybe_tag
    def matcher(self, origin: str | None = None) -> Matcher:
        origin = origin or self.origin
        if self.block is None:
            return self.cfg.text_matchers[origin]
        return self.cfg.block_matchers[self.block.dialect.name][origin]

    def _classify(self, ch: str) -> tuple[int, Hit | None]:
        # Every guard of maybe_tag asks about the same (held tag + ch): decide it once.
        if self._peek_version != self._tag_version or self._peek_ch != ch:
            self._peek_version = self._tag_version
            self._peek_ch = ch
            self._peek = self.matcher().classify(self.tag + ch)
            hit = self._peek[1]
            self._peek_kind = hit.kind if hit is not None else None
        return self._peek

    def _hit(self, ch: str, kind: Kind) -> bool:
        self._classify(ch)
        return self._peek_kind is kind

    def tag_viable(self, ch: str) -> bool:
        return self._classify(ch)[0] == VIABLE

    is_think_open = _kind_guard(Kind.THINK_OPEN)
    is_think_close = _kind_guard(Kind.THINK_CLOSE)
    is_block_open = _kind_guard(Kind.BLOCK_OPEN)
    is_block_close = _kind_guard(Kind.BLOCK_CLOSE)
    is_call_open = _kind_guard(Kind.CALL_OPEN)
    is_call_close = _kind_guard(Kind.CALL_CLOSE)

    def is_param_open(self, ch: str) -> bool:
        return self._hit(ch, Kind.PARAM_OPEN) and self._param_body(ch) == "raw"

    def is_param_open_json(self, ch: str) -> bool:
        return self._hit(ch, Kind.PARAM_OPEN) and self._param_body(ch) == "json"

    is_param_close = _kind_guard(Kind.PARAM_CLOSE)
    is_cdata_open = _kind_guard(Kind.CDATA_OPEN)

    def _param_body(self, ch: str) -> str:
        hit = self._classify(ch)[1]
        assert hit is not None and self.block is not None
        if hit.fields.get("string", "").lower() == "false" and "json" in self.block.dialect.bodies:
            return "json"
        return "raw"

    def from_text(self, ch: str) -> bool:
        return self.origin == "text"

    def from_reasoning(self, ch: str) -> bool:
        return self.origin == "in_reasoning"

    def from_param(self, ch: str) -> bool:
        return self.origin == "in_param"

    def from_json(self, ch: str) -> bool:
        return self.origin == "json_value"

    def from_after_close(self, ch: str) -> bool:
        return self.origin == "after_close"

    def tag_begin(self, ch: str) -> None:
        self.origin = self.state
        self.tag = ch
        self.tag_start = self.pos
        self._tag_version += 1

    def tag_viable_run(self, s: str, i: int) -> int:
        """End of the longest run ``s[i:j]`` each character of which ``tag_viable``
        would accept in turn (the run form of the guard, for the compiled runner)."""
        classify = self.matcher().classify
        tag = self.tag
        j, n = i, len(s)
        while j < n and classify(tag + s[i : j + 1])[0] == VIABLE:
            j += 1
        return j

    def tag_push_run(self, s: str, i: int, j: int) -> int:
        self.tag += s[i:j]
        self._tag_version += 1
        return j

    def tag_push(self, ch: str) -> None:
        self.tag += ch
        self._tag_version += 1

    def _take_tag(self, ch: str) -> str:
        tag = self.tag + ch
        self.tag = ""
        self._tag_version += 1
        return tag

    def tag_reject(self, ch: str) -> None:
        """Not a marker: its first character belongs to where it came from; the rest
        is read again there (it may hold a backtick or the start of a real marker)."""
        first, rest = self.tag[0], self.tag[1:]
        self.tag = ""
        self._tag_version += 1
        if self.origin == "text":
            self._text(first)
        elif self.origin == "in_reasoning":
            self.reasoning_char(first)
        else:
            self._hold(first)
            self._value(first)
        self.pushback = rest

    def tag_release_eof(self, ch: str = "") -> None:
        """End of stream inside a held tag that came from text or reasoning."""
        tag, self.tag = self.tag, ""
        if self.origin == "in_reasoning":
            self.reason_text.append(tag)
            self.reason_raw.append(tag)
        else:
            self._text(tag)

    # --------------------------------------------------------------- reasoning
    def enter_reasoning(self, ch: str) -> None:
        tag = self._take_tag(ch)
        self.flush()
        self.reason_raw.append(tag)

    def leave_reasoning(self, ch: str) -> None:
        self.reason_raw.append(self._take_tag(ch))
        self.flush()

    def stray_think_close(self, ch: str) -> None:
        tag = self._take_tag(ch)
        self._emit(
            Diagnostic(
                "stray_reasoning_close",
                "</think> without <think>: the text before it was shown as text; "
                "pass start_in_reasoning=True when the prompt ends inside reasoning",
                self.tag_start,
            )
        )
        self.reason_raw.append(tag)
        self.flush()

    # ------------------------------------------------------------------ blocks
    def _hold(self, s: str) -> None:
        b = self.block
        assert b is not None
        b.raw.append(s)
        b.raw_len += len(s)

    def over_limit(self) -> bool:
        b = self.block
        return b is not None and b.raw_len > self.cfg.max_block_chars

    def run_budget(self) -> int:
        """Characters a block may still take before ``overflow`` must fire."""
        b = self.block
        if b is None:
            return 1 << 62
        return max(1, self.cfg.max_block_chars + 1 - b.raw_len)

    def open_block(self, ch: str) -> None:
        tag = self._take_tag(ch)
        hit = self.matcher("text").classify(tag)[1]
        assert hit is not None and hit.dialect is not None
        self.flush()
        self.block = Block(hit.dialect, self.tag_start)
        self._hold(tag)

    def hold_char(self, ch: str) -> None:
        self._hold(ch)

    def hold_run(self, s: str, i: int, j: int) -> int:
        j = min(j, i + self.run_budget())
        self._hold(s[i:j])
        return j

    def open_bare_call(self, ch: str) -> None:
        """A call open in prose, for a dialect whose calls may stand without a block."""
        hit = self._classify(ch)[1]
        assert hit is not None and hit.dialect is not None
        self.flush()
        self.block = Block(hit.dialect, self.tag_start, bare=True)
        self.open_call(ch)

    def in_bare_block(self, ch: str) -> bool:
        return self.block is not None and self.block.bare

    def from_bare_block(self, ch: str) -> bool:
        return self.origin == "in_block" and self.block is not None and self.block.bare

    def end_bare_block(self, ch: str = "") -> None:
        """An implied block ends where grammar stops: its calls are complete."""
        b = self.block
        assert b is not None
        self.block = None
        tag, self.tag = self.tag, ""
        self._tag_version += 1
        if b.fatal or not b.calls:
            self._release(b, "malformed_block", b.fatal or "block holds no call")
        else:
            self._emit_calls(b)
        if tag and ch:
            self.pushback = tag  # read again as prose
        elif tag:
            self._text(tag)  # the stream ended on it

    def open_call(self, ch: str) -> None:
        b = self.block
        assert b is not None
        hit = self._classify(ch)[1]
        assert hit is not None
        tag = self._take_tag(ch)
        self._close_pending()
        name = hit.fields["name"]
        tools = self.cfg.tools
        known = tools is None or name in tools
        streamed = known or self.cfg.unknown_tool == "call"
        index: int | None = None
        if streamed:
            index = self.next_index
            self.next_index += 1
        call = Call(name, index, f"{self.cfg.id_prefix}{index if index is not None else 'x'}", known, b.raw_len)
        b.call = call
        b.calls.append(call)
        self._hold(tag)
        if index is not None:
            self._emit(ToolCallStart(index, call.id, name))

    def open_param(self, ch: str) -> None:
        b = self.block
        assert b is not None
        hit = self._classify(ch)[1]
        assert hit is not None
        body = self._param_body(ch)
        tag = self._take_tag(ch)
        if self.origin == "after_close":
            self._commit_param()
        call = b.call
        if call is None:
            # A parameter with no call around it: the block is not one we can read.
            b.fatal = "parameter outside a call"
            call = Call("", None, "", False, b.raw_len)
            b.call = call
        name = hit.fields["name"]
        schema = None
        if self.cfg.tools is not None and call.name in self.cfg.tools:
            schema = self.cfg.tools[call.name].get(name)
        flag = hit.fields.get("string", "").lower()
        if body == "json":
            streaming = False
        elif schema is not None:
            streaming = is_string_only(schema)
        else:
            streaming = flag != "false"
        b.param = Param(name, body, streaming, ValueDecoder(b.dialect.value), schema)
        b.json_depth = 0
        self._hold(tag)
        if streaming:
            self._delta(call, self._key_prefix(call, name) + '"')

    def _key_prefix(self, call: Call, name: str) -> str:
        lead = ", " if call.opened_json else "{"
        call.opened_json = True
        return lead + json.dumps(name, ensure_ascii=False) + ": "

    def _value(self, s: str, cdata: bool = False) -> None:
        b = self.block
        assert b is not None and b.param is not None
        p = b.param
        if p.body == "json":
            p.raw_value.append(s)
            return
        out = p.decoder.feed(s, cdata)
        if out:
            p.decoded.append(out)
            call = b.call
            if p.streaming and call is not None and call.index is not None:
                # _delta, inlined: this runs once per chunk of a streamed value.
                if self.delta_index != call.index and self.delta_buf:
                    self.flush()
                self.delta_index = call.index
                self.delta_buf.append(_quote(out)[1:-1])

    def value_char(self, ch: str) -> None:
        self._hold(ch)
        self._value(ch)

    def value_run(self, s: str, i: int, j: int) -> int:
        b = self.block
        assert b is not None
        if b.raw_len + (j - i) > self.cfg.max_block_chars:
            j = min(j, i + self.run_budget())
        seg = s[i:j]
        b.raw.append(seg)
        b.raw_len += j - i
        self._value(seg)
        return j

    def json_open(self, ch: str) -> None:
        self.value_char(ch)
        assert self.block is not None
        self.block.json_depth += 1

    def json_close(self, ch: str) -> None:
        self.value_char(ch)
        assert self.block is not None
        self.block.json_depth -= 1

    def json_at_top(self, ch: str) -> bool:
        return self.block is not None and self.block.json_depth <= 0

    # CDATA inside a value
    def open_cdata(self, ch: str) -> None:
        self._hold(self._take_tag(ch))

    def cdata_char(self, ch: str) -> None:
        self._hold(ch)
        self._value(ch, cdata=True)

    def cdata_run(self, s: str, i: int, j: int) -> int:
        j = min(j, i + self.run_budget())
        seg = s[i:j]
        self._hold(seg)
        self._value(seg, cdata=True)
        return j

    def cdata_hold(self, ch: str) -> None:
        assert self.block is not None
        self._hold(ch)
        self.block.cdata_held += ch

    def cdata_shift(self, ch: str) -> None:
        b = self.block
        assert b is not None
        self._hold(ch)
        self._value(b.cdata_held[0], cdata=True)
        b.cdata_held = b.cdata_held[1:] + ch

    def cdata_release(self, ch: str) -> None:
        b = self.block
        assert b is not None
        self._value(b.cdata_held, cdata=True)
        b.cdata_held = ""

    def close_cdata(self, ch: str) -> None:
        assert self.block is not None
        self._hold(ch)
        self.block.cdata_held = ""

    # after_close: a parameter close waiting for what follows it
    def hold_close(self, ch: str) -> None:
        b = self.block
        assert b is not None
        tag = self._take_tag(ch)
        self._hold(tag)
        b.held = [tag]

    def hold_ws(self, ch: str) -> None:
        assert self.block is not None
        self._hold(ch)
        self.block.held.append(ch)

    def hold_ws_run(self, s: str, i: int, j: int) -> int:
        j = min(j, i + self.run_budget())
        seg = s[i:j]
        assert self.block is not None
        self._hold(seg)
        self.block.held.append(seg)
        return j

    def reopen_json(self, ch: str) -> bool:
        b = self.block
        return b is not None and b.param is not None and b.param.body == "json"

    def reopen_value(self, ch: str) -> None:
        """What followed the close is not grammar: the close was part of the value."""
        b = self.block
        assert b is not None
        held = "".join(b.held)
        b.held = []
        p = b.param
        assert p is not None
        if p.body == "json":
            p.raw_value.append(held)
        else:
            self._value(held)
        if self.tag:
            self.pushback = self.tag
            self.tag = ""
            self._tag_version += 1

    def _commit_param(self) -> None:
        b = self.block
        assert b is not None
        p, call = b.param, b.call
        b.param = None
        b.held = []
        if p is None or call is None:
            return
        if p.body == "json":
            raw = p.raw_value.join()
            p.raw_value = Pieces()
            value, problem = parse_json_value(raw)
            if problem is None and p.schema is not None and types_of(p.schema) and isinstance(value, str):
                value, problem = coerce(value, p.schema)
        else:
            tail = p.decoder.finish()
            if tail:
                p.decoded.append(tail)
            text = p.decoded.join()
            p.decoded = Pieces()
            if p.streaming:
                if tail:
                    self._delta(call, _quote(tail)[1:-1])
                self._delta(call, '"')
                value, problem = text, None
            elif p.schema is not None:
                value, problem = coerce(text, p.schema)
            else:
                value, problem = text, None
        if problem:
            call.problems.append(f"{call.name}.{p.name}: {problem}")
        if p.name in call.args:
            b.fatal = f"parameter {p.name!r} given twice in call {call.name!r}"
        call.args[p.name] = value
        if not p.streaming:
            self._delta(call, self._key_prefix(call, p.name) + json.dumps(value, ensure_ascii=False))

    def _close_pending(self) -> None:
        """Close what an earlier close left open (a value after_close, or a call)."""
        if self.origin == "after_close":
            self._commit_param()
        b = self.block
        assert b is not None
        if b.call is not None:
            self._finish_call(b.call)

    def _finish_call(self, call: Call) -> None:
        b = self.block
        assert b is not None
        self._delta(call, "}" if call.opened_json else "{}")
        call.raw_end = b.raw_len
        b.call = None

    def close_call(self, ch: str) -> None:
        if self.origin == "after_close":
            self._commit_param()
        b = self.block
        assert b is not None
        tag = self._take_tag(ch)
        self._hold(tag)
        if b.call is None:
            b.fatal = "call close without a call"
            return
        self._finish_call(b.call)

    def close_block(self, ch: str) -> None:
        b = self.block
        assert b is not None
        tag = self._take_tag(ch)
        self._close_pending()
        self._hold(tag)
        self.block = None
        b.bare = False  # a block close after bare calls: the opening wrapper was lost
        if b.fatal or not b.calls:
            self._release(b, "malformed_block", b.fatal or "block holds no call")
            return
        self._emit_calls(b)

    def _emit_calls(self, b: Block) -> None:
        raw = b.raw.join()
        b.raw = Pieces()
        tail = ""
        if b.bare:
            # Spaces after the last call of an implied block are prose again.
            cut = b.calls[-1].raw_end
            raw, tail = raw[:cut], raw[cut:]
        kept = [c for c in b.calls if c.index is not None and (c.known or self.cfg.unknown_tool == "call")]
        for c, start, end in _segments(b.calls, kept, len(raw)):
            piece = raw if (start == 0 and end == len(raw)) else raw[start:end]
            if not c.known:
                self._emit(Diagnostic("unknown_tool", f"call to {c.name!r}, which is not in tools", b.start, ""))
            for problem in c.problems:
                self._emit(Diagnostic("type_mismatch", problem, b.start))
            if c in kept:
                assert c.index is not None
                self._emit(ToolCall(c.index, c.id, c.name, c.args, piece, b.dialect.name))
            elif self.cfg.unknown_tool == "text":
                self._text(piece)
            else:
                self._emit(Diagnostic("dropped_call", f"call to {c.name!r} dropped by policy", b.start, piece))
        if tail:
            self._text(tail)

    def _release(self, b: Block, code: str, why: str) -> None:
        """A block that is not a call after all: back to the user, as the policy says."""
        raw = b.raw.join()
        b.raw = Pieces()
        abandoned = [c.index for c in b.calls if c.index is not None]
        message = why
        if abandoned:
            message += f"; calls {abandoned} abandoned"
        policy = self.cfg.on_malformed
        if policy == "drop":
            self._emit(Diagnostic(code, message + "; dropped", b.start, raw))
            return
        diag = Diagnostic(code, message + "; released as text", b.start)
        self._emit(diag)
        if policy == "raise":
            raise MalformedBlockError(f"{code} at offset {b.start}: {why}", diag)
        self._text(raw)

    def abort_block(self, ch: str) -> None:
        """Something that is not grammar where only markup may stand."""
        b = self.block
        assert b is not None
        self.block = None
        self._release(b, "malformed_block", f"unexpected {ch!r} in a {b.dialect.name} block at offset {self.pos}")
        if self.tag:
            self.pushback = self.tag
            self.tag = ""
            self._tag_version += 1

    def abort_block_eof(self, ch: str = "") -> None:
        b = self.block
        assert b is not None
        if self.tag:
            self._hold(self.tag)
            self.tag = ""
        self.block = None
        if b.held:
            b.held = []
        self._release(b, "unterminated_block", f"the stream ended inside a {b.dialect.name} block")

    def abort_oversized(self, ch: str = "") -> None:
        b = self.block
        assert b is not None
        self.block = None
        self._release(b, "block_too_large", f"block passed max_block_chars={self.cfg.max_block_chars}")


def _segments(calls: list[Call], kept: list[Call], total: int) -> list[tuple[Call, int, int]]:
    """Cut a block's raw text into one contiguous span per call, in order.

    Each call's span runs to its close; the last one runs to the block's end. A call
    that is not kept (unknown tool under a text/drop policy) hands the markup before
    its own open to the kept call before it, so only its own span is shown or dropped.
    """
    segs: list[list[Any]] = []
    prev = 0
    for n, c in enumerate(calls):
        end = total if n == len(calls) - 1 else c.raw_end
        segs.append([c, prev, end])
        prev = end
    for k in range(1, len(segs)):
        c = segs[k][0]
        if c not in kept and segs[k - 1][0] in kept:
            segs[k - 1][2] = c.raw_start
            segs[k][1] = c.raw_start
    return [(c, s, e) for c, s, e in segs]

