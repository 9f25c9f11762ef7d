"""README.md and docs/ point at things that exist: every relative link (and its #anchor),
every repository path written in backticks, every ``tests/...py::test`` named, and
every server parser name the "Which dialect is my model" table gives."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from callsieve.grammar.registry import BUILTIN, lookup

ROOT = Path(__file__).resolve().parent.parent
DOCS = [ROOT / "README.md", ROOT / "CHANGELOG.md", *sorted((ROOT / "docs").glob("*.md"))]
#: The repository's top-level folders and files a document may name in backticks.
#: (Not diagrams/: drawn there by `callsieve diagram`, never committed.)
TOP = {"fsm", "grammar", "tests", "docs", "buildsys", ".ci", "setup.py", "pyproject.toml",
       "README.md", "CHANGELOG.md", "LICENSE", "MANIFEST.in"}


def _prose(text: str) -> str:
    """The text outside code blocks and code spans (a link inside a code sample is code)."""
    text = re.sub(r"^```.*?^```", "", text, flags=re.S | re.M)
    return re.sub(r"`[^`\n]*`", "", text)


def _slug(heading: str) -> str:
    """A heading's anchor as GitHub spells it: lower case, punctuation dropped,
    spaces to hyphens."""
    h = re.sub(r"`", "", heading.strip().lower())
    h = re.sub(r"[^\w\- ]", "", h)
    return h.replace(" ", "-")


def _anchors(path: Path) -> set[str]:
    text = _prose(path.read_text(encoding="utf-8"))
    return {_slug(m.group(1)) for m in re.finditer(r"^#+\s+(.*)$", text, re.M)}


def _links(path: Path) -> list[str]:
    text = _prose(path.read_text(encoding="utf-8"))
    return re.findall(r"\]\(([^)\s]+)\)", text)


@pytest.mark.parametrize("doc", DOCS, ids=lambda p: str(p.relative_to(ROOT)))
def test_every_relative_link_and_anchor_exists(doc: Path) -> None:
    checked = 0
    for link in _links(doc):
        if re.match(r"[a-z]+:", link):  # https:, mailto: (none should be needed, but not files)
            continue
        target, _, anchor = link.partition("#")
        path = (doc.parent / target).resolve() if target else doc
        assert path.exists(), f"{doc.relative_to(ROOT)} links to {link}, which does not exist"
        assert ROOT in path.parents or path == ROOT, f"{doc.relative_to(ROOT)} links outside the repository: {link}"
        if anchor:
            assert path.suffix == ".md", link
            assert anchor in _anchors(path), f"{doc.relative_to(ROOT)} links to {link}: no such heading"
        checked += 1
    if doc.name == "README.md" and doc.parent == ROOT:
        assert checked >= 15


@pytest.mark.parametrize("doc", DOCS, ids=lambda p: str(p.relative_to(ROOT)))
def test_every_repository_path_in_backticks_exists(doc: Path) -> None:
    text = doc.read_text(encoding="utf-8")
    for ref in re.findall(r"`([\w./-]+(?:::\w+)?)`", text):
        path, _, test = ref.partition("::")
        first = path.split("/", 1)[0]
        if first == "callsieve" and "/" in path:
            pytest.fail(f"{doc.relative_to(ROOT)} names {ref}: the repository has no callsieve/ folder "
                        "(the package is fsm/, callsieve.grammar is grammar/)")
        if first not in TOP or ("/" not in path and first not in ("setup.py", "pyproject.toml")):
            continue
        assert (ROOT / path).exists(), f"{doc.relative_to(ROOT)} names {path}, which does not exist"
        if test:
            names = re.findall(r"^\s*(?:async )?def (test_\w+)", (ROOT / path).read_text(encoding="utf-8"), re.M)
            assert test in names, f"{doc.relative_to(ROOT)} names {ref}, which is no test"


def test_readme_links_no_file_outside_the_repository_nor_issues_a_user_cannot_see() -> None:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    assert "shared/" not in text
    assert not re.search(r"\bissue \d+", text, re.I), "README refers to an issue number a user cannot see"


def test_readme_starts_with_the_demo_and_the_test_command_and_stays_short() -> None:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    first_section = text.split("\n## ", 1)[0]
    blocks = re.findall(r"```sh\n(.*?)\n```", first_section, re.S)
    assert len(blocks) == 2 and blocks[0].endswith("callsieve demo"), blocks
    assert "<!-- test-command" in first_section and "pytest" in blocks[1]
    assert len(text.splitlines()) < 450  # (issue 26: details live in docs/)


def _dialect_table() -> list[list[str]]:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    section = text.split("<!-- dialect-table", 1)[1]
    rows = []
    for line in section.splitlines()[3:]:
        if not line.startswith("|"):
            break
        rows.append([c.strip() for c in line.strip("|").split("|")])
    return rows


def test_every_server_parser_name_in_the_dialect_table_resolves_to_its_rows_dialect() -> None:
    rows = _dialect_table()
    seen = set()
    for _model, dialect, vllm, sglang in rows:
        name = dialect.strip("`")
        assert name in BUILTIN, name
        seen.add(name)
        for alias in re.findall(r"`([^`]+)`", vllm + " " + sglang):
            found = lookup(alias)
            assert found is not None and found.name == name, f"{alias!r} should resolve to {name}"
    # README's table stays short; every built-in dialect is in it or in docs/dialects.md
    listed = ROOT / "docs" / "dialects.md"
    elsewhere = set(re.findall(r"`([a-z0-9_]+)`", listed.read_text(encoding="utf-8"))) if listed.exists() else set()
    missing = set(BUILTIN) - seen - elsewhere
    assert not missing, f"neither README's table nor docs/dialects.md names {sorted(missing)}"
