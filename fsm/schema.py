"""Tool schemas (OpenAI format) and typing raw parameter values by them."""

from __future__ import annotations

import json
from typing import Any, Iterable, Mapping

from callsieve.errors import InvalidToolSchemaError

_TYPES = ("null", "boolean", "integer", "number", "object", "array", "string")
_NO_VALUE = object()


def load_tools(tools: Iterable[Any] | None) -> dict[str, dict[str, Any]] | None:
    """``{tool name: {param name: param schema}}`` from OpenAI tool schemas.

    Accepts ``{"type": "function", "function": {...}}`` items and bare
    ``{"name": ..., "parameters": ...}`` function objects.
    """
    if tools is None:
        return None
    if isinstance(tools, (str, bytes, Mapping)):
        raise InvalidToolSchemaError("tools must be a list of tool schemas, not a single object or string")
    out: dict[str, dict[str, Any]] = {}
    for i, tool in enumerate(tools):
        if not isinstance(tool, Mapping):
            raise InvalidToolSchemaError(f"tools[{i}] is a {type(tool).__name__}, not an object")
        fn = tool.get("function", tool) if tool.get("type", "function") == "function" else None
        if not isinstance(fn, Mapping):
            raise InvalidToolSchemaError(f"tools[{i}]: expected a function tool with a 'function' object")
        name = fn.get("name")
        if not isinstance(name, str) or not name:
            raise InvalidToolSchemaError(f"tools[{i}]: function has no 'name'")
        params = fn.get("parameters")
        params = {} if params is None else params
        if not isinstance(params, Mapping):
            raise InvalidToolSchemaError(f"tools[{i}] ({name}): 'parameters' must be an object")
        props = params.get("properties")
        props = {} if props is None else props
        if not isinstance(props, Mapping) or not all(isinstance(v, Mapping) for v in props.values()):
            raise InvalidToolSchemaError(f"tools[{i}] ({name}): 'parameters.properties' must map names to schemas")
        out[name] = {str(k): dict(v) for k, v in props.items()}
    return out


def types_of(schema: Mapping[str, Any] | None) -> list[str] | None:
    """The JSON types a parameter schema admits, most specific first; None if unknown."""
    if not schema:
        return None
    found: list[str] = []

    def walk(s: Any) -> None:
        if not isinstance(s, Mapping):
            return
        t = s.get("type")
        if isinstance(t, str):
            found.append(t)
        elif isinstance(t, list):
            found.extend(x for x in t if isinstance(x, str))
        if "enum" in s and not t:
            found.extend(sorted({_json_type(v) for v in s["enum"]}))
        for key in ("anyOf", "oneOf", "allOf"):
            for sub in s.get(key, []) or []:
                walk(sub)

    walk(schema)
    known = [t for t in _TYPES if t in found]
    return known or None


def _json_type(v: Any) -> str:
    if v is None:
        return "null"
    if isinstance(v, bool):
        return "boolean"
    if isinstance(v, int):
        return "integer"
    if isinstance(v, float):
        return "number"
    if isinstance(v, str):
        return "string"
    return "array" if isinstance(v, list) else "object"


def is_string_only(schema: Mapping[str, Any] | None) -> bool:
    return types_of(schema) == ["string"]


def _as(kind: str, raw: str) -> Any:
    s = raw.strip()
    if kind == "null":
        return None if s.lower() in ("null", "none") else _NO_VALUE
    if kind == "boolean":
        low = s.lower()
        return True if low == "true" else False if low == "false" else _NO_VALUE
    if kind == "integer":
        try:
            return int(s)
        except ValueError:
            try:
                f = float(s)
            except ValueError:
                return _NO_VALUE
            return int(f) if f.is_integer() else _NO_VALUE
    if kind == "number":
        try:
            return int(s)
        except ValueError:
            pass
        try:
            f = float(s)
        except ValueError:
            return _NO_VALUE
        return f if f == f and f not in (float("inf"), float("-inf")) else _NO_VALUE
    if kind in ("object", "array"):
        try:
            v = json.loads(s)
        except ValueError:
            return _NO_VALUE
        return v if isinstance(v, dict if kind == "object" else list) else _NO_VALUE
    return raw  # string


def coerce(raw: str, schema: Mapping[str, Any] | None) -> tuple[Any, str | None]:
    """Type a raw value by its schema; returns (value, problem or None).

    A value that fits none of the schema's types stays the raw string, with a problem
    to report: callsieve never invents a value (no ``"yes"`` → ``False``).
    """
    kinds = types_of(schema)
    if kinds is None:
        return raw, None
    for kind in kinds:
        v = _as(kind, raw)
        if v is not _NO_VALUE:
            return v, None
    return raw, f"value {raw[:40]!r} is not of type {'/'.join(kinds)}"


def _no_constants(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def _finite(v: Any) -> bool:
    if isinstance(v, float):
        return v == v and v not in (float("inf"), float("-inf"))
    if isinstance(v, list):
        return all(_finite(x) for x in v)
    if isinstance(v, dict):
        return all(_finite(x) for x in v.values())
    return True


def parse_json_value(raw: str) -> tuple[Any, str | None]:
    """A ``string="false"`` DSML value: strict JSON (no NaN/Infinity, which would make
    the arguments JSON unreadable to other parsers), or the raw string with a problem."""
    try:
        v = json.loads(raw, parse_constant=_no_constants)
    except ValueError:
        return raw, f"value {raw[:40]!r} is not valid JSON"
    if not _finite(v):
        return raw, f"value {raw[:40]!r} is not a finite JSON number"
    return v, None


def fits(value: Any, kind: str) -> bool:
    """Whether a decoded JSON value is of the JSON Schema type ``kind``."""
    if kind == "number":
        return isinstance(value, (int, float)) and not isinstance(value, bool)
    if kind == "integer":
        if isinstance(value, bool):
            return False
        return isinstance(value, int) or (isinstance(value, float) and value.is_integer())
    return _json_type(value) == kind
