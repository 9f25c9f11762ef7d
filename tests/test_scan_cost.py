"""Costs that must not grow with the input, counted (not timed): speed itself belongs
to ``callsieve bench``."""

from __future__ import annotations

import callsieve
from callsieve.tools.bench_workloads import hostile_fences


class CountingStr(str):
    """A chunk that counts how often it is asked whether it holds a given character."""

    asked = 0

    def __contains__(self, item: object) -> bool:
        if item == "\uff1c":
            CountingStr.asked += 1
        return str.__contains__(self, item)  # type: ignore[operator]


def test_a_chunk_is_asked_once_for_its_rare_start_character_not_once_per_scan() -> None:
    """Regression (hostile bench, "fences" fed whole: growth exponent 1.78): the
    marker-aware scanner asked the whole chunk whether it held a ``＜`` at every scan,
    and a chunk fed whole is scanned again after every stop: O(stops x length)."""
    doc = CountingStr(hostile_fences(20_000, 1))
    CountingStr.asked = 0
    s = callsieve.Sieve(dialects=["qwen3_coder"])  # one rare start character: ``＜``
    events = s.feed(doc) + s.close()
    assert "".join(e.raw for e in events) == doc
    assert 1 <= CountingStr.asked <= 2, CountingStr.asked
