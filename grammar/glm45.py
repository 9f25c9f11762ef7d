"""GLM-4.5 / 4.6 (name line, key/value tags on their own lines) and GLM-4.7 / GLM-5
(the same tags, no whitespace at all): ``<tool_call>NAME<arg_key>K</arg_key><arg_value>V</arg_value></tool_call>``.

Wire format (shared/reference/dialects.md §6)::

    <tool_call>get_weather
    <arg_key>city</arg_key>
    <arg_value>北京</arg_value>
    </tool_call>

    <tool_call>get_weather<arg_key>city</arg_key><arg_value>北京</arg_value></tool_call>

One call per block, several blocks in a row. The name is the text after
``<tool_call>`` up to a newline, ``<arg_key>`` or ``</tool_call>`` (a zero-argument
call); each key is the text between ``<arg_key>`` and ``</arg_key>`` (a capture between
two markers: a key inside one pattern would put ``<`` after its first character,
against grammar rule 2); the value is between ``<arg_value>`` and ``</arg_value>``,
which closes it only where ``<arg_key>`` or ``</tool_call>`` follows (a literal
``</arg_value>`` in a file body is data).

Tolerated (dialects.md §12; each with its Diagnostic, none under ``strict``):
``</arg_key>`` written twice (``doubled_key_close``), the value's ``<arg_value>`` left
out (``missing_value_open``), ``<arg_key>`` written twice (``doubled_key_open``), and
``</arg_value>`` after a zero-argument name (``stray_value_close``); Ling 3's newline
after the name written as the two characters ``\n`` (``literal_newline``;
dialects-long-tail.md §24: Ling 3 is this grammar, the alias ``ling3``); a second
``<tool_call>`` where ``<arg_key>`` belongs (``call_open_as_key``, for a known tool).

Values: the template writes strings raw and anything else as JSON, so a value is JSON
when it parses, else raw text (``ValueStyle.json_when_valid``): a string-typed
parameter stays raw; without a schema a JSON object, array, number or boolean is
decoded and everything else (``null`` and JSON strings included) stays a string.

It shares ``<tool_call>`` with qwen3_coder and hermes; what follows the opener decides
(``callsieve.regions.tag``: each dialect's grammar, read as its states read it): after
any whitespace, ``<function=…>`` is qwen3_coder and ``{`` is hermes; a name right after
the opener, up to ``<arg_key>``, ``</tool_call>`` (or a tolerated ``</arg_value>``), is
GLM. So the name's first character is never the ``<`` of qwen3_coder's ``<function=``,
the ``{`` of a hermes body, nor a bracket or a quote (``NAME``); OpenAI function names
are ``[a-zA-Z0-9_-]``, so none is refused. Prose that mentions the opener (``<tool_call>
tags``) is refused by every grammar at once and is prose again.
"""

from __future__ import annotations

import json

from callsieve.grammar.api import Alt, Block, Call, Capture, Dialect, Many, Marker, Opt, Param, Raw, ValueStyle, Variant
from callsieve.grammar.tags import END, LT, close_tag, open_tag
from callsieve.grammar.reasoning import THINK

TOOL_CALL = Marker(open_tag("tool_call"), ("<tool_call>",), "<tool_call>")
TOOL_CALL_END = Marker(close_tag("tool_call"), ("</tool_call>",), "</tool_call>")
ARG_KEY = Marker(open_tag("arg_key"), ("<arg_key>",), "<arg_key>")
ARG_KEY_END = Marker(close_tag("arg_key"), ("</arg_key>",), "</arg_key>")
#: Tolerated (GLM-5, vLLM PR #54971): ``</arg_key>`` written twice before the value's
#: opener (``<arg_key>city</arg_key></arg_key><arg_value>``): read where ``<arg_value>``
#: is expected, the second close and the opener together.
DOUBLED_KEY_CLOSE = Variant(
    close_tag("arg_key") + r"[ \t\r\n]{0,8}" + open_tag("arg_value"),
    ("</arg_key><arg_value>", "</arg_key>\n<arg_value>"),
    "doubled_key_close",
    "~</arg_key><arg_value>",
)
#: Tolerated (GLM, Ling 3): the newline between tags written as the two characters
#: ``\n`` (``</arg_key>\n<arg_value>``); after a value's close, ``Raw(trailing=)``.
LITERAL_NL = Variant(r"\\n", ("\\n",), "literal_newline", "\\n")
ARG_VALUE = Marker(open_tag("arg_value"), ("<arg_value>",), "<arg_value>", variants=(
    DOUBLED_KEY_CLOSE,
    Variant(r"\\n" + open_tag("arg_value"), ("\\n<arg_value>",), "literal_newline", "~\\n<arg_value>"),
))
ARG_VALUE_END = Marker(close_tag("arg_value"), ("</arg_value>",), "</arg_value>")

#: The name, right after the opener, on its line (spaces after it are grammar; before
#: it, they are prose mentioning the opener: ``<tool_call> and </tool_call>``). It does
#: not begin with what begins another dialect's body after ``<tool_call>`` (a JSON
#: object or array, a tag), nor with a quote: the fork reads this pattern to tell GLM
#: apart, and what it accepts a GLM block accepts. No backslash: one begins Ling 3's
#: literal ``\n`` (``LITERAL_NEWLINE``).
NAME = r"(?P<name>[^\s<>\uff1c\uff1e{}\[\]\"'\\][^\s<>\uff1c\\]{0,127})\s*"
#: A key: one line, no angle brackets (spaces around it are dropped).
KEY = r"\s*(?P<name>[^\s<>\uff1c](?:[^<>\uff1c\n]{0,126}[^\s<>\uff1c])?)\s*"

#: Tolerated (GLM-5, fw-ai #119): ``</arg_value>`` after a zero-argument call's name
#: (``<tool_call>get_time</arg_value></tool_call>``): a marker the format does not have,
#: read there only (before ``</tool_call>``), so it never stands for a value's close.
STRAY_VALUE_CLOSE = Opt(ARG_VALUE_END, stray="stray_value_close")
#: Tolerated (Ling 3, SGLang's ling3 detector): the newline after the name written as
#: the two characters ``\n`` (``<tool_call>get_weather\n<arg_key>…``).
LITERAL_NEWLINE = Opt(Marker(r"\\n", ("\\n",), "\\n"), stray="literal_newline")
#: Tolerated (sigit PR #95): ``<arg_key>`` written twice (``<arg_key><arg_key>city</arg_key>``).
DOUBLED_KEY_OPEN = Opt(ARG_KEY, stray="doubled_key_open")
#: Tolerated (GLM-5, vLLM #49248): the value's ``<arg_value>`` left out
#: (``<arg_key>city</arg_key>北京</arg_value>``): what follows ``</arg_key>`` (spaces
#: skipped) is the value, ended by ``</arg_value>`` as usual.
MISSING_VALUE_OPEN = Opt(ARG_VALUE, missing="missing_value_open")
#: (Tolerated: a value escaped once too often, ``[{\"a\": 1}]`` for an array or object
#: parameter, read unescaped once, ``double_escaped_value``; GLM's literal ``\n`` after
#: ``</arg_value>``, ``literal_newline``.)
VALUE = Raw(ARG_VALUE_END, ValueStyle(json_when_valid=True, escaped_once="double_escaped_value"), trailing=(LITERAL_NL,))
#: Tolerated (sigit PR #95): a second ``<tool_call>`` where ``<arg_key>`` belongs
#: (``<tool_call>get_weather<tool_call>city</arg_key><arg_value>北京</arg_value>``): one
#: marker spanning the opener, the key and ``</arg_key>``, so that what follows the
#: opener decides: a key and ``</arg_key>`` make it this parameter, anything else
#: (``<tool_call>g</tool_call>``: a call begun again) leaves the opener to open a block
#: of its own, as before. With ``tools=``, only in a call to a known tool.
CALL_OPEN_AS_KEY = Opt(Param(
    Marker(rf"{LT}(?i:tool_call){END}{KEY}{close_tag('arg_key')}",
           ("<tool_call>city</arg_key>", "<tool_call> city </arg_key>"), "<tool_call>KEY</arg_key>"),
    VALUE,
    between=(MISSING_VALUE_OPEN,),
), stray="call_open_as_key")

BLOCK = Block(
    TOOL_CALL,
    Call(
        None,
        Capture(NAME, max_chars=160, label="NAME"),
        LITERAL_NEWLINE,
        Alt(STRAY_VALUE_CLOSE, Many(Alt(Param(
            ARG_KEY,
            VALUE,
            between=(DOUBLED_KEY_OPEN, Capture(KEY, label="KEY"), ARG_KEY_END, MISSING_VALUE_OPEN),
        ), CALL_OPEN_AS_KEY))),
        close=None,
    ),
    TOOL_CALL_END,
)


def _value(raw: str, is_json: bool) -> str:
    """What the template writes: a string raw, anything else ``tojson``."""
    if not is_json:
        return raw
    v = json.loads(raw)
    return v if isinstance(v, str) else json.dumps(v, ensure_ascii=False)


def render(calls: list[tuple[str, list[tuple[str, str, bool]]]], variant: int = 0) -> str:
    """One block per call, as the templates write them: even variants GLM-4.5/4.6
    (newlines), odd ones GLM-4.7/GLM-5 (compact)."""
    nl = "" if variant % 2 else "\n"
    out = []
    for name, params in calls:
        parts = [f"<tool_call>{name}"]
        for key, raw, is_json in params:
            parts.append(f"{nl}<arg_key>{key}</arg_key>{nl}<arg_value>{_value(raw, is_json)}</arg_value>")
        parts.append(f"{nl}</tool_call>")
        out.append("".join(parts))
    return nl.join(out)


DIALECT = Dialect(
    name="glm45",
    title="GLM-4.5/4.6/4.7/5 (<tool_call>NAME<arg_key>…<arg_value>…)",
    blocks=(BLOCK,),
    # <think>…</think>; GLM-4.7/5 prompts end with <think> when thinking is on
    # (start_in_reasoning=True). Its serving stacks do not read calls inside reasoning.
    reasoning=(THINK,),
    sample=render([("get_weather", [("city", "北京", False), ("days", "3", True)])]),
    render=render,
)
