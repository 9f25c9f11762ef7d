"""What README, docs/ and ``help()`` tell a user matches what the package does."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

import callsieve

ROOT = Path(__file__).resolve().parent.parent
TOOLS = [{"type": "function", "function": {"name": "f", "parameters": {"type": "object", "properties": {"n": {"type": "integer"}}}}}]
CALL = "<tool_call>\n<function={name}>\n{params}</function>\n</tool_call>"

#: One input per Diagnostic code, with the options that produce it.
PRODUCES: dict[str, tuple[str, dict[str, Any]]] = {
    "malformed_block": ("<tool_call>\nhello\n</tool_call>", {}),
    "unterminated_block": ("<tool_call>\n<function=f>\n", {}),
    "block_too_large": ("<tool_call>\n<function=f>\n<parameter=n>\n" + "x" * 100, {"max_block_chars": 20}),
    "unknown_tool": (CALL.format(name="g", params=""), {"tools": TOOLS}),
    "dropped_call": (CALL.format(name="g", params=""), {"tools": TOOLS, "unknown_tool": "drop"}),
    "type_mismatch": (CALL.format(name="f", params="<parameter=n>\nabc\n</parameter>\n"), {"tools": TOOLS}),
    "arguments_as_string": ('<tool_call>{"name": "f", "arguments": "{\\"n\\": 1}"}</tool_call>', {}),
    "lone_surrogate": ('<tool_call>{"name": "f", "arguments": {"n": "\\ud83d"}}</tool_call>', {}),
    "duplicate_call_id": ("<|tool_calls_section_begin|><|tool_call_begin|>functions.f:0<|tool_call_argument_begin|>{}"
                          "<|tool_call_end|><|tool_call_begin|>functions.f:0<|tool_call_argument_begin|>{}<|tool_call_end|>"
                          "<|tool_calls_section_end|>", {}),
    "raw_control_character": ('<tool_call>{"name": "f", "arguments": {"n": "a\tb"}}</tool_call>', {}),
    "malformed_call": ("<|python_start|>[f(a=1), g(b=x)]<|python_end|>", {"dialects": ["pythonic"]}),
    "raw_newline_in_string": ('<|python_start|>[f(a="x\ny")]<|python_end|>', {"dialects": ["pythonic"]}),
    "leading_zero_number": ("<|python_start|>[f(month=07)]<|python_end|>", {"dialects": ["pythonic"]}),
    "keyword_argument_name": ("<|python_start|>[f(from=1)]<|python_end|>", {"dialects": ["pythonic"]}),
    "stray_reasoning_close": ("hmm</think>answer", {}),
    "reasoning_closed_by_call": ('<think>hmm <tool_call>{"name": "f", "arguments": {}}</tool_call>', {}),
    "call_in_reasoning": ('<think>hmm <tool_call>{"name": "f", "arguments": {}}</tool_call> no.</think>', {}),
    "markup_in_code": ('Example:\n```\n<tool_call>{"name": "f", "arguments": {}}</tool_call>\n```\n', {}),
    "missing_block_open": ("<function=f>\n<parameter=n>\n1\n</parameter>\n</function>", {}),
    "implied_param_close": ("<tool_call>\n<function=f>\n<parameter=n>\n1\n</function>\n</tool_call>", {}),
    "implied_call_close": ('<｜DSML｜tool_calls><｜DSML｜invoke name="f"></｜DSML｜tool_calls>', {}),
    "dsml_variant": ('<DSML tool_calls><｜DSML｜invoke name="f"></｜DSML｜invoke></｜DSML｜tool_calls>', {}),
    "python_literal": (CALL.format(name="f", params="<parameter=v>\n['a']\n</parameter>\n"),
                       {"tools": [{"type": "function", "function": {"name": "f", "parameters": {"properties": {"v": {"type": "array"}}}}}]}),
    "repeated_param_array": ('<tool_calls><invoke name="f"><parameter name="v">1</parameter><parameter name="v">2</parameter>'
                             "</invoke></tool_calls>",
                             {"tools": [{"type": "function", "function": {"name": "f", "parameters": {"properties": {"v": {"type": "array"}}}}}]}),
    "call_id_variant": ("<|tool_calls_section_begin|><|tool_call_begin|>functionsf5<|tool_call_argument_begin|>{}"
                        "<|tool_call_end|><|tool_calls_section_end|>", {"tools": TOOLS}),
    "call_id_as_written": ("<|tool_calls_section_begin|><|tool_call_begin|>functions.f<|tool_call_argument_begin|>{}"
                           "<|tool_call_end|><|tool_calls_section_end|>", {}),
    "end_instead_of_call": ("<|channel|>commentary to=functions.f<|message|>{}<|end|>", {}),
    "nested_cdata": ('<tool_calls><invoke name="f"><parameter name="n"><![CDATA[<![CDATA[1]]>]]></parameter></invoke>'
                     "</tool_calls>", {"dialects": ["xml"]}),
    "unterminated_heredoc": (CALL.format(name="f", params="<parameter=n>\ncat <<EOF\n</parameter>\n"), {}),
    "doubled_key_close": ("<tool_call>f<arg_key>n</arg_key></arg_key><arg_value>1</arg_value></tool_call>", {}),
    "glued_content_type": ("<|channel|>commentary to=functions.fjson<|message|>{}<|call|>", {"tools": TOOLS}),
    "param_close_variant": (CALL.format(name="f", params="<parameter=n>\n1\n</parameter1>\n"), {}),
    "doubled_lt": ('<<｜DSML｜tool_calls><｜DSML｜invoke name="f"></｜DSML｜invoke></｜DSML｜tool_calls>', {}),
    "missing_value_open": ("<tool_call>f<arg_key>n</arg_key>1</arg_value></tool_call>", {}),
    "doubled_key_open": ("<tool_call>f<arg_key><arg_key>n</arg_key><arg_value>1</arg_value></tool_call>", {}),
    "stray_value_close": ("<tool_call>f</arg_value></tool_call>", {}),
    "missing_block_close": ('<tool_call>{"name": "f", "arguments": {}}', {}),
    "missing_args_open": ('[TOOL_CALLS]f{"n": 1}', {}),
    "nameless_call": ("<|tool_calls_section_begin|><|tool_call_begin|>0<|tool_call_argument_begin|>{}<|tool_call_end|>"
                      "<|tool_calls_section_end|>", {"tools": TOOLS}),
    "orphan_token": ("Done.<|tool_calls_section_end|>", {}),
    "calls_open_variant": ("<｜tool▁calls｜><｜tool▁call▁begin｜>f<｜tool▁sep｜>{}<｜tool▁call▁end｜><｜tool▁calls▁end｜>", {}),
    "unwrapped_arguments": (CALL.format(name="f", params='<parameter=arguments>\n{"n": 1}\n</parameter>\n'), {"tools": TOOLS}),
    "function_wrapper": ('<function=f>{"n": 1}</function>', {}),
    "generic_wrapper": ('<tool>{"name": "f", "arguments": {"n": 1}}</tool>', {"tools": TOOLS}),
    "mixed_tags": ('<｜DSML｜tool_calls><invoke name="f"></invoke></｜DSML｜tool_calls>', {}),
    "arbitrary_prefix": ('<｜FOO｜tool_calls><｜FOO｜invoke name="f"></｜FOO｜invoke></｜FOO｜tool_calls>', {}),
    "json_invoke_body": ('<tool_calls><invoke name="f">{"n": 1}</invoke></tool_calls>', {}),
    "call_open_as_key": ("<tool_call>f<tool_call>n</arg_key><arg_value>1</arg_value></tool_call>", {}),
    "literal_newline": ("<tool_call>f\\n<arg_key>n</arg_key>\\n<arg_value>1</arg_value>\\n</tool_call>", {}),
    "double_escaped_value": ('<tool_call>f<arg_key>v</arg_key><arg_value>[\\"a\\"]</arg_value></tool_call>',
                             {"tools": [{"type": "function", "function": {"name": "f", "parameters": {"properties": {"v": {"type": "array"}}}}}]}),
}


def _readme_codes() -> list[str]:
    # The table of every code moved from README to docs/diagnostics.md.
    text = (ROOT / "docs" / "diagnostics.md").read_text(encoding="utf-8")
    section = text[text.index("| `code` |") :]
    return [c for c in re.findall(r"^\| `([a-z_]+)` \|", section, re.M) if c != "code"]  # not the header


def _codes(text: str, options: dict[str, Any]) -> list[str]:
    options = dict(options)
    s = callsieve.Sieve(tools=options.pop("tools", None), **options)
    return [e.code for e in s.feed(text) + s.close() if isinstance(e, callsieve.Diagnostic)]


@pytest.mark.parametrize("code", sorted(PRODUCES))
def test_each_documented_diagnostic_code_is_one_the_engine_emits(code: str) -> None:
    text, options = PRODUCES[code]
    assert code in _codes(text, options)
    assert code in _readme_codes(), f"docs/diagnostics.md's table lacks {code}"
    assert f"``{code}``" in (callsieve.Diagnostic.__doc__ or ""), f"help(callsieve.Diagnostic) lacks {code}"


def test_readme_lists_no_code_the_engine_does_not_emit() -> None:
    assert sorted(_readme_codes()) == sorted(PRODUCES)


def test_readme_test_command_installs_the_test_extra_and_every_adapter() -> None:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    command = text.split("<!-- test-command", 1)[1].split("```sh\n", 1)[1].split("\n", 1)[0]
    extras = re.search(r"pip install (?:--[a-z-]+ )*-e '\.\[([a-z,]+)\]'", command)
    assert extras is not None, command
    assert set(extras.group(1).split(",")) == {"test", "diagrams", "openai", "litellm", "langchain"}
    assert "mypy" not in command


def test_help_shows_the_options_and_the_events() -> None:
    doc = callsieve.Sieve.__doc__ or ""
    for option in ("dialects", "tools", "on_malformed", "unknown_tool", "max_block_chars", "start_in_reasoning", "calls_in_reasoning", "id_prefix"):
        assert f"{option}:" in doc, option
    for event in (callsieve.Text, callsieve.Reasoning, callsieve.ToolCallStart, callsieve.ToolCallDelta, callsieve.ToolCall):
        assert event.__doc__ and event.__name__ in doc


def _reasoning_rows() -> list[list[str]]:
    text = (ROOT / "docs" / "reasoning.md").read_text(encoding="utf-8")
    section = text[text.index("<!-- reasoning-examples") :]
    rows = []
    for line in section.splitlines()[3:]:
        if not line.startswith("|"):
            break
        cells = [c.strip().replace("\\|", "|") for c in re.split(r"(?<!\\)\|", line)[1:-1]]
        rows.append(cells)
    return rows


def test_docs_have_one_reasoning_example_per_family_and_each_is_true() -> None:
    from callsieve.grammar import REGISTRY

    rows = _reasoning_rows()
    families = {r for d in REGISTRY.values() for r in d.reasoning}
    assert len(rows) >= len(families) + 1  # every family, and harmony's analysis channel
    for family, _declared, example, reasoning, visible in rows:
        m = re.fullmatch(r"`(.*)` \(`([a-z0-9_]+)`\)", example)
        assert m, example
        doc, dialect = m.groups()
        r = callsieve.parse(doc, dialects=[dialect], start_in_reasoning="start_in_reasoning=True" in family)
        assert (r.reasoning, r.text) == (reasoning.strip("`"), visible.strip("`")), family
        assert not r.diagnostics
    declared = " ".join(r[1] for r in rows)
    for name, d in REGISTRY.items():
        if d.reasoning or d.headers:
            assert f"`{name}`" in declared, name


def _contract_rows() -> list[str]:
    text = (ROOT / "docs" / "contract.md").read_text(encoding="utf-8")
    section = text.split("# The contract, and the test that proves each point", 1)[1].split("\n## ", 1)[0]
    return [line for line in section.splitlines() if line.startswith("| ") and not line.startswith("| point")]


def _test_names(path: Path) -> set[str]:
    return set(re.findall(r"^\s*def (test_\w+)", path.read_text(encoding="utf-8"), re.M))


def test_every_test_the_contract_table_names_exists() -> None:
    # The table is the map from each contract point to its proof: a test renamed or
    # removed must not leave it pointing at nothing. Names are written whole, with a
    # trailing "*" for a family, or "..._" for the end of a name (the file is the one
    # named before it in the cell, or any file).
    files = {p.name: _test_names(p) for p in (ROOT / "tests").glob("test_*.py")}
    every = set().union(*files.values())
    rows = _contract_rows()
    assert len(rows) >= 8
    checked = 0
    for row in rows:
        proof = row.rsplit("|", 2)[-2]
        for ref in re.findall(r"`([^`]+)`", proof):
            m = re.fullmatch(r"(?:(test_\w+\.py)(?:::)?)?((?:\.\.\._|test_)[\w]*\*?)?", ref)
            if m is None or not (m.group(1) or m.group(2)):
                continue  # (a command, a module: not a test)
            file, name = m.group(1), m.group(2)
            if file is not None:
                assert file in files, f"docs/contract.md's table names {file}, which does not exist"
            if name is None:
                continue
            pool = files[file] if file is not None else every
            if name.startswith("..._"):
                suffix = name[3:].rstrip("*")
                hits = [t for t in pool if suffix in t] if name.endswith("*") else [t for t in pool if t.endswith(suffix)]
            elif name.endswith("*"):
                hits = [t for t in pool if t.startswith(name[:-1])]
            else:
                hits = [t for t in pool if t == name]
            assert hits, f"docs/contract.md's table names {ref}, which matches no test"
            checked += 1
    assert checked >= 30


def _severity_column() -> dict[str, str]:
    text = (ROOT / "docs" / "diagnostics.md").read_text(encoding="utf-8")
    text = text[text.index("| `code` |") :]
    return {c: s for c, s in re.findall(r"^\| `([a-z_]+)` \| ([^|]+) \|", text, re.M) if c != "code"}


def test_the_documented_severities_are_the_code_table_and_what_the_engine_emits() -> None:
    from callsieve.events import SEVERITY, SEVERITY_LEVELS

    column = _severity_column()
    assert sorted(column) == sorted(PRODUCES) == sorted(SEVERITY)
    for code, cell in column.items():
        named = re.findall(r"\b(noise|tolerated|released|dropped)\b", cell)
        assert named and named[0] == SEVERITY[code], (code, cell)
        text, options = PRODUCES[code]
        options = dict(options)
        s = callsieve.Sieve(tools=options.pop("tools", None), **options)
        got = [e.severity for e in s.feed(text) + s.close() if isinstance(e, callsieve.Diagnostic) and e.code == code]
        assert got and set(got) <= set(named), (code, got, cell)
        assert set(got) <= set(SEVERITY_LEVELS)
    assert "``severity``" in (callsieve.Diagnostic.__doc__ or "")


BROKEN_CALL = '<tool_call>{"name": "f", "arguments": {"n": 1}} junk</tool_call>'  # broken after the call began


@pytest.mark.parametrize("text, options, expected", [
    # prose that mentions a tag: nothing lost, nothing meant as a call shown
    ("Wrap it in a <tool_call> tag, then stop.", {}, [("malformed_block", "noise")]),
    ("The <｜DSML｜function_calls> wrapper is DeepSeek's.", {}, [("malformed_block", "noise")]),
    # a call had begun: the user saw markup meant as a call
    (BROKEN_CALL, {}, [("malformed_block", "released")]),
    (BROKEN_CALL, {"on_malformed": "drop"}, [("malformed_block", "dropped")]),
    ("<tool_call>\n<function=f>\n<parameter=n>\n1", {}, [("unterminated_block", "released")]),
    # a call stands, read with an assumption
    ("<function=f>\n<parameter=n>\n1\n</parameter>\n</function>", {}, [("missing_block_open", "tolerated")]),
    (CALL.format(name="g", params=""), {"tools": TOOLS}, [("unknown_tool", "tolerated")]),
    (CALL.format(name="g", params=""), {"tools": TOOLS, "unknown_tool": "text"}, [("unknown_tool", "released")]),
    (CALL.format(name="g", params=""), {"tools": TOOLS, "unknown_tool": "drop"},
     [("unknown_tool", "dropped"), ("dropped_call", "dropped")]),
])
def test_each_diagnostic_carries_the_severity_a_proxy_alerts_on(text: str, options: dict[str, Any],
                                                                 expected: list[tuple[str, str]]) -> None:
    assert [(d.code, d.severity) for d in callsieve.parse(text, **options).diagnostics] == expected


def test_raise_carries_a_dropped_diagnostic() -> None:
    with pytest.raises(callsieve.MalformedBlockError) as raised:
        callsieve.parse(BROKEN_CALL, on_malformed="raise")
    last = raised.value.events[-1]
    assert isinstance(last, callsieve.Diagnostic) and last.severity == "dropped"
    # the call f had begun: its markup rides on its ToolCallAbandoned, never on text
    gone = raised.value.events[-2]
    assert isinstance(gone, callsieve.ToolCallAbandoned) and gone.raw.startswith("<tool_call>") and last.raw == ""


def test_a_severity_outside_the_four_is_refused() -> None:
    assert callsieve.Diagnostic("acme_thing", "m", 0).severity == "tolerated"  # a dialect's own code
    with pytest.raises(ValueError, match="severity 'loud'"):
        callsieve.Diagnostic("malformed_block", "m", 0, "", "loud")
