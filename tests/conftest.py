from __future__ import annotations

import os
import sys

from hypothesis import HealthCheck, settings

sys.path.insert(0, os.path.dirname(__file__))

settings.register_profile(
    "default",
    max_examples=150,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
settings.register_profile("thorough", max_examples=2000, deadline=None, suppress_health_check=list(HealthCheck))
# Issue 12, item 7: a deep fuzz run, not in CI: 100x the default examples.
#   python -m pytest tests/test_contract.py tests/test_differential.py tests/test_hostile.py \
#       tests/test_commonmark.py --hypothesis-profile=deep
settings.register_profile("deep", max_examples=15000, deadline=None, suppress_health_check=list(HealthCheck))
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "default"))
