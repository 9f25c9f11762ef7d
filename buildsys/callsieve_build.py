"""The build backend: setuptools', plus mypy as a build requirement when the compiled
build is asked for (``CALLSIEVE_COMPILE=1``, see setup.py).

A plain ``pip install .`` or ``pip install -e .`` needs setuptools only: no mypy, no C
compiler. pip asks a backend what else it needs before building
(``get_requires_for_build_*``); only then is mypy (which provides mypyc) added.
"""

from __future__ import annotations

import os
from typing import Any

from setuptools import build_meta as _setuptools
from setuptools.build_meta import *  # noqa: F401,F403  (every hook not redefined here)

#: What the compiled build needs besides setuptools: mypyc, which comes with mypy.
COMPILE_REQUIRES = ["mypy>=1.18"]


def _compile() -> bool:
    return os.environ.get("CALLSIEVE_COMPILE", "").strip().lower() not in ("", "0", "no", "false")


#: Set while setuptools runs setup.py only to ask what it needs (before mypy is there):
#: setup.py then declares no compiled modules.
PROBE = "CALLSIEVE_BUILD_PROBE"


def _requires(hook: Any, config_settings: Any) -> list[str]:
    os.environ[PROBE] = "1"
    try:
        reqs = list(hook(config_settings))
    finally:
        del os.environ[PROBE]
    return reqs + (COMPILE_REQUIRES if _compile() else [])


def get_requires_for_build_wheel(config_settings: Any = None) -> list[str]:
    return _requires(_setuptools.get_requires_for_build_wheel, config_settings)


def get_requires_for_build_editable(config_settings: Any = None) -> list[str]:
    return _requires(_setuptools.get_requires_for_build_editable, config_settings)
