"""Values: ``in_param`` (a raw value) and ``after_close`` (a close held until what
follows confirms it).

A parameter close does not end a value by itself: it moves to ``after_close``, which
holds it and any whitespace until the next marker decides. The markers that confirm it
are FOLLOW of the value in the dialect's structure (derived, ``callsieve.structure``):
another parameter, the call close, ... Anything else returns the held text to the value
(``reopen_value``), so ``</parameter>`` inside a file body is data.

The value body is chosen when the parameter opens (``Choose``: by an attribute of its
open marker); ``in_param``'s and ``after_close``'s matchers are those of the current
value spec (``Config.scoped``). Streamed string values become ``ToolCallDelta``
fragments as they arrive; typed values are sent whole when they are decided.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from callsieve.native import mypyc_attr, trait
from callsieve.accum import FLUSH_AT, Pieces
from callsieve.grammar.api import Choose, JsonValue, Raw
from callsieve.matcher import DEAD
from callsieve.grammar.states import ALL, EOF_TRIGGER, OVERFLOW, START, Region, StateDecl, but, on
from callsieve.regions import dumps, quote
from callsieve.regions.block import BlockModel, Call
from callsieve.schema import Lenient, coerce, is_string_only, json_or_raw, parse_json_value, types_of, unescaped_once
from callsieve.structure import ValueSpec
from callsieve.values import ValueDecoder


@dataclass(init=False)
class Param:
    name: str
    spec: ValueSpec
    streaming: bool
    decoder: ValueDecoder
    schema: dict[str, Any] | None
    #: a raw value's decoded text, where it is kept (not a span of the block's raw text:
    #: ``raw_from``); a JSON value's text as written. (None until the first piece: most
    #: values need neither, and a parameter is made for every value of every call.)
    decoded: Pieces | None
    raw_value: Pieces | None
    #: JSON when it parses, no schema: not yet known to be a string (it begins with
    #: whitespace so far); once its first other character cannot begin a JSON object,
    #: array, number or boolean it is a string and streams from there on
    undecided: bool
    #: where the parameter's open began (offsets of Diagnostics about it)
    start: int
    #: the value quotes its dialect's markup (a call or block open was read in it):
    #: no close is implied from then on
    quoting: bool
    #: may wrap every argument of its call (``Call(wrapped=...)``)
    wrapper: bool
    #: the raw value read so far is empty or ends with a newline
    at_line_start: bool
    #: Issue 13, item 5: a streamed raw value is one contiguous span of the block's raw
    #: text (minus the newlines its style strips), so it is not held a second time:
    #: ``raw_from`` is where it starts in the block's raw (``DERIVE_PENDING`` until
    #: its first piece; ``-1`` once it is kept in ``decoded``, as CDATA or markup held
    #: between its pieces make it), ``raw_fed`` how much of the raw it spans so far.
    raw_from: int
    raw_fed: int
    #: the value is JSON (its body is a ``JsonValue``), not raw text
    json: bool
    #: its opener was assumed left out (``Opt(missing=)``): the opener read in it after
    #: all makes the block malformed (``opener_after_text``)
    open_missing: bool

    def __init__(self, name: str, spec: ValueSpec, streaming: bool, decoder: ValueDecoder, schema: dict[str, Any] | None,
                 start: int = 0, wrapper: bool = False, json: bool = False) -> None:
        # (written out, not made by ``dataclass``: its generated ``__init__`` is
        # interpreted even in the compiled build, where this one is native; one is
        # made per call, block, value or JSON container)
        self.name = name
        self.spec = spec
        self.streaming = streaming
        self.decoder = decoder
        self.schema = schema
        self.decoded = None
        self.raw_value = None
        self.undecided = False
        self.start = start
        self.quoting = False
        self.wrapper = wrapper
        self.at_line_start = True
        self.raw_from = -1
        self.raw_fed = 0
        self.json = json
        self.open_missing = False


def chosen(specs: tuple[ValueSpec, ...], fields: dict[str, str]) -> ValueSpec:
    """The value spec a parameter open's fields choose (``Choose``), or the only one."""
    value = specs[0].leaf.value
    if isinstance(value, Choose):
        body = value.pick(fields)
        return next(s for s in specs if s.body is body)
    return specs[0]


@trait
@mypyc_attr(allow_interpreted_subclasses=True)
class ValueModel(BlockModel):
    def open_param(self, ch: str) -> None:
        b = self.block
        assert b is not None
        hit = self._hit(ch)
        specs: tuple[ValueSpec, ...] = getattr(hit.entry.data, "values")
        spec = specs[0] if len(specs) == 1 else chosen(specs, hit.fields)
        self._stray_param(b, hit.entry.data)
        tag = self._take_tag(ch)
        self._begin_value(spec, hit.fields.get("name") or b.key, tag, self.tag_start)

    def imply_value_open(self, spec: ValueSpec, code: str) -> None:
        """Tolerance (``Opt(marker, missing=CODE)``): the value's opener was left out;
        the value begins here (a held tag that was no marker here is read again in it)."""
        b = self.block
        assert b is not None
        at = self.tag_start if self.tag else self.pos
        if not b.spilled:
            self.tolerate(code, f"the opener of the value of {b.key!r} was left out; the value begins at offset {at}", at)
        self._begin_value(spec, b.key, "", at)
        if b.param is not None:
            b.param.open_missing = True
        if self.tag:
            self.pushback = self.tag
            self.tag = ""
            self._tag_version += 1

    def value_open_missing(self, ch: str) -> bool:
        """The open value's opener was assumed left out (``imply_value_open``)."""
        b = self.block
        return b is not None and b.param is not None and b.param.open_missing

    def opener_after_text(self, ch: str) -> None:
        """The opener assumed left out stands in the value after all: what came before
        it is no value but text between markers, and the tolerance had no evidence of
        its own (``</arg_key>x<arg_value>v``): the block is malformed."""
        b = self._block()
        p = b.param
        name = p.name if p is not None else ""
        b.malformed_reason = b.malformed_reason or (
            f"the opener {self.tag + ch!r} of the value of {name!r} stands after text; it was not left out")

    def _begin_value(self, spec: ValueSpec, name: str, tag: str, start: int) -> None:
        b = self.block
        assert b is not None
        call = b.call
        if call is None:
            # A parameter with no call around it: the block is not one we can read.
            b.malformed_reason = "parameter outside a call"
            call = Call("", None, "", False, b.raw_len)
            b.call = call
        b.key = ""
        schema = None
        if b.spilled:
            # Overflowed: the spec is kept (the value's close is still listened for),
            # nothing is decoded or streamed.
            b.param = Param(name, spec, False, ValueDecoder(Raw(spec.body.close).style), None,
                            json=isinstance(spec.body, JsonValue))
            self.scope = spec.name
            self._hold(tag)
            return
        tools = self.cfg.tools
        if tools is not None and call.name in tools:
            schema = tools[call.name].get(name)
        if name in call.args:
            # Repeated (not an array under Call(repeated=)): the call is malformed, and
            # nothing of the second value is streamed (no duplicate key in the deltas).
            b.malformed_reason = b.malformed_reason or f"parameter {name!r} given twice in call {call.name!r}"
        if call.deferred is not None:
            self.flush_deferred(call)
        # Tolerance (``Call(wrapped=...)``): the first parameter may wrap every
        # argument; it is not streamed until the call shows whether it is the only one.
        wrapper = (name in call.wrapped and not call.args and not call.arrays and not call.opened_json and not self.cfg.strict
                   and tools is not None and call.name in tools and name not in tools[call.name])
        body = spec.body
        json = False
        if isinstance(body, JsonValue):
            json = True
            streaming = False
            style = Raw(body.close).style
        else:
            # A value that is JSON when it parses is typed once whole, unless the
            # schema says string (or, with no schema, once it can only be a string:
            # ``_decide_string``). A deviation whose close is the evidence streams
            # nothing before it (``held_back``).
            style = body.style
            streaming = (is_string_only(schema) if style.json_when_valid
                         else (schema is None or is_string_only(schema))) and not wrapper and not b.held_back
        p = b.param = Param(name, spec, streaming, ValueDecoder(style), schema, start=start, wrapper=wrapper, json=json)
        if not json and isinstance(body, Raw):
            p.undecided = style.json_when_valid and types_of(schema) is None
            if streaming and not style.unescape_entities:
                p.raw_from = DERIVE_PENDING
        self.scope = spec.name
        b.json_depth = 0
        raw = b.raw  # (``_hold``, inline: the block is not spilled here)
        recent = raw.recent
        recent.append(tag)
        k = len(tag)
        raw.length += k
        if len(recent) >= FLUSH_AT:
            raw.fold()
        b.raw_len += k
        if b.tolerance and not call.started:
            self.start_call(call)
        if streaming:
            self._delta(call, self._key_prefix(call, name) + '"')

    def begin_param(self, ch: str) -> None:
        """A parameter's open whose key stands between it and its value: the key is
        its name, if it carries one, or what a capture after it reads."""
        b = self.block
        assert b is not None
        hit = self._hit(ch)
        b.key = hit.fields.get("name", "")
        self._stray_param(b, hit.entry.data)
        self._hold(self._take_tag(ch))
        self.enter_body(ch)

    def _stray_param(self, b: Any, act: object) -> None:
        """A parameter whose open the format does not have there (``Opt(Param(...),
        stray=CODE)``): with ``tools=``, read only in a call to a known tool; else the
        block is malformed, as it is without the tolerance."""
        leaf = getattr(act, "leaf", None)
        call = b.call
        if getattr(leaf, "stray", "") and self.cfg.tools is not None and (call is None or not call.known):
            b.malformed_reason = b.malformed_reason or (
                f"a parameter opened by {getattr(leaf, 'label')()!r}, which the format does not have there, in a call "
                f"to {call.name if call is not None else ''!r}, which is not in tools")

    def _key_prefix(self, call: Call, name: str) -> str:
        lead = ", " if call.opened_json else "{"
        call.opened_json = True
        key: str = quote(name)  # json.dumps(name, ensure_ascii=False), without its Python layers
        return lead + key + ": "

    def _value(self, s: str, cdata: bool = False) -> None:
        b = self.block
        assert b is not None and b.param is not None
        if b.spilled:
            return
        p = b.param
        if p.json:
            if p.raw_value is None:
                p.raw_value = Pieces()
            p.raw_value.append(s)
            return
        if s:
            p.at_line_start = s[-1] == "\n"
        raw_from = p.raw_from
        if raw_from != -1:
            # Every piece of a value is held just before it is read here, so a derived
            # value's pieces end the block's raw text, each right after the one before.
            at = b.raw_len - len(s)
            if raw_from == DERIVE_PENDING:
                p.raw_from = raw_from = at
            if cdata or raw_from + p.raw_fed != at:
                self.keep_decoded(p)
            else:
                p.raw_fed += len(s)
        out = p.decoder.feed(s, cdata)
        if out:
            if p.raw_from < 0:
                if p.decoded is None:
                    p.decoded = Pieces()
                p.decoded.append(out)
            call = b.call
            if p.undecided:
                self._decide_string(p, out, call)
                return
            if p.streaming and call is not None and call.index is not None and not b.malformed_reason:
                # _delta, inlined: this runs once per chunk of a streamed value.
                if self.delta_index != call.index and self.delta_buf:
                    self.flush()
                self.delta_index = call.index
                self.delta_buf.append(quote(out)[1:-1])

    def keep_decoded(self, p: Param) -> None:
        """The value stops being a plain span of the block's raw text (CDATA, or
        something held between its pieces): what it decoded so far is kept from here."""
        if p.raw_from >= 0:
            start, end = self._span(p)
            p.decoded = Pieces()
            if end > start:
                held = self._block().raw.since(p.raw_from)
                p.decoded.append(held[start - p.raw_from : end - p.raw_from])
        p.raw_from = -1

    @staticmethod
    def _span(p: Param) -> tuple[int, int]:
        """The block-raw offsets of what a derived value's decoder has output so far:
        its raw span minus a leading newline and a held trailing one (``strip_newlines``)."""
        start, end = p.raw_from, p.raw_from + p.raw_fed
        if p.decoder.strip:
            if p.decoder.starts_with_newline:
                start += 1
            if p.decoder.newline_held:
                end -= 1
        return start, max(start, end)

    def _decide_string(self, p: Param, out: str, call: Call | None) -> None:
        """A value that is JSON when it parses, read without a schema: its first
        character past whitespace decides whether it can still be JSON other than a
        string (``{ [ - 0-9 t f``); if not, it is a string, and what it holds so far
        is streamed now, the rest as it comes (a string never needs retracting)."""
        head = out.lstrip(" \t\r\n")
        if not head:
            return
        p.undecided = False
        if head[0] in _JSON_NONSTRING_START or call is None:
            return  # typed once whole, when its close is confirmed
        p.streaming = True
        so_far = p.decoded.join() if p.decoded is not None else ""
        self._delta(call, self._key_prefix(call, p.name) + '"' + quote(so_far)[1:-1])

    def value_char(self, ch: str) -> None:
        self._hold(ch)
        self._value(ch)

    def value_run(self, s: str, i: int, j: int) -> int:
        b = self.block
        assert b is not None
        if b.raw_len + (j - i) > self.cfg.max_block_chars:
            j = min(j, i + self.run_budget())
        seg = s[i:j]
        if b.spilled:
            self._spill(seg)
            return j
        k = j - i
        raw = b.raw  # (``raw.append(seg)``, inline)
        recent = raw.recent
        recent.append(seg)
        raw.length += k
        if len(recent) >= FLUSH_AT:
            raw.fold()
        b.raw_len += k
        p = b.param
        if p is not None and p.raw_from >= 0 and p.raw_from + p.raw_fed == b.raw_len - k and k and not p.undecided:
            # ``_value``'s common case, inline (a token-sized chunk of a streamed raw
            # value that is still one span of the block's raw text; issue 27): the span
            # grows, the decoder reads the piece, the fragment is streamed.
            p.at_line_start = seg[-1] == "\n"
            p.raw_fed += k
            out = p.decoder.feed(seg)
            if out:
                call = b.call
                if p.streaming and call is not None and call.index is not None and not b.malformed_reason:
                    if self.delta_index != call.index and self.delta_buf:
                        self.flush()
                    self.delta_index = call.index
                    self.delta_buf.append(quote(out)[1:-1])
            return j
        self._value(seg)
        return j

    def value_chunk(self, s: str) -> str | None:
        """A whole chunk of a streamed raw value that holds no character its state's scan
        stops at (no marker's start), with no event or fragment pending: ``value_run``
        over all of it, the fragment it streams returned ("" for none) rather than
        buffered, for the runner to make the feed's one event (issue 27: token-sized
        chunks of a value are most of a call's feeds). None, with nothing changed, where
        it is not that plain (a value not streamed, still undecided or not begun, its
        block spilled, malformed or at its limit): the runner's general path reads it."""
        b = self.block
        if b is None or b.spilled or b.malformed_reason:
            return None
        p = b.param
        if p is None or not p.streaming or p.undecided:
            return None
        raw_from = p.raw_from
        k = len(s)
        raw_len = b.raw_len
        call = b.call
        if raw_from == DERIVE_PENDING or raw_len + k > self.cfg.max_block_chars or call is None \
                or call.index is None or (raw_from >= 0 and raw_from + p.raw_fed != raw_len):
            return None
        raw = b.raw  # (``raw.append(s)``, inline: most feeds of a streamed value)
        recent = raw.recent
        recent.append(s)
        raw.length += k
        if len(recent) >= FLUSH_AT:
            raw.fold()
        b.raw_len = raw_len + k
        nl = s[-1] == "\n"
        p.at_line_start = nl
        if raw_from >= 0:
            p.raw_fed += k
        dec = p.decoder
        if dec.started and not dec.entity_tail and not dec.unescape:
            # (``ValueDecoder.feed`` of a raw value past its first piece, inline: the
            # piece, less a trailing newline its style holds back, after the one held)
            if dec.strip:
                out = s[:-1] if nl else s
                if dec.newline_held:
                    out = "\n" + out
                dec.newline_held = nl
            else:
                out = s
        else:
            out = dec.feed(s)
        if not out:
            return ""
        if raw_from < 0:
            # (a value kept decoded, not a span of the raw text: CDATA or markup held
            # between its pieces, a string decided after its first pieces, entities)
            if p.decoded is None:
                p.decoded = Pieces()
            p.decoded.append(out)
        self.delta_index = call.index
        piece: str = quote(out)[1:-1]
        return piece

    # after_close: a value close waiting for what follows it
    def hold_close(self, ch: str) -> None:
        b = self.block
        assert b is not None
        b.held_mark = len(b.tolerated)
        tag = self._take_tag(ch)
        self._hold(tag)
        b.held = [] if b.spilled else [tag]

    def hold_ws(self, ch: str) -> None:
        b = self.block
        assert b is not None
        self._hold(ch)
        if not b.spilled:
            b.held.append(ch)

    def hold_ws_run(self, s: str, i: int, j: int) -> int:
        b = self.block
        assert b is not None
        if b.raw_len + (j - i) > self.cfg.max_block_chars:
            j = min(j, i + self.run_budget())
        seg = s[i:j]
        if b.spilled:
            self._spill(seg)
            return j
        raw = b.raw  # (``_hold``, inline)
        recent = raw.recent
        recent.append(seg)
        raw.length += j - i
        if len(recent) >= FLUSH_AT:
            raw.fold()
        b.raw_len += j - i
        b.held.append(seg)
        return j

    def refused_close_run(self, s: str, i: int) -> int:
        """The state run of ``after_close``: its whitespace held (``hold_ws``), then,
        when what follows begins no marker FOLLOW of the value allows (a character
        that starts none, or a tag that dies within this chunk), the close was data:
        stepping would hold the tag, find it dead and give close, whitespace and tag
        back to the value (``reopen_value``), reading the tag again there. That is
        done here without holding the tag: the machine is back in ``in_param`` at
        the tag's first character. (A JSON value reopens in its own region's state:
        left to the steps.) A close refused again and again (a value of repeated
        ``</parameter>``) costs no held tag, no step and no read-again."""
        b = self.block
        assert b is not None
        n = len(s)
        ws = _WS.match(s, i)  # (always matches: possibly empty)
        j = ws.end() if ws is not None else i
        if j > i:
            j = self.hold_ws_run(s, i, j)
            if j < n and s[j] in " \t\r\n":
                return j  # (cut by the block's limit: stepped)
        if j >= n or b.param is None or b.param.json:
            return j
        m = self.cfg.matchers.get("after_close")  # (``matcher("after_close")``, inline)
        if m is None:
            m = self.cfg.scoped["after_close"][self.scope]
        if s[j] in m.one_chars:
            return j  # a one-character marker: stepped
        if s[j] in m.start_chars:
            # what ``maybe_tag`` would hold, from ``tag_begin`` on, and what it is then
            end, kind = m.tag_end(s[j], s, j + 1)
            if end >= n or kind != DEAD:
                return j  # held to the chunk's end, or a marker: stepped
        self.reopen_value(s[j])
        self.state = "in_param"
        self.run_stopped = True  # (the tag that was refused: stepped, not scanned first)
        return j

    def reopen_value(self, ch: str) -> None:
        """What followed the close is not grammar: the close was part of the value."""
        b = self.block
        assert b is not None
        held = "".join(b.held)
        b.held = []
        del b.tolerated[b.held_mark :]  # a close variant that is data is no deviation
        self._value(held)
        if self.tag:
            self.pushback = self.tag
            self.tag = ""
            self._tag_version += 1

    # tolerance: a value whose close was left out (``Raw(implied_close=...)``)
    def implied_ok(self, ch: str) -> bool:
        """The evidence an implied close needs: the marker begins a line of the value
        (as the templates write markup), the value quotes no markup of its dialect,
        and a parameter open must carry a key not given yet in this call (nor the open
        value's own) and, with ``tools=``, one the tool's schema has."""
        hit = self._hit(ch)
        leaf = getattr(hit.entry.data, "leaf", None)
        b = self.block
        if b is None or b.call is None or b.param is None or b.param.quoting or not b.param.at_line_start:
            return False
        if getattr(leaf, "kind", "") != "param_open":
            return True
        key = hit.fields.get("name", "")
        if key == b.param.name or key in b.call.args:
            return False
        tools = self.cfg.tools
        if tools is not None:
            return b.call.name in tools and key in tools[b.call.name]
        return True

    def value_quote(self, ch: str) -> None:
        """A call or block open of the value's own dialect, read inside the value: it
        is data, and the value quotes markup (no close is implied in it from now on)."""
        b = self.block
        assert b is not None
        tag = self._take_tag(ch)
        self._hold(tag)
        if b.param is not None:
            b.param.quoting = True
        self._value(tag)

    def imply_value_close(self, ch: str) -> None:
        """The value's close was left out: the marker that follows ends the value."""
        b = self.block
        assert b is not None
        p = b.param
        if p is not None and not b.spilled:
            body = p.spec.body
            code = getattr(body, "implied_close", "") or "implied_param_close"
            self.tolerate(code, f"the close of parameter {p.name!r} was left out; the value ends at offset {self.tag_start}",
                          self.tag_start)
        self.commit_value(ch)

    def commit_value(self, ch: str) -> None:
        """A marker that FOLLOW allows came after the close: the value ended there."""
        b = self.block
        assert b is not None
        p, call = b.param, b.call
        b.param = None
        b.held = []
        if p is None or call is None or b.spilled:
            return
        if p.json:
            raw = p.raw_value.join() if p.raw_value is not None else ""
            raw_text = raw
            value, problem = parse_json_value(raw)
            if problem is None and p.schema is not None and types_of(p.schema) and isinstance(value, str):
                value, problem = coerce(value, p.schema)
        else:
            tail = p.decoder.finish()
            if p.raw_from >= 0:
                # derived: the value is cut from the block's raw text when the block
                # is emitted (``Call.spans``); ``tail`` is empty for a raw style
                if call.spans is None:
                    call.spans = {}
                call.spans[p.name] = self._span(p)
                text = ""
            else:
                text = p.decoded.join() if p.decoded is not None else ""
                text += tail
            raw_text = text
            if p.streaming:
                if tail:
                    self._delta(call, quote(tail)[1:-1])
                self._delta(call, '"')
                value, problem = text, None
            elif isinstance(p.spec.body, Raw) and p.spec.body.style.json_when_valid:
                value, problem = json_or_raw(text, p.schema)
                code = p.spec.body.style.escaped_once
                if problem is not None and code and not self.cfg.strict:
                    # Tolerance (``ValueStyle(escaped_once=)``): escaped once too often
                    found, inner = unescaped_once(text, p.schema)
                    if found:
                        value, problem = inner, None
                        self.tolerate(code, f"{call.name}.{p.name}: value {text[:40]!r} escaped once too often, "
                                      "read unescaped once", p.start)
            elif p.schema is not None:
                value, problem = coerce(text, p.schema, lenient=not self.cfg.strict)
                if problem is None and isinstance(value, Lenient):
                    self.tolerate("python_literal", f"{call.name}.{p.name}: value {text[:40]!r} written "
                                  "Python-style, read as the JSON it stands for", b.start)
                    value = value.value
            else:
                value, problem = text, None
        if p.wrapper and problem is None:
            inner = value if p.json else parse_json_value(value)[0] if isinstance(value, str) else None
            if isinstance(inner, dict):
                call.deferred = (p.name, value, inner)
                return
        if (call.repeated and not self.cfg.strict and p.schema is not None and "array" in (types_of(p.schema) or [])
                and p.name not in call.args):
            # held until the call closes: a second one would make it an array
            if call.arrays is None:
                call.arrays = {}
            call.arrays.setdefault(p.name, []).append((value, problem, raw_text))
            return
        if problem:
            call.problem(f"{call.name}.{p.name}: {problem}")
        if not p.json and isinstance(value, str):
            if call.raw_keys is None:
                call.raw_keys = []
            call.raw_keys.append(p.name)
        if p.name in call.args:
            b.malformed_reason = b.malformed_reason or f"parameter {p.name!r} given twice in call {call.name!r}"
        call.args[p.name] = value
        if not p.streaming:
            self._delta(call, self._key_prefix(call, p.name) + dumps(value))


#: ``Param.raw_from`` of a derived value before its first piece.
DERIVE_PENDING = -2

_WS = re.compile(r"[ \t\r\n]*")
#: The characters a JSON object, array, number or boolean may begin with.
_JSON_NONSTRING_START = frozenset("{[-0123456789tf")


STATES = (
    StateDecl("in_param", "a raw parameter value", in_block=True, owner="value", sink="value_char"),
    StateDecl("after_close", "a parameter close held until what follows decides", in_block=True, owner="value"),
)

RULES = (
    *on("in_param", START, "maybe_tag", "tag_begin", rank=1),
    *on("in_param", but(START), "in_param", "value_char", rank=90),
    *on("after_close", ["ws", "nl"], "after_close", "hold_ws", rank=1),
    *on("after_close", START, "maybe_tag", "tag_begin", rank=2),
    *on("after_close", but("ws", "nl", START), "in_param", "reopen_value", "reprocess", rank=90),
    # a dead tag after a close: the close was data
    *on("maybe_tag", ALL, "in_param", "reopen_value", "reprocess", when=["from:after_close"], rank=6001),
    *[r for s in ("in_param", "after_close") for r in (
        *on(s, [EOF_TRIGGER], "text", "abort_block_eof"),
        *on(s, [OVERFLOW], s, "abort_oversized"),  # the block spills, the state stays
    )],
)

REGION = Region("value", STATES, RULES, ValueModel, state_runs=(("after_close", "refused_close_run"),))
