"""A call's body as strict JSON: ``JsonArgs`` (the arguments object) and ``JsonCall``
(a whole call, ``{"name": …, "arguments": {…}}``), read by a tokenizer of states.

The text is checked as JSON as it arrives, one state per token kind (``j_*``): a value
close or any other marker inside a string is data, and anything that is not JSON makes
the block malformed (text + Diagnostic, never a guessed call): trailing text, a
duplicate key, non-object arguments, a missing name, nesting past ``MAX_DEPTH``.
Nesting is a stack of small frames, never recursion.

The arguments stream as *canonical* JSON, the encoding ``json.dumps(arguments,
ensure_ascii=False)`` gives, so the ``ToolCallDelta`` fragments of a call concatenate
to ``ToolCall.arguments_json`` exactly, whatever the wire's spacing, escapes or key
order: keys and strings are decoded and re-encoded (``\\u00fc`` → ``ü``, a surrogate
pair joined), numbers are re-encoded once complete (``2.50`` → ``2.5``). Canonical text
produced before the call's name is known (``"arguments"`` before ``"name"``) waits in
the call and goes out as one fragment right after its ``ToolCallStart``.
"""

from __future__ import annotations

import json
import re
import sys
from dataclasses import dataclass
from typing import Any, Final

from callsieve.native import mypyc_attr, trait
from callsieve.accum import FLUSH_AT, Pieces
from callsieve.grammar.api import JsonCall, JsonCalls
from callsieve.grammar.states import ALL, EOF_TRIGGER, EXIT, OTHER, OVERFLOW, Region, Rule, StateDecl, but, on
from callsieve.regions import dumps, quote
from callsieve.regions.block import Call
from callsieve.regions.capture import CaptureModel
from callsieve.schema import parse_json_value

#: Deeper than this is no tool call (and Python's json module would recurse past its
#: limit): the block is malformed.
MAX_DEPTH = 200
_NUMBER = re.compile(r"-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?")
_NUMBER_CHARS = frozenset("0123456789+-.eE")
_NUMBER_RUN = re.compile(r"[0-9+\-.eE]*")
_LITERALS = ("true", "false", "null")
_ESCAPES = {'"': '"', "\\": "\\", "/": "/", "b": "\b", "f": "\f", "n": "\n", "r": "\r", "t": "\t"}
_HEX = frozenset("0123456789abcdefABCDEF")
_CTRL = re.compile(r"[\x00-\x1f]")


def _before_control(seg: str, i: int, j: int) -> int:
    """Where a string run over ``seg`` (``s[i:j]``) stops under ``strict``: at its first
    raw control character, which makes the body malformed where it stands (the steps'
    character: after it, the body's bad rows), so what comes before it streams as the
    steps stream it; ``j`` when there is none."""
    ctrl = _CTRL.search(seg)
    return j if ctrl is None else i + ctrl.start()


#: The longest JSON integer Python converts (``sys.int_max_str_digits``, 4,300 by
#: default; 0: no limit). A longer one is refused, never a ValueError out of feed().
_INT_DIGITS = sys.get_int_max_str_digits() if hasattr(sys, "get_int_max_str_digits") else 0

# Frame roles: what a container (or the value being read) means.
EMIT = "emit"  # inside the arguments: streamed
ARGS = "args"  # the arguments object itself: streamed
CALL = "call"  # the call object of a JsonCall
SKIP: Final = "skip"  # a value the shape ignores: checked, not streamed
CALLS = "calls"  # the array of call objects of a JsonCalls
NAME = "name"  # the call's name (a string)
ID = "id"  # the call's wire id (a string)
#: the arguments written as a JSON-encoded string (``"arguments": "{\"a\": 1}"``,
#: vLLM-style, Nemotron, Granite 4): read whole, decoded once, never streamed as a string
ARGSTR = "argstr"


@dataclass(init=False)
class Frame:
    kind: str  # "{" or "["
    role: str
    keys: set[str]
    count: int

    def __init__(self, kind: str, role: str) -> None:
        # (written out, not made by ``dataclass``: its generated ``__init__`` is
        # interpreted even in the compiled build, where this one is native; one is
        # made per call, block, value or JSON container)
        self.kind = kind
        self.role = role
        self.keys = set()
        self.count = 0


@trait
@mypyc_attr(allow_interpreted_subclasses=True)
class JsonBodyModel(CaptureModel):
    jframes: list[Frame]
    jshape: object = None  # JsonArgs | JsonCall
    jleaf: object = None
    jrole = SKIP  # role of the value about to be read
    jkey = ""
    jin_key = False
    #: the pieces of a key, name, id or string-encoded arguments being read (a list:
    #: a string fed in many chunks costs its length, not its length squared)
    jstrs: list[str]
    jtok = ""  # the first character of a number or literal token
    jtoks: list[str]  # the rest of it (a list, for the same reason)
    #: the tolerance codes this body has reported (each once per body)
    jnoted: list[str]
    jhex = ""
    jhigh = ""  # a high surrogate waiting for its low half
    jbad = ""  # why the body is not JSON, once known
    #: the call's start waits for its arguments to close (a block that is a deviation)
    jdeferred = False
    #: where the open string began in the block's raw (``j_string_end`` searches it)
    jstr_from = 0
    #: where a real opener stands in a string of a block that is itself a deviation:
    #: the block ends there (-1: none)
    jcut = -1

    # ------------------------------------------------------------ begin / end
    def json_begin(self, ch: str = "") -> None:
        """Enter the JSON body the last structural marker leads to."""
        leaf = self.enter_target
        self.jleaf = leaf
        shape = getattr(leaf, "body", None)
        self.jshape = shape.call if isinstance(shape, JsonCalls) else shape
        self.jframes = []
        self.jstrs = []
        self.jtoks = []
        self.jnoted = []
        self.jrole = CALL if isinstance(shape, JsonCall) else CALLS if isinstance(shape, JsonCalls) else ARGS
        self.jbad = ""
        self.jdeferred = False
        self.jcut = -1
        b = self._block()
        if self.jrole == ARGS and b.call is not None:
            b.call.json_args = True
            if not b.tolerance:
                self.start_call(b.call)
            else:
                # (a call of a block that is a deviation starts once its arguments are
                # read whole: prose that mentions ``<function=f> {x}`` streams nothing)
                self.jdeferred = True

    def _call(self) -> Call | None:
        b = self.block
        return b.call if b is not None else None

    def _out(self, s: str, last: bool = False) -> None:
        """Canonical text of the arguments: kept, and streamed unless the body is
        known not to be JSON (a fragment sent must still be able to be valid). The
        arguments' closing brace (``last``) is withheld until the call is emitted."""
        b = self.block
        call = b.call if b is not None else None  # (``_call()``, inline: hot)
        if call is None or b is None or b.spilled:
            return  # an overflowed block keeps nothing: its rest is streamed out as text
        text = call.args_text
        if text is None:
            text = call.args_text = Pieces()
        # (``text.append(s)``, inline, as in ``j_str_chunk``)
        recent = text.recent
        recent.append(s)
        text.length += len(s)
        if len(recent) >= FLUSH_AT:
            text.fold()
        if self.jbad:
            return
        if last:
            self.delta_closing(call, s)
        elif call.started and call.index is not None and s and not b.malformed_reason:
            # ``_delta``, inline (the block is open and not spilled)
            if self.delta_index != call.index and self.delta_buf:
                self.flush()
            self.delta_index = call.index
            self.delta_buf.append(s)
        else:
            self._delta(call, s)

    def _emitting(self) -> bool:
        return self.jrole in (EMIT, ARGS)

    def j_ws(self, ch: str) -> None:
        self._hold(ch)

    def j_ws_run(self, s: str, i: int, j: int) -> int:
        j = min(j, i + self.run_budget())
        self._hold(s[i:j])
        return j

    # ---------------------------------------------------------------- guards
    def j_is_colon(self, ch: str) -> bool:
        return ch == ":"

    def j_is_comma(self, ch: str) -> bool:
        return ch == ","

    def j_starts_number(self, ch: str) -> bool:
        return ch == "-" or "0" <= ch <= "9"

    def j_starts_literal(self, ch: str) -> bool:
        return ch in "tfn"

    def j_number_char(self, ch: str) -> bool:
        return ch in _NUMBER_CHARS

    def j_literal_char(self, ch: str) -> bool:
        tok = self.jtok + "".join(self.jtoks) + ch  # (at most five characters: a literal's)
        return any(lit.startswith(tok) for lit in _LITERALS)

    def j_escape_char(self, ch: str) -> bool:
        return ch in _ESCAPES

    def j_hex_char(self, ch: str) -> bool:
        return ch in _HEX

    def j_hex_last(self, ch: str) -> bool:
        return len(self.jhex) == 3

    def j_in_key(self, ch: str) -> bool:
        return self.jin_key

    def j_in_object(self, ch: str) -> bool:
        return bool(self.jframes) and self.jframes[-1].kind == "{"

    def j_in_array(self, ch: str) -> bool:
        return bool(self.jframes) and self.jframes[-1].kind == "["

    def j_nameless_call(self, ch: str) -> bool:
        """The container about to close is a call object that named no call (a JSON
        call object in ``j_next`` or ``j_key_first``: a ``}`` there closes it)."""
        if not self.jframes or self.jframes[-1].role != CALL:
            return False
        call = self._call()
        return call is None or not call.name

    def j_outermost(self, ch: str) -> bool:
        """The container about to close is the body's outermost."""
        return len(self.jframes) == 1

    # ------------------------------------------------------------ containers
    def _push(self, kind: str) -> bool:
        role = self.jrole
        if len(self.jframes) >= MAX_DEPTH:
            self.jbad = f"JSON nested deeper than {MAX_DEPTH} levels"
            return False
        if role in (NAME, ID):
            self.jbad = f"the call's {role} is not a string"
            return False
        if role == ARGS and kind != "{":
            self.jbad = "the arguments are not a JSON object"
            return False
        if role == CALLS and kind != "[":
            self.jbad = "the calls are not a JSON array"
            return False
        if role == CALL:
            if kind != "{":
                self.jbad = "a call is not a JSON object"
                return False
            call = self.new_call(self._block())
            call.json_args = True
            shape = self.jshape
            call.wire_ids = isinstance(shape, JsonCall) and bool(shape.id)
        self.jframes.append(Frame(kind, role))
        if role in (EMIT, ARGS):
            self._out(kind)
        return True

    def j_open_object(self, ch: str) -> None:
        self._hold(ch)
        self._before_value()
        if not self._push("{"):
            self.j_fail(ch)

    def j_open_array(self, ch: str) -> None:
        self._hold(ch)
        self._before_value()
        if not self._push("["):
            self.j_fail(ch)

    def j_close(self, ch: str) -> None:
        """``}`` or ``]`` closes the innermost container (the rows check it matches)."""
        self._hold(ch)
        f = self.jframes.pop()
        if f.role in (EMIT, ARGS):
            self._out(ch, f.role == ARGS)
        if f.role == ARGS:
            call = self._call()
            if call is not None:
                call.args_done = True
                if self.jdeferred:  # (held so far in a block that is a deviation: json_begin)
                    self.jdeferred = False
                    self.start_call(call)
        if f.role == CALL:
            self._end_call_object()
        self._after_value()

    def _end_call_object(self) -> None:
        b = self._block()
        call = b.call
        if call is None:
            return
        if not call.name:
            self.jbad = "the call object has no name"
            b.malformed_reason = b.malformed_reason or self.jbad
            return
        self.start_call(call)
        if not call.args_done:
            self._out("{}", True)
        self.finish_call(call)

    def j_close_body(self, ch: str) -> None:
        """The outermost container closed: the body is complete (``body_exit`` then
        ends a call that has no close marker of its own, Mistral's)."""
        self.j_close(ch)
        self.jleaf = None

    def _before_value(self) -> None:
        """Separators of the canonical text, written when a value begins."""
        if not self.jframes:
            return
        f = self.jframes[-1]
        if f.kind == "[":
            if f.role in (EMIT, ARGS) and f.count:
                self._out(", ")
            f.count += 1
            self.jrole = EMIT if f.role in (EMIT, ARGS) else CALL if f.role == CALLS else SKIP

    def _after_value(self) -> None:
        self.jrole = self.jframes[-1].role if self.jframes else SKIP

    # --------------------------------------------------------------- strings
    def j_string_begin(self, ch: str) -> None:
        b = self.block
        assert b is not None
        if b.spilled:
            self._spill(ch)
        else:
            # (``self._hold(ch)``, inline: each string's quote)
            raw = b.raw
            recent = raw.recent
            recent.append(ch)
            k = len(ch)
            raw.length += k
            if len(recent) >= FLUSH_AT:
                raw.fold()
            b.raw_len += k
        self.jstr_from = b.raw_len
        self.jstrs = []
        self.jhigh = ""
        if not self.jin_key:
            self._before_value()
            if self.jrole == ARGS:
                # Issue 21, item 4: arguments as a JSON-encoded string. Read whole and
                # decoded once at its end (``_args_string``); nothing of it streams.
                self.jrole = ARGSTR
            elif self.jrole == EMIT:
                self._out('"')

    def j_key_begin(self, ch: str) -> None:
        self.jin_key = True
        self.j_string_begin(ch)

    def _text_piece(self, s: str) -> None:
        if self.jin_key or self.jrole in (NAME, ID, ARGSTR):
            self.jstrs.append(s)
        elif self.jrole in (EMIT, ARGS):
            self._out(quote(s)[1:-1])

    def _flush_high(self) -> None:
        if self.jhigh:
            self.jhigh = ""
            self._lone_surrogate()

    def _lone_surrogate(self) -> None:
        """A ``\\uD800``-``\\uDFFF`` escape with no other half: no character at all, and
        text holding it cannot be encoded as UTF-8 (an OpenAI chunk could not be sent).
        Strict: the body is malformed; else it is read as U+FFFD, with a Diagnostic."""
        if self.cfg.strict:
            self.jbad = "a lone surrogate escape in a JSON string"
            return
        self._note("lone_surrogate", "a JSON string held a lone surrogate escape (half of a UTF-16 pair); read as U+FFFD")
        self._text_piece("\ufffd")

    def _note(self, code: str, what: str) -> None:
        """A tolerated deviation of this body, reported once per body."""
        if code not in self.jnoted:
            self.jnoted.append(code)
            self.tolerate(code, what, self._block().start)

    def j_str_char(self, ch: str) -> None:
        self._hold(ch)
        self._flush_high()
        if ch < " ":
            self._control()
        self._text_piece(ch)

    def j_str_run(self, s: str, i: int, j: int) -> int:
        j = min(j, i + self.run_budget())
        if self.cfg.strict:
            j = _before_control(s[i:j], i, j)
            if j == i:
                return i
        seg = s[i:j]
        self._hold(seg)
        self._flush_high()
        if _CTRL.search(seg):
            self._control()
        self._text_piece(seg)
        return j

    def j_str_take(self, s: str, i: int, j: int) -> int:
        """``j_str_run`` for :mod:`callsieve.regions.json_run`, which has bounded ``j`` by
        the block's room and holds the block open and not spilled: the hold, the text
        piece and a streamed fragment (``_text_piece``, ``_out``, ``_delta``) in one
        call, a token-sized chunk of a string value being most of a JSON body's feeds
        (issue 27)."""
        b = self.block
        assert b is not None
        if self.cfg.strict:
            j = _before_control(s[i:j], i, j)
            if j == i:
                return i
        seg = s[i:j]
        raw = b.raw  # (``raw.append(seg)``, inline)
        recent = raw.recent
        recent.append(seg)
        raw.length += j - i
        if len(recent) >= FLUSH_AT:
            raw.fold()
        b.raw_len += j - i
        if self.jhigh:
            self._flush_high()
        if _CTRL.search(seg):
            self._control()
        role = self.jrole
        if self.jin_key or role == NAME or role == ID or role == ARGSTR:
            self.jstrs.append(seg)
        elif role == EMIT or role == ARGS:
            call = b.call
            if call is not None:
                piece: str = quote(seg)[1:-1]
                text = call.args_text
                if text is None:
                    text = call.args_text = Pieces()
                # (``text.append(piece)``, inline, as in ``j_str_chunk``)
                recent = text.recent
                recent.append(piece)
                text.length += len(piece)
                if len(recent) >= FLUSH_AT:
                    text.fold()
                if self.jbad:
                    pass
                elif call.started and call.index is not None and piece and not b.malformed_reason:
                    # ``_delta``, inline (the block is open and not spilled)
                    if self.delta_index != call.index and self.delta_buf:
                        self.flush()
                    self.delta_index = call.index
                    self.delta_buf.append(piece)
                else:
                    self._delta(call, piece)
        return j

    def j_str_chunk(self, s: str) -> str | None:
        """A whole chunk of a JSON string that holds no quote and no backslash, with no
        event or fragment pending: what ``callsieve.regions.json_run`` and
        ``j_str_take`` make of it, the fragment streamed returned ("" for none) rather
        than buffered, for the runner to make the feed's one event (issue 27). None,
        with nothing changed, where it is not that plain (a control character, a high
        surrogate pending, the body found not JSON, a block spilled, malformed or at
        its limit, a call not started): the runner's general path reads it."""
        if '"' in s or "\\" in s:
            return None  # (the string ends or escapes here: most chunks that fail, asked first)
        b = self.block
        if b is None or b.spilled or b.malformed_reason or self.redo or self.pushback or self.jbad or self.jhigh:
            return None
        k = len(s)
        if b.raw_len + k > self.cfg.max_block_chars or _CTRL.search(s):
            return None
        role = self.jrole
        raw = b.raw
        if self.jin_key or role == NAME or role == ID or role == ARGSTR:
            # (``raw.append(s)``, inline)
            recent = raw.recent
            recent.append(s)
            raw.length += k
            if len(recent) >= FLUSH_AT:
                raw.fold()
            b.raw_len += k
            self.jstrs.append(s)
            return ""
        if role != EMIT and role != ARGS:
            return None
        call = b.call
        if call is None or not call.started or call.index is None:
            return None
        recent = raw.recent  # (``raw.append(s)``, inline)
        recent.append(s)
        raw.length += k
        if len(recent) >= FLUSH_AT:
            raw.fold()
        b.raw_len += k
        piece: str = quote(s)[1:-1]
        text = call.args_text
        if text is None:
            text = call.args_text = Pieces()
        # (``text.append(piece)``, inline: most feeds of a streamed body come here)
        recent = text.recent
        recent.append(piece)
        text.length += len(piece)
        if len(recent) >= FLUSH_AT:
            text.fold()
        self.delta_index = call.index
        return piece

    def _control(self) -> None:
        """A raw control character in a JSON string (JSON requires it escaped). Strict:
        the body is malformed; else it is read as if escaped, with a Diagnostic."""
        if self.cfg.strict:
            self.jbad = "a raw control character inside a JSON string (JSON requires it escaped)"
            return
        self._note("raw_control_character", "a raw control character inside a JSON string was read as if escaped")

    def j_escape(self, ch: str) -> None:
        self._hold(ch)
        self._flush_high()
        self._text_piece(_ESCAPES[ch])

    def j_unicode_begin(self, ch: str) -> None:
        self._hold(ch)
        self.jhex = ""

    def j_hex(self, ch: str) -> None:
        self._hold(ch)
        self.jhex += ch

    def j_hex_end(self, ch: str) -> None:
        self._hold(ch)
        c = chr(int(self.jhex + ch, 16))
        self.jhex = ""
        # (Surrogates compared by code point: mypyc takes no surrogate in a literal.)
        if 0xD800 <= ord(c) <= 0xDBFF:
            self._flush_high()
            self.jhigh = c
        elif 0xDC00 <= ord(c) <= 0xDFFF and self.jhigh:
            pair = chr(0x10000 + ((ord(self.jhigh) - 0xD800) << 10) + (ord(c) - 0xDC00))
            self.jhigh = ""
            self._text_piece(pair)
        elif 0xDC00 <= ord(c) <= 0xDFFF:
            self._lone_surrogate()
        else:
            self._flush_high()
            self._text_piece(c)

    def j_string_end(self, ch: str) -> None:
        b = self.block
        assert b is not None
        if b.spilled:
            self._spill(ch)
        else:
            # (``self._hold(ch)``, inline, as in ``j_string_begin``)
            raw = b.raw
            recent = raw.recent
            recent.append(ch)
            k = len(ch)
            raw.length += k
            if len(recent) >= FLUSH_AT:
                raw.fold()
            b.raw_len += k
        if self.jhigh:
            self._flush_high()
        if b.tolerance and not self.jbad:
            at = self.opener_inside(self.jstr_from)
            if at >= 0:
                # A block that is itself a deviation, a real opener in its string: it
                # ends there (a tolerated construct ends where one begins, issue 23),
                # at the next step (``j_bad``; ``j_fail`` cuts it at the opener).
                self.jcut = at
                self.jbad = "a real opener stands in a JSON string of a block that is itself a deviation"
        role = self.jrole
        if (role == EMIT or role == ARGS) and not self.jin_key:
            # (a streamed value's text went out as it came: ``jstrs`` holds nothing)
            self._out('"')
            frames = self.jframes  # (``_after_value``, inline)
            self.jrole = frames[-1].role if frames else SKIP
            return
        text = "".join(self.jstrs)
        self.jstrs = []
        if self.jin_key:
            self.jin_key = False
            self._key(text)
            return
        call = b.call
        if role == ARGSTR:
            self._args_string(text)
        elif role == NAME and call is not None:
            if not text or len(text) > 256:
                self.jbad = "the call's name is empty or too long"
            else:
                self.name_call(call, text)
        elif role == ID and call is not None:
            call.wire_id = text
        elif role in (CALL, CALLS):
            self.jbad = "a call is not a JSON object"
        self._after_value()

    def _args_string(self, text: str) -> None:
        """Arguments written as a JSON-encoded string: decoded once; an object is the
        arguments (canonical, as if written inline), with a Diagnostic; anything else
        (not JSON, not an object, too deep) makes the body malformed."""
        v, problem = parse_json_value(text)
        if problem is not None or not isinstance(v, dict):
            self.jbad = "the arguments are a string that holds no JSON object"
            return
        # (parse_json_value refuses a lone surrogate escape: such a string is malformed)
        canonical = dumps(v)
        call = self._call()
        if call is not None:
            call.args_done = True
        self._note("arguments_as_string", "the arguments were written as a JSON-encoded string; decoded once")
        self._out(canonical, True)

    def _key(self, key: str) -> None:
        f = self.jframes[-1]
        if key in f.keys and f.role != SKIP:
            self.jbad = f"duplicate key {key!r}"
        b = self.block
        if b is None or not b.spilled:  # an overflowed block keeps nothing
            f.keys.add(key)
        if f.role in (EMIT, ARGS):
            self._out((", " if f.count else "") + quote(key) + ": ")  # (json.dumps(key, ensure_ascii=False))
            f.count += 1
            self.jrole = EMIT
        elif f.role == CALL:
            shape = self.jshape
            assert isinstance(shape, JsonCall)
            if shape.keyed:
                self._keyed_call(key)
                return
            self.jrole = NAME if key in shape.name else ARGS if key in shape.arguments else ID if key in shape.id else SKIP
            if self.jrole == SKIP and shape.only:
                self.jbad = f"the call object has a key {key!r} besides its name and arguments"
            if self.jrole == ARGS:
                call = self._call()
                if call is not None and call.args_started:
                    self.jbad = f"arguments given twice ({key!r})"
                elif call is not None:
                    call.args_started = True
        else:
            self.jrole = SKIP

    def _keyed_call(self, key: str) -> None:
        """A call object keyed by its name (``JsonCall(keyed=True)``, Apertus's
        ``{"get_weather": {…}}``): its one key names the call, its value is the
        arguments; a second key makes the body malformed."""
        self.jrole = ARGS
        call = self._call()
        if call is None:
            return
        if call.args_started:
            self.jbad = f"a call keyed by its name has a second key ({key!r})"
        elif not key or len(key) > 256:
            self.jbad = "the call's name is empty or too long"
        else:
            self.name_call(call, key)
            call.args_started = True

    # ------------------------------------------------------ numbers, literals
    def j_token_begin(self, ch: str) -> None:
        self._hold(ch)
        self._before_value()
        self.jtok = ch
        self.jtoks = []

    def j_token_char(self, ch: str) -> None:
        self._hold(ch)
        self.jtoks.append(ch)

    def j_number_run(self, s: str, i: int) -> int:
        """The state run of ``j_number``: the characters that may continue a number,
        taken at once (``j_token_char`` each), up to the block's limit."""
        m = _NUMBER_RUN.match(s, i)  # (always matches: possibly empty)
        j = min(m.end() if m is not None else i, i + self.run_budget())
        if j > i:
            seg = s[i:j]
            self._hold(seg)
            self.jtoks.append(seg)
        return j

    def _token(self) -> str:
        tok = self.jtok + "".join(self.jtoks)
        self.jtok = ""
        self.jtoks = []
        return tok

    def j_number_end(self, ch: str) -> None:
        tok = self._token()
        if not _NUMBER.fullmatch(tok):
            self.jbad = f"{tok[:40]!r} is not a JSON number"
            return
        if "." not in tok and "e" not in tok and "E" not in tok:
            # An integer's canonical text is itself ("-0" aside): no conversion, which
            # is quadratic in its length and refused past Python's digit limit.
            digits = len(tok) - (tok[0] == "-")
            if _INT_DIGITS and digits > _INT_DIGITS:
                self.jbad = f"a JSON integer of {digits} digits, more than Python reads ({_INT_DIGITS})"
                return
            self._scalar("0" if tok == "-0" else tok)
            return
        v = float(tok)
        if v != v or v in (float("inf"), float("-inf")):
            self.jbad = f"{tok[:40]!r} is not a finite number"
            return
        self._scalar(json.dumps(v))

    def j_literal_end(self, ch: str) -> None:
        tok = self._token()
        if tok not in _LITERALS:
            self.jbad = f"{tok!r} is not a JSON literal"
            return
        self._scalar(tok)

    def _scalar(self, canonical: str) -> None:
        role = self.jrole
        if role == ARGS:
            self.jbad = "the arguments are not a JSON object"
        elif role in (NAME, ID):
            self.jbad = f"the call's {role} is not a string"
        elif role in (CALL, CALLS):
            self.jbad = "a call is not a JSON object"
        elif role == EMIT:
            self._out(canonical)
        self._after_value()

    def j_bad(self, ch: str) -> bool:
        """The body is known not to be JSON (``jbad``), or this ``}`` would close a
        call object that named no call: it fails there (read on, a block with no close
        of its own would take the next call's marker, and that call, into a malformed
        block: granite_20b_fc's ``<function_call> {…} <function_call> {…}``)."""
        return bool(self.jbad) or (ch == "}" and self.j_nameless_call(ch))

    def j_fail(self, ch: str) -> None:
        """Not JSON: the block is malformed."""
        b = self._block()
        if not self.jbad and ch == "}" and self.j_nameless_call(ch):
            self.jbad = "the call object has no name"
        b.malformed_reason = b.malformed_reason or (self.jbad or f"unexpected {ch!r} in a JSON body")
        self.jbad = b.malformed_reason

    def j_abort(self, ch: str) -> None:
        cut, self.jcut = self.jcut, -1
        if cut >= 0:
            self.cut_at(cut)  # (``ch`` is read again after what followed the opener)
            return
        self.j_fail(ch)
        self.abort_block(ch)


_WS = ["ws", "nl"]


def _states() -> tuple[StateDecl, ...]:
    doc = {
        "j_start": "before a JSON body: whitespace, then {",
        "j_value": "a JSON value is expected",
        "j_array_first": "after [: a value or ]",
        "j_key_first": "after {: a key or }",
        "j_key": "after a comma in an object: a key",
        "j_colon": "after a key: the colon",
        "j_next": "after a value: a comma or the container's close",
        "j_string": "inside a JSON string: markup is data",
        "j_escape": "after a backslash in a JSON string",
        "j_unicode": "in a \\u escape: four hex digits",
        "j_number": "inside a JSON number",
        "j_literal": "inside true, false or null",
    }
    return tuple(StateDecl(n, d, in_block=True, owner="json_body") for n, d in doc.items())


def _rules() -> tuple[object, ...]:
    r: list[object] = []

    def value_starts(s: str) -> None:
        r.extend(on(s, _WS, s, "j_ws", rank=1))
        r.extend(on(s, ["quote"], "j_string", "j_string_begin", rank=2))
        r.extend(on(s, ["lbrace"], "j_key_first", "j_open_object", rank=3))
        r.extend(on(s, ["lbrack"], "j_array_first", "j_open_array", rank=4))
        r.extend(on(s, [OTHER], "j_number", "j_token_begin", when=["j_starts_number"], rank=5))
        r.extend(on(s, [OTHER], "j_literal", "j_token_begin", when=["j_starts_literal"], rank=6))

    r.extend(on("j_start", _WS, "j_start", "j_ws", rank=1))
    r.extend(on("j_start", ["lbrace"], "j_key_first", "j_open_object", rank=3))
    r.extend(on("j_start", ["lbrack"], "j_array_first", "j_open_array", rank=4))
    value_starts("j_value")
    value_starts("j_array_first")
    for s in ("j_key_first", "j_key"):
        r.extend(on(s, _WS, s, "j_ws", rank=1))
        r.extend(on(s, ["quote"], "j_string", "j_key_begin", rank=2))
    r.extend(on("j_colon", _WS, "j_colon", "j_ws", rank=1))
    r.extend(on("j_colon", [OTHER], "j_value", "j_ws", when=["j_is_colon"], rank=2))
    r.extend(on("j_next", _WS, "j_next", "j_ws", rank=1))
    r.extend(on("j_next", [OTHER], "j_key", "j_ws", "j_after_comma", when=["j_is_comma", "j_in_object"], rank=2))
    r.extend(on("j_next", [OTHER], "j_value", "j_ws", "j_after_comma", when=["j_is_comma", "j_in_array"], rank=3))
    # closing a container: the outermost one's ends the body (EXIT: the composer makes one
    # row per place a JSON body stands, each to what follows it there)
    for s, trig, guard in (("j_next", "rbrace", "j_in_object"), ("j_next", "rbrack", "j_in_array")):
        r.extend(on(s, [trig], EXIT, "j_close_body", when=["j_outermost", guard], rank=10))
    for s, trig in (("j_key_first", "rbrace"), ("j_array_first", "rbrack")):
        r.extend(on(s, [trig], EXIT, "j_close_body", when=["j_outermost"], rank=10))
    for s, trig, guard in (("j_next", "rbrace", "j_in_object"), ("j_next", "rbrack", "j_in_array"),
                           ("j_key_first", "rbrace", "j_in_object"), ("j_array_first", "rbrack", "j_in_array")):
        r.extend(on(s, [trig], "j_next", "j_close", when=[guard], rank=50))
    # strings
    r.extend(on("j_string", ["quote"], "j_colon", "j_string_end", when=["j_in_key"], rank=1))
    r.extend(on("j_string", ["quote"], "j_next", "j_string_end", rank=2))
    r.extend(on("j_string", ["bslash"], "j_escape", "j_hold_escape", rank=3))
    r.extend(on("j_string", but("quote", "bslash"), "j_string", "j_str_char", rank=90))
    r.extend(on("j_escape", ["quote", "bslash"], "j_string", "j_escape", rank=1))
    r.extend(on("j_escape", [OTHER], "j_unicode", "j_unicode_begin", when=["j_is_u"], rank=2))
    r.extend(on("j_escape", [OTHER], "j_string", "j_escape", when=["j_escape_char"], rank=3))
    r.extend(on("j_unicode", [OTHER], "j_string", "j_hex_end", when=["j_hex_char", "j_hex_last"], rank=1))
    r.extend(on("j_unicode", [OTHER], "j_unicode", "j_hex", when=["j_hex_char"], rank=2))
    # numbers and literals end at the first character that cannot continue them
    r.extend(on("j_number", [OTHER], "j_number", "j_token_char", when=["j_number_char"], rank=1))
    r.extend(on("j_number", ALL, "j_next", "j_number_end", "reprocess", rank=80))
    r.extend(on("j_literal", [OTHER], "j_literal", "j_token_char", when=["j_literal_char"], rank=1))
    r.extend(on("j_literal", ALL, "j_next", "j_literal_end", "reprocess", rank=80))
    # Anything else is not JSON. A value found wrong while read (jbad: a duplicate key,
    # a bad number) fails at the next structural step. j_string keeps one row per class
    # so its run of plain characters is one bulk scan; numbers and literals end on any
    # character, which the next state then judges.
    covered = {"j_string", "j_number", "j_literal"}
    for st in _states():
        if st.name != "j_string":
            r.extend(on(st.name, ALL, "text", "j_abort", "reprocess", when=["j_bad"], rank=0))
        if st.name not in covered:
            # every class this state has no unguarded row for
            done = {t for x in r if isinstance(x, Rule) and x.source == st.name and not x.guards for t in x.triggers.named}
            r.extend(on(st.name, but(*sorted(done)), "text", "j_abort", "reprocess", rank=99))
        r.extend(on(st.name, [EOF_TRIGGER], "text", "abort_block_eof"))
        r.extend(on(st.name, [OVERFLOW], st.name, "abort_oversized"))  # the block spills, the state stays
    return tuple(r)


@trait
@mypyc_attr(allow_interpreted_subclasses=True)
class JsonBodyExtras(JsonBodyModel):
    def j_after_comma(self, ch: str) -> None:
        f = self.jframes[-1]
        self.jrole = f.role if f.kind == "{" else (EMIT if f.role in (EMIT, ARGS) else CALL if f.role == CALLS else SKIP)

    def j_hold_escape(self, ch: str) -> None:
        self._hold(ch)

    def j_is_u(self, ch: str) -> bool:
        return ch == "u"


STATES = _states()
RULES: tuple[Any, ...] = _rules()
REGION = Region("json_body", STATES, RULES, JsonBodyExtras, run_forms=(("j_str_char", "j_str_run"), ("j_ws", "j_ws_run")),
                state_runs=(("j_number", "j_number_run"),))
