"""Blocks decided whole: a block whose text, up to its close, is in the chunk and is
plainly simple is read in one step instead of one character, tag and value at a time.

Issue 27. Fed a whole response, most of the sieve's time on markup-dense input went to
the steps of every tag (eight per Qwen3-Coder call), every JSON token (thirty per
Hermes call) and the actions behind them. Where a block has just opened (its first
position: the runner enters here, from one place, :class:`callsieve.compiler.CompiledRunner`)
and the rest of it is in the chunk, a reader decides it at C speed:

* a JSON call body (``JsonCall``, Hermes): one pass of ``json``'s C scanner, then the
  block's close by its position's matcher;
* an XML-family block (``<function=…><parameter=…>…</parameter></function>``, and every
  dialect built the same way: MiniMax, XML, DSML's raw values): each tag found and
  decided by the matcher of the state stepping would hold it in
  (``Matcher.tag_end``, the runner's own), each value read up to the first character
  where a marker could begin.

What each tag does is read from the compiled machine itself: the row a complete tag of
that key fires (``steps_rest["maybe_tag"]``), its actions by name and its destination.
A reader takes a block only when every tag's row is one it knows (``open_call``,
``open_param``, ``hold_close``, ``commit_value`` + the next, ``close_call``,
``close_block``), no tolerance is involved, no value holds a character a marker could
begin with, nothing is typed by a schema (tools: only known tools, and for XML only
string parameters), no id is read from the wire, and the block began outside
reasoning. Anything else, at any point, returns the index it was given, before it has
changed anything: the steps then read the block as always. What a reader does decide,
it emits exactly as the steps would (the same events, in the same order, through the
same buffers: ``flush``, ``_emit``, ``_saw``), and leaves the registers that are read
later as the steps leave them. ``tests/test_whole_blocks.py`` and the differential
properties hold it to the reference runner.
"""

from __future__ import annotations

import json
import re
from typing import Any, Callable

from callsieve.events import Diagnostic, ToolCall, ToolCallDelta, ToolCallStart
from callsieve.grammar.api import JsonCall, Raw
from callsieve.grammar.states import OTHER
from callsieve.matcher import COMPLETE, Matcher
from callsieve.regions import dumps, quote
from callsieve.regions.block import Call
from callsieve.regions.capture import CaptureRun
from callsieve.regions.engine import EngineModel
from callsieve.regions.json_body import CALL, MAX_DEPTH, SKIP
from callsieve.regions.json_run import JsonStructure
from callsieve.regions.value import chosen
from callsieve.schema import is_string_only

#: Whitespace between markers (the positions' loop: ``ws`` and ``nl``; JSON's own).
WS = " \t\r\n"
_WS_RUN = re.compile(r"[ \t\r\n]*")
#: A JSON ``\u`` escape of half a surrogate pair: a lone one is read as U+FFFD with a
#: Diagnostic by the JSON body, which ``json`` does not do (a pair is read alike, but is
#: rare enough to be left to the steps too).
_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F]")

#: What a complete tag does, by the actions of the row it fires (``_decide``).
OPEN_BLOCK = 1
OPEN_CALL = 2
OPEN_PARAM = 3
HOLD_CLOSE = 4
CLOSE_CALL = 5
CLOSE_BLOCK = 6
_CODES: dict[tuple[str, ...], int] = {("open_block",): OPEN_BLOCK, ("open_call",): OPEN_CALL, ("open_param",): OPEN_PARAM,
          ("hold_close",): HOLD_CLOSE, ("close_call",): CLOSE_CALL, ("close_block",): CLOSE_BLOCK}
#: The action that confirms a held value close before the next marker's own.
COMMIT = "commit_value"
#: A tag's decision: (code, the row confirms a held value close first, destination,
#: the name it carries, what else its code needs), or None: the steps decide it.
Decision = tuple[int, bool, str, str, Any]
#: Decisions kept per context before the memo is cleared (tags carry names).
_MEMO_LIMIT = 4096
#: The decision "not plain: the steps decide" (memoised as any other; None: not asked yet).
_NO: Decision = (0, False, "", "", None)
_NONE: dict[str, Decision] = {}


class _Refused(ValueError):
    """What the JSON scanner read is JSON the body would not read the same way."""


def _pairs(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    d = dict(pairs)
    if len(d) != len(pairs):
        raise _Refused("duplicate key")  # (the body makes its block malformed)
    return d


def _finite(text: str) -> float:
    v = float(text)
    if v != v or v in (float("inf"), float("-inf")):
        raise _Refused("not finite")  # (the body makes its block malformed)
    return v


def _constant(text: str) -> Any:
    raise _Refused("NaN or Infinity")  # (not JSON: the body makes its block malformed)


_DECODER = json.JSONDecoder(object_pairs_hook=_pairs, parse_float=_finite, parse_constant=_constant, strict=True)
_scan_json: Callable[[str, int], tuple[Any, int]] = getattr(_DECODER, "scan_once")


def _tag_pattern(starts: str, ends: str) -> str:
    """A tag as the steps would hold it: a start character, then up to the first end
    character (none of either inside: grammar rule 2, and a tag ends at the first end
    character where it is complete)."""
    return f"[{re.escape(starts)}][^{re.escape(starts + ends)}]*[{re.escape(ends)}]"


class _XmlPlan:
    """How one XML-family block is read whole: its text cut at C speed into tokens, each
    a tag and what stands before it: whitespace between markers (``position``), or a
    value, up to the first character a marker may begin with, its close, whitespace and
    the marker after it (``value``)."""

    __slots__ = ("position", "value")

    def __init__(self, position: Any, value: Any) -> None:
        self.position = position
        self.value = value


class WholeBlocks:
    """The whole-block readers of one composed machine (shared by its sieves).

    The runner tries :meth:`read_text` where the text state's scan stopped at one of
    ``opener_starts`` (a block opener may begin there), and :meth:`read` in ``entries``
    (a block's first position, or the JSON body's start: the opener was stepped). Each
    returns the index after the block it decided, or the index it was given. ``taken``
    counts the blocks decided whole (the tests read it)."""

    def __init__(self, machine: Any, steps_rest: dict[str, dict[str, Any]], class_of: dict[str, str],
                 bulk: dict[str, Any], table: dict[str, dict[str, Any]] | None = None) -> None:
        #: The run of the JSON body's structure (``callsieve.regions.json_run``), where
        #: the machine's rows are the ones it stands in for (built here: once per machine).
        self.json_run: JsonStructure | None = JsonStructure.of(table, class_of, bulk) if table is not None else None
        #: The run of a capture's characters (``callsieve.regions.capture``), likewise.
        self.capture_run: CaptureRun | None = CaptureRun.of(table, class_of) if table is not None else None
        self._tag_rows: dict[str, Any] = steps_rest.get("maybe_tag", {})
        self._class_of = class_of
        matchers: dict[str, Matcher] = machine.matchers
        scoped: dict[str, dict[str, Matcher]] = machine.scoped
        self._matchers = matchers
        self._scoped_of = scoped
        #: states whose loop is the whitespace between markers, and nothing else
        ws_states = frozenset(s for s, r in bulk.items() if r.loop_chars and set(r.loop_chars) == set(WS))
        in_param = bulk.get("in_param")
        value_stops = in_param.stop_chars if in_param is not None and not in_param.loop_chars else ""
        #: a block's first position → its plan
        self._xml: dict[str, _XmlPlan] = {}
        #: a JSON call body's leaf → the position after it (where only the block close
        #: may stand), and the tag pattern there
        self._json_after: dict[Any, tuple[str, Any]] = {}
        entries: list[str] = []
        for layout in machine.layouts:
            for opener in layout.leaves:
                spec = opener.spec
                if opener.kind != "block_open" or spec.block.tolerance:
                    continue
                first = layout.after.get(opener.id)
                if first is None:
                    continue
                if all(x.kind == "call_open" for x in first.follow) and first.name in ws_states:
                    ms = [matchers.get(p.name) for p in layout.positions if p.spec is spec]
                    for lf in layout.leaves:
                        if lf.spec is spec and lf.kind == "param_open":
                            for vs in layout.values.get(lf.id, ()):
                                ms += [scoped.get("in_param", {}).get(vs.name), scoped.get("after_close", {}).get(vs.name)]
                    if in_param is None or in_param.loop_chars or any(m is None or not m.end_chars for m in ms):
                        continue
                    starts = "".join(sorted({c for m in ms if m is not None for c in m.start_chars}))
                    ends = "".join(sorted({c for m in ms if m is not None for c in m.end_chars}))
                    tag = _tag_pattern(starts, ends)
                    ws = "[ \\t\\r\\n]*"
                    self._xml[first.name] = _XmlPlan(re.compile(f"{ws}({tag})").match,
                                                     re.compile(f"([^{re.escape(starts + value_stops)}]*)({tag}){ws}({tag})").match)
                    entries.append(first.name)
                for lf in [x for x in first.follow if x.kind == "json_call"] if len(first.follow) == 1 else []:
                    after = layout.after.get(lf.id)
                    m = matchers.get(after.name) if after is not None else None
                    if (isinstance(lf.body, JsonCall) and not lf.body.keyed and not lf.body.id and after is not None
                            and m is not None and m.end_chars and after.name in ws_states
                            and [x.kind for x in after.follow] == ["block_close"]):
                        self._json_after[lf] = (after.name, re.compile(_tag_pattern(m.start_chars, m.end_chars)).match)
                        entries.append("j_start")
        self.entries: tuple[str, ...] = tuple(dict.fromkeys(entries))
        text = matchers.get("text")
        #: where the text state's scan stops at one of these, a block opener may begin
        self.opener_starts = text.start_chars if text is not None and text.end_chars and (self._xml or self._json_after) else ""
        self._opener_tag: Any = re.compile(_tag_pattern(text.start_chars, text.end_chars)).match if self.opener_starts and text else None
        self._memo: dict[str, dict[Matcher, dict[str, Decision]]] = {}
        self.taken = 0

    # ------------------------------------------------------------ decisions
    def _memos(self, home: str) -> dict[Matcher, dict[str, Decision]]:
        """The decisions taken in blocks begun in ``home``, per context (matcher)."""
        got = self._memo.get(home)
        if got is None:
            got = self._memo[home] = {}
        return got

    def _decided(self, memos: dict[Matcher, dict[str, Decision]], m: Matcher, tag: str, home: str) -> Decision:
        """``_decide``, through the memo (the same few tags come again and again)."""
        memo = memos.get(m)
        if memo is None:
            memo = memos[m] = {}
        elif len(memo) >= _MEMO_LIMIT:
            memo.clear()
        d = memo[tag] = self._decide(m, tag, home) or _NO
        return d

    def _decide(self, m: Matcher, tag: str, home: str) -> Decision | None:
        """What the steps do with ``tag`` held in ``m``'s context, in a block begun in
        ``home``: the tag is decided at its first end character (``Matcher.tag_end``:
        the prefixes ending with one are asked in turn, the first complete one is the
        marker), classified, its anchor (none here) and tolerance (none) checked
        (``hit_key``, ``_take_tag``), and the row of its key fires (``_resolve``)."""
        ends = m.end_chars
        if (tag[0] not in m.start_chars or tag[0] in m.one_chars or m.word_starts or not ends or tag[-1] not in ends
                or any(c in ends for c in tag[1:-1])):
            return None
        kind, hit = m.classify(tag)
        if kind != COMPLETE or hit is None:
            return None
        entry = hit.entry
        if entry.codes or entry.anchor:
            return None
        data = entry.data
        specs = getattr(data, "values", ()) or ()
        spec = chosen(specs, hit.fields) if specs else None
        row = self._resolve(entry.key, tag[-1], home, spec.name if spec is not None and len(specs) > 1 else "")
        if row is None:
            return None
        acts, dest = row
        commit = acts[:1] == (COMMIT,)
        code = _CODES.get(acts[1:] if commit else acts, 0)
        name = hit.fields.get("name", "")
        if code == OPEN_BLOCK:
            leaf = getattr(data, "leaf", None)
            if leaf is None:
                return None
            return (code, commit, dest, leaf.spec.dialect.name, entry.enter)
        if code == OPEN_CALL:
            decl = getattr(getattr(data, "leaf", None), "call", None)
            if not name or getattr(decl, "ids", "") == "wire":
                return None
            return (code, commit, dest, name, tuple(getattr(decl, "wrapped", ())))
        if code == OPEN_PARAM:
            body = spec.body if spec is not None else None
            if not name or not isinstance(body, Raw) or body.style.json_when_valid or dest != "in_param" or spec is None:
                return None
            pm = self._scoped("in_param", spec.name)
            am = self._scoped("after_close", spec.name)
            if pm is None or am is None:
                return None
            return (code, commit, dest, name, (spec.name, pm, am, body.style.strip_newlines, body.style.unescape_entities))
        if code == HOLD_CLOSE and dest != "after_close":
            return None
        if code in (HOLD_CLOSE, CLOSE_CALL, CLOSE_BLOCK):
            return (code, commit, dest, "", None)
        return None

    def _scoped(self, state: str, scope: str) -> Matcher | None:
        return self._scoped_of.get(state, {}).get(scope)

    def _resolve(self, key: str, ch: str, home: str, case: str) -> tuple[tuple[str, ...], str] | None:
        """The row a complete tag of ``key`` ending in ``ch`` fires (what ``_step``
        would choose after the held tag's loop failed), where every guard before it is
        one this reader can decide: where the block began (``home:``) and which value
        body a parameter open chose (``case:``)."""
        index = self._tag_rows.get(self._class_of.get(ch, OTHER))
        by_key = getattr(index, "by_key", None)
        if by_key is None:
            return None
        rows = by_key.get(key)
        if not rows:
            return None
        for guards, actions, dest in rows:
            passes = True
            for g, target in guards:
                gname = str(getattr(g, "__name__", ""))
                if gname.startswith("home:"):
                    ok = gname[5:] == home
                elif gname.startswith("case:"):
                    ok = gname[5:] == case
                else:
                    return None  # a guard only the steps can decide
                if ok != target:
                    passes = False
                    break
            if passes:
                return tuple(str(getattr(a, "__name__", "")) for a in actions), dest
        return None

    # --------------------------------------------------------------- entries
    @staticmethod
    def _plain(ctx: EngineModel) -> bool:
        """Nothing held or pending that a block's steps would read or change."""
        return not (ctx.pushback or ctx.redo or ctx.tag or ctx.notes)

    def read_text(self, ctx: EngineModel, s: str, i: int) -> int:
        """At ``s[i]``, where the text state's scan stopped: a block opener, and the
        whole block after it, decided at once (``ctx.pos`` is ``s[i]``'s offset)."""
        if ctx.block is not None or not self._plain(ctx) or self._opener_tag is None:
            return i
        t = self._opener_tag(s, i)
        if t is None:
            return i
        tag = t.group()
        m = self._matchers["text"]
        home = ctx.state
        memos = self._memos(home)
        d = memos.get(m, _NONE).get(tag)
        if d is None:
            d = self._decided(memos, m, tag, home)
        if d[0] != OPEN_BLOCK:
            return i
        e = t.end()
        plan = self._xml.get(d[2])
        if plan is not None:
            return self._xml_block(ctx, plan, s, e, d[2], home, tag, d[3], ctx.pos, i)
        if d[2] == "j_start":
            after = self._json_after.get(d[4])
            if after is not None:
                return self._json_block(ctx, d[4].body, after, s, e, home, tag, d[3], ctx.pos, i)
        return i

    def read(self, ctx: EngineModel, s: str, i: int) -> int:
        """In a block's first state (its opener was stepped): the rest of the block,
        decided at once."""
        b = ctx.block
        if (len(s) - i < 24 or b is None or b.calls or b.call is not None or b.held_back or b.tolerance or b.by_body or b.tolerated
                or b.spilled or b.rest or b.malformed_reason or not self._plain(ctx) or ctx.home_is_reasoning()):
            return i
        state = ctx.state
        if state == "j_start":
            after = self._json_after.get(ctx.jleaf)
            shape = ctx.jshape
            if after is None or not isinstance(shape, JsonCall) or ctx.jframes or ctx.jrole != CALL:
                return i
            return self._json_block(ctx, shape, after, s, i, ctx.home, "", b.spec.dialect.name, b.start, i)
        plan = self._xml.get(state)
        if plan is None:
            return i
        return self._xml_block(ctx, plan, s, i, state, ctx.home, "", b.spec.dialect.name, b.start, i)

    # ----------------------------------------------------------------- JSON
    def _json_block(self, ctx: EngineModel, shape: JsonCall, after: tuple[str, Any], s: str, i: int, home: str,
                    opener: str, dialect: str, start: int, at: int) -> int:
        """A JSON call body from ``s[i]`` (whitespace, then the object: ``json``'s C
        scanner), whitespace, the block's close. ``opener``: the opener's text when the
        block is not open yet (it opens here); ``at``: what to return if not decided."""
        n = len(s)
        j = _WS_RUN.match(s, i).end()  # type: ignore[union-attr]
        if j >= n or s[j] != "{":
            return at
        try:
            obj, end = _scan_json(s, j)
        except (StopIteration, ValueError, RecursionError):
            return at
        body = s[j:end]
        if (not isinstance(obj, dict) or body.count("{") + body.count("[") >= MAX_DEPTH
                or ("\\u" in body and _SURROGATE_ESCAPE.search(body) is not None)):
            return at
        name: Any = None
        args: Any = None
        for key, value in obj.items():
            if key in shape.name:
                if name is not None:
                    return at
                name = value
            elif key in shape.arguments:
                if args is not None:
                    return at
                args = value
        if not isinstance(name, str) or not name or len(name) > 256:
            return at
        if args is None:
            args = {}
        elif not isinstance(args, dict):
            return at  # (a string is decoded once, with a Diagnostic; anything else is malformed)
        # after the body: whitespace, then the block's close
        k = _WS_RUN.match(s, end).end()  # type: ignore[union-attr]
        state, tag_at = after
        t = tag_at(s, k)
        if t is None:
            return at
        tag = t.group()
        m = self._matchers[state]
        memos = self._memos(home)
        d = memos.get(m, _NONE).get(tag)
        if d is None:
            d = self._decided(memos, m, tag, home)
        if d[0] != CLOSE_BLOCK or d[1]:
            return at
        e: int = t.end()
        tools = ctx.cfg.tools
        problems: list[str] | None = None
        if tools is not None:
            if name not in tools:
                return at
            probe = Call(name, None, "", True, 0, args=args)
            ctx._check_types(probe)
            problems = probe.problems
        if not self._fits(ctx, opener, i, e):
            return at
        # Decided: what the steps would do, from the opener (or the body) on.
        self._emit(ctx, [(name, args, dumps(args), -1)], problems, opener, dialect, s, i, e, start, home, d[2])
        ctx.jleaf = None
        ctx.jrole = SKIP
        ctx.origin = state
        return e

    # ------------------------------------------------------------------ XML
    def _xml_block(self, ctx: EngineModel, plan: _XmlPlan, s: str, i: int, state: str, home: str, opener: str,
                   dialect: str, start: int, at: int) -> int:
        """An XML-family block from ``s[i]`` in its position ``state``: each token the
        text before a tag and the tag, decided in the context the steps would hold it
        in (a position's matcher; in a value, the value state's; after a value's close,
        ``after_close``'s), up to the block's close."""
        cfg = ctx.cfg
        tools = cfg.tools
        matchers = self._matchers
        b = ctx.block
        base = (b.raw_len if b is not None else len(opener)) - i  # block-raw offset of s[0]
        ptok = plan.position
        vtok = plan.value
        memos = self._memos(home)
        calls: list[tuple[str, dict[str, Any], str, int]] = []
        name = ""
        args: dict[str, Any] | None = None
        pieces: list[str] = []
        schema_of: dict[str, Any] | None = None
        wrapped: tuple[str, ...] = ()
        scope = ""
        origin = state
        e = i
        d: Decision | None = None
        while True:
            if d is None:
                # a position: whitespace, then a marker
                t = ptok(s, e)
                if t is None:
                    return at
                tag = t.group(1)
                m = matchers.get(state)
                if m is None:
                    return at
                d = memos.get(m, _NONE).get(tag)
                if d is None:
                    d = self._decided(memos, m, tag, home)
                if not d[0] or d[1]:
                    return at
                origin = state
                e = t.end()
            code = d[0]
            if code == OPEN_CALL:
                if args is not None:
                    return at  # (a call's close left out: a tolerance)
                name = d[3]
                if tools is not None:
                    if name not in tools:
                        return at
                    schema_of = tools[name]
                wrapped = d[4]
                args = {}
                pieces = []
            elif code == CLOSE_CALL:
                if args is None:
                    return at
                calls.append((name, args, "{" + ", ".join(pieces) + "}", base + e))
                args = None
            elif code == CLOSE_BLOCK:
                if args is not None or not calls:
                    return at
                break
            elif code == OPEN_PARAM:
                key = d[3]
                if args is None or key in args:
                    return at
                spec_name, pm, am, strip, unescape = d[4]
                if schema_of is not None:
                    schema = schema_of.get(key)
                    if (schema is not None and not is_string_only(schema)) or (
                            key in wrapped and not args and not cfg.strict and key not in schema_of):
                        return at  # typed by the schema, or a wrapper: the steps decide
                # the value, up to its close; after the close, whitespace, then a
                # marker that confirms it
                t = vtok(s, e)
                if t is None:
                    return at
                value, tag, tag2 = t.group(1, 2, 3)
                if unescape and "&" in value:
                    return at
                d2 = memos.get(pm, _NONE).get(tag)
                if d2 is None:
                    d2 = self._decided(memos, pm, tag, home)
                if d2[0] != HOLD_CLOSE or d2[1]:
                    return at
                tag = tag2
                d = memos.get(am, _NONE).get(tag)
                if d is None:
                    d = self._decided(memos, am, tag, home)
                if not d[1] or d[0] not in (OPEN_PARAM, CLOSE_CALL):
                    return at
                if strip:
                    if value[:1] == "\n":
                        value = value[1:]
                    if value[-1:] == "\n":
                        value = value[:-1]
                pieces.append(quote(key) + ": " + quote(value))
                args[key] = value
                scope = spec_name
                origin = "after_close"
                e = t.end()
                state = d[2]
                continue  # (the marker that confirmed the close: read next, as decided)
            else:
                return at
            state = d[2]
            d = None
        if not self._fits(ctx, opener, i, e):
            return at
        self._emit(ctx, calls, None, opener, dialect, s, i, e, start, home, d[2])
        if scope:
            ctx.scope = scope
        ctx.origin = origin
        return e

    # ----------------------------------------------------------------- emit
    @staticmethod
    def _fits(ctx: EngineModel, opener: str, i: int, e: int) -> bool:
        """The block stays within ``max_block_chars`` (else the steps spill it)."""
        b = ctx.block
        held = b.raw_len if b is not None else len(opener)
        return held + (e - i) <= ctx.cfg.max_block_chars

    def _emit(self, ctx: EngineModel, calls: list[tuple[str, dict[str, Any], str, int]], problems: list[str] | None,
              opener: str, dialect: str, s: str, i: int, e: int, start: int, home: str, dest: str) -> None:
        """The events and registers the steps would leave: the block opened (text
        before it flushed), each call's start as its name is read, its arguments'
        canonical text (its closing brace withheld), then at the block's close the
        closings, the block's text on the document's lines, each call's type problems
        and the call (``BlockModel._emit_calls``)."""
        b = ctx.block
        if b is not None:
            head = b.raw.join()
        else:
            head = opener
            ctx.flush()  # (``bind_block``)
            ctx.home = home
        cfg = ctx.cfg
        prefix = cfg.id_prefix
        if len(calls) == 1 and b is None and not problems:
            # One call (the common case), its block opened here: what follows the flush
            # above, with nothing pending, without the buffers (each flush would find
            # only this call's fragments: they are one event, as the steps join them).
            name, args, text, _end = calls[0]
            index = ctx.next_index
            ctx.next_index = index + 1
            call_id = f"{prefix}{index}"
            out = ctx.out
            out.append(ToolCallStart(index, call_id, name))
            out.append(ToolCallDelta(index, text))
            ctx.delta_index = index
            raw = head + s[i:e]
            ctx._saw(raw)
            out.append(ToolCall(index, call_id, name, args, raw, dialect))
            ctx.block = None
            ctx.state = dest
            ctx.enter_target = None
            ctx._tag_version += 1
            self.taken += 1
            return
        indices: list[int] = []
        for name, _args, text, _end in calls:
            index = ctx.next_index
            ctx.next_index = index + 1
            indices.append(index)
            ctx._emit(ToolCallStart(index, f"{prefix}{index}", name))
            ctx.delta_index = index
            ctx.delta_buf.append(text[:-1])
        # _send_closings (``_delta`` of each call's withheld ``}``), then the flush
        for index in indices:
            if ctx.delta_index != index and ctx.delta_buf:
                ctx.flush()
            ctx.delta_index = index
            ctx.delta_buf.append("}")
        ctx.flush()
        raw = head + s[i:e]
        ctx._saw(raw)
        last = len(calls) - 1
        prev = 0
        for n, (name, args, _text, end) in enumerate(calls):
            stop = len(raw) if n == last else end
            for problem in problems or ():
                ctx._emit(Diagnostic("type_mismatch", problem, start))
            index = indices[n]
            piece = raw if (prev == 0 and stop == len(raw)) else raw[prev:stop]
            ctx._emit(ToolCall(index, f"{prefix}{index}", name, args, piece, dialect))
            prev = stop
        ctx.block = None
        ctx.state = dest
        ctx.enter_target = None
        ctx._tag_version += 1
        self.taken += 1
