"""OLMo 3: Python calls, one per line, inside ``<function_calls>`` … ``</function_calls>``.

Wire format (shared/reference/dialects-long-tail.md §3)::

    <function_calls>
    get_weather(city="Paris")
    get_time(tz="Europe/Paris", dst=true)
    </function_calls>

Each call is ``NAME(k=v, …)`` with keyword arguments as Python literals, JSON's
``true``/``false``/``null`` included (``PythonCall(json_literals=True)``): streamed as
canonical JSON, never ``eval``'d; a call that is no literal call is released alone, with
a Diagnostic, while the others stand. A string holding a raw newline is one string (with
a ``raw_newline_in_string`` Diagnostic), not two calls as vLLM's line join makes it.
vLLM reads the calls only at the start of the output; here text may come before them.

``<function_calls>`` is shared with the gateway ``xml`` dialect (``<function_calls><invoke
…>``): what follows the opener decides, a name and ``(`` here.
"""

from __future__ import annotations

from callsieve.grammar.api import Block, Dialect, Many, Marker, PythonCall, arguments_of
from callsieve.grammar.tags import close_tag, open_tag

OPEN = Marker(open_tag("function_calls"), ("<function_calls>",), "<function_calls>")
CLOSE = Marker(close_tag("function_calls"), ("</function_calls>",), "</function_calls>")
#: What follows the shared opener in an OLMo block: a call's name, then ``(``.
CALL_AHEAD = Marker(r"\s{0,16}[A-Za-z_][A-Za-z0-9_]{0,127}\(", ("\nget_weather(", "f("), "NAME(")

BLOCK = Block(OPEN, Many(PythonCall(json_literals=True), min=1), CLOSE, decide=CALL_AHEAD)


def _py(v: object) -> str:
    """A JSON value as OLMo writes it: JSON's words, strings in double quotes."""
    import json

    return json.dumps(v, ensure_ascii=False)


def render(calls: list[tuple[str, list[tuple[str, str, bool]]]], variant: int = 0) -> str:
    """One block for all the calls, one call a line."""
    lines = [f"{n}(" + ", ".join(f"{k}={_py(v)}" for k, v in arguments_of(p).items()) + ")" for n, p in calls]
    return "<function_calls>\n" + "\n".join(lines) + "\n</function_calls>"


DIALECT = Dialect(
    name="olmo3",
    title="OLMo 3 (<function_calls> NAME(k=v) … </function_calls>)",
    blocks=(BLOCK,),
    sample=render([("get_weather", [("city", "Paris", False)]), ("get_time", [("tz", "Europe/Paris", False), ("dst", "true", True)])]),
    render=render,
)
