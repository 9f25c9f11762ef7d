"""gpt-oss "harmony": messages whose header decides what their body is.

Wire format (shared/reference/dialects.md §9c)::

    <|channel|>analysis<|message|>Need to use function get_current_weather.<|end|><|start|>assistant<|channel|>commentary to=functions.get_current_weather <|constrain|>json<|message|>{"location":"San Francisco"}<|call|>

Each message is ``<|start|>ROLE`` (omitted for the first: the prompt ended with
``<|start|>assistant``), ``<|channel|>CHANNEL``, an optional recipient ``to=NAME`` in the
role part or the channel part, an optional content type (``<|constrain|>json`` or a
bare ``json``), then ``<|message|>`` and the body. The header decides the body, first
matching case first:

- a recipient (``to=functions.NAME``; built-in ``to=browser.search``, ``to=python``):
  a call with JSON arguments, ended by ``<|call|>`` (or, tolerated, ``<|end|>``:
  ``end_instead_of_call``); named NAME (``functions.`` dropped, built-in names kept
  whole); ``to=assistant`` (a tool's reply) is no call;
- channel ``analysis``: reasoning, ended by ``<|end|>`` or ``<|return|>`` (or the next
  header);
- anything else (``final``, a recipient-less ``commentary`` preamble): visible text,
  which is prose until the next token.

Every harmony token is framing: ``<|end|>``, ``<|return|>`` and the header ride in the
``raw`` of the Reasoning, Text or call beside them, never in text. A stream that ends
inside a body keeps what it has: reasoning, text, or, for a call, its text with an
``unterminated_block`` Diagnostic.

Every harmony token is a special token: serve with ``skip_special_tokens=False``.
"""

from __future__ import annotations

import json

from callsieve.grammar.api import Block, Call, Dialect, Header, HeaderCase, JsonArgs, Marker, Variant


def token(name: str) -> Marker:
    return Marker(rf"<\|{name}\|>", (f"<|{name}|>",))


START = token("start")
CHANNEL = token("channel")
CONSTRAIN = token("constrain")
MESSAGE = token("message")
END = token("end")
RETURN = token("return")
CALL = token("call")

#: The recipient, in either part of the header: ``to=functions.NAME`` names NAME.
RECIPIENT = r"(?:^|[\s>])to=(?:functions\.)?(?P<name>(?!assistant(?:[\s<]|$))[^\s<]{1,128})"
ANALYSIS = r"<\|channel\|>\s*analysis(?=[\s<]|$)"
#: Tolerated (ggml-org/llama.cpp PR #15158): the content type glued to the recipient,
#: ``to=functions.shelljson<|message|>``, read as the call ``shell``. Only where the
#: header has no ``<|constrain|>`` and the recipient ends the header (no format word
#: after it), and where what stands before ``json`` ends with a letter or digit (so
#: ``to_json`` and ``parse-json`` keep their names); only with ``tools=``, when
#: ``shell`` is a known tool and ``shelljson`` is not (a tolerance that renames a call
#: needs a known tool for evidence: without one, ``geojson`` stays ``geojson``).
GLUED_JSON = Variant(
    r"\A(?!.*<\|constrain\|>)(?s:.*)(?:^|[\s>])to=(?:functions\.)?"
    r"(?P<name>(?!assistant(?:[\s<]|$))[^\s<]{0,123}[A-Za-z0-9])json\Z",
    ("<|channel|>commentary to=functions.shelljson", "<|start|>assistant<|channel|>commentary to=get_weatherjson"),
    "glued_content_type",
)

#: Tolerated (``end_instead_of_call``): a recipient message ended by ``<|end|>`` instead
#: of ``<|call|>``, which the reference parser (openai_harmony) accepts: the call.
CALL_CLOSE = Marker(CALL.pattern, CALL.examples, "<|call|>",
                    variants=(Variant(r"<\|end\|>", ("<|end|>",), "end_instead_of_call"),))
#: Tolerated: ``<|call|>`` is a stop token, and servers strip it: a call's JSON at the
#: end of the stream is the call (``missing_block_close``).
CALL_BLOCK = Block(MESSAGE, Call(None, JsonArgs(), close=None), CALL_CLOSE, prose=False, eof_close="missing_block_close")

HEADER = Header(
    name="harmony",
    starts=((START, "role"), (CHANNEL, "channel")),
    parts=((CHANNEL, "channel"), (CONSTRAIN, "constrain")),
    end=MESSAGE,
    cases=(
        HeaderCase("call", RECIPIENT, "call", variants=(GLUED_JSON,)),
        HeaderCase("analysis", ANALYSIS, "reasoning"),
        HeaderCase("text", "", "text"),
    ),
    ends=(END, RETURN),
    call=CALL_BLOCK,
    tokens=(START, CHANNEL, CONSTRAIN, MESSAGE, END, RETURN, CALL),
    # gpt-oss prompts end with <|start|>assistant: the output may begin in the role
    # part, with its recipient (`` to=functions.f<|channel|>commentary json<|message|>``)
    at_start=((Marker(r" to=", (" to=",), "' to=' (at the start)"), "role"),),
)

_HEADS = (
    "<|start|>assistant to=functions.{n}<|channel|>commentary <|constrain|>json<|message|>",
    "<|start|>assistant<|channel|>commentary to=functions.{n} <|constrain|>json<|message|>",
    "<|start|>assistant<|channel|>commentary to=functions.{n}<|constrain|>json<|message|>",
    "<|start|>assistant to=functions.{n}<|channel|>commentary json<|message|>",
)


def render(calls: list[tuple[str, list[tuple[str, str, bool]]]], variant: int = 0) -> str:
    """Calls as harmony messages, the recipient in either part, with or without
    ``<|constrain|>`` (a bare ``json`` instead), one message per call."""
    from callsieve.grammar.api import arguments_of

    out = []
    for i, (name, params) in enumerate(calls):
        out.append(_HEADS[(variant + i) % len(_HEADS)].format(n=name) + json.dumps(arguments_of(params), ensure_ascii=False) + "<|call|>")
    return "".join(out)


def wrap_text(text: str, variant: int = 0) -> str:
    """Visible text as a harmony message: final (ended by ``<|return|>`` or, as stored,
    ``<|end|>``), a preamble on commentary, or the first message with no ``<|start|>``;
    odd variants reason first, on the analysis channel."""
    head = "<|channel|>" if variant % 4 == 1 else "<|start|>assistant<|channel|>"
    thought = f"{head}analysis<|message|>Think: {len(text)} characters to say.<|end|>" if variant % 2 else ""
    return thought + (
        f"<|start|>assistant<|channel|>final<|message|>{text}<|return|>",
        f"<|start|>assistant<|channel|>final<|message|>{text}<|end|>",
        f"<|start|>assistant<|channel|>commentary<|message|>{text}<|end|>",
        f"<|start|>assistant<|channel|>final <|constrain|>text<|message|>{text}<|end|>",
        f"<|channel|>final<|message|>{text}<|end|>",
    )[(variant // 2) % 5]


DIALECT = Dialect(
    name="harmony",
    title="gpt-oss harmony (<|channel|>… to=functions.NAME <|message|>{…}<|call|>)",
    blocks=(CALL_BLOCK,),
    headers=(HEADER,),
    sample="<|channel|>analysis<|message|>Need to use function get_current_weather.<|end|>"
    + render([("get_current_weather", [("location", "San Francisco", False)])], 1),
    render=render,
    wrap_text=wrap_text,
)
