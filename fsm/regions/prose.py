"""Prose: visible text, backtick/tilde runs, inline code and fences.

A backtick or tilde run may open inline code (``in_code_span``) or, at a line start, a
fence (``in_fence``); inside them everything is text, so markup in a fenced example is
never a call. ``text`` sends its start characters (``START``: those that may begin a
marker it listens for) to ``maybe_tag``.
"""

from __future__ import annotations

import re

from callsieve.grammar.states import ALL, EOF_TRIGGER, START, Region, StateDecl, but, on
from callsieve.regions import LINE_TAIL, ModelBase

#: A line start: a newline and at most three spaces (LINE_TAIL - 1) of indentation.
LINE_START = re.compile(r"(?:^|\n)[ \t]{0,3}\Z")
assert LINE_TAIL == 4


class ProseModel(ModelBase):
    run_char = ""
    run_len = 0
    run_at_line_start = False
    span_len = 0
    fence_char = ""
    fence_len = 0

    # guards
    def at_line_start(self, ch: str) -> bool:
        return LINE_START.search(self.line_tail) is not None

    def same_run_char(self, ch: str) -> bool:
        return ch == self.run_char

    def run_opens_fence(self, ch: str) -> bool:
        return self.run_at_line_start and self.run_len >= 3

    def run_opens_span(self, ch: str) -> bool:
        return self.run_char == "`"

    def run_closes_span(self, ch: str) -> bool:
        return self.run_len == self.span_len

    def fence_may_close(self, ch: str) -> bool:
        return ch == self.fence_char and self.at_line_start(ch)

    def run_closes_fence(self, ch: str) -> bool:
        return self.run_len >= self.fence_len

    # actions
    def text_char(self, ch: str) -> None:
        self._text(ch)

    def text_run(self, s: str, i: int, j: int) -> int:
        self._text(s[i:j])
        return j

    def run_begin(self, ch: str) -> None:
        self.run_at_line_start = self.at_line_start(ch)
        self.run_char = ch
        self.run_len = 1
        self._text(ch)

    def run_more(self, ch: str) -> None:
        self.run_len += 1
        self._text(ch)

    def open_fence(self, ch: str) -> None:
        self.fence_char = self.run_char
        self.fence_len = self.run_len

    def open_span(self, ch: str) -> None:
        self.span_len = self.run_len


STATES = (
    StateDecl("text", "visible prose", owner="prose", sink="text_char"),
    StateDecl("tick_run", "a run of backticks or tildes in prose: code span or fence?", owner="prose"),
    StateDecl("in_code_span", "inline code: markup is text", owner="prose"),
    StateDecl("span_run", "backticks inside inline code: does the span close?", owner="prose"),
    StateDecl("in_fence", "a fenced code block: markup is text", owner="prose"),
    StateDecl("fence_run", "backticks or tildes at a line start in a fence: does it close?", owner="prose"),
)

RULES = (
    *on("text", START, "maybe_tag", "tag_begin", rank=1),
    *on("text", ["tick"], "tick_run", "run_begin"),
    *on("text", ["tilde"], "tick_run", "run_begin", when=["at_line_start"], rank=10),
    *on("text", but("tick", START), "text", "text_char", rank=90),
    *on("text", [EOF_TRIGGER], "text"),
    # backtick/tilde runs: inline code or a fence
    *on("tick_run", ["tick", "tilde"], "tick_run", "run_more", when=["same_run_char"], rank=10),
    *on("tick_run", ALL, "in_fence", "open_fence", "reprocess", when=["run_opens_fence"], rank=20),
    *on("tick_run", ALL, "in_code_span", "open_span", "reprocess", when=["run_opens_span"], rank=30),
    *on("tick_run", ALL, "text", "reprocess", rank=90),
    *on("tick_run", [EOF_TRIGGER], "text"),
    *on("in_code_span", ["tick"], "span_run", "run_begin"),
    *on("in_code_span", ["nl"], "text", "text_char"),
    *on("in_code_span", but("tick", "nl"), "in_code_span", "text_char"),
    *on("in_code_span", [EOF_TRIGGER], "text"),
    *on("span_run", ["tick"], "span_run", "run_more", rank=10),
    *on("span_run", but("tick"), "text", "reprocess", when=["run_closes_span"], rank=20),
    *on("span_run", but("tick"), "in_code_span", "reprocess", rank=90),
    *on("span_run", [EOF_TRIGGER], "text"),
    *on("in_fence", ["tick", "tilde"], "fence_run", "run_begin", when=["fence_may_close"], rank=10),
    *on("in_fence", ALL, "in_fence", "text_char", rank=90),
    *on("in_fence", [EOF_TRIGGER], "text"),
    *on("fence_run", ["tick", "tilde"], "fence_run", "run_more", when=["same_run_char"], rank=10),
    *on("fence_run", ALL, "text", "reprocess", when=["run_closes_fence"], rank=20),
    *on("fence_run", ALL, "in_fence", "reprocess", rank=90),
    *on("fence_run", [EOF_TRIGGER], "text"),
)

REGION = Region("prose", STATES, RULES, ProseModel)
