"""Issue 12: hostile input, limits that hold, policies that keep the contract.

One test (or property) per finding, each failing on the code before its fix.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

import callsieve
from strategies import run

DSML = "\uff5cDSML\uff5c"


def dsml_block(value: str, string: str = "false") -> str:
    return (
        f"<{DSML}tool_calls>\n<{DSML}invoke name=\"f\">\n"
        f"<{DSML}parameter name=\"k\" string=\"{string}\">{value}</{DSML}parameter>\n"
        f"</{DSML}invoke>\n</{DSML}tool_calls>"
    )


def qwen_block(value: str, name: str = "f", param: str = "k") -> str:
    return f"<tool_call>\n<function={name}>\n<parameter={param}>\n{value}\n</parameter>\n</function>\n</tool_call>"


def tool(name: str, **props: Any) -> dict[str, Any]:
    return {"type": "function", "function": {"name": name, "parameters": {"properties": props}}}


# Finding 1: deep JSON never raises ---------------------------------------------------
@pytest.mark.parametrize("depth", [400, 990, 5000, 100_000])
def test_deep_json_in_a_dsml_value_is_a_diagnostic_not_a_recursion_error(depth: int) -> None:
    doc = dsml_block("[" * depth + "]" * depth)
    for chunking in ([doc], [doc[:len(doc) // 2], doc[len(doc) // 2:]]):
        events = run(chunking)
        (call,) = [e for e in events if isinstance(e, callsieve.ToolCall)]
        # The value stays the raw string (callsieve never invents a value) and says why.
        assert call.arguments == {"k": "[" * depth + "]" * depth}
        diags = [e for e in events if isinstance(e, callsieve.Diagnostic)]
        assert [d.code for d in diags] == ["type_mismatch"]
        assert "deeper than" in diags[0].message
        assert "".join(e.raw for e in events) == doc


@pytest.mark.parametrize("kind", ["array", "object"])
def test_deep_json_in_a_typed_qwen3_coder_value_never_raises(kind: str) -> None:
    depth = 3000
    value = "[" * depth + "]" * depth if kind == "array" else '{"a":' * depth + "1" + "}" * depth
    events = run([qwen_block(value)], tools=[tool("f", k={"type": kind})])
    (call,) = [e for e in events if isinstance(e, callsieve.ToolCall)]
    assert call.arguments == {"k": value}
    assert [e.code for e in events if isinstance(e, callsieve.Diagnostic)] == ["type_mismatch"]


def test_json_as_deep_as_the_limit_still_decodes() -> None:
    from callsieve.schema import MAX_JSON_DEPTH

    value = "[" * MAX_JSON_DEPTH + "]" * MAX_JSON_DEPTH
    (call,) = [e for e in run([dsml_block(value)]) if isinstance(e, callsieve.ToolCall)]
    assert call.arguments_json == '{"k": ' + value.replace("][", "], [") + "}"


# Finding 6: schemas and options checked when the Sieve is built ----------------------
@pytest.mark.parametrize(
    "schema, rule",
    [
        ({"anyOf": 5}, "'anyOf' must be a list"),
        ({"oneOf": "x"}, "'oneOf' must be a list"),
        ({"allOf": [5]}, "allOf[0]: a schema must be an object"),
        ({"enum": 5}, "'enum' must be a list"),
        ({"enum": None}, "'enum' must be a list"),
        ({"type": 5}, "'type' must be a string"),
        ({"type": ["string", 1]}, "'type' must be a string"),
        ({"anyOf": [{"type": "string"}, {"enum": 5}]}, "anyOf[1]: 'enum' must be a list"),
    ],
)
def test_bad_property_schemas_are_rejected_at_construction_naming_tool_property_rule(schema: dict[str, Any], rule: str) -> None:
    with pytest.raises(callsieve.InvalidToolSchemaError) as err:
        callsieve.Sieve(tools=[tool("write", path={"type": "string"}, mode=schema)])
    msg = str(err.value)
    assert "(write)" in msg and "'mode'" in msg and rule in msg, msg


@pytest.mark.parametrize("tools", [5, 3.5, object(), True])
def test_tools_that_are_not_a_list_are_a_typed_error(tools: object) -> None:
    with pytest.raises(callsieve.InvalidToolSchemaError):
        callsieve.Sieve(tools=tools)  # type: ignore[arg-type]


def test_a_cyclic_schema_is_read_without_recursion() -> None:
    sub: dict[str, Any] = {"type": "integer"}
    sub["anyOf"] = [sub]
    events = run([qwen_block("12")], tools=[tool("f", k=sub)])
    (call,) = [e for e in events if isinstance(e, callsieve.ToolCall)]
    assert call.arguments == {"k": 12}


def test_a_deep_schema_is_read_without_recursion() -> None:
    schema: dict[str, Any] = {"type": "integer"}
    for _ in range(5000):
        schema = {"anyOf": [schema]}
    (call,) = [e for e in run([qwen_block("7")], tools=[tool("f", k=schema)]) if isinstance(e, callsieve.ToolCall)]
    assert call.arguments == {"k": 7}


# Finding 12: numeric references to no character stay as written ---------------------
@pytest.mark.parametrize("ref", ["&#0;", "&#00;", "&#x0;", "&#xD800;", "&#xdfff;", "&#55296;", "&#x110000;", "&#1114112;"])
def test_references_to_nul_surrogates_or_past_unicode_are_kept_as_written(ref: str) -> None:
    doc = f'<tool_calls>\n<invoke name="f">\n<parameter name="a">x{ref}&#65;&#x1F600;</parameter>\n</invoke>\n</tool_calls>'
    (call,) = [e for e in run([doc]) if isinstance(e, callsieve.ToolCall)]
    assert call.arguments == {"a": f"x{ref}A\U0001F600"}
    json.dumps(call.arguments).encode("utf-8")  # the arguments are valid Unicode
