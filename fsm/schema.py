"""Tool schemas (OpenAI format) and typing raw parameter values by them."""

from __future__ import annotations

import json
import re
from typing import Any, Iterable, Mapping

from callsieve.errors import InvalidToolSchemaError

_TYPES = ("null", "boolean", "integer", "number", "object", "array", "string")
#: Type names serving stacks accept beside JSON Schema's (vLLM's qwen3coder parser,
#: SGLang's detectors): each read as the JSON Schema type it stands for.
TYPE_ALIASES = {
    "int": "integer", "long": "integer", "float": "number", "double": "number",
    "bool": "boolean", "str": "string", "dict": "object", "list": "array",
}
_NO_VALUE = object()


def type_name(t: str) -> str | None:
    """The JSON Schema type a schema's ``type`` name stands for (case-insensitive,
    aliases included), or None for a name no stack knows."""
    low = t.strip().lower()
    if low in _TYPES:
        return low
    return TYPE_ALIASES.get(low)


class Lenient:
    """A value read by a tolerance (a Python literal for a JSON one): the caller
    reports it (``python_literal``) and unwraps it."""

    __slots__ = ("value",)

    def __init__(self, value: Any) -> None:
        self.value = value


def load_tools(tools: Iterable[Any] | None) -> dict[str, dict[str, Any]] | None:
    """``{tool name: {param name: param schema}}`` from OpenAI tool schemas.

    Accepts ``{"type": "function", "function": {...}}`` items and bare
    ``{"name": ..., "parameters": ...}`` function objects. Every property schema is
    checked here, when the ``Sieve`` is built (:func:`check_schema`), so that typing a
    value mid-stream never meets a schema it cannot read.
    """
    if tools is None:
        return None
    if isinstance(tools, (str, bytes, Mapping)):
        raise InvalidToolSchemaError("tools must be a list of tool schemas, not a single object or string")
    try:
        items = list(tools)
    except TypeError:
        raise InvalidToolSchemaError(f"tools must be a list of tool schemas, not {type(tools).__name__}") from None
    out: dict[str, dict[str, Any]] = {}
    for i, tool in enumerate(items):
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
        for key, schema in props.items():
            problem = check_schema(schema)
            if problem is not None:
                raise InvalidToolSchemaError(f"tools[{i}] ({name}): property {str(key)!r}: {problem}")
        out[name] = {str(k): dict(v) for k, v in props.items()}
    return out


#: The keywords :func:`types_of` reads, and what each must hold.
_SUBSCHEMA_LISTS = ("anyOf", "oneOf", "allOf")


def check_schema(schema: Mapping[str, Any]) -> str | None:
    """The first rule a property schema breaks among those callsieve reads (``type``: a
    string or a list of strings; ``enum``: a list; ``anyOf``/``oneOf``/``allOf``: lists
    of schemas), as ``"path: rule"``, or None. Iterative, so a deep (or cyclic)
    schema is not a RecursionError."""
    stack: list[tuple[str, Any]] = [("", schema)]
    seen: set[int] = set()
    while stack:
        path, s = stack.pop()
        where = path or "schema"
        if not isinstance(s, Mapping):
            return f"{where}: a schema must be an object, not {type(s).__name__}"
        if id(s) in seen:
            continue
        seen.add(id(s))
        t = s.get("type")
        if t is not None and not isinstance(t, str) and not (isinstance(t, list) and all(isinstance(x, str) for x in t)):
            return f"{where}: 'type' must be a string or a list of strings, not {t!r}"
        for name in ([t] if isinstance(t, str) else t or []):
            if type_name(name) is None:
                known = ", ".join(_TYPES + tuple(TYPE_ALIASES))
                return f"{where}: unknown type name {name!r} (known: {known})"
        if "enum" in s and not isinstance(s["enum"], (list, tuple)):
            return f"{where}: 'enum' must be a list, not {type(s['enum']).__name__}"
        for key in _SUBSCHEMA_LISTS:
            if key not in s:
                continue
            subs = s[key]
            if not isinstance(subs, (list, tuple)):
                return f"{where}: {key!r} must be a list of schemas, not {type(subs).__name__}"
            for n, sub in enumerate(subs):
                stack.append((f"{path}{key}[{n}]" if not path else f"{path}.{key}[{n}]", sub))
    return None


def types_of(schema: Mapping[str, Any] | None) -> list[str] | None:
    """The JSON types a parameter schema admits, most specific first; None if unknown."""
    if not schema:
        return None
    found: list[str] = []
    # Iterative (schemas were checked by check_schema when the Sieve was built).
    stack: list[Any] = [schema]
    seen: set[int] = set()
    while stack:
        s = stack.pop()
        if not isinstance(s, Mapping) or id(s) in seen:
            continue
        seen.add(id(s))
        t = s.get("type")
        if isinstance(t, str):
            found.append(type_name(t) or t)
        elif isinstance(t, list):
            found.extend(type_name(x) or x for x in t if isinstance(x, str))
        if "enum" in s and not t and isinstance(s["enum"], (list, tuple)):
            found.extend(sorted({_json_type(v) for v in s["enum"]}))
        for key in _SUBSCHEMA_LISTS:
            subs = s.get(key) or []
            if isinstance(subs, (list, tuple)):
                stack.extend(reversed(subs))
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


def _as(kind: str, raw: str, lenient: bool = False) -> Any:
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
        v, problem = parse_json_value(s)
        if problem is not None:
            if not lenient:
                return _NO_VALUE
            v = python_literal(s)
            if not isinstance(v, dict if kind == "object" else list):
                return _NO_VALUE
            return Lenient(v)
        return v if isinstance(v, dict if kind == "object" else list) else _NO_VALUE
    return raw  # string


#: Longest Python-style value read (``ast.literal_eval`` builds a tree of it).
MAX_LITERAL_CHARS = 1 << 16


def python_literal(s: str) -> Any:
    """A container written Python-style (``['a', 'b']``, ``{'k': True, 'n': None}``)
    as the JSON value it stands for, or ``_NO_VALUE``: only literals JSON has (str
    keys; str, int, finite float, bool, None, lists, tuples as lists, dicts)."""
    import ast

    if len(s) > MAX_LITERAL_CHARS or not s[:1] in ("[", "{"):
        return _NO_VALUE
    try:
        v = ast.literal_eval(s)
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        return _NO_VALUE
    stack = [(v, 0)]
    out_ok = True
    while stack and out_ok:
        x, depth = stack.pop()
        if depth > MAX_JSON_DEPTH:
            out_ok = False
        elif isinstance(x, dict):
            out_ok = all(isinstance(k, str) for k in x)
            stack.extend((y, depth + 1) for y in x.values())
        elif isinstance(x, (list, tuple)):
            stack.extend((y, depth + 1) for y in x)
        elif isinstance(x, float):
            out_ok = x == x and x not in (float("inf"), float("-inf"))
        elif not (x is None or isinstance(x, (str, int, bool))):
            out_ok = False
    if not out_ok:
        return _NO_VALUE
    return _json_of(v)


def _json_of(v: Any) -> Any:
    # Tuples become lists (checked above: nothing deeper than MAX_JSON_DEPTH).
    if isinstance(v, dict):
        return {k: _json_of(x) for k, x in v.items()}
    if isinstance(v, (list, tuple)):
        return [_json_of(x) for x in v]
    return v


def coerce(raw: str, schema: Mapping[str, Any] | None, lenient: bool = False) -> tuple[Any, str | None]:
    """Type a raw value by its schema; returns (value, problem or None).

    A value that fits none of the schema's types stays the raw string, with a problem
    to report: callsieve never invents a value (no ``"yes"`` → ``False``).
    ``lenient``: an object or array written Python-style is read (a :class:`Lenient`
    wrapping the value is returned, for the caller to report), after every type has
    been tried strictly.
    """
    kinds = types_of(schema)
    if kinds is None:
        return raw, None
    for kind in kinds:
        v = _as(kind, raw)
        if v is not _NO_VALUE:
            return v, None
    if lenient:
        for kind in kinds:
            if kind in ("object", "array"):
                v = _as(kind, raw, True)
                if v is not _NO_VALUE:
                    return v, None
    return raw, f"value {raw[:40]!r} is not of type {'/'.join(kinds)}"


def json_or_raw(raw: str, schema: Mapping[str, Any] | None) -> tuple[Any, str | None]:
    """A value that is JSON when it parses, else raw text (``ValueStyle.json_when_valid``,
    GLM). With a schema it is typed as every raw value is (:func:`coerce`: a string
    parameter stays raw, an object or array is JSON, a number or boolean is read from
    the text; a value that fits no type stays the raw string with a problem). Without
    one: a JSON object, array, number or boolean is decoded; anything else (a JSON
    string, ``null``, text) stays the raw string, with no problem."""
    if types_of(schema) is not None:
        return coerce(raw, schema)
    v, problem = parse_json_value(raw)
    if problem is None and isinstance(v, (dict, list, int, float)):  # bool is an int
        return v, None
    if problem is not None and TOO_DEEP in problem:
        # JSON that only its depth keeps from being read: the string it stays is said
        # (issue 23: silently a string, it looked like any text).
        return raw, problem
    return raw, None


def unescaped_once(raw: str, schema: Mapping[str, Any] | None) -> tuple[bool, Any]:
    """``ValueStyle(escaped_once=)``: a value escaped once too often for an object or
    array parameter (``[{\\"a\\": 1}]``: written as inside a JSON string). Its text read
    as the inside of a JSON string, once, then as that JSON: (True, the value) when
    that is of an object or array type the schema allows, else (False, None)."""
    kinds = [k for k in (types_of(schema) or []) if k in ("object", "array")]
    if not kinds or "\\" not in raw:
        return False, None
    inner, problem = parse_json_value('"' + raw + '"')
    if problem is not None or not isinstance(inner, str):
        return False, None
    for kind in kinds:
        v = _as(kind, inner)
        if v is not _NO_VALUE:
            return True, v
    return False, None


def _no_constants(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


#: Deepest JSON nesting a value may have. ``json.loads`` recurses (RecursionError near
#: Python's limit of 1000), and so do ``json.dumps`` and most code that consumes the
#: arguments; a model's tool arguments are never this deep, hostile input may be.
MAX_JSON_DEPTH = 256
#: How the problem of a value refused for its depth begins (``parse_json_value``).
TOO_DEEP = "nested deeper than"


#: A surrogate code point in decoded text: a lone one, from an escape (a pair decodes to
#: one character); text holding it cannot be encoded as UTF-8. (From code points: mypyc
#: takes no surrogate in a literal.)
_SURROGATE = re.compile("[" + chr(0xD800) + "-" + chr(0xDFFF) + "]")


def _check_json(v: Any) -> str | None:
    """Why a decoded JSON value is refused (too deep, a non-finite number, a lone
    surrogate escape in a string), or None. Iterative: the value may be as deep as the
    decoder allowed."""
    stack: list[tuple[Any, int]] = [(v, 0)]
    while stack:
        x, depth = stack.pop()
        if isinstance(x, str):
            if _SURROGATE.search(x):
                return "a string with a lone surrogate escape"
        elif isinstance(x, float):
            if x != x or x in (float("inf"), float("-inf")):
                return "not a finite JSON number"
        elif isinstance(x, (list, dict)):
            if depth >= MAX_JSON_DEPTH:
                return f"{TOO_DEEP} {MAX_JSON_DEPTH}"
            stack.extend((y, depth + 1) for y in (x.values() if isinstance(x, dict) else x))
            if isinstance(x, dict):
                stack.extend((k, depth) for k in x)
    return None


def parse_json_value(raw: str) -> tuple[Any, str | None]:
    """A ``string="false"`` DSML value: strict JSON (no NaN/Infinity, which would make
    the arguments JSON unreadable to other parsers), or the raw string with a problem.
    Never raises: nesting the decoder cannot follow is a problem too."""
    try:
        v = json.loads(raw, parse_constant=_no_constants)
    except ValueError:
        return raw, f"value {raw[:40]!r} is not valid JSON"
    except RecursionError:
        return raw, f"value {raw[:40]!r} is JSON {TOO_DEEP} {MAX_JSON_DEPTH}"
    problem = _check_json(v)
    if problem is not None:
        return raw, f"value {raw[:40]!r} is {problem}"
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
