"""``callsieve bench --servers``: one run compares each server's built-in parser with
callsieve's plugin on the same token stream (skips, with the reason, without the
servers' code; CI fetches it with .ci/servers and fails on a skip)."""

from __future__ import annotations

import argparse
import json
from typing import Any

import server_env


def test_bench_servers_compares_builtin_and_callsieve_on_the_same_stream(capsys: Any) -> None:
    server_env.vllm_or_skip()
    server_env.sglang_or_skip()
    from callsieve.tools import bench

    parser = argparse.ArgumentParser()
    bench.add_arguments(parser)
    args = parser.parse_args(["--servers", "--quick", "--size", "1200", "--repeat", "1", "--json"])
    assert bench.run(args) == 0
    report = json.loads(capsys.readouterr().out)
    pairs = {(r["server"], r["stream"], r["chars"]) for r in report["ratios"]}
    assert {(s, k) for s, k, _ in pairs} == {(s, k) for s in ("vllm", "sglang") for k in ("qwen3_coder", "hermes")}
    assert len(pairs) == 8  # two sizes each
    for r in report["ratios"]:
        assert r["builtin_us_per_token"] > 0 and r["callsieve_us_per_token"] > 0
        # The stream is benign: both parsers find every call; only the cost differs.
        assert r["calls"]["builtin"] == r["calls"]["callsieve"] > 0, r
