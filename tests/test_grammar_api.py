"""The grammar API as a user meets it: dialects declared in a file of their own,
shared openers decided by lookahead, markers that begin with ``[``, a dialect's own
region of states."""

from __future__ import annotations

import pytest
from hypothesis import given, strategies as st

import callsieve
from callsieve.events import merged
from callsieve.grammar import Block, Call, Dialect, Many, Marker, Param, Raw, Region, ValueStyle
from callsieve.grammar.states import EOF_TRIGGER, START, Listen, StateDecl, but, on
from callsieve.grammar.tags import close_tag, open_tag
from callsieve.machine import compose
from callsieve.regions.reasoning import ReasoningModel
from strategies import chunks, run, texts

# ---------------------------------------------------------------- a dialect sharing <tool_call>
#: Opens with qwen3_coder's own <tool_call>, then speaks <invoke>/<arg>: only what follows
#: the opener tells the two apart.
TOY = Dialect(
    "toy_invoke",
    "a test dialect that shares <tool_call> with qwen3_coder",
    (Block(
        Marker(open_tag("tool_call"), ("<tool_call>",), "<tool_call>"),
        Many(Call(
            Marker(r'<invoke name="(?P<name>\w{1,32})">', ('<invoke name="f">',), '<invoke name="…">'),
            Many(Param(Marker(r'<arg name="(?P<name>\w{1,32})">', ('<arg name="k">',), '<arg name="…">'), Raw(Marker("</arg>", ("</arg>",))))),
            close=Marker("</invoke>", ("</invoke>",)),
        ), min=1),
        Marker(close_tag("tool_call"), ("</tool_call>",), "</tool_call>"),
    ),),
)
QWEN = "<tool_call>\n<function=write>\n<parameter=path>\na.py\n</parameter>\n</function>\n</tool_call>"
TOYS = '<tool_call>\n<invoke name="read">\n<arg name="path">b.py</arg>\n</invoke>\n</tool_call>'
BOTH = "Writing. " + QWEN + " Then reading. " + TOYS + " Done."


def calls(events: list[callsieve.Event]) -> list[tuple[str, str, dict[str, object]]]:
    return [(e.dialect, e.name, e.arguments) for e in events if isinstance(e, callsieve.ToolCall)]


@pytest.mark.parametrize("order", [("qwen3_coder", TOY), (TOY, "qwen3_coder")], ids=["qwen-first", "toy-first"])
@pytest.mark.parametrize("size", [1, 3, 1000])
def test_a_shared_opener_is_decided_by_what_follows_not_by_list_order(order: tuple[object, object], size: int) -> None:
    events = run([BOTH[i : i + size] for i in range(0, len(BOTH), size)], dialects=list(order))
    assert calls(events) == [
        ("qwen3_coder", "write", {"path": "a.py"}),
        ("toy_invoke", "read", {"path": "b.py"}),
    ]
    assert texts(events) == "Writing.  Then reading.  Done."
    assert not [e for e in events if isinstance(e, callsieve.Diagnostic)]


def test_the_shared_opener_is_one_fork_in_the_machine() -> None:
    machine = compose(callsieve.grammar.resolve(["qwen3_coder", TOY]))
    (fork,) = machine.forks
    assert fork.opener_label == "<tool_call>"
    assert sorted(c.dialect for c in fork.candidates) == ["qwen3_coder", "toy_invoke"]
    assert "fork" in machine.decl.state_names()
    # Without the second dialect there is nothing to decide.
    assert "fork" not in compose(callsieve.grammar.resolve(["qwen3_coder"])).decl.state_names()


@pytest.mark.parametrize(
    "doc, code",
    [
        ("<tool_call> hello", "malformed_block"),
        ("<tool_call>\n<nope>", "malformed_block"),
        ("<tool_call>\n", "unterminated_block"),
        ("<tool_call>", "unterminated_block"),
    ],
)
def test_a_shared_opener_nobody_reads_is_released_as_text(doc: str, code: str) -> None:
    for size in (1, len(doc)):
        events = run([doc[i : i + size] for i in range(0, len(doc), size)], dialects=["qwen3_coder", TOY])
        assert texts(events) == doc
        assert [d.code for d in events if isinstance(d, callsieve.Diagnostic)] == [code]
        assert "".join(e.raw for e in events) == doc


def test_after_a_released_opener_the_held_text_is_read_again() -> None:
    """A fork holds what follows the opener; when no dialect reads it, that text is
    read again as prose, so a reasoning tag in it is not lost."""
    doc = "<tool_call><think>hm</think>after"
    events = run([doc], dialects=["qwen3_coder", TOY])
    assert texts(events) == "<tool_call>after"
    assert [e.text for e in events if isinstance(e, callsieve.Reasoning)] == ["hm"]


@given(st.data())
def test_runners_agree_on_a_fork(data: st.DataObject) -> None:
    doc = data.draw(st.sampled_from([BOTH, QWEN, TOYS, "<tool_call>\n<x", "<tool_call>\n\n" + TOYS[11:]]))
    cut = data.draw(st.integers(0, len(doc)))
    doc = doc[:cut] + data.draw(st.sampled_from(["", "<", "\n", "x", "<invoke", "<function="])) + doc[cut:]
    kw = {"dialects": ["qwen3_coder", TOY]}
    compiled = run(data.draw(chunks(doc)), **kw)
    reference = run(data.draw(chunks(doc)), runner="reference", **kw)
    assert merged(compiled) == merged(reference)
    assert "".join(e.raw for e in compiled) == doc


# ---------------------------------------------------------------- markers that begin with [
BRACKET = Dialect(
    "bracket",
    "a test dialect whose markers begin with [",
    (Block(
        Marker(r"\[CALLS\]", ("[CALLS]",)),
        Many(Call(
            Marker(r"\[CALL (?P<name>\w{1,32})\]", ("[CALL f]",), "[CALL …]"),
            Many(Param(Marker(r"\[ARG (?P<name>\w{1,32})\]", ("[ARG k]",), "[ARG …]"), Raw(Marker(r"\[/ARG\]", ("[/ARG]",))))),
            close=Marker(r"\[/CALL\]", ("[/CALL]",)),
        ), min=1),
        Marker(r"\[/CALLS\]", ("[/CALLS]",)),
    ),),
)
BDOC = "See [the docs](https://x.y) first. [CALLS][CALL search][ARG q]a [b] c[/ARG][/CALL][/CALLS] ok [x]"


@pytest.mark.parametrize("dialects", [[BRACKET], [BRACKET, *callsieve.DIALECTS]], ids=["alone", "with-built-ins"])
@pytest.mark.parametrize("size", [1, 2, 7, 1000])
def test_a_dialect_whose_markers_begin_with_a_bracket(dialects: list[object], size: int) -> None:
    events = run([BDOC[i : i + size] for i in range(0, len(BDOC), size)], dialects=dialects)
    assert calls(events) == [("bracket", "search", {"q": "a [b] c"})]
    assert texts(events) == "See [the docs](https://x.y) first.  ok [x]"


def test_a_bracket_start_character_has_its_class_only_where_it_is_listened_for() -> None:
    m = compose(callsieve.grammar.resolve([BRACKET, "qwen3_coder"]))
    assert "[" in m.matchers["text"].start_chars
    assert "[" not in compose(callsieve.grammar.resolve(["qwen3_coder"])).matchers["text"].start_chars


# ---------------------------------------------------------------- a dialect's own region
class BracketThinkModel(ReasoningModel):
    """Guards and actions of the region, in the dialect's own file."""

    def bracket_think_char(self, ch: str) -> None:
        # Reasoning text, but a NUL the model may emit in [THINK] is dropped from the
        # text (kept in raw): an action of this region's own.
        self.reason_raw.append(ch)
        if ch != "\0":
            self.reason_text.append(ch)

    def bracket_think_run(self, s: str, i: int, j: int) -> int:
        for ch in s[i:j]:
            self.bracket_think_char(ch)
        return j


THINK = Marker(r"\[THINK\]", ("[THINK]",))
END_THINK = Marker(r"\[/THINK\]", ("[/THINK]",))
THINKER = Dialect(
    "bracket_think",
    "reasoning in [THINK] … [/THINK], as a region of the dialect's own",
    (),
    regions=(Region(
        "bracket_think",
        (StateDecl("bracket_think.in_think", "between [THINK] and [/THINK]", owner="bracket_think", sink="bracket_think_char"),),
        (
            *on("bracket_think.in_think", START, "maybe_tag", "tag_begin", rank=1),
            *on("bracket_think.in_think", but(START), "bracket_think.in_think", "bracket_think_char", rank=90),
            *on("bracket_think.in_think", [EOF_TRIGGER], "bracket_think.in_think"),
        ),
        BracketThinkModel,
        (
            Listen("text", THINK, "bracket_think.in_think", ("enter_reasoning",)),
            Listen("bracket_think.in_think", END_THINK, "text", ("leave_reasoning",)),
        ),
    ),),
)


def test_a_dialect_may_bring_states_of_its_own() -> None:
    doc = "Hi [THINK]let me\0 see [x][/THINK]Answer."
    for size in (1, 4, len(doc)):
        events = run([doc[i : i + size] for i in range(0, len(doc), size)], dialects=[THINKER, "qwen3_coder"])
        got = merged(events)
        assert [(type(e).__name__, e.text) for e in got if not isinstance(e, callsieve.Diagnostic)] == [
            ("Text", "Hi "),
            ("Reasoning", "let me see [x]"),
            ("Text", "Answer."),
        ]
        assert "".join(e.raw for e in events) == doc
    assert "bracket_think.in_think" in compose(callsieve.grammar.resolve([THINKER])).decl.state_names()


def test_register_makes_a_users_dialect_resolvable_by_name() -> None:
    import callsieve.grammar.registry as registry

    saved = dict(registry.REGISTRY)
    try:
        callsieve.register(BRACKET)
        assert callsieve.parse(BDOC, dialects=["bracket"]).calls[0].name == "search"
        assert "bracket" not in callsieve.DIALECTS  # Sieve() still means the built-ins
        with pytest.raises(callsieve.GrammarError, match="built-in"):
            callsieve.register(Dialect("xml", "clash", BRACKET.blocks))
        with pytest.raises(callsieve.GrammarError, match="already registered"):
            callsieve.register(Dialect("bracket", "another", BRACKET.blocks))
    finally:
        registry.REGISTRY.clear()
        registry.REGISTRY.update(saved)


def test_a_fork_is_the_only_thing_prose_listens_for() -> None:
    """Regression: the shared opener's merged pattern repeated the dialects' group names
    (``attrs``), so it had no start characters and prose never left ``text`` (found by
    the every-option grammar soup: hermes + qwen3_coder with reasoning off)."""
    doc = 'a <tool_call>{"name": "f", "arguments": {}}</tool_call> b'
    r = callsieve.parse(doc, dialects=["hermes", "qwen3_coder"], reasoning=False)
    assert [(c.dialect, c.name) for c in r.calls] == [("hermes", "f")]
    assert r.text == "a  b"


def test_the_whole_vocabulary_is_importable_from_callsieve_grammar() -> None:
    # README's "Add a dialect" writes its examples with these names from one import.
    import callsieve.grammar as g
    from callsieve.grammar import api

    for name in ("Alt", "Opt", "Capture", "JsonArgs", "JsonCall", "JsonCalls", "Prefix", "Variant", "Seq", "Many",
                 "Block", "Call", "Param", "Raw", "JsonValue", "Choose", "Marker", "ValueStyle", "Header", "HeaderCase",
                 "Reasoning", "Dialect"):
        assert getattr(g, name) is getattr(api, name), name
        assert name in g.__all__, name
