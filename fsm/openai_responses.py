"""Responses API streams, cleaned: markup out of ``output_text``, calls as ``function_call`` items.

Used by :func:`callsieve.openai.sieve_stream` when the stream yields Responses events
(``client.responses.create(..., stream=True)`` or ``client.responses.stream(...)``); like
the rest of the adapter, nothing here imports ``openai`` until a pydantic event needs a
new object, so dict-shaped events work without it.

Theory of operation:

1. One :class:`callsieve.Sieve` per text part (``item_id``, ``content_index``). Each
   ``response.output_text.delta`` is fed to it; ``Text`` comes back out as the same
   event with the clean ``delta`` (one upstream delta may become several events, or none
   while a partial marker is held).
2. A call found in the text becomes a ``function_call`` output item of its own, as the
   API itself streams calls: ``response.output_item.added`` (``arguments`` empty) when
   its name is known, ``response.function_call_arguments.delta`` for each argument
   fragment, then ``response.function_call_arguments.done`` and
   ``response.output_item.done`` once the block closed. Its ``call_id`` is the sieve's
   call id and its item ``id`` is ``fc_`` + that id. With ``stream_arguments=False`` the
   four events come together, once the call is decided.
3. Output indices are handed out in order of ``output_item.added``, across the
   upstream's items and the inserted calls, so they stay dense and in the order the
   SDK's accumulator (``ResponseStreamState``) expects; every event is renumbered
   (``sequence_number``) in the order it is emitted.
4. ``response.output_text.done`` closes the part's sieve first (what it still held
   comes out before the done event); its ``text``, the ``content_part.done`` part, the
   message's ``output_item.done`` and the final ``response.completed`` (or
   ``.incomplete``/``.failed``) response carry the clean text, and the final
   response's ``output`` lists the inserted ``function_call`` items at their indices.
5. Reasoning found in the text (``<think>`` ... ``</think>``) becomes a ``reasoning``
   output item of its own, as the API streams reasoning: ``output_item.added``, a
   ``response.reasoning_text.delta`` per piece, then ``response.reasoning_text.done`` and
   ``output_item.done`` (content ``[{"type": "reasoning_text", "text": ...}]``) as soon as
   something else follows it in the text, or the part ends. Reasoning that *leads* a
   message's text stands before that message, as the API orders them: the message's
   ``output_item.added`` (and ``content_part.added``) are held until its text shows
   something other than reasoning, so the reasoning item takes the lower index.
6. A call whose block proves malformed (or is cut by the end of the stream) after it was
   started is abandoned by the sieve (``ToolCallAbandoned``): its item is closed at once
   with ``status: "incomplete"`` (and the arguments streamed so far, which never form a
   whole JSON object); its markup never reaches the text (shown once).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Iterable, Mapping

from callsieve.events import Event, Reasoning, Text, ToolCall, ToolCallAbandoned, ToolCallDelta, ToolCallStart
from callsieve.openai import _get, _replace, StreamSieve
from callsieve.sieve import Sieve

__all__ = ["ResponsesSieve"]

#: Final lifecycle events whose ``response.output`` is rewritten.
_FINAL = ("response.completed", "response.incomplete", "response.failed")


@dataclass
class _Call:
    output_index: int
    item_id: str
    call_id: str
    name: str
    arguments: list[str] = field(default_factory=list)
    status: str = "in_progress"  # then "completed", or "incomplete" when abandoned


@dataclass
class _Thought:
    output_index: int
    item_id: str
    text: list[str] = field(default_factory=list)
    status: str = "in_progress"


@dataclass
class _Part:
    sieve: Sieve
    text: list[str] = field(default_factory=list)
    calls: dict[int, _Call] = field(default_factory=dict)
    closed: bool = False
    template: Any = None  # the part's last output_text.delta, to shape what closing releases
    thought: _Thought | None = None  # the reasoning item open in this part


class ResponsesSieve:
    """The transformation :func:`callsieve.openai.sieve_stream` applies to Responses
    events: ``push(event)`` returns the events it decided, ``end()`` the last ones."""

    def __init__(self, dialects: Iterable[str] | str | None = None, tools: Iterable[Any] | None = None, **options: Any) -> None:
        # The options are the chat adapter's (StreamSieve), checked and defaulted there.
        chat = StreamSieve(dialects, tools, **options)
        self._new_sieve = chat._new_sieve
        self._prefix = chat._id_prefix
        self._stream_arguments = chat._stream_arguments
        self._on_event = chat._on_event
        self._parts: dict[tuple[str, int], _Part] = {}
        self._indices: dict[int, int] = {}  # upstream output_index -> ours
        self._next_index = 0
        self._seq = 0
        self._calls: list[_Call] = []
        self._thoughts: list[_Thought] = []
        self._pydantic = False
        #: A message's opening events, held until its text shows whether reasoning leads it.
        self._held: list[Any] = []
        self._held_item: Any = None  # that message's item id

    # -- building events
    def _event(self, cls_name: str, fields: dict[str, Any]) -> Any:
        fields = dict(fields, sequence_number=self._next_seq())
        if not self._pydantic:
            return fields
        import openai.types.responses as t

        return getattr(t, cls_name).construct(**fields)

    def _item(self, call: _Call, status: str) -> Any:
        fields: dict[str, Any] = {
            "type": "function_call", "id": call.item_id, "call_id": call.call_id, "name": call.name,
            "arguments": "".join(call.arguments), "status": status,
        }
        if not self._pydantic:
            return fields
        from openai.types.responses import ResponseFunctionToolCall

        return ResponseFunctionToolCall.construct(**fields)

    def _next_seq(self) -> int:
        self._seq += 1
        return self._seq - 1

    def _renumber(self, event: Any, **changes: Any) -> Any:
        return _replace(event, sequence_number=self._next_seq(), **changes)

    def _add_call(self, part: _Part, index: int, call_id: str, name: str) -> list[Any]:
        call = _Call(self._next_index, f"fc_{call_id}", call_id, name)
        self._next_index += 1
        part.calls[index] = call
        self._calls.append(call)
        return [self._event("ResponseOutputItemAddedEvent", {
            "type": "response.output_item.added", "output_index": call.output_index, "item": self._item(call, "in_progress"),
        })]

    def _thought_item(self, t: _Thought) -> Any:
        fields: dict[str, Any] = {"type": "reasoning", "id": t.item_id, "summary": [], "status": t.status}
        if t.status != "in_progress":
            fields["content"] = [{"type": "reasoning_text", "text": "".join(t.text)}]
        if not self._pydantic:
            return fields
        from openai.types.responses import ResponseReasoningItem

        return ResponseReasoningItem.construct(**fields)

    def _think(self, part: _Part, text: str) -> list[Any]:
        out = []
        t = part.thought
        if t is None:
            t = part.thought = _Thought(self._next_index, f"rs_{self._prefix}{len(self._thoughts)}")
            self._next_index += 1
            self._thoughts.append(t)
            out.append(self._event("ResponseOutputItemAddedEvent", {
                "type": "response.output_item.added", "output_index": t.output_index, "item": self._thought_item(t),
            }))
        t.text.append(text)
        out.append(self._event("ResponseReasoningTextDeltaEvent", {
            "type": "response.reasoning_text.delta", "item_id": t.item_id, "output_index": t.output_index,
            "content_index": 0, "delta": text,
        }))
        return out

    def _stop_thinking(self, part: _Part) -> list[Any]:
        t = part.thought
        if t is None:
            return []
        part.thought = None
        t.status = "completed"
        return [
            self._event("ResponseReasoningTextDoneEvent", {
                "type": "response.reasoning_text.done", "item_id": t.item_id, "output_index": t.output_index,
                "content_index": 0, "text": "".join(t.text),
            }),
            self._event("ResponseOutputItemDoneEvent", {
                "type": "response.output_item.done", "output_index": t.output_index, "item": self._thought_item(t),
            }),
        ]

    def _args_delta(self, call: _Call, text: str) -> list[Any]:
        call.arguments.append(text)
        return [self._event("ResponseFunctionCallArgumentsDeltaEvent", {
            "type": "response.function_call_arguments.delta", "item_id": call.item_id,
            "output_index": call.output_index, "delta": text,
        })]

    def _finish_call(self, call: _Call, status: str) -> list[Any]:
        call.status = status
        out = []
        if status == "completed":
            out.append(self._event("ResponseFunctionCallArgumentsDoneEvent", {
                "type": "response.function_call_arguments.done", "item_id": call.item_id,
                "output_index": call.output_index, "arguments": "".join(call.arguments), "name": call.name,
            }))
        out.append(self._event("ResponseOutputItemDoneEvent", {
            "type": "response.output_item.done", "output_index": call.output_index, "item": self._item(call, status),
        }))
        return out

    # -- text parts
    def _part(self, event: Any) -> _Part:
        key = (str(_get(event, "item_id")), _get(event, "content_index") or 0)
        part = self._parts.get(key)
        if part is None:
            part = _Part(self._new_sieve(f"{self._prefix}{len(self._parts)}_" if self._parts else self._prefix))
            self._parts[key] = part
        return part

    def _release_held(self) -> list[Any]:
        """The held message's opening events, numbered now (after any reasoning item
        that led its text)."""
        held, self._held, self._held_item = self._held, [], None
        out = []
        for event in held:
            changes: dict[str, Any] = {}
            if isinstance(_get(event, "output_index"), int):
                changes["output_index"] = self._map(_get(event, "output_index"))
            out.append(self._renumber(event, **changes))
        return out

    def _sieved(self, template: Any, part: _Part, events: list[Event]) -> list[Any]:
        """The output events for sieve events of one part, text shaped like ``template``."""
        out: list[Any] = []
        first_text = True
        for e in events:
            if self._on_event is not None:
                self._on_event(0, e)
            if isinstance(e, Reasoning):
                if e.text:
                    out += self._think(part, e.text)
                continue
            if isinstance(e, (Text, ToolCallStart, ToolCall)) and (not isinstance(e, Text) or e.text):
                out += self._stop_thinking(part)  # reasoning ends where anything else begins
                if self._held:
                    out += self._release_held()
            if isinstance(e, Text):
                if not e.text:
                    continue
                part.text.append(e.text)
                changes: dict[str, Any] = {"delta": e.text, "output_index": self._map(_get(template, "output_index"))}
                if not first_text and _get(template, "logprobs"):
                    changes["logprobs"] = []  # the upstream's logprobs ride on the first piece only
                first_text = False
                out.append(self._renumber(template, **changes))
            elif isinstance(e, ToolCallStart) and self._stream_arguments:
                out += self._add_call(part, e.index, e.id, e.name)
            elif isinstance(e, ToolCallDelta) and self._stream_arguments:
                out += self._args_delta(part.calls[e.index], e.arguments)
            elif isinstance(e, ToolCall):
                if not self._stream_arguments:
                    out += self._add_call(part, e.index, e.id, e.name)
                    out += self._args_delta(part.calls[e.index], e.arguments_json)
                out += self._finish_call(part.calls[e.index], "completed")
            elif isinstance(e, ToolCallAbandoned) and e.index in part.calls:
                out += self._finish_call(part.calls[e.index], "incomplete")
        return out

    def _close(self, part: _Part) -> list[Any]:
        """Close a part's sieve: what it held comes out as more deltas of that part,
        shaped like its last one, and calls it abandoned are closed ``incomplete``."""
        if part.closed:
            return []
        part.closed = True
        out = self._sieved(part.template, part, part.sieve.close())
        out += self._stop_thinking(part)
        for call in part.calls.values():
            if call.status == "in_progress":  # abandoned: the block proved malformed after its start
                out += self._finish_call(call, "incomplete")
        return out

    def _map(self, upstream: Any) -> Any:
        if not isinstance(upstream, int):
            return upstream
        if upstream not in self._indices:
            self._indices[upstream] = self._next_index
            self._next_index += 1
        return self._indices[upstream]

    # -- cleaned copies of finished objects
    def _clean_content(self, item_id: Any, content: Any) -> Any:
        if not isinstance(content, list):
            return content
        out = []
        for i, c in enumerate(content):
            part = self._parts.get((str(item_id), i))
            if part is not None and _get(c, "type") == "output_text":
                c = _replace(c, text="".join(part.text))
            out.append(c)
        return out

    def _clean_item(self, item: Any) -> Any:
        if _get(item, "type") != "message" or not any(k[0] == str(_get(item, "id")) for k in self._parts):
            return item
        return _replace(item, content=self._clean_content(_get(item, "id"), _get(item, "content")))

    def _clean_response(self, response: Any) -> Any:
        output = _get(response, "output")
        if not isinstance(output, list) or not (self._parts or self._calls or self._thoughts):
            return response
        placed: dict[int, Any] = {}
        for k, item in enumerate(output):
            placed[self._indices.get(k, k)] = self._clean_item(item)
        for call in self._calls:
            placed[call.output_index] = self._item(call, call.status)
        for t in self._thoughts:
            placed[t.output_index] = self._thought_item(t)
        return _replace(response, output=[placed[i] for i in sorted(placed)])

    # -- events
    def push(self, event: Any) -> list[Any]:
        self._pydantic = not isinstance(event, Mapping)
        kind = _get(event, "type")
        if kind == "response.output_item.added" and _get(_get(event, "item"), "type") == "message" and not self._held:
            self._held, self._held_item = [event], _get(_get(event, "item"), "id")
            return []
        if self._held:
            if kind == "response.content_part.added" and _get(event, "item_id") == self._held_item:
                self._held.append(event)
                return []
            if not (kind == "response.output_text.delta" and _get(event, "item_id") == self._held_item):
                # (anything else of the message, or another item: its text led with no reasoning)
                return self._release_held() + self.push(event)
        if kind == "response.output_text.delta":
            part = self._part(event)
            if part.closed:  # text after its done event: a new sieve for the same part
                part.sieve, part.closed = self._new_sieve(f"{self._prefix}{len(self._parts)}_r_"), False
            part.template = event
            return self._sieved(event, part, part.sieve.feed(_get(event, "delta") or ""))
        if kind == "response.output_text.done":
            part = self._part(event)
            out = self._close(part)
            return out + [self._renumber(event, text="".join(part.text), output_index=self._map(_get(event, "output_index")))]
        changes: dict[str, Any] = {}
        if isinstance(_get(event, "output_index"), int):
            changes["output_index"] = self._map(_get(event, "output_index"))
        if kind == "response.content_part.done":
            done = self._parts.get((str(_get(event, "item_id")), _get(event, "content_index") or 0))
            if done is not None and _get(_get(event, "part"), "type") == "output_text":
                changes["part"] = _replace(_get(event, "part"), text="".join(done.text))
        elif kind == "response.output_item.done":
            changes["item"] = self._clean_item(_get(event, "item"))
        elif kind in _FINAL:
            out = self._close_all()
            return out + [self._renumber(event, response=self._clean_response(_get(event, "response")), **changes)]
        return [self._renumber(event, **changes)]

    def _close_all(self) -> list[Any]:
        out: list[Any] = self._release_held()
        for part in self._parts.values():
            # A stream that finishes without output_text.done still gets what was held.
            out += self._close(part)
        return out

    def end(self) -> list[Any]:
        return self._release_held() + self._close_all()
