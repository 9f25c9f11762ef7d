"""Body grammars: value syntaxes a dialect can use, each adding its own states.

``json``: a JSON value (DSML ``string="false"``). Strings and nesting are tracked, so
a parameter close inside a JSON string, or before the value is complete, is data.
"""

from __future__ import annotations

from typing import Callable

from callsieve.declare import EOF_TRIGGER, OVERFLOW, StateDecl, Transition, but, on
from callsieve.declare import CHAR_TRIGGERS as ALL


def json_body() -> tuple[list[StateDecl], list[Transition]]:
    states = [
        StateDecl("json_value", "a JSON value outside strings", in_block=True, owner="json"),
        StateDecl("json_string", "inside a JSON string: markup is data", in_block=True, owner="json"),
        StateDecl("json_escape", "after a backslash in a JSON string", in_block=True, owner="json"),
    ]
    t: list[Transition] = []
    t += on("json_value", ["quote"], "json_string", "value_char")
    t += on("json_value", ["lbrace", "lbrack"], "json_value", "json_open")
    t += on("json_value", ["rbrace", "rbrack"], "json_value", "json_close")
    t += on("json_value", ["lt"], "maybe_tag", "tag_begin", when=["json_at_top"], rank=10)
    t += on("json_value", but("quote", "lbrace", "lbrack", "rbrace", "rbrack"), "json_value", "value_char", rank=90)
    t += on("json_string", ["bslash"], "json_escape", "value_char")
    t += on("json_string", ["quote"], "json_value", "value_char")
    t += on("json_string", but("bslash", "quote"), "json_string", "value_char")
    t += on("json_escape", ALL, "json_string", "value_char")
    for s in ("json_value", "json_string", "json_escape"):
        t += on(s, [EOF_TRIGGER], "text", "abort_block_eof")
        t += on(s, [OVERFLOW], "text", "abort_oversized")
    # How maybe_tag enters and leaves a JSON value.
    t += on("maybe_tag", ALL, "json_value", "open_param", when=["is_param_open_json"], rank=17)
    t += on("maybe_tag", ALL, "json_value", "tag_reject", "reprocess", when=["from_json"], rank=32)
    t += on("maybe_tag", ALL, "json_value", "reopen_value", "reprocess", when=["from_after_close", "reopen_json"], rank=33)
    t += on("after_close", but("ws", "nl", "lt"), "json_value", "reopen_value", "reprocess", when=["reopen_json"], rank=10)
    return states, t


BODIES: dict[str, Callable[[], tuple[list[StateDecl], list[Transition]]]] = {"json": json_body}
