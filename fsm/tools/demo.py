"""``callsieve demo``: bundled transcripts, what a naive filter shows, what callsieve extracts.

    callsieve demo                   # every sample, fed in 4-character chunks
    callsieve demo cut_at_close --chunk 1
    callsieve demo fenced --whole
    callsieve demo --list

Each sample (``fsm/tools/samples/index.json``) shows one bug users meet: tool-call markup
read aloud by a voice app, a file's contents cut at a literal ``</parameter>``, an
example in a Markdown fence executed. It is fed to two consumers in the same chunks, as
a stream would deliver them:

* a naive filter of the kind serving stacks and apps ship: a marker filter that looks
  for whole markers in each chunk (``str.find``, then a regex fallback), or a parser
  whose block ends at the first ``</tool_call>`` and whose value ends at the first
  ``</parameter>``, found by a regex that knows nothing about Markdown fences;
* a :class:`callsieve.Sieve` with every built-in dialect.

The output shows the text each would show the user and the calls each would run, then
checks callsieve's result against the same input fed whole (chunking does not matter).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
from dataclasses import dataclass, field
from importlib import resources
from typing import Any, Callable, TextIO

import callsieve
from callsieve.tools.parse import USAGE_ERROR, UsageError, chunk_size, error

DEFAULT_CHUNK = 4


# ------------------------------------------------------------------ the samples
@dataclass(frozen=True)
class Sample:
    name: str
    title: str
    story: str
    naive: str
    text: str


def load_samples() -> list[Sample]:
    """The bundled samples, in order (package data under ``fsm/tools/samples/``)."""
    root = resources.files("callsieve.tools").joinpath("samples")
    index = json.loads(root.joinpath("index.json").read_text(encoding="utf-8"))
    return [
        Sample(s["name"], s["title"], s["story"], s["naive"], root.joinpath(s["file"]).read_text(encoding="utf-8"))
        for s in index
    ]


# ------------------------------------------------------------------ naive filters
@dataclass
class Outcome:
    """What a consumer would show the user and which calls it would run."""

    text: str
    calls: list[tuple[str, dict[str, Any]]]
    notes: list[str] = field(default_factory=list)


# The marker list and regex fallback a voice app shipped as its fix for DSML read aloud.
LEAK_MARKERS = (
    "<｜DSML｜>", "<｜tool▁calls▁begin｜>", "<|DSML|>", "<|tool_calls_begin|>",
    "<｜tool｜calls｜>", "</｜tool｜calls｜>", "<｜invoke｜", "</｜invoke｜>", "<｜parameter｜",
    "<‖DSML‖", "</‖DSML‖",
)
LEAK_PATTERN = re.compile(
    r"</?[｜|]{1,2}(?:DSML[｜|]{1,2}|)(?:tool_calls|tool[｜|]{1,2}calls|invoke|parameter)"
)


def per_chunk_marker_filter(chunks: list[str]) -> Outcome:
    """The voice app's streaming filter: per chunk, find the first marker; cut there and
    stop showing anything once one is seen. It extracts no calls: it relies on the
    upstream also sending them in ``delta.tool_calls``. A marker split across two chunks
    is in neither, so it is shown (and read aloud)."""
    shown: list[str] = []
    started = False
    for chunk in chunks:
        if started:
            continue
        pos = -1
        for marker in LEAK_MARKERS:
            p = chunk.find(marker)
            if p >= 0 and (pos < 0 or p < pos):
                pos = p
        if pos < 0:
            m = LEAK_PATTERN.search(chunk)
            if m:
                pos = m.start()
        if pos >= 0:
            shown.append(chunk[:pos].rstrip())
            started = True
        else:
            shown.append(chunk)
    notes = [] if started else ["no marker was ever found in a single chunk"]
    return Outcome("".join(shown), [], notes)


_BLOCK = re.compile(r"<tool_call>(.*?)(?:</tool_call>|\Z)", re.S)
_FUNCTION = re.compile(r"<function=([^>\n]+)>")


def first_close_parser(chunks: list[str]) -> Outcome:
    """The usual regex parser: a block ends at the first ``</tool_call>``, a value at the
    first ``</parameter>`` (``str.find``), one newline stripped at each end; fences
    ignored. (It buffers the whole stream first, which only flatters it.)"""
    text = "".join(chunks)
    calls: list[tuple[str, dict[str, Any]]] = []
    for m in _BLOCK.finditer(text):
        body = m.group(1)
        fn = _FUNCTION.search(body)
        if fn is None:
            continue
        args: dict[str, Any] = {}
        pos = fn.end()
        while True:
            p = body.find("<parameter=", pos)
            if p < 0:
                break
            gt = body.find(">", p)
            if gt < 0:
                break
            end = body.find("</parameter>", gt)
            value = body[gt + 1 : end if end >= 0 else len(body)]
            value = value[1:] if value.startswith("\n") else value
            value = value[:-1] if value.endswith("\n") else value
            args[body[p + len("<parameter=") : gt]] = value
            if end < 0:
                break
            pos = end + len("</parameter>")
        calls.append((fn.group(1), args))
    return Outcome(_BLOCK.sub("", text), calls)


NAIVE: dict[str, tuple[str, Callable[[list[str]], Outcome]]] = {
    "per_chunk_marker_filter": ("a filter that looks for whole markers in each chunk", per_chunk_marker_filter),
    "first_close_parser": (
        "a regex parser: a value ends at the first </parameter>, Markdown fences are ignored", first_close_parser
    ),
}


# ------------------------------------------------------------------ callsieve
@dataclass
class SieveRun:
    outcome: Outcome
    events: list[callsieve.Event]
    # per call index: (chunk where ToolCallStart came, fragments, chunk where ToolCall came)
    timeline: dict[int, tuple[int, int, int]]


def run_sieve(chunks: list[str]) -> SieveRun:
    s = callsieve.Sieve(id_prefix="call_")  # fed twice (chunked, whole): same ids to compare
    per = [s.feed(c) for c in chunks] + [s.close()]
    events = [e for batch in per for e in batch]
    started: dict[int, int] = {}
    fragments: dict[int, int] = {}
    done: dict[int, int] = {}
    for k, batch in enumerate(per):
        for e in batch:
            if isinstance(e, callsieve.ToolCallStart):
                started[e.index] = k + 1
            elif isinstance(e, callsieve.ToolCallDelta):
                fragments[e.index] = fragments.get(e.index, 0) + 1
            elif isinstance(e, callsieve.ToolCall):
                done[e.index] = k + 1
    calls = [e for e in events if isinstance(e, callsieve.ToolCall)]
    outcome = Outcome(
        "".join(e.text for e in events if isinstance(e, callsieve.Text)),
        [(c.name, c.arguments) for c in calls],
        [f"{d.code}: {d.message}" for d in events if isinstance(d, callsieve.Diagnostic)],
    )
    timeline = {c.index: (started.get(c.index, 0), fragments.get(c.index, 0), done[c.index]) for c in calls}
    return SieveRun(outcome, events, timeline)


# ------------------------------------------------------------------ display
class Style:
    def __init__(self, color: bool) -> None:
        self.color = color

    def _sgr(self, code: str, s: str) -> str:
        return f"\033[{code}m{s}\033[0m" if self.color else s

    def bold(self, s: str) -> str:
        return self._sgr("1", s)

    def dim(self, s: str) -> str:
        return self._sgr("2", s)

    def good(self, s: str) -> str:
        return self._sgr("32", "✓ " + s)

    def bad(self, s: str) -> str:
        return self._sgr("31", "✗ " + s)


def _quote(s: str, limit: int = 70) -> str:
    """A string on one line, JSON-quoted; long ones shortened with their length."""
    q = json.dumps(s, ensure_ascii=False)
    if len(q) <= limit:
        return q
    tail = json.dumps(s[-24:], ensure_ascii=False)[1:]
    return f"{q[: limit - 30]}…{tail}  ({len(s)} chars)"


def _value(v: Any) -> str:
    return _quote(v) if isinstance(v, str) else json.dumps(v, ensure_ascii=False)


def _show_text(out: TextIO, st: Style, text: str) -> None:
    if not text:
        out.write("      " + st.dim("(nothing)") + "\n")
        return
    for line in text.split("\n"):
        out.write("      " + st.dim("│") + " " + line + "\n")


def _show_calls(out: TextIO, st: Style, calls: list[tuple[str, dict[str, Any]]], timeline: list[str] | None = None) -> None:
    if not calls:
        out.write("      " + st.dim("(none)") + "\n")
        return
    for n, (name, args) in enumerate(calls):
        out.write(f"      {st.bold(name)}(\n")
        for k, v in args.items():
            out.write(f"        {k} = {_value(v)}\n")
        out.write("      )" + (st.dim("  " + timeline[n]) if timeline else "") + "\n")


def _verdicts(st: Style, naive: Outcome, ours: Outcome) -> list[str]:
    """What the naive consumer got wrong, measured against callsieve's result."""
    lines: list[str] = []
    if naive.text != ours.text:
        extra = len(naive.text) - len(ours.text)
        if ours.text and ours.text.rstrip() in naive.text and extra > 0:
            lines.append(st.bad(f"showed the user {extra} characters of markup"))
        elif extra < 0:
            lines.append(st.bad(f"hid {-extra} characters meant for the user"))
        else:
            lines.append(st.bad("showed the user different text (markup shown, prose hidden)"))
    ours_by_name = {name: args for name, args in ours.calls}
    naive_names = [name for name, _ in naive.calls]
    for name, args in naive.calls:
        if name not in ours_by_name:
            lines.append(st.bad(f"ran {name}(), which the model only showed as an example"))
            continue
        want = ours_by_name[name]
        for k, v in want.items():
            got = args.get(k)
            if got != v:
                if isinstance(got, str) and isinstance(v, str) and v.startswith(got):
                    lines.append(st.bad(
                        f"{name}.{k}: kept {len(got)} of {len(v)} characters, and reported the call as complete"
                    ))
                else:
                    lines.append(st.bad(f"{name}.{k}: got {_value(got)}, the model wrote {_value(v)}"))
    for name in ours_by_name:
        if name not in naive_names:
            lines.append(st.bad(f"lost the call {name}()"))
    if not lines:
        lines.append(st.good("same result as callsieve"))
    return lines


def show(out: TextIO, st: Style, sample: Sample, number: int, total: int, chunk: int) -> bool:
    """Print one sample; True when callsieve's own checks held (no loss, chunking)."""
    chunks = [sample.text[i : i + chunk] for i in range(0, len(sample.text), chunk)] if chunk else [sample.text]
    naive_label, naive_fn = NAIVE[sample.naive]
    naive = naive_fn(chunks)
    ours = run_sieve(chunks)
    whole = run_sieve([sample.text])
    same = callsieve.merged(ours.events) == callsieve.merged(whole.events)

    out.write(st.bold(f"[{number}/{total}] {sample.name}: {sample.title}") + "\n")
    out.write(f"  {sample.story}\n")
    feed = f"fed in {len(chunks)} chunks of {chunk} characters" if chunk else "fed whole"
    out.write(st.dim(f"  input: {len(sample.text)} characters ({sample.name}), {feed}") + "\n\n")

    out.write(f"  {st.bold('naive')}: {naive_label}\n")
    out.write("    text shown to the user:\n")
    _show_text(out, st, naive.text)
    out.write("    calls it would run:\n")
    _show_calls(out, st, naive.calls)
    for note in naive.notes:
        out.write(st.dim(f"    ({note})") + "\n")
    for line in _verdicts(st, naive, ours.outcome):
        out.write(f"    {line}\n")
    out.write("\n")

    out.write(f"  {st.bold('callsieve')}: callsieve.Sieve(), every built-in dialect\n")
    out.write("    text shown to the user:\n")
    _show_text(out, st, ours.outcome.text)
    out.write("    calls:\n")
    timeline = []
    for index, (begun, fragments, done) in ours.timeline.items():
        timeline.append(f"started at chunk {begun}, arguments in {fragments} fragments, complete at chunk {done}")
    _show_calls(out, st, ours.outcome.calls, timeline)
    for note in ours.outcome.notes:
        out.write(st.dim(f"    ({note})") + "\n")
    if "".join(e.raw for e in ours.events) == sample.text:
        n = len(ours.outcome.calls)
        out.write("    " + st.good(f"{n} call{'s' if n != 1 else ''}; every input character is in the text or a call's raw") + "\n")
    else:
        out.write("    " + st.bad("events do not account for the input: a bug, please report it") + "\n")
    if same:
        out.write("    " + st.good("same events fed whole as fed in chunks") + "\n")
    else:
        out.write("    " + st.bad("events differ when fed whole: a bug, please report it") + "\n")
    out.write("\n")
    return same and "".join(e.raw for e in ours.events) == sample.text


# ------------------------------------------------------------------ command
def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("samples", nargs="*", metavar="SAMPLE", help="which samples (default: all; see --list)")
    parser.add_argument("--chunk", type=chunk_size, default=DEFAULT_CHUNK, metavar="N",
                        help=f"feed N characters at a time, N >= 1 (default {DEFAULT_CHUNK})")
    parser.add_argument("--whole", action="store_true", help="feed each sample whole, in one chunk")
    parser.add_argument("--list", action="store_true", help="list the bundled samples and exit")
    parser.add_argument("--color", choices=("auto", "always", "never"), default="auto",
                        help="colour the verdicts (auto: only on a terminal, and not with NO_COLOR)")


def _use_color(mode: str, out: TextIO) -> bool:
    if mode != "auto":
        return mode == "always"
    return bool(getattr(out, "isatty", lambda: False)()) and "NO_COLOR" not in os.environ and os.environ.get("TERM") != "dumb"


def run(args: argparse.Namespace) -> int:
    out = sys.stdout
    reconfigure = getattr(out, "reconfigure", None)
    if reconfigure is not None:
        reconfigure(errors="backslashreplace")
    try:
        samples = load_samples()
        if args.list:
            for s in samples:
                out.write(f"{s.name:12} {s.title}\n")
            return 0
        by_name = {s.name: s for s in samples}
        for name in args.samples:
            if name not in by_name:
                raise UsageError(f"unknown sample {name!r} (known: {', '.join(by_name)})")
        chosen = [by_name[n] for n in args.samples] if args.samples else samples
    except UsageError as e:
        error(str(e))
        return USAGE_ERROR
    st = Style(_use_color(args.color, out))
    out.write(st.bold("callsieve demo: what a naive filter shows the user, and what callsieve extracts") + "\n\n")
    ok = True
    for n, sample in enumerate(chosen, 1):
        ok = show(out, st, sample, n, len(chosen), 0 if args.whole else args.chunk) and ok
    out.write(st.dim("Parse your own: callsieve parse FILE  (JSON Lines events; --help for options)") + "\n")
    return 0 if ok else 1
