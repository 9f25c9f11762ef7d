"""``callsieve bench``: throughput, growth and memory, against a ceiling and a naive parser.

Each workload (see :mod:`callsieve.tools.bench_workloads`) is fed to a fresh :class:`callsieve.Sieve`
whole and in token-sized chunks (seeded lengths 1-8), and the prose workload also in
4-character chunks. For each, in the same run and on the same input:

* the sieve: MB/s (10^6 characters a second), ``feed()`` calls a second, and its peak
  memory (tracemalloc, in a separate pass, events dropped as they come like a
  streaming consumer would);
* the *ceiling*: one compiled-regex scan of the input for the characters the text
  state stops at (start characters and fence characters): whole, one ``findall``;
  chunked, one ``search`` per chunk (the least any per-chunk Python code can cost);
* the *naive* parser (:mod:`callsieve.tools.bench_naive`), re-parsing the accumulated buffer on
  every chunk. It is quadratic, so chunked runs stop after a time budget: the sieve is
  then timed on the same prefix, and the naive time for the whole input is
  extrapolated from the growth measured between half the prefix and all of it.

Growth: each workload in token-sized chunks at 100 KB, 1 MB and 10 MB (``--quick``:
100 KB and 1 MB); the exponent is the least-squares slope of log(time) against
log(size), which must be at most 1.1 (linear time).

Timing is ``time.perf_counter``, best of ``--repeat`` runs, garbage collector on (a
collection runs before each timed run). Targets are printed with PASS/FAIL and never
change the exit status: CI machines are noisy.
"""

from __future__ import annotations

import argparse
import gc
import json
import math
import os
import platform
import re
import sys
import time
import tracemalloc
from array import array
from dataclasses import asdict, dataclass, field
from typing import Any, Callable, Sequence

import callsieve
from callsieve.tools.bench_naive import NaiveStream
from callsieve.tools.bench_workloads import HOSTILE, WORKLOADS, Hostile, Workload, available, chunk_sizes, cut, prose
from callsieve.events import ToolCall
from callsieve.sieve import DEFAULT_MAX_BLOCK_CHARS, Sieve, compiled

MB = 1_000_000
GROWTH_LIMIT = 1.1


# ---------------------------------------------------------------- configuration
@dataclass
class Config:
    size: int = MB
    quick: bool = False
    repeat: int = 3
    seed: int = 1
    naive_budget: float = 2.0  # seconds per chunked naive run
    whole_budget: float = 3.0  # seconds of repeated runs fed whole
    growth_rounds: int = 2  # interleaved rounds over the growth sizes
    growth_sizes: tuple[int, ...] = (100_000, MB, 10 * MB)
    memory_prose_size: int = 10 * MB
    workloads: tuple[str, ...] = ()
    growth: bool = True
    memory: bool = True
    hostile: bool = True
    hostile_sizes: tuple[int, ...] = (100_000, MB)

    @classmethod
    def from_args(cls, args: argparse.Namespace) -> "Config":
        size = args.size or MB
        quick = bool(args.quick)
        c = cls(size=size, quick=quick, seed=args.seed)
        if quick:
            c.repeat = 1
            c.naive_budget = 0.25
            c.whole_budget = 0.3
            c.growth_rounds = 1
            c.growth_sizes = (max(1000, size // 10), size)
            c.memory_prose_size = size
        else:
            c.growth_sizes = (max(1000, size // 10), size, size * 10)
            c.memory_prose_size = size * 10
        if args.repeat:
            c.repeat = args.repeat
        if args.naive_budget is not None:
            c.naive_budget = args.naive_budget
        c.workloads = tuple(args.workload or ())
        c.growth = not args.no_growth
        c.memory = not args.no_memory
        c.hostile = not getattr(args, "no_hostile", False)
        if quick:
            c.hostile_sizes = (10_000, 100_000)
        return c


# ---------------------------------------------------------------- the machine
def machine() -> dict[str, Any]:
    cpu = platform.processor() or platform.machine()
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as f:
            for line in f:
                if line.lower().startswith("model name"):
                    cpu = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    return {
        "cpu": cpu,
        "cores": os.cpu_count(),
        "python": f"{platform.python_implementation()} {platform.python_version()}",
        "platform": platform.platform(terse=True),
        "python_call_ns": _call_ns(),
    }


def _noop() -> None:
    return None


def _call_ns() -> float:
    """Time of one empty Python function call: a yardstick for comparing machines
    (per-feed costs scale with it; regex scans do not)."""
    best = math.inf
    f = _noop
    for _ in range(5):
        t0 = time.perf_counter()
        for _ in range(200_000):
            f()
        best = min(best, time.perf_counter() - t0)
    return best / 200_000 * 1e9


# ---------------------------------------------------------------- timing helpers
def _best(run: Callable[[], Any], repeat: int) -> float:
    best = math.inf
    for _ in range(max(1, repeat)):
        gc.collect()
        t0 = time.perf_counter()
        run()
        best = min(best, time.perf_counter() - t0)
    return best


def _sieve(w: Workload, size: int) -> Sieve:
    return Sieve(w.dialects, max_block_chars=max(DEFAULT_MAX_BLOCK_CHARS, 2 * size))


def _time_sieve(w: Workload, chunks: Sequence[str], size: int, repeat: int, budget: float = math.inf) -> float:
    """Best of ``repeat`` timed runs; no new run starts once ``budget`` seconds are spent."""
    best = math.inf
    spent = 0.0
    for _ in range(max(1, repeat)):
        if spent > budget:
            break
        s = _sieve(w, size)
        feed = s.feed
        gc.collect()
        t0 = time.perf_counter()
        for c in chunks:
            feed(c)
        s.close()
        t = time.perf_counter() - t0
        best = min(best, t)
        spent += t
    return best


def _ceiling_pattern(w: Workload) -> "re.Pattern[str]":
    """The characters the text state must stop at: start characters, plus the
    characters its bulk rule stops on (fence characters)."""
    machine = Sieve(w.dialects).machine
    rule = compiled(machine).bulk.get("text")
    chars = machine.matchers["text"].start_chars + (rule.stop_chars if rule is not None else "")
    return re.compile("[" + re.escape("".join(sorted(set(chars)))) + "]")


def _time_ceiling(pat: "re.Pattern[str]", chunks: Sequence[str], repeat: int) -> float:
    if len(chunks) == 1:
        findall = pat.findall
        whole = chunks[0]
        return _best(lambda: findall(whole), repeat)
    search = pat.search

    def run() -> None:
        for c in chunks:
            search(c)

    return _best(run, repeat)


@dataclass
class NaiveResult:
    chars: int
    seconds: float
    capped: bool
    exponent: float | None  # measured growth within the run (chunked, capped runs)
    full_seconds: float  # measured, or extrapolated when capped
    sieve_seconds_same_input: float


def _time_naive(w: Workload, chunks: Sequence[str], budget: float, size: int, repeat: int) -> NaiveResult:
    total = sum(len(c) for c in chunks)
    if len(chunks) == 1:
        def run() -> None:
            n = NaiveStream(w.dialects)
            n.feed(chunks[0])
            n.close()

        t = _best(run, repeat)
        return NaiveResult(total, t, False, None, t, math.nan)
    n = NaiveStream(w.dialects)
    feed = n.feed
    marks: list[tuple[int, float]] = []
    gc.collect()
    t0 = time.perf_counter()
    chars = 0
    k = 0
    elapsed = 0.0
    for k, c in enumerate(chunks, 1):
        feed(c)
        chars += len(c)
        if k % 256 == 0:
            elapsed = time.perf_counter() - t0
            marks.append((chars, elapsed))
            if elapsed > budget:
                break
    n.close()
    elapsed = time.perf_counter() - t0
    capped = chars < total
    exponent = None
    full = elapsed
    if capped:
        half = min(marks, key=lambda m: abs(m[0] - chars / 2))
        if 0 < half[0] < chars and half[1] > 0:
            exponent = math.log(elapsed / half[1]) / math.log(chars / half[0])
        e = max(exponent or 2.0, 1.0)
        full = elapsed * (total / chars) ** e
    same = _time_sieve(w, chunks[:k], size, repeat) if capped else math.nan
    return NaiveResult(chars, elapsed, capped, exponent, full, same)


def _peak_memory(w: Workload, text: str, sizes: "Sequence[int] | None", size: int) -> int:
    """Peak bytes allocated while streaming (tracemalloc), events dropped as they come.

    Each chunk is cut from the input inside the traced region, as a server receives
    fresh strings: whatever the sieve keeps of them counts. The input itself does not.
    """
    s = _sieve(w, size)
    feed = s.feed
    gc.collect()
    tracemalloc.start()
    try:
        tracemalloc.reset_peak()
        base = tracemalloc.get_traced_memory()[0]
        if sizes is None:
            feed(text)
        else:
            i = 0
            for k in sizes:
                feed(text[i : i + k])
                i += k
        s.close()
        peak = tracemalloc.get_traced_memory()[1] - base
    finally:
        tracemalloc.stop()
    return peak


def _verify(w: Workload, text: str, size: int) -> dict[str, Any]:
    """One untimed pass: the sieve did the work (raw round-trips, calls found)."""
    s = _sieve(w, size)
    events = s.feed(text) + s.close()
    raw = "".join(e.raw for e in events)
    calls = [e for e in events if isinstance(e, ToolCall)]
    largest = 0
    for c in calls:
        for v in c.arguments.values():
            if isinstance(v, str):
                largest = max(largest, len(v.encode("utf-8")))
    return {"round_trip": raw == text, "calls": len(calls), "largest_arg_bytes": largest}


# ---------------------------------------------------------------- one workload
@dataclass
class ModeResult:
    mode: str
    chars: int
    feeds: int
    seconds: float
    mb_s: float
    feeds_s: float
    us_per_feed: float
    ceiling_mb_s: float
    of_ceiling: float  # sieve MB/s / ceiling MB/s
    naive: dict[str, Any]
    x_naive: float  # naive time / sieve time on the same input
    peak_bytes: int | None = None


@dataclass
class WorkloadResult:
    name: str
    title: str
    dialects: tuple[str, ...]
    status: str  # "ok" or "skipped: ..."
    chars: int = 0
    check: dict[str, Any] = field(default_factory=dict)
    modes: list[ModeResult] = field(default_factory=list)
    growth: dict[str, Any] = field(default_factory=dict)
    spent_s: float = 0.0  # wall time this workload took to benchmark


MODES: dict[str, Callable[[Workload], bool]] = {
    "whole": lambda w: True,
    "tokens": lambda w: True,
    "4-char": lambda w: w.name == "prose_call",
}


def _sizes_for(mode: str, text: str, seed: int) -> "array[int] | None":
    """Chunk lengths for a mode (None: the input whole)."""
    if mode == "whole":
        return None
    if mode == "4-char":
        return array("B", [4]) * (len(text) // 4) + array("B", [len(text) % 4] if len(text) % 4 else [])
    return chunk_sizes(len(text), seed)


def _chunks_for(mode: str, text: str, seed: int) -> list[str]:
    sizes = _sizes_for(mode, text, seed)
    return [text] if sizes is None else cut(text, sizes)


def run_workload(w: Workload, cfg: Config, log: Callable[[str], None]) -> WorkloadResult:
    if not available(w, callsieve.DIALECTS):
        return WorkloadResult(w.name, w.title, w.dialects, "skipped: dialect not built")
    text = w.build(cfg.size, cfg.seed)
    res = WorkloadResult(w.name, w.title, w.dialects, "ok", len(text), _verify(w, text, cfg.size))
    ceiling = _ceiling_pattern(w)
    tokens_seconds: float | None = None
    for mode, wanted in MODES.items():
        if not wanted(w):
            continue
        log(f"  {w.name} {mode}")
        chunks = _chunks_for(mode, text, cfg.seed + 1)
        if mode == "whole":  # fast and noisy: more runs, within a time budget
            t = _time_sieve(w, chunks, cfg.size, max(cfg.repeat, 5), cfg.whole_budget)
        else:
            t = _time_sieve(w, chunks, cfg.size, cfg.repeat)
        if mode == "tokens":
            tokens_seconds = t
        tc = _time_ceiling(ceiling, chunks, max(cfg.repeat, 3))
        nv = _time_naive(w, chunks, cfg.naive_budget, cfg.size, cfg.repeat)
        if nv.capped:
            x_naive = nv.seconds / nv.sieve_seconds_same_input
        else:
            x_naive = nv.seconds / t
        naive = {
            "chars": nv.chars,
            "seconds": nv.seconds,
            "mb_s": nv.chars / nv.seconds / MB,
            "capped": nv.capped,
            "growth_exponent": nv.exponent,
            "full_seconds": nv.full_seconds,
            "full_extrapolated": nv.capped,
        }
        mr = ModeResult(
            mode,
            len(text),
            len(chunks),
            t,
            len(text) / t / MB,
            len(chunks) / t,
            t / len(chunks) * 1e6,
            len(text) / tc / MB,
            tc / t,
            naive,
            x_naive,
        )
        if cfg.memory and mode != "4-char" and (not cfg.quick or (mode == "tokens" and w.big_arg)):
            # --quick: only the passes a target reads (tracemalloc is slow).
            mr.peak_bytes = _peak_memory(w, text, _sizes_for(mode, text, cfg.seed + 1), cfg.size)
        res.modes.append(mr)
        del chunks
    if cfg.growth:
        res.growth = _growth(w, cfg, log, (res.chars, tokens_seconds) if tokens_seconds is not None else None)
    return res


def _growth(w: Workload, cfg: Config, log: Callable[[str], None], main: tuple[int, float] | None) -> dict[str, Any]:
    """Token-chunk times at each growth size, best per size.

    Sizes are measured in interleaved rounds (small, large, small, large, ...) so a
    slow spell on a shared machine hits every size rather than one; sizes below the
    main one are cheap and get three runs a round. The main size's table run counts
    as one more run of that size (``--quick``: the only one, to stay within CI's minute).
    """
    best: dict[int, tuple[int, float]] = {}
    if main is not None:
        best[cfg.size] = main
    todo = [size for size in cfg.growth_sizes if not (cfg.quick and size in best)]
    inputs: dict[int, tuple[str, list[str]]] = {}
    for rnd in range(cfg.growth_rounds):
        for size in todo:
            if rnd == 0:
                log(f"  {w.name} growth {size:,}")
            if size not in inputs:
                text = w.build(size, cfg.seed)
                inputs[size] = (text, _chunks_for("tokens", text, cfg.seed + 1))
            text, chunks = inputs[size]
            t = _time_sieve(w, chunks, size, 3 if size < cfg.size else 1)
            if size not in best or t < best[size][1]:
                best[size] = (len(text), t)
            if size > cfg.size and rnd == cfg.growth_rounds - 1:
                del inputs[size]
    points = [best[size] for size in cfg.growth_sizes]
    xs = [math.log(n) for n, _ in points]
    ys = [math.log(t) for _, t in points]
    mx, my = sum(xs) / len(xs), sum(ys) / len(ys)
    sxx = sum((x - mx) ** 2 for x in xs)
    slope = sum((x - mx) * (y - my) for x, y in zip(xs, ys)) / sxx if sxx else math.nan
    return {
        "points": [{"chars": n, "seconds": t, "mb_s": n / t / MB} for n, t in points],
        "exponent": slope,
        "pass": slope <= GROWTH_LIMIT,
    }


# ---------------------------------------------------------------- hostile inputs
#: Floors for hostile input (issue 12, item 5), in CPU time: MB/s fed whole, and fed
#: one character per feed() (the worst chunking there is).
HOSTILE_WHOLE_MB_S = 2.0
HOSTILE_CHAR_MB_S = 0.2
HOSTILE_MODES = ("whole", "1-char")


def _hostile_sieve(h: Hostile, size: int) -> Sieve:
    return Sieve(h.dialects or None, max_block_chars=h.max_block_chars or max(DEFAULT_MAX_BLOCK_CHARS, 2 * size),
                 id_prefix="bench_")


def _cpu_feed(make: Callable[[], Sieve], text: str, one_char: bool, repeat: int) -> float:
    """Best CPU time (``time.process_time``: other processes share the machine) of
    feeding ``text`` whole or one character per ``feed()``, close included."""
    best = math.inf
    for _ in range(max(1, repeat)):
        s = make()
        feed = s.feed
        gc.collect()
        t0 = time.process_time()
        if one_char:
            for c in text:
                feed(c)
        else:
            feed(text)
        s.close()
        best = min(best, time.process_time() - t0)
    return best


def run_hostile(cfg: Config, log: Callable[[str], None]) -> dict[str, Any]:
    """Each hostile input at each of ``cfg.hostile_sizes``, fed whole and one character
    per feed; the growth exponent between the smallest and largest size; throughput at
    the largest, against the same run's prose figure in the same mode."""
    sizes = cfg.hostile_sizes
    big = sizes[-1]
    rows: list[dict[str, Any]] = []
    prose_text = prose(big, cfg.seed)
    prose_w = Hostile("prose", "prose (reference figure)", lambda n, seed: prose(n, seed), ("qwen3_coder",))
    ref: dict[str, float] = {}
    for mode in HOSTILE_MODES:
        t = _cpu_feed(lambda: _hostile_sieve(prose_w, big), prose_text, mode == "1-char", 1 if mode == "1-char" else 3)
        ref[mode] = len(prose_text) / t / MB
    for h in HOSTILE:
        log(f"  hostile {h.name}")
        row: dict[str, Any] = {"name": h.name, "title": h.title, "modes": {}}
        for mode in HOSTILE_MODES:
            points = []
            for n in sizes:
                text = h.build(n, cfg.seed)
                t = _cpu_feed(lambda: _hostile_sieve(h, n), text, mode == "1-char", 1 if mode == "1-char" else 3)
                points.append((len(text), t))
            (n0, t0), (n1, t1) = points[0], points[-1]
            exponent = math.log(t1 / t0) / math.log(n1 / n0) if t0 > 0 and t1 > 0 and n1 != n0 else math.nan
            mb_s = n1 / t1 / MB
            row["modes"][mode] = {"points": [{"chars": n, "cpu_seconds": t} for n, t in points], "mb_s": mb_s,
                                  "exponent": exponent, "of_prose": mb_s / ref[mode]}
        rows.append(row)
    return {"sizes": list(sizes), "prose_mb_s": ref, "rows": rows}


def hostile_targets(hostile: dict[str, Any]) -> list[Target]:
    out: list[Target] = []
    for row in hostile["rows"]:
        for mode, floor in (("whole", HOSTILE_WHOLE_MB_S), ("1-char", HOSTILE_CHAR_MB_S)):
            m = row["modes"][mode]
            out.append(Target(f"hostile {row['name']}, {mode}: throughput", m["mb_s"], floor, "MB/s", True,
                              f"{m['of_prose']:.0%} of prose {mode}"))
            out.append(Target(f"hostile {row['name']}, {mode}: growth exponent of time", m["exponent"], GROWTH_LIMIT, "", False))
    return out


def render_hostile(hostile: dict[str, Any]) -> str:
    sizes = hostile["sizes"]
    ref = hostile["prose_mb_s"]
    lines = [
        f"hostile inputs (CPU time; {' and '.join(f'{n / MB:g} MB' for n in sizes)}; "
        f"prose for reference: whole {ref['whole']:.2f} MB/s, 1-char {ref['1-char']:.2f} MB/s):",
        f"  {'input':<18} {'whole MB/s':>10} {'of prose':>8} {'exp':>5}   {'1-char MB/s':>11} {'of prose':>8} {'exp':>5}",
    ]
    for row in hostile["rows"]:
        w, c = row["modes"]["whole"], row["modes"]["1-char"]
        lines.append(f"  {row['name']:<18} {w['mb_s']:>10.2f} {w['of_prose']:>8.0%} {w['exponent']:>5.2f}   "
                     f"{c['mb_s']:>11.2f} {c['of_prose']:>8.0%} {c['exponent']:>5.2f}")
    return "\n".join(lines)


# ---------------------------------------------------------------- targets
@dataclass
class Target:
    name: str
    value: float
    limit: float
    unit: str
    higher_is_better: bool
    note: str = ""

    @property
    def passed(self) -> bool:
        if math.isnan(self.value):
            return False
        return self.value >= self.limit if self.higher_is_better else self.value <= self.limit


def _mode(r: WorkloadResult, mode: str) -> ModeResult | None:
    return next((m for m in r.modes if m.mode == mode), None)


def targets(results: list[WorkloadResult], prose_memory: dict[str, Any] | None) -> list[Target]:
    out: list[Target] = []
    by = {r.name: r for r in results if r.status == "ok"}
    prose = by.get("prose_call")
    if prose is not None:
        m4 = _mode(prose, "4-char")
        if m4 is not None:
            out.append(Target("prose, 4-char chunks: throughput", m4.mb_s, 4.0, "MB/s", True,
                              f"{m4.us_per_feed:.2f} µs per feed()"))
        mw = _mode(prose, "whole")
        if mw is not None:
            out.append(Target("prose, fed whole: share of the regex ceiling", mw.of_ceiling * 100, 25.0, "%", True,
                              f"{mw.mb_s:.1f} of {mw.ceiling_mb_s:.1f} MB/s"))
    for r in results:
        if r.status != "ok" or not any(w.big_arg for w in WORKLOADS if w.name == r.name):
            continue
        mt, mw = _mode(r, "tokens"), _mode(r, "whole")
        if mt is not None:
            out.append(Target(f"{r.name}, token chunks: throughput", mt.mb_s, 2.0, "MB/s", True))
        if mw is not None:
            out.append(Target(f"{r.name}, fed whole: throughput", mw.mb_s, 100.0, "MB/s", True))
        if mt is not None and mt.peak_bytes is not None and r.check.get("largest_arg_bytes"):
            ratio = mt.peak_bytes / r.check["largest_arg_bytes"]
            out.append(Target(f"{r.name}, streaming: peak memory / argument size", ratio, 4.0, "x", False,
                              f"{mt.peak_bytes / MB:.2f} MB for a {r.check['largest_arg_bytes'] / MB:.2f} MB argument"))
    if prose_memory is not None:
        out.append(Target(f"prose, streaming {prose_memory['chars'] / MB:.3g} MB: peak memory",
                          prose_memory["peak_bytes"] / MB, 1.0, "MB", False))
    for r in results:
        if r.status == "ok" and r.growth:
            out.append(Target(f"{r.name}: growth exponent of time", r.growth["exponent"], GROWTH_LIMIT, "", False,
                              " → ".join(f"{p['chars'] / MB:.3g} MB {p['mb_s']:.2f} MB/s" for p in r.growth["points"])))
    return out


# ---------------------------------------------------------------- reporting
def _fmt_bytes(n: int | None) -> str:
    if n is None:
        return "-"
    if n >= MB:
        return f"{n / MB:.2f} MB"
    return f"{n / 1000:.0f} KB"


def render_text(report: dict[str, Any], results: list[WorkloadResult], tgts: list[Target]) -> str:
    m = report["machine"]
    lines = [
        f"callsieve bench{' --quick' if report['config']['quick'] else ''}: "
        f"{m['cpu']}, {m['cores']} cores, {m['python']}, {m['platform']}; "
        f"an empty Python call takes {m['python_call_ns']:.0f} ns",
        f"main size {report['config']['size']:,} characters; best of {report['config']['repeat']}; "
        "MB = 10^6 characters",
        "",
        f"{'workload':<18} {'mode':<7} {'MB/s':>8} {'feeds/s':>10} {'µs/feed':>8} "
        f"{'ceiling':>8} {'of ceil':>7} {'naive':>8} {'× naive':>9}  {'peak mem':>9}",
    ]
    for r in results:
        if r.status != "ok":
            lines.append(f"{r.name:<18} {r.status}")
            continue
        for mr in r.modes:
            nv = mr.naive
            mark = "*" if nv["capped"] else " "
            lines.append(
                f"{r.name:<18} {mr.mode:<7} {mr.mb_s:>8.2f} {mr.feeds_s:>10,.0f} {mr.us_per_feed:>8.2f} "
                f"{mr.ceiling_mb_s:>8.1f} {mr.of_ceiling:>6.0%} {nv['mb_s']:>7.2f}{mark} {mr.x_naive:>8.1f}x  "
                f"{_fmt_bytes(mr.peak_bytes):>9}"
            )
    capped = [(r, mr) for r in results for mr in r.modes if mr.naive["capped"]]
    if capped:
        lines.append("")
        lines.append("* naive capped: it re-parses the whole buffer per chunk (quadratic), so it ran on a prefix")
        lines.append("  and × naive compares both on that prefix; its whole-input time is extrapolated:")
        for r, mr in capped:
            nv = mr.naive
            e = nv["growth_exponent"]
            lines.append(
                f"  {r.name:<18} {mr.mode:<7} ran {nv['chars'] / 1000:,.0f} KB in {nv['seconds']:.2f} s"
                f" (growth exponent {e:.2f}); whole input ≈ {nv['full_seconds']:,.1f} s"
                f" vs sieve {mr.seconds:.2f} s"
                if e is not None
                else f"  {r.name:<18} {mr.mode:<7} ran {nv['chars'] / 1000:,.0f} KB in {nv['seconds']:.2f} s"
            )
    if report.get("prose_memory"):
        pm = report["prose_memory"]
        lines.append("")
        lines.append(f"prose streamed in token chunks, {pm['chars'] / MB:.3g} MB: peak memory {_fmt_bytes(pm['peak_bytes'])}")
    if any(r.growth for r in results):
        lines.append("")
        lines.append("growth in token chunks (exponent of time; linear is 1.0, limit 1.1):")
        if report["config"]["quick"]:
            lines.append("  (--quick: two sizes one decade apart, one run at the larger; on a shared machine")
            lines.append("   a run can be 30% slow, which moves the exponent by ±0.1: the full run decides)")
        for r in results:
            if not r.growth:
                continue
            pts = "  ".join(f"{p['chars'] / MB:>6.2f} MB {p['seconds']:>7.3f} s" for p in r.growth["points"])
            lines.append(f"  {r.name:<18} {r.growth['exponent']:>5.2f}  {pts}")
    lines.append("")
    lines.append("targets (reported, not asserted):")
    for t in tgts:
        op = "≥" if t.higher_is_better else "≤"
        val = f"{t.value:.2f}{(' ' + t.unit) if t.unit and t.unit not in ('%', 'x') else t.unit}"
        lim = f"{t.limit:g}{(' ' + t.unit) if t.unit and t.unit not in ('%', 'x') else t.unit}"
        note = f"  ({t.note})" if t.note else ""
        lines.append(f"  [{'PASS' if t.passed else 'FAIL'}] {t.name}: {val} {op} {lim}{note}")
    lines.append("")
    lines.append(f"finished in {report['elapsed_s']:.1f} s")
    return "\n".join(lines)


def render_markdown(report: dict[str, Any], results: list[WorkloadResult], tgts: list[Target]) -> str:
    """The same figures as Markdown tables (for README)."""
    m = report["machine"]
    cfg = report["config"]
    out = [
        f"Machine: {m['cpu']}, {m['cores']} cores, {m['python']}, {m['platform']} "
        f"(an empty Python call: {m['python_call_ns']:.0f} ns). Command: `{cfg['command']}`; "
        f"main size {cfg['size'] / MB:g} MB; best of {cfg['repeat']}; MB = 10^6 characters.",
        "",
        "| workload | fed | MB/s | `feed()`/s | µs/feed | ceiling MB/s | of ceiling | naive MB/s | × naive | peak memory |",
        "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for r in results:
        if r.status != "ok":
            out.append(f"| {r.name} | {r.status} | | | | | | | | |")
            continue
        for mr in r.modes:
            nv = mr.naive
            naive = f"{nv['mb_s']:.2f}" + (" *" if nv["capped"] else "")
            out.append(
                f"| {r.name} | {mr.mode} | {mr.mb_s:.2f} | {mr.feeds_s:,.0f} | {mr.us_per_feed:.2f} | "
                f"{mr.ceiling_mb_s:.1f} | {mr.of_ceiling:.0%} | {naive} | {mr.x_naive:,.1f}× | {_fmt_bytes(mr.peak_bytes)} |"
            )
    capped = [(r, mr) for r in results for mr in r.modes if mr.naive["capped"]]
    if capped:
        out.append("")
        out.append(
            "\\* The naive parser re-parses the whole buffer on every chunk, so chunked runs stop after "
            f"{cfg.get('naive_budget', 0):g} s; × naive then compares both on the prefix it reached, "
            "and its time for the whole input is extrapolated with the growth it showed:"
        )
        out.append("")
        for r, mr in capped:
            nv = mr.naive
            e = nv["growth_exponent"]
            ex = f", growth exponent {e:.2f}, whole input ≈ {nv['full_seconds']:,.0f} s" if e is not None else ""
            out.append(f"- {r.name}, {mr.mode}: {nv['chars'] / 1000:,.0f} KB in {nv['seconds']:.2f} s{ex} (sieve: {mr.seconds:.2f} s)")
    if any(r.growth for r in results):
        out.append("")
        sizes = report["config"]["growth_sizes"]
        out.append("| growth, token chunks | " + " | ".join(f"{n / MB:g} MB" for n in sizes) + " | exponent |")
        out.append("|---|" + "---:|" * (len(sizes) + 1))
        for r in results:
            if r.growth:
                cells = " | ".join(f"{p['seconds']:.3f} s ({p['mb_s']:.2f} MB/s)" for p in r.growth["points"])
                out.append(f"| {r.name} | {cells} | {r.growth['exponent']:.2f} |")
    out.append("")
    out.append("| target | measured | limit | |")
    out.append("|---|---:|---:|---|")
    for t in tgts:
        op = "≥" if t.higher_is_better else "≤"
        unit = "" if t.unit in ("", "x", "%") else " " + t.unit
        suffix = {"x": "×", "%": "%"}.get(t.unit, "")
        note = f" ({t.note})" if t.note else ""
        out.append(f"| {t.name}{note} | {t.value:.2f}{suffix}{unit} | {op} {t.limit:g}{suffix}{unit} | {'PASS' if t.passed else 'FAIL'} |")
    return "\n".join(out)


# ---------------------------------------------------------------- the command
def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--json", action="store_true", help="print one JSON document instead of tables")
    parser.add_argument("--markdown", action="store_true", help="print the tables as Markdown (for README)")
    parser.add_argument("--save-json", metavar="PATH", help="also write the JSON document to PATH")
    parser.add_argument("--quick", action="store_true", help="smaller and fewer runs (CI): growth at size/10 and size")
    parser.add_argument("--size", type=int, default=0, help="main workload size in characters (default 1,000,000)")
    parser.add_argument("--repeat", type=int, default=0, help="timed runs per measurement, best kept (default 3; quick 1)")
    parser.add_argument("--seed", type=int, default=1, help="seed for the inputs and the chunk lengths")
    parser.add_argument("--workload", action="append", metavar="NAME",
                        help="run only this workload (repeatable): " + ", ".join(w.name for w in WORKLOADS))
    parser.add_argument("--naive-budget", type=float, default=None, help="seconds per chunked naive run before it is capped")
    parser.add_argument("--no-growth", action="store_true", help="skip the growth runs")
    parser.add_argument("--no-memory", action="store_true", help="skip the tracemalloc passes")
    parser.add_argument("--no-hostile", action="store_true", help="skip the hostile-input section")


def run(args: argparse.Namespace) -> int:
    cfg = Config.from_args(args)
    names = {w.name for w in WORKLOADS}
    unknown = [n for n in cfg.workloads if n not in names]
    if unknown:
        print(f"unknown workload(s): {', '.join(unknown)}; known: {', '.join(sorted(names))}", file=sys.stderr)
        return 2
    quiet = bool(args.json)

    def log(msg: str) -> None:
        if not quiet:
            print(msg, file=sys.stderr, flush=True)

    # Objects alive before the benchmark (the interpreter, imported libraries, a test
    # session's heap) are moved out of the collector's reach: the gc.collect() before
    # each timed run then costs the same wherever the bench is started from.
    gc.collect()
    gc.freeze()
    try:
        return _run(cfg, log, quiet, args)
    finally:
        gc.unfreeze()


def _run(cfg: Config, log: Callable[[str], None], quiet: bool, args: argparse.Namespace) -> int:
    t0 = time.perf_counter()
    results: list[WorkloadResult] = []
    for w in WORKLOADS:
        if cfg.workloads and w.name not in cfg.workloads:
            continue
        log(f"{w.name}: {w.title}")
        tw = time.perf_counter()
        r = run_workload(w, cfg, log)
        r.spent_s = time.perf_counter() - tw
        results.append(r)
    prose_memory: dict[str, Any] | None = None
    prose_w = next((w for w in WORKLOADS if w.name == "prose_call"), None)
    if cfg.memory and prose_w is not None and (not cfg.workloads or "prose_call" in cfg.workloads):
        log(f"prose memory at {cfg.memory_prose_size:,}")
        text = prose_w.build(cfg.memory_prose_size, cfg.seed)
        sizes = _sizes_for("tokens", text, cfg.seed + 1)
        prose_memory = {"chars": len(text), "peak_bytes": _peak_memory(prose_w, text, sizes, cfg.memory_prose_size)}
        del text
    tgts = targets(results, prose_memory)
    hostile: dict[str, Any] | None = None
    if cfg.hostile and not cfg.workloads:
        log("hostile inputs")
        hostile = run_hostile(cfg, log)
        tgts += hostile_targets(hostile)
    report: dict[str, Any] = {
        "machine": machine(),
        "config": {
            "size": cfg.size,
            "quick": cfg.quick,
            "repeat": cfg.repeat,
            "seed": cfg.seed,
            "growth_sizes": list(cfg.growth_sizes),
            "naive_budget": cfg.naive_budget,
            "chunk_chars": [1, 8],
            "command": "callsieve bench" + (" --quick" if cfg.quick else ""),
        },
        "workloads": [asdict(r) for r in results],
        "prose_memory": prose_memory,
        "hostile": hostile,
        "targets": [
            {"name": t.name, "value": t.value, "limit": t.limit, "unit": t.unit,
             "higher_is_better": t.higher_is_better, "pass": t.passed, "note": t.note}
            for t in tgts
        ],
        "elapsed_s": time.perf_counter() - t0,
    }
    document = json.dumps(_clean(report), indent=2, ensure_ascii=False, allow_nan=False)
    if args.save_json:
        with open(args.save_json, "w", encoding="utf-8") as f:
            f.write(document + "\n")
    if args.json:
        print(document)
    elif args.markdown:
        print(render_markdown(report, results, tgts))
    else:
        print(render_text(report, results, tgts))
        if hostile is not None:
            print()
            print(render_hostile(hostile))
    return 0


def _clean(o: Any) -> Any:
    """JSON has no NaN or infinity: those become null."""
    if isinstance(o, float) and not math.isfinite(o):
        return None
    if isinstance(o, dict):
        return {k: _clean(v) for k, v in o.items()}
    if isinstance(o, (list, tuple)):
        return [_clean(v) for v in o]
    return o
