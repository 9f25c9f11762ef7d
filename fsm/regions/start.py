"""Where the response begins: ``start``, the one place a block its own body opens may
stand (issue 21, item 2: Llama's bare ``{"name": …, "parameters": …}``, a bare pythonic
``[f(…)]``, xLAM's bare ``[{…}]``).

Such a block has no marker: the first characters of its body tell it (its *lead*, a
pattern the composer derives from the body or takes from ``Block.decide``: ``{``, ``[``
then ``{``, ``[`` then a name and ``(``). Prose that begins with a bracket is common, so
the lead is listened for only here: in ``start``, the state a sieve begins in when such a
block is enabled, and to which a reasoning section's close leads while nothing visible
has been written yet (``at_response_start``). Whitespace there is visible text; a held
lead that completes opens the block and is read again by its body (nothing of it is the
block's opener: it is the body's own text); one that dies is read again as prose from
its first character; anything else is prose at once. So a bracket in mid-prose, in a
fence or after a word never opens a bare block, and the prose scan is untouched (the
``text`` state listens for no lead).

With ``tools=`` the first call's name must be a known tool, else the block is prose
that looks like a call (released as text, a ``noise`` Diagnostic); see
``BlockModel.name_call``.
"""

from __future__ import annotations

from callsieve.native import mypyc_attr, trait
from callsieve.grammar.states import EOF_TRIGGER, RANK_FALLBACK, START, ALL, Region, StateDecl, but, on
from callsieve.regions.block import BlockModel

#: The rank of the rows that take a held lead back to prose (after every hit row, before
#: the fallback).
RANK_LEAD_RETURN = RANK_FALLBACK - 500


@trait
@mypyc_attr(allow_interpreted_subclasses=True)
class StartModel(BlockModel):
    def open_by_body(self, ch: str) -> None:
        """A lead completed: its block opens, and everything held (the lead) is read
        again by the body it begins (``ch`` too: the row reads it again)."""
        hit = self._hit(ch)
        leaf = hit.entry.data
        spec = getattr(leaf, "spec")
        held = self.tag
        self.tag = ""
        self._tag_version += 1
        self.bind_block(spec, "", self.tag_start)
        b = self.block
        assert b is not None
        b.by_body = True
        self.enter_target = getattr(leaf, "enter", None)
        self.enter_body(ch)
        self.pushback = held

    def lead_reject(self, ch: str) -> None:
        """The held text begins no block: prose, read again from its first character
        (it may hold a marker prose listens for: Mistral's ``[TOOL_CALLS]``)."""
        self.pushback = self.tag
        self.tag = ""
        self._tag_version += 1

    def lead_release_eof(self, ch: str = "") -> None:
        """The stream ended on a held lead: it is text."""
        tag, self.tag = self.tag, ""
        self._tag_version += 1
        self._text(tag)

    def at_response_start(self, ch: str) -> bool:
        """Nothing visible has been written yet (whitespace only; no block of calls):
        where a reasoning section closes, the response still begins."""
        if self.spoke:
            return False
        text = self.recent_text()
        if text.strip(" \t\r\n") or self.recent_trimmed:
            self.spoke = True
            return False
        return True


STATES = (StateDecl("start", "where the response begins: whitespace, then a block its own body opens, or prose", owner="start"),)
RULES = (
    *on("start", ["ws", "nl"], "start", "text_char", rank=1),
    *on("start", START, "maybe_tag", "tag_begin", rank=2),
    *on("start", but("ws", "nl", START), "text", "reprocess", rank=90),
    *on("start", [EOF_TRIGGER], "start"),
    *on("maybe_tag", ALL, "text", "lead_reject", "reprocess", when=["from:start"], rank=RANK_LEAD_RETURN),
    *on("maybe_tag", [EOF_TRIGGER], "text", "lead_release_eof", when=["from:start"], rank=RANK_LEAD_RETURN),
)
REGION = Region("start", STATES, RULES, StartModel)
