"""The public API as DESIGN.md names it: constructors, policies, typed errors."""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest

import callsieve
import callsieve.grammar as grammar
from callsieve.grammar.api import Marker
from strategies import run

BLOCK = '<tool_calls>\n<invoke name="{}">\n<parameter name="k">v</parameter>\n</invoke>\n</tool_calls>'
TOOLS = [{"type": "function", "function": {"name": "known", "parameters": {"properties": {"k": {"type": "string"}}}}}]


def test_public_names() -> None:
    assert set(callsieve.DIALECTS) >= {"dsml", "xml", "qwen3_coder", "minimax_m2"}
    r = callsieve.parse("hi " + BLOCK.format("f"))
    assert r.text == "hi " and [c.name for c in r.calls] == ["f"] and r.reasoning == ""
    for cls in (callsieve.Text, callsieve.Reasoning, callsieve.ToolCallStart, callsieve.ToolCallDelta, callsieve.ToolCall, callsieve.Diagnostic):
        assert dataclasses.is_dataclass(cls) and "__slots__" in vars(cls)
        params = getattr(cls, "__dataclass_params__")
        assert params.frozen


def test_events_are_frozen() -> None:
    with pytest.raises(dataclasses.FrozenInstanceError):
        callsieve.Text("a", "a").text = "b"  # type: ignore[misc]


def test_feed_after_close_raises() -> None:
    s = callsieve.Sieve()
    s.close()
    with pytest.raises(callsieve.FeedAfterCloseError):
        s.feed("x")
    with pytest.raises(callsieve.FeedAfterCloseError):
        s.close()


def test_unknown_dialect_raises_and_names_the_known_ones() -> None:
    with pytest.raises(callsieve.UnknownDialectError, match="known: dsml"):
        callsieve.Sieve(dialects=["nope"])


def test_feed_rejects_non_str() -> None:
    with pytest.raises(TypeError):
        callsieve.Sieve().feed(b"bytes")  # type: ignore[arg-type]


def test_invalid_grammar_raises_and_points_at_the_rule() -> None:
    from callsieve.grammar.api import Block, Call, Dialect, Many, Param, Raw

    def toy(name: str, close: Marker) -> Dialect:
        return Dialect(name, name, (Block(
            Marker("<calls>", ("<calls>",)),
            Many(Call(Marker('<c name="(?P<name>[a-z]+)">', ('<c name="f">',)),
                      Many(Param(Marker('<p name="(?P<name>[a-z]+)">', ('<p name="k">',)), Raw(close))),
                      close=Marker("</c>", ("</c>",)))),
            Marker("</calls>", ("</calls>",)),
        ),))

    with pytest.raises(callsieve.GrammarError, match="rule 2.*'<a<b>'|'<a<b>'.*rule 2"):
        callsieve.Sieve(dialects=[toy("bad", Marker("<a<b>", ("<a<b>",)))])
    with pytest.raises(callsieve.GrammarError, match="example '</y>' does not match"):
        callsieve.Sieve(dialects=[toy("wrong", Marker("</x>", ("</y>",)))])


@pytest.mark.parametrize("tools", [{"name": "x"}, "tools", [1], [{"type": "function", "function": {}}],
                                   [{"type": "function", "function": {"name": "f", "parameters": {"properties": []}}}]])
def test_invalid_tool_schema_raises(tools: object) -> None:
    with pytest.raises(callsieve.InvalidToolSchemaError):
        callsieve.Sieve(tools=tools)  # type: ignore[arg-type]


def test_invalid_policy_raises() -> None:
    with pytest.raises(ValueError, match="on_malformed"):
        callsieve.Sieve(on_malformed="ignore")
    with pytest.raises(ValueError, match="unknown_tool"):
        callsieve.Sieve(unknown_tool="run")


# -- unknown_tool policy
def test_unknown_tool_default_stays_a_call_with_a_diagnostic() -> None:
    doc = BLOCK.format("rm_rf")
    events = run([doc], tools=TOOLS)
    assert [e.code for e in events if isinstance(e, callsieve.Diagnostic)] == ["unknown_tool"]
    assert [e.name for e in events if isinstance(e, callsieve.ToolCall)] == ["rm_rf"]


def test_unknown_tool_text_shows_it_as_text_and_streams_nothing() -> None:
    doc = BLOCK.format("rm_rf")
    events = run([doc], tools=TOOLS, unknown_tool="text")
    assert "".join(e.text for e in events if isinstance(e, callsieve.Text)) == doc
    assert not [e for e in events if isinstance(e, (callsieve.ToolCall, callsieve.ToolCallStart, callsieve.ToolCallDelta))]


def test_unknown_tool_drop_keeps_the_input_on_the_diagnostic() -> None:
    two = '<tool_calls>\n<invoke name="known">\n<parameter name="k">v</parameter>\n</invoke>\n<invoke name="evil">\n</invoke>\n</tool_calls>'
    events = run([two], tools=TOOLS, unknown_tool="drop")
    assert [e.name for e in events if isinstance(e, callsieve.ToolCall)] == ["known"]
    dropped = [e for e in events if isinstance(e, callsieve.Diagnostic) and e.code == "dropped_call"]
    assert len(dropped) == 1 and dropped[0].raw.startswith('<invoke name="evil">')
    assert "".join(e.raw for e in events) == two
    assert not [e for e in events if isinstance(e, callsieve.Text)]


# -- on_malformed policy
#: A block that ends before any call in it started (the name is not known yet).
UNTERMINATED = "before <tool_call>\n<function=f"
#: One that ends inside a call that started streaming: the call is abandoned instead.
ABANDONED = "before <tool_call>\n<function=f>\n<parameter=a>\nx"


def test_on_malformed_text_is_the_default() -> None:
    events = run([UNTERMINATED])
    assert "".join(e.text for e in events if isinstance(e, callsieve.Text)) == UNTERMINATED


def test_on_malformed_drop() -> None:
    events = run([UNTERMINATED], on_malformed="drop")
    assert "".join(e.text for e in events if isinstance(e, callsieve.Text)) == "before "
    (diag,) = [e for e in events if isinstance(e, callsieve.Diagnostic)]
    assert diag.code == "unterminated_block" and diag.raw == UNTERMINATED[len("before "):]
    assert diag.offset == len("before ")


@pytest.mark.parametrize("policy", ["text", "drop"])
def test_a_started_call_the_stream_ends_in_is_abandoned_never_shown_as_text(policy: str) -> None:
    for size in (0, 1, 5):
        events = run([ABANDONED] if not size else [ABANDONED[i : i + size] for i in range(0, len(ABANDONED), size)],
                     on_malformed=policy)
        assert "".join(e.text for e in events if isinstance(e, callsieve.Text)) == "before "
        (gone,) = [e for e in events if isinstance(e, callsieve.ToolCallAbandoned)]
        assert (gone.index, gone.id, gone.name, gone.reason) == (0, "call_0", "f", "unterminated_block")
        assert gone.raw == ABANDONED[len("before "):]
        (diag,) = [e for e in events if isinstance(e, callsieve.Diagnostic)]
        assert diag.code == "unterminated_block" and diag.raw == "" and "abandoned" in diag.message
        assert events.index(gone) < events.index(diag)
        assert "".join(e.raw for e in events) == ABANDONED


def test_on_malformed_raise() -> None:
    s = callsieve.Sieve(on_malformed="raise")
    s.feed(UNTERMINATED)
    with pytest.raises(callsieve.MalformedBlockError) as info:
        s.close()
    assert isinstance(info.value.diagnostic, callsieve.Diagnostic)


def test_abandoned_call_is_reported() -> None:
    doc = "<tool_call>\n<function=f>\n<parameter=a>\nx\n</parameter>\n</function>\noops"
    events = run([doc])
    starts = [e for e in events if isinstance(e, callsieve.ToolCallStart)]
    (diag,) = [e for e in events if isinstance(e, callsieve.Diagnostic)]
    assert starts and "abandoned" in diag.message and not [e for e in events if isinstance(e, callsieve.ToolCall)]


def test_duplicate_parameter_makes_the_block_malformed() -> None:
    doc = '<tool_calls><invoke name="f"><parameter name="a">1</parameter><parameter name="a">2</parameter></invoke></tool_calls>'
    events = run([doc])
    assert not [e for e in events if isinstance(e, callsieve.ToolCall)]
    assert "given twice" in [e for e in events if isinstance(e, callsieve.Diagnostic)][0].message


# -- reasoning
def test_start_in_reasoning_and_stray_close() -> None:
    events = run(["thinking...</think>answer"], start_in_reasoning=True)
    assert [(type(e).__name__, e.text) for e in events if isinstance(e, (callsieve.Text, callsieve.Reasoning))] == [
        ("Reasoning", "thinking..."), ("Text", "answer")]
    events = run(["thinking...</think>answer"])
    assert [e.code for e in events if isinstance(e, callsieve.Diagnostic)] == ["stray_reasoning_close"]
    assert "".join(e.text for e in events if isinstance(e, callsieve.Text)) == "thinking...answer"


def test_ids_and_indices_count_across_blocks() -> None:
    doc = BLOCK.format("a") + "\n" + BLOCK.format("b")
    calls = [e for e in run([doc], id_prefix="x_") if isinstance(e, callsieve.ToolCall)]
    assert [(c.index, c.id) for c in calls] == [(0, "x_0"), (1, "x_1")]


def test_reference_runner_available_for_audits() -> None:
    r = callsieve.parse(BLOCK.format("f"), runner="reference")
    assert [c.name for c in r.calls] == ["f"]


def test_grammar_imports_on_its_own() -> None:
    """The grammar package imports without the engine first (no import cycle)."""
    import subprocess
    import sys

    for module in ("callsieve.grammar", "callsieve.grammar.api", "callsieve.grammar.registry", "callsieve.grammar.dsml", "callsieve"):
        done = subprocess.run([sys.executable, "-c", f"import {module}"], capture_output=True, text=True)
        assert done.returncode == 0, done.stderr


def test_builtin_dialects_pass_validation() -> None:
    for d in grammar.REGISTRY.values():
        grammar.validate(d)


# The names vLLM's and SGLang's --tool-call-parser take resolve to the dialect that reads
# the same wire format (DESIGN.md: aliases), spelled either way.
@pytest.mark.parametrize(
    ("alias", "dialect"),
    [
        ("deepseek_v32", "dsml"), ("qwen3_xml", "qwen3_coder"), ("qwen25", "hermes"), ("glm47", "glm45"),
        ("minimax-m2", "minimax_m2"), ("openai", "harmony"), ("gpt-oss", "harmony"), ("gpt_oss", "harmony"),
        ("GLM47", "glm45"),
    ],
)
def test_server_parser_names_resolve_to_their_dialect(alias: str, dialect: str) -> None:
    assert [d.name for d in callsieve.Sieve(dialects=[alias]).dialects] == [dialect]
    assert callsieve.grammar.ALIASES.get(alias.lower().replace("-", "_"), dialect) == dialect


def test_an_alias_reads_the_markup_of_its_dialect() -> None:
    text = 'Hi <tool_call>\n<function=f>\n<parameter=a>\n1\n</parameter>\n</function>\n</tool_call>'
    r = callsieve.parse(text, dialects="qwen3_xml")
    assert [c.name for c in r.calls] == ["f"] and r.text == "Hi "


def test_a_comma_separated_string_names_several_dialects() -> None:
    assert [d.name for d in callsieve.Sieve(dialects="hermes, glm47").dialects] == ["hermes", "glm45"]


def test_a_misspelt_dialect_gets_a_suggestion() -> None:
    with pytest.raises(callsieve.UnknownDialectError, match=r"did you mean 'hermes'\?"):
        callsieve.Sieve(dialects=["hermez"])
    with pytest.raises(callsieve.UnknownDialectError, match=r"did you mean 'glm47', the glm45 dialect\?"):
        callsieve.Sieve(dialects=["glm-4.7"])


def test_an_alias_and_its_dialect_together_are_one_dialect_given_twice() -> None:
    with pytest.raises(callsieve.UnknownDialectError, match="given twice"):
        callsieve.Sieve(dialects=["glm45", "glm47"])


# ---------------------------------------------------------------- a misspelt option
@pytest.mark.parametrize("call, message", [
    (lambda: callsieve.Sieve(on_malformd="drop"),
     "Sieve() got an unexpected keyword argument 'on_malformd' (did you mean 'on_malformed'?); its options: "),
    (lambda: callsieve.Sieve(dialects="hermes", strikt=True),
     "Sieve() got an unexpected keyword argument 'strikt' (did you mean 'strict'?)"),
    (lambda: callsieve.parse("x", calls_in_reasonning="call"),
     "parse() got an unexpected keyword argument 'calls_in_reasonning' (did you mean 'calls_in_reasoning'?)"),
    (lambda: callsieve.Sieve(colour="blue"),
     "Sieve() got an unexpected keyword argument 'colour'; its options: bare_calls, calls_in_reasoning, dialects, "),
])
def test_a_misspelt_keyword_is_answered_with_the_nearest_option(call: Any, message: str) -> None:
    with pytest.raises(TypeError) as raised:
        call()
    assert str(raised.value).startswith(message), str(raised.value)


def test_the_keyword_check_keeps_sieves_signature_for_help_and_type_checkers() -> None:
    import inspect

    params = inspect.signature(callsieve.Sieve).parameters
    assert list(params)[:2] == ["dialects", "tools"] and "strict" in params and "runner" in params
    assert callsieve.Sieve("hermes", None, strict=True).dialects[0].name == "hermes"  # positional still works


def test_a_comma_separated_string_and_server_parser_names_are_dialects() -> None:
    s = callsieve.Sieve(dialects="gpt-oss, qwen25,glm47")
    assert [d.name for d in s.dialects] == ["harmony", "hermes", "glm45"]
    with pytest.raises(callsieve.UnknownDialectError, match=r"unknown dialect 'qwen3coderr' \(did you mean 'qwen3coder', the qwen3_coder dialect\?\)"):
        callsieve.Sieve(dialects="qwen3coderr")
