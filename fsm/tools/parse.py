"""``callsieve parse``: a transcript in, one JSON object per event out (JSON Lines).

    callsieve parse reply.txt
    some-model-client | callsieve parse --dialect dsml --tools tools.json
    callsieve parse reply.txt --chunk 3 --merged      # same output as without --chunk
    callsieve parse reply.txt --dialect-file acme.py --dialect acme

Reading stdin, events are written as the input arrives (each block read is one
``feed()``), so the command can sit at the end of a live pipe. ``--chunk N`` (N ≥ 1)
feeds the input N characters at a time instead; with ``--merged`` adjacent text,
reasoning and argument fragments are joined, and the output is then the same for any
chunking.

Each line is ``{"type": ..., <the event's fields>}`` with ``type`` one of ``text``,
``reasoning``, ``tool_call_start``, ``tool_call_delta``, ``tool_call``, ``diagnostic``;
every event has ``raw``, the exact input it consumed. Exit status: 0, or 2 with a
one-line ``callsieve: error: ...`` on stderr for a bad option (``--chunk 0``, an unknown
dialect), an unreadable or non-UTF-8 file, an invalid tool schema, a dialect file that
does not load, or a malformed block met with ``--on-malformed raise`` (the events before
it are written first, however the input was fed).

``--dialect-file FILE`` runs a Python file of your own and registers every ``Dialect``
it defines at its top level, so ``--dialect NAME`` can name them; without ``--dialect``
they are enabled beside every built-in one. ``--strict``, ``--max-block-chars N`` and
``--no-reasoning`` are the library's ``strict=True``, ``max_block_chars=N`` and
``reasoning=False``.
"""

from __future__ import annotations

import argparse
import codecs
import dataclasses
import json
import runpy
import sys
from typing import IO, Any, Iterator

import callsieve
from callsieve.events import Event
from callsieve.grammar.api import Dialect
from callsieve.grammar.registry import lookup, register

TYPE_NAMES: dict[type, str] = {
    callsieve.Text: "text",
    callsieve.Reasoning: "reasoning",
    callsieve.ToolCallStart: "tool_call_start",
    callsieve.ToolCallDelta: "tool_call_delta",
    callsieve.ToolCall: "tool_call",
    callsieve.ToolCallAbandoned: "tool_call_abandoned",
    callsieve.Diagnostic: "diagnostic",
}


#: Exit status of every usage or input error.
USAGE_ERROR = 2


class UsageError(Exception):
    """Bad input or arguments: reported as one ``callsieve: error:`` line, exit 2."""


def error(message: str) -> None:
    """Report an error the way every subcommand does: one line on stderr."""
    print(f"callsieve: error: {' '.join(message.split())}", file=sys.stderr)


def chunk_size(value: str) -> int:
    """``--chunk``'s type: a whole number of characters, at least 1 (argparse reports
    anything else as a usage error)."""
    try:
        n = int(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"needs a whole number of characters, not {value!r}") from None
    if n < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1 character, not {n}")
    return n


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("file", nargs="?", default="-", metavar="FILE", help="the transcript (default: stdin, '-')")
    add_sieve_arguments(parser)
    parser.add_argument(
        "--chunk", type=chunk_size, metavar="N", default=None,
        help="feed the input N characters at a time, N >= 1 (default: as read; whole for a file)",
    )
    parser.add_argument(
        "--merged", action="store_true",
        help="merge adjacent text, reasoning and same-call argument events (output independent of chunking)",
    )


def add_engine_arguments(parser: argparse.ArgumentParser) -> None:
    """The machine's own options, shared by ``parse``, ``demo`` and ``diagram --trace``:
    a user's dialect file, strict, the block limit, reasoning off."""
    parser.add_argument("--dialect-file", action="append", metavar="FILE",
                        help="a Python file defining Dialect objects: each is registered, so --dialect can name it "
                             "(repeatable; without --dialect they are enabled beside the built-in ones)")
    parser.add_argument("--strict", action="store_true",
                        help="every tolerated deviation off: markup is read by its format alone (strict=True)")
    parser.add_argument("--max-block-chars", type=chunk_size, metavar="N", default=None,
                        help="a block longer than N characters is released as text (default 4,194,304)")
    parser.add_argument("--no-reasoning", action="store_true",
                        help="<think> and [THINK] are text, not reasoning (reasoning=False)")


def engine_options(args: argparse.Namespace) -> dict[str, Any]:
    """The Sieve options :func:`add_engine_arguments` read (only those given)."""
    out: dict[str, Any] = {}
    if getattr(args, "strict", False):
        out["strict"] = True
    if getattr(args, "max_block_chars", None) is not None:
        out["max_block_chars"] = args.max_block_chars
    if getattr(args, "no_reasoning", False):
        out["reasoning"] = False
    return out


def load_dialect_file(path: str) -> list[Dialect]:
    """Run a user's dialect file and register every ``Dialect`` defined at its top level
    (in the order defined); any failure is a UsageError naming the file."""
    try:
        namespace = runpy.run_path(path, run_name="callsieve_dialect_file")
    except OSError as e:
        raise UsageError(f"cannot read dialect file {path!r}: {_reason(e)}") from None
    except SystemExit:
        raise UsageError(f"dialect file {path!r} called exit() while loading") from None
    except callsieve.CallsieveError as e:
        raise UsageError(f"dialect file {path!r}: {e}") from None
    except Exception as e:  # the user's code: whatever it raised, named, without a traceback
        raise UsageError(f"cannot load dialect file {path!r}: {type(e).__name__}: {e}") from None
    found: list[Dialect] = []
    for value in namespace.values():
        if isinstance(value, Dialect) and value not in found:
            found.append(value)
    if not found:
        raise UsageError(f"dialect file {path!r} defines no Dialect at its top level")
    for d in found:
        try:
            register(d)
        except callsieve.CallsieveError as e:
            raise UsageError(f"dialect file {path!r}: {e}") from None
    return found


def dialect_files(args: argparse.Namespace) -> list[Dialect]:
    return [d for path in (getattr(args, "dialect_file", None) or []) for d in load_dialect_file(path)]


def add_sieve_arguments(parser: argparse.ArgumentParser) -> None:
    """The options ``parse`` and ``demo`` share: dialects, tools, policies."""
    parser.add_argument(
        "--dialect", action="append", metavar="NAME",
        help=f"a dialect to recognise (repeatable or comma-separated; default: all of {', '.join(callsieve.DIALECTS)})",
    )
    parser.add_argument("--tools", metavar="FILE", help="OpenAI tool schemas (a JSON list, or an object with 'tools')")
    add_engine_arguments(parser)
    parser.add_argument("--on-malformed", choices=("text", "drop", "raise"), default="text",
                        help="a malformed or unterminated block: shown as text (default), dropped, or an error")
    parser.add_argument("--unknown-tool", choices=("call", "text", "drop"), default="call",
                        help="with --tools, a call to a tool not listed (default: kept as a call)")
    parser.add_argument("--start-in-reasoning", action="store_true",
                        help="the prompt ended with <think>: output is reasoning until </think>")
    parser.add_argument("--calls-in-reasoning", choices=("dialect", "call", "reasoning"), default="dialect",
                        help="a tool-call block inside unclosed reasoning: a call where its dialect says so "
                        "(default), always, or never")
    # A transcript's events are a record: the same input prints the same ids. A library
    # sieve draws a random prefix instead (ids must never repeat across a conversation).
    parser.add_argument("--id-prefix", default="call_", metavar="PREFIX",
                        help="call ids are PREFIX + index (default: call_, so output is reproducible)")


def dialects_of(args: argparse.Namespace, own: list[Dialect] | None = None) -> list[str] | None:
    """The names ``--dialect`` gives (checked), or None for the default: every built-in
    dialect, and those of ``--dialect-file`` (``own``) beside them."""
    if not args.dialect:
        return [*callsieve.DIALECTS, *(d.name for d in own)] if own else None
    names = [n.strip() for spec in args.dialect for n in spec.split(",") if n.strip()]
    for n in names:
        if lookup(n) is None:  # a dialect's name or a server parser's (ALIASES)
            known = [*callsieve.DIALECTS, *(d.name for d in own or [])]
            raise UsageError(f"unknown dialect {n!r} (known: {', '.join(known)}; a dialect of your own: --dialect-file)")
    if not names:
        raise UsageError("--dialect needs a name")
    return names


def load_tools_file(path: str | None) -> list[Any] | None:
    if path is None:
        return None
    try:
        with open(path, encoding="utf-8") as f:
            text = f.read()
    except (OSError, UnicodeDecodeError) as e:
        raise UsageError(f"cannot read tools file {path!r}: {_reason(e)}") from None
    try:
        data = json.loads(text)
    except ValueError as e:
        raise UsageError(f"tools file {path!r} is not JSON: {e}") from None
    if isinstance(data, dict) and "tools" in data:
        data = data["tools"]
    try:
        callsieve.Sieve(tools=data)
    except callsieve.InvalidToolSchemaError as e:
        raise UsageError(f"invalid tool schema in {path!r}: {e}") from None
    return list(data)


def make_sieve(args: argparse.Namespace) -> callsieve.Sieve:
    """A sieve from the shared options (raises UsageError on bad ones)."""
    own = dialect_files(args)
    return callsieve.Sieve(
        dialects_of(args, own),
        load_tools_file(args.tools),
        on_malformed=args.on_malformed,
        unknown_tool=args.unknown_tool,
        start_in_reasoning=args.start_in_reasoning,
        calls_in_reasoning=getattr(args, "calls_in_reasoning", "dialect"),
        id_prefix=getattr(args, "id_prefix", "call_"),
        **engine_options(args),
    )


def _reason(e: BaseException) -> str:
    if isinstance(e, OSError) and e.strerror:
        return e.strerror
    if isinstance(e, UnicodeDecodeError):
        return f"not valid UTF-8 (byte 0x{e.object[e.start]:02x} at offset {e.start})"
    return str(e)


def event_json(e: Event) -> dict[str, Any]:
    """An event as a JSON object: ``type`` and the event's fields."""
    out: dict[str, Any] = {"type": TYPE_NAMES[type(e)]}
    for f in dataclasses.fields(e):
        out[f.name] = getattr(e, f.name)
    return out


def _blocks(stream: IO[bytes], path: str) -> Iterator[str]:
    """Text as it arrives: each available block of bytes, decoded incrementally."""
    decoder = codecs.getincrementaldecoder("utf-8")()
    read = getattr(stream, "read1", stream.read)
    offset = 0
    while True:
        try:
            data = read(65536)
        except OSError as e:
            raise UsageError(f"cannot read {path!r}: {_reason(e)}") from None
        try:
            text = decoder.decode(data, final=not data)
        except UnicodeDecodeError as e:
            raise UsageError(f"{path!r} is not valid UTF-8 (byte 0x{e.object[e.start]:02x} at offset {offset + e.start})") from None
        offset += len(data)
        if text:
            yield text
        if not data:
            return


def read_file(path: str) -> str:
    try:
        with open(path, "rb") as f:
            data = f.read()
    except OSError as e:
        raise UsageError(f"cannot read {path!r}: {_reason(e)}") from None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as e:
        raise UsageError(f"{path!r} is not valid UTF-8 (byte 0x{e.object[e.start]:02x} at offset {e.start})") from None


def _pieces(args: argparse.Namespace) -> Iterator[str]:
    if args.file == "-":
        source: Iterator[str] = _blocks(sys.stdin.buffer, "<stdin>")
    else:
        source = iter([read_file(args.file)])
    n = args.chunk
    for text in source:
        if n is not None:
            for i in range(0, len(text), n):
                yield text[i : i + n]
        else:
            yield text


def run(args: argparse.Namespace) -> int:
    out = sys.stdout
    ascii_only = not (out.encoding or "").lower().replace("-", "").startswith("utf")
    held: list[Event] = []
    try:
        sieve = make_sieve(args)
        for piece in _pieces(args):
            events = sieve.feed(piece)
            if args.merged:
                held += events
                continue
            for e in events:
                out.write(json.dumps(event_json(e), ensure_ascii=ascii_only) + "\n")
            out.flush()
        events = held + sieve.close()
        for e in callsieve.merged(events) if args.merged else events:
            out.write(json.dumps(event_json(e), ensure_ascii=ascii_only) + "\n")
        out.flush()
    except UsageError as e:
        error(str(e))
        return USAGE_ERROR
    except callsieve.MalformedBlockError as e:
        # Every event decided before the block, the ones the raising feed() decided
        # included (e.events, ending with the block's Diagnostic), is written first:
        # fed whole or in pieces, the output before the error is the same.
        before = [x for x in e.events if x is not e.diagnostic] if e.events else []
        if args.merged:
            before = callsieve.merged(held + before)
        for x in before:
            out.write(json.dumps(event_json(x), ensure_ascii=ascii_only) + "\n")
        out.flush()
        error(f"{e} (--on-malformed raise)")
        return USAGE_ERROR
    return 0
