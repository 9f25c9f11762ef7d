"""Every rule a declaration is checked against, each triggered once: the error must name
the rule and the dialect, marker or state at fault (lark: grammars are validated when
built, with errors that point at the rule)."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

import callsieve
from callsieve.grammar import Block, Call, Dialect, Many, Marker, Param, Raw, Region, Seq
from callsieve.grammar.states import ALL, EOF_TRIGGER, Listen, StateDecl, on
from callsieve.grammar.tags import close_tag, open_tag

OPEN = Marker("<calls>", ("<calls>",))
CLOSE = Marker("</calls>", ("</calls>",))
CALL = Marker('<c name="(?P<name>[a-z]+)">', ('<c name="f">',), '<c name="…">')
CALL_END = Marker("</c>", ("</c>",))
ARG = Marker('<p name="(?P<name>[a-z]+)">', ('<p name="k">',), '<p name="…">')
ARG_END = Marker("</p>", ("</p>",))


def dialect(name: str = "toy", *, call: Marker = CALL, arg: Marker = ARG, arg_end: Marker = ARG_END,
            params: object = None, regions: tuple[Region, ...] = ()) -> Dialect:
    body = params if params is not None else Many(Param(arg, Raw(arg_end)))
    return Dialect(name, name, (Block(OPEN, Many(Call(call, body, close=CALL_END), min=1), CLOSE),), regions=regions)  # type: ignore[arg-type]


def rejects(d: object, match: str, *others: object) -> None:
    with pytest.raises(callsieve.GrammarError, match=match):
        callsieve.Sieve(dialects=[d, *others])


def test_the_toy_dialect_itself_is_valid() -> None:
    r = callsieve.parse('<calls><c name="f"><p name="k">v</p></c></calls>', dialects=[dialect()])
    assert [(c.name, c.arguments) for c in r.calls] == [("f", {"k": "v"})]


def test_rule_1_a_pattern_that_does_not_compile() -> None:
    rejects(dialect(arg_end=Marker("</p(>", ("</p>",))), r"marker '</p>'.*does not compile")


def test_rule_2_a_start_character_inside_a_marker_of_its_context() -> None:
    rejects(dialect(arg_end=Marker("</p<x>", ("</p<x>",))), r"dialect toy, marker '</p<x>' listened for in in_param.*rule 2")
    # ... and says what to do about it
    rejects(dialect(arg_end=Marker("</p<x>", ("</p<x>",))), r"Fix: split it before that '<' into two markers, one after "
            r"the other in the structure \(the second begins with '<'\); or, if the '<' is a stray character a model "
            r"writes before the marker, declare it as the marker's Prefix")


def test_rule_3_an_example_that_does_not_match() -> None:
    rejects(dialect(arg_end=Marker("</p>", ("</q>",))),
            r"dialect toy, marker '</q>': example '</q>' does not match its pattern '</p>' \(rule 3: each example is "
            r"one whole tag as the model writes it, and the pattern must match it all\)")


def test_rule_3_a_marker_without_literal_start_characters() -> None:
    rejects(dialect(arg_end=Marker(r".p>", ("xp>",))), r"marker 'xp>'.*start characters, rule 3")


def test_a_call_without_a_name_source() -> None:
    rejects(dialect(call=Marker("<c>", ("<c>",))), r"dialect toy: call without a name: call open '<c>'")


def test_a_parameter_without_a_key() -> None:
    rejects(dialect(arg=Marker("<p>", ("<p>",))), r"dialect toy: parameter without a key: parameter open '<p>'")


KEY = Marker("<k>", ("<k>",))
KEY_END = Marker("</k>", ("</k>",))
VALUE = Marker("<v>", ("<v>",))


def test_a_key_between_markers_is_the_parameters_key() -> None:
    from callsieve.grammar.api import Capture

    keyed = Many(Param(KEY, Raw(ARG_END), between=(Capture(r"(?P<name>[a-z]+)"), KEY_END, VALUE)))
    r = callsieve.parse('<calls><c name="f"><k>a</k><v>1</p><k>b</k>\n<v>x</p>y</p></c></calls>', dialects=[dialect(params=keyed)])
    assert [(c.name, c.arguments) for c in r.calls] == [("f", {"a": "1", "b": "x</p>y"})]


def test_a_key_between_markers_the_rules() -> None:
    from callsieve.grammar.api import Capture

    cap = Capture(r"(?P<name>[a-z]+)")
    bad = {
        "between holds markers and at most one capture": (cap, KEY_END, cap, VALUE),
        "between must end with a marker": (KEY_END, cap),
        r"its key capture '\[a-z\]\+' has no \(\?P<name>": (Capture(r"[a-z]+"), KEY_END, VALUE),
    }
    for match, between in bad.items():
        rejects(dialect(params=Many(Param(KEY, Raw(ARG_END), between=between))), rf"dialect toy: parameter '<k>': {match}")
    rejects(dialect(params=Many(Param(KEY, Raw(ARG_END), between=(KEY_END, VALUE)))),
            r"dialect toy: parameter without a key: parameter open '<k>'.*no capture between it and its value")


def test_tolerated_optional_markers_the_rules() -> None:
    from callsieve.grammar.api import Capture, Opt

    cap = Capture(r"(?P<name>[a-z]+)")
    rejects(dialect(params=Many(Param(KEY, Raw(ARG_END), between=(Opt(KEY_END), cap, KEY_END, VALUE)))),
            "between holds markers and at most one capture")  # an Opt there must be a stray marker
    rejects(dialect(params=Many(Param(KEY, Raw(ARG_END), between=(cap, KEY_END, Opt(VALUE, stray="x"))))),
            "between must end with a marker")
    rejects(dialect(params=Seq(Opt(VALUE, missing="gone"), Many(Param(ARG, Raw(ARG_END))))),
            r"Opt\(missing=\) stands only as a value's opener")
    rejects(dialect(params=Seq(Opt(Seq(VALUE, VALUE), stray="extra"), Many(Param(ARG, Raw(ARG_END))))),
            r"Opt\(stray=\) holds one marker")
    rejects(dialect(params=Seq(Opt(VALUE, stray="Bad"), Many(Param(ARG, Raw(ARG_END))))), "use lower_snake_case")
    # and a well-formed one composes: the toy's value open may be left out
    ok = dialect(params=Many(Param(KEY, Raw(ARG_END), between=(cap, KEY_END, Opt(VALUE, missing="gone")))))
    callsieve.Sieve(dialects=[ok])


def test_ambiguous_markers_at_one_position() -> None:
    twin = Marker('<p +name="(?P<name>[a-z]+)">', ('<p name="k">', '<p  name="k">'), "<p …>")
    params = Many(Param(ARG, Raw(ARG_END)))
    other = Many(Param(twin, Raw(Marker("</q>", ("</q>",)))))
    from callsieve.grammar import Seq

    rejects(dialect(params=Seq(params, other)), r"dialect toy: ambiguous markers at toy\.in_call.*'<p name=\"…\">' and '<p …>'")


def test_a_close_that_nothing_can_confirm() -> None:
    d = Dialect("toy", "toy", (Block(OPEN, Param(ARG, Raw(ARG_END)), None),))
    rejects(d, r"dialect toy: unconfirmable close: no marker may follow the value after '<p name=\"…\">'")


def test_a_close_followed_by_a_capture_is_refused() -> None:
    """Issue 21 bug: a value close with a capture after it composed, then ``feed()``
    raised KeyError 'after_close': nothing but a marker can confirm a close."""
    from callsieve.grammar.api import Capture

    body = Seq(Param(ARG, Raw(ARG_END)), Capture(r"[^<]*", label="tail"))
    rejects(dialect(params=body), r"dialect toy: unconfirmable close: 'tail' may follow the value.*\(rule: .*\); put a marker")


def test_a_json_array_of_calls_alone_is_a_block_body() -> None:
    """Issue 21 bug: ``JsonCalls(...)`` alone as a block's body failed to compose
    (KeyError 'j_next': its region was left out)."""
    from callsieve.grammar import JsonCalls

    d = Dialect("calls_array", "t", (Block(OPEN, JsonCalls(), CLOSE),))
    r = callsieve.parse('<calls>[{"name": "f", "arguments": {"k": 1}}, {"name": "g", "arguments": {}}]</calls>', dialects=[d])
    assert [(c.name, c.arguments) for c in r.calls] == [("f", {"k": 1}), ("g", {})]


def test_two_dialects_with_headers_compose() -> None:
    """Issue 21 bug: two dialects declaring message headers clashed on a rank (4999)."""
    from dataclasses import replace

    from callsieve.grammar.harmony import DIALECT, HEADER

    def sp(t: str) -> Marker:
        return Marker(rf"<\|{t}\|>", (f"<|{t}|>",))

    call = replace(HEADER.call, open=sp("msg"), close=sp("done"))
    other = replace(HEADER, name="h2", starts=((sp("begin"), "role"),), parts=((sp("chan"), "channel"),), end=sp("msg"),
                    ends=(sp("fin"),), tokens=(), call=call, at_start=())
    d = Dialect("h2", "a second header dialect", (call,), headers=(other,))
    r = callsieve.parse("<|begin|>assistant<|chan|>final<|msg|>Hi<|fin|>", dialects=[DIALECT, d])
    assert r.text == "Hi"


def test_overlapping_lookahead_choices_after_a_shared_opener() -> None:
    tc = Marker(open_tag("tool_call"), ("<tool_call>",), "<tool_call>")
    fn = Marker(r"<function=(?P<name>\w+)>", ("<function=f>",), "<function=…>")
    twin = Dialect("qwen_twin", "twin", (Block(tc, Many(Call(fn, Many(Param(ARG, Raw(ARG_END))), close=CALL_END), min=1),
                                              Marker(close_tag("tool_call"), ("</tool_call>",))),))
    rejects(twin, r"overlapping lookahead choices after the shared opener '<tool_call>': qwen3_coder and qwen_twin", "qwen3_coder")


def _region(*rules: object, states: tuple[StateDecl, ...] | None = None, listens: tuple[Listen, ...] = ()) -> Region:
    st = states if states is not None else (StateDecl("toy.extra", "a state of the toy's own", owner="toy"),)
    return Region("toy_region", st, tuple(rules), None, listens)  # type: ignore[arg-type]


ENTER = Listen("text", Marker(r"\[X\]", ("[X]",)), "toy.extra", ())


def test_an_unreachable_state() -> None:
    r = _region(*on("toy.extra", ALL, "text"), *on("toy.extra", [EOF_TRIGGER], "text"))
    rejects(dialect(regions=(r,)), r"unreachable state 'toy\.extra'.*\(rule: .*\); fix: ")


def test_a_dead_end() -> None:
    r = _region(*on("toy.extra", ALL, "toy.extra"), *on("toy.extra", [EOF_TRIGGER], "text"), listens=(ENTER,))
    rejects(dialect(regions=(r,)), r"dead end: from state 'toy\.extra'.*\(rule: .*\); fix: ")


def test_a_rank_tie_on_one_state_and_trigger() -> None:
    r = _region(
        *on("toy.extra", ALL, "text", when=["tag_viable"], rank=5),
        *on("toy.extra", ALL, "toy.extra", when=["json_at_top"], rank=5),
        *on("toy.extra", ALL, "text", rank=9),
        *on("toy.extra", [EOF_TRIGGER], "text"),
        listens=(ENTER,),
    )
    rejects(dialect(regions=(r,)), r"state 'toy\.extra' on '\w+': two transitions share rank 5.*rule: .*; fix: ")


def test_a_missing_fallback_and_a_missing_callback() -> None:
    guarded = _region(*on("toy.extra", ALL, "text", when=["tag_viable"]), *on("toy.extra", [EOF_TRIGGER], "text"), listens=(ENTER,))
    rejects(dialect(regions=(guarded,)), r"state 'toy\.extra' on '\w+': the last transition is guarded")
    missing = _region(*on("toy.extra", ALL, "text", "no_such_action"), *on("toy.extra", [EOF_TRIGGER], "text"), listens=(ENTER,))
    rejects(dialect(regions=(missing,)), r"toy\.extra --\w+--> text: the model has no callback 'no_such_action'")


def test_a_state_declared_twice() -> None:
    r = _region(*on("text", ALL, "text"), states=(StateDecl("text", "again"),))
    rejects(dialect(regions=(r,)), r"state 'text' is declared twice")


def test_a_region_model_that_redefines_an_engine_action() -> None:
    class Clash:
        def text_char(self, ch: str) -> None:  # pragma: no cover - never runs
            pass

    r = Region("toy_region", (), (), Clash)
    rejects(dialect(regions=(r,)), r"region model Clash: 'text_char' is already an engine guard or action")


def test_grammar_imports_nothing_from_the_engine() -> None:
    """callsieve.grammar is the bottom of the import graph: its modules import only
    the standard library, ``regex`` and each other."""
    root = Path(__file__).resolve().parent.parent / "grammar"
    for path in sorted(root.glob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            names: list[str] = []
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module:
                names = [node.module]
            for name in names:
                if name.startswith("callsieve"):
                    assert name.startswith("callsieve.grammar"), f"{path.name} imports {name}"


# -- reasoning families and message headers
def test_a_reasoning_state_name_must_be_snake_case() -> None:
    from dataclasses import replace

    from callsieve.grammar.reasoning import THINK

    rejects(replace(dialect("thinker"), reasoning=(replace(THINK, state="In Reasoning"),)), "reasoning state 'In Reasoning'")


def test_two_prefill_families_cannot_both_be_started_in() -> None:
    from dataclasses import replace

    from callsieve.grammar.reasoning import BRACKETS

    d = replace(dialect("brackety"), reasoning=(replace(BRACKETS, prefill=True),))
    with pytest.raises(callsieve.InvalidOptionError, match="start_in_reasoning"):
        callsieve.Sieve(["hermes", d], start_in_reasoning=True)
    with pytest.raises(callsieve.InvalidOptionError, match="several reasoning families"):
        callsieve.Sieve(["hermes", d], start_in_reasoning=True)


def test_a_header_case_names_a_known_body_and_its_call_block_is_opened_by_its_end() -> None:
    from dataclasses import replace

    from callsieve.grammar import HeaderCase
    from callsieve.grammar.harmony import DIALECT, HEADER

    bad_case = replace(HEADER, cases=(HeaderCase("x", "", "nonsense"),))
    rejects(replace(DIALECT, name="h1", headers=(bad_case,)), "body must be reasoning, text or call")
    bad_pattern = replace(HEADER, cases=(HeaderCase("x", "(", "text"),))
    rejects(replace(DIALECT, name="h2", headers=(bad_pattern,)), "header case 'x' does not compile")
    prose_block = replace(HEADER.call, prose=True)
    rejects(replace(DIALECT, name="h3", blocks=(prose_block,), headers=(replace(HEADER, call=prose_block),)), "prose=False")


def test_a_prefix_the_rules() -> None:
    from callsieve.grammar.api import Prefix

    def with_prefix(p: Prefix) -> Dialect:
        return dialect(call=Marker(CALL.pattern, CALL.examples, CALL.label, prefixes=(p,)))

    rejects(with_prefix(Prefix("<<", ("<<",), "twice")), "a prefix is one character")
    rejects(with_prefix(Prefix("[a-z]", ("a",), "letter")), "a prefix is one character")
    rejects(with_prefix(Prefix("<", ("<",), "Twice")), "a prefix's code must be lower_snake_case")
    rejects(with_prefix(Prefix("<", ("x",), "twice")), "give examples its pattern")
    ok = with_prefix(Prefix("[<＜]", ("<", "＜"), "twice"))
    r = callsieve.parse('<calls><<c name="f"><p name="k">v</p></c></calls>', dialects=[ok])
    assert [(c.name, c.arguments) for c in r.calls] == [("f", {"k": "v"})]
    assert [d.code for d in r.diagnostics] == ["twice"]


# ---------------------------------------------------------------- mistakes a first dialect makes
# Each is a GrammarError that names the rule and the fix, never an IndexError, an
# AttributeError or a message about the wrong thing.


def test_a_marker_with_no_example_names_rule_3_and_how_to_give_one() -> None:
    rejects(dialect(arg_end=Marker("</p>", ())),
            r"marker '</p>': give at least one literal example it matches, e\.g\. Marker\('</p>', "
            r"\('<the tag as written>',\)\) \(rule 3\)")


def test_a_str_where_the_examples_tuple_belongs_names_the_trailing_comma() -> None:
    # ("</p>") is a str: iterated, its characters would each be "an example that does not match"
    rejects(dialect(arg_end=Marker("</p>", ("</p>"))),  # type: ignore[arg-type]
            r"marker '</p>': examples is the str '</p>'; write a tuple, \('</p>',\) \(the trailing comma makes a "
            r"tuple of one\) \(rule 3\)")


def test_a_list_of_examples_names_the_tuple() -> None:
    rejects(dialect(arg_end=Marker("</p>", ["</p>"])),  # type: ignore[arg-type]
            r"marker '</p>': examples is a list; write a tuple, \('<literal>', \.\.\.\): a dialect is frozen data")


def test_one_block_where_the_blocks_tuple_belongs_names_the_trailing_comma() -> None:
    block = dialect().blocks[0]
    rejects(Dialect("toy", "toy", (block)),  # type: ignore[arg-type]
            r"dialect toy: blocks is one Block; write blocks=\(Block\(\.\.\.\),\) \(the trailing comma makes a tuple of one\)")


def test_a_json_value_as_a_calls_body_points_to_json_args() -> None:
    from callsieve.grammar import JsonValue

    d = Dialect("toy", "toy", (Block(OPEN, Many(Call(CALL, JsonValue(CALL_END), close=CALL_END), min=1), CLOSE),))  # type: ignore[arg-type]
    rejects(d, r"dialect toy, block '<calls>', call '<c name=\"…\">': JsonValue is a parameter's value, not a structure "
               r"node; a call's arguments written as one JSON object are JsonArgs\(\)")


def test_a_raw_value_outside_a_parameter_points_to_param() -> None:
    rejects(dialect(params=Raw(ARG_END)), r"Raw is a parameter's value, not a structure node; a value stands in a "
                                          r"parameter: Param\(open_marker, Raw\(\.\.\.\)\)")


def test_json_args_as_a_parameters_value_points_to_json_value() -> None:
    from callsieve.grammar import JsonArgs

    rejects(dialect(params=Many(Param(ARG, JsonArgs()))),  # type: ignore[arg-type]
            r"parameter '<p name=\"…\">': JsonArgs\(\) is a whole call's arguments object, not one parameter's value; "
            r"a parameter's JSON value is JsonValue\(close_marker\)")


def test_a_str_where_a_node_belongs_names_marker() -> None:
    rejects(dialect(params="</p>"), r"'</p>' is not a structure node \(a marker is Marker\(pattern, \(example,\)\)\)")


def test_register_given_a_name_says_how_names_and_dialects_are_used() -> None:
    with pytest.raises(callsieve.GrammarError,
                       match=r"register\(\) takes a Dialect object, not str 'acme': a registered dialect is used by "
                             r"name, Sieve\(dialects=\['acme'\]\); to register one, build it first"):
        callsieve.register("acme")  # type: ignore[arg-type]


@pytest.fixture
def registry_snapshot():  # type: ignore[no-untyped-def]
    from callsieve.grammar import registry

    saved = dict(registry.REGISTRY)
    yield registry.REGISTRY
    registry.REGISTRY.clear()
    registry.REGISTRY.update(saved)


def test_registering_a_different_dialect_under_a_taken_name_is_refused_with_the_fix(registry_snapshot: dict[str, Dialect]) -> None:
    first = dialect("acme")
    assert callsieve.register(first) is first
    again = dialect("acme")  # the same declaration built again (a module imported twice): nothing changes
    assert again is not first and callsieve.register(again) is again
    other = dialect("acme", arg_end=Marker("</q>", ("</q>",)))
    with pytest.raises(callsieve.GrammarError,
                       match=r"a different dialect named 'acme' is already registered; give this one another name, "
                             r"or pass register\(\.\.\., replace=True\) to replace it"):
        callsieve.register(other)
    assert registry_snapshot["acme"] == first
    callsieve.register(other, replace=True)
    assert registry_snapshot["acme"] is other


def test_a_server_parser_name_cannot_be_registered(registry_snapshot: dict[str, Dialect]) -> None:
    # "glm47" is vLLM's name for the glm45 format: taking it would silently change what it means
    with pytest.raises(callsieve.GrammarError, match=r"dialect name 'glm47' stands for the built-in glm45 dialect"):
        callsieve.register(dialect("glm47"))
    with pytest.raises(callsieve.GrammarError, match=r"dialect name 'hermes' is a built-in dialect's; give yours another name"):
        callsieve.register(dialect("hermes"))
    assert "glm47" not in registry_snapshot
