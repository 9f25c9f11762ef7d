"""Python call syntax as a value grammar: ``[f(a=1), g(b="x")]`` (``PythonCalls``) and
``f(a=1)`` (``PythonCall``), read by a tokenizer of states (``py_*``), never ``eval``.

What it reads is what ``ast.literal_eval`` would take as a call's keyword arguments:
strings in either quote (triple-quoted too; ``r``/``u`` prefixes; every escape Python
has, ``\\N{NAME}`` included), integers (decimal, ``0x``/``0o``/``0b``, ``_``
separators) and floats, a sign before a number, ``True``/``False``/``None`` (and JSON's
``true``/``false``/``null`` where the body says so, OLMo 3 and LFM2), lists and dicts
(keys: strings, numbers or those words). Everything else is refused: a name, an
expression, a nested call, a positional argument, a tuple, bytes or an f-string, a
dotted callee, a keyword given twice, a complex or non-finite number.

The arguments stream as canonical JSON (``json.dumps(arguments, ensure_ascii=False)``),
so every prefix of a call's ``ToolCallDelta`` fragments is a prefix of its final
arguments: ``{`` at ``(``, ``"key": `` at ``=``, strings decoded and re-encoded as they
arrive, numbers and words once complete, ``}`` at ``)``.

A call that is refused is *bad*, not the block: the rest of it is read (``py_skip``,
brackets counted and strings skipped, so a ``)`` in a string ends nothing) to its
closing parenthesis, and the block's other calls stand; the bad call is released with a
Diagnostic (``BlockModel._emit_calls``). What breaks the list itself (no ``,`` or ``]``
after a call, the stream ending) makes the block malformed, as JSON's would. Bracket
depth, never the first ``]``: a list-valued argument ends nothing (SGLang's first-``]``
capture does).

Tolerances (a Diagnostic each; refused under ``Sieve(strict=True)``): a raw line break
inside a one-line string is read as ``\\n`` (``raw_newline_in_string``), an integer
written with leading zeros as the number (``leading_zero_number``), a Python keyword as
an argument's name (``keyword_argument_name``): what LFM2's repair ladder meets.

With a list's items that are dicts (``PythonCalls(objects=JsonCall(...))``, LFM2's JSON
form ``[{"name": …, "arguments": {…}}]``), an item is a call object: its name under one
of the ``name`` keys, its arguments dict under one of the ``arguments`` keys.
"""

from __future__ import annotations

import json
import keyword
import math
import re
import unicodedata
from dataclasses import dataclass, field
from typing import Any, Final

from callsieve.native import mypyc_attr, trait
from callsieve.accum import Pieces
from callsieve.grammar.api import JsonCall, PythonCall, PythonCalls
from callsieve.grammar.states import ALL, CLASSES, EOF_TRIGGER, EXIT, OVERFLOW, Region, Rule, StateDecl, but, on
from callsieve.regions import quote
from callsieve.regions.block import BlockModel, Call

#: Deeper than this is no argument (the call is refused).
MAX_DEPTH = 200
#: Longest name, keyword, number or word token read (a longer one refuses the call).
MAX_TOKEN = 256

# Frame kinds: what a bracket opened.
LIST_OF_CALLS: Final = "L"
ARGS: Final = "A"  # a call's ( … ): keyword arguments, streamed as a JSON object
LIST: Final = "["
DICT: Final = "{"
OBJECT: Final = "O"  # a call object of a list of calls (``objects=``)

# Value roles: what the value about to be read is.
EMIT: Final = "emit"  # streamed
SKIP: Final = "skip"  # checked, not streamed (a call object's other keys)
NAME: Final = "name"  # a call object's name (a string)
ARGUMENTS: Final = "arguments"  # a call object's arguments (a dict, streamed)

_ESCAPES = {"\\": "\\", "'": "'", '"': '"', "a": "\a", "b": "\b", "f": "\f", "n": "\n", "r": "\r", "t": "\t", "v": "\v"}
_HEX_DIGITS = {"x": 2, "u": 4, "U": 8}
_STRING_PREFIXES = frozenset({"r", "u", "R", "U"})
_REFUSED_PREFIXES = frozenset({"b", "f", "rb", "br", "fr", "rf"})
_NUMBER_CHARS = frozenset("0123456789abcdefABCDEFxXoObBjJ_.+-")
_INT = re.compile(r"[+-]?(?:0[xX](?:_?[0-9a-fA-F])+|0[oO](?:_?[0-7])+|0[bB](?:_?[01])+|[1-9](?:_?[0-9])*|0+(?:_?0)*)")
_LEADING_ZEROS = re.compile(r"[+-]?0(?:_?[0-9])+")
_FLOAT = re.compile(r"[+-]?(?:(?:[0-9](?:_?[0-9])*)?\.[0-9](?:_?[0-9])*|[0-9](?:_?[0-9])*\.?)(?:[eE][+-]?[0-9](?:_?[0-9])*)?")
#: The plain characters of a string up to what ends a run (its quote, a backslash, a
#: line break), per quote character.
_STR_RUN = {'"': re.compile(r'[^"\\\n]+'), "'": re.compile(r"[^'\\\n]+")}
_WORDS = {"True": "true", "False": "false", "None": "null"}
_JSON_WORDS = {"true": "true", "false": "false", "null": "null"}


@dataclass
class PyFrame:
    kind: str
    role: str  # EMIT (streamed), SKIP, or, for an OBJECT, what it is read as
    count: int = 0
    keys: set[str] = field(default_factory=set)


def _ident_start(ch: str) -> bool:
    return ch == "_" or ch.isalpha()


def _ident_char(ch: str) -> bool:
    return ch == "_" or ch.isalnum()


def canonical_number(tok: str, strict: bool) -> tuple[str, str, str]:
    """``tok`` as JSON (``json.dumps`` of the number Python reads), the Diagnostic code
    of a tolerance used ("" if none), and why it is no number ("" if it is one)."""
    body = tok.lstrip("+-")
    if body[-1:] in ("j", "J"):
        return "", "", f"{tok!r} is a complex number"
    if _INT.fullmatch(tok):
        return str(int(tok.replace("_", ""), 0)), "", ""
    if _LEADING_ZEROS.fullmatch(tok):
        if strict:
            return "", "", f"{tok!r}: an integer with leading zeros is no Python literal"
        return str(int(tok.replace("_", ""), 10)), "leading_zero_number", ""
    if _FLOAT.fullmatch(tok) and any(c.isdigit() for c in body):
        v = float(tok.replace("_", ""))
        if math.isinf(v) or math.isnan(v):
            return "", "", f"{tok!r} is not a finite number"
        return json.dumps(v), "", ""
    return "", "", f"{tok!r} is not a number"


@trait
@mypyc_attr(allow_interpreted_subclasses=True)
class PythonValueModel(BlockModel):
    pframes: list[PyFrame]
    pshape: object = None  # PythonCalls | PythonCall
    pjson = False  # JSON's true/false/null are literals too
    pobjects: object = None  # JsonCall: the call objects a list of calls may hold
    pbase = 0  # frames below the current call (the list of calls)
    prole = EMIT  # the role of the value about to be read
    pkey = False  # the value being read is a dict key
    ptok = ""  # a name, keyword, number or word so far
    pq = ""  # the open string's quote character
    ptriple = False
    praw = False  # an r-string: escapes are kept as written
    pquotes = 0  # closing quotes seen of a triple-quoted string (held back)
    pesc = ""  # an escape's digits or name so far
    pesc_need = 0
    pstr = ""  # a key or name string, decoded, so far
    phigh = ""  # a high surrogate escape waiting for its low half
    pbad = ""  # why the current call is refused, once known (its rest is skipped)
    pfail = ""  # why the block is malformed, once known
    pdepth = 0  # brackets open in a call being skipped
    pskip_q = ""  # the quote of a string met while skipping
    pskip_triple = False
    pskip_quotes = 0

    # ------------------------------------------------------------ begin / end
    def py_begin(self, ch: str = "") -> None:
        """Enter the Python body the last structural marker (or a position) leads to."""
        leaf = self.enter_target
        shape = getattr(leaf, "body", None)
        self.pshape = shape
        self.pjson = bool(getattr(shape, "json_literals", False))
        self.pobjects = getattr(shape, "objects", None)
        self.pframes = []
        self.pbase = 0
        self.pbad = ""
        self.pfail = ""
        self.pkey = False

    def _py_call(self) -> Call | None:
        b = self.block
        return b.call if b is not None else None

    def _py_out(self, s: str) -> None:
        """Canonical argument text of the current call (not of a refused one)."""
        call = self._py_call()
        b = self.block
        if call is None or self.pbad or (b is not None and b.spilled):
            return
        if call.args_text is None:
            call.args_text = Pieces()
        call.args_text.append(s)
        self.stream_args(call, s)

    def _py_emitting(self) -> bool:
        return self.prole == EMIT and not self.pkey

    def py_hold(self, ch: str) -> None:
        self._hold(ch)

    def py_hold_run(self, s: str, i: int, j: int) -> int:
        j = min(j, i + self.run_budget())
        self._hold(s[i:j])
        return j

    # ---------------------------------------------------------------- guards
    def py_is_list_body(self, ch: str) -> bool:
        return isinstance(self.pshape, PythonCalls)

    def py_single(self, ch: str) -> bool:
        return isinstance(self.pshape, PythonCall)

    def py_has_objects(self, ch: str) -> bool:
        return self.pobjects is not None

    def py_ident_start(self, ch: str) -> bool:
        return _ident_start(ch)

    def py_ident_char(self, ch: str) -> bool:
        return _ident_char(ch) and len(self.ptok) < MAX_TOKEN

    def py_is_lparen(self, ch: str) -> bool:
        return ch == "("

    def py_is_rparen(self, ch: str) -> bool:
        return ch == ")"

    def py_is_comma(self, ch: str) -> bool:
        return ch == ","

    def py_is_eq(self, ch: str) -> bool:
        return ch == "="

    def py_is_colon(self, ch: str) -> bool:
        return ch == ":"

    def py_is_squote(self, ch: str) -> bool:
        return ch == "'"

    def py_starts_number(self, ch: str) -> bool:
        return ch in "+-." or "0" <= ch <= "9"

    def py_number_char(self, ch: str) -> bool:
        if ch not in _NUMBER_CHARS or len(self.ptok) >= MAX_TOKEN:
            return False
        if ch in "+-":  # a sign only after an exponent's e (not in hex digits)
            t = self.ptok
            return t[-1:] in ("e", "E") and not t.lstrip("+-")[:2].lower() in ("0x",)
        return True

    def py_in_key(self, ch: str) -> bool:
        return self.pkey

    def py_in_args(self, ch: str) -> bool:
        return bool(self.pframes) and self.pframes[-1].kind == ARGS

    def py_in_list(self, ch: str) -> bool:
        return bool(self.pframes) and self.pframes[-1].kind == LIST

    def py_in_dict(self, ch: str) -> bool:
        return bool(self.pframes) and self.pframes[-1].kind == DICT

    def py_in_object(self, ch: str) -> bool:
        return bool(self.pframes) and self.pframes[-1].kind == OBJECT

    def py_bad_now(self, ch: str) -> bool:
        """A value just read refuses the call (a name, a bad number): its rest is skipped."""
        return bool(self.pbad)

    def py_failed(self, ch: str) -> bool:
        return bool(self.pfail)

    def py_opens_string(self, ch: str) -> bool:
        return ch == self.pq

    def py_closes_string(self, ch: str) -> bool:
        return ch == self.pq

    def py_one_line(self, ch: str) -> bool:
        return not self.ptriple

    def py_is_raw(self, ch: str) -> bool:
        return self.praw

    def py_simple_escape(self, ch: str) -> bool:
        return ch in _ESCAPES

    def py_hex_escape(self, ch: str) -> bool:
        return ch in _HEX_DIGITS

    def py_named_escape(self, ch: str) -> bool:
        return ch == "N"

    def py_octal_digit(self, ch: str) -> bool:
        return "0" <= ch <= "7"

    def py_octal_more(self, ch: str) -> bool:
        return "0" <= ch <= "7" and len(self.pesc) < 3

    def py_hex_digit(self, ch: str) -> bool:
        return ch in "0123456789abcdefABCDEF"

    def py_hex_last(self, ch: str) -> bool:
        return ch in "0123456789abcdefABCDEF" and len(self.pesc) + 1 == self.pesc_need

    def py_name_open(self, ch: str) -> bool:
        return ch == "{" and self.pesc == ""

    def py_name_close(self, ch: str) -> bool:
        return ch == "}"

    def py_name_char(self, ch: str) -> bool:
        return ch not in "{}\n" and len(self.pesc) < 128

    def py_word_prefix(self, ch: str) -> bool:
        """The word read so far is a string prefix and ``ch`` opens its string."""
        return ch in "'\"" and (self.ptok in _STRING_PREFIXES or self.ptok.lower() in _REFUSED_PREFIXES)

    def py_skip_quote(self, ch: str) -> bool:
        return ch in "'\""

    def py_skip_opens(self, ch: str) -> bool:
        return ch in "([{"

    def py_skip_closes_call(self, ch: str) -> bool:
        """The bracket that ends the refused call: the depth returns to its start."""
        return ch in ")]}" and self.pdepth == 1

    def py_skip_closes(self, ch: str) -> bool:
        return ch in ")]}" and self.pdepth > 1

    def py_skip_item_ends(self, ch: str) -> bool:
        """A refused item of a list of calls that opened no bracket ends at , or ]."""
        return self.pdepth == 0 and ch in ",]" and not isinstance(self.pshape, PythonCall)

    def py_skip_string_ends(self, ch: str) -> bool:
        return ch == self.pskip_q and self.pskip_quotes + 1 >= (3 if self.pskip_triple else 1)

    def py_skip_string_quote(self, ch: str) -> bool:
        return ch == self.pskip_q

    # ------------------------------------------------------------- the calls
    def py_list_open(self, ch: str) -> None:
        self._hold(ch)
        self.pframes.append(PyFrame(LIST_OF_CALLS, SKIP))
        self.pbase = 1

    def py_name_begin(self, ch: str) -> None:
        """A call's name begins: the call does (its raw text starts here)."""
        b = self._block()
        call = self.new_call(b)
        call.json_args = True
        self.pbad = ""
        self.ptok = ch
        self._hold(ch)

    def py_tok_char(self, ch: str) -> None:
        self._hold(ch)
        self.ptok += ch

    def py_call_open(self, ch: str) -> None:
        """``(`` after a name: the call is named, its arguments object opens."""
        self._hold(ch)
        call = self._py_call()
        if call is None:
            return
        name, self.ptok = self.ptok, ""
        self.name_call(call, name)
        self.pframes.append(PyFrame(ARGS, EMIT))
        self._py_out("{")

    def py_call_close(self, ch: str) -> None:
        """``)`` ends the call's arguments; the call ends at what follows it (a ``,`` or
        ``]`` of the list: ``py_call_done``; ``f(a=1)(b=2)`` is no call). One call alone
        (``PythonCall``) ends here."""
        self._hold(ch)
        self.pframes.pop()
        self._py_out("}")
        call = self._py_call()
        if call is not None:
            call.args_done = True
            if isinstance(self.pshape, PythonCall):
                self.finish_call(call)

    def py_call_done(self, ch: str) -> None:
        """A ``,`` or ``]`` after a call: it is one."""
        call = self._py_call()
        if call is not None:
            self.finish_call(call)

    def py_call_open_now(self, ch: str) -> bool:
        return self._py_call() is not None

    def py_list_close(self, ch: str) -> None:
        self._hold(ch)
        self.pframes = []

    def py_abort(self, ch: str) -> None:
        """What breaks the body itself: the block is malformed."""
        b = self._block()
        b.malformed_reason = b.malformed_reason or self.pfail or (
            f"unexpected {ch!r}: no Python call" if self.py_single(ch) else f"unexpected {ch!r} in a Python call list")
        self.abort_block(ch)

    # ------------------------------------------------------------ keywords
    def py_kw_begin(self, ch: str) -> None:
        self._hold(ch)
        self.ptok = ch

    def py_kw_done(self, ch: str) -> None:
        """``=`` after a keyword: the argument's key, checked and streamed."""
        self._hold(ch)
        key, self.ptok = self.ptok, ""
        f = self.pframes[-1]
        if key in f.keys:
            self._py_refuse(f"keyword argument {key!r} repeated")
            return
        if keyword.iskeyword(key):
            if self.cfg.strict:
                self._py_refuse(f"{key!r} is a Python keyword, no argument name")
                return
            self.tolerate("keyword_argument_name", f"{key!r}, a Python keyword, read as an argument's name", self.pos)
        f.keys.add(key)
        self._py_out((", " if f.count else "") + quote(key) + ": ")
        f.count += 1
        self.prole = EMIT

    # -------------------------------------------------------------- values
    def _py_before_value(self) -> None:
        """A value begins: its separator in a list (dict items get theirs with the key)."""
        if self.pkey or not self.pframes:
            return
        f = self.pframes[-1]
        if f.kind == LIST:
            if f.role == EMIT and f.count:
                self._py_out(", ")
            f.count += 1
            self.prole = f.role

    def _py_after_value(self) -> None:
        f = self.pframes[-1] if self.pframes else None
        self.prole = f.role if f is not None and f.kind in (LIST, DICT) else EMIT

    def _py_push(self, kind: str) -> None:
        """A list or dict opens. (One that refuses the call is still a frame, read and
        not streamed: the brackets stay counted until the call's rest is skipped.)"""
        role = self.prole
        why = ""
        if len(self.pframes) >= MAX_DEPTH:
            why = f"arguments nested deeper than {MAX_DEPTH} levels"
        elif self.pkey:
            why = "a list or dict as a dict key"
        elif role == NAME:
            why = "the call object's name is not a string"
        elif role == ARGUMENTS:
            call = self._py_call()
            if kind != DICT:
                why = "the call object's arguments are not a dict"
            elif call is not None and call.args_started:
                why = "the call object's arguments given twice"
            else:
                if call is not None:
                    call.args_started = True
                role = EMIT
        if why:
            self._py_refuse(why)
            role = SKIP
        self.pkey = False
        self.pframes.append(PyFrame(kind, role))
        if role == EMIT:
            self._py_out(kind)

    def py_list_value_open(self, ch: str) -> None:
        self._hold(ch)
        self._py_before_value()
        self._py_push(LIST)

    def py_dict_open(self, ch: str) -> None:
        self._hold(ch)
        self._py_before_value()
        self._py_push(DICT)

    def py_object_open(self, ch: str) -> None:
        """``{`` as an item of a list of calls: a call object (``objects=``)."""
        self._hold(ch)
        call = self.new_call(self._block())
        call.json_args = True
        self.pbad = ""
        self.pframes.append(PyFrame(OBJECT, SKIP))

    def py_close(self, ch: str) -> None:
        """``]`` or ``}`` closes the innermost list or dict."""
        self._hold(ch)
        f = self.pframes.pop()
        if f.role == EMIT:
            self._py_out("]" if f.kind == LIST else "}")
            call = self._py_call()
            if call is not None and self.pframes and self.pframes[-1].kind == OBJECT:
                call.args_done = True
        self._py_after_value()

    def py_object_close(self, ch: str) -> None:
        """``}`` ends a call object: it must have named its call."""
        self._hold(ch)
        self.pframes.pop()
        call = self._py_call()
        if call is None:
            return
        if not call.name:
            self._py_refuse("the call object has no name")
            return
        self.start_call(call)
        if not call.args_started:
            self._py_out("{}")
        call.args_done = True

    def py_key_begin(self, ch: str) -> None:
        self.pkey = True

    def py_key_end(self, key: str) -> None:
        """A dict key read: checked, and streamed with its separator."""
        self.pkey = False
        f = self.pframes[-1]
        if key in f.keys:
            self._py_refuse(f"duplicate key {key!r}")
            return
        f.keys.add(key)
        if f.kind == OBJECT:
            shape = self.pobjects
            assert isinstance(shape, JsonCall)
            self.prole = NAME if key in shape.name else ARGUMENTS if key in shape.arguments else SKIP
            return
        if f.role == EMIT:
            self._py_out((", " if f.count else "") + quote(key) + ": ")
        f.count += 1
        self.prole = f.role

    def py_colon(self, ch: str) -> None:
        self._hold(ch)

    def _py_scalar(self, canonical: str, as_key: str) -> None:
        """A number or word read: streamed, or the dict key it is."""
        if self.pkey:
            self.py_key_end(as_key)
            return
        role = self.prole
        if role == NAME:
            self._py_refuse("the call object's name is not a string")
        elif role == ARGUMENTS:
            self._py_refuse("the call object's arguments are not a dict")
        elif role == EMIT:
            self._py_out(canonical)
        self._py_after_value()

    # ------------------------------------------------------ numbers, words
    def py_tok_begin(self, ch: str) -> None:
        self._hold(ch)
        self._py_before_value()
        self.ptok = ch

    def py_number_end(self, ch: str) -> None:
        tok, self.ptok = self.ptok, ""
        canonical, code, why = canonical_number(tok, self.cfg.strict)
        if why:
            self._py_refuse(why)
            return
        if code:
            self.tolerate(code, f"{tok!r} read as {canonical}", self.pos - len(tok))
        self._py_scalar(canonical, canonical)

    def py_word_end(self, ch: str) -> None:
        tok, self.ptok = self.ptok, ""
        lit = _WORDS.get(tok) or (_JSON_WORDS.get(tok) if self.pjson else None)
        if lit is None:
            what = "a call" if ch == "(" else "a name"
            self._py_refuse(f"{tok!r} is {what}, not a literal")
            return
        self._py_scalar(lit, lit)

    # --------------------------------------------------------------- strings
    def py_str_begin(self, ch: str) -> None:
        """An opening quote: the string may be empty or triple-quoted (next states)."""
        self._hold(ch)
        self._py_before_value()
        self._py_string_role()
        self.pq = ch
        self.ptriple = False
        self.praw = False
        self.pquotes = 0
        self.pstr = ""
        self.phigh = ""

    def _py_string_role(self) -> None:
        if self.pkey:
            return
        if self.prole == ARGUMENTS:
            self._py_refuse("the call object's arguments are not a dict")

    def py_prefixed_str_begin(self, ch: str) -> None:
        """A quote after a word that is a string prefix (``r'…'``; ``b``/``f`` refused)."""
        prefix, self.ptok = self.ptok, ""
        self._hold(ch)
        self._py_string_role()
        self.pq = ch
        self.ptriple = False
        self.praw = prefix.lower() == "r"
        self.pquotes = 0
        self.pstr = ""
        self.phigh = ""
        if prefix.lower() in _REFUSED_PREFIXES:
            self._py_refuse(f"a {prefix}-string is no plain string literal")

    def _py_text(self, s: str) -> None:
        """Decoded string content: streamed, or kept (a key, a call object's name)."""
        if self.phigh:
            self.phigh = ""
            self._py_lone_surrogate()
        if self.pkey or self.prole == NAME:
            self.pstr += s
        elif self.prole == EMIT:
            self._py_out(quote(s)[1:-1])

    def py_str_start(self, ch: str) -> None:
        """The string's body begins (after one quote, or three): its JSON quote."""
        if not self.pkey and self.prole == EMIT:
            self._py_out('"')

    def py_triple_begin(self, ch: str) -> None:
        self._hold(ch)
        self.ptriple = True
        self.py_str_start(ch)

    def py_quote2(self, ch: str) -> None:
        self._hold(ch)

    def py_str_char(self, ch: str) -> None:
        self._hold(ch)
        self._py_text(ch)

    def py_str_run(self, s: str, i: int) -> int:
        """The state run of ``py_str``: plain characters up to its quote, a backslash or
        a line break, read as stepping would (a triple-quoted string's line breaks are
        its own: stepped)."""
        m = _STR_RUN[self.pq].match(s, i) if self.pq in _STR_RUN else None
        if m is None:
            return i
        j = min(m.end(), i + self.run_budget())
        if j > i:
            seg = s[i:j]
            self._hold(seg)
            self._py_text(seg)
        return j

    def py_str_newline(self, ch: str) -> None:
        """A raw line break in a one-line string: read as ``\\n`` (tolerated)."""
        self._hold(ch)
        if self.cfg.strict:
            self._py_refuse("a raw line break inside a one-line string")
            return
        self.tolerate("raw_newline_in_string", "a raw line break inside a one-line Python string was read as \\n", self.pos)
        self._py_text(ch)

    def py_str_end(self, ch: str) -> None:
        self._hold(ch)
        self._py_string_done()

    def py_str_end_empty(self, ch: str) -> None:
        """Two quotes and something else: an empty string (the character is read again)."""
        self.py_str_start(ch)
        self._py_string_done()

    def _py_string_done(self) -> None:
        if self.phigh:
            self.phigh = ""
            self._py_lone_surrogate()
        if self.pkey:
            key, self.pstr = self.pstr, ""
            self.py_key_end(key)
            return
        role = self.prole
        if role == NAME:
            name, self.pstr = self.pstr, ""
            call = self._py_call()
            if not name or len(name) > 256:
                self._py_refuse("the call object's name is empty or too long")
            elif call is not None:
                call.name = name  # (started when the object ends: its arguments may still refuse it)
                call.known = self.cfg.tools is None or name in self.cfg.tools
        elif role == EMIT:
            self._py_out('"')
        self._py_after_value()

    def py_tq_quote(self, ch: str) -> None:
        """A quote inside a triple-quoted string: held until it is known not to close it."""
        self._hold(ch)
        self.pquotes += 1

    def py_tq_end(self, ch: str) -> None:
        self._hold(ch)
        self.pquotes = 0
        self._py_string_done()

    def py_tq_back(self, ch: str) -> None:
        """The quotes held were content after all (``ch`` is read again)."""
        n, self.pquotes = self.pquotes, 0
        self._py_text(self.pq * n)

    # ------------------------------------------------------------- escapes
    def py_escape_begin(self, ch: str) -> None:
        self._hold(ch)
        self.pesc = ""

    def py_escape(self, ch: str) -> None:
        self._hold(ch)
        self._py_text(_ESCAPES[ch])

    def py_escape_raw(self, ch: str) -> None:
        """In an r-string a backslash and what follows are kept as written."""
        self._hold(ch)
        self._py_text("\\" + ch)

    def py_escape_newline(self, ch: str) -> None:
        self._hold(ch)  # a line continuation: nothing

    def py_escape_unknown(self, ch: str) -> None:
        self._hold(ch)
        self._py_text("\\" + ch)  # (Python keeps an unknown escape as written)

    def py_hex_begin(self, ch: str) -> None:
        self._hold(ch)
        self.pesc = ""
        self.pesc_need = _HEX_DIGITS[ch]

    def py_hex_add(self, ch: str) -> None:
        self._hold(ch)
        self.pesc += ch

    def py_hex_end(self, ch: str) -> None:
        self._hold(ch)
        code = int(self.pesc + ch, 16)
        self.pesc = ""
        if code > 0x10FFFF:
            self._py_refuse(f"\\U{code:08x} is no character")
            return
        # A surrogate pair written as two escapes is the character it encodes (as JSON
        # reads it; Python would keep two halves no UTF-8 text can hold). (Compared by
        # code point: mypyc takes no surrogate in a literal.)
        if 0xD800 <= code <= 0xDBFF:
            if self.phigh:
                self.phigh = ""
                self._py_lone_surrogate()
            self.phigh = chr(code)
            return
        if 0xDC00 <= code <= 0xDFFF and self.phigh:
            high, self.phigh = self.phigh, ""
            self._py_text(chr(0x10000 + ((ord(high) - 0xD800) << 10) + (code - 0xDC00)))
            return
        if 0xDC00 <= code <= 0xDFFF:
            self._py_lone_surrogate()
            return
        self._py_text(chr(code))

    def _py_lone_surrogate(self) -> None:
        """Half of a UTF-16 pair, alone: no character, and text holding it cannot be
        encoded as UTF-8. Strict: the call is refused; else read as U+FFFD, reported."""
        if self.cfg.strict:
            self._py_refuse("a lone surrogate escape in a string")
            return
        self.tolerate("lone_surrogate", "a Python string held a lone surrogate escape (half of a UTF-16 pair); "
                      "read as U+FFFD", self.pos)
        self._py_text("\ufffd")

    def py_escape_bad(self, ch: str) -> None:
        """A truncated escape (``\\x4``): no Python string (the call is refused)."""
        self._py_refuse("a truncated escape in a string")

    def py_octal_begin(self, ch: str) -> None:
        self._hold(ch)
        self.pesc = ch

    def py_octal_end(self, ch: str) -> None:
        """The octal escape ended at ``ch`` (read again)."""
        code, self.pesc = int(self.pesc, 8), ""
        self._py_text(chr(code))

    def py_named_begin(self, ch: str) -> None:
        self._hold(ch)
        self.pesc = ""

    def py_named_char(self, ch: str) -> None:
        self._hold(ch)
        self.pesc += ch

    def py_named_end(self, ch: str) -> None:
        self._hold(ch)
        name, self.pesc = self.pesc[1:], ""
        try:
            self._py_text(unicodedata.lookup(name))
        except KeyError:
            self._py_refuse(f"unknown character name {name[:40]!r}")

    # ------------------------------------------------------- refused calls
    def _py_refuse(self, why: str) -> None:
        """The call is refused (its rest is skipped); outside a call, the block fails."""
        if self.pbad:
            return
        call = self._py_call()
        if call is None:
            self.pfail = self.pfail or why
            return
        self.pbad = why
        call.bad = why

    def py_bad(self, ch: str) -> None:
        """Enter the skip of a refused call at ``ch`` (read again there): brackets open
        within the call are counted from here on."""
        if not self.pbad:
            self._py_refuse(f"unexpected {ch!r} in a call")
        self.pdepth = len(self.pframes) - self.pbase
        del self.pframes[self.pbase :]
        self.pkey = False
        self.ptok = ""

    def py_bad_in_string(self, ch: str) -> None:
        """A string found bad: skipped from here to its closing quote (``ch`` read again)."""
        q, triple = self.pq, self.ptriple
        self.py_bad(ch)
        self.pskip_q = q
        self.pskip_triple = triple
        self.pskip_quotes = 0

    def py_skip_char(self, ch: str) -> None:
        self._hold(ch)

    def py_skip_open(self, ch: str) -> None:
        self._hold(ch)
        self.pdepth += 1

    def py_skip_close(self, ch: str) -> None:
        self._hold(ch)
        self.pdepth -= 1

    def py_skip_string(self, ch: str) -> None:
        self._hold(ch)
        self.pskip_q = ch
        self.pskip_triple = False
        self.pskip_quotes = 0

    def py_skip_quote_count(self, ch: str) -> None:
        self._hold(ch)
        self.pskip_quotes += 1

    def py_skip_str_char(self, ch: str) -> None:
        self._hold(ch)
        if ch != self.pskip_q:
            self.pskip_quotes = 0

    def py_bad_call_end(self, ch: str) -> None:
        """The refused call's closing bracket: the call ends, refused."""
        self._hold(ch)
        self.pdepth = 0
        self._py_end_refused()

    def py_bad_item_end(self, ch: str) -> None:
        """A refused item that opened no bracket ends before ``ch`` (read again)."""
        self._py_end_refused()

    def _py_end_refused(self) -> None:
        b = self._block()
        call = b.call
        if call is not None:
            call.raw_end = b.raw_len
            b.call = None
        self.pbad = ""
        del self.pframes[self.pbase :]


_WS = ["ws", "nl"]


def _states() -> tuple[StateDecl, ...]:
    doc = {
        "py_start": "before a Python body: whitespace, then [ (a list of calls) or a call's name",
        "py_calls": "in a list of calls, after [ or a comma: a call, or ]",
        "py_name": "a call's name",
        "py_name_end": "after a call's name: (",
        "py_args": "after ( or a comma between arguments: a keyword, or )",
        "py_kw": "a keyword argument's name",
        "py_kw_end": "after a keyword: =",
        "py_value": "a value is expected",
        "py_items": "after [ in a value, or a comma in a list: a value or ]",
        "py_keys": "after { in a value, or a comma in a dict: a key or }",
        "py_colon": "after a dict key: the colon",
        "py_after": "after a value: a comma or the close of what holds it",
        "py_after_call": "after a call in a list of calls: a comma or ]",
        "py_number": "inside a number",
        "py_word": "inside a word (True, False, None; a name refuses the call)",
        "py_quote1": "after an opening quote: a string, or an empty or triple-quoted one",
        "py_quote2": "after two quotes: an empty string, or a triple-quoted one",
        "py_str": "inside a string: markup is data",
        "py_tq": "quotes inside a triple-quoted string, held until three close it",
        "py_escape": "after a backslash in a string",
        "py_hex": "in a \\x, \\u or \\U escape",
        "py_octal": "in an octal escape",
        "py_named": "in a \\N{…} escape",
        "py_skip": "a refused call, read to its closing parenthesis (brackets counted)",
        "py_skip_str": "a string inside a refused call",
        "py_skip_escape": "after a backslash in a string of a refused call",
    }
    return tuple(StateDecl(n, d, in_block=True, owner="python_value") for n, d in doc.items())


def _rules() -> tuple[Any, ...]:
    r: list[Any] = []
    add = r.extend
    # (``other``, and any class a start character got: where Python's punctuation, names
    # and numbers fall)
    other = but(*CLASSES)
    # the body's start
    add(on("py_start", _WS, "py_start", "py_hold", rank=1))
    add(on("py_start", ["lbrack"], "py_calls", "py_list_open", when=["py_is_list_body"], rank=2))
    add(on("py_start", but(*_WS), "py_name", "py_name_begin", when=["py_single", "py_ident_start"], rank=3))
    # a list of calls
    add(on("py_calls", _WS, "py_calls", "py_hold", rank=1))
    add(on("py_calls", ["rbrack"], EXIT, "py_list_close", rank=2))
    add(on("py_calls", ["lbrace"], "py_keys", "py_object_open", when=["py_has_objects"], rank=3))
    add(on("py_calls", other, "py_name", "py_name_begin", when=["py_ident_start"], rank=4))
    add(on("py_after_call", _WS, "py_after_call", "py_hold", rank=1))
    add(on("py_after_call", other, "py_calls", "py_call_done", "py_hold", when=["py_is_comma", "py_is_list_body"], rank=2))
    add(on("py_after_call", ["rbrack"], EXIT, "py_call_done", "py_list_close", when=["py_is_list_body"], rank=3))
    # (anything else after a call's ")": the call was part of an expression)
    add(on("py_after_call", ALL, "py_skip", "py_bad", "reprocess", when=["py_call_open_now"], rank=98))
    # a call
    add(on("py_name", other, "py_name", "py_tok_char", when=["py_ident_char"], rank=1))
    add(on("py_name", _WS, "py_name_end", "py_hold", rank=2))
    add(on("py_name", other, "py_args", "py_call_open", when=["py_is_lparen"], rank=3))
    add(on("py_name_end", _WS, "py_name_end", "py_hold", rank=1))
    add(on("py_name_end", other, "py_args", "py_call_open", when=["py_is_lparen"], rank=2))
    add(on("py_args", _WS, "py_args", "py_hold", rank=1))
    add(on("py_args", other, EXIT, "py_call_close", when=["py_is_rparen", "py_single"], rank=2))
    add(on("py_args", other, "py_after_call", "py_call_close", when=["py_is_rparen"], rank=3))
    add(on("py_args", other, "py_kw", "py_kw_begin", when=["py_ident_start"], rank=4))
    add(on("py_kw", other, "py_kw", "py_tok_char", when=["py_ident_char"], rank=1))
    add(on("py_kw", _WS, "py_kw_end", "py_hold", rank=2))
    add(on("py_kw", other, "py_value", "py_kw_done", when=["py_is_eq"], rank=3))
    add(on("py_kw_end", _WS, "py_kw_end", "py_hold", rank=1))
    add(on("py_kw_end", other, "py_value", "py_kw_done", when=["py_is_eq"], rank=2))
    # values
    for s in ("py_value", "py_items", "py_keys"):
        add(on(s, _WS, s, "py_hold", rank=1))
    add(on("py_items", ["rbrack"], "py_after", "py_close", rank=2))
    add(on("py_items", ALL, "py_value", "reprocess", rank=90))  # (a value: read again there)
    add(on("py_keys", ["rbrace"], "py_after", "py_close", when=["py_in_dict"], rank=2))
    add(on("py_keys", ALL, "py_value", "py_key_begin", "reprocess", rank=90))
    add(on("py_value", ["quote"], "py_quote1", "py_str_begin", rank=2))
    add(on("py_value", other, "py_quote1", "py_str_begin", when=["py_is_squote"], rank=3))
    add(on("py_value", ["lbrack"], "py_items", "py_list_value_open", rank=4))
    add(on("py_value", ["lbrace"], "py_keys", "py_dict_open", rank=5))
    add(on("py_value", other, "py_number", "py_tok_begin", when=["py_starts_number"], rank=6))
    add(on("py_value", other, "py_word", "py_tok_begin", when=["py_ident_start"], rank=7))
    add(on("py_number", other, "py_number", "py_tok_char", when=["py_number_char"], rank=1))
    add(on("py_word", other, "py_word", "py_tok_char", when=["py_ident_char"], rank=1))
    add(on("py_word", ["quote"], "py_quote1", "py_prefixed_str_begin", when=["py_word_prefix"], rank=2))
    add(on("py_word", other, "py_quote1", "py_prefixed_str_begin", when=["py_word_prefix"], rank=3))
    for s, end in (("py_number", "py_number_end"), ("py_word", "py_word_end")):
        add(on(s, ALL, "py_colon", end, "reprocess", when=["py_in_key"], rank=70))
        add(on(s, ALL, "py_after", end, "reprocess", rank=80))
    add(on("py_colon", _WS, "py_colon", "py_hold", rank=1))
    add(on("py_colon", other, "py_value", "py_colon", when=["py_is_colon"], rank=2))
    add(on("py_after", _WS, "py_after", "py_hold", rank=1))
    add(on("py_after", other, "py_args", "py_hold", when=["py_is_comma", "py_in_args"], rank=2))
    add(on("py_after", other, "py_items", "py_hold", when=["py_is_comma", "py_in_list"], rank=3))
    add(on("py_after", other, "py_keys", "py_hold", when=["py_is_comma", "py_in_dict"], rank=4))
    add(on("py_after", other, "py_keys", "py_hold", when=["py_is_comma", "py_in_object"], rank=5))
    add(on("py_after", other, EXIT, "py_call_close", when=["py_is_rparen", "py_in_args", "py_single"], rank=6))
    add(on("py_after", other, "py_after_call", "py_call_close", when=["py_is_rparen", "py_in_args"], rank=7))
    add(on("py_after", ["rbrack"], "py_after", "py_close", when=["py_in_list"], rank=8))
    add(on("py_after", ["rbrace"], "py_after", "py_close", when=["py_in_dict"], rank=9))
    add(on("py_after", ["rbrace"], "py_after_call", "py_object_close", when=["py_in_object"], rank=10))
    # strings
    add(on("py_quote1", ALL, "py_quote2", "py_quote2", when=["py_opens_string"], rank=1))
    add(on("py_quote1", ALL, "py_str", "py_str_start", "reprocess", rank=90))  # (the body's first character: read again)
    add(on("py_quote2", ALL, "py_str", "py_triple_begin", when=["py_opens_string"], rank=1))
    add(on("py_quote2", ALL, "py_colon", "py_str_end_empty", "reprocess", when=["py_in_key"], rank=2))
    add(on("py_quote2", ALL, "py_after", "py_str_end_empty", "reprocess", rank=90))
    add(on("py_str", ["bslash"], "py_escape", "py_escape_begin", rank=1))
    add(on("py_str", ["nl"], "py_str", "py_str_newline", when=["py_one_line"], rank=2))
    for trig, rank in ((["quote"], 5), (other, 6)):
        add(on("py_str", trig, "py_colon", "py_str_end", when=["py_closes_string", "py_one_line", "py_in_key"], rank=rank))
    for trig, rank in ((["quote"], 7), (other, 8)):
        add(on("py_str", trig, "py_after", "py_str_end", when=["py_closes_string", "py_one_line"], rank=rank))
    for trig, rank in ((["quote"], 9), (other, 10)):
        add(on("py_str", trig, "py_tq", "py_tq_quote", when=["py_closes_string"], rank=rank))
    add(on("py_str", ALL, "py_str", "py_str_char", rank=90))
    # (a quote seen: two more close a triple-quoted string; anything else was content)
    add(on("py_tq", ALL, "py_colon", "py_tq_end", when=["py_closes_string", "py_tq_third", "py_in_key"], rank=1))
    add(on("py_tq", ALL, "py_after", "py_tq_end", when=["py_closes_string", "py_tq_third"], rank=2))
    add(on("py_tq", ALL, "py_tq", "py_tq_quote", when=["py_closes_string"], rank=3))
    add(on("py_tq", ALL, "py_str", "py_tq_back", "reprocess", rank=90))
    add(on("py_escape", ALL, "py_str", "py_escape_raw", when=["py_is_raw"], rank=1))
    add(on("py_escape", ["nl"], "py_str", "py_escape_newline", rank=2))
    add(on("py_escape", ALL, "py_hex", "py_hex_begin", when=["py_hex_escape"], rank=3))
    add(on("py_escape", ALL, "py_named", "py_named_begin", when=["py_named_escape"], rank=4))
    add(on("py_escape", ALL, "py_octal", "py_octal_begin", when=["py_octal_digit"], rank=5))
    add(on("py_escape", ALL, "py_str", "py_escape", when=["py_simple_escape"], rank=6))
    add(on("py_escape", ALL, "py_str", "py_escape_unknown", rank=90))
    add(on("py_hex", ALL, "py_str", "py_hex_end", when=["py_hex_last"], rank=1))
    add(on("py_hex", ALL, "py_hex", "py_hex_add", when=["py_hex_digit"], rank=2))
    add(on("py_hex", ALL, "py_skip_str", "py_escape_bad", "py_bad_in_string", "reprocess", rank=90))
    add(on("py_octal", ALL, "py_octal", "py_hex_add", when=["py_octal_more"], rank=1))
    add(on("py_octal", ALL, "py_str", "py_octal_end", "reprocess", rank=90))  # (ch is read again in the string)
    add(on("py_named", ["lbrace"], "py_named", "py_named_char", when=["py_name_open"], rank=1))
    add(on("py_named", ["rbrace"], "py_str", "py_named_end", when=["py_name_close", "py_named_opened"], rank=2))
    add(on("py_named", ALL, "py_named", "py_named_char", when=["py_name_char", "py_named_opened"], rank=3))
    add(on("py_named", ALL, "py_skip_str", "py_escape_bad", "py_bad_in_string", "reprocess", rank=90))
    # a refused value: the rest of its call is skipped
    for s in ("py_after", "py_colon"):
        add(on(s, ALL, "py_skip", "py_bad", "reprocess", when=["py_bad_now"], rank=0))
    # a refused call's rest: brackets counted, strings skipped, to its closing bracket
    add(on("py_skip", ["quote"], "py_skip_str", "py_skip_string", rank=1))
    add(on("py_skip", other, "py_skip_str", "py_skip_string", when=["py_skip_quote"], rank=2))
    add(on("py_skip", ALL, "py_skip", "py_skip_open", when=["py_skip_opens"], rank=3))
    add(on("py_skip", ALL, EXIT, "py_bad_call_end", when=["py_skip_closes_call", "py_single"], rank=4))
    add(on("py_skip", ALL, "py_after_call", "py_bad_call_end", when=["py_skip_closes_call"], rank=5))
    add(on("py_skip", ALL, "py_skip", "py_skip_close", when=["py_skip_closes"], rank=6))
    add(on("py_skip", ALL, "py_after_call", "py_bad_item_end", "reprocess", when=["py_skip_item_ends"], rank=7))
    add(on("py_skip", ALL, "py_skip", "py_skip_char", rank=90))
    add(on("py_skip_str", ["bslash"], "py_skip_escape", "py_skip_char", rank=1))
    add(on("py_skip_str", ALL, "py_skip", "py_skip_char", when=["py_skip_string_ends"], rank=2))
    add(on("py_skip_str", ALL, "py_skip_str", "py_skip_quote_count", when=["py_skip_string_quote"], rank=3))
    add(on("py_skip_str", ALL, "py_skip_str", "py_skip_str_char", rank=90))
    add(on("py_skip_escape", ALL, "py_skip_str", "py_skip_str_char", rank=1))
    # Anything else refuses the call (inside one) or breaks the body (outside).
    in_call = ("py_name", "py_name_end", "py_args", "py_kw", "py_kw_end", "py_value", "py_colon", "py_after")
    for st in _states():
        n = st.name
        # (on every class no unguarded row of the state takes)
        taken = sorted({t for x in r if isinstance(x, Rule) and x.source == n and not x.guards and x.triggers.excluded is None
                        for t in x.triggers.named})
        if n in ("py_name", "py_name_end"):
            # Before its ``(`` a lone call opened no bracket: no call's end to skip to
            # (``then say so`` after a mentioned opener would swallow the real call
            # after it); the body is no call, as JSON's would be. A list's item ends at
            # its ``,`` and is refused alone (``a.b(c=1)``).
            add(on(n, but(*taken), "text", "py_abort", "reprocess", when=["py_single"], rank=98))
        if n in in_call:
            add(on(n, but(*taken), "py_skip", "py_bad", "reprocess", rank=99))
        elif n in ("py_start", "py_calls", "py_after_call"):
            add(on(n, but(*taken), "text", "py_abort", "reprocess", rank=99))
        add(on(n, [EOF_TRIGGER], "text", "abort_block_eof"))
        add(on(n, [OVERFLOW], n, "abort_oversized"))  # the block spills, the state stays
    return tuple(_rest_only(r))


def _rest_only(rules: list[Any]) -> list[Any]:
    """A row on every class (``ALL``) takes only the classes no unguarded row of its state
    before it takes (the ``bslash`` of a string, the ``ws`` of a list)."""
    out: list[Any] = []
    for x in rules:
        if isinstance(x, Rule) and x.triggers.excluded == ():
            before = sorted({t for y in rules if isinstance(y, Rule) and y.source == x.source and not y.guards
                             and y.rank < x.rank and y.triggers.excluded is None for t in y.triggers.named})
            x = Rule(x.source, but(*before), x.dest, x.actions, x.guards, x.rank)
        out.append(x)
    return out


@trait
@mypyc_attr(allow_interpreted_subclasses=True)
class PythonValueExtras(PythonValueModel):
    def py_tq_third(self, ch: str) -> bool:
        return self.pquotes == 2

    def py_named_opened(self, ch: str) -> bool:
        return self.pesc.startswith("{")


STATES = _states()
RULES: tuple[Any, ...] = _rules()
REGION = Region("python_value", STATES, RULES, PythonValueExtras,
                run_forms=(("py_hold", "py_hold_run"),), state_runs=(("py_str", "py_str_run"),))
