"""The per-request state the server plugins share (:mod:`callsieve.vllm`, :mod:`callsieve.sglang`).

A server hands its tool parser the text one detokenized step at a time and asks, per
step, for what to send: content, reasoning and tool-call fragments. It also reads the
parser's bookkeeping at the end of a stream (``prev_tool_call_arr`` and
``streamed_args_for_tool``, to send arguments "parsed but not yet streamed"). This
module holds both, over one :class:`callsieve.Sieve`, and knows nothing of either
server: the plugins map a :class:`Step` to their own delta types.

Theory of operation:

1. One :class:`ServerStream` per request (per choice). ``feed(delta_text)`` feeds the
   sieve and turns its events into a :class:`Step`; ``close()`` ends the stream (a held
   partial marker, an unterminated block) and returns the last step.
2. ``Text`` is content. ``Reasoning`` is reasoning, or, when the server runs no
   reasoning parser (``reasoning="content"``), its exact input (tags included) goes to
   content: the server's convention is that reasoning markup is content then, and a
   call quoted inside reasoning still stays out of ``tool_calls``.
3. A call is a :class:`CallPiece` with ``id`` and ``name`` on its first piece only
   (OpenAI's streaming shape); its argument fragments follow with neither. Indices are
   the sieve's: 0, 1, ... per stream. With ``stream_arguments=False`` a call is sent
   whole, once decided, as one piece.
4. The bookkeeping follows what was sent: ``prev_tool_call_arr[i]`` is
   ``{"name", "arguments"}`` (the arguments streamed so far as a JSON string while the
   call is open, the decided arguments dict once it closed) and
   ``streamed_args_for_tool[i]`` the argument text sent; so the servers' "remaining
   arguments" at the end of a stream is always empty, never a second copy.
5. A call the sieve abandons (``ToolCallAbandoned``: its block proved malformed, or
   the stream ended inside it) is shown once: its markup is neither content nor a call.
   If its start was sent it is listed in ``incomplete`` (SGLang reads it to keep
   ``finish_reason`` from becoming ``"tool_calls"``); sent whole
   (``stream_arguments=False``) it was never sent at all. ``calls_made`` counts the
   calls that were decided.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Iterable, Literal, Mapping

from callsieve.events import Event, Reasoning, Text, ToolCall, ToolCallAbandoned, ToolCallDelta, ToolCallStart
from callsieve.grammar.api import Dialect
from callsieve.grammar.registry import ALIASES, REGISTRY
from callsieve.sieve import Sieve

ReasoningRoute = Literal["reasoning", "content"]


@dataclass
class CallPiece:
    """One tool-call fragment to send: ``id`` and ``name`` on a call's first piece only."""

    index: int
    arguments: str
    id: str | None = None
    name: str | None = None


@dataclass
class Step:
    """What one server step sends: content, reasoning, tool-call pieces (in order)."""

    content: str = ""
    reasoning: str = ""
    calls: list[CallPiece] = field(default_factory=list)
    #: The events this step decided (for callers that need more than the three fields).
    events: list[Event] = field(default_factory=list)

    def __bool__(self) -> bool:
        return bool(self.content or self.reasoning or self.calls)


def tool_schemas(tools: Iterable[Any] | None) -> list[Any] | None:
    """Tool schemas as plain data, from a server's request objects.

    Servers hand pydantic models (Chat Completions ``{"type": "function", "function":
    {...}}`` tools, or Responses-style ``{"type": "function", "name": ...}`` ones);
    :func:`callsieve.schema.load_tools` reads both once they are dicts. Tools of other
    types (a Responses ``web_search``, a custom tool) name no function and are left out.
    """
    if tools is None:
        return None
    out: list[Any] = []
    for tool in tools:
        data = tool.model_dump(exclude_none=True) if hasattr(tool, "model_dump") else tool
        if not isinstance(data, Mapping) or data.get("type", "function") != "function":
            continue
        fn = data.get("function", data)
        if isinstance(fn, Mapping) and fn.get("name"):
            out.append(dict(data))
    return out


class ServerStream:
    """One request's sieve and the bookkeeping a server reads (see the module doc)."""

    def __init__(
        self,
        dialects: Iterable[str | Dialect] | str | None = None,
        tools: Iterable[Any] | None = None,
        *,
        reasoning: ReasoningRoute = "reasoning",
        stream_arguments: bool = True,
        **sieve_options: Any,
    ) -> None:
        self.sieve = Sieve(dialects, tool_schemas(tools) or None, **sieve_options)
        self.reasoning_route: ReasoningRoute = reasoning
        self.stream_arguments = stream_arguments
        self.prev_tool_call_arr: list[dict[str, Any]] = []
        self.streamed_args_for_tool: list[str] = []
        self.current_tool_id = -1
        self.calls_made = 0
        self.incomplete: set[int] = set()
        self._started: set[int] = set()
        self._decided: set[int] = set()
        self.closed = False

    # ---------------------------------------------------------------- steps
    def feed(self, text: str) -> Step:
        if self.closed or not text:
            return Step()
        return self._step(self.sieve.feed(text))

    def close(self) -> Step:
        """End the stream; idempotent (a second call returns an empty step)."""
        if self.closed:
            return Step()
        self.closed = True
        step = self._step(self.sieve.close())
        self.incomplete = self._started - self._decided
        return step

    def _step(self, events: list[Event]) -> Step:
        step = Step(events=events)
        content: list[str] = []
        reasoning: list[str] = []
        for e in events:
            if isinstance(e, Text):
                content.append(e.text)
            elif isinstance(e, Reasoning):
                if self.reasoning_route == "content":
                    content.append(e.raw)
                else:
                    reasoning.append(e.text)
            elif isinstance(e, ToolCallStart):
                self._start(e, step)
            elif isinstance(e, ToolCallDelta):
                self._delta(e.index, e.arguments, step)
            elif isinstance(e, ToolCall):
                self._done(e, step)
            elif isinstance(e, ToolCallAbandoned):
                # Shown once: the markup is in e.raw and goes nowhere; a streamed
                # entry stays incomplete (its closing brace is never sent).
                if e.index in self._started:
                    self.incomplete.add(e.index)
        step.content = "".join(content)
        step.reasoning = "".join(reasoning)
        return step

    def _start(self, e: ToolCallStart, step: Step) -> None:
        while len(self.prev_tool_call_arr) <= e.index:
            self.prev_tool_call_arr.append({"name": None, "arguments": ""})
            self.streamed_args_for_tool.append("")
        self.prev_tool_call_arr[e.index] = {"name": e.name, "arguments": ""}
        self.current_tool_id = e.index
        if self.stream_arguments:
            self._started.add(e.index)
            step.calls.append(CallPiece(e.index, "", id=e.id, name=e.name))

    def _delta(self, index: int, arguments: str, step: Step) -> None:
        if not self.stream_arguments or not arguments:
            return
        self.streamed_args_for_tool[index] += arguments
        self.prev_tool_call_arr[index]["arguments"] = self.streamed_args_for_tool[index]
        last = step.calls[-1] if step.calls else None
        if last is not None and last.index == index:
            last.arguments += arguments
        else:
            step.calls.append(CallPiece(index, arguments))

    def _done(self, e: ToolCall, step: Step) -> None:
        final = e.arguments_json
        if not self.stream_arguments:
            self.streamed_args_for_tool[e.index] = final
            step.calls.append(CallPiece(e.index, final, id=e.id, name=e.name))
        else:
            sent = self.streamed_args_for_tool[e.index]
            # The fragments concatenate to the final JSON (the sieve's contract); should
            # they ever stop short, the rest goes out now rather than never.
            if final != sent and final.startswith(sent):
                self._delta(e.index, final[len(sent):], step)
        self.prev_tool_call_arr[e.index] = {"name": e.name, "arguments": e.arguments}
        self._decided.add(e.index)
        self.calls_made += 1

    # ---------------------------------------------------------------- whole texts
    def parse_whole(self, text: str) -> Step:
        """Feed a complete output and close: one step holding everything, its calls
        whole (one piece each) and only the decided ones: a block that proved malformed
        is content, never a call."""
        first = self.feed(text)
        last = self.close()
        events = first.events + last.events
        calls = [CallPiece(e.index, e.arguments_json, id=e.id, name=e.name) for e in events if isinstance(e, ToolCall)]
        return Step(content=first.content + last.content, reasoning=first.reasoning + last.reasoning,
                    calls=calls, events=events)


def parser_names() -> dict[str, tuple[str, ...] | None]:
    """The parser names the server plugins register, each with the dialects it enables:
    ``callsieve`` (None: ``CALLSIEVE_DIALECTS`` or every built-in dialect) and
    ``callsieve-<name>`` for every registered dialect and alias, spelt with ``_`` and with
    ``-`` (the servers' own names use both: ``minimax-m2``, ``gpt-oss``, ``qwen3_coder``)."""
    names: dict[str, tuple[str, ...] | None] = {"callsieve": None}
    for name in [*REGISTRY, *ALIASES]:
        names[f"callsieve-{name}"] = (name,)
    for name in [*REGISTRY, *ALIASES]:
        names.setdefault(f"callsieve-{name.replace('_', '-')}", (name,))
    return names
