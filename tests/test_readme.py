"""README's code is true: its "Add a dialect" blocks run as written and print what the
text after each says."""

from __future__ import annotations

import contextlib
import io
import re
from pathlib import Path

import callsieve.grammar.registry as registry

README = Path(__file__).resolve().parent.parent / "README.md"


def _block_after(marker: str) -> str:
    text = README.read_text(encoding="utf-8")
    m = re.search(re.escape(marker) + r"[^\n]*\n```python\n(.*?)\n```", text, re.S)
    assert m, f"no python block after {marker!r} in README.md"
    return m.group(1)


def test_add_a_dialect_block_runs_and_prints_the_call() -> None:
    code = _block_after("<!-- add-a-dialect")
    out = io.StringIO()
    saved = dict(registry.REGISTRY)
    try:
        with contextlib.redirect_stdout(out):
            exec(compile(code, "README.md", "exec"), {"__name__": "readme_example"})
    finally:
        registry.REGISTRY.clear()
        registry.REGISTRY.update(saved)
    assert out.getvalue() == "search {'query': 'sieve [/ARG] docs'}\n"


def test_add_a_json_dialect_block_runs_and_prints_both_calls() -> None:
    code = _block_after("<!-- add-a-json-dialect")
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(compile(code, "README.md", "exec"), {"__name__": "readme_example"})
    printed = out.getvalue()
    assert printed == "[('search', {'q': '</call>'}), ('open', {'path': 'a.txt'})] ' and '\n"
    text = README.read_text(encoding="utf-8")
    assert f"It prints `{printed.strip()}`" in text
