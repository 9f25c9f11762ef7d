"""Load vLLM's and SGLang's own code for the plugin tests, without torch or a GPU.

``.ci/servers`` extracts the Python files of the released wheels (vLLM 0.33.0, SGLang
0.5.23) under ``build/servers/`` (or ``$CALLSIEVE_SERVERS_DIR``) and installs the light
libraries that code imports. Here, on first use, that code is put on ``sys.path`` and
the modules it imports that need torch, CUDA or a running engine are replaced by stubs:
every stub is a module whose every attribute is an inert class. :data:`STUBS` lists
them; everything else these tests import from vLLM or SGLang is their released code
(the tests check each module under test comes from the extracted wheel). Where the code
is absent, :func:`vllm_or_skip` / :func:`sglang_or_skip` skip with the reason.
"""

from __future__ import annotations

import abc
import importlib
import importlib.abc
import importlib.machinery
import os
import pathlib
import sys
import types
from typing import Any

import pytest

ROOT = pathlib.Path(os.environ.get("CALLSIEVE_SERVERS_DIR", pathlib.Path(__file__).resolve().parent.parent / "build" / "servers"))
VLLM_DIR = ROOT / "vllm-0.33.0"
SGLANG_DIR = ROOT / "sglang-0.5.23"

#: Replaced by stubs, with why. Nothing the plugins or the serving path under test
#: computes with comes from these: they are imported, at module level, by modules on
#: the way (configuration, distributed setup, kernels) and never called by the tests.
STUBS: dict[str, str] = {
    "torch": "PyTorch (GPU runtime); vLLM's and SGLang's config modules import it at module level",
    "triton": "GPU kernels compiler, imported by SGLang's utilities",
    "IPython": "imported by an SGLang utility module",
    "vllm.config": "vLLM's engine configuration (imports every model/quantization module); "
                   "vllm.config.utils stays real",
    "vllm.distributed": "vLLM's GPU process groups",
    "vllm.model_executor": "vLLM's model and kernel code",
    "vllm.env_override": "sets torch environment flags at `import vllm`",
    "llguidance": "a grammar backend, imported by vLLM's structured-output module",
}
#: Modules under a stubbed name that are loaded real anyway.
REAL_UNDER_STUBS = {"vllm.config.utils"}


class _StubMeta(abc.ABCMeta):
    def __getattr__(cls, name: str) -> Any:
        if name.startswith("__"):
            raise AttributeError(name)
        return _Stub

    def __getitem__(cls, item: Any) -> Any:
        if isinstance(item, int):
            raise IndexError(item)
        return _Stub

    def __iter__(cls) -> Any:
        return iter(())

    def __call__(cls, *args: Any, **kwargs: Any) -> Any:
        return _Stub

    def __or__(cls, other: Any) -> Any:
        return _Stub

    def __ror__(cls, other: Any) -> Any:
        return _Stub


class _Stub(metaclass=_StubMeta):
    """Every attribute, call, item and union of a stub is this class again."""


class _IInfo:
    def __init__(self, dtype: Any) -> None:
        self.min, self.max = -(2**63), 2**63 - 1


class _StubModule(types.ModuleType):
    def __getattr__(self, name: str) -> Any:
        if name.startswith("__"):
            raise AttributeError(name)
        return _Stub


class _StubFinder(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    def __init__(self) -> None:
        self.created: list[str] = []

    def find_spec(self, fullname: str, path: Any, target: Any = None) -> importlib.machinery.ModuleSpec | None:
        if fullname in REAL_UNDER_STUBS:
            return None
        if any(fullname == s or fullname.startswith(s + ".") for s in STUBS):
            return importlib.machinery.ModuleSpec(fullname, self, is_package=True)
        return None

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> types.ModuleType:
        module = _StubModule(spec.name)
        # A real package directory stays searchable, for the real modules under a stub.
        dirs = [os.path.join(d, *spec.name.split(".")) for d in sys.path if isinstance(d, str)]
        module.__path__ = [d for d in dirs if os.path.isdir(d)][:1]
        if spec.name == "torch":
            module.__version__ = "2.14.0"  # the version vLLM 0.33 pins
            module.iinfo = _IInfo  # type: ignore[attr-defined]
        self.created.append(spec.name)
        return module

    def exec_module(self, module: types.ModuleType) -> None:
        pass


_finder: _StubFinder | None = None


def _install() -> _StubFinder:
    global _finder
    if _finder is None:
        _finder = _StubFinder()
        sys.meta_path.insert(0, _finder)
        for d in (VLLM_DIR, SGLANG_DIR):
            if d.is_dir() and str(d) not in sys.path:
                sys.path.append(str(d))
    return _finder


def stubbed_modules() -> list[str]:
    """The stub modules created so far in this process."""
    return sorted(_install().created)


def is_real(module: types.ModuleType) -> bool:
    """Whether a module was loaded from the extracted wheels (not a stub, not elsewhere)."""
    path = getattr(module, "__file__", None) or ""
    return not isinstance(module, _StubModule) and any(
        pathlib.Path(path).is_relative_to(d) for d in (VLLM_DIR, SGLANG_DIR))


def _missing(d: pathlib.Path, what: str) -> str | None:
    if not (d / ".complete").exists():
        return f"{what} code not found in {d} (run .ci/servers to fetch it)"
    return None


def vllm_or_skip() -> types.ModuleType:
    """``vllm``, loaded from the extracted 0.33.0 wheel, or skip the test."""
    reason = _missing(VLLM_DIR, "vLLM 0.33.0")
    if reason:
        pytest.skip(reason)
    _install()
    try:
        return importlib.import_module("vllm")
    except ImportError as e:  # a library .ci/servers installs is missing
        pytest.skip(f"vLLM 0.33.0 code present but not importable here: {e}")


def sglang_or_skip() -> types.ModuleType:
    """``sglang``, loaded from the extracted 0.5.23 wheel, or skip the test."""
    reason = _missing(SGLANG_DIR, "SGLang 0.5.23")
    if reason:
        pytest.skip(reason)
    _install()
    try:
        return importlib.import_module("sglang")
    except ImportError as e:
        pytest.skip(f"SGLang 0.5.23 code present but not importable here: {e}")
