"""A mention is not a call (issue 22): what follows an opener decides, by each dialect's
own grammar, in prose, in reasoning and in code.

Every example runs whole and in chunks of 1, 2, 3 and 7 characters, on both runners
(the compiled one, and the reference ``transitions`` machine), and asserts the text,
the reasoning and the calls."""

from __future__ import annotations

import re
from typing import Any

import pytest
from hypothesis import assume, given, strategies as st

import callsieve
from callsieve.events import merged
from callsieve.grammar import REGISTRY
from strategies import call_of, calls, chunks, codes, document, reasoning_text, run, texts

SIZES = (0, 1, 2, 3, 7)
RUNNERS = ("compiled", "reference")


def each_way(doc: str, **kw: Any) -> list[list[callsieve.Event]]:
    """``doc`` through both runners, whole and in chunks of every size in SIZES; the
    merged events are the same every way (checked), and each run's raw is ``doc``."""
    out = []
    for runner in RUNNERS:
        for size in SIZES:
            parts = [doc] if not size else [doc[i : i + size] for i in range(0, len(doc), size)]
            events = run(parts, runner=runner, **kw)
            assert "".join(e.raw for e in events) == doc, (runner, size)
            out.append(events)
    first = merged(out[0])
    for events in out[1:]:
        assert merged(events) == first
    return out


def outcome(doc: str, **kw: Any) -> tuple[str, str, list[tuple[str, dict[str, Any]]], list[str]]:
    """(text, reasoning, calls, diagnostic codes), the same every way ``each_way`` runs."""
    events = each_way(doc, **kw)[0]
    return texts(events), reasoning_text(events), calls(events), codes(events)


HERMES = '<tool_call>{"name": "f", "arguments": {"a": 1}}</tool_call>'
QWEN = "<tool_call>\n<function=f>\n<parameter=a>\n1\n</parameter>\n</function>\n</tool_call>"


KIMI = ("<|tool_calls_section_begin|><|tool_call_begin|>functions.f:0<|tool_call_argument_begin|>{\"a\": 1}"
        "<|tool_call_end|><|tool_calls_section_end|>")
V31 = "<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>f<｜tool▁sep｜>{\"a\": 1}<｜tool▁call▁end｜><｜tool▁calls▁end｜>"
#: The dialects whose models write calls inside an unclosed <think>, a block of each.
IN_THINK = [("hermes", HERMES), ("kimi_k2", KIMI), ("deepseek_v31", V31)]


# ------------------------------------------------------- items 1-4: reasoning
@pytest.mark.parametrize("dialects", [None, "own"])
@pytest.mark.parametrize("name, block", IN_THINK, ids=[x[0] for x in IN_THINK])
@pytest.mark.parametrize("wrap", ["fence", "span"])
def test_a_call_in_code_inside_reasoning_is_reasoning(name: str, block: str, wrap: str, dialects: str | None) -> None:
    """Item 1: the call was executed and ``</think>`` reached the text."""
    code = f"\n```\n{block}\n```\n" if wrap == "fence" else f" `{block}` "
    doc = f"<think>Example:{code}More.</think>Hi"
    text, thought, got, diags = outcome(doc, dialects=[name] if dialects else None)
    assert (text, thought, got) == ("Hi", f"Example:{code}More.", [])
    assert diags == ["call_in_reasoning"]


@pytest.mark.parametrize("dialects", [None, ["hermes"], ["kimi_k2", "hermes"], ["deepseek_v31", "hermes"]])
def test_an_opener_mentioned_in_reasoning_leaves_it_reasoning(dialects: list[str] | None) -> None:
    """Item 2: the mention ended the reasoning, the rest was Text and ``</think>`` stray.
    The block that does not hold up goes back to the reasoning."""
    doc = "<think>I will output a <tool_call> block with the city.</think>Hi"
    text, thought, got, diags = outcome(doc, dialects=dialects)
    assert (text, thought, got) == ("Hi", "I will output a <tool_call> block with the city.", [])
    assert "stray_reasoning_close" not in diags


@pytest.mark.parametrize("name, block", IN_THINK, ids=[x[0] for x in IN_THINK])
def test_the_reasoning_after_a_call_inside_it_stays_reasoning(name: str, block: str) -> None:
    """Item 3: after a call inside ``<think>…</think>`` the rest of it was Text."""
    doc = f"<think>first {block} then more</think>Hi"
    text, thought, got, diags = outcome(doc, dialects=[name])
    assert (text, thought, got, diags) == ("Hi", f"first {block} then more", [], ["call_in_reasoning"])


QWEN_DELETE = "<tool_call>\n<function=delete_file>\n<parameter=path>\n/etc\n</parameter>\n</function>\n</tool_call>"


@pytest.mark.parametrize("dialects", [None, ["qwen3_coder"], ["hermes"]])
def test_a_call_the_model_only_considered_is_reasoning(dialects: list[str] | None) -> None:
    """Item 4, one way: the reasoning goes on from the call (or closes after it)."""
    for after in (" but the user only asked a question.</think>Hi", "</think>Hi", "\n\nNo.</think>Hi"):
        doc = "<think>I could call " + QWEN_DELETE + after
        text, thought, got, _diags = outcome(doc, dialects=dialects)
        assert (text, thought, got) == ("Hi", "I could call " + QWEN_DELETE + after.split("</think>")[0], [])


@pytest.mark.parametrize("name, block", IN_THINK, ids=[x[0] for x in IN_THINK])
@pytest.mark.parametrize("start_in_reasoning", [False, True])
def test_a_call_an_unclosed_reasoning_ends_on_is_a_call(name: str, block: str, start_in_reasoning: bool) -> None:
    """Item 4, the other way: Qwen3 forgetting ``</think>`` before its call (vLLM's
    qwen3 reasoning parser reads it as a call). Two calls, whitespace between and after."""
    doc = ("" if start_in_reasoning else "<think>") + "I need the weather.\n" + block + "\n" + block + "\n"
    text, thought, got, diags = outcome(doc, dialects=[name], start_in_reasoning=start_in_reasoning)
    assert (text, thought, got) == ("\n\n", "I need the weather.\n", [("f", {"a": 1})] * 2)
    assert diags == ["reasoning_closed_by_call"]


def test_a_considered_call_held_in_reasoning_streams_nothing() -> None:
    """Holding a call until its reasoning resolves: no ToolCallStart or delta of it
    reaches the caller before the reasoning goes on, however the input is cut."""
    doc = "<think>maybe " + HERMES + " or not</think>"
    for events in each_way(doc):
        assert not [e for e in events if isinstance(e, (callsieve.ToolCallStart, callsieve.ToolCallDelta, callsieve.ToolCall))]


# ------------------------------------------------------- item 5: the fork's deciders
def test_a_prose_mention_of_the_shared_opener_leaves_the_call_after_it_intact() -> None:
    """The fork used to strip the space after the mention, read ``block:`` as a GLM
    name and let GLM's capture swallow the real call. GLM's grammar reads no space
    before the name, so no dialect reads `` block:`` and the opener is prose again."""
    doc = "I will emit a <tool_call> block:\n" + HERMES
    assert outcome(doc) == ("I will emit a <tool_call> block:\n", "", [("f", {"a": 1})], ["malformed_block"])


@pytest.mark.parametrize("space", ["\n" * 65, " " * 100 + "\n", "\r\n\t " * 40])
def test_any_whitespace_the_grammar_reads_before_a_body_is_read_behind_the_fork(space: str) -> None:
    """Hermes and Qwen3-Coder read any whitespace after ``<tool_call>`` (a JSON body, a
    position between markers); the fork used to give up after 64 characters of it, so
    enabling GLM beside them lost the call."""
    for body, dialect in ((HERMES, "hermes"), (QWEN, "qwen3_coder")):
        doc = "Hi " + body.replace("<tool_call>", "<tool_call>" + space, 1)
        alone = outcome(doc, dialects=[dialect])
        assert alone[2] and alone[3] == []
        assert outcome(doc) == alone


@pytest.mark.parametrize("after_name", ["\r\n", " " * 12 + "\n", "\n\n", "\t \r\n  "])
def test_glm_is_read_behind_the_fork_whatever_whitespace_its_name_line_ends_with(after_name: str) -> None:
    """GLM's name is followed by any whitespace (its pattern's ``\\s*``); its old
    hand-written lookahead refused ``\\r\\n`` and more than 8 spaces."""
    doc = f"<tool_call>get_weather{after_name}<arg_key>city</arg_key><arg_value>Paris</arg_value></tool_call>"
    alone = outcome(doc, dialects=["glm45"])
    assert alone == ("", "", [("get_weather", {"city": "Paris"})], [])
    assert outcome(doc) == alone


def test_the_deciders_are_the_grammars_after_the_opener() -> None:
    """Derived, not written twice: GLM's is its name capture and what may follow it,
    with no space before it; hermes's a JSON body's bracket and qwen3_coder's its call
    open, each after any whitespace."""
    from callsieve.grammar import resolve
    from callsieve.machine import compose

    (fork,) = [f for f in compose(resolve(None)).forks if f.opener_label == "<tool_call>"]
    got = {c.dialect: c.decider for c in fork.candidates}
    assert not got["glm45"].skips_space and got["hermes"].skips_space and got["qwen3_coder"].skips_space
    from callsieve.matcher import COMPLETE, DEAD, VIABLE

    glm = got["glm45"]
    assert glm.classify("get_weather\r\n  <arg_key>") == COMPLETE
    assert glm.classify("get_time</tool_call>") == COMPLETE
    assert glm.classify("get_weather\n") == VIABLE
    assert [glm.classify(x) for x in (" get", "{", "[", "<f", "a b")] == [DEAD] * 5
    assert got["hermes"].classify("{") == COMPLETE and got["hermes"].classify("[") == DEAD
    assert got["qwen3_coder"].classify("<function=f>") == COMPLETE


def test_a_glm_name_that_begins_like_another_dialects_body_is_no_glm_call_alone_either() -> None:
    """The decider is GLM's grammar: what it refuses behind the fork, GLM alone refuses."""
    doc = "<tool_call>{f}</tool_call>"
    assert outcome(doc, dialects=["glm45"])[2] == []


def test_a_prose_mention_of_a_header_start_does_not_swallow_the_header_after_it() -> None:
    """Kimi K3: a header begun at a mentioned ``<|close|>`` read the real call's
    ``<|open|>`` as its own text and made the call framing. A start marker inside a
    header begins a new one (harmony's doubled ``<|start|>assistant`` stays framing)."""
    call = '<|open|>call tool="f" index="1"<|sep|><|open|>argument key="a" type="object"<|sep|>1<|close|>argument<|sep|><|close|>call<|sep|>'
    for mention in ("<|close|> then say so.\n", "<|open|> tags are markup. "):
        assert outcome(mention + call, dialects=["kimi_k3"]) == (mention, "", [("f", {"a": 1})], ["malformed_block"])


def test_a_header_gives_way_to_another_dialects_header_start() -> None:
    """A header begun at a mentioned Kimi K3 ``<|close|>`` read harmony's real header
    after it as its own text (found by the property below with every dialect)."""
    call = "<|start|>assistant to=functions.f<|channel|>commentary <|constrain|>json<|message|>{}<|call|>"
    doc = "<|close|> then say so.\n" + call
    assert outcome(doc, dialects=["kimi_k3", "harmony"]) == ("<|close|> then say so.\n", "", [("f", {})], ["malformed_block"])


# ------------------------------------------------------- item 6: a capture that cannot end
def test_a_name_capture_after_a_prose_marker_dies_and_the_real_call_is_read() -> None:
    """Mistral v11: ``[TOOL_CALLS]`` in prose opened a name capture that read on to the
    real call's ``[ARGS]`` and lost it. The capture dies at the first character its
    pattern can never take (``c`` after ``to ``)."""
    doc = 'Use [TOOL_CALLS] to call. [TOOL_CALLS]get_weather[ARGS]{"city": "Paris"}'
    # (issue 24, item 9: the [TOOL_CALLS] of the block that died is framing, in raw only)
    assert outcome(doc, dialects=["mistral"]) == (
        "Use  to call. ", "", [("get_weather", {"city": "Paris"})], ["orphan_token", "malformed_block"])
    assert outcome(doc)[:3] == ("Use  to call. ", "", [("get_weather", {"city": "Paris"})])
    assert outcome(doc, dialects=["mistral"], strict=True) == (
        "Use [TOOL_CALLS] to call. ", "", [("get_weather", {"city": "Paris"})], ["malformed_block"])


def test_a_capture_dies_at_a_block_opener() -> None:
    """A name its pattern could go on reading (``[`` in a DeepSeek name) still ends at a
    block opener of any enabled dialect: the opener is read again in prose."""
    doc = ("<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>get[TOOL_CALLS]f[ARGS]{}")
    text, _r, got, diags = outcome(doc, dialects=["deepseek_v31", "mistral"])
    assert got == [("f", {})] and text == "<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>get"
    assert diags == ["malformed_block"]


def test_a_glm_name_dies_at_an_angle_bracket_that_begins_no_marker() -> None:
    """GLM alone (no fork before the capture): ``<b`` is no marker after the name and
    the name cannot take ``<``, so the capture dies there, not at the next marker."""
    doc = "<tool_call>get<b>old</b> text <tool_call>f</tool_call>"
    text, _r, got, diags = outcome(doc, dialects=["glm45"])
    assert got == [("f", {})] and text == "<tool_call>get<b>old</b> text "
    assert diags == ["malformed_block"]


# ------------------------------------------------------- property: a mention before a call
def _openers(names: tuple[str, ...]) -> list[str]:
    """Every way the enabled dialects may open a block (or a message header) in prose."""
    from callsieve.grammar import resolve
    from callsieve.machine import compose

    machine = compose(resolve(list(names)))
    out = {ex for layout in machine.layouts for lf in layout.openers if lf.marker is not None and lf.spec.block.prose
           for ex in lf.marker.examples}
    out |= {ex for d in resolve(list(names)) for h in d.headers for m, _p in h.starts for ex in m.examples}
    return sorted(out)


MENTIONS = [" then say so.\n", " tags are markup. ", "s, and more: ", " block with the city.\n\n"]


#: Dialect sets: each dialect alone, every one, and a few with others (each set is a
#: machine composed: kept to these, so the property's examples go to the documents).
DIALECT_SETS = st.one_of(
    st.sampled_from(callsieve.DIALECTS).map(lambda n: (n,)),
    st.just(tuple(callsieve.DIALECTS)),
    st.sampled_from([("hermes", "qwen3_coder", "glm45"), ("mistral", "deepseek_v31", "kimi_k2"),
                     ("harmony", "hermes", "mistral"), ("dsml", "xml", "minimax_m2", "deepseek_v3")]),
)


@given(st.data())
def test_a_prose_mention_of_any_opener_leaves_a_real_call_after_it_intact(data: st.DataObject) -> None:
    names = tuple(sorted(data.draw(DIALECT_SETS)))
    d = REGISTRY[data.draw(st.sampled_from(names))]
    doc, _expected = data.draw(document(d))
    mention = data.draw(st.sampled_from(_openers(names))) + data.draw(st.sampled_from(MENTIONS))
    alone = merged(run([doc], dialects=list(names)))
    events = run(data.draw(chunks(mention + doc)), dialects=list(names))
    assert "".join(e.raw for e in events) == mention + doc
    assert calls(events) == calls(alone)


# ------------------------------------------------------- property: wrapped calls
def _longest_run(s: str, c: str) -> int:
    return max((len(m.group()) for m in re.finditer(re.escape(c) + "+", s)), default=0)


def _message_ends(names: tuple[str, ...]) -> list[str]:
    """The tokens that end a message (harmony's ``<|end|>``): they end code too (item 8)."""
    from callsieve.grammar import resolve

    return [ex for d in resolve(list(names)) for h in d.headers for m in h.ends for ex in m.examples]


def _framing(names: tuple[str, ...]) -> list[Any]:
    """The enabled dialects' framing tokens and orphan tokens, as patterns: in reasoning
    they ride in the reasoning's ``raw``, not its text (``Dialect.framing``)."""
    import regex

    from callsieve.grammar import resolve

    ds = resolve(list(names))
    return [regex.compile(m.pattern) for d in ds for m in (*d.framing, *(o for o, _code in d.orphans))]


def _reasoning_families(names: tuple[str, ...]) -> list[tuple[str, str]]:
    from callsieve.grammar import resolve

    return sorted({(r.open.examples[0], r.close.examples[0]) for d in resolve(list(names)) for r in d.reasoning})


@given(st.data())
def test_a_call_wrapped_in_code_or_in_closed_reasoning_is_no_call(data: st.DataObject) -> None:
    """Any generated call of any enabled dialect, in a fence (longer than any run in
    it), a code span (the block on one line) or a closed reasoning section, is no call;
    in reasoning its markup is the reasoning's text, whole (but for an enabled
    dialect's framing tokens: the next test)."""
    names = tuple(sorted(data.draw(DIALECT_SETS)))
    d = REGISTRY[data.draw(st.sampled_from(names))]
    assert d.render is not None
    name, params, _args = data.draw(call_of(d))
    block = d.render([(name, params)], data.draw(st.integers(0, 64)))
    assume(not any(e in block for e in _message_ends(names)))
    families = _reasoning_families(names)
    kinds = ["fence", "tilde fence"] + (["span"] if "\n" not in block else []) + (["reasoning"] if families else [])
    kind = data.draw(st.sampled_from(kinds))
    if kind == "reasoning":
        open_, close = data.draw(st.sampled_from(families))
        assume(close not in block and open_ not in block)
        # (a framing token in the block, ERNIE's ``<response>`` in a value, is framing
        # in reasoning too: its raw, not its text; pinned below)
        assume(not any(p.search(block) for p in _framing(names)))
        doc = f"Hi {open_}Let me think: {block} no.{close}Done."
    elif kind == "span":
        ticks = "`" * (_longest_run(block, "`") + 1)
        doc = f"Use {ticks} {block} {ticks} here."
    else:
        c = "`" if kind == "fence" else "~"
        run_ = c * max(3, _longest_run(block, c) + 1)
        doc = f"Example:\n\n{run_}\n{block}\n{run_}\nDone."
    events = run(data.draw(chunks(doc)), dialects=list(names))
    assert "".join(e.raw for e in events) == doc
    assert calls(events) == []
    if kind == "reasoning":
        assert reasoning_text(events) == f"Let me think: {block} no."
        assert texts(events) == "Hi Done."
    else:
        assert texts(events) == doc
        # (item 9: reported, where the block opens with a marker code listens for)
        if any(ex in block for ex in _code_openers(names)):
            assert "markup_in_code" in codes(events)


def test_a_framing_token_in_a_call_mentioned_in_reasoning_rides_in_its_raw() -> None:
    """ERNIE's ``<response>`` written in a value of a call mentioned inside a closed
    reasoning section: with ERNIE enabled it is framing there too (``Dialect.framing``:
    in reasoning, in ``Reasoning.raw``), so the reasoning's text has the call without it;
    without ERNIE it is text. The call is no call either way. (The property above drew
    this case and expected the text whole: its oracle now leaves framing out.)"""
    block = '<tool_call>\n{"name": "a", "arguments": {"a": "<response>"}}\n</tool_call>'
    doc = f"Hi <seed:think>Let me think: {block} no.</seed:think>Done."
    for names, shown in ((["hermes", "seed_oss"], block), (["ernie45", "seed_oss"], block.replace("<response>", ""))):
        for parts in ([doc], list(doc)):
            events = run(parts, dialects=names)
            assert calls(events) == [] and texts(events) == "Hi Done."
            assert reasoning_text(events) == f"Let me think: {shown} no."
            assert "".join(e.raw for e in events) == doc


def _code_openers(names: tuple[str, ...]) -> list[str]:
    """The examples of the markers code listens for (``machine._real_openers``)."""
    from callsieve.grammar import resolve
    from callsieve.machine import _real_openers, compose

    return [ex for m, _d in _real_openers(compose(resolve(list(names))).layouts) for ex in m.examples]


def test_a_header_mentioned_in_prose_gives_way_to_another_dialects_header() -> None:
    """Harmony's ``<|channel|>`` in prose held what followed as its header; Kimi K3's
    ``<|open|>call …`` (a header start, no block opener) did not end it, and the real
    call was released as text at the end (found by the property above)."""
    doc = '<|channel|> then say so.\n<|open|>call tool="_" index="1"<|sep|><|close|>call<|sep|>'
    for parts in ([doc], list(doc)):
        events = run(parts, dialects=["harmony", "kimi_k3"])
        assert "".join(e.raw for e in events) == doc
        assert calls(events) == [("_", {})]


# ------------------------------------------------------- item 7: a stray backtick
PHI4 = 'functools[{"name": "f", "arguments": {"a": 1}}]'
KIMI_K3 = '<|open|>call tool="f" index="1"<|sep|><|open|>argument key="a" type="object"<|sep|>1<|close|>argument<|sep|><|close|>call<|sep|>'
MISTRAL = '[TOOL_CALLS]f[ARGS]{"a": 1}'
HARMONY_CALL = "<|channel|>commentary to=functions.f <|constrain|>json<|message|>{\"a\": 1}<|call|>"
#: A block (or a message header) of each kind an open span may hold: closed, close-less
#: (Mistral, Phi-4), a header (harmony, Kimi K3); each alone and with every dialect.
STRAY = [("hermes", HERMES), ("qwen3_coder", QWEN), ("mistral", MISTRAL), ("phi4_mini", PHI4),
         ("harmony", HARMONY_CALL), ("kimi_k3", KIMI_K3)]


@pytest.mark.parametrize("dialects", ["own", None])
@pytest.mark.parametrize("name, block", STRAY, ids=[x[0] for x in STRAY])
def test_a_stray_backtick_before_a_call_leaves_it_a_call(name: str, block: str, dialects: str | None) -> None:
    """Item 7: an unmatched backtick opens no span (CommonMark), so the call after it
    is a call: held while the span might close, read again as prose when the stream
    (or the paragraph) ends first. The text before the opener is not held back."""
    kw: dict[str, Any] = {"dialects": [name] if dialects else None}
    alone = outcome(block, **kw)[2]
    assert [c[0] for c in alone] == ["f"]
    for after in ("", "\n\nMore `code` here."):
        doc = "Use the `x flag. " + block + after
        text, thought, got, diags = outcome(doc, **kw)
        assert (text, thought, got, diags) == ("Use the `x flag. " + after, "", alone, []), after


@pytest.mark.parametrize("name, block", STRAY, ids=[x[0] for x in STRAY])
def test_a_backtick_that_closes_after_the_opener_makes_it_code(name: str, block: str) -> None:
    """The other way: the span closes after the opener, so the opener was code (shown,
    reported). So does a run that closes a span opened inside the open one."""
    for doc in ("Use the `x flag. " + block + " and `y` too.",
                "Use the `x ``y " + block + " z`` too."):
        text, thought, got, diags = outcome(doc, dialects=[name])
        assert (text, thought, got, diags) == (doc, "", [], ["markup_in_code"]), doc


def test_the_text_before_a_held_opener_is_shown_before_the_span_is_decided() -> None:
    """Holding starts at the opener: what the span held before it streams at once."""
    for runner in RUNNERS:
        s = callsieve.Sieve(runner=runner)
        first = s.feed("Use the `x flag. <tool_call>")
        assert texts(first) == "Use the `x flag. "
        rest = s.feed('{"name": "f", "arguments": {}}</tool_call> and more') + s.close()
        assert calls(rest) == [("f", {})] and texts(rest) == " and more"


@pytest.mark.parametrize("end", ["\n\n", "\n# Heading\n", "\n```\n", "\n- item\n"])
def test_a_paragraph_end_after_a_held_opener_leaves_the_span_unmatched(end: str) -> None:
    """A blank line, or a line that interrupts the paragraph (a heading, a fence, a list
    item), ends the span unmatched: the held call is a call, and what follows is read
    for what it is (the fence after it is a fence)."""
    doc = "Use `x " + HERMES + end + "`y`"
    text, _r, got, _d = outcome(doc)
    assert got == [("f", {"a": 1})] and text == "Use `x " + end + "`y`"


def test_a_message_end_in_a_held_span_leaves_it_unmatched() -> None:
    """``<|end|>`` ends the message, and the span that holds the call with it: the
    held input is read again, a call, then the token (framing)."""
    doc = "<|channel|>final<|message|>Use `x " + HERMES + "<|end|>"
    assert outcome(doc, dialects=["harmony", "hermes"]) == ("Use `x ", "", [("f", {"a": 1})], [])


# ------------------------------------------------------- item 8: special tokens end Markdown
@pytest.mark.parametrize("code", ["```", "```python\nprint(1)\n", "~~~\n", "Use `x"])
def test_a_message_end_ends_the_markdown_opened_in_the_message(code: str) -> None:
    """Harmony's ``<|end|>`` left the fence open: the next messages and the call came
    back as Text. The token ends every code context opened in the message."""
    doc = ("<|channel|>final<|message|>" + code + "<|end|><|start|>assistant to=functions.f<|channel|>commentary "
           "<|constrain|>json<|message|>{\"a\": 1}<|call|>")
    assert outcome(doc, dialects=["harmony"]) == (code, "", [("f", {"a": 1})], [])


def test_the_next_message_begins_on_a_line_of_its_own() -> None:
    """After a message's end, a fence at the next message's start opens a fence: the
    call in it is code."""
    doc = ("<|channel|>final<|message|>see ```<|end|><|start|>assistant<|channel|>final<|message|>```\n"
           + HERMES + "\n```\n")
    text, _r, got, diags = outcome(doc, dialects=["harmony", "hermes"])
    assert (text, got, diags) == ("see ``````\n" + HERMES + "\n```\n", [], ["markup_in_code"])


# ------------------------------------------------------- item 9: nothing hidden silently
@pytest.mark.parametrize("name, block", IN_THINK + [("qwen3_coder", QWEN), ("mistral", MISTRAL), ("harmony", HARMONY_CALL)],
                         ids=lambda x: x if isinstance(x, str) and len(x) < 16 else "")
@pytest.mark.parametrize("wrap", ["fence", "unclosed fence", "span", "info string"])
def test_markup_in_code_is_reported(name: str, block: str, wrap: str) -> None:
    """A call in a fence, an unclosed fence or a code span is shown as text, never run,
    and reported (``markup_in_code``, noise), so that a proxy can tell."""
    code = {"fence": f"```\n{block}\n```\n", "unclosed fence": f"~~~\n{block}\n", "span": f"`{block}`",
            "info string": f"```{block}\ncode\n```\n"}[wrap]
    assume_single = "\n" not in block or wrap != "span"
    if not assume_single:
        return
    doc = "Example:\n\n" + code + "Done."
    for dialects in ([name], None):
        text, thought, got, diags = outcome(doc, dialects=dialects)
        assert (text, thought, got) == (doc, "", []), dialects
        assert diags == ["markup_in_code"], dialects
