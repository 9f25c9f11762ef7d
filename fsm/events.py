"""The events a sieve emits. Every event carries ``raw``: the exact input it consumed.

``"".join(e.raw for e in events) == input`` for every stream (contract point 2).
Derived events (``ToolCallStart``, ``ToolCallDelta``, most ``Diagnostic``s) have an
empty ``raw``: their input is in the ``raw`` of the ``ToolCall`` that follows. A
``Diagnostic`` carries input only when a policy dropped that input.
"""

from __future__ import annotations

import json
from dataclasses import MISSING, dataclass, fields
from typing import Any, Literal, TypeVar, Union, get_args

_E = TypeVar("_E")


def _fast_init(cls: type[_E]) -> type[_E]:
    """Give a frozen slotted dataclass a faster ``__init__`` (same signature, same result).

    The generated frozen ``__init__`` stores each field with ``object.__setattr__``;
    this one calls the slot descriptors' ``__set__`` directly, about a third cheaper,
    which counts when every ``feed()`` makes an event. The class stays a frozen
    dataclass: assignment after construction still raises ``FrozenInstanceError``.
    """
    params: list[str] = []
    body: list[str] = []
    env: dict[str, Any] = {}
    for f in fields(cls):  # type: ignore[arg-type]
        env[f"_set_{f.name}"] = cls.__dict__[f.name].__set__
        if f.default is not MISSING:
            env[f"_default_{f.name}"] = f.default
            params.append(f"{f.name}=_default_{f.name}")
        else:
            params.append(f.name)
        body.append(f"    _set_{f.name}(self, {f.name})")
    src = f"def __init__(self, {', '.join(params)}):\n" + "\n".join(body) + "\n"
    exec(src, env)
    init = env["__init__"]
    init.__qualname__ = f"{cls.__qualname__}.__init__"
    init.__module__ = cls.__module__
    init.__annotations__ = dict(cls.__init__.__annotations__)
    setattr(cls, "__init__", init)
    return cls


@_fast_init
@dataclass(frozen=True, slots=True)
class Text:
    """Text meant for the user. ``text == raw``: text carries exactly the input it shows."""

    text: str
    raw: str


@_fast_init
@dataclass(frozen=True, slots=True)
class Reasoning:
    """The model's reasoning; the ``<think>`` tags travel in ``raw`` only."""

    text: str
    raw: str


@_fast_init
@dataclass(frozen=True, slots=True)
class ToolCallStart:
    """A call's name is known; its arguments will follow as deltas.

    ``index``: the call's number in this stream (0, 1, ...), shared by its deltas and its
    ``ToolCall``; ``id``: the call's id (see ``Sieve(id_prefix=...)``); ``name``: the
    tool's name. ``raw`` is empty: the input
    is in the final ``ToolCall.raw``."""

    index: int
    id: str
    name: str
    raw: str = ""


@_fast_init
@dataclass(frozen=True, slots=True)
class ToolCallDelta:
    """A fragment of the call's arguments JSON; a call's fragments concatenate to
    ``ToolCall.arguments_json``."""

    index: int
    arguments: str
    raw: str = ""


@_fast_init
@dataclass(frozen=True, slots=True)
class ToolCall:
    """A complete call, decided once its block closed.

    ``arguments``: a dict, values typed by the tool schema when ``tools=`` was given (a
    raw string otherwise); ``raw``: the exact input of the call's markup; ``dialect``: the
    dialect that recognised it (a name in ``callsieve.DIALECTS``)."""

    index: int
    id: str
    name: str
    arguments: dict[str, Any]
    raw: str
    dialect: str

    @property
    def arguments_json(self) -> str:
        """The arguments as JSON text, exactly as the deltas spelled them."""
        return json.dumps(self.arguments, ensure_ascii=False)


#: How much a Diagnostic matters to whoever watches a stream, from least to most:
#:
#: * ``noise``: prose that merely mentions a marker (a block released as text before any
#:   call in it had begun): nothing was lost, nothing meant as a call was shown;
#: * ``tolerated``: a call stands, read with an assumption the message states (a
#:   deviation from its format, a value kept as the raw string, a tool not in ``tools``);
#: * ``released``: markup the model may have meant as a call was shown to the user as
#:   text (a block malformed, cut off by the stream's end, too large; reasoning shown as
#:   text before a stray ``</think>``), or a call whose start was streamed was abandoned
#:   (``ToolCallAbandoned``, which holds its markup: shown once, never as text);
#: * ``dropped``: input left the output by policy (``on_malformed="drop"`` or
#:   ``"raise"``, ``unknown_tool="drop"``); it rides on the Diagnostic's ``raw``.
#:
#: A proxy alerts on ``released`` and ``dropped`` and may ignore ``noise``.
Severity = Literal["noise", "tolerated", "released", "dropped"]
SEVERITY_LEVELS: tuple[str, ...] = get_args(Severity)

#: Each code's severity, the one place it is written. A block's code (``malformed_block``,
#: ``unterminated_block``, ``block_too_large``) is ``released`` when shown as text and
#: ``dropped`` under ``on_malformed="drop"`` or ``"raise"``; ``malformed_block`` is
#: ``noise`` when no call in the block had begun. ``unknown_tool`` is ``tolerated`` while
#: the call stands (the default policy), ``released`` under ``unknown_tool="text"`` and
#: ``dropped`` under ``"drop"``. The rest never vary.
SEVERITY: dict[str, Severity] = {
    "malformed_block": "released",
    "unterminated_block": "released",
    "block_too_large": "released",
    "unknown_tool": "tolerated",
    "dropped_call": "dropped",
    "type_mismatch": "tolerated",
    "stray_reasoning_close": "released",
    "reasoning_closed_by_call": "tolerated",
    "call_in_reasoning": "noise",  # (issue 22: a call the model only wrote about)
    "markup_in_code": "noise",  # (issue 22: markup shown in code, never run)
    # the tolerances (docs/tolerances.md): a call stands, read with what was assumed
    "missing_block_open": "tolerated",
    "implied_param_close": "tolerated",
    "implied_call_close": "tolerated",
    "dsml_variant": "tolerated",
    "python_literal": "tolerated",
    "repeated_param_array": "tolerated",
    "call_id_variant": "tolerated",
    "call_id_as_written": "tolerated",
    "end_instead_of_call": "tolerated",
    "nested_cdata": "tolerated",
    # a raw value that opens a heredoc it never ends: a markup close may have cut it
    "unterminated_heredoc": "tolerated",
    "unwrapped_arguments": "tolerated",
    "doubled_key_close": "tolerated",
    "glued_content_type": "tolerated",
    "param_close_variant": "tolerated",
    "doubled_lt": "tolerated",
    "missing_value_open": "tolerated",
    "doubled_key_open": "tolerated",
    "stray_value_close": "tolerated",
    "missing_block_close": "tolerated",
    "missing_args_open": "tolerated",
    "nameless_call": "tolerated",
    "calls_open_variant": "tolerated",
    "orphan_token": "tolerated",
    # round two's rest (issue 24)
    "json_invoke_body": "tolerated",
    "call_open_as_key": "tolerated",
    "literal_newline": "tolerated",
    "double_escaped_value": "tolerated",
    "function_wrapper": "tolerated",
    "generic_wrapper": "tolerated",
    "mixed_tags": "tolerated",
    "arbitrary_prefix": "tolerated",
    # JSON bodies read as what they mean (issue 23; issue 21, item 4)
    "arguments_as_string": "tolerated",
    "lone_surrogate": "tolerated",
    "raw_control_character": "tolerated",
    "duplicate_call_id": "tolerated",
    # value grammars (issue 21): one call refused while its block stands; LFM2's repairs
    "malformed_call": "dropped",
    "raw_newline_in_string": "tolerated",
    "leading_zero_number": "tolerated",
    "keyword_argument_name": "tolerated",
}


@_fast_init
@dataclass(frozen=True, slots=True)
class ToolCallAbandoned:
    """A call whose ``ToolCallStart`` was streamed and that will never complete: its
    block proved malformed after it, the stream ended inside it (a response cut by
    ``max_tokens``), it passed ``max_block_chars``, or ``unknown_tool="text"`` released
    its block. No ``ToolCall`` follows for ``index``, and none of its markup ever
    reaches ``Text`` (contract point 2, *shown once*): it is here, in ``raw``.

    ``index``, ``id``, ``name``: those of its ``ToolCallStart``; ``reason``: the code of
    the ``Diagnostic`` that follows and says why (``malformed_block``,
    ``unterminated_block``, ``block_too_large``, ``unknown_tool``); ``raw``: the input of
    the call's markup read so far (for the first abandoned call of a block, from the
    block's open on; for the last, up to where the block was given up, or to its close
    when the block was read on past its failure: docs/abandoned-calls.md). The arguments
    fragments already streamed for ``index`` never form a complete JSON object: a
    call's closing ``}`` is sent only with its ``ToolCall``."""

    index: int
    id: str
    name: str
    reason: str
    raw: str


@dataclass(frozen=True, slots=True)
class Diagnostic:
    """Something worth knowing: a malformed block released as text, an unknown tool,
    a value that did not fit its schema. ``offset`` is a character offset in the stream.

    ``code`` is one of: ``malformed_block``, ``unterminated_block``, ``block_too_large``
    (the block is released by policy ``on_malformed``; calls it had started are
    abandoned: a ``ToolCallAbandoned`` each, before the Diagnostic, holds their markup), ``malformed_call`` (one
    call of a block that stands is no call: released alone, its markup on a ``ToolCallAbandoned`` when it
    was streamed, else on the Diagnostic's ``raw``), ``unknown_tool`` and ``dropped_call`` (policy ``unknown_tool``),
    ``type_mismatch`` (a value kept as its raw string), ``stray_reasoning_close``
    (``</think>`` without ``<think>``), ``reasoning_closed_by_call`` (the stream ended
    on a tool-call block in unclosed reasoning: a call, policy ``calls_in_reasoning``),
    ``call_in_reasoning`` (a block the reasoning went on from: reasoning), ``markup_in_code`` (a block
    opener in a fence or a code span: text, not run); the tolerances, each saying what was assumed
    (docs/tolerances.md; none under ``Sieve(strict=True)``):
    ``missing_block_open``, ``implied_param_close``, ``implied_call_close``,
    ``dsml_variant``, ``python_literal``, ``repeated_param_array``, ``call_id_variant``, ``call_id_as_written``,
    ``end_instead_of_call``, ``nested_cdata``,
    ``unwrapped_arguments``, ``doubled_key_close``,
    ``glued_content_type``, ``param_close_variant``, ``doubled_lt``, ``missing_value_open``,
    ``doubled_key_open``, ``stray_value_close``, ``missing_block_close``, ``missing_args_open``, ``nameless_call``, ``calls_open_variant``, ``orphan_token``, ``json_invoke_body``,
    ``call_open_as_key``, ``literal_newline``, ``double_escaped_value``, ``function_wrapper``, ``generic_wrapper``,
    ``mixed_tags``, ``arbitrary_prefix``, ``lone_surrogate``, ``raw_control_character``,
    ``raw_newline_in_string``, ``leading_zero_number``, ``keyword_argument_name``;
    ``duplicate_call_id`` (a wire id given twice in one stream, made unique: ``ID#2``);
    ``unterminated_heredoc`` (a raw value opens a shell heredoc whose closing line never
    comes: a markup close inside it may have cut the command; the call stands);
    and ``arguments_as_string`` (arguments written as a JSON-encoded string, decoded once:
    the format of some models, so also under ``strict=True``). ``message`` says what happened, for people;
    ``raw`` holds input only when the policy dropped it (and for ``malformed_call``).

    ``severity``: ``noise``, ``tolerated``, ``released`` or ``dropped`` (see
    :data:`SEVERITY`, the table from code to severity): alert on ``released`` and
    ``dropped``; ``noise`` is prose that merely mentions a marker. Left empty, it is
    the code's own from that table (a code not in it, a dialect's own: ``tolerated``)."""

    code: str
    message: str
    offset: int
    raw: str = ""
    severity: str = ""

    def __post_init__(self) -> None:
        if not self.severity:
            object.__setattr__(self, "severity", SEVERITY.get(self.code, "tolerated"))
        elif self.severity not in SEVERITY_LEVELS:
            raise ValueError(f"severity {self.severity!r}: one of {', '.join(SEVERITY_LEVELS)}")


Event = Union[Text, Reasoning, ToolCallStart, ToolCallDelta, ToolCall, ToolCallAbandoned, Diagnostic]


def merged(events: list[Event]) -> list[Event]:
    """Adjacent Text, Reasoning, and same-call ToolCallDelta events merged into one.

    Chunking changes how text is split across events, never what the merged list is.
    """
    out: list[Event] = []
    for e in events:
        last = out[-1] if out else None
        if isinstance(e, Text) and isinstance(last, Text):
            out[-1] = Text(last.text + e.text, last.raw + e.raw)
        elif isinstance(e, Reasoning) and isinstance(last, Reasoning):
            out[-1] = Reasoning(last.text + e.text, last.raw + e.raw)
        elif isinstance(e, ToolCallDelta) and isinstance(last, ToolCallDelta) and last.index == e.index:
            out[-1] = ToolCallDelta(e.index, last.arguments + e.arguments)
        else:
            out.append(e)
    return out
