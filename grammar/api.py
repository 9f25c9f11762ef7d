"""The grammar API: what a dialect declares, and how a declaration is checked.

A dialect is data. It declares its *structure*: the markers of its tool-call blocks
(regular expressions over one complete tag, each with literal examples of every variant
it accepts) arranged by a few combinators that say what may follow what, and where each
call's name and each parameter's key and value come from. The engine compiles that
structure into states of its one machine (``callsieve.machine``); it never branches on
a dialect's name or on a dialect's attribute spelling.

Structure::

    Block(open, body, close)        the held unit: its raw text is kept, its calls are
                                    emitted when it ends, it is released as text when
                                    malformed. open=None: a *bare* block, opened by the
                                    first marker of its body standing in prose; with
                                    close_optional=True it also ends, complete, where
                                    the grammar stops.
    Call(open, *items, close)       one call; its name is the ``name`` group (or
                                    ``name`` attribute) of its open marker
    Param(open, value)              one argument; its key is the open marker's ``name``
    Many(node, min=0)               repetition; Seq(*nodes) for a plain sequence
    Raw(close, style)               a value as raw text; its close ends it only where
                                    the grammar allows what follows (after-close
                                    lookahead: the confirm set is derived from the
                                    structure, never written by hand)
    JsonValue(close)                a JSON value: a close inside a string or before
                                    the value's brackets balance is data
    Choose(field, cases, default)   the value body chosen by an attribute of the
                                    parameter's open marker (DSML ``string="false"``)

Tolerances (what models really emit; each one names the ``Diagnostic`` code emitted
every time it is used, and ``Sieve(strict=True)`` composes the machine without any):

    Marker(..., variants=(Variant(pattern, examples, code),))
                                    a misspelling of the marker read as the marker
                                    (leaked DSML with five bars, a doubled ``<``)
    Raw(close, implied_close=CODE)  the value's close may be left out: a marker that
                                    may follow the value, at the start of a line of
                                    it, ends the value (Qwen3-Coder dropping a
                                    ``</parameter>``); a parameter open must bring a
                                    new key (with ``tools=``, a known one), and a value
                                    that quotes a call or block open implies nothing
    Call(..., implied_close=CODE)   the call's close may be left out before what may
                                    follow the call (DSML without ``</invoke>``)
    Capture(..., variants=(Variant(pattern, examples, code),))
                                    another reading of a captured name, taken only
                                    when it names a known tool and the capture's own
                                    reading does not (Kimi ids like ``functionsexec5``)
    Call(..., repeated=CODE)        a parameter given again, whose schema (``tools=``)
                                    allows an array, collects its values into one
                                    (ds2api's ``appendMarkupValue``)
    Call(..., wrapped=("arguments",))
                                    a call whose only parameter is one of these keys,
                                    holding a JSON object, while the tool's schema has
                                    no property of that name, is unwrapped (code
                                    ``unwrapped_arguments``; needs ``tools=``)
    Block(None, ..., tolerance=CODE) a bare block that is a deviation (a call written
                                    without its wrapper): with ``tools=`` given its
                                    calls must all name known tools, else it stays
                                    text; released, it is always text, never dropped
                                    or raised (prose that mentions a marker)

Rules every marker pattern obeys (checked by :func:`validate`, errors name the rule):

1. it compiles under both ``re`` (bulk scans) and ``regex`` (partial matching);
2. in a context that scans prose or a value in bulk, no start character of that context
   can occur after a marker's first character: a failed attempt at a marker then never
   hides a marker that starts inside it, which is what lets the compiled runner skip
   ahead without re-reading (checked per context when the machine is composed);
3. every example literal fully matches its pattern and stays within ``MAX_TAG_CHARS``;
   the first characters of the examples are the marker's start characters.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, Callable, Iterator, Mapping, Union

import regex

from callsieve.grammar.errors import GrammarError
from callsieve.grammar.states import Region

#: Longest tag the matcher will hold while deciding; longer is never a marker.
MAX_TAG_CHARS = 256


@dataclass(frozen=True)
class Variant:
    """A tolerated misspelling of a marker: read as the marker, with a ``Diagnostic``
    of ``code`` each time it is. Its pattern obeys the marker rules too; text the
    marker's own pattern reads is never the variant's."""

    pattern: str
    examples: tuple[str, ...]
    code: str
    label: str = ""


@dataclass(frozen=True)
class Marker:
    """One marker: a pattern over a complete tag, and literal examples of it.

    Named groups the engine reads: ``name`` (a call's name or a parameter's key),
    ``attrs`` (an attribute list, parsed into fields: ``name``, ``string``, ...).
    ``variants``: tolerated misspellings (:class:`Variant`), left out under strict.
    """

    pattern: str
    examples: tuple[str, ...]
    label: str = ""
    variants: tuple[Variant, ...] = ()

    def as_variant(self, v: Variant) -> "Marker":
        """The variant as a marker of its own (what a matcher listens for)."""
        return Marker(v.pattern, v.examples, v.label or f"{self.shown()} ~{v.code}")

    def shown(self) -> str:
        return self.label or self.examples[0]

    def start_chars(self) -> str:
        """The characters a match can begin with, read off the pattern's first atom."""
        got = first_chars(self.pattern)
        return "".join(sorted(got)) if got else ""


@dataclass(frozen=True)
class ValueStyle:
    """How a raw parameter value becomes a string.

    strip_newlines: drop one leading and one trailing newline (Qwen3-Coder writes the
      value on its own lines).
    unescape_entities: decode the five XML entities and numeric references outside
      CDATA sections.
    cdata: ``<![CDATA[ ... ]]>`` inside a value is raw data whose markup means nothing.
    """

    strip_newlines: bool = False
    unescape_entities: bool = False
    cdata: bool = False


# ------------------------------------------------------------------ structure
@dataclass(frozen=True)
class Raw:
    """A raw-text value ended by ``close`` where the grammar allows what follows."""

    close: Marker
    style: ValueStyle = ValueStyle()
    #: Tolerance: the close may be left out before a marker that may follow the value;
    #: the Diagnostic code then emitted ("" : the close is required).
    implied_close: str = ""


@dataclass(frozen=True)
class JsonValue:
    """A JSON value ended by ``close`` once its strings and brackets are closed.

    The text is decoded as strict JSON when the parameter ends; text that is not JSON
    stays a string, with a ``type_mismatch`` Diagnostic.
    """

    close: Marker


@dataclass(frozen=True)
class Choose:
    """The value body picked by an attribute (field) of the parameter's open marker."""

    field: str
    cases: tuple[tuple[str, "Body"], ...]
    default: "Body"

    def pick(self, fields: Mapping[str, str]) -> "Body":
        got = fields.get(self.field, "").lower()
        for value, body in self.cases:
            if got == value:
                return body
        return self.default

    def bodies(self) -> tuple["Body", ...]:
        return tuple(b for _, b in self.cases) + (self.default,)


@dataclass(frozen=True)
class Capture:
    """Text up to whatever the structure allows next (a marker, or one of ``end_chars``,
    which then belongs to the markup), matched whole against ``pattern``. Its named
    groups give the call's ``name`` and its wire ``id``; a capture that does not match
    makes the block malformed. At most ``max_chars`` characters."""

    pattern: str
    end_chars: str = ""
    max_chars: int = 256
    label: str = "text"
    #: Tolerance: other readings of the same text (``Variant``: a pattern with a
    #: ``name`` group, examples, a code), tried only with ``tools=`` given when the
    #: pattern's name is no known tool: a variant's name must be a known tool.
    variants: tuple["Variant", ...] = ()


@dataclass(frozen=True)
class JsonArgs:
    """A call's arguments as one strict JSON object (streamed as canonical JSON)."""

    label: str = "{…}"


@dataclass(frozen=True)
class JsonCall:
    """A whole call as one strict JSON object: the name under one of ``name`` keys,
    the arguments object under one of ``arguments``, a wire id under one of ``id``
    (keys in any order; other keys are read and ignored)."""

    name: tuple[str, ...] = ("name",)
    arguments: tuple[str, ...] = ("arguments", "parameters")
    id: tuple[str, ...] = ()
    label: str = '{"name": …, "arguments": {…}}'


@dataclass(frozen=True)
class JsonCalls:
    """Several calls as one strict JSON array of call objects (Mistral v2/v3:
    ``[{"name": …, "arguments": {…}, "id": "…"}, …]``)."""

    call: JsonCall = JsonCall()
    label: str = '[{"name": …}, …]'


Body = Union[Raw, JsonValue]
Value = Union[Raw, JsonValue, Choose]


@dataclass(frozen=True)
class Param:
    open: Marker
    value: Value


@dataclass(frozen=True)
class Many:
    item: "Node"
    min: int = 0


@dataclass(frozen=True)
class Opt:
    item: "Node"


@dataclass(frozen=True)
class Alt:
    """One of several nodes, told apart by what each begins with: markers, or at most
    one capture beside JSON bodies (``{``, ``[``), decided by the first character."""

    items: tuple["Node", ...]

    def __init__(self, *items: "Node") -> None:
        object.__setattr__(self, "items", tuple(items))


@dataclass(frozen=True)
class Seq:
    items: tuple["Node", ...]

    def __init__(self, *items: "Node") -> None:
        object.__setattr__(self, "items", tuple(items))


@dataclass(frozen=True)
class Call:
    """One call: ``open``, then ``items`` (parameters, captures, markers, JSON
    arguments), then ``close``. ``ids="wire"``: the call id is the ``id`` a capture or
    JSON field carries (Kimi ``functions.NAME:IDX``), not a generated one."""

    open: Marker | None
    items: tuple["Node", ...]
    close: Marker | None
    ids: str
    #: Tolerance: the close may be left out before what may follow the call (the code).
    implied_close: str
    #: Tolerance: keys a model may wrap all the arguments in once (see the docstring).
    wrapped: tuple[str, ...]
    #: Tolerance: a parameter repeated under an array schema becomes an array (the code).
    repeated: str

    def __init__(self, open: Marker | None, *items: "Node", close: Marker | None, ids: str = "generated",
                 implied_close: str = "", wrapped: tuple[str, ...] = (), repeated: str = "") -> None:
        object.__setattr__(self, "open", open)
        object.__setattr__(self, "items", tuple(items))
        object.__setattr__(self, "close", close)
        object.__setattr__(self, "ids", ids)
        object.__setattr__(self, "implied_close", implied_close)
        object.__setattr__(self, "wrapped", tuple(wrapped))
        object.__setattr__(self, "repeated", repeated)


Node = Union[Marker, Param, Many, Opt, Alt, Seq, Call, Capture, JsonArgs, JsonCall, JsonCalls]


@dataclass(frozen=True)
class Block:
    """The held unit. ``open=None``: bare (see the module docstring)."""

    open: Marker | None
    body: Node
    close: Marker | None
    close_optional: bool = False
    #: Distinguishes the states of several blocks of one dialect ("" for the first).
    name: str = ""
    #: When dialects share this block's opener: a pattern over what follows the opener
    #: that tells this block apart (default: derived, the markers that may follow it).
    decide: Marker | None = None
    #: Tolerance: this bare block is a deviation (a call without its wrapper); the
    #: Diagnostic code emitted when it is read. Left out under strict.
    tolerance: str = ""


@dataclass(frozen=True)
class Dialect:
    name: str
    title: str
    blocks: tuple[Block, ...]
    #: Regions of states of the dialect's own (see ``callsieve.grammar.states.Region``).
    regions: tuple[Region, ...] = ()
    #: Example of a whole, well-formed block (docs, demo, tests).
    sample: str = ""
    #: Build well-formed input from (name, [(key, raw_value, is_json)]) calls; used by
    #: property tests to generate documents in this dialect.
    render: Callable[[list[tuple[str, list[tuple[str, str, bool]]]], int], str] | None = field(
        default=None, compare=False
    )

    # -- reading the structure (for tools and tests; the engine compiles it itself)
    def variants(self) -> Iterator[tuple[Marker, Variant]]:
        """Every tolerated variant of a marker, with its marker."""
        for m in self.markers():
            for v in m.variants:
                yield m, v

    def markers(self) -> Iterator[Marker]:
        """Every marker of the structure, each once, in declaration order."""
        seen: list[Marker] = []
        for m in _walk_markers(self.blocks):
            if m not in seen:
                seen.append(m)
                yield m

    def values(self) -> Iterator[Body]:
        """Every value body of the structure."""
        for n in _walk(self.blocks):
            if isinstance(n, Param):
                yield from (n.value.bodies() if isinstance(n.value, Choose) else (n.value,))

    def markers_by_role(self) -> dict[str, tuple[Marker, ...]]:
        """The markers of each structural role: ``block_open``, ``block_close``,
        ``call_open``, ``call_close``, ``param_open``, ``value_close``."""
        roles: dict[str, list[Marker]] = {k: [] for k in ("block_open", "block_close", "call_open", "call_close", "param_open", "value_close")}

        def add(role: str, m: Marker | None) -> None:
            if m is not None and m not in roles[role]:
                roles[role].append(m)

        for n in _walk(self.blocks):
            if isinstance(n, Block):
                add("block_open", n.open)
                add("block_close", n.close)
            elif isinstance(n, Call):
                add("call_open", n.open)
                add("call_close", n.close)
            elif isinstance(n, Param):
                add("param_open", n.open)
        for m in self.value_closes():
            add("value_close", m)
        return {k: tuple(v) for k, v in roles.items()}

    def value_closes(self) -> tuple[Marker, ...]:
        out: list[Marker] = []
        for b in self.values():
            if b.close not in out:
                out.append(b.close)
        return tuple(out)

    def has_json_values(self) -> bool:
        return any(isinstance(b, JsonValue) for b in self.values())

    def has_cdata(self) -> bool:
        return any(isinstance(b, Raw) and b.style.cdata for b in self.values())


def _walk(nodes: object) -> Iterator[object]:
    if isinstance(nodes, tuple):
        for n in nodes:
            yield from _walk(n)
        return
    yield nodes
    if isinstance(nodes, Block):
        yield from _walk(tuple(x for x in (nodes.open, nodes.body, nodes.close) if x is not None))
    elif isinstance(nodes, Call):
        yield from _walk(tuple(x for x in (nodes.open, *nodes.items, nodes.close) if x is not None))
    elif isinstance(nodes, Param):
        yield from _walk((nodes.open,))
    elif isinstance(nodes, (Many, Opt)):
        yield from _walk((nodes.item,))
    elif isinstance(nodes, (Seq, Alt)):
        yield from _walk(nodes.items)


def _walk_markers(blocks: tuple[Block, ...]) -> Iterator[Marker]:
    for n in _walk(blocks):
        if isinstance(n, Marker):
            yield n
        elif isinstance(n, Param):
            for b in n.value.bodies() if isinstance(n.value, Choose) else (n.value,):
                yield b.close


def arguments_of(params: list[tuple[str, str, bool]]) -> dict[str, Any]:
    """The arguments a renderer's ``(key, raw_value, is_json)`` parameters stand for:
    what a dialect whose arguments are JSON writes (used by ``Dialect.render``)."""
    import json

    return {k: (json.loads(v) if is_json else v) for k, v, is_json in params}


_ATTR = re.compile(r"""([\w:.-]+)\s*=\s*(?:"([^"]*)"|'([^']*)')""")


def parse_attrs(text: str) -> dict[str, str]:
    """Attributes of a tag, ``name="x" string='true'`` → ``{"name": "x", ...}``."""
    out: dict[str, str] = {}
    for m in _ATTR.finditer(text):
        out[m.group(1).lower()] = m.group(2) if m.group(2) is not None else m.group(3)
    return out


def tag_fields(match: "re.Match[str] | regex.Match[str]") -> dict[str, str]:
    """The name and attributes a marker match carries."""
    groups: Mapping[str, str | None] = match.groupdict()
    out: dict[str, str] = {}
    attrs = groups.get("attrs")
    if attrs:
        out.update(parse_attrs(attrs))
    name = groups.get("name")
    if name is not None:
        out["name"] = name.strip()
    return out


def _names_something(m: Marker) -> bool:
    return "(?P<name>" in m.pattern or "(?P<attrs>" in m.pattern


def validate(dialect: Dialect) -> None:
    """Raise :class:`GrammarError` naming the dialect, the marker and the rule it breaks."""
    if not re.fullmatch(r"[a-z][a-z0-9_]*", dialect.name):
        raise GrammarError(f"dialect name {dialect.name!r}: use lower_snake_case")
    if not dialect.blocks and not dialect.regions:
        raise GrammarError(f"dialect {dialect.name}: declares no block and no region")
    for n in _walk(dialect.blocks):
        named_inside = isinstance(n, Call) and any(
            isinstance(x, Capture) and "(?P<name>" in x.pattern for x in _walk(n.items)
        )
        if isinstance(n, Call) and (n.open is None or not _names_something(n.open)) and not named_inside:
            raise GrammarError(
                f"dialect {dialect.name}: call without a name: call open {n.open.shown() if n.open else None!r} has no "
                "(?P<name>...) group or attribute list, and no capture in the call has one"
            )
        if isinstance(n, Param) and not _names_something(n.open):
            raise GrammarError(
                f"dialect {dialect.name}: parameter without a key: parameter open {n.open.shown()!r} "
                "has no (?P<name>...) group or attribute list"
            )
    for b in dialect.blocks:
        if b.open is None and b.close is not None and not b.close_optional:
            raise GrammarError(f"dialect {dialect.name}: a bare block (open=None) must have close_optional=True or close=None")
    for m in dialect.markers():
        validate_marker(m, f"dialect {dialect.name}, marker {m.shown()!r}")
        for v in m.variants:
            where = f"dialect {dialect.name}, variant {v.code!r} of marker {m.shown()!r}"
            if not re.fullmatch(r"[a-z][a-z0-9_]*", v.code):
                raise GrammarError(f"{where}: a variant's code must be lower_snake_case")
            validate_marker(m.as_variant(v), where)
            own = regex.compile(m.pattern)
            for ex in v.examples:
                if own.fullmatch(ex):
                    raise GrammarError(f"{where}: example {ex!r} is the marker itself, not a variant")
    for b in dialect.blocks:
        if b.tolerance and b.open is not None:
            raise GrammarError(f"dialect {dialect.name}: only a bare block (open=None) may be a tolerance")
    for n in _walk(dialect.blocks):
        if isinstance(n, Capture):
            try:
                regex.compile(n.pattern)
            except regex.error as e:
                raise GrammarError(f"dialect {dialect.name}: capture pattern {n.pattern!r} does not compile: {e}") from None
            for v in n.variants:
                try:
                    pv = regex.compile(v.pattern)
                except regex.error as e:
                    raise GrammarError(f"dialect {dialect.name}: capture variant {v.pattern!r} does not compile: {e}") from None
                if "(?P<name>" not in v.pattern or not v.examples or not all(pv.fullmatch(ex) for ex in v.examples):
                    raise GrammarError(f"dialect {dialect.name}: capture variant {v.code!r} needs a name group and "
                                       "examples its pattern matches")
        if isinstance(n, Block) and n.decide is not None:
            d = n.decide
            try:
                pd = regex.compile(d.pattern)
            except regex.error as e:
                raise GrammarError(f"dialect {dialect.name}: decide pattern {d.pattern!r} does not compile: {e}") from None
            for ex in d.examples:
                if not pd.fullmatch(ex):
                    raise GrammarError(f"dialect {dialect.name}: decide example {ex!r} does not match its pattern")


def first_chars(pattern: str) -> set[str] | None:
    """The exact set of characters a match of ``pattern`` can begin with, or None when
    that set is not a small set of literals (a class range, ``.``, an empty match)."""
    sre: Any
    try:  # the stdlib's own parser: no second regex grammar here
        from re import _parser as sre  # type: ignore[attr-defined,no-redef]
    except ImportError:  # Python 3.10
        import sre_parse as sre
    try:
        parsed: Any = sre.parse(pattern)
    except re.error:
        return None

    def of(items: list[Any], flags: int) -> set[str] | None:
        if not items:
            return None
        op, av = items[0]
        name = str(op)
        if name == "LITERAL":
            c = chr(av)
            return {c, c.swapcase()} if flags & re.IGNORECASE and c.isalpha() else {c}
        if name == "IN":
            out: set[str] = set()
            for sop, sav in av:
                if str(sop) != "LITERAL":
                    return None
                out.add(chr(sav))
            return out
        if name == "SUBPATTERN":
            add: int = av[1]
            return of(list(av[3]), flags | add)
        if name == "BRANCH":
            out = set()
            for alt in av[1]:
                got = of(list(alt), flags)
                if got is None:
                    return None
                out |= got
            return out
        return None

    return of(list(parsed), int(parsed.state.flags))


def validate_marker(m: Marker, where: str) -> None:
    try:
        re.compile(m.pattern)
        partial = regex.compile(m.pattern)
    except (re.error, regex.error) as e:
        raise GrammarError(f"{where}: pattern {m.pattern!r} does not compile: {e}") from None
    if not m.examples:
        raise GrammarError(f"{where}: give at least one example literal (rule 3)")
    starts = first_chars(m.pattern)
    if not starts:
        raise GrammarError(
            f"{where}: pattern {m.pattern!r} must begin with one literal character or a class of "
            "literal characters (its start characters, rule 3)"
        )
    for ex in m.examples:
        if not partial.fullmatch(ex):
            raise GrammarError(f"{where}: example {ex!r} does not match its pattern (rule 3)")
        if len(ex) > MAX_TAG_CHARS:
            raise GrammarError(f"{where}: example {ex!r} is longer than {MAX_TAG_CHARS} (rule 3)")
