"""Load vLLM's and SGLang's own Python code without torch or a GPU (for the plugin tests
and ``callsieve bench --servers``).

``.ci/servers`` extracts the Python files of the released wheels (vLLM 0.33.0, SGLang
0.5.23) under ``build/servers/`` (or ``$CALLSIEVE_SERVERS_DIR``) and installs the light
libraries that code imports. :func:`install` puts that code on ``sys.path`` and replaces
the modules it imports that need torch, CUDA or a running engine by stubs: every stub is
a module whose every attribute is an inert class. :data:`STUBS` lists them, with why;
everything else imported from vLLM or SGLang is their released code (:func:`is_real`).
"""

from __future__ import annotations

import abc
import importlib.abc
import importlib.machinery
import os
import pathlib
import sys
import types
from typing import Any, Iterable

ROOT = pathlib.Path(os.environ.get("CALLSIEVE_SERVERS_DIR") or pathlib.Path.cwd() / "build" / "servers")
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
            setattr(module, "__version__", "2.14.0")  # the version vLLM 0.33 pins
            setattr(module, "iinfo", _IInfo)
        self.created.append(spec.name)
        return module

    def exec_module(self, module: types.ModuleType) -> None:
        pass


_finder: _StubFinder | None = None


def install() -> _StubFinder:
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
    return sorted(install().created)


def is_real(module: types.ModuleType) -> bool:
    """Whether a module was loaded from the extracted wheels (not a stub, not elsewhere)."""
    path = getattr(module, "__file__", None) or ""
    return not isinstance(module, _StubModule) and any(
        pathlib.Path(path).is_relative_to(d) for d in (VLLM_DIR, SGLANG_DIR))


def missing(what: str = "both") -> str | None:
    """Why the extracted code cannot be used (None: it is there)."""
    for d, name in ((VLLM_DIR, "vLLM 0.33.0"), (SGLANG_DIR, "SGLang 0.5.23")):
        if what in ("both", name.split()[0].lower()) and not (d / ".complete").exists():
            return f"{name} code not found in {d} (run .ci/servers to fetch it)"
    return None


class TinyTokenizer:
    """A character-level tokenizer whose ``specials`` are one token each (as a model's
    tool-call and think markers are). It has what vLLM's and SGLang's parsers call:
    ``get_vocab``, ``encode``, ``decode``, ``convert_ids_to_tokens``; ids are given to
    characters as they are first met."""

    def __init__(self, specials: Iterable[str] = ()) -> None:
        self.specials = sorted(set(specials), key=len, reverse=True)
        self.vocab: dict[str, int] = {}
        for s in self.specials:
            self._id(s)
        self.all_special_tokens = list(self.specials)

    def _id(self, piece: str) -> int:
        if piece not in self.vocab:
            self.vocab[piece] = len(self.vocab)
        return self.vocab[piece]

    def get_vocab(self) -> dict[str, int]:
        return dict(self.vocab)

    def __len__(self) -> int:
        return len(self.vocab)

    def encode(self, text: str, add_special_tokens: bool = False, **kw: Any) -> list[int]:
        out: list[int] = []
        i = 0
        while i < len(text):
            for s in self.specials:
                if text.startswith(s, i):
                    out.append(self._id(s))
                    i += len(s)
                    break
            else:
                out.append(self._id(text[i]))
                i += 1
        return out

    def convert_ids_to_tokens(self, ids: Iterable[int], skip_special_tokens: bool = False) -> list[str]:
        inverse = {v: k for k, v in self.vocab.items()}
        return [inverse[i] for i in ids]

    def convert_tokens_to_ids(self, tokens: Any) -> Any:
        if isinstance(tokens, str):
            return self.vocab.get(tokens)
        return [self.vocab.get(t) for t in tokens]

    def decode(self, ids: Iterable[int], skip_special_tokens: bool = False, **kw: Any) -> str:
        return "".join(self.convert_ids_to_tokens(list(ids)))


#: Markers tokenizers give one token each (Qwen, DeepSeek, Kimi, GLM, MiniMax, gpt-oss).
SPECIALS = ["<think>", "</think>", "<tool_call>", "</tool_call>", "<｜tool▁calls▁begin｜>", "<｜tool▁calls▁end｜>",
            "<｜tool▁call▁begin｜>", "<｜tool▁call▁end｜>", "<｜tool▁sep｜>", "<|tool_calls_section_begin|>",
            "<|tool_calls_section_end|>", "<|tool_call_begin|>", "<|tool_call_end|>", "<|tool_call_argument_begin|>",
            "<arg_key>", "</arg_key>", "<arg_value>", "</arg_value>", "<minimax:tool_call>", "</minimax:tool_call>",
            "[TOOL_CALLS]", "[ARGS]", "[CALL_ID]", "<|channel|>", "<|message|>", "<|end|>", "<|start|>", "<|call|>",
            "<|constrain|>"]
