"""Blocks: a dialect's positions between markers, and holding, emitting, releasing.

The positions are generated from each dialect's structure (``callsieve.structure``):
one state per distinct FOLLOW set, named after its role (``qwen3_coder.in_block``:
between calls; ``qwen3_coder.in_call``: between parameters). In a position only
whitespace is grammar besides the markers it listens for; anything else makes the block
*malformed*: it is released (as text by default) with a ``Diagnostic`` and reading goes
on in ``text``. A block still open at ``eof`` is released the same way. Calls are
emitted only when their block closes.

A *bare* block (a dialect's block with no open marker, e.g. a DSML invoke standing in
prose) opens with its first call and ends, complete, at the first thing after a call
that is not grammar (``end_bare_block``); its spaces after the last call are prose.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Iterable

import json
import re

import regex

from callsieve.native import mypyc_attr, trait
from callsieve.accum import FLUSH_AT, Pieces
from callsieve.errors import MalformedBlockError
from callsieve.events import Diagnostic, Text, ToolCall, ToolCallAbandoned, ToolCallStart
from callsieve.grammar.states import ALL, EOF_TRIGGER, OVERFLOW, RANK_FALLBACK, START, Region, Rule, StateDecl, but, on
from callsieve.regions import dumps
from callsieve.grammar.api import SAME_FIELD, tag_fields
from callsieve.regions.tag import TagModel, marker_spellings
from callsieve.schema import coerce, fits, types_of
from callsieve.matcher import DEAD

# (Imported at run time: the compiled build's dataclasses read their field types when the
# module loads. Param cannot be: value.py imports this module.)
from callsieve.structure import BlockSpec, Position


@dataclass(init=False)
class Call:
    """One call of a block. (Containers most calls never fill are None until their
    first use: a block of thousands of calls holds every one of them until it closes,
    and each container the cyclic garbage collector tracks is traversed again at every
    collection: in a 1 MB block of calls, a fifth of the time went there.)"""

    name: str
    index: int | None  # None: not streamed (unknown tool under a text/drop policy)
    id: str
    known: bool
    raw_start: int
    raw_end: int
    args: dict[str, Any]
    #: what does not fit (type mismatches, ...): each becomes a Diagnostic (None: nothing)
    problems: list[str] | None
    opened_json: bool
    #: ToolCallStart was emitted (or the call will never stream: unknown under a policy)
    started: bool
    #: an id the wire carried (Kimi ``functions.NAME:IDX``), used when the call's ids are "wire"
    wire_id: str
    wire_ids: bool
    #: the arguments come from a JSON body, streamed as canonical JSON text
    json_args: bool
    #: the canonical JSON text of JSON arguments, as produced (None until the first piece)
    args_text: Pieces | None
    args_started: bool
    args_done: bool
    #: canonical text produced before the call's start (its name was not known yet)
    pending: list[str] | None
    #: the Diagnostic code when this call's close is left out (``Call(implied_close=)``)
    implied_code: str
    #: keys the call's arguments may be wrapped in once (``Call(wrapped=)``)
    wrapped: tuple[str, ...]
    #: a first parameter that may wrap every argument: (key, value as written, the
    #: object it holds), its fragment held until the call shows whether it is the only one
    deferred: tuple[str, Any, dict[str, Any]] | None
    #: the Diagnostic code when a parameter repeated under an array schema becomes an
    #: array (``Call(repeated=)``); such parameters are held until the call closes
    repeated: str
    arrays: dict[str, list[tuple[Any, str | None, str]]] | None
    #: arguments not held twice (issue 13, item 5): key → the span of the block's raw
    #: text that is its value, cut when the block is emitted
    spans: dict[str, tuple[int, int]] | None
    #: keys whose values are raw text (a value grammar's ``Raw``): a markup close may
    #: have cut one short, so each is checked for a heredoc that never ends (None: none)
    raw_keys: list[str] | None
    #: Why the call is refused though its block stands ("" while it is a call): a value
    #: grammar read it to its end and found it no call (a name where a literal must be).
    #: It is released alone, with a Diagnostic; the block's other calls stand.
    bad: str
    #: the last fragment of the call's arguments (its closing ``}``), withheld until the
    #: call is emitted: the fragments of a call that is abandoned never make a whole
    #: JSON object, so no client takes a call that was given up for a complete one
    closing: str

    def __init__(self, name: str, index: int | None, id: str, known: bool, raw_start: int,
                 args: dict[str, Any] | None = None) -> None:
        # (written out, not made by ``dataclass``: its generated ``__init__`` is
        # interpreted even in the compiled build, where this one is native; one is
        # made per call, block, value or JSON container)
        self.name = name
        self.index = index
        self.id = id
        self.known = known
        self.raw_start = raw_start
        self.raw_end = -1
        self.args = {} if args is None else args
        self.problems = None
        self.opened_json = False
        self.started = False
        self.wire_id = ""
        self.wire_ids = False
        self.json_args = False
        self.args_text = None
        self.args_started = False
        self.args_done = False
        self.pending = None
        self.implied_code = ""
        self.wrapped = ()
        self.deferred = None
        self.repeated = ""
        self.arrays = None
        self.spans = None
        self.raw_keys = None
        self.bad = ""
        self.closing = ""

    def problem(self, note: str) -> None:
        if self.problems is None:
            self.problems = []
        self.problems.append(note)


@dataclass(init=False)
class Block:
    spec: BlockSpec
    start: int
    raw: Pieces
    raw_len: int
    calls: list[Call]
    call: Call | None
    #: the open parameter (``callsieve.regions.value.Param``; Any: value.py imports this module)
    param: Any
    #: after_close: the close tag and the spaces after it, until what follows decides
    held: list[str]
    cdata_held: str
    #: CDATA sections opened inside the open one and not closed yet (a model that
    #: wraps XML holding CDATA in CDATA nests them), and the last characters of its
    #: data (where a ``<![CDATA[`` split between pieces is found)
    cdata_depth: int
    cdata_tail: str
    #: where the open CDATA section began in ``raw`` (a deviation's section is searched
    #: for real openers when it closes: ``opener_inside``)
    cdata_open_at: int
    #: Nested CDATA read so far (``nested_cdata``): the data after the first inner
    #: ``]]>``, held until the outer section closes (then the value's, if neither the
    #: value's close nor a real opener stands in it; else the nesting is withdrawn and
    #: the section ends at that ``]]>``, as XML reads it). ``cdata_from``: where in
    #: ``raw`` the inner ``]]>`` ended; ``cdata_withdrawn``: no nesting is read in this
    #: block any more (what is read again is read once).
    cdata_pending: Pieces | None
    cdata_from: int
    cdata_note_at: int
    cdata_withdrawn: bool
    json_depth: int
    #: a parameter's key read before its value opens (``Param.between``: GLM ``<arg_key>``)
    key: str
    #: why the block cannot be emitted, once known ("" while it can)
    malformed_reason: str
    #: a bare block whose close arrived: it is a whole block after all
    closed: bool
    #: passed max_block_chars: released, its rest streamed out (``ModelBase._spill``)
    #: while the states keep reading its structure to find where it ends
    spilled: bool
    #: tolerated deviations read so far (grammar.api tolerances): emitted with the calls
    tolerated: list[Diagnostic]
    #: how many of ``tolerated`` there were before the held value close was read: a
    #: close variant that turns out to be data (``reopen_value``) reports nothing
    held_mark: int
    #: The Diagnostic code of a block that is itself a deviation ("" if not).
    #: (This and ``held_back`` are read from the spec once: actions ask them per call
    #: and per value.)
    tolerance: str
    #: A deviation whose close is the evidence: its calls stream once it is read.
    held_back: bool
    #: Opened by its own body where the response begins (``callsieve.regions.start``):
    #: with ``tools=``, its first call must name a known tool (``proven``) before any of
    #: it streams; a block never proven is prose that looks like calls (text, ``noise``).
    by_body: bool
    proven: bool
    #: Calls of it were streamed and then abandoned (``ToolCallAbandoned``): what is
    #: still read of it (a spilled block's rest) is never shown as text.
    abandoned: bool
    #: Given up part-way and read on to its close (``block_rest``): its calls were
    #: streamed, or a policy drops it, so what follows the failure up to the block's
    #: close is its markup too, never text (shown once). ``rest_from``: where the
    #: failure was, in its raw (what follows it is read again as prose if no close comes).
    rest: bool
    rest_from: int
    #: The length of the opener its raw begins with (a block opened at a marker of its
    #: own; 0: a bare block opened by a call): a block that fails may leave it as an
    #: orphan control token (``Dialect(orphans=)``).
    open_len: int
    #: ``Block(same=True)``: what the opener read in its ``same`` group (lowercased;
    #: "" where it has none), which every marker of the block must read; None: no check.
    same: str | None

    def __init__(self, spec: BlockSpec, start: int) -> None:
        # (written out, not made by ``dataclass``: its generated ``__init__`` is
        # interpreted even in the compiled build, where this one is native; one is
        # made per call, block, value or JSON container)
        self.spec = spec
        self.start = start
        self.raw = Pieces()
        self.raw_len = 0
        self.calls = []
        self.call = None
        self.param = None
        self.held = []
        self.cdata_held = ""
        self.cdata_depth = 0
        self.cdata_tail = ""
        self.cdata_open_at = 0
        self.cdata_pending = None
        self.cdata_from = 0
        self.cdata_note_at = 0
        self.cdata_withdrawn = False
        self.json_depth = 0
        self.key = ""
        self.malformed_reason = ""
        self.closed = False
        self.spilled = False
        self.tolerated = []
        self.held_mark = 0
        blk = spec.block
        self.tolerance = blk.tolerance
        self.held_back = bool(blk.tolerance) and blk.close is not None and not blk.close_optional
        self.by_body = False
        self.proven = False
        self.abandoned = False
        self.rest = False
        self.rest_from = 0
        self.open_len = 0
        self.same = None

    @property
    def dialect_name(self) -> str:
        return self.spec.dialect.name


@trait
@mypyc_attr(allow_interpreted_subclasses=True)
class BlockModel(TagModel):
    #: tolerated deviations read before their block opened (a variant block open)
    notes: list[Diagnostic]

    # ------------------------------------------------------------- holding
    def hold_char(self, ch: str) -> None:
        self._hold(ch)

    def hold_run(self, s: str, i: int, j: int) -> int:
        b = self.block
        assert b is not None
        if b.raw_len + (j - i) > self.cfg.max_block_chars:
            j = min(j, i + self.run_budget())
        if b.spilled:
            self._spill(s[i:j])
        else:
            raw = b.raw  # (``_hold``, inline)
            recent = raw.recent
            recent.append(s[i:j])
            raw.length += j - i
            if len(recent) >= FLUSH_AT:
                raw.fold()
            b.raw_len += j - i
        return j

    def _block(self) -> Block:
        b = self.block
        assert b is not None
        return b

    # -------------------------------------------------------------- opening
    def open_block(self, ch: str) -> None:
        hit = self._hit(ch)
        leaf = hit.entry.data
        tag = self._take_tag(ch)
        self.bind_block(getattr(leaf, "spec"), tag, self.tag_start)
        self.enter_body(ch)

    def bind_block(self, spec: object, tag: str, start: int) -> None:
        self.flush()
        self.block = Block(spec, start)  # type: ignore[arg-type]
        self.block.open_len = len(tag)
        blk = getattr(spec, "block")
        if blk.same:
            self.block.same = ""
            for m in marker_spellings(blk.open, self.cfg.strict):
                found = regex.fullmatch(m.pattern, tag) or (regex.fullmatch(m.pattern, tag[1:]) if len(tag) > 1 else None)
                if found is not None:
                    self.block.same = tag_fields(found).get(SAME_FIELD, "").lower()
                    break
        self._opened_at_home(self.block)
        self._take_notes(self.block)
        self._hold(tag)

    def _opened_at_home(self, b: Block) -> None:
        """The block began where its opener was read (``home``). In reasoning it is
        held whole, its calls streamed only if the reasoning resolves them as calls
        (``ReasoningModel.hold_in_reasoning``)."""
        self.home = self.origin
        if self.home_is_reasoning():
            b.held_back = True

    def _take_notes(self, b: Block) -> None:
        if self.notes:
            b.tolerated += self.notes
            self.notes = []

    def same_as_opener(self, hit: object) -> bool:
        """A marker of the open block's dialect reads what the block's opener read in its
        ``same`` group (``Block(same=True)``); any other marker, or no such block: True."""
        b = self.block
        if b is None or b.same is None:
            return True
        spec = getattr(getattr(hit, "entry").data, "spec", None)
        if spec is None or getattr(spec, "dialect", None) is not b.spec.dialect:
            return True
        fields: dict[str, str] = getattr(hit, "fields")
        return fields.get(SAME_FIELD, "").lower() == b.same

    def tolerate(self, code: str, what: str, offset: int) -> None:
        """A tolerated deviation was read: it is reported with the block's calls."""
        d = Diagnostic(code, what, offset)
        if self.block is None:
            self.notes.append(d)  # the block it belongs to opens next
        else:
            self.block.tolerated.append(d)

    def open_bare_block(self, ch: str) -> None:
        """A bare block's first marker in prose, not itself a call's open (Mistral's
        ``[TOOL_CALLS]``): the implied block opens; what follows decides the calls."""
        hit = self._hit(ch)
        tag = self._take_tag(ch)
        self.bind_block(getattr(hit.entry.data, "spec"), tag, self.tag_start)
        self.enter_body(ch)

    def open_bare_call(self, ch: str) -> None:
        """A call open in prose, for a block whose calls may stand without it."""
        hit = self._hit(ch)
        self.flush()
        self.block = Block(getattr(hit.entry.data, "spec"), self.tag_start)
        self._opened_at_home(self.block)
        self._take_notes(self.block)
        self.open_call(ch)

    def _imply_call_close(self, b: Block, before: str) -> None:
        """Tolerance (``Call(implied_close=...)``): the open call's close was left out
        before ``before``; the call ends here."""
        call = b.call
        if call is None or not call.implied_code:
            return  # (a call whose close may not be left out: the grammar never gets here)
        self.tolerate(call.implied_code, f"the close of call {call.name!r} was left out before {before}; "
                      "the call ends there", self.tag_start)
        self.finish_call(call)

    def open_call(self, ch: str) -> None:
        b = self.block
        assert b is not None
        hit = self._hit(ch)
        leaf = getattr(hit.entry.data, "leaf", None)
        if b.call is not None:
            self._imply_call_close(b, "the next call")
        tag = self._take_tag(ch)
        self._begin_call(b, leaf, tag, hit.fields.get("name", ""))
        self.enter_body(ch)

    def _begin_call(self, b: Block, leaf: object, tag: str, name: str) -> None:
        """A call's open ``tag`` was read (``leaf``: its open marker's leaf)."""
        call = self.new_call(b)
        decl = getattr(leaf, "call", None)
        if decl is not None:
            call.implied_code = getattr(decl, "implied_close", "")
            call.wrapped = getattr(decl, "wrapped", ())
            call.repeated = getattr(decl, "repeated", "")
            call.wire_ids = getattr(decl, "ids", "") == "wire"
        self._hold(tag)
        if name:
            self.name_call(call, name)

    def bind_call(self, spec: object, leaf: object, opener: object, tag: str, start: int) -> None:
        """A fork bound a bare block's first call's open (``<function=…>``, shared by
        qwen3_coder and the Hermes family): the implied block opens with that call,
        named by the open as its own marker reads it."""
        self.flush()
        b = self.block = Block(spec, start)  # type: ignore[arg-type]
        self._opened_at_home(b)
        self._take_notes(b)
        name = ""
        for m in marker_spellings(opener, self.cfg.strict):
            found = regex.fullmatch(m.pattern, tag)
            if found is not None:
                name = tag_fields(found).get("name", "")
                break
        self._begin_call(b, leaf, tag, name)

    def new_call(self, b: Block) -> Call:
        """A call whose name may still be to come (from a capture or a JSON field)."""
        call = Call("", None, "", False, b.raw_len)
        b.call = call
        b.calls.append(call)
        return call

    def name_call(self, call: Call, name: str) -> None:
        tools = self.cfg.tools
        call.name = name
        call.known = tools is None or name in tools
        b = self.block
        if b is not None and b.by_body and not b.proven:
            # A block its own body opened is a call only on evidence: with tools=, its
            # first call names a known tool; else it is prose that looks like one (and a
            # later call that names one proves nothing: ``[{"name": "launch"}, {"name":
            # "get_time"}]`` was not calls from its first).
            if not call.known or b.calls[0] is not call:
                b.malformed_reason = b.malformed_reason or (
                    f"{name!r} is not in tools: a block with no marker of its own is a call only when its first "
                    "call names a known tool")
                return
            b.proven = True
        if not call.wire_ids and not (b is not None and b.tolerance):
            # (a call of a block that is a deviation starts once more of it is read:
            # a parameter, or its close; prose that mentions a call open streams nothing)
            self.start_call(call)

    def start_call(self, call: Call) -> None:
        """``ToolCallStart`` once the name (and the wire id, if the call has one) is
        known; canonical text produced before it follows as one fragment."""
        if call.started or not call.name:
            return
        b = self.block
        if b is not None and b.held_back:
            return  # a deviation whose close is the evidence: started when it is read (_emit_calls)
        if b is not None and b.by_body and not b.proven:
            return  # no evidence yet that this block is calls (name_call)
        call.started = True
        if self.block is not None and self.block.spilled:
            return  # an overflowed block streams nothing and keeps no calls
        b = self.block
        weak = b is not None and bool(b.tolerance) and self.cfg.tools is not None
        if call.known or (self.cfg.unknown_tool == "call" and not weak):
            call.index = self.next_index
            self.next_index += 1
        if call.wire_ids and call.wire_id:
            call.id = call.wire_id
            if call.id in self.ids_seen and call.index is not None:
                # The same wire id twice in one response (Kimi ``functions.f:0``, again):
                # a client keys calls by id, so it is made unique, and said.
                n = 2
                while f"{call.wire_id}#{n}" in self.ids_seen:
                    n += 1
                call.id = f"{call.wire_id}#{n}"
                self.tolerate("duplicate_call_id", f"call id {call.wire_id!r} given again; this call's id is {call.id!r}",
                              self.block.start if self.block is not None else self.pos)
            self.ids_seen.add(call.id)
        else:
            call.id = f"{self.cfg.id_prefix}{call.index if call.index is not None else 'x'}"
        if call.index is not None:
            self._emit(ToolCallStart(call.index, call.id, call.name))
            if call.pending:
                self._delta(call, "".join(call.pending))
        call.pending = None

    def finish_call(self, call: Call) -> None:
        """The call's own markup ended: its arguments are decided (a refused call's
        are not: it is released alone when its block is emitted)."""
        b = self.block
        assert b is not None
        if call.bad:
            call.raw_end = b.raw_len
            b.call = None
            return
        if not call.name:
            b.malformed_reason = b.malformed_reason or "a call without a name"
        if not call.started:
            self.start_call(call)
        if call.json_args:
            text = call.args_text.join() if call.args_text is not None else ""
            call.args_text = None
            try:
                args = {}
                if text:
                    # ``json.loads(text)``: its C scanner at once, without ``loads``'s two
                    # Python layers and whitespace matches (the text is the canonical one
                    # written as the body was read: nothing around it); anything else
                    # (never seen) goes through ``loads`` itself.
                    got = None
                    try:
                        got = _SCAN_JSON(text, 0)
                    except StopIteration:
                        pass
                    args = got[0] if got is not None and got[1] == len(text) else json.loads(text)
            except (ValueError, RecursionError):  # pragma: no cover - the tokenizer checked it
                b.malformed_reason = b.malformed_reason or "the arguments are not JSON"
                args = {}
            if not isinstance(args, dict):
                b.malformed_reason = b.malformed_reason or "the arguments are not a JSON object"
                args = {}
            call.args = args
            if not text:
                self.delta_closing(call, "{}")
            self._check_types(call)
        elif call.deferred is not None and not call.opened_json and not call.arrays:
            key, _written, inner = call.deferred
            call.deferred = None
            call.args = inner
            self.tolerate("unwrapped_arguments", f"call {call.name!r}: every argument was wrapped in one {key!r} "
                          "parameter, which the tool's schema does not have; unwrapped", b.start)
            self.delta_closing(call, dumps(inner))
            self._check_types(call)
        else:
            if call.deferred is not None:
                self.flush_deferred(call)
            if call.arrays is not None:
                self.flush_arrays(call)
            self.delta_closing(call, "}" if call.opened_json else "{}")
        call.raw_end = b.raw_len
        b.call = None

    def flush_arrays(self, call: Call) -> None:
        """Parameters held for their array schema: one value as it was typed, several
        values of the same key as one array of them (each typed by ``items``)."""
        tools = self.cfg.tools
        if call.arrays is None:
            return
        for key, items in call.arrays.items():
            if len(items) == 1:
                value, problem, _raw = items[0]
                if problem:
                    call.problem(f"{call.name}.{key}: {problem}")
            else:
                schema = (tools or {}).get(call.name, {}).get(key) or {}
                each = schema.get("items") if isinstance(schema.get("items"), dict) else None
                value = []
                for v, problem, raw in items:
                    if each is not None and types_of(each):
                        v, problem = coerce(raw, each) if isinstance(v, str) or problem else (v, None)
                    elif problem:
                        v = raw
                    value.append(v)
                    if problem and each is not None:
                        call.problem(f"{call.name}.{key}: {problem}")
                self.tolerate(call.repeated, f"call {call.name!r}: parameter {key!r} given {len(items)} times under an "
                              "array schema; its values collected into one array", self._block().start)
            call.args[key] = value
            lead = ", " if call.opened_json else "{"
            call.opened_json = True
            self._delta(call, lead + dumps(key) + ": " + dumps(value))
        call.arrays = None

    def flush_deferred(self, call: Call) -> None:
        """The call has another parameter: the first one wrapped nothing after all."""
        if call.deferred is None:
            return
        key, written, _inner = call.deferred
        call.deferred = None
        call.args[key] = written
        lead = ", " if call.opened_json else "{"
        call.opened_json = True
        self._delta(call, lead + dumps(key) + ": " + dumps(written))

    def _check_types(self, call: Call) -> None:
        """JSON arguments are never rewritten by the schema (a sent fragment cannot be
        retracted): a value that does not fit gets a ``type_mismatch`` problem."""
        tools = self.cfg.tools
        if tools is None or call.name not in tools:
            return
        for key, value in call.args.items():
            kinds = types_of(tools[call.name].get(key))
            if kinds is not None and not any(fits(value, k) for k in kinds):
                call.problem(f"{call.name}.{key}: value {dumps(value)[:40]} is not of type {'/'.join(kinds)}")

    #: The body leaf being read (``enter_body``), and its name (``body:LEAF`` guards).
    body_leaf: object = None
    body_leaf_name = ""

    def enter_body(self, ch: str = "") -> None:
        """After a structural marker: enter the body (a capture, JSON, a value grammar)
        it leads to; the body's ``begin`` action sets it up."""
        target = self.enter_target
        if target is None:
            return
        self.body_leaf = target
        self.body_leaf_name = getattr(target, "name", "")
        begin = getattr(getattr(target, "body", None), "begin", "")
        if begin:
            getattr(self, begin)(ch)

    def body_exit(self, ch: str = "") -> None:
        """A body is complete (a row of its region led to ``EXIT``). Arguments that end
        a call with no close marker of its own (Mistral's) end the call."""
        leaf = self.body_leaf
        self.body_leaf = None
        self.body_leaf_name = ""
        b = self.block
        if b is None or b.call is None:
            return
        body = getattr(leaf, "body", None)
        if getattr(body, "reads", "") == "args" and getattr(getattr(leaf, "call", None), "close", 1) is None:
            self.finish_call(b.call)

    # ---------------------------------------- what a value grammar's model calls
    # (``grammar.api.Body``; typed for a dialect's file by ``grammar.states.BodyHelpers``)
    def body_hold(self, s: str) -> None:
        """Keep input the body read in its block (every character it reads is kept:
        the block's raw is its input, and it is released whole if the block fails)."""
        self._hold(s)

    def body_call(self) -> None:
        """A call begins here (a body that makes calls, ``reads="call"``/``"calls"``):
        its arguments are canonical JSON text the body gives (``body_args``)."""
        call = self.new_call(self._block())
        call.json_args = True

    def body_name(self, name: str) -> None:
        """The current call's name: its ``ToolCallStart`` goes out (with the arguments
        given so far), unless the block holds its calls back."""
        b = self._block()
        if b.call is not None:
            self.name_call(b.call, name)

    def body_args(self, text: str) -> None:
        """Canonical JSON text of the current call's arguments (``json.dumps(arguments,
        ensure_ascii=False)`` spelling): streamed as ``ToolCallDelta``; every prefix of
        what a call is given must be a prefix of its final arguments' JSON."""
        b = self._block()
        call = b.call
        if call is None or b.spilled or call.bad:
            return  # (an overflowed block keeps nothing; a refused call streams no more)
        call.json_args = True
        if call.args_text is None:
            call.args_text = Pieces()
        call.args_text.append(text)
        self.stream_args(call, text)

    def stream_args(self, call: Call, text: str) -> None:
        """Stream canonical argument text, one character behind: the last one given (the
        arguments' closing ``}`` once the call ends) waits in ``Call.closing`` and goes
        out with the call's ``ToolCall`` (fragments of a call that is abandoned never
        make a whole JSON object)."""
        if not text:
            return
        s = call.closing + text
        call.closing = s[-1]
        self._delta(call, s[:-1])

    def body_end_call(self) -> None:
        """The current call's markup ended: its arguments are what ``body_args`` gave
        (a JSON object; none: ``{}``), or it is released as refused (``body_refuse``)."""
        b = self._block()
        call = b.call
        if call is None:
            return
        call.args_done = True
        self.finish_call(call)

    def body_refuse(self, why: str) -> None:
        """The current call is no call (a name where a literal must be): the body reads
        on to its end (``body_end_call``), the block stands, and the call is released
        alone with a ``malformed_call`` Diagnostic. Outside a call: ``body_fail``."""
        b = self._block()
        if b.call is None:
            self.body_fail(why)
        elif not b.call.bad:
            b.call.bad = why

    def body_fail(self, why: str) -> None:
        """The block is malformed (released as the policy says, with this reason):
        the row that follows leads to ``text`` with the action ``abort_block``."""
        b = self._block()
        b.malformed_reason = b.malformed_reason or why

    def hold_mark(self, ch: str) -> None:
        """A marker inside a call that only separates (Kimi's argument marker)."""
        self._hold(self._take_tag(ch))
        self.enter_body(ch)

    # provided by the capture and JSON regions
    def capture_begin(self, ch: str = "") -> None:  # pragma: no cover
        raise NotImplementedError

    def json_begin(self, ch: str = "") -> None:  # pragma: no cover
        raise NotImplementedError

    # -------------------------------------------------------------- closing
    def close_call(self, ch: str) -> None:
        b = self.block
        assert b is not None
        self._hold(self._take_tag(ch))
        call = b.call
        if call is None:
            b.malformed_reason = "call close without a call"
            return
        self.finish_call(call)

    def close_block(self, ch: str) -> None:
        b = self.block
        assert b is not None
        if b.call is not None:
            self._imply_call_close(b, "the block close")
        self._hold(self._take_tag(ch))
        if b.call is not None:
            # A call with no close marker of its own (GLM: the block is the call) ends
            # with its block.
            self.finish_call(b.call)
        self.block = None
        b.closed = True
        self._end(b)

    def eof_complete(self, ch: str = "") -> bool:
        """At the end of the stream: the block's last call is complete (its close was
        read, or its JSON arguments closed), and nothing in the block went wrong."""
        b = self.block
        if b is None or not b.calls or b.malformed_reason or b.spilled:
            return False
        call = b.call
        return call is None or call.args_done

    def close_at_eof(self, ch: str = "") -> None:
        """Tolerance (``Block(eof_close=CODE)``): the stream ended after a complete call
        where only closes were left (a server stripped its stop token): the block is read
        as closed there, its trailing spaces prose, as a block the grammar ends."""
        b = self._block()
        raw = b.raw.join()
        at = b.start + len(raw.rstrip(" \t\r\n"))
        call = b.call
        what = "the block's close" if call is None else f"the close of call {call.name!r} and of its block"
        if call is not None:
            self.finish_call(call)
        self.tolerate(b.spec.block.eof_close, f"the stream ended after a complete {b.dialect_name} call: {what} "
                      "left out, assumed there", at)
        self.block = None
        self._end(b)

    def end_bare_block(self, ch: str = "") -> None:
        """A bare block ends where grammar stops: its calls are complete."""
        b = self.block
        assert b is not None
        self.block = None
        tag, self.tag = self.tag, ""
        self._tag_version += 1
        if b.call is not None:
            b.malformed_reason = b.malformed_reason or f"call {b.call.name!r} has no close"
        self._end(b)
        if tag and ch:
            self.pushback = tag  # read again as prose
        elif tag:
            self._text(tag)  # the stream ended on it

    def _end(self, b: Block) -> None:
        if b.spilled:
            return  # released when it overflowed, and streamed out since
        if b.raw_len > self.cfg.max_block_chars:
            # Closed by the character that took it past the limit: too large all the same.
            self._release(b, "block_too_large", f"block passed max_block_chars={self.cfg.max_block_chars}")
        elif b.malformed_reason or not b.calls:
            self._release(b, "malformed_block", b.malformed_reason or "block holds no call")
        elif b.calls[0].bad if len(b.calls) == 1 else all(c.bad for c in b.calls):  # (one call: most blocks)
            self._release(b, "malformed_block", f"no call in it is one: {b.calls[0].bad}")
        elif b.tolerance and self.cfg.tools is not None and not all(c.known for c in b.calls if not c.bad):
            # Weaker evidence (no wrapper at all), more of it required: every call must
            # name a known tool, else the markup is what it looks like, text.
            unknown = sorted({c.name for c in b.calls if not c.known})
            self._release(b, "unknown_tool", f"a {b.dialect_name} call without its wrapper names {unknown[0]!r}, "
                          "which is not in tools; a call without its wrapper must name a known tool")
        elif self.home_is_reasoning():
            self.hold_in_reasoning(b)  # a call or reasoning: the reasoning decides
        else:
            self._emit_calls(b)

    def delta_closing(self, call: Call, s: str) -> None:
        """The last fragment of a call's arguments: all but its closing ``}`` now, that
        when the call is emitted (``Call.closing``)."""
        self._delta(call, s[:-1])
        call.closing = s[-1:]

    def _delta(self, call: Call, s: str) -> None:
        b = self.block
        if not s or (b is not None and (b.spilled or b.malformed_reason)):
            # An overflowed block streams nothing; nor does one known to be malformed
            # (a repeated key, ...): every fragment sent must still be able to be valid.
            return
        if not call.started:
            if call.pending is None:
                call.pending = []
            call.pending.append(s)  # sent right after its ToolCallStart
            return
        if call.index is None:
            return
        if self.delta_index != call.index and self.delta_buf:
            self.flush()
        self.delta_index = call.index
        self.delta_buf.append(s)

    def _emit_calls(self, b: Block) -> None:
        raw = b.raw.join()
        b.raw = Pieces()
        releasing = self.cfg.unknown_tool == "text" and not all(c.known for c in b.calls)
        if not releasing:
            self._send_closings(b)  # (before the flush: the last call's fragments are one event)
        self.flush()
        self._saw(raw)
        for c in b.calls:
            if c.spans is not None:
                for key, (start, end) in c.spans.items():
                    if key in c.args:
                        c.args[key] = raw[start:end]
                c.spans = None
            if c.raw_keys is not None:
                for key in c.raw_keys:
                    v = c.args.get(key)
                    if isinstance(v, str) and "<<" in v:
                        word = unterminated_heredoc(v)
                        if word:
                            b.tolerated.append(Diagnostic(
                                "unterminated_heredoc", f"call {c.name!r}: the value of {key!r} opens a heredoc "
                                f"(<<{word}) whose {word} line never comes: markup inside it may have ended the value "
                                "early", b.start))
        tail = ""
        if not b.closed:
            # Spaces after the last markup of a block that ends where its grammar stops
            # (no close read) are prose again (positions between markers hold only
            # whitespace).
            cut = len(raw.rstrip(" \t\r\n"))
            raw, tail = raw[:cut], raw[cut:]
        late = False
        for c in b.calls:
            if not c.started:
                self.start_call(c)  # (calls held back until the block's close: see start_call)
                late = True
        if late and not releasing:
            self._send_closings(b)  # (theirs: the others' were sent above)
        if b.tolerance and b.spec.block.open is not None:
            self._emit(Diagnostic(b.tolerance, f"a {b.dialect_name} call in a wrapper its format does not have "
                                  f"({b.spec.block.open.shown()}); read as a block of it", b.start))
        elif b.tolerance:
            self._emit(Diagnostic(b.tolerance, f"a {b.dialect_name} call written without its block's opening "
                                  + ("marker" if b.closed else "and closing markers") + "; the block is assumed", b.start))
        for d in b.tolerated:
            self._emit(d)
        policy = self.cfg.unknown_tool
        if releasing:
            # Finding 8 (issue 12): shown as text, an unknown call's own span would be a
            # close without its open (or an open without its close). The whole block is
            # released as text instead, balanced, the known calls in it with it: they are
            # abandoned. A call whose start was streamed is never shown as text too
            # (shown once): if the block has such calls, its markup goes to their
            # ToolCallAbandoned events instead, and no text is shown.
            streamed = [c for c in b.calls if c.index is not None]
            note = f"; calls {[c.index for c in streamed]} abandoned" if streamed else ""
            if streamed:
                self.abandon(streamed, raw, "unknown_tool")
            for c in b.calls:
                if not c.known:
                    self._emit(Diagnostic("unknown_tool", f"call to {c.name!r}, which is not in tools; "
                                          f"its {b.dialect_name} block is " + ("abandoned" if streamed else "released as text")
                                          + note, b.start, "", "released"))
            if not streamed:
                self._text(raw)
            if tail:
                self._text(tail)
            return
        calls = b.calls
        pairs: Iterable[tuple[tuple[Call, int, int], bool]]
        if len(calls) == 1:
            # (one call, most blocks: its span is the whole block, as ``_segments`` says)
            c = calls[0]
            pairs = (((c, 0, len(raw)), c.index is not None and (c.known or policy == "call") and not c.bad),)
        else:
            kept = [c.index is not None and (c.known or policy == "call") and not c.bad for c in calls]
            pairs = zip(_segments(calls, kept, len(raw)), kept)
        for (c, start, end), keep in pairs:
            piece = raw if (start == 0 and end == len(raw)) else raw[start:end]
            if c.bad:
                self._release_call(b, c, piece)
                continue
            if not c.known:  # kept as a call (the default policy), or dropped
                self._emit(Diagnostic("unknown_tool", f"call to {c.name!r}, which is not in tools", b.start, "",
                                      "tolerated" if keep else "dropped"))
            for problem in c.problems or ():
                self._emit(Diagnostic("type_mismatch", problem, b.start))
            if keep:
                assert c.index is not None
                self._emit(ToolCall(c.index, c.id, c.name, c.args, piece, b.dialect_name))
            elif policy == "text":
                self._text(piece)
            else:
                self._emit(Diagnostic("dropped_call", f"call to {c.name!r} dropped by policy", b.start, piece))
        if tail:
            self._text(tail)

    def _release_call(self, b: Block, c: Call, piece: str) -> None:
        """One call of a block that stands is refused (``Call.bad``): a ``malformed_call``
        Diagnostic says why. Its span of the block is markup of a block of calls, never
        text: on a ``ToolCallAbandoned`` when its start was streamed (shown once), else
        on the Diagnostic's raw. ``on_malformed="raise"`` raises."""
        why = f"call {c.name!r} is no call: {c.bad}" if c.name else f"a call is no call: {c.bad}"
        at = b.start + c.raw_start
        if c.index is not None:
            why += f"; call {c.index} abandoned"
            self._emit(ToolCallAbandoned(c.index, c.id, c.name, "malformed_call", piece))
            c.closing = ""
            piece = ""
        if self.cfg.on_malformed == "raise":
            diag = Diagnostic("malformed_call", why + "; raised", at, piece, "dropped")
            self._emit(diag)
            raise MalformedBlockError(f"malformed_call at offset {at}: {why}", diag)
        self._emit(Diagnostic("malformed_call", why, at, piece, "dropped"))
    def _send_closings(self, b: Block) -> None:
        """The calls are decided: the closing fragment each withheld goes out now (not
        to a refused call: it is abandoned, its arguments never a whole object)."""
        for c in b.calls:
            if c.closing and c.index is not None and not c.bad:
                self._delta(c, c.closing)
                c.closing = ""

    def _release(self, b: Block, code: str, why: str) -> None:
        """A block that is not a call after all: back to the user, as the policy says."""
        if b.spilled:
            return  # already released, when it overflowed
        raw = b.raw.join()
        b.raw = Pieces()
        streamed = [c for c in b.calls if c.index is not None]
        if streamed:
            # Shown once: the calls' starts (and arguments) were streamed, so the
            # markup is theirs, never text: it rides on their ToolCallAbandoned events,
            # and the Diagnostic after them says why, whatever the policy.
            why += f"; calls {[c.index for c in streamed]} abandoned"
            b.abandoned = True
            self.flush()
            self._saw(raw)  # (the block stood on the document's lines, as a call's does)
            self.abandon(streamed, raw, code)
            policy = self.cfg.on_malformed
            # (severity: the markup left the text under "drop" and "raise"; else the code's own)
            diag = Diagnostic(code, why + ("; dropped" if policy == "drop" else "; raised" if policy == "raise" else ""), b.start,
                              "", "dropped" if policy in ("drop", "raise") else "")
            self._emit(diag)
            if policy == "raise":
                raise MalformedBlockError(f"{code} at offset {b.start}: {why}", diag)
            return
        if self.home_is_reasoning():
            self.release_to_reasoning(raw, b.start, code, why)
            return
        if b.tolerance or (b.by_body and not b.proven):
            # A block that is itself a deviation and did not hold up, or one its own body
            # opened that proved no call: the markup was prose that mentions a marker or
            # looks like a call. It is text, whatever on_malformed says.
            self._emit(Diagnostic(code, why + "; released as text", b.start, "", "noise"))
            self._text(raw)
            return
        start = b.start
        orphan = self._orphan_opener(b, raw)
        if orphan and self.cfg.on_malformed == "text" and code != "block_too_large":
            # (not a block released for its size: it may be a whole call, shown as written)
            # Tolerated (``Dialect(orphans=)``): the control token that opened a block
            # that failed (Mistral's ``[TOOL_CALLS]``) is framing, never visible text.
            tag, raw = raw[: b.open_len], raw[b.open_len :]
            self.flush()
            self._emit(Diagnostic(orphan, f"{tag!r}, the opener of a {b.dialect_name} block that failed, read as "
                                  f"framing ({orphan})", start))
            self.out.append(Text("", tag))
            start += len(tag)
        self.release_text(raw, start, code, why, bool(b.calls))

    def _orphan_opener(self, b: Block, raw: str) -> str:
        """The code of an orphan token (``Dialect(orphans=)``) its dialect declares that
        the block's opener is, or "" (and always "" under strict)."""
        if not b.open_len or self.cfg.strict:
            return ""
        tag = raw[: b.open_len]
        for m, code in b.spec.dialect.orphans:
            if regex.fullmatch(m.pattern, tag) is not None:
                return code
        return ""

    def abandon(self, streamed: list[Call], raw: str, reason: str) -> None:
        """A ``ToolCallAbandoned`` for each streamed call of a block given up, the
        block's markup cut between them: each from its own open (the first from the
        block's), to the next one's open (the last to the end of what was read)."""
        for n, c in enumerate(streamed):
            assert c.index is not None
            start = 0 if n == 0 else c.raw_start
            end = streamed[n + 1].raw_start if n + 1 < len(streamed) else len(raw)
            self._emit(ToolCallAbandoned(c.index, c.id, c.name, reason, raw[start:end]))
            c.closing = ""

    def release_text(self, raw: str, start: int, code: str, why: str, calls_begun: bool = False) -> None:
        """Release a block's (or a held opener's) input as ``on_malformed`` says. Its
        Diagnostic's severity: ``dropped`` when the input left the text (``"drop"``,
        ``"raise"``), ``noise`` for a malformed block in which no call had begun (most
        often prose that mentions a marker), else the code's own (``released``)."""
        policy = self.cfg.on_malformed
        if policy == "drop":
            self._emit(Diagnostic(code, why + "; dropped", start, raw, "dropped"))
            return
        if policy == "raise":
            # The block's input rides on the Diagnostic (as under "drop"), and the
            # Diagnostic is the last of the events decided so far: the Sieve hands them
            # all to the caller on the exception (MalformedBlockError.events).
            diag = Diagnostic(code, why + "; raised", start, raw, "dropped")
            self._emit(diag)
            raise MalformedBlockError(f"{code} at offset {start}: {why}", diag)
        noise = code == "malformed_block" and not calls_begun
        self._emit(Diagnostic(code, why + "; released as text", start, "", "noise" if noise else ""))
        if raw:  # (nothing but an orphan opener, taken as framing: ``_release``)
            self._text(raw)

    def abort_block(self, ch: str) -> None:
        """Something that is not grammar where only markup may stand. The block is
        released, and what follows is read again as prose; or, when the row that gave it
        up leads to ``block_rest`` (``enter_rest`` ran first), it is read on to its close."""
        b = self.block
        assert b is not None
        why = f"unexpected {ch!r} in a {b.dialect_name} block at offset {self.pos}"
        if b.malformed_reason:
            why = f"{b.malformed_reason} (in a {b.dialect_name} block, seen at offset {self.pos})"
        if b.rest:
            b.malformed_reason = why
            b.rest_from = b.raw_len
            b.call = None
            b.param = None
            b.held = []
            b.key = ""
            self.scope = rest_scope(b.spec)
        else:
            self.block = None
            self._release(b, "malformed_block", why)
        if self.tag:
            self.pushback = self.tag
            self.tag = ""
            self._tag_version += 1

    def abort_at_opener(self, ch: str) -> None:
        """A real opener where the block's markup is malformed (in a capture): the block
        is given up there, never read on (``block_rest`` would end at the opener at
        once); the opener is read again as prose."""
        self.abort_block(ch)

    # ------------------------------------------------- block_rest: read on to the close
    def rest_follows(self, ch: str) -> bool:
        """A block given up here is read on to its close (``block_rest``), not released
        at once with what follows read as prose: its calls were streamed (they are
        abandoned: the rest of their markup is theirs, shown once), or the policy drops
        it (``on_malformed="drop"``) and a call in it had begun. Only a block whose close
        is required (a close it may leave out is no evidence of where it ends), that is
        not itself a deviation (those are prose when they fail), and not under
        ``on_malformed="raise"`` (it raises where it failed)."""
        b = self.block
        if b is None or b.tolerance:
            return False
        blk = b.spec.block
        if blk.close is None or blk.close_optional:
            return False
        policy = self.cfg.on_malformed
        if policy == "raise":
            return False
        if b.spilled:  # (past max_block_chars: what is read is released as it comes)
            return b.abandoned or policy == "drop"
        return bool(b.calls) and (policy == "drop" or any(c.index is not None for c in b.calls))

    def enter_rest(self, ch: str = "") -> None:
        """The row gives the block up into ``block_rest`` (``abort_block`` reads it)."""
        self._block().rest = True

    def rest_reject(self, ch: str) -> None:
        """A dead tag in ``block_rest``: its first character is the block's; the rest is
        read again (it may begin the close)."""
        first, rest = self.tag[0], self.tag[1:]
        self.tag = ""
        self._tag_version += 1
        self._hold(first)
        self.pushback = rest

    def opener_ends_block(self, ch: str) -> None:
        """A real opener (a block opener of an enabled dialect that is not itself a
        deviation, a message header's start) inside a value of a block that is a
        deviation: the block ends before it, unclosed, and is given up; the opener is
        read again as prose. (A tolerated construct's evidence is its own markup; a later
        real block's is not its.) In ``block_rest`` (a block read on after failing), a
        real opener or a message's end before the close: the block ends where it failed,
        and what followed is read again as prose, the opener with it."""
        b = self._block()
        self.block = None
        tag, self.tag = self.tag, ""
        self._tag_version += 1
        b.held = []
        if b.rest:
            self.pushback = self._unread_rest(b) + tag  # (``ch`` is read again: ``reprocess``)
            # (the reason is where it failed, as "raise" reports it there: what ended the
            # reading on is no part of it)
            self._release(b, "malformed_block", b.malformed_reason)
            return
        self.pushback = tag
        self._release(b, "malformed_block", f"a {tag + ch!r} at offset {self.tag_start} begins a block inside it, "
                      "so it is no block")

    def _unread_rest(self, b: Block) -> str:
        """A block read on after failing whose close did not come: its raw is cut back
        to where it failed; what followed (returned) is read again as prose. (A spilled
        one released it as it came.)"""
        if b.spilled:
            return ""
        raw = b.raw.join()
        b.raw = Pieces()
        b.raw.append(raw[: b.rest_from])
        b.raw_len = b.rest_from
        return raw[b.rest_from :]

    # ------------------------------------------ a deviation's evidence is its own
    def opener_inside(self, since: int) -> int:
        """Where (an offset in the open block's ``raw``) the first real opener at or
        after ``since`` begins, or -1: for a block that is itself a deviation, in data
        it read whole (a JSON string, a CDATA section) where no marker was listened
        for. A tolerated construct ends where a real opener begins (issue 23)."""
        b = self.block
        openers = self.cfg.openers
        if b is None or not b.tolerance or b.spilled or openers is None:
            return -1
        k = openers.find(b.raw.since(since))
        return -1 if k < 0 else since + k

    def cut_at(self, at: int) -> None:
        """The open block (a deviation) ends at ``at`` in its raw, where a real opener
        stands in its data: it is no block (text, or its streamed calls abandoned with
        their markup to there), and what followed is read again as prose, the opener
        opening its own block."""
        b = self._block()
        raw = b.raw.join()
        b.raw = Pieces()
        b.raw.append(raw[:at])
        b.raw_len = at
        b.held = []
        self.block = None
        self.pushback = raw[at:] + self.pushback
        self._release(b, "malformed_block", f"a real opener at offset {b.start + at} stands inside it, so it is no block")

    def abort_block_eof(self, ch: str = "") -> None:
        b = self.block
        assert b is not None
        if self.tag:
            tag, self.tag = self.tag, ""
            self._tag_version += 1
            m = self.tag_matcher
            sink = self.cfg.sinks.get(self.origin, "")
            if sink and (m if m is not None else self.matcher()).classify(tag)[0] == DEAD:
                # A held tag already dead (a character the state's rows hold, though no
                # marker of its scope begins with it): its origin's, as the next
                # character would have made it (a value streams it), before the end.
                take = getattr(self, sink)
                for c in tag:
                    take(c)
            else:
                self._hold(tag)
        at = self.opener_inside(1)
        if at > 0:
            # (the runners read an end-of-stream pushback, then the end again)
            self.cut_at(at)
            return
        self.block = None
        b.held = []
        if b.rest:
            # The close never came: the block ends where it failed, and what followed is
            # read again as prose (the runners read an end-of-stream pushback, then the
            # end again).
            rest = self._unread_rest(b)
            self._release(b, "malformed_block", b.malformed_reason)  # (as at opener_ends_block)
            self.pushback = rest
            return
        self._release(b, "unterminated_block", f"the stream ended inside a {b.dialect_name} block")

    def abort_oversized(self, ch: str = "") -> None:
        """The block passed max_block_chars: what it held is released now, and the
        block stays open, *spilled*: the state does not change, so the rest of the
        block is still read as its grammar says (a value, CDATA, a JSON string, the
        positions between markers), but what is read is released as it comes instead
        of held, and no call is made, until the block's structure ends (its close, a
        malformed position, or eof). Memory stays bounded; nothing inside the block,
        however it looks, becomes a call."""
        b = self.block
        assert b is not None
        self._release(b, "block_too_large", f"block passed max_block_chars={self.cfg.max_block_chars}")
        b.spilled = True
        b.calls = []
        b.held = []
        if b.param is not None:
            b.param.decoded = None
            b.param.raw_value = None


#: A shell heredoc's opener: ``<<WORD``, ``<<-WORD``, ``<< 'WORD'`` (not ``<<<``); an
#: unquoted word in capitals only (``cout << endl`` is no heredoc).
_HEREDOC = re.compile(r"""(?<!<)<<(-?)[ \t]*(?:(['"])([^'"\s]{1,64})\2|\\?([A-Z_][A-Z0-9_]{0,63})\b)(?!<)""")


def unterminated_heredoc(value: str) -> str:
    """The word of the first heredoc in ``value`` whose closing line never comes ("" if
    none): a raw value cut by a markup close that stood inside its heredoc (issue 23)
    is a shell command that would run cut, so it is said."""
    openers = list(_HEREDOC.finditer(value))
    if not openers:
        return ""
    # Where each line (and each line without its leading tabs, for ``<<-``) last
    # begins: one pass, however many heredocs the value opens.
    last: dict[str, int] = {}
    last_tabbed: dict[str, int] = {}
    at = 0
    for line in value.split("\n"):
        text = line.rstrip(" \t")
        last[text] = at
        last_tabbed[text.lstrip("\t")] = at
        at += len(line) + 1
    for m in openers:
        word = m.group(3) or m.group(4)
        if (last_tabbed if m.group(1) else last).get(word, -1) <= m.end():
            return word
    return ""


def _segments(calls: list[Call], kept: list[bool], total: int) -> list[tuple[Call, int, int]]:
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
        if not kept[k] and kept[k - 1]:
            start = segs[k][0].raw_start
            segs[k - 1][2] = start
            segs[k][1] = start
    return [(c, s, e) for c, s, e in segs]


#: A block given up part-way, read on to its close (``rest_follows``).
REST_STATE = "block_rest"
#: ``json``'s scanner (C where ``json`` has its speedups), as ``json.loads`` runs it
_SCAN_JSON: Any = getattr(json.JSONDecoder(), "scan_once")
#: The actions that give a block up (rows that lead to ``text`` with one of them get a
#: sibling into ``block_rest``: :func:`rest_rows`). The JSON and Python bodies' own
#: call ``abort_block`` after saying why.
GIVES_UP = ("abort_block", "j_abort", "py_abort")


def rest_scope(spec: BlockSpec) -> str:
    """The scope whose matcher ``block_rest`` reads for this block: its close, and the
    enabled dialects' block openers."""
    return spec.prefix + "rest"


def rest_region() -> Region:
    """``block_rest``: everything is held in the block, but its close, which ends it
    (``close_block``: the block is released, its calls abandoned with its markup to
    there), and a real opener or a message's end, which ends it where it failed
    (``opener_ends_block``: what followed is read again as prose), as the end of the
    stream does. Past max_block_chars it spills (released as it comes, never as text
    if its calls were abandoned) until one of those. The composer adds the listens,
    per block (``rest_scope``)."""
    st = REST_STATE
    # (No sink: the markers it listens for are several dialects', a close may hold a
    # start character past its first (kimi_k3's ``<|close|>call<|sep|>``), and the
    # matcher checks such a context's chunk tails exactly; a dead tag's first character
    # is held by ``rest_reject``, its rest read again.)
    states = (StateDecl(st, "a block given up part-way whose calls streamed (or that a policy drops), read on to its "
                        "close: all of it is the block's markup", in_block=True, owner="block_rest"),)
    rules = (
        *on(st, START, "maybe_tag", "tag_begin", rank=20),
        *on(st, but(START), st, "hold_char", rank=90),
        *on(st, [EOF_TRIGGER], "text", "abort_block_eof"),
        *on(st, [OVERFLOW], st, "abort_oversized"),  # the block spills, the state stays
        # (its own rank: a header's return from the hub has RANK_FALLBACK - 1)
        *on("maybe_tag", ALL, st, "rest_reject", "reprocess", when=[f"from:{st}"], rank=RANK_FALLBACK - 2),
    )
    return Region("block_rest", states, rules, None)


def rest_rows(rules: list[Any]) -> list[Rule]:
    """For each row that gives a block up (to ``text`` with one of :data:`GIVES_UP`),
    a sibling just before it, guarded by ``rest_follows``, into ``block_rest``."""
    out: list[Rule] = []
    for r in rules:
        if isinstance(r, Rule) and r.dest == "text" and any(a in GIVES_UP for a in r.actions):
            # ``rest_follows`` after the row's own guards: a held tag's rows are indexed by
            # their first guard, the marker hit (``compiler._hit_index``); one row led by
            # another guard would leave every row of the state unindexed.
            out.append(Rule(r.source, r.triggers, REST_STATE, ("enter_rest",) + r.actions, r.guards + ("rest_follows",),
                            r.rank - 1e-6))
    return out


def position_state(pos: Position) -> StateDecl:
    return StateDecl(pos.name, _doc(pos), in_block=True, owner=pos.spec.dialect.name)


def _doc(pos: Position) -> str:
    nexts = ", ".join(lf.label() for lf in pos.follow)
    return f"{pos.spec.dialect.name}: between markers; next: {nexts}" + (" (or the end of the block)" if pos.can_end else "")


def position_rules(pos: Position, routed: tuple[str, ...] = (), rest_routed: bool = False,
                   implied: tuple[str, str] | None = None, eof_close: bool = False) -> list[Rule]:
    """A position between markers: whitespace is held, start characters go to
    maybe_tag, anything else ends a bare block (complete) or makes the block malformed.
    Where bodies may begin, the composer routes their first characters (``routed``
    classes; ``rest_routed``: a capture takes every other character). ``implied``: a
    value's opener that may be left out is expected here (``Opt(missing=)``): anything
    else begins the value (its state, and the action that opens it). ``eof_close``: the
    block's close (or its call's) may follow here and the block declares
    ``Block(eof_close=)``: at the end of the stream, a block whose last call is
    complete is read as closed (``close_at_eof``)."""
    s = pos.name
    rules = [
        *on(s, ["ws", "nl"], s, "hold_char", rank=10),
        *on(s, START, "maybe_tag", "tag_begin", rank=20),
        *on(s, [OVERFLOW], s, "abort_oversized"),  # the block spills, the state stays
    ]
    if eof_close and not pos.can_end:
        rules += on(s, [EOF_TRIGGER], "text", "close_at_eof", when=["eof_complete"], rank=5)
    if implied is not None:
        rules += on(s, but("ws", "nl", START, *routed), implied[0], implied[1], "reprocess", rank=90)
        rules += on(s, [EOF_TRIGGER], "text", "abort_block_eof")
        return rules
    if pos.can_end:
        if not rest_routed:
            rules += on(s, but("ws", "nl", START, *routed), "text", "end_bare_block", "reprocess", rank=90)
        rules += on(s, [EOF_TRIGGER], "text", "end_bare_block")
    else:
        if not rest_routed:
            rules += on(s, but("ws", "nl", START, *routed), "text", "abort_block", "reprocess", rank=90)
        rules += on(s, [EOF_TRIGGER], "text", "abort_block_eof")
    return rules
