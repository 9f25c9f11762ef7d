"""`callsieve bench` runs and reports every workload (smoke test: no timing assertions).

The benchmark's figures depend on the machine; what is tested is that the command runs
end to end at a small size, reports each workload (or says why it was skipped), and
that the sieve really did the work it was timed on.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

import callsieve
from callsieve.tools.bench_naive import NaiveStream
from callsieve.tools.bench_workloads import WORKLOADS, available, chunk_sizes, cut
from callsieve.tools.cli import main

SIZE = 20_000


@pytest.fixture(scope="module")
def report() -> dict[str, Any]:
    import contextlib
    import io

    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        rc = main(["bench", "--quick", "--json", "--size", str(SIZE), "--naive-budget", "0.02"])
    assert rc == 0
    data: dict[str, Any] = json.loads(out.getvalue())
    return data


def test_bench_quick_json_reports_every_workload(report: dict[str, Any]) -> None:
    by_name = {w["name"]: w for w in report["workloads"]}
    assert set(by_name) == {w.name for w in WORKLOADS}
    for w in WORKLOADS:
        got = by_name[w.name]
        if not available(w, callsieve.DIALECTS):
            assert got["status"] == "skipped: dialect not built"
            assert got["modes"] == []
            continue
        assert got["status"] == "ok"
        modes = {m["mode"]: m for m in got["modes"]}
        assert {"whole", "tokens"} <= set(modes)
        for m in modes.values():
            assert m["mb_s"] > 0 and m["feeds_s"] > 0 and m["ceiling_mb_s"] > 0
            assert m["naive"]["chars"] > 0 and m["x_naive"] > 0
        assert got["check"]["round_trip"] is True
        assert len(got["growth"]["points"]) == 2
        assert isinstance(got["growth"]["exponent"], float)


def test_bench_reports_targets_and_the_machine(report: dict[str, Any]) -> None:
    names = [t["name"] for t in report["targets"]]
    assert any(n.startswith("prose, 4-char chunks") for n in names)
    assert any(n.startswith("prose, fed whole") for n in names)
    assert any("arg_qwen3_coder, token chunks" in n for n in names)
    assert any("arg_dsml, fed whole" in n for n in names)
    assert any("peak memory" in n for n in names)
    # one growth target per workload built (the hostile section has targets of its own)
    workload_growth = [n for n in names if "growth exponent" in n and not n.startswith("hostile ")]
    assert len(workload_growth) == sum(available(w, callsieve.DIALECTS) for w in WORKLOADS)
    for t in report["targets"]:
        assert isinstance(t["pass"], bool)
    assert report["machine"]["cpu"] and report["machine"]["python"]
    assert report["config"]["quick"] is True


def test_bench_workloads_are_parsed_as_built() -> None:
    """Each workload's calls come out of the sieve, in every chunking the bench uses."""
    for w in WORKLOADS:
        if not available(w, callsieve.DIALECTS):
            continue
        text = w.build(SIZE, 1)
        whole = callsieve.parse(text, w.dialects, id_prefix="call_")  # ids comparable across sieves
        assert not whole.diagnostics, (w.name, whole.diagnostics)
        if w.calls >= 0:
            assert len(whole.calls) == w.calls, w.name
        else:
            assert len(whole.calls) > 10, w.name
        s = callsieve.Sieve(w.dialects, id_prefix="call_")
        events = [e for c in cut(text, chunk_sizes(len(text), 2)) for e in s.feed(c)] + s.close()
        assert callsieve.merged(events) == callsieve.merged(whole.events), w.name
        assert "".join(e.raw for e in events) == text


def test_big_arguments_hold_a_literal_close_as_data() -> None:
    """The source file carries literal parameter closes; the grammar keeps them in the value."""
    for name in ("arg_qwen3_coder", "arg_dsml"):
        w = next(w for w in WORKLOADS if w.name == name)
        text = w.build(200_000, 1)
        (call,) = callsieve.parse(text, w.dialects).calls
        content = call.arguments["content"]
        assert len(content) > 190_000
        assert ("</parameter>" in content) or ("</\uff5cDSML\uff5cparameter>" in content)


def test_naive_reference_finds_the_same_calls_when_fed_whole() -> None:
    for w in WORKLOADS:
        if not available(w, callsieve.DIALECTS) or w.big_arg:
            continue  # big arguments hold literal closes the naive regexes cut at
        text = w.build(SIZE, 1)
        n = NaiveStream(w.dialects)
        n.feed(text)
        n.close()
        assert [name for name, _ in n.calls] == [c.name for c in callsieve.parse(text, w.dialects).calls], w.name
