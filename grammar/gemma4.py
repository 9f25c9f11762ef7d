"""Gemma 4: ``<|tool_call>call:NAME{…}<tool_call|>``, the arguments in Gemma's own object syntax.

Wire format (shared/reference/dialects-long-tail.md §4)::

    Checking both.<|tool_call>call:get_weather{city:<|"|>Paris<|"|>,days:3}<tool_call|><|tool_call>call:search{query:<|"|>café "best"<|"|>,filters:{open:true,tags:[<|"|>a<|"|>,<|"|>b<|"|>]}}<tool_call|><|tool_response>

Special tokens (``skip_special_tokens=False``; vLLM: ids 48/49): ``<|tool_call>`` opens a
call and ``<tool_call|>`` closes it (the bars placed asymmetrically). The name follows
``call:``; the arguments are Gemma's object syntax, not JSON, read by this dialect's own
value grammar (``GEMMA_CALL``, a region of states, as a user's dialect would bring one):

- keys are unquoted and end at ``:``; pairs are separated by ``,``; objects ``{…}`` and
  lists ``[…]`` nest;
- a string is ``<|"|>…<|"|>``, with no escaping inside (a ``"``, a ``<``, even a ``<|"|``
  that does not complete the delimiter, are text);
- a bare value is ``true``/``false``, an integer (digits), a float (it holds a ``.``),
  or else the string written.

They stream as canonical JSON (``json.dumps(arguments, ensure_ascii=False)``'s text).
Keys repeated or empty release that call alone, with a ``malformed_call`` Diagnostic;
markup that is no object makes the block malformed (released as text). After its calls
the model writes ``<|tool_response>`` (framing, in the ``raw`` of the text beside it).
Not read: vLLM's non-strict variants (``<turn|>`` for the close, a bare ``call:f{…}``,
``<call>f{…}``), and ``call:f(k: "v")`` seen through proxies. Gemma's reasoning
delimiters were not read for the reference: none is declared.
"""

from __future__ import annotations

import json
import math
import re
from typing import Any

import regex

from callsieve.grammar.api import Block, Body, Dialect, Marker, arguments_of
from callsieve.grammar.states import ALL, EOF_TRIGGER, EXIT, OVERFLOW, BodyHelpers, Region, StateDecl, but, on

OPEN = Marker(r"<\|tool_call>", ("<|tool_call>",), "<|tool_call>")
CLOSE = Marker(r"<tool_call\|>", ("<tool_call|>",), "<tool_call|>")
TOOL_RESPONSE = Marker(r"<\|tool_response>", ("<|tool_response>",), "<|tool_response>")

#: The string delimiter.
QUOTE = '<|"|>'
#: What stands between ``<|tool_call>`` and the arguments' ``{``.
_HEAD = re.compile(r"\s*call:(?P<name>[^\s{}<:]{1,128})\s*")
_HEAD_PARTIAL = regex.compile(r"\s{0,16}call:[^\s{}<:]{1,128}\s{0,16}")
_INT = re.compile(r"-?[0-9]{1,4000}")
#: The longest key read (a longer one releases the call).
MAX_KEY = 256


class GemmaArgsModel(BodyHelpers):
    """The guards and actions of Gemma's object syntax: a stack of open containers
    (``{`` or ``[`` and how many items each holds so far), the key, string delimiter or
    bare value being read."""

    gm_stack: list[list[Any]]  # [kind, count, keys]
    gm_text = ""  # the key or bare value read so far
    gm_tok = ""  # a string delimiter being matched (``<|"|`` so far)

    def gm_begin(self, ch: str) -> None:
        self.gm_stack = []
        self.gm_text = ""
        self.gm_tok = ""

    def gm_head_char(self, ch: str) -> None:
        self.body_hold(ch)
        self.gm_text += ch

    def gm_head_goes_on(self, ch: str) -> bool:
        """``ch`` keeps the text after ``<|tool_call>`` a possible ``call:NAME``
        (prose that mentions the token is released at once, not held to its end)."""
        return _HEAD_PARTIAL.fullmatch(self.gm_text + ch, partial=True) is not None

    def gm_head_ok(self, ch: str) -> bool:
        """The text before ``{`` is ``call:NAME``."""
        return _HEAD.fullmatch(self.gm_text) is not None and len(self.gm_text) <= 160

    def gm_head(self, ch: str) -> None:
        """``{`` after ``call:NAME``: the call begins, named, its arguments open."""
        m = _HEAD.fullmatch(self.gm_text)
        self.gm_text = ""
        self.body_call()
        if m is not None:
            self.body_name(m.group("name"))
        self.body_hold(ch)
        self._gm_push("{")

    def gm_done(self, ch: str) -> None:
        """The arguments' last ``}``: the call's markup ends."""
        self.body_end_call()

    # ---------------------------------------------------------------- guards
    def gm_is_colon(self, ch: str) -> bool:
        return ch == ":"

    def gm_is_comma(self, ch: str) -> bool:
        return ch == ","

    def gm_in_object(self, ch: str) -> bool:
        return bool(self.gm_stack) and self.gm_stack[-1][0] == "{"

    def gm_in_list(self, ch: str) -> bool:
        return bool(self.gm_stack) and self.gm_stack[-1][0] == "["

    def gm_outermost(self, ch: str) -> bool:
        return len(self.gm_stack) == 1

    def gm_empty(self, ch: str) -> bool:
        """The open container holds nothing yet (and no key is being read)."""
        return bool(self.gm_stack) and self.gm_stack[-1][1] == 0 and not self.gm_text.strip()

    def gm_delimiter_goes_on(self, ch: str) -> bool:
        """``ch`` continues the string delimiter ``<|"|>`` being matched."""
        tok = self.gm_tok + ch
        return QUOTE.startswith(tok) and len(tok) < len(QUOTE)

    def gm_delimiter_ends(self, ch: str) -> bool:
        return self.gm_tok + ch == QUOTE

    # --------------------------------------------------------------- helpers
    def _gm_value_begins(self) -> None:
        """A value begins in the open container: its separator, in a list."""
        top = self.gm_stack[-1]
        if top[0] == "[":
            if top[1]:
                self.body_args(", ")
            top[1] += 1

    def _gm_push(self, kind: str) -> None:
        if len(self.gm_stack) >= 200:
            self.body_fail("Gemma arguments nested deeper than 200 levels")
            return
        self.gm_stack.append([kind, 0, set()])
        self.body_args(kind)

    # --------------------------------------------------------------- actions
    def gm_skip(self, ch: str) -> None:
        self.body_hold(ch)

    def gm_key_char(self, ch: str) -> None:
        self.body_hold(ch)
        self.gm_text += ch

    def gm_key(self, ch: str) -> None:
        """``:`` ends a key."""
        self.body_hold(ch)
        key, self.gm_text = self.gm_text.strip(), ""
        top = self.gm_stack[-1]
        if not key or len(key) > MAX_KEY or key in top[2]:
            self.body_refuse(f"key {key[:40]!r} empty, too long or given twice")
            return
        top[2].add(key)
        self.body_args((", " if top[1] else "") + json.dumps(key, ensure_ascii=False) + ": ")
        top[1] += 1

    def gm_open_object(self, ch: str) -> None:
        self.body_hold(ch)
        self._gm_value_begins()
        self._gm_push("{")

    def gm_open_list(self, ch: str) -> None:
        self.body_hold(ch)
        self._gm_value_begins()
        self._gm_push("[")

    def gm_close(self, ch: str) -> None:
        """``}`` or ``]`` closes the open container (the rows check it is of that kind)."""
        self.body_hold(ch)
        self.gm_stack.pop()
        self.body_args(ch)

    def gm_quote_begin(self, ch: str) -> None:
        """A ``<`` where a value begins: a string's delimiter, if it goes on as one."""
        self.body_hold(ch)
        self.gm_tok = ch

    def gm_quote_char(self, ch: str) -> None:
        self.body_hold(ch)
        self.gm_tok += ch

    def gm_string_open(self, ch: str) -> None:
        """The opening delimiter is whole: the string begins."""
        self.body_hold(ch)
        self.gm_tok = ""
        self._gm_value_begins()
        self.body_args('"')

    def gm_string_char(self, ch: str) -> None:
        self.body_hold(ch)
        self.body_args(json.dumps(ch, ensure_ascii=False)[1:-1])

    def gm_string_run(self, s: str, i: int, j: int) -> int:
        """A run of string characters (none is a ``<``), at once."""
        j = min(j, i + self.run_budget())
        seg = s[i:j]
        self.body_hold(seg)
        self.body_args(json.dumps(seg, ensure_ascii=False)[1:-1])
        return j

    def gm_maybe_close(self, ch: str) -> None:
        """A ``<`` in a string: held until it is known to be the closing delimiter."""
        self.body_hold(ch)
        self.gm_tok = ch

    def gm_not_close(self, ch: str) -> None:
        """What was held is text of the string after all (``ch`` is read again)."""
        held, self.gm_tok = self.gm_tok, ""
        self.body_args(json.dumps(held, ensure_ascii=False)[1:-1])

    def gm_string_close(self, ch: str) -> None:
        self.body_hold(ch)
        self.gm_tok = ""
        self.body_args('"')

    def gm_bare_char(self, ch: str) -> None:
        self.body_hold(ch)
        self.gm_text += ch

    def gm_bare_end(self, ch: str) -> None:
        """A bare value ends (``ch`` is read again): typed as Gemma types it."""
        v, self.gm_text = self.gm_text.strip(), ""
        self._gm_value_begins()
        self.body_args(bare_value(v))

    def gm_bad_delimiter(self, ch: str) -> None:
        self.gm_tok = ""
        self.body_fail("a value begins with '<' that is no string delimiter <|\"|>")


def bare_value(v: str) -> str:
    """A bare value's canonical JSON: ``true``/``false``, an integer, a float (it holds a
    ``.``), else the string written."""
    if v in ("true", "false"):
        return v
    if _INT.fullmatch(v):
        return str(int(v))
    if "." in v:
        try:
            f = float(v)
        except ValueError:
            f = math.nan
        if math.isfinite(f):
            return json.dumps(f)
    return json.dumps(v, ensure_ascii=False)


_S = "gemma4."
HEAD, KEY, VALUE, QUOTE_OPEN, STRING, QUOTE_CLOSE, BARE, NEXT = (
    _S + n for n in ("head", "key", "value", "quote_open", "string", "quote_close", "bare", "next"))
_STATES = (
    StateDecl(HEAD, "call:NAME, up to the arguments' {", in_block=True, owner="gemma4"),
    StateDecl(KEY, "a key, up to : (or } in an empty object)", in_block=True, owner="gemma4"),
    StateDecl(VALUE, "a value begins: {, [, <|\"|> or a bare value", in_block=True, owner="gemma4"),
    StateDecl(QUOTE_OPEN, "the string delimiter <|\"|> being read", in_block=True, owner="gemma4"),
    StateDecl(STRING, "a string: no escapes, up to <|\"|>", in_block=True, owner="gemma4"),
    StateDecl(QUOTE_CLOSE, "a < in a string: the closing <|\"|>, or text", in_block=True, owner="gemma4"),
    StateDecl(BARE, "a bare value: true, false, a number, or a word", in_block=True, owner="gemma4"),
    StateDecl(NEXT, "after a value: , or the container's close", in_block=True, owner="gemma4"),
)
_WS = ["ws", "nl"]
_ENDS_BARE = ("rbrace", "rbrack", "lt", "lbrace", "lbrack")
_RULES = (
    *on(HEAD, ["lbrace"], KEY, "gm_head", when=["gm_head_ok"], rank=1),
    *on(HEAD, but("lbrace"), HEAD, "gm_head_char", when=["gm_head_goes_on"], rank=2),
    *on(HEAD, ALL, "text", "abort_block", "reprocess", rank=90),
    # keys
    *on(KEY, ["rbrace"], EXIT, "gm_close", "gm_done", when=["gm_empty", "gm_outermost"], rank=1),
    *on(KEY, ["rbrace"], NEXT, "gm_close", when=["gm_empty"], rank=2),
    *on(KEY, but("rbrace", "lbrace", "lbrack", "rbrack", "lt"), VALUE, "gm_key", when=["gm_is_colon"], rank=3),
    *on(KEY, but("rbrace", "lbrace", "lbrack", "rbrack", "lt"), KEY, "gm_key_char", rank=4),
    *on(KEY, ["rbrace", "lbrace", "lbrack", "rbrack", "lt"], "text", "abort_block", "reprocess", rank=90),
    # a value
    *on(VALUE, _WS, VALUE, "gm_skip", rank=1),
    *on(VALUE, ["lbrace"], KEY, "gm_open_object", rank=2),
    *on(VALUE, ["lbrack"], VALUE, "gm_open_list", rank=3),
    *on(VALUE, ["rbrack"], NEXT, "gm_close", when=["gm_in_list", "gm_empty"], rank=4),
    *on(VALUE, ["lt"], QUOTE_OPEN, "gm_quote_begin", rank=5),
    *on(VALUE, but(*_WS, *_ENDS_BARE), "text", "abort_block", "reprocess", when=["gm_is_comma"], rank=6),
    *on(VALUE, but(*_WS, *_ENDS_BARE), BARE, "gm_bare_char", rank=7),
    *on(VALUE, ["rbrace", "rbrack"], "text", "abort_block", "reprocess", rank=90),
    # the string delimiter
    *on(QUOTE_OPEN, ALL, STRING, "gm_string_open", when=["gm_delimiter_ends"], rank=1),
    *on(QUOTE_OPEN, ALL, QUOTE_OPEN, "gm_quote_char", when=["gm_delimiter_goes_on"], rank=2),
    *on(QUOTE_OPEN, ALL, "text", "gm_bad_delimiter", "abort_block", "reprocess", rank=90),
    # a string
    *on(STRING, ["lt"], QUOTE_CLOSE, "gm_maybe_close", rank=1),
    *on(STRING, but("lt"), STRING, "gm_string_char", rank=2),
    *on(QUOTE_CLOSE, ALL, NEXT, "gm_string_close", when=["gm_delimiter_ends"], rank=1),
    *on(QUOTE_CLOSE, ALL, QUOTE_CLOSE, "gm_quote_char", when=["gm_delimiter_goes_on"], rank=2),
    *on(QUOTE_CLOSE, ALL, STRING, "gm_not_close", "reprocess", rank=90),
    # a bare value: up to , } ] (spaces inside it are kept, around it dropped)
    *on(BARE, but(*_ENDS_BARE), NEXT, "gm_bare_end", "reprocess", when=["gm_is_comma"], rank=1),
    *on(BARE, ["rbrace", "rbrack"], NEXT, "gm_bare_end", "reprocess", rank=2),
    *on(BARE, but(*_ENDS_BARE), BARE, "gm_bare_char", rank=3),
    *on(BARE, ["lt", "lbrace", "lbrack"], "text", "abort_block", "reprocess", rank=90),
    # after a value
    *on(NEXT, _WS, NEXT, "gm_skip", rank=1),
    *on(NEXT, but(*_WS, "rbrace", "rbrack"), KEY, "gm_skip", when=["gm_is_comma", "gm_in_object"], rank=2),
    *on(NEXT, but(*_WS, "rbrace", "rbrack"), VALUE, "gm_skip", when=["gm_is_comma", "gm_in_list"], rank=3),
    *on(NEXT, ["rbrace"], EXIT, "gm_close", "gm_done", when=["gm_in_object", "gm_outermost"], rank=4),
    *on(NEXT, ["rbrace"], NEXT, "gm_close", when=["gm_in_object"], rank=5),
    *on(NEXT, ["rbrack"], NEXT, "gm_close", when=["gm_in_list"], rank=6),
    *on(NEXT, but(*_WS), "text", "abort_block", "reprocess", rank=90),
    *[r for s in (HEAD, KEY, VALUE, QUOTE_OPEN, STRING, QUOTE_CLOSE, BARE, NEXT)
      for r in (*on(s, [EOF_TRIGGER], "text", "abort_block_eof"), *on(s, [OVERFLOW], s, "abort_oversized"))],
)
REGION = Region("gemma4", _STATES, _RULES, GemmaArgsModel, run_forms=(("gm_string_char", "gm_string_run"),))
#: A whole call, ``call:NAME{…}``: the name, and its arguments in Gemma's object syntax.
GEMMA_CALL = Body(region=REGION, entry=HEAD, begin="gm_begin", reads="call", label="call:NAME{k:v, …}")

BLOCK = Block(OPEN, GEMMA_CALL, CLOSE)


def gemma_value(v: object) -> str:
    """A JSON value in Gemma's syntax (what its template writes)."""
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, str):
        return QUOTE + v + QUOTE
    if isinstance(v, dict):
        return "{" + ",".join(f"{k}:{gemma_value(x)}" for k, x in v.items()) + "}"
    if isinstance(v, list):
        return "[" + ",".join(gemma_value(x) for x in v) + "]"
    return json.dumps(v)


def render(calls: list[tuple[str, list[tuple[str, str, bool]]]], variant: int = 0) -> str:
    """One call block per call, back to back."""
    return "".join(f"<|tool_call>call:{n}{gemma_value(arguments_of(p))}<tool_call|>" for n, p in calls)


def wrap_text(text: str, variant: int = 0) -> str:
    """Visible text, after the ``<|tool_response>`` the model writes after its calls
    (odd variants)."""
    return "<|tool_response>" + text if variant % 2 else text


DIALECT = Dialect(
    name="gemma4",
    title="Gemma 4 (<|tool_call>call:NAME{k:<|\"|>v<|\"|>}<tool_call|>)",
    blocks=(BLOCK,),
    regions=(REGION,),
    framing=(TOOL_RESPONSE,),
    sample="Checking." + render([("get_weather", [("city", "Paris", False), ("days", "3", True)])]) + "<|tool_response>",
    render=render,
    wrap_text=wrap_text,
)
