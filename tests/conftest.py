from __future__ import annotations

import gc
import os
import sys

import pytest
from hypothesis import HealthCheck, settings

sys.path.insert(0, os.path.dirname(__file__))

#: README's test command: hypothesis's own default of 100 examples per property, so the
#: command stays under two minutes on two cores (issue 21). CI runs the engine's tests a
#: second time against the compiled build under ``ci`` (200): every landing still tries
#: 300 examples of each engine property, as it did at 150 twice.
settings.register_profile(
    "default",
    max_examples=100,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
settings.register_profile(
    "ci",
    max_examples=200,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
settings.register_profile("thorough", max_examples=2000, deadline=None, suppress_health_check=list(HealthCheck))
# Issue 12, item 7: a deep fuzz run, not in CI: 100x the default examples.
#   python -m pytest tests/test_contract.py tests/test_differential.py tests/test_hostile.py \
#       tests/test_commonmark.py --hypothesis-profile=deep
settings.register_profile("deep", max_examples=15000, deadline=None, suppress_health_check=list(HealthCheck))
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "default"))


#: The collector's thresholds: a young collection every 100,000 allocations (700 by
#: default) and a full one after 100 of the middle generation's (10). A property test
#: that composes machines allocates hundreds of thousands of objects that outlive it
#: (cached); at the defaults, collections walked them again and again while it ran.
#: Garbage with cycles is still found, a little later (and at each test's end, below).
#: (At 10,000 the collector's automatic runs took ~4 of the ~19 s of CPU it spent in a
#: run of the suite on two workers; at 100,000 none, the same as with it disabled, and
#: each worker's peak memory no higher: the collections at each test's end remain.)
gc.set_threshold(100_000, 10, 100)


@pytest.hookimpl(trylast=True)
def pytest_runtest_teardown(item: pytest.Item, nextitem: pytest.Item | None) -> None:
    """After each test, what is still alive is collected once and frozen (``gc.freeze``):
    later collections leave it out.

    What outlives a test is mostly the machines it composed, cached for the process
    (``compose``, the compiled tables, the reference runners' ``transitions`` machines:
    with every dialect some 300,000 objects), which are never garbage; each full
    collection walked every one of them again, a sixth of what the suite spent. The
    collection before the freeze finds the test's own cyclic garbage, so none is kept.
    """
    gc.collect()
    gc.freeze()
