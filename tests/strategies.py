"""Hypothesis strategies built from the grammar's own literals.

Inputs that only contained random text would never reach the interesting states; these
are made of the markers every dialect declares (every bar variant included), rendered
well-formed blocks, and the characters the machine branches on, cut at random.
"""

from __future__ import annotations

import functools
import json
import operator
from dataclasses import dataclass
from typing import Any, Callable, TypeVar

from hypothesis import strategies as st

import callsieve
from callsieve.grammar import REGISTRY, cdata, reasoning
from callsieve.grammar.api import Dialect, JsonValue, Raw
from callsieve.regions.block import unterminated_heredoc
from callsieve.regions.reasoning import prefill_state

_T = TypeVar("_T")

DIALECTS: list[Dialect] = list(REGISTRY.values())

#: Every literal the grammar knows: each marker's examples, think tags, CDATA.
LITERALS: list[str] = sorted(
    {ex for d in DIALECTS for m in d.markers() for ex in m.examples}
    | {ex for d in DIALECTS for _m, v in d.variants() for ex in v.examples}
    | {ex for d in DIALECTS for m in d.framing for ex in m.examples}
    | {ex for m in reasoning.MARKERS for ex in m.examples}
    | set(cdata.CDATA_OPEN.examples)
    | {"]]>", "]]", "```\n", "```", "~~~\n", "`", "\n```\n", "&amp;", "&lt;", "&#65;", "&am"}
)

#: Characters the machine treats specially, plus a few that are not special at all.
SPECIAL = list('<\uff1c>\uff1e/`~[]{}"\\\n \t|\uff5c\u2016=!&;') + ["DSML", "a", "é", "杭"]

soup_piece = st.one_of(
    st.sampled_from(LITERALS),
    st.sampled_from(SPECIAL),
    st.text(alphabet="abcxyz <>/=\"'\n", max_size=6),
)


@st.composite
def soup(draw: st.DrawFn, max_pieces: int = 40) -> str:
    """A jumble of grammar literals and special characters."""
    parts = draw(st.lists(soup_piece, max_size=max_pieces))
    return "".join(parts)


@st.composite
def chunks(draw: st.DrawFn, text: str) -> list[str]:
    """``text`` cut at random places (possibly into single characters)."""
    if not text:
        return [""] if draw(st.booleans()) else []
    cuts = draw(st.lists(st.integers(0, len(text)), max_size=min(len(text), 30)))
    points = sorted(set(cuts) | {0, len(text)})
    return [text[a:b] for a, b in zip(points, points[1:])]


def framing(raw: str) -> bool:
    """``raw`` of an empty-text Text is framing: harmony tokens or a message header
    (``<|start|>…<|message|>``), or a dialect's framing tokens (``<|END_OF_TURN_TOKEN|>``),
    which ride in raw and never in text."""
    import re

    return (re.fullmatch(r"<\|[a-z]+\|>(?:.*<\|[a-z]+\|>)?", raw, re.S) is not None
            or re.fullmatch(_FRAMING, raw) is not None)


#: A run of the dialects' framing tokens.
_FRAMING = "(?:" + "|".join(sorted({m.pattern for d in DIALECTS for m in d.framing}
                                    | {m.pattern for d in DIALECTS for m, _code in d.orphans}) or ["(?!)"]) + ")+"


#: ``Sieve(calls_in_reasoning=...)``: every policy.
REASONING_POLICIES = st.sampled_from(["dialect", "call", "reasoning"])


def prefills(names: list[str] | None) -> bool:
    """The dialects declare reasoning a prompt may open (``start_in_reasoning=True``)."""
    ds = list(REGISTRY[n] for n in (names if names is not None else callsieve.DIALECTS))
    return prefill_state(tuple(r for d in ds for r in d.reasoning)) is not None


def run(text_chunks: list[str], **kw: Any) -> list[callsieve.Event]:
    """Every event the caller receives. Call ids are made deterministic (the default is
    a random prefix per sieve), so that runs can be compared. Under
    ``on_malformed="raise"`` the events the exception carries are what the caller
    receives from the raising call; the stream ends there."""
    kw.setdefault("id_prefix", "call_")
    s = callsieve.Sieve(**kw)
    out: list[callsieve.Event] = []
    try:
        for c in text_chunks:
            out += s.feed(c)
        return out + s.close()
    except callsieve.MalformedBlockError as e:
        assert kw.get("on_malformed") == "raise", "only on_malformed='raise' raises on content"
        assert e.events and e.events[-1] is e.diagnostic
        return out + e.events


# ---------------------------------------------------------------- reading events
def parsed(doc: str, size: int = 0, **kw: Any) -> list[callsieve.Event]:
    """``doc`` through ``run``, whole or in chunks of ``size`` characters."""
    parts = [doc] if not size else [doc[i : i + size] for i in range(0, len(doc), size)]
    return run(parts, **kw)


def calls(events: list[callsieve.Event]) -> list[tuple[str, dict[str, Any]]]:
    return [(e.name, e.arguments) for e in events if isinstance(e, callsieve.ToolCall)]


def texts(events: list[callsieve.Event]) -> str:
    return "".join(e.text for e in events if isinstance(e, callsieve.Text))


def released(events: list[callsieve.Event]) -> str:
    """What was given back instead of made a call, in order: the text shown, and the
    markup of calls that had started and were abandoned (``ToolCallAbandoned.raw``,
    never shown as text: contract point 2, shown once)."""
    return "".join(e.text if isinstance(e, callsieve.Text) else e.raw
                   for e in events if isinstance(e, (callsieve.Text, callsieve.ToolCallAbandoned)))


def reasoning_text(events: list[callsieve.Event]) -> str:
    return "".join(e.text for e in events if isinstance(e, callsieve.Reasoning))


def codes(events: list[callsieve.Event]) -> list[str]:
    return [e.code for e in events if isinstance(e, callsieve.Diagnostic)]


def codes_besides_heredocs(events: list[callsieve.Event]) -> list[str]:
    """``codes`` without ``unterminated_heredoc``: a property's drawn raw value may open a
    heredoc, said apart from the deviation it checks (counted by ``heredocs_said``)."""
    return [c for c in codes(events) if c != "unterminated_heredoc"]


# ---------------------------------------------------------------- well-formed inputs
#: A name: ``[a-z_][a-z0-9_]{0,8}``. Written as two draws, not ``st.from_regex``: the regex
#: strategy drew a character at a time and was a twentieth of what the suite spent.
NAME = st.builds(operator.add, st.sampled_from("abcdefghijklmnopqrstuvwxyz_"),
                 st.text(alphabet="abcdefghijklmnopqrstuvwxyz0123456789_", max_size=8))
#: Prose: may hold "<", bars and quotes, never a fence, inline code or a whole marker.
PROSE = st.text(alphabet=st.sampled_from(list("abc xyz,.;:!?'\"()=/|\n\uff5c\u2016<>&é杭")), max_size=30)
SAFE_VALUE = st.text(alphabet=st.sampled_from(list("abc xyz\n\t<>&;\"'/=[]{}é杭`~")), max_size=12)


@dataclass
class Expected:
    text: str
    calls: list[tuple[str, dict[str, Any]]]
    #: ``unterminated_heredoc`` Diagnostics the document says (``heredocs_said``)
    heredocs: int = 0


def _per_dialect(make: Callable[[Dialect], _T]) -> Callable[[Dialect], _T]:
    """``make(d)`` once per dialect object. The strategies below are built from a
    dialect's grammar; building (and validating) them again at every draw was a third
    of what the document properties spent. A strategy is immutable, so one object per
    dialect draws exactly what a fresh one would."""
    cache: dict[int, tuple[Dialect, _T]] = {}  # id -> (the dialect, kept alive; its value)

    def get(d: Dialect) -> _T:
        hit = cache.get(id(d))
        if hit is None or hit[0] is not d:
            hit = cache[id(d)] = (d, make(d))
        return hit[1]

    return get


@_per_dialect
def _close_literals(d: Dialect) -> tuple[str, ...]:
    closes = [ex for m in d.value_closes() for ex in m.examples]
    return tuple(closes or sorted({ex for m in d.markers() for ex in m.examples}))


def close_literals(d: Dialect) -> list[str]:
    """Markup a value may hold as data: the dialect's value closes, or, for a dialect
    whose values are JSON strings, any of its markers."""
    return list(_close_literals(d))


# (no "<![CDATA[": in a dialect with CDATA it would open a section; tested on its own)
OTHER_MARKUP = ["</tool_call>", "</tool_calls>", "<tool_call>", "]]>", "</think>", "```"]


def _real_opener_examples() -> tuple[str, ...]:
    from callsieve.structure import compile_dialect

    return tuple(sorted({
        ex for d in DIALECTS for lf in compile_dialect(d).openers
        if lf.kind in ("block_open", "mark") and lf.marker is not None and not lf.spec.block.tolerance and lf.spec.block.prose
        for ex in (*lf.marker.examples, *(e for v in lf.marker.variants for e in v.examples))
    }))


#: Every dialect's block openers (of blocks read in prose that are no deviation), as
#: written: a tolerated construct (a call without its wrapper) ends where one begins
#: (issue 23), so the tolerance properties keep them out of such a call's values.
REAL_OPENERS = _real_opener_examples()


def quotes_an_opener(text: str) -> bool:
    return any(ex in text for ex in REAL_OPENERS)


@_per_dialect
def _value_tokens(d: Dialect) -> st.SearchStrategy[list[str]]:
    return st.lists(st.one_of(SAFE_VALUE, st.sampled_from(close_literals(d)), st.sampled_from(OTHER_MARKUP)), max_size=6)


@st.composite
def _raw_value(draw: st.DrawFn, d: Dialect) -> str:
    closes = _close_literals(d)
    tokens = draw(_value_tokens(d))
    out: list[str] = []
    for k, tok in enumerate(tokens):
        out.append(tok)
        if tok in closes and k + 1 < len(tokens):
            # Grammar-aware termination: what follows a literal close must not be grammar.
            out.append("x")
    return "".join(out)


@_per_dialect
def raw_value(d: Dialect) -> st.SearchStrategy[str]:
    """A string value that may contain the dialect's own parameter close, and other
    markup, but never a close directly followed by what would make it a real close."""
    return _raw_value(d)


#: Dialects whose argument syntax has no null (Gemma 4's bare ``null`` is the string).
NO_NULL = {"gemma4"}
#: Dialects whose string arguments are written raw between delimiters, with no escapes
#: (so a string can hold anything but its delimiter): the delimiter.
RAW_STRING_DELIMITER = {"gemma4": '<|"|>'}


@_per_dialect
def json_value(d: Dialect) -> st.SearchStrategy[Any]:
    leaf = st.one_of(
        st.integers(-1000, 1000),
        st.booleans(),
        st.nothing() if d.name in NO_NULL else st.none(),
        st.sampled_from(close_literals(d) + ["a", "</tool_call>", "<b>"]),
        SAFE_VALUE,
    )
    return st.recursive(leaf, lambda inner: st.lists(inner, max_size=3) | st.dictionaries(NAME, inner, max_size=3), max_leaves=6)


def json_when_valid(d: Dialect) -> bool:
    """The dialect's values are JSON when they parse, else raw (GLM)."""
    return any(isinstance(b, Raw) and b.style.json_when_valid for b in d.values())


def loose_value(written: str) -> Any:
    """What a JSON-when-it-parses value means without a schema (docs/formats.md's rule, kept
    apart from the engine's code): a JSON object, array, number or boolean; anything
    else, a JSON string or null included, is the text as written."""
    try:
        v = json.loads(written, parse_constant=lambda c: 1 / 0)
    except (ValueError, ZeroDivisionError):
        return written
    return v if isinstance(v, (dict, list, int, float)) else written


KEYS = st.lists(NAME, unique=True, max_size=3)


@_per_dialect
def _value_kinds(d: Dialect) -> tuple[bool, bool]:
    """(values may be JSON, values are JSON when they parse) for ``call_of``."""
    loose = json_when_valid(d)
    return d.has_json_values() or loose or not list(d.values()), loose


@st.composite
def _call_of(draw: st.DrawFn, d: Dialect) -> tuple[str, list[tuple[str, str, bool]], dict[str, Any]]:
    name = draw(NAME)
    keys = draw(KEYS)
    params: list[tuple[str, str, bool]] = []
    args: dict[str, Any] = {}
    may_json, loose = _value_kinds(d)
    for key in keys:
        if may_json and draw(st.booleans()):
            v = draw(json_value(d))
            params.append((key, json.dumps(v, ensure_ascii=False), True))
            # (a loose dialect writes a string raw, anything else as JSON)
            args[key] = loose_value(v if isinstance(v, str) else json.dumps(v, ensure_ascii=False)) if loose else v
        else:
            v = draw(raw_value(d))
            params.append((key, v, False))
            args[key] = loose_value(v) if loose else v
    return name, params, args


@_per_dialect
def call_of(d: Dialect) -> st.SearchStrategy[tuple[str, list[tuple[str, str, bool]], dict[str, Any]]]:
    """A call of ``d``: its name, its parameters as written (key, text, JSON or not)
    and the arguments they mean."""
    return _call_of(d)


#: Dialects that write a JSON string raw (Kimi K3 types it ``string``): read raw.
JSON_STRINGS_WRITTEN_RAW = {"kimi_k3"}


def heredocs_said(d: Dialect, drawn: list[tuple[str, list[tuple[str, str, bool]], dict[str, Any]]]) -> int:
    """How many ``unterminated_heredoc`` Diagnostics a block of ``call_of(d)``'s calls
    says: one per value read raw (a value grammar's ``Raw``) that opens a shell heredoc
    never closed (``<<';'``: the value alphabet can write one), whatever else the block
    deviates in (docs/diagnostics.md). What is read raw: the text as written where every
    value is raw; a string where a dialect writes strings raw (GLM's values are JSON when
    they parse, Kimi K3 types a string ``string``); where a dialect has both (DSML's
    ``string=``), a value not written as JSON."""
    kinds = {type(b) for b in d.values()}
    if Raw not in kinds:
        return 0
    loose = json_when_valid(d)
    said = 0
    for _name, params, args in drawn:
        for key, wire, as_json in params:
            arg = args.get(key)
            read: str | None = None
            if loose or (as_json and d.name in JSON_STRINGS_WRITTEN_RAW):
                read = arg if isinstance(arg, str) else None
            elif not as_json or JsonValue not in kinds:
                read = wire
            said += bool(read and unterminated_heredoc(read))
    return said


def _prefix_chars(d: Dialect) -> frozenset[str]:
    """The characters a marker of ``d`` may carry before it as a tolerated prefix."""
    from callsieve.grammar.api import _walk_markers, first_chars

    return frozenset(c for m in _walk_markers(d.blocks) for p in m.prefixes for c in first_chars(p.pattern) or ())


@functools.lru_cache(maxsize=None)
def _continuation_chars(d: Dialect) -> frozenset[str]:
    """The first characters of the markers that may go on with a block of ``d`` where it
    may also end (the block then ends only where what follows is none of them)."""
    from callsieve.structure import compile_dialect

    layout = compile_dialect(d)
    return frozenset(c for pos in layout.positions if pos.can_end for lf in pos.follow if lf.marker is not None
                     for c in lf.marker.start_chars())


@st.composite
def _document(draw: st.DrawFn, d: Dialect) -> tuple[str, Expected]:
    assert d.render is not None
    pieces: list[str] = []
    text: list[str] = []
    calls: list[tuple[str, dict[str, Any]]] = []
    heredocs = 0
    # Blocks that end where the grammar stops (bare DSML invokes, Mistral, Granite's
    # close-less array) hold the whitespace after them until what follows decides:
    # whitespace alone between two such blocks is their separator, not prose. The
    # generator keeps it unambiguous.
    bare = any(b.open is None or b.close is None or b.close_optional for b in d.blocks)
    stray = _prefix_chars(d)
    goes_on = _continuation_chars(d)
    # A block opener anchored to a word (Phi-4-mini's ``functools``) is no opener right
    # after a letter, digit or ``_``: a space keeps the document well-formed.
    word_anchored = any(b.open is not None and b.open.anchor == "word" for b in d.blocks)
    for k in range(draw(st.integers(0, 3))):
        prose = draw(PROSE)
        if bare and k and prose and not prose.strip():
            prose = "." + prose
        if k and prose.lstrip()[:1] in goes_on:
            # Prose right after such a block that begins with a marker that may go on
            # with it (Llama's ";" between calls) is read as the block's: not prose.
            prose = "." + prose
        if prose and prose[-1] in stray:
            # Right before a marker, a character a marker may carry as a tolerated
            # prefix (``Prefix``: DSML's doubled ``<``) is read as that deviation: the
            # document would not be well-formed. A space keeps it prose.
            prose += " "
        if word_anchored and prose and (prose[-1].isalnum() or prose[-1] == "_"):
            prose += " "
        # (harmony: visible text stands in a final or commentary message, framing in raw)
        pieces.append(d.wrap_text(prose, draw(st.integers(0, 7))) if d.wrap_text else prose)
        text.append(prose)
        # (these render one block per call, joined by a newline that is not prose)
        per_block = 1 if d.name in ("qwen3_coder", "hermes", "glm45") else draw(st.integers(1, 3))
        block_calls = [draw(call_of(d)) for _ in range(per_block)]
        variant = draw(st.integers(0, 64))
        pieces.append(d.render([(n, p) for n, p, _ in block_calls], variant))
        calls += [(n, a) for n, _, a in block_calls]
        heredocs += heredocs_said(d, block_calls)
    tail = draw(PROSE)
    if pieces and tail.lstrip()[:1] in goes_on:
        tail = "." + tail
    pieces.append(d.wrap_text(tail, draw(st.integers(0, 7))) if d.wrap_text and draw(st.booleans()) else tail)
    text.append(tail)
    return "".join(pieces), Expected("".join(text), calls, heredocs)


@_per_dialect
def document(d: Dialect) -> st.SearchStrategy[tuple[str, Expected]]:
    """Prose and well-formed blocks of one dialect, with what they should parse to."""
    return _document(d)


any_dialect = st.sampled_from(DIALECTS)


def _subset_pool(names: list[str], rounds: int = 2, seed: int = 21) -> list[list[str]]:
    """Subsets of ``names``: each round shuffles them and cuts them into groups of one,
    two, three, ... dialects, so every dialect stands in ``rounds`` subsets of growing
    size; then every one of them."""
    import random

    rnd = random.Random(seed)
    pool: list[list[str]] = []
    for _ in range(rounds):
        order = names[:]
        rnd.shuffle(order)
        size, at = 1, 0
        while at < len(order):
            pool.append(sorted(order[at : at + size], key=names.index))
            at += size
            size += 1
    return pool + [names[:]]


#: The sets of built-in dialects the properties about "any dialects" draw from: a fixed
#: pool, so that each set composes once per process. (A set drawn at random each example
#: composed a machine each example: with 36 dialects, some 0.2 s of an example's time.)
DIALECT_SETS: list[list[str]] = _subset_pool(list(callsieve.DIALECTS))
any_dialect_set = st.sampled_from(DIALECT_SETS)
