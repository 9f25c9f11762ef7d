"""Kimi K3 "XTML": channels of special tokens, ``<|open|>NAME …<|sep|>`` … ``<|close|>NAME<|sep|>``.

Wire format (shared/reference/dialects-long-tail.md §22)::

    <|open|>response<|sep|>Checking.<|close|>response<|sep|><|open|>tools<|sep|><|open|>call tool="python" index="1"<|sep|><|open|>argument key="code" type="string"<|sep|>print("<b>")<|close|>argument<|sep|><|open|>argument key="opts" type="object"<|sep|>{"a":1}<|close|>argument<|sep|><|close|>call<|sep|><|close|>tools<|sep|>

Not the Kimi K2 format (``kimi_k2``). Every ``<|open|>…<|sep|>`` and
``<|close|>…<|sep|>`` is a channel header (a ``Header``, as harmony's messages are):
``call tool="NAME"`` opens a call; any other (``response``, ``tools``, ``message``, the
closes) is framing, in the ``raw`` of the text beside it, and what follows is prose
(``<|open|>response<|sep|>`` is often part of the prompt, so the output may begin
mid-response). In a call, each argument is ``<|open|>argument key="K" type="T"<|sep|>``,
its value, then ``<|close|>`` and ``argument<|sep|>``; ``type="string"`` values are raw
text (no unescaping), any other type is JSON (a value that is not JSON stays a string,
with a Diagnostic). A ``<|close|>`` in a value closes it only where ``argument<|sep|>``
follows (vLLM's parser cuts at the first raw close; a value holding
``<|close|>argument<|sep|>`` itself is still read as closed there, as the format cannot
tell). The call ends at ``<|close|>call<|sep|>``.

The server must keep the special tokens (``skip_special_tokens=False``) and not space
them (``spaces_between_special_tokens=False``); spaces around the channel names are read
all the same. Attribute values are taken as written (``&amp;`` and ``&quot;`` are not
unescaped).
"""

from __future__ import annotations

import json

from callsieve.grammar.api import Block, Call, Choose, Dialect, Header, HeaderCase, JsonValue, Many, Marker, Param, Raw, Seq

OPEN = Marker(r"<\|open\|>", ("<|open|>",))
CLOSE = Marker(r"<\|close\|>", ("<|close|>",))
SEP = Marker(r"<\|sep\|>", ("<|sep|>",))

_S = r"\s{0,8}"
#: An argument's open, key and type included (one marker: the key and type are its fields).
ARGUMENT = Marker(
    rf"<\|open\|>{_S}argument\s+key=\"(?P<name>[^\"<>]{{1,128}})\"(?P<attrs>(?:\s+[\w:.-]{{1,32}}=\"[^\"<>]{{0,64}}\")*){_S}<\|sep\|>",
    ('<|open|>argument key="k" type="string"<|sep|>', '<|open|> argument key="k" type="object" <|sep|>'),
    '<|open|>argument…<|sep|>',
)
#: What confirms that a ``<|close|>`` in a value closes it.
ARGUMENT_END = Marker(rf"argument{_S}<\|sep\|>", ("argument<|sep|>", "argument <|sep|>"), "argument<|sep|>")
CALL_END = Marker(rf"<\|close\|>{_S}call{_S}<\|sep\|>", ("<|close|>call<|sep|>", "<|close|> call <|sep|>"), "<|close|>call<|sep|>")

VALUE = Choose("type", (("string", Raw(CLOSE)),), JsonValue(CLOSE))
CALL_BLOCK = Block(SEP, Call(None, Many(Seq(Param(ARGUMENT, VALUE), ARGUMENT_END)), close=None), CALL_END, prose=False)

HEADER = Header(
    name="kimi_k3",
    starts=((OPEN, "open"), (CLOSE, "close")),
    parts=(),
    end=SEP,
    cases=(
        HeaderCase("call", r"\A<\|open\|>\s*call\s(?:[^<]*\s)?tool=\"(?P<name>[^\"<]{1,128})\"", "call"),
        HeaderCase("channel", "", "text"),
    ),
    ends=(),
    call=CALL_BLOCK,
    tokens=(OPEN, CLOSE, SEP),
    # (a channel header holds no other channel token: ``<|close|>`` written in prose,
    # then a real call's ``<|open|>``, is prose, then the call)
    restart=True,
)


def render(calls: list[tuple[str, list[tuple[str, str, bool]]]], variant: int = 0) -> str:
    """One call channel per call (the calls alone: the ``tools`` channel around them is
    framing, see ``sample``); values typed ``string`` when raw, ``object`` (or the
    JSON's own kind) when JSON."""
    out = []
    for i, (name, params) in enumerate(calls):
        out.append(f'<|open|>call tool="{name}" index="{i + 1}"<|sep|>')
        for key, value, is_json in params:
            kind = "string"
            if is_json:
                v = json.loads(value)
                kind = {dict: "object", list: "array", bool: "boolean", int: "integer", float: "number",
                        type(None): "null"}.get(type(v), "string")
                if isinstance(v, str):
                    value = v  # a string is written raw
            out.append(f'<|open|>argument key="{key}" type="{kind}"<|sep|>{value}<|close|>argument<|sep|>')
        out.append("<|close|>call<|sep|>")
    return "".join(out)


def wrap_text(text: str, variant: int = 0) -> str:
    """Visible text in the response channel (its open often in the prompt)."""
    if variant % 3 == 0:
        return text
    head = "" if variant % 3 == 2 else "<|open|>response<|sep|>"
    return f"{head}{text}<|close|>response<|sep|>"


DIALECT = Dialect(
    name="kimi_k3",
    title='Kimi K3 (<|open|>call tool="…"<|sep|><|open|>argument key="…"<|sep|>)',
    blocks=(CALL_BLOCK,),
    headers=(HEADER,),
    sample="<|open|>response<|sep|>Checking.<|close|>response<|sep|><|open|>tools<|sep|>"
    + render([("python", [("code", 'print("<b>")', False), ("opts", '{"a": 1}', True)])]) + "<|close|>tools<|sep|>",
    render=render,
    wrap_text=wrap_text,
)
