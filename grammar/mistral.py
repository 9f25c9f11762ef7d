"""Mistral: ``[TOOL_CALLS]`` then a JSON array of calls (v2/v3/v7), or one
``NAME[CALL_ID]ID[ARGS]{…}`` / ``NAME[ARGS]{…}`` per ``[TOOL_CALLS]`` (v11, v13+).

Wire formats (shared/reference/dialects.md §9a)::

    v3:  [TOOL_CALLS][{"name": "get_weather", "arguments": {"city": "Zürich"}, "id": "abcDEF123"}]
    v11: [TOOL_CALLS]get_weather[CALL_ID]abcDEF123[ARGS]{"city": "Zürich"}
    v13: [TOOL_CALLS]get_weather[ARGS]{"city": "Zürich"}[TOOL_CALLS]search[ARGS]{"query": "café"}

There is no close marker: a call ends when its JSON completes, and the block where the
grammar stops. Wire ids are kept as the model wrote them (mistral-common requires 9
alphanumerics; a generated ``call_0`` would break it). Optional whitespace after
``[TOOL_CALLS]`` (the SentencePiece templates write ``[TOOL_CALLS] [``).

``[TOOL_CALLS]``, ``[ARGS]`` and ``[CALL_ID]`` are special tokens: serve with
``skip_special_tokens=False``.
"""

from __future__ import annotations

import json

from callsieve.grammar.api import Alt, Block, Call, Capture, Dialect, JsonArgs, JsonCall, JsonCalls, Many, Marker, Opt, Seq, arguments_of
from callsieve.grammar.reasoning import BRACKETS, THINK

TOOL_CALLS = Marker(r"\[TOOL_CALLS\]", ("[TOOL_CALLS]",))
CALL_ID = Marker(r"\[CALL_ID\]", ("[CALL_ID]",))
ARGS = Marker(r"\[ARGS\]", ("[ARGS]",))

NAME = r"\s*(?P<name>[^\s\[\]{}]{1,128})\s*"
ID = r"\s*(?P<id>[A-Za-z0-9_-]{1,64})\s*"

V11_CALL = Call(
    None,
    Capture(NAME, label="NAME"),
    Opt(Seq(CALL_ID, Capture(ID, label="ID"))),
    # Tolerated (vLLM's own tests; servers that skip the [ARGS] token): the JSON right
    # after the name, ``[TOOL_CALLS]get_weather{"city": "Paris"}``
    Opt(ARGS, missing="missing_args_open"),
    JsonArgs(),
    close=None,
    ids="wire",
)
BLOCK = Block(
    None,
    Many(Seq(TOOL_CALLS, Alt(JsonCalls(JsonCall(id=("id",))), V11_CALL)), min=1),
    None,
)


def render(calls: list[tuple[str, list[tuple[str, str, bool]]]], variant: int = 0) -> str:
    """Even variants: v11/v13 (with an id every other time); odd: the v3 array."""
    objs = []
    for i, (name, params) in enumerate(calls):
        objs.append((name, arguments_of(params), f"abc{i:06d}"))
    if variant % 2:
        sep = " " if variant % 4 == 3 else ""
        return "[TOOL_CALLS]" + sep + json.dumps([{"name": n, "arguments": a, "id": i} for n, a, i in objs], ensure_ascii=False)
    with_id = variant % 4 == 2
    return "".join(
        f"[TOOL_CALLS]{n}" + (f"[CALL_ID]{i}" if with_id else "") + f"[ARGS]{json.dumps(a, ensure_ascii=False)}" for n, a, i in objs
    )


DIALECT = Dialect(
    name="mistral",
    title="Mistral ([TOOL_CALLS]…)",
    blocks=(BLOCK,),
    # v13+ Magistral: [THINK]…[/THINK]; Magistral 2506/2507: plain <think>…</think>
    # Tolerated (``orphan_token``): ``[TOOL_CALLS]`` of a block that failed, and
    # ``[ARGS]`` or ``[CALL_ID]`` standing in prose with no call around them (what a
    # failed or half-stripped call leaves): framing, never visible text.
    orphans=((TOOL_CALLS, "orphan_token"), (ARGS, "orphan_token"), (CALL_ID, "orphan_token")),
    reasoning=(BRACKETS, THINK),
    sample=render([("get_weather", [("city", "Zürich", False)])], 2),
    render=render,
)
