"""callsieve inside SGLang: a tool-call format detector (``--tool-call-parser``) and a
reasoning detector (``--reasoning-parser``), each under ``callsieve`` and
``callsieve-<dialect>``.

Install with the ``sglang`` extra (or into SGLang's environment); nothing here is
imported by ``import callsieve``. Importing this module registers every name in
SGLang's ``FunctionCallParser.ToolCallParserEnum`` and ``ReasoningParser.DetectorMap``;
SGLang imports it at start-up through the entry point ``sglang.srt.plugins``
(installed with callsieve; ``SGLANG_PLUGINS`` may restrict which plugins load)::

    sglang serve --model-path Qwen/Qwen3-8B \\
        --tool-call-parser callsieve-hermes --reasoning-parser callsieve-hermes

Names and environment variables are those of :mod:`callsieve.vllm`
(``CALLSIEVE_DIALECTS`` for ``callsieve``; ``CALLSIEVE_STREAM_ARGUMENTS=0``).

Theory of operation (SGLang 0.5.23, ``srt/entrypoints/openai/serving_chat.py``):

1. SGLang runs the reasoning detector over the whole stream first; its normal text goes
   to the tool-call detector. The callsieve reasoning detector sends reasoning as
   reasoning and everything else *exactly as written* as normal text, so the tool
   detector sees the markup; a call quoted inside reasoning stays reasoning.
2. The tool-call detector feeds each step to a :class:`callsieve.serving.ServerStream`:
   normal text is the sieve's text; each call is a ``ToolCallItem`` with its name on the
   first item only and argument fragments after. ``finish()`` (SGLang's end of stream)
   closes the sieve; ``prev_tool_call_arr`` / ``streamed_args_for_tool`` follow what was
   sent, so SGLang's "unstreamed arguments" check finds nothing left, and
   ``incomplete_tool_call_indices`` lists calls abandoned after their start was sent,
   which keeps ``finish_reason`` from becoming ``"tool_calls"`` for them.
3. ``has_tool_call`` says whether callsieve finds any markup it would take out of the
   text (a call, or a malformed block), so SGLang runs ``detect_and_parse`` then.
4. Constrained decoding: callsieve reads what a model wrote and has no grammar to
   constrain what it writes. ``supports_structural_tag()`` is False and
   ``structure_info()`` refuses with a clear error; for ``tool_choice="required"`` or a
   named tool SGLang then constrains the output to its JSON array of calls and parses
   that itself, as for any parser without structural tags.
"""

from __future__ import annotations

import os
from typing import Any, ClassVar

from sglang.srt.function_call.base_format_detector import BaseFormatDetector
from sglang.srt.function_call.core_types import StreamingParseResult, ToolCallItem
from sglang.srt.function_call.function_call_parser import FunctionCallParser
from sglang.srt.parser import reasoning_parser as sglang_reasoning

from callsieve.events import Diagnostic, Reasoning
from callsieve.grammar.registry import resolve
from callsieve.serving import ServerStream, Step, parser_names

__all__ = ["CallsieveDetector", "CallsieveReasoningDetector", "parser_names", "register",
           "detector_class", "reasoning_detector_class"]


def _env_dialects() -> tuple[str, ...] | None:
    value = os.environ.get("CALLSIEVE_DIALECTS", "").strip()
    return tuple(n.strip() for n in value.split(",") if n.strip()) or None


def _env_stream_arguments() -> bool:
    value = os.environ.get("CALLSIEVE_STREAM_ARGUMENTS", "1").strip().lower()
    if value not in ("0", "1", "true", "false", "yes", "no"):
        raise ValueError(f"CALLSIEVE_STREAM_ARGUMENTS={value!r}: use 1 or 0")
    return value in ("1", "true", "yes")


def _items(step: Step) -> list[ToolCallItem]:
    return [ToolCallItem(tool_index=p.index, name=p.name, parameters=p.arguments) for p in step.calls]


class CallsieveDetector(BaseFormatDetector):
    """An SGLang tool-call detector over :class:`callsieve.Sieve` (see the module doc)."""

    dialects: ClassVar[tuple[str, ...] | None] = None

    def __init__(self) -> None:
        super().__init__()
        self._dialects = self.dialects if self.dialects is not None else _env_dialects()
        resolve(self._dialects)  # a bad name fails when SGLang builds the parser
        self._stream_arguments = _env_stream_arguments()
        self._stream: ServerStream | None = None
        self.incomplete_tool_call_indices: set[int] = set()

    def _whole(self, text: str, tools: Any) -> Step:
        return ServerStream(self._dialects, tools, reasoning="content").parse_whole(text)

    def has_tool_call(self, text: str) -> bool:
        step = self._whole(text, None)
        return bool(step.calls) or step.content != text

    def detect_and_parse(self, text: str, tools: Any) -> StreamingParseResult:
        step = self._whole(text, tools)
        return StreamingParseResult(normal_text=step.content, calls=_items(step))

    def parse_streaming_increment(self, new_text: str, tools: Any) -> StreamingParseResult:
        return self._result(self._streaming(tools).feed(new_text))

    def finish(self, tools: Any) -> StreamingParseResult:
        stream = self._streaming(tools)
        result = self._result(stream.close())
        self.incomplete_tool_call_indices = set(stream.incomplete)
        return result

    def _streaming(self, tools: Any) -> ServerStream:
        if self._stream is None:
            self._stream = ServerStream(self._dialects, tools, reasoning="content",
                                        stream_arguments=self._stream_arguments)
            # SGLang's serving reads these lists at the end of a stream: share them.
            self.prev_tool_call_arr = self._stream.prev_tool_call_arr
            self.streamed_args_for_tool = self._stream.streamed_args_for_tool
        return self._stream

    def _result(self, step: Step) -> StreamingParseResult:
        if self._stream is not None:
            self.current_tool_id = self._stream.current_tool_id
            self.current_tool_name_sent = self.current_tool_id >= 0
        return StreamingParseResult(normal_text=step.content, calls=_items(step))

    def supports_structural_tag(self) -> bool:
        return False

    def structure_info(self) -> Any:
        raise NotImplementedError(
            "callsieve parses what a model wrote and has no grammar to constrain generation: "
            "it gives SGLang no structural tag (for tool_choice='required' or a named tool "
            "SGLang constrains to its JSON array of calls instead)")


class CallsieveReasoningDetector(sglang_reasoning.BaseReasoningFormatDetector):
    """An SGLang reasoning detector over :class:`callsieve.Sieve` (see the module doc)."""

    dialects: ClassVar[tuple[str, ...] | None] = None

    def __init__(self, stream_reasoning: bool = True, force_reasoning: bool = False,
                 continue_final_message: bool = False, previous_content: str = "", **kwargs: Any) -> None:
        dialects = self.dialects if self.dialects is not None else _env_dialects()
        declared = [r for d in resolve(dialects) for r in d.reasoning]
        start, end = (declared[0].open.label, declared[0].close.label) if declared else ("<think>", "</think>")
        super().__init__(start, end, force_reasoning=force_reasoning, stream_reasoning=stream_reasoning,
                         continue_final_message=continue_final_message, previous_content=previous_content)
        # Whether output starts in reasoning is the template's to say (SGLang's
        # force_reasoning), never assumed: reasoning_default None leaves it to it.
        self.reasoning_default = None
        self._dialects = dialects
        self._start_in_reasoning = bool(self._in_reasoning) and any(r.prefill for r in declared)
        self._stream: ServerStream | None = None
        self._held_reasoning: list[str] = []

    def _split(self, step: Step, final: bool) -> sglang_reasoning.StreamingParseResult:
        reasoning: list[str] = []
        normal: list[str] = []
        for e in step.events:
            if isinstance(e, Reasoning):
                reasoning.append(e.text)
            elif not isinstance(e, Diagnostic):
                normal.append(e.raw)
        text = "".join(reasoning)
        if not self.stream_reasoning:
            # Reasoning is sent in one piece once it is over (SGLang's stream_reasoning=False).
            self._held_reasoning.append(text)
            if normal or final:
                text, self._held_reasoning = "".join(self._held_reasoning), []
            else:
                text = ""
        return sglang_reasoning.StreamingParseResult(normal_text="".join(normal), reasoning_text=text)

    def _new_stream(self) -> ServerStream:
        return ServerStream(self._dialects, None, start_in_reasoning=self._start_in_reasoning)

    def detect_and_parse(self, text: str) -> sglang_reasoning.StreamingParseResult:
        return self._split(self._new_stream().parse_whole(text), True)

    def parse_streaming_increment(self, new_text: str) -> sglang_reasoning.StreamingParseResult:
        if self._stream is None:
            self._stream = self._new_stream()
        return self._split(self._stream.feed(new_text), False)

    def finish(self) -> sglang_reasoning.StreamingParseResult:
        if self._stream is None:
            return sglang_reasoning.StreamingParseResult()
        return self._split(self._stream.close(), True)


# ---------------------------------------------------------------------- registration
_detectors: dict[str, type[CallsieveDetector]] = {}
_reasoning: dict[str, type[CallsieveReasoningDetector]] = {}


def detector_class(name: str) -> type[CallsieveDetector]:
    if name not in _detectors:
        _detectors[name] = type(f"CallsieveDetector[{name}]", (CallsieveDetector,), {"dialects": parser_names()[name]})
    return _detectors[name]


def reasoning_detector_class(name: str) -> type[CallsieveReasoningDetector]:
    if name not in _reasoning:
        _reasoning[name] = type(f"CallsieveReasoningDetector[{name}]", (CallsieveReasoningDetector,),
                                {"dialects": parser_names()[name]})
    return _reasoning[name]


def register() -> None:
    """Register every name with SGLang (idempotent; the ``sglang.srt.plugins`` entry point)."""
    for name in parser_names():
        FunctionCallParser.ToolCallParserEnum[name] = detector_class(name)
        sglang_reasoning.ReasoningParser.DetectorMap[name] = reasoning_detector_class(name)


register()
