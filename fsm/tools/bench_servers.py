"""``callsieve bench --servers``: the per-token parsing cost inside vLLM and SGLang, their
built-in parser against callsieve's plugin, on the same token stream, in one run.

It needs the servers' code that ``.ci/servers`` fetches (see
:mod:`callsieve.tools.server_code`; torch and the engine are not loaded). For each
server, stream and parser, a fresh per-request parser is driven one token at a time
through the call the server's streaming code makes per token: vLLM's
``ChatStreamProcessor.step`` (its ``DelegatingParser.parse_delta`` and the tool parser),
SGLang's ``FunctionCallParser.parse_stream_chunk`` then ``parse_stream_end``. Timed with
``time.process_time`` (CPU time), best of ``--repeat`` interleaved rounds, at two stream
sizes: a parser that re-reads what it has buffered costs more per token on the longer
stream. Reported: CPU µs per token and built-in ÷ callsieve (above 1: callsieve is cheaper).
"""

from __future__ import annotations

import argparse
import gc
import json
import sys
import time
from dataclasses import asdict, dataclass
from typing import Any, Callable

from callsieve.tools import server_code
from callsieve.tools.parse import error

#: (stream, the servers' own parser names for it: vLLM, SGLang); callsieve's plugin is
#: the same name with ``callsieve-`` in front.
STREAMS = {"qwen3_coder": ("qwen3_coder", "qwen3_coder"), "hermes": ("hermes", "hermes")}

_TOOLS = [{"type": "function", "function": {"name": "write_file", "parameters": {"type": "object", "properties": {
    "path": {"type": "string"}, "content": {"type": "string"}}}}}]


def stream_text(kind: str, size: int) -> str:
    """Prose and write_file calls (a few lines of content each) until ``size`` characters."""
    parts: list[str] = []
    n = 0
    i = 0
    while n < size:
        content = "".join(f"line {j} of file {i}: x = {i * j}\n" for j in range(6))
        if kind == "qwen3_coder":
            call = (f"<tool_call>\n<function=write_file>\n<parameter=path>\nsrc/f{i}.py\n</parameter>\n"
                    f"<parameter=content>\n{content}</parameter>\n</function>\n</tool_call>\n")
        else:
            call = "<tool_call>\n" + json.dumps({"name": "write_file", "arguments": {
                "path": f"src/f{i}.py", "content": content}}) + "\n</tool_call>\n"
        piece = f"Now file {i}, as planned; it keeps the tests green.\n" + call
        parts.append(piece)
        n += len(piece)
        i += 1
    return "".join(parts)


@dataclass
class Row:
    server: str
    stream: str
    parser: str
    chars: int
    tokens: int
    calls: int
    cpu_s: float
    us_per_token: float


def _vllm_runner(name: str, tok: server_code.TinyTokenizer) -> Callable[[list[tuple[str, list[int]]]], int]:
    from vllm.entrypoints.openai.chat_completion.protocol import ChatCompletionRequest
    from vllm.entrypoints.openai.chat_completion.stream_processor import ChatStreamProcessor
    from vllm.parser import ParserManager

    parser_cls = ParserManager.get_parser(tool_parser_name=name, enable_auto_tools=True, model_name="m", tokenizer=tok)
    assert parser_cls is not None
    request = ChatCompletionRequest(model="m", messages=[{"role": "user", "content": "go"}], tools=_TOOLS,
                                    tool_choice="auto", stream=True)
    prompt = tok.encode("<|user|>go")

    def run(steps: list[tuple[str, list[int]]]) -> int:
        processor = ChatStreamProcessor(request, parser_cls(tok, request.tools), enable_auto_tools=True,
                                        parser_cls=parser_cls)
        calls = 0
        last = len(steps) - 1
        for k, (delta, ids) in enumerate(steps):
            out = processor.step(delta, ids, "stop" if k == last else None, prompt).delta
            if out is not None and out.tool_calls:
                calls += sum(1 for tc in out.tool_calls if tc.function is not None and tc.function.name)
        return calls

    return run


def _sglang_runner(name: str, tok: server_code.TinyTokenizer) -> Callable[[list[tuple[str, list[int]]]], int]:
    from sglang.srt.entrypoints.openai.protocol import Tool
    from sglang.srt.function_call.function_call_parser import FunctionCallParser

    tools = [Tool.model_validate(t) for t in _TOOLS]

    def run(steps: list[tuple[str, list[int]]]) -> int:
        parser = FunctionCallParser(tools, name)
        calls = 0
        for delta, _ids in steps:
            _text, items = parser.parse_stream_chunk(delta)
            calls += sum(1 for c in items if c.name)
        _text, items = parser.parse_stream_end()
        return calls + sum(1 for c in items if c.name)

    return run


def run_servers(args: argparse.Namespace) -> int:
    reason = server_code.missing()
    if reason:
        error(reason)
        return 1
    server_code.install()
    import logging

    logging.disable(logging.WARNING)  # the built-in parsers log every malformed guess
    import callsieve.sglang  # noqa: F401  (registers the plugins)
    import callsieve.vllm  # noqa: F401

    quick = bool(args.quick)
    size = args.size or (8_000 if quick else 20_000)
    sizes = (size // 4, size)
    repeat = args.repeat or (2 if quick else 3)
    tok = server_code.TinyTokenizer(server_code.SPECIALS)
    jobs: list[tuple[str, str, str, int, list[tuple[str, list[int]]], Callable[..., int]]] = []
    for stream, (vllm_name, sglang_name) in STREAMS.items():
        for n in sizes:
            text = stream_text(stream, n)
            steps = [(tok.decode([i]), [i]) for i in tok.encode(text)]
            for server, base, make in (("vllm", vllm_name, _vllm_runner), ("sglang", sglang_name, _sglang_runner)):
                for parser in (base, f"callsieve-{base}"):
                    jobs.append((server, stream, parser, len(text), steps, make(parser, tok)))
    best: dict[int, float] = {}
    calls: dict[int, int] = {}
    gc.collect()
    for rnd in range(repeat):
        if not args.json:
            print(f"servers: round {rnd + 1}/{repeat}", file=sys.stderr, flush=True)
        for k, (_server, _stream, _parser, _chars, steps, run) in enumerate(jobs):
            gc.collect()
            c0 = time.process_time()
            calls[k] = run(steps)
            spent = time.process_time() - c0
            best[k] = min(best.get(k, spent), spent)
    rows = [Row(server, stream, parser, chars, len(steps), calls[k], best[k], best[k] / len(steps) * 1e6)
            for k, (server, stream, parser, chars, steps, _run) in enumerate(jobs)]
    ratios: list[dict[str, Any]] = []
    for r in rows:
        if r.parser.startswith("callsieve-"):
            continue
        ours = next(o for o in rows if (o.server, o.stream, o.chars, o.parser) == (r.server, r.stream, r.chars, f"callsieve-{r.parser}"))
        ratios.append({"server": r.server, "stream": r.stream, "chars": r.chars, "tokens": r.tokens,
                       "builtin_us_per_token": r.us_per_token, "callsieve_us_per_token": ours.us_per_token,
                       "builtin_over_callsieve": r.us_per_token / ours.us_per_token,
                       "calls": {"builtin": r.calls, "callsieve": ours.calls}})
    if args.json:
        print(json.dumps({"rows": [asdict(r) for r in rows], "ratios": ratios, "repeat": repeat}, indent=2))
        return 0
    print("Per-token parsing cost inside the servers (CPU time, best of "
          f"{repeat} rounds; built-in ÷ callsieve above 1: callsieve is cheaper)")
    print(f"{'server':<7} {'stream':<12} {'chars':>7} {'tokens':>7} {'built-in µs/tok':>16} "
          f"{'callsieve µs/tok':>17} {'ratio':>6}  calls (built-in/callsieve)")
    for x in ratios:
        print(f"{x['server']:<7} {x['stream']:<12} {x['chars']:>7,} {x['tokens']:>7,} "
              f"{x['builtin_us_per_token']:>16.1f} {x['callsieve_us_per_token']:>17.1f} {x['builtin_over_callsieve']:>6.2f}  "
              f"{x['calls']['builtin']}/{x['calls']['callsieve']}")
    return 0
