"""The plugin tests' access to vLLM's and SGLang's own code (see
:mod:`callsieve.tools.server_code`: what is real, what is stubbed); where it is absent,
:func:`vllm_or_skip` / :func:`sglang_or_skip` skip with the reason."""

from __future__ import annotations

import importlib
import os
import pathlib
import types

import pytest

# The tests look for the code under this checkout, wherever pytest is started from.
os.environ.setdefault("CALLSIEVE_SERVERS_DIR", str(pathlib.Path(__file__).resolve().parent.parent / "build" / "servers"))

from callsieve.tools.server_code import SGLANG_DIR, STUBS, VLLM_DIR, install, is_real, missing, stubbed_modules  # noqa: E402

__all__ = ["SGLANG_DIR", "STUBS", "VLLM_DIR", "is_real", "stubbed_modules", "vllm_or_skip", "sglang_or_skip"]


def vllm_or_skip() -> types.ModuleType:
    """``vllm``, loaded from the extracted 0.33.0 wheel, or skip the test."""
    reason = missing("vllm")
    if reason:
        pytest.skip(reason)
    install()
    try:
        return importlib.import_module("vllm")
    except ImportError as e:  # a library .ci/servers installs is missing
        pytest.skip(f"vLLM 0.33.0 code present but not importable here: {e}")


def sglang_or_skip() -> types.ModuleType:
    """``sglang``, loaded from the extracted 0.5.23 wheel, or skip the test."""
    reason = missing("sglang")
    if reason:
        pytest.skip(reason)
    install()
    try:
        return importlib.import_module("sglang")
    except ImportError as e:
        pytest.skip(f"SGLang 0.5.23 code present but not importable here: {e}")
