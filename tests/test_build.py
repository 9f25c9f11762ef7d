"""The build installed is the one asked for: pure Python by default, every module of
``callsieve.native.COMPILED_MODULES`` compiled when CI installs the mypyc build and says
so (``CALLSIEVE_EXPECT_COMPILED=1``, set by .ci/run for that suite only)."""

from __future__ import annotations

import os
import sys

import pytest

import callsieve
from callsieve import native
from callsieve.tools.bench import build_info

EXPECT_COMPILED = os.environ.get("CALLSIEVE_EXPECT_COMPILED") == "1"


def test_the_build_is_the_one_asked_for() -> None:
    got = native.compiled_modules()
    if EXPECT_COMPILED:
        assert [name for name, yes in got.items() if not yes] == []
        assert native.build() == "compiled (mypyc)"
    else:
        assert [name for name, yes in got.items() if yes] == []
        assert native.build() == "pure Python"
    info = build_info()
    assert (info["build"], info["compiled"]) == (native.build(), EXPECT_COMPILED)


def test_every_module_listed_exists_and_the_core_is_listed() -> None:
    # (A listed name that no longer exists would make setup.py compile nothing under it.)
    assert set(native.COMPILED_MODULES) >= {"callsieve.compiler", "callsieve.regions.engine", "callsieve.generated"}
    for name in native.COMPILED_MODULES:
        assert name in sys.modules or __import__(name)


def test_the_compiled_runner_runs_on_the_engine_class_and_the_reference_on_the_composed() -> None:
    """Without a dialect's own region model, the compiled runner's model is EngineModel
    itself (in the mypyc build, a native instance calls its own methods directly); the
    reference runner's is the class the composer made on top of it (``transitions``
    adds its methods to the instance)."""
    from callsieve.regions.engine import EngineModel

    fast = callsieve.Sieve(["qwen3_coder"])
    assert type(fast.runner.ctx) is EngineModel
    ref = callsieve.Sieve(["qwen3_coder"], runner="reference")
    assert type(ref.runner.ctx) is not EngineModel and isinstance(ref.runner.ctx, EngineModel)


@pytest.mark.skipif(not EXPECT_COMPILED, reason="the compiled build only")
def test_compiled_engine_classes_are_native() -> None:
    """The engine's region models really are mypyc classes: a native instance has no
    ``__dict__``; the composed class on top of them is an interpreted one, which has."""
    assert not hasattr(callsieve.Sieve(["qwen3_coder"]).runner.ctx, "__dict__")
    assert hasattr(callsieve.Sieve(["qwen3_coder"], runner="reference").runner.ctx, "__dict__")


def test_the_engine_never_imports_graphviz() -> None:
    """graphviz is the ``diagrams`` extra: parsing, with either runner and every dialect,
    works without it (only ``callsieve diagram`` draws through it)."""
    import subprocess

    code = (
        "import sys, callsieve\n"
        "for runner in ('compiled', 'reference'):\n"
        "    r = callsieve.parse('<think>a</think>x <tool_call>\\n<function=f>\\n</function>\\n</tool_call>', runner=runner)\n"
        "    assert [c.name for c in r.calls] == ['f'], r\n"
        "assert 'graphviz' not in sys.modules, 'graphviz imported'\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
