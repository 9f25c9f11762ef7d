"""The command line: ``callsieve parse`` (JSON Lines events) and ``callsieve demo``.

Most tests call ``callsieve.tools.cli.main`` in-process; a few run a fresh interpreter, as a user's
shell would, to prove stdin streaming and the exit codes end to end.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

import callsieve
from callsieve import native
from callsieve.tools import demo as cmd_demo
from callsieve.tools.cli import main

SEED4_CONTENT = "line\n</parameter>\nmore"
SEED4 = (
    "<tool_call>\n<function=create_file>\n<parameter=path>\na.md\n</parameter>\n"
    f"<parameter=content>\n{SEED4_CONTENT}\n</parameter>\n</function>\n</tool_call>"
)
TRANSCRIPT = "Saving it.\n" + SEED4 + "\nDone."
TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "create_file",
            "parameters": {
                "type": "object",
                "properties": {"path": {"type": "string"}, "content": {"type": "string"}, "mode": {"type": "integer"}},
            },
        },
    }
]
ANSI = re.compile(r"\x1b\[[0-9;]*m")


def _cli(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    rc = main(argv)
    out, err = capsys.readouterr()
    return rc, out, err


def _events(out: str) -> list[dict[str, Any]]:
    return [json.loads(line) for line in out.splitlines()]


def _shell(args: list[str], stdin: bytes = b"", env: dict[str, str] | None = None) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(
        [sys.executable, "-m", "callsieve.tools.cli", *args], input=stdin, capture_output=True, timeout=60, env=env
    )


@pytest.fixture
def transcript(tmp_path: Path) -> Path:
    p = tmp_path / "reply.txt"
    p.write_text(TRANSCRIPT, encoding="utf-8")
    return p


# ---------------------------------------------------------------- parse
def test_parse_writes_one_json_event_per_line(transcript: Path, capsys: pytest.CaptureFixture[str]) -> None:
    rc, out, err = _cli(["parse", str(transcript)], capsys)
    assert rc == 0 and err == ""
    events = _events(out)
    types = [e["type"] for e in events]
    assert types[0] == "text" and types[-1] == "text"
    assert types.count("tool_call_start") == types.count("tool_call") == 1
    (call,) = [e for e in events if e["type"] == "tool_call"]
    assert call["name"] == "create_file" and call["dialect"] == "qwen3_coder"
    assert call["arguments"] == {"path": "a.md", "content": SEED4_CONTENT}
    deltas = "".join(e["arguments"] for e in events if e["type"] == "tool_call_delta")
    assert json.loads(deltas) == call["arguments"]
    assert "".join(e["raw"] for e in events) == TRANSCRIPT  # no loss, through the CLI
    assert "".join(e["text"] for e in events if e["type"] == "text") == "Saving it.\n\nDone."


@pytest.mark.parametrize("n", [1, 2, 7, 64])
def test_parse_chunk_with_merged_is_independent_of_chunking(
    n: int, transcript: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _, whole, _ = _cli(["parse", str(transcript), "--merged"], capsys)
    rc, chunked, _ = _cli(["parse", str(transcript), "--merged", "--chunk", str(n)], capsys)
    assert rc == 0 and chunked == whole
    # Without --merged the small chunks do show: more, smaller events.
    _, unmerged, _ = _cli(["parse", str(transcript), "--chunk", str(n)], capsys)
    if n <= 7:
        assert len(unmerged.splitlines()) > len(whole.splitlines())


def test_parse_types_values_by_the_tools_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    tools = tmp_path / "tools.json"
    tools.write_text(json.dumps({"model": "x", "tools": TOOLS}))  # a request body works too
    src = tmp_path / "in.txt"
    src.write_text(SEED4.replace("</function>", "<parameter=mode>\n644\n</parameter>\n</function>"))
    rc, out, _ = _cli(["parse", str(src), "--tools", str(tools), "--dialect", "qwen3_coder"], capsys)
    assert rc == 0
    (call,) = [e for e in _events(out) if e["type"] == "tool_call"]
    assert call["arguments"]["mode"] == 644


def test_parse_reports_unknown_tools_with_a_diagnostic(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    tools = tmp_path / "tools.json"
    tools.write_text(json.dumps([{"type": "function", "function": {"name": "other"}}]))
    src = tmp_path / "in.txt"
    src.write_text(SEED4)
    rc, out, _ = _cli(["parse", str(src), "--tools", str(tools), "--unknown-tool", "text"], capsys)
    events = _events(out)
    assert rc == 0
    assert [e["code"] for e in events if e["type"] == "diagnostic"] == ["unknown_tool"]
    assert not [e for e in events if e["type"] == "tool_call"]
    assert "".join(e["text"] for e in events if e["type"] == "text") == SEED4


@pytest.mark.parametrize(
    "argv_tail, message",
    [
        (["--dialect", "klingon"], "unknown dialect 'klingon' (known: "),
        (["--dialect", "dsml,nope"], "unknown dialect 'nope'"),
        (["--tools", "{missing}"], "cannot read tools file"),
        (["--tools", "{notjson}"], "is not JSON"),
        (["--tools", "{badschema}"], "invalid tool schema in"),
        (["--tools", "{object}"], "invalid tool schema in"),
        (["--chunk", "-1"], "argument --chunk: must be at least 1 character, not -1"),
        (["--chunk", "0"], "argument --chunk: must be at least 1 character, not 0"),
        (["--chunk", "two"], "argument --chunk: needs a whole number of characters, not 'two'"),
        (["--on-malformed", "sometimes"], "invalid choice: 'sometimes'"),
    ],
)
def test_parse_errors_are_one_line_with_exit_2(
    argv_tail: list[str], message: str, tmp_path: Path, transcript: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    files = {
        "missing": tmp_path / "nope.json",
        "notjson": tmp_path / "notjson.json",
        "badschema": tmp_path / "bad.json",
        "object": tmp_path / "object.json",
    }
    files["notjson"].write_text("[{,")
    files["badschema"].write_text(json.dumps([{"type": "function", "function": {"parameters": {}}}]))
    files["object"].write_text(json.dumps({"type": "function", "function": {"name": "f"}}))
    argv = ["parse", str(transcript)] + [a.format(**{k: str(v) for k, v in files.items()}) for a in argv_tail]
    rc, out, err = _cli(argv, capsys)
    assert rc == 2
    assert out == ""
    assert err.count("\n") == 1 and err.startswith("callsieve: error: ")
    assert message in err


def test_parse_unreadable_and_non_utf8_inputs_are_one_line_errors(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    rc, out, err = _cli(["parse", str(tmp_path / "missing.txt")], capsys)
    assert (rc, out) == (2, "")
    assert err == f"callsieve: error: cannot read {str(tmp_path / 'missing.txt')!r}: No such file or directory\n"
    rc, _, err = _cli(["parse", str(tmp_path)], capsys)  # a directory
    assert rc == 2 and err.startswith("callsieve: error: cannot read") and err.count("\n") == 1
    bad = tmp_path / "latin1.txt"
    bad.write_bytes("caf\xe9".encode("latin-1"))
    rc, _, err = _cli(["parse", str(bad)], capsys)
    assert rc == 2 and "not valid UTF-8 (byte 0xe9 at offset 3)" in err


def test_parse_reads_stdin_and_streams_events_in_a_fresh_process() -> None:
    data = ("Hi <‖DS" + "ML‖tool_calls>\n<‖DSML‖invoke name=\"f\">\n</‖DSML‖invoke>\n</‖DSML‖tool_calls>").encode()
    r = _shell(["parse", "--dialect", "dsml"], stdin=data)
    assert r.returncode == 0, r.stderr
    events = _events(r.stdout.decode())
    assert [e["type"] for e in events] == ["text", "tool_call_start", "tool_call_delta", "tool_call"]
    assert events[0]["text"] == "Hi "
    assert "".join(e["raw"] for e in events).encode() == data


def test_parse_stdin_events_come_out_before_the_input_ends() -> None:
    """Each block read from a pipe is one feed(): the text before a block is written
    while the block is still arriving."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "callsieve.tools.cli", "parse"], stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE
    )
    assert proc.stdin is not None and proc.stdout is not None
    try:
        proc.stdin.write(b"Hello there.\n<tool_call>\n<function=f>\n")
        proc.stdin.flush()
        first = json.loads(proc.stdout.readline())
        second = json.loads(proc.stdout.readline())
        assert first == {"type": "text", "text": "Hello there.\n", "raw": "Hello there.\n"}
        assert second["type"] == "tool_call_start" and second["name"] == "f"
        proc.stdin.write(b"</function>\n</tool_call>")
        proc.stdin.close()
        rest = [json.loads(line) for line in proc.stdout.read().splitlines()]
        assert [e["type"] for e in rest] == ["tool_call_delta", "tool_call"]
        assert proc.wait(30) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.wait()
        for stream in (proc.stdout, proc.stderr):
            if stream is not None:
                stream.close()


def test_parse_error_exit_code_in_a_fresh_process() -> None:
    r = _shell(["parse", "--dialect", "nope"], stdin=b"x")
    assert r.returncode == 2
    assert r.stdout == b""
    assert r.stderr.decode().splitlines() == [
        f"callsieve: error: unknown dialect 'nope' (known: {', '.join(callsieve.DIALECTS)}; "
        "a dialect of your own: --dialect-file)"
    ]


# ---------------------------------------------------------------- demo
def test_demo_shows_the_naive_failures_and_callsieve_results(capsys: pytest.CaptureFixture[str]) -> None:
    rc, out, err = _cli(["demo"], capsys)
    assert rc == 0 and err == ""
    assert not ANSI.search(out)  # not a terminal: no colour
    # markup read aloud: the split marker slips past the marker filter; callsieve extracts the call.
    assert "showed the user 174 characters of markup" in out
    assert "lost the call voice_output_speak()" in out
    assert 'text = "西溪公主回城堡，\\n星星点灯照她跑。"' in out
    # a file cut at </parameter>: the naive parser truncates; callsieve keeps all 235 characters.
    assert "create_file.content: kept 89 of 235 characters, and reported the call as complete" in out
    assert "(235 chars)" in out
    # fenced: the naive parser runs the example.
    assert "ran delete_path(), which the model only showed as an example" in out
    assert out.count("✓ same events fed whole as fed in chunks") == 3
    assert "✗ events" not in out


def test_demo_callsieve_sections_never_show_markup_outside_the_fence(capsys: pytest.CaptureFixture[str]) -> None:
    for sample in cmd_demo.load_samples():
        chunks = [sample.text[i : i + 3] for i in range(0, len(sample.text), 3)]
        ours = cmd_demo.run_sieve(chunks).outcome
        assert "DSML" not in ours.text
        assert "<function=list_dir>" not in ours.text and "<function=create_file>" not in ours.text
        assert len(ours.calls) == 1


@pytest.mark.parametrize("chunk", ["whole", "1", "13"])
def test_demo_chunk_option(chunk: str, capsys: pytest.CaptureFixture[str]) -> None:
    opts = ["--whole"] if chunk == "whole" else ["--chunk", chunk]
    rc, out, _ = _cli(["demo", "cut_at_close", *opts], capsys)
    assert rc == 0
    feed = re.search(r"input: 424 characters \(cut_at_close\), (.*)", out)
    assert feed is not None
    expected = "fed whole" if chunk == "whole" else f"fed in {-(-424 // int(chunk))} chunks of {chunk} characters"
    assert feed.group(1) == expected
    assert "kept 89 of 235 characters" in out


def test_demo_list_and_unknown_sample(capsys: pytest.CaptureFixture[str]) -> None:
    rc, out, _ = _cli(["demo", "--list"], capsys)
    assert rc == 0
    assert [line.split()[0] for line in out.splitlines()] == ["read_aloud", "cut_at_close", "fenced"]
    rc, out, err = _cli(["demo", "nope"], capsys)
    assert rc == 2 and out == ""
    assert err == "callsieve: error: unknown sample 'nope' (known: read_aloud, cut_at_close, fenced)\n"


def test_demo_colour_only_when_asked_or_on_a_terminal(capsys: pytest.CaptureFixture[str]) -> None:
    _, out, _ = _cli(["demo", "fenced", "--color", "always"], capsys)
    assert ANSI.search(out)
    _, out, _ = _cli(["demo", "fenced", "--color", "never"], capsys)
    assert not ANSI.search(out)


# ---------------------------------------------------------------- the naive filters are faithful
def test_marker_filter_works_on_whole_text_and_leaks_on_a_split_marker() -> None:
    (sample,) = [s for s in cmd_demo.load_samples() if s.name == "read_aloud"]
    whole = cmd_demo.per_chunk_marker_filter([sample.text])
    assert "DSML" not in whole.text and whole.calls == []  # the article's 10/10 case
    cut = sample.text.index("<‖DSML‖") + 3
    split = cmd_demo.per_chunk_marker_filter([sample.text[:cut], sample.text[cut:]])
    # "<‖DS" + "ML‖tool_calls>": the block's open marker is shown (and read aloud).
    assert split.text.endswith("听：\n\n<‖DSML‖tool_calls>")
    # In 4-character chunks no chunk ever holds a whole marker: everything leaks.
    four = cmd_demo.per_chunk_marker_filter([sample.text[i : i + 4] for i in range(0, len(sample.text), 4)])
    assert four.text == sample.text


def test_first_close_parser_cuts_the_value_at_the_first_close() -> None:
    out = cmd_demo.first_close_parser([SEED4])
    assert out.calls == [("create_file", {"path": "a.md", "content": "line"})]  # the "Actual"
    assert callsieve.parse(SEED4).calls[0].arguments == {"path": "a.md", "content": SEED4_CONTENT}


def test_samples_are_package_data() -> None:
    names = [s.name for s in cmd_demo.load_samples()]
    assert names == ["read_aloud", "cut_at_close", "fenced"]
    root = Path(cmd_demo.__file__).parent / "samples"
    listed = {json.loads((root / "index.json").read_text())[i]["file"] for i in range(3)}
    assert listed <= {p.name for p in root.iterdir()}


# The script installed beside this interpreter (the venv's), not another one on PATH.
_SCRIPT = os.path.join(os.path.dirname(sys.executable), "callsieve")


@pytest.mark.skipif(not os.path.exists(_SCRIPT), reason="console script not installed beside this interpreter")
def test_console_script_runs_the_demo() -> None:
    exe = _SCRIPT
    r = subprocess.run([exe, "demo", "read_aloud"], capture_output=True, timeout=60)
    assert r.returncode == 0, r.stderr
    assert "lost the call voice_output_speak()" in r.stdout.decode()


# ---------------------------------------------------------------- errors, version, entry points
def test_on_malformed_raise_is_one_line_and_exit_2_after_the_events_before_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    src = tmp_path / "cut.txt"
    src.write_text("Before.\n<tool_call>\n<function=f>\n<parameter=a>\n1")  # cut inside the block
    rc, out, err = _cli(["parse", str(src), "--on-malformed", "raise"], capsys)
    assert rc == 2
    assert err.count("\n") == 1 and err.startswith("callsieve: error: ") and "(--on-malformed raise)" in err
    assert "Traceback" not in err
    assert [e["text"] for e in _events(out) if e["type"] == "text"] == ["Before.\n"]
    # The same input without the policy is not an error: the call that had started is
    # abandoned, its markup on that event, never text.
    rc, out, err = _cli(["parse", str(src)], capsys)
    assert rc == 0 and err == ""
    assert "".join(e["text"] for e in _events(out) if e["type"] == "text") == "Before.\n"
    (gone,) = [e for e in _events(out) if e["type"] == "tool_call_abandoned"]
    assert gone["raw"] == src.read_text()[len("Before.\n"):] and gone["reason"] == "unterminated_block"


@pytest.mark.parametrize("argv", [["demo", "--chunk", "0"], ["demo", "--chunk", "-3"], ["demo", "--colour"], ["frobnicate"]])
def test_demo_and_command_errors_are_one_line_with_exit_2(argv: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    rc, out, err = _cli(argv, capsys)
    assert (rc, out) == (2, "")
    assert err.count("\n") == 1 and err.startswith("callsieve: error: ")


def test_no_command_prints_help_to_stderr_with_exit_2(capsys: pytest.CaptureFixture[str]) -> None:
    rc, out, err = _cli([], capsys)
    assert (rc, out) == (2, "")
    assert "usage: callsieve" in err and "parse" in err


def test_version_is_the_installed_distributions(capsys: pytest.CaptureFixture[str]) -> None:
    from importlib.metadata import version

    assert callsieve.__version__ == version("callsieve")
    assert re.fullmatch(r"\d+\.\d+\.\d+.*", callsieve.__version__)
    rc, out, err = _cli(["--version"], capsys)
    assert (rc, err) == (0, "")
    assert out == f"callsieve {callsieve.__version__}, {native.build()}\n"


def test_python_dash_m_callsieve_is_the_command_line() -> None:
    r = subprocess.run([sys.executable, "-m", "callsieve", "--version"], capture_output=True, timeout=60)
    assert r.returncode == 0, r.stderr
    assert r.stdout.decode() == f"callsieve {callsieve.__version__}, {native.build()}\n"
    r = subprocess.run([sys.executable, "-m", "callsieve", "parse", "--chunk", "0"], input=b"x", capture_output=True, timeout=60)
    assert r.returncode == 2 and r.stdout == b""
    assert r.stderr.decode().splitlines() == ["callsieve: error: argument --chunk: must be at least 1 character, not 0 (see: callsieve parse --help)"]


MID_BLOCK = ('Before. <tool_call>\n<function=f>\n</function>\n</tool_call> then '
             '<tool_call>{"name": "g", "arguments": {}} junk</tool_call> never read')


@pytest.mark.parametrize("extra", [[], ["--chunk", "1"], ["--chunk", "7"], ["--merged"], ["--merged", "--chunk", "3"]])
def test_on_malformed_raise_writes_every_event_before_the_block_however_it_is_fed(
        extra: list[str], tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Fed whole, the malformed block is met in the same feed() as everything before it:
    those events ride on the exception, and are written before the error line."""
    src = tmp_path / "mid.txt"
    src.write_text(MID_BLOCK, encoding="utf-8")
    rc, out, err = _cli(["parse", str(src), "--on-malformed", "raise", *extra], capsys)
    assert rc == 2 and err.count("\n") == 1 and "malformed_block" in err and "(--on-malformed raise)" in err
    events = callsieve.merged([_event(e) for e in _events(out)])
    assert [type(e).__name__ for e in events] == ["Text", "ToolCallStart", "ToolCallDelta", "ToolCall", "Text",
                                                  "ToolCallStart", "ToolCallDelta", "ToolCallAbandoned"]
    assert events[0].text == "Before. " and events[4].text == " then "  # type: ignore[union-attr]
    assert "never read" not in out


def _event(e: dict[str, Any]) -> Any:
    kind = {"text": callsieve.Text, "tool_call_start": callsieve.ToolCallStart, "tool_call_delta": callsieve.ToolCallDelta,
            "tool_call": callsieve.ToolCall, "reasoning": callsieve.Reasoning, "diagnostic": callsieve.Diagnostic,
            "tool_call_abandoned": callsieve.ToolCallAbandoned}[e.pop("type")]
    return kind(**e)


ACME = '''
from callsieve.grammar import Block, Dialect, JsonCall, Marker
ACME = Dialect(name="acme_parse", title="ACME", blocks=(Block(Marker(r"<call>", ("<call>",)), JsonCall(),
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
def test_parse_loads_a_dialect_file_and_takes_strict_the_block_limit_and_reasoning_off(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    acme = tmp_path / "acme.py"
    acme.write_text(ACME, encoding="utf-8")
    src = tmp_path / "r.txt"
    src.write_text('<think>hm</think>Hi <call>{"name": "f", "arguments": {}}</call>', encoding="utf-8")
    rc, out, _ = _cli(["parse", str(src), "--dialect-file", str(acme), "--merged"], capsys)
    assert rc == 0
    got = [(e["type"], e.get("text") or e.get("name")) for e in _events(out) if e["type"] != "tool_call_delta"]
    assert got == [("reasoning", "hm"), ("text", "Hi "), ("tool_call_start", "f"), ("tool_call", "f")]
    assert _events(out)[-1]["dialect"] == "acme_parse"
    rc, out, _ = _cli(["parse", str(src), "--dialect-file", str(acme), "--dialect", "acme_parse", "--no-reasoning",
                       "--merged"], capsys)
    assert rc == 0 and _events(out)[0] == {"type": "text", "text": "<think>hm</think>Hi ", "raw": "<think>hm</think>Hi "}
    rc, out, _ = _cli(["parse", str(src), "--dialect-file", str(acme), "--max-block-chars", "10", "--merged"], capsys)
    assert rc == 0 and [e["code"] for e in _events(out) if e["type"] == "diagnostic"] == ["block_too_large"]
    src.write_text("<function=f>\n<parameter=a>\n1\n</parameter>\n</function>", encoding="utf-8")
    rc, out, _ = _cli(["parse", str(src), "--merged"], capsys)
    assert [e["code"] for e in _events(out) if e["type"] == "diagnostic"] == ["missing_block_open"]
    rc, out, _ = _cli(["parse", str(src), "--merged", "--strict"], capsys)
    assert _events(out) == [{"type": "text", "text": src.read_text(), "raw": src.read_text()}]


@pytest.mark.parametrize("content, message", [
    (None, "cannot read dialect file"),
    ("def (", "cannot load dialect file {path!r}: SyntaxError"),
    ("raise RuntimeError('boom')", "cannot load dialect file {path!r}: RuntimeError: boom"),
    ("X = 1", "dialect file {path!r} defines no Dialect at its top level"),
    ("from callsieve.grammar import Dialect\nD = Dialect(name='hermes', title='t', blocks=())",
     "dialect file {path!r}: dialect hermes: declares no block"),
])
@pytest.mark.usefixtures("own_registry")
def test_a_dialect_file_that_does_not_load_is_one_usage_error(content: str | None, message: str, tmp_path: Path,
                                                              capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "d.py"
    if content is not None:
        path.write_text(content, encoding="utf-8")
    src = tmp_path / "r.txt"
    src.write_text("hi", encoding="utf-8")
    rc, out, err = _cli(["parse", str(src), "--dialect-file", str(path)], capsys)
    assert rc == 2 and out == "" and err.count("\n") == 1 and err.startswith("callsieve: error: ")
    assert message.format(path=str(path)) in err, err
