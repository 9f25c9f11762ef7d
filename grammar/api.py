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
                                    ``name`` attribute) of its open marker, or of a
                                    capture in it; close=None: the call ends where its
                                    JSON arguments end, else where its block closes
    Param(open, value, between=())  one argument; its key is the open marker's ``name``,
                                    or, with ``between`` (markers and one Capture that
                                    stand between the open and the value, the last a
                                    marker), the ``name`` group of that capture
                                    (GLM ``<arg_key>KEY</arg_key><arg_value>``)
    Many(node, min=0)               repetition; Seq(*nodes) for a plain sequence
    Raw(close, style)               a value as raw text; its close ends it only where
                                    the grammar allows what follows (after-close
                                    lookahead: the confirm set is derived from the
                                    structure, never written by hand)
    JsonValue(close)                a JSON value: a close inside a string or before
                                    the value's brackets balance is data
    Choose(field, cases, default)   the value body chosen by an attribute of the
                                    parameter's open marker (DSML ``string="false"``)
    JsonArgs() / JsonCall() / JsonCalls()
                                    a call's arguments, a whole call, a list of calls
                                    as strict JSON (streamed as canonical JSON)
    PythonCalls(json_literals, objects) / PythonCall(json_literals)
                                    a list of calls, or one call, in Python syntax:
                                    ``[f(a=1), g(b="x")]`` (Python literals, never
                                    ``eval``; a call that is no literal call is
                                    released alone, the others stand)
    Body(region, entry, ...)        a value grammar of the dialect's own (below)

Markers (``Marker(pattern, examples, label, variants, prefixes, anchor)``): a marker of
one character fires at its own character (Llama's ``;`` between calls; no other marker
of its state may begin with it). ``anchor="word"``: no marker right after a letter,
digit or ``_`` (``functools[`` in ``myfunctools[``); ``anchor="line"``: only at a
line's start. ``Dialect(framing=(Marker, ...))``: tokens standing outside any block
(Command's ``<|START_TEXT|>``): in prose they ride in an empty ``Text``'s raw.
``Dialect(orphans=((Marker, code), ...))``: a block's own tokens that, standing in prose
alone, are framing too, each reported with its code (a tolerance: off under strict).

Value grammars (issue 21): a body read by a region of states a dialect brings, named in
the structure as ``JsonArgs`` is::

    from callsieve.grammar import Body, Call, Marker, Region
    from callsieve.grammar.states import EXIT, BodyHelpers, StateDecl, but, on

    class KvModel(BodyHelpers):             # guards and actions: plain methods
        def kv_open(self, ch): self.body_hold(ch); self.body_args("{")
        ...
    KV = Region("kv", (StateDecl("kv.start", "before {", in_block=True), ...),
                (*on("kv.start", ["lbrace"], "kv.key", "kv_open"), ...,
                 *on("kv.value", ["rbrace"], EXIT, "kv_value", "kv_close")), KvModel)
    ARGS = Body(region=KV, entry="kv.start", first="{", reads="args")
    Call(Marker(r"@call (?P<name>[a-z_]+):", ("@call f:",)), ARGS, close=None)

The region reads the body from ``entry`` (its model's ``begin`` action, if any, runs
when the body is entered) until a row leads to ``EXIT``: the composer makes that row
one per place the structure names the body, each to what follows it there. Its states
are ``in_block`` (each handles ``overflow``: ``abort_oversized``; and ``eof``:
``abort_block_eof``); what it cannot read leads to ``text`` with ``abort_block`` (the
block is malformed: released as text, never a guessed call). ``reads``: ``"args"`` (the
arguments of the ``Call`` it stands in), ``"call"`` or ``"calls"`` (it makes them:
``body_call``, ``body_name``, ``body_end_call``). ``first``: the characters it may begin
with, where the structure lets something else begin too. The model calls the engine
through the helpers ``BodyHelpers`` declares (``body_hold``: every character it reads;
``body_args``: canonical JSON text of the arguments, ``json.dumps(arguments,
ensure_ascii=False)``'s spelling, streamed, so every prefix of a call's deltas is a
prefix of its final arguments; ``body_refuse``: this call is no call, released alone
with a ``malformed_call`` Diagnostic while its block stands; ``body_fail``: the block is
malformed; ``tolerate``: a deviation read, reported). Linear: a state's self-loop may
have a run form (``Region.run_forms``) or a state run (``Region.state_runs``); never
``eval``, never raising on content. ``tests/test_value_grammar.py`` is a whole example,
run and drawn (``callsieve.tools.diagrams.dialect_dot``).

Tolerances (what models really emit; each one names the ``Diagnostic`` code emitted
every time it is used, and ``Sieve(strict=True)`` composes the machine without any):

    Marker(..., variants=(Variant(pattern, examples, code),))
                                    a misspelling of the marker read as the marker
                                    (leaked DSML with five bars; GLM ``</arg_key>`` doubled)
    Raw(close, trailing=(Variant(pattern, examples, code),))
                                    text written between the value's close and the
                                    marker after it (GLM's literal ``\n``), read with
                                    that marker only
    ValueStyle(escaped_once=CODE)   a JSON-when-valid value escaped once too often,
                                    read unescaped under an object or array schema
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
    Capture(..., loose=Variant(pattern, examples, code))
                                    text the capture's pattern (the format) does not
                                    read, read by this one with its Diagnostic (Kimi
                                    ids other than ``functions.NAME:IDX``)
    Call(..., repeated=CODE)        a parameter given again, whose schema (``tools=``)
                                    allows an array, collects its values into one
                                    (ds2api's ``appendMarkupValue``)
    Call(..., wrapped=("arguments",))
                                    a call whose only parameter is one of these keys,
                                    holding a JSON object, while the tool's schema has
                                    no property of that name, is unwrapped (code
                                    ``unwrapped_arguments``; needs ``tools=``)
    HeaderCase(..., variants=(Variant(pattern, examples, code),))
                                    another reading of a call header's recipient
                                    (harmony ``to=functions.shelljson``: ``json``
                                    glued to the name); with ``tools=``, taken only
                                    when it names a known tool and the case does not
    Marker(..., prefixes=(Prefix(pattern, examples, code),))
                                    stray text before the marker read as its markup
                                    (DSML ``<<｜DSML｜tool_calls>``: a doubled ``<``)
    Opt(marker, stray=CODE)         a marker the format does not have but models write
                                    (GLM ``</arg_value>`` after a zero-argument name;
                                    a doubled ``<arg_key>``): read where it stands.
                                    Also a parameter whose open the format does not
                                    have there (GLM's second ``<tool_call>`` where
                                    ``<arg_key>`` belongs), or JSON arguments where the
                                    format has markup (``<invoke name="f">{…}``): read
                                    where they stand, reported when they begin
    Opt(marker, missing=CODE)       the value's opener (last of ``Param.between``) may
                                    be left out: what stands there begins the value
                                    (GLM-5 ``<arg_key>k</arg_key>v</arg_value>``); or,
                                    in a call's items, the marker between a capture and
                                    the JSON body after it: the body's first character
                                    ends the capture (Mistral ``NAME{…}`` without
                                    ``[ARGS]``)
    Block(decide=Marker(..., variants=...))
                                    a shared opener's lookahead may also accept what
                                    a tolerated deviation writes after it
    Block(..., eof_close=CODE)      at the end of the stream, a block whose last call
                                    is complete (its close read, or its JSON arguments
                                    closed with only closes left) is read as closed
                                    (a server stripped harmony's ``<|call|>``)
    Block(open, ..., close, tolerance=CODE, needs_tools=True)
                                    a wrapper the format does not have (Hermes-family
                                    ``<tool>{…}</tool>``): its close is the evidence
                                    (its calls stream once it is read), with ``tools=``
                                    its calls must name known tools; ``needs_tools``:
                                    read only with ``tools=`` given
    Block(..., same=True)           a back-reference: every marker of the block reads
                                    in its ``(?P<same>…)`` group what the opener read
                                    in its own (DSML's tolerated arbitrary prefix)
    Block(None, ..., tolerance=CODE) a bare block that is a deviation (a call written
                                    without its wrapper): with ``tools=`` given its
                                    calls must all name known tools, else it stays
                                    text; released, it is always text, never dropped
                                    or raised (prose that mentions a marker). With a
                                    required close (close_optional=False) the close
                                    is the evidence: its calls stream only once it
                                    is read

Rules every marker pattern obeys (checked by :func:`validate`, errors name the rule):

1. it compiles under both ``re`` (bulk scans) and ``regex`` (partial matching);
2. in a context that scans prose or a value in bulk, no start character of that context
   can occur after a marker's first character: a failed attempt at a marker then never
   hides a marker that starts inside it, which is what lets the compiled runner skip
   ahead without re-reading (checked per context when the machine is composed). A
   marker after a declared ``Prefix`` (one start character) breaks it by design, in one
   known place, which the compiled runner checks too (``Matcher.prefix_tail``);
3. every example literal fully matches its pattern and stays within ``MAX_TAG_CHARS``;
   the first characters of the examples are the marker's start characters.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass, field
from typing import Any, Callable, ClassVar, Iterator, Mapping, Union

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
class Prefix:
    """Stray text a model writes right before a marker (a doubled ``<``): read as part
    of the marker's markup (in the block's ``raw``, so nothing is lost), with a
    ``Diagnostic`` of ``code`` each time it is; text when no marker follows it.

    ``pattern`` is one character: a literal or a class of them (``[<＜]``), so the
    prefixed marker is found by the same factored scan as the marker. That character is
    a start character of the context, so the prefixed marker breaks rule 2 by design, in
    one known place: a marker running off a chunk's end may also start one character
    before the last start character, and the compiled runner checks there too
    (``Matcher.prefix_tail``)."""

    pattern: str
    examples: tuple[str, ...]
    code: str


@dataclass(frozen=True)
class Marker:
    """One marker: a pattern over a complete tag, and literal examples of it.

    Named groups the engine reads: ``name`` (a call's name or a parameter's key),
    ``attrs`` (an attribute list, parsed into fields: ``name``, ``string``, ...).
    ``variants``: tolerated misspellings (:class:`Variant`), left out under strict.
    ``prefixes``: tolerated stray text before it (:class:`Prefix`), left out under
    strict; a prefix goes with the marker and with each of its variants.
    """

    pattern: str
    examples: tuple[str, ...]
    label: str = ""
    variants: tuple[Variant, ...] = ()
    prefixes: tuple[Prefix, ...] = ()
    #: Where the marker may stand, in prose or reasoning: "" anywhere; ``"word"``
    #: not right after a letter, digit or ``_`` (Phi-4-mini's ``functools[`` is no
    #: marker in ``myfunctools[``); ``"line"`` at the start of a line (after spaces or
    #: tabs only, or at the stream's start). What counts as "before" is what the state
    #: read: the visible text (a block of calls included), or the reasoning.
    anchor: str = ""

    def as_variant(self, v: Variant) -> "Marker":
        """The variant as a marker of its own (what a matcher listens for)."""
        return Marker(v.pattern, v.examples, v.label or f"{self.shown()} ~{v.code}", anchor=self.anchor)

    def with_prefix(self, p: Prefix) -> "Marker":
        """The marker written after the stray prefix, as a marker of its own. (Examples:
        the first prefix before every example, every prefix before the first.)"""
        examples = tuple(p.examples[0] + ex for ex in self.examples) + tuple(pe + self.examples[0] for pe in p.examples[1:])
        return Marker(p.pattern + "(?:" + self.pattern + ")", examples, f"~{p.examples[0]}{self.shown()}", anchor=self.anchor)

    def shown(self) -> str:
        if self.label:
            return self.label
        # (A declaration that breaks rule 3 is named by its pattern in the error.)
        ex: object = self.examples
        if isinstance(ex, tuple) and ex and isinstance(ex[0], str):
            return ex[0]
        return self.pattern if isinstance(self.pattern, str) else repr(self.pattern)

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
    json_when_valid: the value is JSON when it parses, else raw text (GLM writes
      non-string values as JSON, strings raw). With a tool schema it is typed as every
      raw value is: a string-only parameter stays raw, an object or array is read as
      JSON, a number, boolean or null from the text, and a value that fits no type
      stays the raw string, with a ``type_mismatch`` Diagnostic. Without a schema:
      a JSON object, array, number or boolean is decoded; anything else (a JSON
      string, ``null``, text) stays the raw string. A value streams as it arrives
      once it can only be a string (string-typed, or, without a schema, its first
      character past whitespace is none of ``{ [ - 0-9 t f``); any other is sent
      whole once its close is confirmed.
    """

    strip_newlines: bool = False
    unescape_entities: bool = False
    cdata: bool = False
    json_when_valid: bool = False
    #: Tolerance: a ``json_when_valid`` value typed as an object or array by its schema
    #: that is not JSON, but is once one level of JSON string escaping is undone
    #: (``[{\"a\": 1}]``: GLM escaping a value as if inside a JSON string), is read
    #: so, with a Diagnostic of this code ("": never). Off under strict.
    escaped_once: str = ""


# ------------------------------------------------------------------ structure
@dataclass(frozen=True)
class Raw:
    """A raw-text value ended by ``close`` where the grammar allows what follows."""

    close: Marker
    style: ValueStyle = ValueStyle()
    #: Tolerance: the close may be left out before a marker that may follow the value;
    #: the Diagnostic code then emitted ("" : the close is required).
    implied_close: str = ""
    #: Tolerance: text a model writes after the close where whitespace belongs (GLM's
    #: ``\n`` as two characters, ``</arg_value>\n<arg_key>``): a ``Variant`` each, read
    #: only together with a marker that may follow the value (so it confirms the close
    #: as that marker does), reported with its code.
    trailing: tuple[Variant, ...] = ()
    #: The engine region that reads it, and the state it begins in (see ``Body``).
    region: ClassVar[str] = "value"
    entry: ClassVar[str] = "in_param"


@dataclass(frozen=True)
class JsonValue:
    """A JSON value ended by ``close`` once its strings and brackets are closed.

    The text is decoded as strict JSON when the parameter ends; text that is not JSON
    stays a string, with a ``type_mismatch`` Diagnostic.
    """

    close: Marker
    region: ClassVar[str] = "json"
    entry: ClassVar[str] = "json_value"


@dataclass(frozen=True)
class Choose:
    """The value body picked by an attribute (field) of the parameter's open marker."""

    field: str
    cases: tuple[tuple[str, "ValueBody"], ...]
    default: "ValueBody"

    def pick(self, fields: Mapping[str, str]) -> "ValueBody":
        got = fields.get(self.field, "").lower()
        for value, body in self.cases:
            if got == value:
                return body
        return self.default

    def bodies(self) -> tuple["ValueBody", ...]:
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
    #: pattern's name is no known tool: a variant's name must be a known tool. A
    #: variant with no ``name`` group (an id alone: Kimi's ``0``) names the one tool
    #: declared, only when ``tools=`` declares exactly one (vLLM's rule).
    variants: tuple["Variant", ...] = ()
    #: Tolerance: text the pattern (the format) does not read, read by this pattern
    #: instead, with a Diagnostic of its code (then, with ``tools=``, ``variants`` as
    #: for the pattern's own reading). Left out under strict.
    loose: "Variant | None" = None
    region: ClassVar[str] = "capture"
    entry: ClassVar[str] = "in_capture"
    begin: ClassVar[str] = "capture_begin"
    first: ClassVar[str] = ""
    reads: ClassVar[str] = "text"


@dataclass(frozen=True)
class JsonArgs:
    """A call's arguments as one strict JSON object (streamed as canonical JSON)."""

    label: str = "{…}"
    region: ClassVar[str] = "json_body"
    entry: ClassVar[str] = "j_start"
    begin: ClassVar[str] = "json_begin"
    first: ClassVar[str] = "{"
    reads: ClassVar[str] = "args"


@dataclass(frozen=True)
class JsonCall:
    """A whole call as one strict JSON object: the name under one of ``name`` keys,
    the arguments object under one of ``arguments``, a wire id under one of ``id``
    (keys in any order; other keys are read and ignored)."""

    name: tuple[str, ...] = ("name",)
    arguments: tuple[str, ...] = ("arguments", "parameters")
    id: tuple[str, ...] = ()
    label: str = '{"name": …, "arguments": {…}}'
    #: The object's one key is the call's name and its value the arguments object
    #: (Apertus: ``{"get_weather": {"city": "Paris"}}``); ``name``, ``arguments`` and
    #: ``id`` are then not read.
    keyed: bool = False
    #: No other key: a key that is none of ``name``, ``arguments`` or ``id`` makes the
    #: body malformed (a call read on weak evidence: Hermes-family ``<tool>{…}</tool>``).
    only: bool = False
    region: ClassVar[str] = "json_body"
    entry: ClassVar[str] = "j_start"
    begin: ClassVar[str] = "json_begin"
    first: ClassVar[str] = "{"
    reads: ClassVar[str] = "call"
    #: What begins it where it opens a block of its own (``Block(None, JsonCall())``):
    #: see ``Body.lead``.
    lead: ClassVar[Marker | None] = Marker(r"\{", ("{",), "{")


@dataclass(frozen=True)
class JsonCalls:
    """Several calls as one strict JSON array of call objects (Mistral v2/v3:
    ``[{"name": …, "arguments": {…}, "id": "…"}, …]``)."""

    call: JsonCall = JsonCall()
    label: str = '[{"name": …}, …]'
    region: ClassVar[str] = "json_body"
    entry: ClassVar[str] = "j_start"
    begin: ClassVar[str] = "json_begin"
    first: ClassVar[str] = "["
    reads: ClassVar[str] = "calls"
    lead: ClassVar[Marker | None] = Marker(r"\[[ \t\r\n]*\{", ("[{", "[ {", "[\n{"), "[{")


@dataclass(frozen=True)
class PythonCalls:
    """A list of calls in Python syntax: ``[f(a=1), g(b="x")]`` (pythonic, Llama 4,
    LFM2), read by the engine's ``python_value`` region (``callsieve.regions.python_value``):
    keyword arguments as Python literals, streamed as canonical JSON, never ``eval``; a
    call that is no literal call is released alone, with a Diagnostic, while the
    others stand. ``json_literals``: ``true``/``false``/``null`` are literals too (OLMo
    3, LFM2). ``objects``: an item may be a call object instead, a dict with the name
    under one of ``objects.name`` and the arguments under one of ``objects.arguments``
    (LFM2's JSON form ``[{"name": …, "arguments": {…}}]``)."""

    json_literals: bool = False
    objects: JsonCall | None = None
    label: str = "[f(k=v), …]"
    region: ClassVar[str] = "python_value"
    entry: ClassVar[str] = "py_start"
    begin: ClassVar[str] = "py_begin"
    first: ClassVar[str] = "["
    reads: ClassVar[str] = "calls"
    #: ``[``, a name and its ``(``: a list that begins so is calls, not prose
    #: (``[see above]``) nor a Mistral ``[TOOL_CALLS]``.
    lead: ClassVar[Marker | None] = Marker(r"\[[ \t\r\n]*[A-Za-z_][A-Za-z0-9_]{0,127}[ \t]*\(",
                                           ("[f(", "[ get_weather (", "[\nf("), "[f(…")


@dataclass(frozen=True)
class PythonCall:
    """One call in Python syntax, ``f(a=1)`` (OLMo 3 writes one per line); as
    :class:`PythonCalls`, of one call."""

    json_literals: bool = False
    label: str = "f(k=v, …)"
    region: ClassVar[str] = "python_value"
    entry: ClassVar[str] = "py_start"
    begin: ClassVar[str] = "py_begin"
    first: ClassVar[str] = ""
    reads: ClassVar[str] = "call"
    lead: ClassVar[Marker | None] = None


@dataclass(frozen=True)
class Body:
    """A body read by a region of states: a value grammar a dialect brings (see the
    module docstring, "Value grammars"). The structure names it as it names
    ``JsonArgs``; the region reads it from ``entry`` until one of its rows leads to
    ``EXIT`` (``callsieve.grammar.states``), and the composer sends each such row to
    what follows the body where the structure names it.

    region: the ``Region`` (states, rules, a model mixin of guards and actions), or the
      name of an engine region (``"json_body"``, ``"python_value"``).
    entry: the state the body begins in; ``begin``: an action of the region's model run
      when the body is entered (with the character that led there), "" for none.
    first: the characters the body may begin with, where the structure lets something
      else begin too ("" : any character that begins no marker there).
    reads: what the body gives: ``"args"`` (the arguments of the call it stands in),
      ``"call"`` (one whole call: it makes the call) or ``"calls"`` (several).
    lead: the pattern the body begins with where it opens a block of its own (a bare
      ``Block(None, ...)`` it begins: Llama's ``{"name": …}``), read only where the
      response begins; ``Block.decide`` overrides it. None: it opens no block.
    """

    region: Region | str
    entry: str
    begin: str = ""
    first: str = ""
    reads: str = "args"
    label: str = "body"
    lead: Marker | None = None


#: A parameter value's body.
ValueBody = Union[Raw, JsonValue]
Value = Union[Raw, JsonValue, Choose]


@dataclass(frozen=True)
class Param:
    """One argument: ``open``, then the ``between`` nodes, then the value.

    The key is the ``name`` group (or ``name`` attribute) of ``open``; or, when a
    :class:`Capture` stands in ``between``, that capture's ``name`` group (a key
    written as text between two markers: GLM ``<arg_key>city</arg_key>``, then
    ``<arg_value>``). ``between`` holds markers and at most one capture, and ends
    with a marker: the one the value follows.
    """

    open: Marker
    value: Value
    between: tuple["Node", ...] = ()

    def key_capture(self) -> "Capture | None":
        return next((x for x in self.between if isinstance(x, Capture)), None)


@dataclass(frozen=True)
class Many:
    item: "Node"
    min: int = 0


@dataclass(frozen=True)
class Opt:
    """An optional node. As a tolerance, one side of it is a deviation, reported:

    ``stray=CODE``: the item is not in the format, but models write it (GLM's
    ``</arg_value>`` after a zero-argument name): read when present, with a
    ``Diagnostic``; under strict the node is left out of the grammar. The item is a
    marker, a :class:`Param` (reported when its open marker is read) or
    :class:`JsonArgs` (reported when its first character is read).

    ``missing=CODE``: the item, a marker, is in the format, but models leave it out;
    only as the marker a value follows (the last of ``Param.between``, GLM's
    ``<arg_value>``): where it is expected, anything that is no marker listened for
    there begins the value, with a ``Diagnostic``; under strict the marker is required.
    """

    item: "Node"
    stray: str = ""
    missing: str = ""


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


Node = Union[Marker, Param, Many, Opt, Alt, Seq, Call, Capture, JsonArgs, JsonCall, JsonCalls, PythonCalls, PythonCall, Body]
#: The bodies a region of states reads (every leaf of the structure that is no marker
#: and no value).
BODIES = (Capture, JsonArgs, JsonCall, JsonCalls, PythonCalls, PythonCall, Body)


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
    #: The block is chosen once the pattern has matched whole and no other dialect's
    #: still may; when none may, the opener is text.
    decide: Marker | None = None
    #: False: never opened from prose; a ``Header`` case opens it (its open marker ends
    #: the header, the header's match names the call).
    prose: bool = True
    #: Tolerance: this block is a deviation (a bare block: a call without its wrapper;
    #: with an open marker: a wrapper the format does not have, Hermes-family
    #: ``<tool>``); the Diagnostic code emitted when it is read. Left out under strict.
    tolerance: str = ""
    #: Read only with ``tools=`` given (its evidence is that it names a declared tool):
    #: without it, its opener is no marker. A tolerance's option.
    needs_tools: bool = False
    #: A back-reference across markers: what the opener reads in its ``(?P<same>…)``
    #: group (nothing, where it has none) every marker of the block must read in its own
    #: (compared case-insensitively); one that reads otherwise is no marker there (a
    #: tolerated arbitrary prefix, ``<｜FOO｜invoke>``, only where every tag has it).
    same: bool = False
    #: Tolerance: at the end of the stream, the block is read as closed when its last
    #: call is complete (its close was read, or its JSON arguments closed and only the
    #: call's close and the block's are left): servers strip stop tokens such as
    #: harmony's ``<|call|>``. The Diagnostic code emitted. Left out under strict.
    eof_close: str = ""


@dataclass(frozen=True)
class HeaderCase:
    """What a message body is when ``pattern`` (``regex.search`` over the header as
    written, its markers included) matches: ``"reasoning"``, ``"text"`` or ``"call"``
    (then its ``name`` group names the call)."""

    label: str
    pattern: str
    body: str
    #: Tolerance (a call case): other readings of the header (``Variant``: a pattern
    #: searched over the header as written, with a ``name`` group, examples, a code),
    #: tried in order once the case matched; one that matches names the call, except
    #: that with ``tools=`` given it is taken only when its name is a known tool and
    #: the case's own is not. Never under strict.
    variants: tuple["Variant", ...] = ()


@dataclass(frozen=True)
class Header:
    """Message headers that decide what their body is (gpt-oss harmony).

    A header begins at one of ``starts`` in prose (each opens a *part*, a state of its
    own), holds short text and the markers of ``parts`` (each opens its part), and is
    decided at ``end``: the first of ``cases`` that matches says what follows. Reasoning
    is read until one of ``ends`` (or a new header); text is prose again; a call opens
    ``call`` (a ``Block(prose=False)`` whose open marker is ``end``). The header and
    ``ends`` are framing: in the ``raw`` of the Reasoning or Text next to them (or the
    call's). A header longer than ``max_chars``, or one the stream ends in, is released
    as text with a Diagnostic. Every other marker of ``tokens`` standing in prose is
    framing too.
    """

    name: str
    starts: tuple[tuple[Marker, str], ...]
    parts: tuple[tuple[Marker, str], ...]
    end: Marker
    cases: tuple[HeaderCase, ...]
    ends: tuple[Marker, ...]
    call: Block
    tokens: tuple[Marker, ...] = ()
    max_chars: int = 256
    #: Where a prompt may end inside a header (gpt-oss prompts end with
    #: ``<|start|>assistant``): markers that open a part only at the very start of the
    #: output (harmony's role-part recipient `` to=functions.f<|channel|>…``), each
    #: with the part it opens. The stream then begins in a state of its own that listens
    #: for them; anything else is prose, read as from the start.
    at_start: tuple[tuple[Marker, str], ...] = ()
    #: A start marker inside a header begins a new header, the text before it released
    #: (with a Diagnostic). False: it is the header's text (harmony's doubled
    #: ``<|start|>assistant`` is still decided); True where a start marker never stands
    #: in a header (Kimi K3: ``<|close|>`` mentioned in prose, then a real call).
    restart: bool = False


@dataclass(frozen=True)
class Reasoning:
    """A reasoning section a dialect's models write: ``open`` … ``close``, read in the
    state ``state`` (families that name one state share it: its closes all end it).

    The composer builds the reasoning region from the union of the enabled dialects'
    declarations (equal declarations count once): prose listens for every ``open``
    (entering the family's state) and every ``close`` (a stray close, shown with a
    Diagnostic); the state listens for its family's closes and, as framing that rides
    in ``Reasoning.raw``, for its own opens (a ``<think>`` written inside reasoning).
    ``prefill``: a prompt may end with ``open`` (``Sieve(start_in_reasoning=True)``
    starts in this state); at most one such state among the enabled dialects.
    """

    open: Marker
    close: Marker
    state: str = "in_reasoning"
    prefill: bool = False


@dataclass(frozen=True)
class Dialect:
    name: str
    title: str
    blocks: tuple[Block, ...]
    #: Regions of states of the dialect's own (see ``callsieve.grammar.states.Region``).
    regions: tuple[Region, ...] = ()
    #: The reasoning sections its models write (``callsieve.grammar.reasoning``).
    reasoning: tuple[Reasoning, ...] = ()
    #: Message headers deciding their bodies (harmony): ``Header``.
    headers: tuple[Header, ...] = ()
    #: Framing: tokens its models write around text or calls that are no part of a
    #: block or a header (Command's ``<|START_TEXT|>``, ``<|END_OF_TURN_TOKEN|>``;
    #: ERNIE's ``<response>``). Standing in prose they ride in the ``raw`` of an empty
    #: ``Text`` (never in any ``text``), in reasoning in ``Reasoning.raw``; anywhere
    #: else they mean nothing (data in a value, markup a block did not expect).
    framing: tuple[Marker, ...] = ()
    #: Tolerated: a block's own marker standing in prose with no block around it (an
    #: orphan control token: Kimi's ``<|tool_calls_section_end|>`` or
    #: ``<|tool_call_argument_begin|>``), each with its Diagnostic code: framing as above
    #: (in the ``raw`` of an empty ``Text``) and reported; under ``strict``, text.
    orphans: tuple[tuple[Marker, str], ...] = ()
    #: How visible text stands in a document of this dialect, for property tests (a
    #: harmony final or commentary message); None: as it is.
    wrap_text: Callable[[str, int], str] | None = field(default=None, compare=False)
    #: Its models write tool-call blocks inside an unclosed reasoning section, and their
    #: serving stacks take them as calls that end it (Qwen3, Kimi-K2-Thinking, DeepSeek
    #: V3.1): with ``Sieve(calls_in_reasoning="dialect")`` (the default) its block openers
    #: are listened for in reasoning too, and one there ends it with a Diagnostic.
    calls_in_reasoning: bool = False
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

    def values(self) -> Iterator[ValueBody]:
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
        yield from _walk((nodes.open, *nodes.between))
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


def tag_fields(match: "re.Match[str] | regex.Match[str]", names: tuple[str, ...] | None = None) -> dict[str, str]:
    """The name and attributes a marker match carries. ``names``: which of the groups
    ``attrs`` and ``name`` its pattern has, when the caller knows (each asked alone is
    several times cheaper than ``groupdict``, for ``regex``)."""
    attrs: str | None
    name: str | None
    same: str | None
    if names is None:
        groups: Mapping[str, str | None] = match.groupdict()
        attrs = groups.get("attrs")
        name = groups.get("name")
        same = groups.get("same")
    else:
        attrs = match.group("attrs") if "attrs" in names else None
        name = match.group("name") if "name" in names else None
        same = match.group("same") if "same" in names else None
    out: dict[str, str] = {}
    if attrs:
        out.update(parse_attrs(attrs))
    if name is not None:
        out["name"] = name.strip()
    if same is not None:
        out[SAME_FIELD] = same
    return out


#: The field a marker's ``(?P<same>…)`` group is read into (``Block(same=True)``); no
#: attribute can have this name.
SAME_FIELD = "(same)"


def _names_something(m: Marker) -> bool:
    return "(?P<name>" in m.pattern or "(?P<attrs>" in m.pattern


# ------------------------------------------------------------ declaration shapes
#: What may stand in a block's body, a call's items, ``Many``, ``Opt``, ``Alt``, ``Seq``.
_NODE_TYPES = (Marker, Param, Many, Opt, Alt, Seq, Call, Capture, JsonArgs, JsonCall, JsonCalls, PythonCalls, PythonCall, Body)
#: What may stand as a parameter's value (and nowhere else).
_BODY_TYPES = (Raw, JsonValue, Choose)


def _a_tuple(value: object, what: str, where: str, one: str) -> tuple[object, ...]:
    """``value`` as the tuple a field must hold, or the GrammarError that names the fix:
    a lone item or a str where the tuple belongs (the trailing comma left out), a list
    (a dialect must be frozen and hashable)."""
    if isinstance(value, tuple):
        return value
    if isinstance(value, list):
        raise GrammarError(f"{where}: {what} is a list; write a tuple, ({one}, ...): a dialect is frozen data")
    raise GrammarError(f"{where}: {what} must be a tuple, not {type(value).__name__} {_short(value)}; write "
                       f"({one},) (the trailing comma makes a tuple of one)")


def _short(value: object) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def _check_node(n: object, where: str) -> None:
    """One structure node and what it holds: the types the vocabulary allows there, each
    misuse named with the construct that fits (a JSON value as a call's body is
    ``JsonArgs``, a raw value belongs in a ``Param``, ...)."""
    if isinstance(n, _BODY_TYPES):
        kind = type(n).__name__
        if isinstance(n, JsonValue):
            fix = ("a call's arguments written as one JSON object are JsonArgs() (inside a Call whose open marker "
                   "or capture names it), a whole call written as JSON is JsonCall(), several JsonCalls(); "
                   "JsonValue(close) is one parameter's value: Param(open, JsonValue(close))")
        else:
            fix = f"a value stands in a parameter: Param(open_marker, {kind}(...))"
        raise GrammarError(f"{where}: {kind} is a parameter's value, not a structure node; {fix}")
    if not isinstance(n, _NODE_TYPES):
        hint = " (a marker is Marker(pattern, (example,)))" if isinstance(n, str) else ""
        raise GrammarError(f"{where}: {_short(n)} is not a structure node{hint}; use Marker, Call, Param, Many, Opt, "
                           "Alt, Seq, Capture, JsonArgs, JsonCall, JsonCalls, PythonCalls, PythonCall or Body")
    if isinstance(n, Marker):
        _check_marker_shape(n, where)
    elif isinstance(n, Call):
        if n.open is not None:
            _check_marker_shape(n.open, f"{where}, call open")
        if n.close is not None:
            _check_marker_shape(n.close, f"{where}, call close")
        for item in n.items:
            _check_node(item, f"{where}, call {n.open.shown() if isinstance(n.open, Marker) else '(no open)'!r}")
    elif isinstance(n, Param):
        if not isinstance(n.open, Marker):
            raise GrammarError(f"{where}: a parameter opens with a Marker, not {_short(n.open)}: Param(Marker(...), value)")
        _check_marker_shape(n.open, f"{where}, parameter open")
        at = f"{where}, parameter {n.open.shown()!r}"
        if isinstance(n.value, JsonArgs):
            raise GrammarError(f"{at}: JsonArgs() is a whole call's arguments object, not one parameter's value; "
                               "a parameter's JSON value is JsonValue(close_marker)")
        if not isinstance(n.value, _BODY_TYPES):
            raise GrammarError(f"{at}: its value must be Raw(close), JsonValue(close) or Choose(...), "
                               f"not {_short(n.value)}")
        for body in n.value.bodies() if isinstance(n.value, Choose) else (n.value,):
            if not isinstance(body, (Raw, JsonValue)):
                raise GrammarError(f"{at}: a Choose case's value must be Raw(close) or JsonValue(close), not {_short(body)}")
            if not isinstance(body.close, Marker):
                raise GrammarError(f"{at}: a value's close must be a Marker, not {_short(body.close)}")
            _check_marker_shape(body.close, f"{at}, value close")
        for x in _a_tuple(n.between, "between", at, "Marker(...)"):
            _check_node(x, at)
    elif isinstance(n, (Many, Opt)):
        _check_node(n.item, where)
    elif isinstance(n, (Alt, Seq)):
        for x in n.items:
            _check_node(x, where)


def _check_marker_shape(m: Marker, where: str) -> None:
    """A marker's fields hold what they say: a pattern string and a tuple of example
    strings (rule 3), before anything reads them."""
    if not isinstance(m.pattern, str):
        raise GrammarError(f"{where}: a marker's pattern must be a str (a regular expression), not {_short(m.pattern)}")
    at = f"{where}, marker {m.pattern!r}"
    if isinstance(m.examples, str):
        raise GrammarError(f"{at}: examples is the str {m.examples!r}; write a tuple, ({m.examples!r},) (the trailing "
                           "comma makes a tuple of one) (rule 3)")
    examples = _a_tuple(m.examples, "examples", at, "'<literal>'")
    if not examples:
        raise GrammarError(f"{at}: give at least one literal example it matches, e.g. Marker({m.pattern!r}, "
                           "('<the tag as written>',)) (rule 3)")
    bad = [ex for ex in examples if not isinstance(ex, str)]
    if bad:
        raise GrammarError(f"{at}: every example is a str, not {_short(bad[0])} (rule 3)")
    for field_name, kind in (("variants", "Variant(...)"), ("prefixes", "Prefix(...)")):
        _a_tuple(getattr(m, field_name), field_name, at, kind)


def check_shapes(dialect: Dialect) -> None:
    """The declaration's fields hold the vocabulary's types, each misuse a
    :class:`GrammarError` naming the fix (run first by :func:`validate`, so that no
    later check trips over a str where a tuple belongs)."""
    if not isinstance(dialect, Dialect):
        raise GrammarError(f"expected a Dialect, not {type(dialect).__name__} {_short(dialect)}")
    if not isinstance(dialect.name, str):
        raise GrammarError(f"Dialect(name=...) must be a str, not {_short(dialect.name)}")
    where = f"dialect {dialect.name}"
    if isinstance(dialect.blocks, Block):
        raise GrammarError(f"{where}: blocks is one Block; write blocks=(Block(...),) (the trailing comma makes a "
                           "tuple of one)")
    for b in _a_tuple(dialect.blocks, "blocks", where, "Block(...)"):
        if not isinstance(b, Block):
            raise GrammarError(f"{where}: blocks holds {_short(b)}; each must be a Block(open, body, close)")
        shown = b.open.shown() if isinstance(b.open, Marker) else "(bare)"
        at = f"{where}, block {shown!r}"
        for m, role in ((b.open, "open"), (b.close, "close")):
            if m is not None and not isinstance(m, Marker):
                raise GrammarError(f"{at}: the block's {role} must be a Marker or None, not {_short(m)}")
            if m is not None:
                _check_marker_shape(m, f"{where}, block {role}")
        _check_node(b.body, at)
    for field_name, kind in (("reasoning", Reasoning), ("headers", Header), ("regions", Region)):
        for x in _a_tuple(getattr(dialect, field_name), field_name, where, f"{kind.__name__}(...)"):
            if not isinstance(x, kind):
                raise GrammarError(f"{where}: {field_name} holds {_short(x)}; each must be a {kind.__name__}")
    for r in dialect.reasoning:
        for m in (r.open, r.close):
            _check_marker_shape(m, f"{where}, reasoning")


def validate(dialect: Dialect) -> None:
    """Raise :class:`GrammarError` naming the dialect, the marker and the rule it breaks."""
    check_shapes(dialect)
    if not re.fullmatch(r"[a-z][a-z0-9_]*", dialect.name):
        raise GrammarError(f"dialect name {dialect.name!r}: use lower_snake_case")
    if not dialect.blocks and not dialect.regions and not dialect.reasoning and not dialect.framing:
        raise GrammarError(f"dialect {dialect.name}: declares no block, no region, no reasoning and no framing")
    by_header = {id(n) for b in dialect.blocks if not b.prose for n in _walk((b,)) if isinstance(n, Call)}
    for h in dialect.headers:
        for m in (h.end, *(m for m, _ in h.starts), *(m for m, _ in h.parts), *h.ends, *h.tokens,
                  *(m for m, _ in h.at_start)):
            validate_marker(m, f"dialect {dialect.name}, header marker {m.shown()!r}")
        for c in h.cases:
            if c.body not in ("reasoning", "text", "call"):
                raise GrammarError(f"dialect {dialect.name}: header case {c.label!r}: body must be reasoning, text or call")
            try:
                regex.compile(c.pattern)
            except regex.error as e:
                raise GrammarError(f"dialect {dialect.name}: header case {c.label!r} does not compile: {e}") from None
            for v in c.variants:
                if c.body != "call":
                    raise GrammarError(f"dialect {dialect.name}: header case variant {v.code!r} needs a call case")
                _check_naming_variant(dialect, "header case variant", v, whole=False)
        if h.call.prose or h.call.open != h.end:
            raise GrammarError(f"dialect {dialect.name}: a header's call block must be Block(prose=False) opened by its end marker")
    for n in _walk(dialect.blocks):
        if id(n) in by_header:
            continue
        keys = {id(x.key_capture()) for x in _walk(n.items) if isinstance(x, Param)} if isinstance(n, Call) else set()
        named_inside = isinstance(n, Call) and any(
            isinstance(x, Capture) and "(?P<name>" in x.pattern and id(x) not in keys for x in _walk(n.items)
        )
        if isinstance(n, Call) and (n.open is None or not _names_something(n.open)) and not named_inside:
            raise GrammarError(
                f"dialect {dialect.name}: call without a name: call open {n.open.shown() if n.open else None!r} has no "
                "(?P<name>...) group or attribute list, and no capture in the call has one"
            )
        if isinstance(n, Param):
            if n.between:
                caps = [x for x in n.between if isinstance(x, Capture)]
                strays = [x for x in n.between[:-1] if isinstance(x, Opt)]
                if len(caps) > 1 or any(not isinstance(x, (Marker, Capture, Opt)) for x in n.between) or any(
                        not isinstance(x.item, Marker) or not x.stray for x in strays):
                    raise GrammarError(
                        f"dialect {dialect.name}: parameter {n.open.shown()!r}: between holds markers and at most one "
                        "capture (and stray markers, Opt(marker, stray=CODE)), the last the value's opener"
                    )
                last = n.between[-1]
                if not isinstance(last, Marker) and not (isinstance(last, Opt) and isinstance(last.item, Marker)
                                                         and last.missing and not last.stray):
                    raise GrammarError(
                        f"dialect {dialect.name}: parameter {n.open.shown()!r}: between must end with a marker "
                        "(the one the value follows), or Opt(marker, missing=CODE) when models leave it out"
                    )
                if caps and "(?P<name>" not in caps[0].pattern:
                    raise GrammarError(
                        f"dialect {dialect.name}: parameter {n.open.shown()!r}: its key capture {caps[0].pattern!r} "
                        "has no (?P<name>...) group"
                    )
            if not _names_something(n.open) and n.key_capture() is None:
                raise GrammarError(
                    f"dialect {dialect.name}: parameter without a key: parameter open {n.open.shown()!r} "
                    "has no (?P<name>...) group or attribute list, and no capture between it and its value"
                )
    for b in dialect.blocks:
        if b.open is None and b.close is not None and not b.close_optional and not b.tolerance:
            raise GrammarError(f"dialect {dialect.name}: a bare block (open=None) must have close_optional=True or "
                               "close=None (or be a tolerance whose close is the evidence)")
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
        for p in m.prefixes:
            where = f"dialect {dialect.name}, prefix {p.code!r} of marker {m.shown()!r}"
            if not re.fullmatch(r"[a-z][a-z0-9_]*", p.code):
                raise GrammarError(f"{where}: a prefix's code must be lower_snake_case")
            if not p.examples or not all(regex.fullmatch(p.pattern, ex) for ex in p.examples):
                raise GrammarError(f"{where}: give examples its pattern {p.pattern!r} matches (rule 3)")
            if not re.fullmatch(r"\[(?:[^\]\\^]|\\.)+\]|\\?[^\\()|?*+{}\[\].^$]", p.pattern) or first_chars(p.pattern) is None:
                raise GrammarError(f"{where}: a prefix is one character, a literal or a class of literal characters")
            validate_marker(m.with_prefix(p), where)
    for m in dialect.framing:
        validate_marker(m, f"dialect {dialect.name}, framing marker {m.shown()!r}")
    for m, code in dialect.orphans:
        validate_marker(m, f"dialect {dialect.name}, orphan marker {m.shown()!r}")
        if not re.fullmatch(r"[a-z][a-z0-9_]*", code):
            raise GrammarError(f"dialect {dialect.name}, orphan marker {m.shown()!r}: its code must be lower_snake_case")
    for r in dialect.reasoning:
        for m in (r.open, r.close):
            validate_marker(m, f"dialect {dialect.name}, reasoning marker {m.shown()!r}")
        if not re.fullmatch(r"[a-z][a-z0-9_.]*", r.state):
            raise GrammarError(f"dialect {dialect.name}: reasoning state {r.state!r}: use lower_snake_case")
    for b in dialect.blocks:
        if b.tolerance and b.open is not None and (b.close is None or b.close_optional):
            raise GrammarError(f"dialect {dialect.name}: a block with an open marker that is a tolerance (a wrapper the "
                               "format does not have) needs its close: the close is the evidence")
        if b.same and b.open is None:
            raise GrammarError(f"dialect {dialect.name}: Block(same=True) reads its back-reference from the block's "
                               "opener: give the block an open marker")
        if b.needs_tools and not b.tolerance:
            raise GrammarError(f"dialect {dialect.name}: Block(needs_tools=True) is a tolerance's option (give tolerance=)")
        if b.eof_close and not re.fullmatch(r"[a-z][a-z0-9_]*", b.eof_close):
            raise GrammarError(f"dialect {dialect.name}: Block(eof_close={b.eof_close!r}): use lower_snake_case")
    in_between = {id(x) for n in _walk(dialect.blocks) if isinstance(n, Param) for x in n.between}
    # (an Opt(marker, missing=) right before a JSON body, in a call after its name capture)
    before_body = {id(x) for n in _walk(dialect.blocks) if isinstance(n, Call)
                   for x, nxt in zip(n.items, n.items[1:])
                   if isinstance(x, Opt) and isinstance(x.item, Marker) and isinstance(nxt, (JsonArgs, JsonCall, JsonCalls))
                   and any(isinstance(y, Capture) for y in n.items[: n.items.index(x)])}
    for n in _walk(dialect.blocks):
        if isinstance(n, Opt):
            for code in (n.stray, n.missing):
                if code and not re.fullmatch(r"[a-z][a-z0-9_]*", code):
                    raise GrammarError(f"dialect {dialect.name}: Opt code {code!r}: use lower_snake_case")
            if n.stray and n.missing:
                raise GrammarError(f"dialect {dialect.name}: an Opt is stray or missing, not both")
            if n.stray and not isinstance(n.item, (Marker, Param, JsonArgs)):
                raise GrammarError(f"dialect {dialect.name}: Opt(stray=) holds one marker, one parameter (its open "
                                   "marker is then the stray one) or a call's JSON arguments (JsonArgs())")
            if n.missing and id(n) not in in_between and id(n) not in before_body:
                raise GrammarError(f"dialect {dialect.name}: Opt(missing=) stands only as a value's opener "
                                   "(the last of Param.between), or in a call's items between a capture and "
                                   "the JSON body after it")
    for body in dialect.values():
        if isinstance(body, Raw):
            for v in body.trailing:
                where = f"dialect {dialect.name}, trailing text {v.code!r} of value close {body.close.shown()!r}"
                if not re.fullmatch(r"[a-z][a-z0-9_]*", v.code):
                    raise GrammarError(f"{where}: its code must be lower_snake_case")
                validate_marker(Marker(v.pattern, v.examples, v.label or v.code), where)
            code = body.style.escaped_once
            if code and (not re.fullmatch(r"[a-z][a-z0-9_]*", code) or not body.style.json_when_valid):
                raise GrammarError(f"dialect {dialect.name}: ValueStyle(escaped_once={code!r}): a lower_snake_case "
                                   "code, on a json_when_valid style")
    for n in _walk(dialect.blocks):
        if isinstance(n, Capture):
            try:
                regex.compile(n.pattern)
            except regex.error as e:
                raise GrammarError(f"dialect {dialect.name}: capture pattern {n.pattern!r} does not compile: {e}") from None
            for v in n.variants:
                _check_naming_variant(dialect, "capture variant", v, whole=True, nameless=True)
            if n.loose is not None:
                _check_naming_variant(dialect, "capture's loose reading", n.loose, whole=True)
        if isinstance(n, Block) and n.decide is not None:
            d = n.decide
            try:
                pd = regex.compile(d.pattern)
            except regex.error as e:
                raise GrammarError(f"dialect {dialect.name}: decide pattern {d.pattern!r} does not compile: {e}") from None
            for ex in d.examples:
                if not pd.fullmatch(ex):
                    raise GrammarError(f"dialect {dialect.name}: decide example {ex!r} does not match its pattern")
            for v in d.variants:
                try:
                    pv = regex.compile(v.pattern)
                except regex.error as e:
                    raise GrammarError(f"dialect {dialect.name}: decide variant {v.code!r} does not compile: {e}") from None
                if not v.examples or not all(pv.fullmatch(ex) for ex in v.examples):
                    raise GrammarError(f"dialect {dialect.name}: decide variant {v.code!r}: give examples its pattern matches")


def _check_naming_variant(dialect: Dialect, kind: str, v: Variant, whole: bool, nameless: bool = False) -> None:
    """A variant that names a call (a capture's or a header case's): its pattern compiles,
    has a ``name`` group and matches its examples (whole, or somewhere in them).
    ``nameless``: a capture's variant may have no name group: it then names the one tool
    declared (``tools=`` with exactly one), never another."""
    try:
        pv = regex.compile(v.pattern)
    except regex.error as e:
        raise GrammarError(f"dialect {dialect.name}: {kind} {v.code!r} does not compile: {e}") from None
    found = pv.fullmatch if whole else pv.search
    if ("(?P<name>" not in v.pattern and not nameless) or not v.examples or not all(found(ex) for ex in v.examples):
        raise GrammarError(f"dialect {dialect.name}: {kind} {v.code!r} needs a name group and "
                           "examples its pattern matches")


def first_chars(pattern: str) -> set[str] | None:
    """The exact set of characters a match of ``pattern`` can begin with, or None when
    that set is not a small set of literals (a class range, ``.``, an empty match)."""
    return _edge_chars(pattern, 0)


def last_chars(pattern: str) -> set[str] | None:
    """The characters a match of ``pattern`` can end with (a superset is never
    claimed: None when the pattern's last atom is not a small set of literals)."""
    return _edge_chars(pattern, -1)


def _edge_chars(pattern: str, edge: int) -> set[str] | None:
    got = _edge_chars_cached(pattern, edge)
    return set(got) if got is not None else None


@functools.lru_cache(maxsize=4096)
def _edge_chars_cached(pattern: str, edge: int) -> frozenset[str] | None:
    # (Every machine composed asks again about the same patterns; parsing is slow.)
    got = _edge_chars_parsed(pattern, edge)
    return frozenset(got) if got is not None else None


def _edge_chars_parsed(pattern: str, edge: int) -> set[str] | None:
    """``edge`` 0: the first characters of a match; -1: the last ones."""
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
        op, av = items[edge]
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
        if edge == -1 and name in ("MAX_REPEAT", "MIN_REPEAT") and av[0] >= 1:
            return of(list(av[2]), flags)  # x{1,}: a match ends as x's matches do
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
    if m.anchor not in ("", "word", "line"):
        raise GrammarError(f"{where}: anchor {m.anchor!r}: one of '' (anywhere), 'word' or 'line'")
    starts = first_chars(m.pattern)
    if not starts:
        raise GrammarError(
            f"{where}: pattern {m.pattern!r} must begin with one literal character or a class of "
            "literal characters (its start characters, rule 3)"
        )
    for ex in m.examples:
        if not partial.fullmatch(ex):
            raise GrammarError(f"{where}: example {ex!r} does not match its pattern {m.pattern!r} (rule 3: each "
                               "example is one whole tag as the model writes it, and the pattern must match it all)")
        if len(ex) > MAX_TAG_CHARS:
            raise GrammarError(f"{where}: example {ex!r} is longer than {MAX_TAG_CHARS} (rule 3)")
