"""``callsieve diagram`` as a person runs it: the trace log without Graphviz, ``--tools``,
the path-only picture, and every error one line on stderr with exit status 2."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from callsieve.tools.cli import main as cli_main
from callsieve.tools.diagrams import render_bytes, render_dot
from callsieve.tools.trace import trace_marks

SEED4 = (
    "Writing it.\n<tool_call>\n<function=create_file>\n<parameter=path>\na.md\n</parameter>\n"
    "<parameter=content>\nline\n</parameter>\nmore\n</parameter>\n</function>\n</tool_call>"
)
TOOLS = [{"type": "function", "function": {"name": "create_file", "parameters": {
    "type": "object", "properties": {"path": {"type": "string"}, "content": {"type": "string"}}}}}]

NODE = re.compile(r'^\s*"([^"]+)" \[', re.M)
EDGE = re.compile(r'^\s*"([^"]+)" -> "([^"]+)" \[(.*)\]$', re.M)


@pytest.fixture
def seed4(tmp_path: Path) -> Path:
    p = tmp_path / "seed4.txt"
    p.write_text(SEED4, encoding="utf-8")
    return p


def _cli(*args: str, path: str | None = None) -> subprocess.CompletedProcess[str]:
    """The command in a subprocess; ``path``: its PATH (to hide Graphviz)."""
    env = dict(os.environ)
    if path is not None:
        env["PATH"] = path
    return subprocess.run([sys.executable, "-m", "callsieve.tools.cli", "diagram", *args],
                          env=env, capture_output=True, text=True, encoding="utf-8")


def test_trace_prints_its_log_without_graphviz(seed4: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"
    no_dot = str(Path(sys.executable).parent)  # the venv's bin: python, no dot
    assert shutil.which("dot", path=no_dot) is None
    r = _cli("--trace", str(seed4), "--dialect", "qwen3_coder", "--out", str(out), path=no_dot)
    assert r.returncode == 0, r.stderr
    assert "* maybe_tag (from in_param)" in r.stdout and "ToolCall " in r.stdout
    note = [ln for ln in r.stderr.splitlines() if ln.strip()]
    assert len(note) == 1 and "needs Graphviz `dot`" in note[0]
    # The .dot text needs no Graphviz; the pictures were not attempted.
    assert sorted(p.name for p in out.iterdir()) == ["trace-path.dot", "trace.dot"]


def test_trace_takes_tools(seed4: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    tools = tmp_path / "tools.json"
    tools.write_text(json.dumps({"tools": TOOLS}), encoding="utf-8")
    args = ["diagram", "--trace", str(seed4), "--dialect", "qwen3_coder", "--out", str(tmp_path), "--format", "dot"]
    assert cli_main(args) == 0
    assert "unknown_tool" not in capsys.readouterr().out
    other = tmp_path / "other.json"
    other.write_text(json.dumps([{**TOOLS[0], "function": {**TOOLS[0]["function"], "name": "delete_file"}}]), encoding="utf-8")
    assert cli_main(args[:-4] + ["--tools", str(other), "--out", str(tmp_path), "--format", "dot"]) == 0
    assert '"code": "unknown_tool"' in capsys.readouterr().out  # the tools reached the sieve


def test_the_path_picture_draws_only_what_the_trace_visited() -> None:
    view, marks, _log = trace_marks(SEED4, ["qwen3_coder"])
    full, path = render_dot(view, marks), render_dot(view, marks, path_only=True)
    states = set(view.machine.decl.state_names())
    nodes = {m.group(1) for m in NODE.finditer(path) if "->" not in m.group(0)} & states
    visited = {s for s, n in marks.visits.items() if n}
    assert nodes == visited
    assert "tick_run" not in nodes and "in_reasoning" not in nodes
    edges = [m.group(3) for m in EDGE.finditer(path) if "invis" not in m.group(3) and m.group(1) != m.group(2)]
    assert edges and all("×" in attrs for attrs in edges)  # every edge fired, with its count
    for name in nodes:  # and every self-loop, listed inside its state
        node = next(m.group(0) for m in re.finditer(rf'^\s*"{re.escape(name)}" \[.*$', path, re.M))
        assert "↻" not in node or "×" in node.split("↻", 1)[1]
    assert len(edges) < len([m for m in EDGE.finditer(full) if "invis" not in m.group(3)]) / 2
    assert '"legend" [' not in path  # qwen3_coder's path shows no character a font may lack
    # Numbers are the whole machine's: a guard keeps its place in the try order.
    hold = next(a for m in EDGE.finditer(full) if (m.group(1), m.group(2)) == ("maybe_tag", "after_close") for a in [m.group(3)])
    num = re.search(r"<b>([\d, ]+)\.</b>", hold)
    assert num and f"<b>{num.group(1)}.</b>" in path


def test_the_path_picture_names_wide_characters_it_shows() -> None:
    dsml = "<｜DSML｜function_calls>\n<｜DSML｜invoke name=\"f\">\n</｜DSML｜invoke>\n</｜DSML｜function_calls>"
    view, marks, _log = trace_marks(dsml, ["dsml"])
    path = render_dot(view, marks, path_only=True)
    legend = next(m.group(0) for m in re.finditer(r'^\s*"legend" \[.*$', path, re.M))
    assert "U+FF5C FULLWIDTH VERTICAL LINE" in legend
    assert "how to read" not in legend  # only the code points: the path picture stays small


@pytest.mark.skipif(shutil.which("dot") is None, reason="graphviz dot is not installed")
def test_trace_writes_both_pictures_beside_each_other(seed4: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert cli_main(["diagram", "--trace", str(seed4), "--out", str(tmp_path), "--format", "dot,svg"]) == 0
    names = sorted(p.name for p in tmp_path.iterdir() if p.name.startswith("trace"))
    assert names == ["trace-path.dot", "trace-path.svg", "trace.dot", "trace.svg"]
    # Laid out, the path picture is a strip a screen can show, not the whole machine.
    # (The sizes dot laid each out at, read off the SVGs it drew: the whole machine is
    # not laid out a second time. The small one is, to hold the reading to dot's own.)
    fw, fh = _svg_size(tmp_path / "trace.svg")
    pw, ph = _svg_size(tmp_path / "trace-path.svg")
    bb = json.loads(render_bytes((tmp_path / "trace-path.dot").read_text(encoding="utf-8"), "json"))["bb"]
    assert [round(v) for v in (pw, ph)] == [round(float(v)) for v in bb.split(",")[2:]], (pw, ph, bb)
    assert pw * ph < fw * fh / 5 and ph < 800, ((fw, fh), (pw, ph))


def _svg_size(svg: Path) -> tuple[float, float]:
    """The width and height of the graph dot drew in ``svg``: its viewBox, less the
    margin dot puts round it (``pad``, 4 points a side by default)."""
    got = re.search(r'viewBox="0\.00 0\.00 ([0-9.]+) ([0-9.]+)"', svg.read_text(encoding="utf-8"))
    assert got is not None
    return float(got.group(1)) - 8, float(got.group(2)) - 8


def _one_line_error(args: list[str], capsys: pytest.CaptureFixture[str], contains: str) -> None:
    try:
        rc = cli_main(["diagram", *args])
    except SystemExit as e:  # argparse's own errors exit
        rc = int(e.code or 0)
    err = capsys.readouterr().err
    lines = [ln for ln in err.splitlines() if ln.strip()]
    assert rc == 2, (args, err)
    assert len(lines) == 1, (args, err)
    assert lines[0].startswith("callsieve diagram: error: ") and contains in lines[0], lines[0]


def test_every_error_is_one_line_and_exit_2(tmp_path: Path, seed4: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bad = tmp_path / "latin1.txt"
    bad.write_bytes(b"caf\xe9")
    not_json = tmp_path / "tools.txt"
    not_json.write_text("[{", encoding="utf-8")
    bad_schema = tmp_path / "schema.json"
    bad_schema.write_text('[{"type": "function"}]', encoding="utf-8")
    cases = [
        (["--dialect", "nope", "--out", "-"], "unknown dialect 'nope'"),
        (["--format", "gif", "--out", "-"], "unknown format 'gif'"),
        (["--all", "--dialect", "xml"], "not both"),
        (["--trace", str(tmp_path / "missing.txt")], "cannot read"),
        (["--trace", str(bad)], "not valid UTF-8"),
        (["--trace", str(seed4), "--tools", str(not_json)], "is not JSON"),
        (["--trace", str(seed4), "--tools", str(bad_schema)], "invalid tool schema"),
        (["--trace", str(seed4), "--dialect", "nope"], "unknown dialect"),
        (["--tools", str(not_json)], "--tools goes with --trace"),
        (["--format"], "expected one argument"),
    ]
    for args, contains in cases:
        _one_line_error(args, capsys, contains)
    # stdin is read as strictly as a file.
    r = subprocess.run([sys.executable, "-m", "callsieve.tools.cli", "diagram", "--trace", "-", "--out", str(tmp_path)],
                       input=b"caf\xe9", capture_output=True)
    err = r.stderr.decode("utf-8").splitlines()
    assert r.returncode == 2 and len(err) == 1 and "<stdin> is not valid UTF-8 (byte 0xe9 at offset 3)" in err[0]


def test_trace_does_not_import_the_drawing() -> None:
    """The old cycle (diagrams imported trace, trace imported diagrams) is gone: both
    read the machine through callsieve.tools.diagrams_read."""
    code = "import sys, callsieve.tools.trace; print(sorted(m for m in sys.modules if m.startswith('callsieve.tools.')))"
    loaded = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert "callsieve.tools.diagrams_read" in loaded
    assert "'callsieve.tools.diagrams'" not in loaded and "callsieve.tools.diagrams_dot" not in loaded


# ---------------------------------------------------------------- outside a checkout
def test_outside_a_checkout_check_and_write_ask_for_out_and_write_nothing(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    """An installed callsieve (no clone around it) has no diagrams/ to compare with: --check
    and a write without --out are usage errors that say so, create no ./diagrams, and
    never ask to commit anything."""
    import callsieve.tools.diagrams as diagrams

    monkeypatch.setattr(diagrams, "checkout_diagrams", lambda: None)
    monkeypatch.chdir(tmp_path)
    assert cli_main(["diagram", "--check"]) == 2
    err = capsys.readouterr().err
    assert err == ("callsieve diagram: error: --check compares the diagrams drawn in a callsieve checkout, and "
                   "this callsieve is installed, not run from one: give --out DIR to check a folder you wrote\n")
    assert cli_main(["diagram", "--dialect", "hermes"]) == 2
    assert "give --out DIR (where to write the diagrams), or --out - to print the dot text" in capsys.readouterr().err
    assert list(tmp_path.iterdir()) == []
    # --out works, and --check of that folder names the command that rewrites it, not a commit
    assert cli_main(["diagram", "--dialect", "hermes", "--out", "mine", "--format", "dot"]) == 0
    assert [p.name for p in tmp_path.iterdir()] == ["mine"]
    (tmp_path / "mine" / "dialect-hermes.dot").write_text("stale", encoding="utf-8")
    capsys.readouterr()
    assert cli_main(["diagram", "--dialect", "hermes", "--out", "mine", "--check"]) == 1
    err = capsys.readouterr().err
    assert "mine/dialect-hermes.dot is stale" in err and "redraw with: callsieve diagram --out mine" in err
    assert "commit" not in err


def test_without_the_graphviz_package_diagram_says_which_extra_to_install(tmp_path: Path) -> None:
    code = (
        "import sys, importlib.abc\n"
        "class Hide(importlib.abc.MetaPathFinder):\n"
        "    def find_spec(self, name, path=None, target=None):\n"
        "        if name == 'graphviz': raise ModuleNotFoundError(name)\n"
        "sys.meta_path.insert(0, Hide())\n"
        "import importlib.util\n"
        "importlib.util.find_spec = (lambda f: lambda name, *a: None if name == 'graphviz' else f(name, *a))(importlib.util.find_spec)\n"
        "from callsieve.tools.cli import main\n"
        "sys.exit(main(['diagram', '--check']))\n"
    )
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=tmp_path)
    assert r.returncode == 2, r.stderr
    assert r.stderr == ("callsieve diagram: error: the diagrams need the graphviz package, which transitions draws "
                        "with: pip install 'callsieve[diagrams]'\n")


# ---------------------------------------------------------------- --trace takes the machine's options
ACME_FILE = '''
from callsieve.grammar import Block, Dialect, JsonCall, Marker
ACME = Dialect(name="acme_cli", title="ACME", blocks=(Block(Marker(r"<call>", ("<call>",)), JsonCall(),
               Marker(r"</call>", ("</call>",))),))
'''


@pytest.fixture
def own_registry():  # type: ignore[no-untyped-def]
    """--dialect-file registers into the process's registry: put it back after the test."""
    from callsieve.grammar import registry

    saved = dict(registry.REGISTRY)
    yield
    registry.REGISTRY.clear()
    registry.REGISTRY.update(saved)


@pytest.mark.usefixtures("own_registry")
def test_trace_takes_a_dialect_file_strict_the_block_limit_and_reasoning_off(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    acme = tmp_path / "acme.py"
    acme.write_text(ACME_FILE, encoding="utf-8")
    reply = tmp_path / "reply.txt"
    reply.write_text('<think>a</think><call>{"name": "f", "arguments": {}}</call>', encoding="utf-8")
    out = tmp_path / "out"
    assert cli_main(["diagram", "--trace", str(reply), "--dialect-file", str(acme), "--dialect", "acme_cli",
                     "--no-reasoning", "--out", str(out), "--format", "dot"]) == 0
    log = capsys.readouterr().out
    assert 'Text {"text": "<think>a</think>"}' in log and '"name": "f"' in log and '"dialect": "acme_cli"' in log
    assert cli_main(["diagram", "--trace", str(reply), "--dialect-file", str(acme), "--dialect", "acme_cli",
                     "--max-block-chars", "10", "--out", str(out), "--format", "dot"]) == 0
    log = capsys.readouterr().out
    assert "ToolCall " not in log and "block_too_large" in log
    # strict: a Qwen3-Coder call without <tool_call> is text, and the drawn machine is the strict one
    reply.write_text("<function=f>\n<parameter=a>\n1\n</parameter>\n</function>", encoding="utf-8")
    assert cli_main(["diagram", "--trace", str(reply), "--dialect", "qwen3_coder", "--out", str(out),
                     "--format", "dot"]) == 0
    assert "missing_block_open" in capsys.readouterr().out
    assert cli_main(["diagram", "--trace", str(reply), "--dialect", "qwen3_coder", "--strict", "--out", str(out),
                     "--format", "dot"]) == 0
    log = capsys.readouterr().out
    assert "missing_block_open" not in log and "ToolCall " not in log
    assert cli_main(["diagram", "--strict"]) == 2
    assert "--strict, --max-block-chars and --no-reasoning go with --trace" in capsys.readouterr().err
