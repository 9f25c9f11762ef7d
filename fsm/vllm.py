"""callsieve inside vLLM: a tool parser (``--tool-call-parser``) and a reasoning parser
(``--reasoning-parser``), each under the names ``callsieve`` and ``callsieve-<dialect>``.

Install with the ``vllm`` extra (or into the environment vLLM runs in); nothing here is
imported by ``import callsieve``. Importing this module registers every name with vLLM's
``ToolParserManager`` and ``ReasoningParserManager``; vLLM imports it through the entry
point ``vllm.general_plugins`` (installed with callsieve), or through
``--tool-parser-plugin callsieve.vllm``::

    vllm serve Qwen/Qwen3-8B --enable-auto-tool-choice \\
        --tool-call-parser callsieve-hermes --reasoning-parser callsieve-hermes

``callsieve-<name>`` takes any dialect name or alias callsieve knows (``callsieve-qwen3_xml``
is the Qwen3-Coder dialect, as ``qwen3_xml`` is vLLM's); ``callsieve`` alone enables the
dialects listed in the environment variable ``CALLSIEVE_DIALECTS`` (comma-separated),
every built-in one when it is unset. ``CALLSIEVE_STREAM_ARGUMENTS=0`` sends each call
whole once it is decided instead of streaming its arguments.

Theory of operation (vLLM 0.33's serving path, ``vllm/parser/abstract_parser.py``):

1. vLLM builds one ``DelegatingParser`` per request, holding one instance of each parser.
   Both callsieve parsers are "engine based" (``engine_based_streaming``): vLLM then
   hands them each step's text only (no re-accumulated ``current_text``) and calls their
   ``finish_streaming()`` at the end of the stream, where the sieve is closed and what it
   held back (a partial marker, an unterminated block) is decided.
2. The tool parser feeds each step to a :class:`callsieve.serving.ServerStream` and
   returns its content, reasoning and tool-call pieces as a ``DeltaMessage`` (id, type and
   name on a call's first ``DeltaToolCall`` only), keeping ``prev_tool_call_arr`` and
   ``streamed_args_for_tool`` in step with what was sent, so vLLM's "remaining arguments"
   at the end of a stream is empty. With no reasoning parser configured vLLM sets
   ``skip_reasoning_parsing``: reasoning markup is then content, verbatim (vLLM's own
   rule), though a call quoted inside it is still no call.
3. The reasoning parser runs while vLLM's reasoning phase lasts: reasoning goes out as
   reasoning, and the first decided text or call after it ends the phase
   (``has_engine_confirmed_reasoning_end``) with the exact input from there handed to
   the tool phase as content. For a whole response, ``extract_reasoning`` returns every
   reasoning span and, as content, the rest of the input verbatim for the tool parser.
4. ``extract_tool_calls`` (whole responses) returns only decided calls; a malformed
   block is content with its markup, never a call.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import Any, ClassVar

import regex
from vllm.entrypoints.generate.base.protocol import (
    DeltaFunctionCall,
    DeltaMessage,
    DeltaToolCall,
    ExtractedToolCallInformation,
    FunctionCall,
    ToolCall,
)
from vllm.reasoning import ReasoningParser, ReasoningParserManager
from vllm.tool_parsers import ToolParser, ToolParserManager

from callsieve.events import Diagnostic, Reasoning
from callsieve.grammar.registry import resolve
from callsieve.serving import CallPiece, ServerStream, Step, parser_names

__all__ = [
    "CallsieveToolParser",
    "CallsieveReasoningParser",
    "parser_names",
    "register",
    "tool_parser_class",
    "reasoning_parser_class",
]

#: How many prompt tokens are decoded to tell whether the prompt leaves reasoning open.
_PROMPT_TAIL_TOKENS = 64


def _env_dialects() -> tuple[str, ...] | None:
    value = os.environ.get("CALLSIEVE_DIALECTS", "").strip()
    return tuple(n.strip() for n in value.split(",") if n.strip()) or None


def _env_stream_arguments() -> bool:
    value = os.environ.get("CALLSIEVE_STREAM_ARGUMENTS", "1").strip().lower()
    if value not in ("0", "1", "true", "false", "yes", "no"):
        raise ValueError(f"CALLSIEVE_STREAM_ARGUMENTS={value!r}: use 1 or 0")
    return value in ("1", "true", "yes")


def _delta_message(step: Step) -> DeltaMessage | None:
    if not step:
        return None
    fields: dict[str, Any] = {}
    if step.content:
        fields["content"] = step.content
    if step.reasoning:
        fields["reasoning"] = step.reasoning
    if step.calls:
        fields["tool_calls"] = [_delta_tool_call(p) for p in step.calls]
    return DeltaMessage(**fields)


def _delta_tool_call(piece: CallPiece) -> DeltaToolCall:
    if piece.name is not None:
        return DeltaToolCall(id=piece.id, type="function", index=piece.index,
                             function=DeltaFunctionCall(name=piece.name, arguments=piece.arguments))
    return DeltaToolCall(index=piece.index, function=DeltaFunctionCall(arguments=piece.arguments))


class CallsieveToolParser(ToolParser):
    """A vLLM tool parser over :class:`callsieve.Sieve` (see the module doc).

    ``dialects``: the dialect names (None: ``CALLSIEVE_DIALECTS``, else every built-in one);
    the registered ``callsieve-<name>`` classes set it.
    """

    dialects: ClassVar[tuple[str, ...] | None] = None
    engine_based_streaming = True
    #: Set by vLLM's DelegatingParser when no reasoning parser is configured.
    skip_reasoning_parsing = False

    def __init__(self, tokenizer: Any, tools: list[Any] | None = None, *args: Any, **kwargs: Any) -> None:
        super().__init__(tokenizer, tools)
        self._dialects = self.dialects if self.dialects is not None else _env_dialects()
        resolve(self._dialects)  # a bad name fails when vLLM validates the parser at startup
        self._stream_arguments = _env_stream_arguments()
        self._stream: ServerStream | None = None

    def _new_stream(self, request: Any, *, reasoning_as_content: bool, stream_arguments: bool = True) -> ServerStream:
        tools = getattr(request, "tools", None) or self.tools or None
        return ServerStream(
            self._dialects, tools,
            reasoning="content" if reasoning_as_content else "reasoning",
            stream_arguments=stream_arguments,
        )

    def adjust_request(self, request: Any) -> Any:
        request = super().adjust_request(request)
        if request.tools and request.tool_choice != "none":
            # Tool-call markers are special tokens in many tokenizers (Qwen's
            # <tool_call>, DeepSeek's bars): skipped, the markup never reaches a parser.
            request.skip_special_tokens = False
        return request

    def extract_tool_calls(self, model_output: str, request: Any) -> ExtractedToolCallInformation:
        # vLLM's whole-response result has no reasoning field: reasoning the reasoning
        # parser did not take stays in content verbatim, as vLLM's rule is.
        step = self._new_stream(request, reasoning_as_content=True).parse_whole(model_output)
        calls = [ToolCall(id=p.id, type="function", function=FunctionCall(id=p.id, name=p.name or "", arguments=p.arguments))
                 for p in step.calls]
        return ExtractedToolCallInformation(tools_called=bool(calls), tool_calls=calls, content=step.content or None)

    def extract_tool_calls_streaming(
        self,
        previous_text: str,
        current_text: str,
        delta_text: str,
        previous_token_ids: Sequence[int],
        current_token_ids: Sequence[int],
        delta_token_ids: Sequence[int],
        request: Any,
    ) -> DeltaMessage | None:
        return self._emit(self._streaming(request).feed(delta_text))

    def finish_streaming(self) -> DeltaMessage | None:
        """End of the stream (vLLM calls it on engine-based parsers): close the sieve."""
        if self._stream is None:
            return None
        return self._emit(self._stream.close())

    @property
    def incomplete_tool_call_indices(self) -> set[int]:
        """Calls whose start was sent and that were then abandoned (after finish)."""
        return set() if self._stream is None else set(self._stream.incomplete)

    def _streaming(self, request: Any) -> ServerStream:
        if self._stream is None:
            self._stream = self._new_stream(request, reasoning_as_content=self.skip_reasoning_parsing,
                                            stream_arguments=self._stream_arguments)
            # vLLM reads these lists (get_remaining_unstreamed_args): share them.
            self.prev_tool_call_arr = self._stream.prev_tool_call_arr
            self.streamed_args_for_tool = self._stream.streamed_args_for_tool
        return self._stream

    def _emit(self, step: Step) -> DeltaMessage | None:
        if self._stream is not None:
            self.current_tool_id = self._stream.current_tool_id
            self.current_tool_name_sent = self.current_tool_id >= 0
        return _delta_message(step)


class CallsieveReasoningParser(ReasoningParser):
    """A vLLM reasoning parser over :class:`callsieve.Sieve` (see the module doc)."""

    dialects: ClassVar[tuple[str, ...] | None] = None
    engine_based_streaming = True

    def __init__(self, tokenizer: Any, *args: Any, **kwargs: Any) -> None:
        super().__init__(tokenizer, *args, **kwargs)
        self._dialects = self.dialects if self.dialects is not None else _env_dialects()
        declared = [r for d in resolve(self._dialects) for r in d.reasoning]
        # Any open or close marker of the dialects' reasoning, to read a prompt's tail.
        self._marker = regex.compile(
            "|".join(f"(?P<open{i}>{r.open.pattern})|(?P<close{i}>{r.close.pattern})" for i, r in enumerate(declared))
            or "(?!)"
        )
        self._prompt_opens_reasoning = False
        self._stream: ServerStream | None = None
        self._pending = ""  # input the stream's events have not accounted for yet
        self._ended = False

    # ------------------------------------------------ prompt and token-id questions
    def _tail_state(self, input_ids: Sequence[int]) -> str | None:
        """"open" or "close": the last reasoning marker in the decoded tail, or None."""
        ids = list(input_ids[-_PROMPT_TAIL_TOKENS:])
        if not ids:
            return None
        text = self.model_tokenizer.decode(ids)
        last = None
        for m in self._marker.finditer(text):
            last = m
        if last is None:
            return None
        return "open" if (last.lastgroup or "").startswith("open") else "close"

    def is_reasoning_end(self, input_ids: Sequence[int]) -> bool:
        # vLLM's rule for think parsers: no marker yet means the model may still open one.
        return self._tail_state(input_ids) == "close"

    def is_reasoning_end_streaming(self, input_ids: Sequence[int], delta_ids: Any) -> bool:
        return self._tail_state(list(input_ids)[-(_PROMPT_TAIL_TOKENS // 4):]) == "close"

    def extract_content_ids(self, input_ids: list[int]) -> list[int]:
        return []

    def set_prompt_token_ids(self, prompt_token_ids: Sequence[int]) -> None:
        self._prompt_opens_reasoning = self._tail_state(prompt_token_ids) == "open"

    def adjust_initial_state_from_prompt(self, prompt_token_ids: Sequence[int]) -> None:
        self.set_prompt_token_ids(prompt_token_ids)

    def _new_stream(self) -> ServerStream:
        return ServerStream(self._dialects, None, start_in_reasoning=self._prompt_opens_reasoning)

    # ------------------------------------------------ whole responses
    def extract_reasoning(self, model_output: str, request: Any) -> tuple[str | None, str | None]:
        events = self._new_stream().parse_whole(model_output).events
        reasoning = "".join(e.text for e in events if isinstance(e, Reasoning))
        content = "".join(e.raw for e in events if not isinstance(e, Reasoning))
        return reasoning or None, content or None

    # ------------------------------------------------ streaming
    def extract_reasoning_streaming(
        self,
        previous_text: str,
        current_text: str,
        delta_text: str,
        previous_token_ids: Sequence[int],
        current_token_ids: Sequence[int],
        delta_token_ids: Sequence[int],
    ) -> DeltaMessage | None:
        if self._ended:
            return DeltaMessage(content=delta_text) if delta_text else None
        if self._stream is None:
            self._stream = self._new_stream()
        self._pending += delta_text
        events = self._stream.sieve.feed(delta_text) if delta_text else []
        reasoning: list[str] = []
        for e in events:
            if isinstance(e, Reasoning):
                reasoning.append(e.text)
            elif not isinstance(e, Diagnostic):
                # The first decided text or call: reasoning is over. What follows,
                # exactly as it was written, is the tool phase's.
                self._ended = True
                break
            self._pending = self._pending[len(e.raw):]
        if not self._ended:
            return DeltaMessage(reasoning="".join(reasoning)) if reasoning else None
        handover, self._pending = self._pending, ""
        fields: dict[str, Any] = {"content": handover} if handover else {}
        if reasoning:
            fields["reasoning"] = "".join(reasoning)
        return DeltaMessage(**fields) if fields else None

    def has_engine_confirmed_reasoning_end(self) -> bool:
        return self._ended

    def finish_streaming(self) -> DeltaMessage | None:
        """Called at the reasoning phase's end and at the end of a stream that never
        left it: then the sieve is closed, and whatever it decided goes out (a call an
        unclosed reasoning ended on included, as tool calls)."""
        if self._ended or self._stream is None:
            return None
        self._ended = True
        rest = self._stream.close()
        return _delta_message(rest)


# ---------------------------------------------------------------------- registration
_tool_classes: dict[str, type[CallsieveToolParser]] = {}
_reasoning_classes: dict[str, type[CallsieveReasoningParser]] = {}


def tool_parser_class(name: str) -> type[CallsieveToolParser]:
    """The tool parser class registered as ``name`` (``callsieve`` or ``callsieve-<dialect>``)."""
    if name not in _tool_classes:
        dialects = parser_names()[name]
        _tool_classes[name] = type(f"CallsieveToolParser[{name}]", (CallsieveToolParser,), {"dialects": dialects})
    return _tool_classes[name]


def reasoning_parser_class(name: str) -> type[CallsieveReasoningParser]:
    """The reasoning parser class registered as ``name``."""
    if name not in _reasoning_classes:
        dialects = parser_names()[name]
        _reasoning_classes[name] = type(f"CallsieveReasoningParser[{name}]", (CallsieveReasoningParser,),
                                        {"dialects": dialects})
    return _reasoning_classes[name]


def register() -> None:
    """Register every name with vLLM (idempotent; the ``vllm.general_plugins`` entry point)."""
    for name in parser_names():
        ToolParserManager.register_module(name=name, module=tool_parser_class(name))
        ReasoningParserManager.register_module(name=name, module=reasoning_parser_class(name))


register()
