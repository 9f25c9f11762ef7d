"""The optional compiled build: ``CALLSIEVE_COMPILE=1 pip install .`` compiles the engine
with mypyc; without the variable this file adds nothing and the install is pure Python
(everything else about the distribution is declared in pyproject.toml).

mypyc names a module after its path from the first folder without an ``__init__.py``, and
has no notion of setuptools' package-dir mapping (``callsieve`` is the folder fsm/,
``callsieve.grammar`` is grammar/), so the sources are copied into
``build/mypyc-src/callsieve/`` first, in the installed shape, and compiled from there.
mypy (which provides mypyc) and a C compiler are then needed; the in-tree build backend
(``buildsys/callsieve_build.py``) adds mypy to the build requirements only when the
variable is set.
"""

from __future__ import annotations

import ast
import os
import shutil
from pathlib import Path

from setuptools import setup

ROOT = Path(__file__).resolve().parent

def compiled_paths() -> list[str]:
    """The modules to compile (``callsieve.native.COMPILED_MODULES``: one list, read here
    from the source, since the package is not importable while it is being built), as
    paths under the staged ``callsieve/``."""
    tree = ast.parse((ROOT / "fsm" / "native.py").read_text(encoding="utf-8"))
    names: tuple[str, ...] = next(
        ast.literal_eval(node.value) for node in tree.body
        if isinstance(node, ast.Assign) and any(getattr(t, "id", "") == "COMPILED_MODULES" for t in node.targets)
    )
    paths = []
    for name in names:
        rel = name.split(".")[1:]
        path = "/".join(["callsieve", *rel]) + ".py"
        if (ROOT / "build" / "mypyc-src" / path).exists():
            paths.append(path)
        else:
            paths.append("/".join(["callsieve", *rel, "__init__.py"]))
    return paths


def requested() -> bool:
    return os.environ.get("CALLSIEVE_COMPILE", "").strip().lower() not in ("", "0", "no", "false")


def _stage() -> Path:
    """fsm/ and grammar/ copied in the installed shape, for mypyc to read."""
    src = ROOT / "build" / "mypyc-src"
    if src.exists():
        shutil.rmtree(src)
    ignore = shutil.ignore_patterns("__pycache__", "*.so", "*.pyc")
    shutil.copytree(ROOT / "fsm", src / "callsieve", ignore=ignore)
    shutil.copytree(ROOT / "grammar", src / "callsieve" / "grammar", ignore=ignore)
    return src


def ext_modules() -> list[object]:
    if not requested() or os.environ.get("CALLSIEVE_BUILD_PROBE"):
        return []  # (the probe: pip is only asking what the build needs)
    try:
        from mypyc.build import mypycify
    except ImportError as e:
        raise SystemExit(
            "CALLSIEVE_COMPILE=1: the compiled build needs mypy (mypyc) in the build "
            "environment: pip installs it through buildsys/callsieve_build.py; with "
            "--no-build-isolation, pip install 'mypy>=1.18' first"
        ) from e

    src = _stage()
    old = Path.cwd()
    os.chdir(src)  # module names are read from the paths: callsieve/compiler.py is callsieve.compiler
    try:
        return list(mypycify(
            compiled_paths() + ["--ignore-missing-imports", "--strict"],
            opt_level="3",
            # The compiled modules share one library, which mypyc places at the top level
            # (it derives the packages' __path__ from where it stands): named after the
            # package, callsieve__mypyc, rather than a hash. The wheel check in .ci/run
            # allows that one name in the compiled wheel only.
            group_name="callsieve",
            target_dir=str(ROOT / "build" / "mypyc-c"),
        ))
    finally:
        os.chdir(old)


def _clean() -> None:
    """setuptools packs whatever build/lib* holds: a module compiled by an earlier
    compiled build would ride into this wheel (a pure one too), so they start empty."""
    for d in (ROOT / "build").glob("lib*"):
        shutil.rmtree(d)


_clean()
setup(ext_modules=ext_modules())
