"""A JSON value body (DSML ``string="false"``): strings and nesting are tracked, so a
value close inside a JSON string, or before the value's brackets balance, is data.

The text is decoded as strict JSON when the parameter ends (``commit_value``); text
that is not JSON stays a string, with a ``type_mismatch`` Diagnostic. The value close
is listened for only at the top level (``json_at_top``); after a close that turns out
to be data, the value reopens here (``reopen_json``).

State runs (issue 12, item 5: deeply nested values were stepped a bracket at a time):
``json_value`` takes everything up to its next quote, or the next start character at
the top level, whole, its depth moved by the brackets it counts; ``json_string`` takes
characters and escape pairs up to its closing quote.
"""

from __future__ import annotations

import re

from callsieve.native import mypyc_attr, trait
from callsieve.grammar.states import ALL, EOF_TRIGGER, OVERFLOW, START, Region, StateDecl, but, on
from callsieve.regions.value import ValueModel


@trait
@mypyc_attr(allow_interpreted_subclasses=True)
class JsonModel(ValueModel):
    def json_open(self, ch: str) -> None:
        self.value_char(ch)
        self._block().json_depth += 1

    def json_close(self, ch: str) -> None:
        self.value_char(ch)
        self._block().json_depth -= 1

    def json_at_top(self, ch: str) -> bool:
        return self.block is not None and self.block.json_depth <= 0

    def json_value_run(self, s: str, i: int) -> int:
        """The state run of ``json_value``: ``s[i:j]`` up to the next quote, or the next
        start character where the depth is back at the top (``json_at_top``: it may
        begin the value's close), read as stepping would (every character a value
        character; ``[{`` one deeper, ``]}`` one shallower)."""
        b = self._block()
        starts = self.matcher("json_value").start_chars
        stop = _STOPS.get(starts)
        if stop is None:
            stop = _STOPS[starts] = re.compile('["' + re.escape(starts) + "]")
        depth = b.json_depth
        n = len(s)
        k = i
        while True:
            m = stop.search(s, k)
            j = m.start() if m is not None else n
            seg = s[k:j]
            depth += seg.count("[") + seg.count("{") - seg.count("]") - seg.count("}")
            if j == n or s[j] == '"' or depth <= 0:
                break
            k = j + 1  # a start character inside brackets is data: read on
        if j > i:
            j = self.value_run(s, i, j)  # (cut at the block's limit)
            seg = s[i:j]
            b.json_depth += seg.count("[") + seg.count("{") - seg.count("]") - seg.count("}")
        return j

    def json_string_run(self, s: str, i: int) -> int:
        """The state run of ``json_string``: characters and escape pairs up to the
        closing quote (a backslash at the chunk's end is stepped)."""
        m = _STRING_BODY.match(s, i)  # (always matches: possibly empty)
        j = m.end() if m is not None else i
        return self.value_run(s, i, j) if j > i else i

    def reopen_json(self, ch: str) -> bool:
        b = self.block
        return b is not None and b.param is not None and b.param.json


#: start characters → the characters that may end a ``json_value`` run
_STOPS: dict[str, "re.Pattern[str]"] = {}
_STRING_BODY = re.compile(r'(?:[^"\\]|\\[\s\S])*')

STATES = (
    StateDecl("json_value", "a JSON value outside strings", in_block=True, owner="json", sink="value_char"),
    StateDecl("json_string", "inside a JSON string: markup is data", in_block=True, owner="json"),
    StateDecl("json_escape", "after a backslash in a JSON string", in_block=True, owner="json"),
)

RULES = (
    *on("json_value", ["quote"], "json_string", "value_char"),
    *on("json_value", ["lbrace", "lbrack"], "json_value", "json_open"),
    *on("json_value", ["rbrace", "rbrack"], "json_value", "json_close"),
    *on("json_value", START, "maybe_tag", "tag_begin", when=["json_at_top"], rank=10),
    *on("json_value", but("quote", "lbrace", "lbrack", "rbrace", "rbrack"), "json_value", "value_char", rank=90),
    *on("json_string", ["bslash"], "json_escape", "value_char"),
    *on("json_string", ["quote"], "json_value", "value_char"),
    *on("json_string", but("bslash", "quote"), "json_string", "value_char"),
    *on("json_escape", ALL, "json_string", "value_char"),
    *[r for s in ("json_value", "json_string", "json_escape") for r in (
        *on(s, [EOF_TRIGGER], "text", "abort_block_eof"),
        *on(s, [OVERFLOW], s, "abort_oversized"),  # the block spills, the state stays
    )],
    # Reopened after a close that what followed did not confirm.
    *on("after_close", but("ws", "nl", START), "json_value", "reopen_value", "reprocess", when=["reopen_json"], rank=10),
    *on("maybe_tag", ALL, "json_value", "reopen_value", "reprocess", when=["from:after_close", "reopen_json"], rank=6000),
)

REGION = Region("json", STATES, RULES, JsonModel,
                state_runs=(("json_value", "json_value_run"), ("json_string", "json_string_run")))
