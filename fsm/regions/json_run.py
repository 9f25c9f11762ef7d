"""A JSON body's structure read in runs: the steps between its strings taken in one call.

Issue 27. Streamed, a Hermes call's JSON body is about forty structural steps (the
whitespace, colons and commas between keys and values, and each string's two quotes),
each one a step through the table that first tries the rows of ``j_bad`` (three per
state, all false while the body is JSON) before its own. :class:`JsonStructure` reads
such stretches itself: in the JSON body's states, whitespace, a colon after a key, a
comma in an object, a key's or a string value's opening quote, the string (its run
action, up to a quote or a backslash) and its closing quote, and the ``}`` of an object
that is not the body's outermost (the arguments of a Hermes call), calling the same
actions the rows would and going to the same states, for as long as the characters
are of those kinds; anything else (an opening bracket, the outermost close, a number,
a literal, a unicode escape, a comma in an array, a body found not to be JSON) is left
to the steps, where it stops.

Every row it stands in for is read from the compiled machine when it is built (its
guards, actions and destination, after the ``j_bad`` rows): a machine whose rows differ
gets no run. It takes a character only while the block stays within
``max_block_chars`` (the character that passes it is stepped, as the runner's runs
leave it), and never in a spilled block. The runner asks it before each of those
states' own rule (``CompiledRunner``); ``tests/test_whole_blocks.py`` and the
differential properties hold it to the reference runner.
"""

from __future__ import annotations

import re
from typing import Any

from callsieve.regions.engine import EngineModel

#: The states it reads in.
STATES = ("j_key_first", "j_key", "j_colon", "j_value", "j_next", "j_string")
_STRING_STOP = re.compile(r'["\\]')
#: What may follow a backslash for an escape of one character (``\\u`` is the steps').
_SIMPLE_ESCAPES = frozenset('"\\/bfnrt')


def _row_names(row: Any) -> tuple[tuple[tuple[str, bool], ...], tuple[str, ...], str]:
    guards, actions, dest = row
    return (tuple((str(getattr(g, "__name__", "")), bool(t)) for g, t in guards),
            tuple(str(getattr(a, "__name__", "")) for a in actions), dest)


def _first_rows(rows: Any, n: int) -> list[tuple[tuple[tuple[str, bool], ...], tuple[str, ...], str]] | None:
    """The first ``n`` rows after those that fire only on a body found not to be JSON."""
    named = [_row_names(r) for r in rows or ()]
    k = 0
    while k < len(named) and named[k][0][:1] == (("j_bad", True),):
        k += 1
    got = named[k : k + n]
    return got if len(got) == n else None


class JsonStructure:
    """The run of one composed machine's JSON body states (``None`` from :meth:`of`
    where its rows are not the ones this run stands in for)."""

    def __init__(self) -> None:
        #: the characters of the ``ws`` and ``nl`` classes (checked in :meth:`of`)
        self.ws_chars = " \t\r\n"

    @staticmethod
    def of(table: dict[str, dict[str, Any]], class_of: dict[str, str], bulk: dict[str, Any]) -> "JsonStructure | None":
        if any(s not in table for s in STATES):
            return None
        ws = ("ws", "nl")
        if {class_of.get(c) for c in " \t\r"} != {"ws"} or class_of.get("\n") != "nl" or class_of.get('"') != "quote" \
                or class_of.get(":") is not None or class_of.get(",") is not None:
            return None
        want: list[tuple[str, str, list[tuple[tuple[tuple[str, bool], ...], tuple[str, ...], str]]]] = []
        for s in STATES[:-1]:
            for t in ws:
                want.append((s, t, [((), ("j_ws",), s)]))
        want += [
            ("j_colon", "other", [((("j_is_colon", True),), ("j_ws",), "j_value")]),
            ("j_next", "other", [((("j_is_comma", True), ("j_in_object", True)), ("j_ws", "j_after_comma"), "j_key")]),
            ("j_key_first", "quote", [((), ("j_key_begin",), "j_string")]),
            ("j_key", "quote", [((), ("j_key_begin",), "j_string")]),
            ("j_value", "quote", [((), ("j_string_begin",), "j_string")]),
            ("j_string", "quote", [((("j_in_key", True),), ("j_string_end",), "j_colon"), ((), ("j_string_end",), "j_next")]),
            # A simple escape (backslash, then one of ``"\\/bfnrt``): the backslash held,
            # then the escaped character read, back in the string.
            ("j_string", "bslash", [((), ("j_hold_escape",), "j_escape")]),
            ("j_escape", "quote", [((), ("j_escape",), "j_string")]),
            ("j_escape", "bslash", [((), ("j_escape",), "j_string")]),
            ("j_escape", "other", [((("j_is_u", True),), ("j_unicode_begin",), "j_unicode"),
                                   ((("j_escape_char", True),), ("j_escape",), "j_string")]),
        ]
        if "j_escape" not in table or class_of.get("\\") != "bslash" \
                or any(class_of.get(c) is not None for c in _SIMPLE_ESCAPES if c not in '"\\'):
            return None
        for state, trigger, rows in want:
            if _first_rows(table[state].get(trigger), len(rows)) != rows:
                return None
        # A ``}`` in ``j_next`` closing an object that is not the body's outermost: past
        # the rows that end the body (the outermost's, one per place a body stands),
        # the row that closes it (``j_close``), back in ``j_next``.
        if class_of.get("}") != "rbrace":
            return None
        named = [_row_names(r) for r in table["j_next"].get("rbrace") or ()]
        k = 0
        while k < len(named) and named[k][0][:1] == (("j_bad", True),):
            k += 1
        while k < len(named) and named[k][0][:1] == (("j_outermost", True),):
            k += 1
        if named[k : k + 1] != [((("j_in_object", True),), ("j_close",), "j_next")]:
            return None
        rule = bulk.get("j_string")
        if rule is None or rule.loop_chars or set(rule.stop_chars) != set('"\\') \
                or getattr(rule.run, "__name__", "") != "j_str_run":
            return None
        return JsonStructure()

    def run(self, ctx: EngineModel, s: str, i: int) -> int:
        """Read from ``s[i]`` in a JSON body state while the characters are structure
        this run stands in for; the index where the steps take over."""
        b = ctx.block
        if b is None or b.spilled or ctx.redo or ctx.pushback:
            return i
        room = ctx.cfg.max_block_chars - b.raw_len  # characters the block may still take
        n = len(s)
        first = -1  # (where the string's quote or backslash is, found from ``i``)
        if ctx.state == "j_string" and n - i <= room:
            m = _STRING_STOP.search(s, i)
            if m is None:
                return ctx.j_str_take(s, i, n)  # (the whole rest is the string's: most chunks of one)
            first = m.start()
        if ctx.jbad:
            return i  # (the body is not JSON: the steps' rows for that come first)
        # Up to ``stop`` the block stays within its limit (the character there is the
        # steps'); an action that finds the body not JSON (``jbad``) ends the run after
        # its character, as the steps' rows for that come first from the next one.
        stop = n if n - i <= room else i + room
        k = i
        ws = self.ws_chars
        # Whitespace, colons and commas are held together, once their stretch ends
        # (before the next action, which may read the block's length: ``j_string_begin``).
        held = i
        while k < stop:
            c = s[k]
            state = ctx.state
            if state == "j_string":
                if c == '"':
                    dest = "j_colon" if ctx.jin_key else "j_next"  # (``j_in_key``, before the action)
                    if held < k:
                        ctx._hold(s[held:k])
                    ctx.j_string_end(c)
                    ctx.state = dest
                    k += 1
                    held = k
                    if ctx.jbad:
                        break
                    continue
                if c == "\\":
                    # A simple escape whose character is in the chunk: the two rows
                    # (``j_hold_escape``, then ``j_escape``) in turn, without stepping
                    # through ``j_escape``; a ``\\u`` escape, or one cut by the chunk's
                    # end, is the steps'.
                    if k + 2 > stop or s[k + 1] not in _SIMPLE_ESCAPES:
                        break
                    if held < k:
                        ctx._hold(s[held:k])
                    ctx.j_hold_escape(c)
                    ctx.j_escape(s[k + 1])
                    k += 2
                    held = k
                    if ctx.jbad:
                        break
                    continue
                if k == i and first >= 0:
                    j = first  # (already found above)
                else:
                    m = _STRING_STOP.search(s, k)
                    j = m.start() if m is not None else n
                if j > stop:
                    j = stop
                if held < k:
                    ctx._hold(s[held:k])
                k2 = ctx.j_str_take(s, k, j)
                held = k2
                if k2 <= k:
                    break  # (nothing taken: the steps)
                k = k2
                if ctx.jbad:
                    break
                continue
            if c in ws:
                pass  # (``j_ws``: held with its stretch)
            elif c == ":" and state == "j_colon":
                ctx.state = "j_value"
            elif c == "," and state == "j_next" and ctx.jframes and ctx.jframes[-1].kind == "{":
                ctx.j_after_comma(c)
                ctx.state = "j_key"
                if ctx.jbad:
                    k += 1
                    break
            elif c == '"' and (state == "j_key" or state == "j_key_first"):
                if held < k:
                    ctx._hold(s[held:k])
                ctx.j_key_begin(c)
                held = k + 1
                ctx.state = "j_string"
                if ctx.jbad:
                    k += 1
                    break
            elif c == "}" and state == "j_next" and len(ctx.jframes) > 1 and ctx.jframes[-1].kind == "{" \
                    and not ctx.j_nameless_call(c):
                # (not ``j_bad``: no ``jbad``, and not a call object that named no call;
                # not ``j_outermost``: so ``j_in_object`` closes it)
                if held < k:
                    ctx._hold(s[held:k])
                ctx.j_close(c)
                held = k + 1
                if ctx.jbad:
                    k += 1
                    break
            elif c == '"' and state == "j_value":
                if held < k:
                    ctx._hold(s[held:k])
                ctx.j_string_begin(c)
                held = k + 1
                ctx.state = "j_string"
                if ctx.jbad:
                    k += 1
                    break
            else:
                break
            k += 1
        if held < k:
            ctx._hold(s[held:k])
        return k
