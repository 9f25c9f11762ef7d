"""Shown once (contract point 2, issue 23): a call whose start was streamed is never
also shown as text. It ends in exactly one ``ToolCall`` or one ``ToolCallAbandoned``
(whose ``raw`` holds its markup), and its fragments are always a prefix of the
arguments JSON the whole document gives that call: a prefix that never makes a whole
object unless the call completes.

The oracle for the fragments is the same document read to its end: a stream cut
anywhere (``max_tokens``) gives, for each call it abandons, fragments that begin the
arguments the uncut stream gives that call, strictly."""

from __future__ import annotations

import json
import pytest
from hypothesis import given, strategies as st

import callsieve
from strategies import any_dialect, chunks, document, run, texts


class JsonPrefix:
    """An incremental oracle: is the text fed so far a prefix of a JSON object text
    (RFC 8259, the object at the top; whitespace around it allowed), and is it a whole
    one? ``feed`` returns False at the first character no JSON object text can have
    there (and stays False). ``completion`` gives a suffix that makes a viable prefix
    whole (the tests check both against ``json.loads``)."""

    _NUM_NEXT = {  # number states: state -> (character class -> next state)
        "sign": {"0": "zero", "d": "int"}, "zero": {".": "dot", "e": "e"},
        "int": {"0": "int", "d": "int", ".": "dot", "e": "e"}, "dot": {"0": "frac", "d": "frac"},
        "frac": {"0": "frac", "d": "frac", "e": "e"}, "e": {"+": "esign", "0": "exp", "d": "exp"},
        "esign": {"0": "exp", "d": "exp"}, "exp": {"0": "exp", "d": "exp"},
    }
    _NUM_DONE = {"zero", "int", "frac", "exp"}
    _NUM_TAIL = {"sign": "0", "dot": "0", "e": "0", "esign": "0"}

    def __init__(self) -> None:
        self.stack: list[str] = []  # "{" or "["
        # top, value, key_or_end, key, colon, after, string, escape, unicode, number, literal, done, dead
        self.state = "top"
        self.in_key = False
        self.hex = 0
        self.num = ""
        self.lit = ""  # the rest of the literal still to come

    @property
    def complete(self) -> bool:
        return self.state == "done"

    def feed(self, text: str) -> bool:
        for ch in text:
            if not self._char(ch):
                self.state = "dead"
                return False
        return self.state != "dead"

    def _after_value(self) -> None:
        self.state = "after" if self.stack else "done"

    def _value(self, ch: str) -> bool:
        if ch == "{":
            self.stack.append("{")
            self.state = "key_or_end"
        elif ch == "[":
            self.stack.append("[")
            self.state = "value_or_end"
        elif ch == '"':
            self.state, self.in_key = "string", False
        elif ch == "-" or ch.isdigit() and ch.isascii():
            self.state, self.num = "number", "sign" if ch == "-" else "zero" if ch == "0" else "int"
        elif ch in "tfn":
            self.state, self.lit = "literal", {"t": "rue", "f": "alse", "n": "ull"}[ch]
        else:
            return False
        return True

    def _char(self, ch: str) -> bool:
        st = self.state
        ws = ch in " \t\n\r"
        if st == "dead":
            return False
        if st in ("top", "done"):
            if ws:
                return True
            if st == "top" and ch == "{":
                self.stack.append("{")
                self.state = "key_or_end"
                return True
            return False
        if st == "number":
            cls = "d" if ch in "123456789" else "0" if ch == "0" else "e" if ch in "eE" else "+" if ch in "+-" else ch
            nxt = self._NUM_NEXT[self.num].get(cls)
            if nxt is not None:
                self.num = nxt
                return True
            if self.num not in self._NUM_DONE:
                return False
            self._after_value()
            return self._char(ch)
        if st == "literal":
            if not self.lit or ch != self.lit[0]:
                return False
            self.lit = self.lit[1:]
            if not self.lit:
                self._after_value()
            return True
        if st == "string":
            if ch == '"':
                if self.in_key:
                    self.state = "colon"
                else:
                    self._after_value()
            elif ch == "\\":
                self.state = "escape"
            elif ord(ch) < 0x20:
                return False
            return True
        if st == "escape":
            if ch == "u":
                self.state, self.hex = "unicode", 0
                return True
            if ch in '"\\/bfnrt':
                self.state = "string"
                return True
            return False
        if st == "unicode":
            if ch not in "0123456789abcdefABCDEF":
                return False
            self.hex += 1
            if self.hex == 4:
                self.state = "string"
            return True
        if ws:
            return True
        if st in ("key_or_end", "key"):
            if ch == '"':
                self.state, self.in_key = "string", True
                return True
            if st == "key_or_end" and ch == "}":
                self.stack.pop()
                self._after_value()
                return True
            return False
        if st == "colon":
            if ch == ":":
                self.state = "value"
                return True
            return False
        if st in ("value", "value_or_end"):
            if st == "value_or_end" and ch == "]":
                self.stack.pop()
                self._after_value()
                return True
            return self._value(ch)
        if st == "after":
            top = self.stack[-1]
            if ch == ",":
                self.state = "key" if top == "{" else "value"
                return True
            if ch == ("}" if top == "{" else "]"):
                self.stack.pop()
                self._after_value()
                return True
            return False
        raise AssertionError(st)  # pragma: no cover

    def completion(self) -> str:
        """A suffix that makes the viable prefix fed so far a whole JSON object text."""
        st = self.state
        assert st != "dead"
        out = ""
        if st == "top":
            return "{}"
        if st == "number":
            out += self._NUM_TAIL.get(self.num, "")
        elif st == "literal":
            out += self.lit
        elif st in ("string", "escape", "unicode"):
            out += {"string": "", "escape": "n", "unicode": "0" * (4 - self.hex)}[st] + '"'
            if self.in_key:
                out += ": 0"
        elif st == "colon":
            out += ": 0"
        elif st in ("value", "key"):
            out += "0" if st == "value" else '"k": 0'
        return out + "".join("}" if c == "{" else "]" for c in reversed(self.stack))


def _by_index(events: list[callsieve.Event]) -> dict[int, list[callsieve.Event]]:
    out: dict[int, list[callsieve.Event]] = {}
    for e in events:
        if isinstance(e, (callsieve.ToolCallStart, callsieve.ToolCallDelta, callsieve.ToolCall, callsieve.ToolCallAbandoned)):
            out.setdefault(e.index, []).append(e)
    return out


def assert_shown_once(events: list[callsieve.Event], doc: str) -> None:
    """Every streamed call ends once, as a call or abandoned, never also as text."""
    assert "".join(e.raw for e in events) == doc
    for index, mine in _by_index(events).items():
        start = mine[0]
        assert isinstance(start, callsieve.ToolCallStart), index
        ends = [e for e in mine if isinstance(e, (callsieve.ToolCall, callsieve.ToolCallAbandoned))]
        assert len(ends) == 1 and ends[0] is mine[-1], (index, mine)
        end = ends[0]
        assert (end.id, end.name) == (start.id, start.name)
        # Every prefix of the call's fragments is a prefix of a JSON object text (checked
        # at each fragment), whole only when the call completes, then its arguments_json.
        oracle = JsonPrefix()
        joined = ""
        for e in mine:
            if isinstance(e, callsieve.ToolCallDelta):
                joined += e.arguments
                assert oracle.feed(e.arguments), (index, joined)
                assert not oracle.complete or e is mine[-2], (index, joined)  # (whole only with its last fragment)
        if isinstance(end, callsieve.ToolCall):
            assert joined == end.arguments_json and oracle.complete
        else:
            # never a whole JSON object: no client can take it for a complete call
            assert not oracle.complete, (index, joined)
            with pytest.raises(ValueError):
                json.loads(joined)
    for e in events:
        if isinstance(e, callsieve.Text):
            assert e.text in ("", e.raw)


# ---------------------------------------------------------------- the oracle, against json.loads
JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False) | st.text(),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=5), inner, max_size=4), max_leaves=12)


@given(st.dictionaries(st.text(max_size=5), JSON_VALUES, max_size=4), st.booleans(), st.sampled_from([None, 0, 2]))
def test_the_oracle_takes_every_prefix_of_a_json_object_text(obj: dict[str, object], ascii: bool, indent: int | None) -> None:
    text = json.dumps(obj, ensure_ascii=ascii, indent=indent)
    oracle = JsonPrefix()
    for k, ch in enumerate(text):
        assert oracle.feed(ch), text[: k + 1]
        assert oracle.complete == (k == len(text) - 1)
        if k % 3 == 0:  # (a completion makes each prefix whole)
            assert isinstance(json.loads(text[: k + 1] + oracle.completion()), dict)
    assert oracle.feed(" \n") and oracle.complete and not oracle.feed("x")


JSONISH = st.text(st.sampled_from(list('{}[]",: 0123456789-+.eEtrufalsn\\u\n\tabcdef\x01\u00e9')), max_size=30)


@given(JSONISH)
def test_the_oracle_agrees_with_json_loads(text: str) -> None:
    """Viable: some suffix makes it a JSON object (its ``completion`` does); complete:
    ``json.loads`` reads a dict; and everything ``json.loads`` reads as a dict is
    complete. (The alphabet has no ``NaN``/``Infinity``, which Python's json accepts.)"""
    oracle = JsonPrefix()
    viable = oracle.feed(text)
    try:
        whole = isinstance(json.loads(text), dict)
    except ValueError:
        whole = False
    assert oracle.complete == whole, text
    if viable:
        assert isinstance(json.loads(text + oracle.completion()), dict), (text, oracle.completion())
    if not viable:
        # no suffix helps: the first character it refused stays refused
        assert not any(JsonPrefix().feed(text + tail) for tail in ("", '"', "}", "]", "0", '": 0}'))


@pytest.mark.parametrize("strict", [False, True])
@pytest.mark.parametrize("runner", ["compiled", "reference"])
@pytest.mark.parametrize("size", [0, 1, 2, 3, 7])
@pytest.mark.parametrize("doc", ["[f(),g(a=1)x]", "[f(a=1), g(b=2) h]"])
def test_a_refused_call_in_a_standing_block_is_never_sent_its_closing_brace(doc: str, size: int, runner: str,
                                                                             strict: bool) -> None:
    """A pythonic block that stands with a refused call in it: the refused call's
    ``}`` was sent with the others' (a whole JSON object, then ``ToolCallAbandoned``)."""
    parts = [doc] if not size else [doc[i : i + size] for i in range(0, len(doc), size)]
    events = run(parts, dialects=["pythonic"], runner=runner, strict=strict)
    assert_shown_once(events, doc)
    assert [type(e).__name__ for e in events if isinstance(e, (callsieve.ToolCall, callsieve.ToolCallAbandoned))] == [
        "ToolCall", "ToolCallAbandoned"]
    sent = "".join(e.arguments for e in events if isinstance(e, callsieve.ToolCallDelta) and e.index == 1)
    assert sent in ('{"a": 1', '{"b": 2')


@given(st.data())
def test_a_stream_cut_anywhere_shows_each_started_call_once(data: st.DataObject) -> None:
    d = data.draw(any_dialect, label="dialect")
    doc, _expected = data.draw(document(d), label="document")
    k = data.draw(st.integers(0, len(doc)), label="cut")
    cut = doc[:k]
    strict = data.draw(st.booleans(), label="strict")
    runner = data.draw(st.sampled_from(["compiled", "reference"]), label="runner")
    dialects = data.draw(st.sampled_from([[d.name], None]), label="dialects")
    full = run([doc], dialects=dialects, strict=strict)
    whole = {e.index: e.arguments_json for e in full if isinstance(e, callsieve.ToolCall)}
    events = run(data.draw(chunks(cut), label="chunks"), dialects=dialects, strict=strict, runner=runner)
    assert_shown_once(events, cut)
    for index, mine in _by_index(events).items():
        joined = "".join(e.arguments for e in mine if isinstance(e, callsieve.ToolCallDelta))
        if index in whole:
            # the canonical-delta property, abandoned calls included: a prefix of the
            # arguments the whole document gives the call (strict when abandoned)
            assert whole[index].startswith(joined), (joined, whole[index])
            if isinstance(mine[-1], callsieve.ToolCallAbandoned):
                assert len(joined) < len(whole[index])
    # The abandoned markup is nowhere in the text.
    for e in events:
        if isinstance(e, callsieve.ToolCallAbandoned):
            assert e.raw and e.raw not in texts(events)


#: a character that is grammar nowhere in a position between markers
JUNK = st.sampled_from(["x", "}", "\u00e9", "]", ","])


@given(st.data())
def test_a_document_broken_anywhere_shows_each_started_call_once(data: st.DataObject) -> None:
    d = data.draw(any_dialect, label="dialect")
    doc, _expected = data.draw(document(d), label="document")
    k = data.draw(st.integers(0, len(doc)), label="where")
    doc = doc[:k] + data.draw(JUNK, label="junk") + doc[k:]
    policy = data.draw(st.sampled_from(["text", "drop"]), label="on_malformed")
    events = run(data.draw(chunks(doc), label="chunks"), dialects=[d.name], on_malformed=policy,
                 strict=data.draw(st.booleans(), label="strict"))
    assert_shown_once(events, doc)


@pytest.mark.parametrize("policy", ["text", "drop", "raise"])
@pytest.mark.parametrize("size", [0, 1, 3])
def test_every_policy_abandons_a_truncated_call_the_same_way(policy: str, size: int) -> None:
    doc = "Hi <tool_call>\n<function=f>\n<parameter=a>\nhel"
    parts = [doc] if not size else [doc[i : i + size] for i in range(0, len(doc), size)]
    events = run(parts, on_malformed=policy)
    assert [type(e).__name__ for e in events if not isinstance(e, (callsieve.Text, callsieve.ToolCallDelta))] == [
        "ToolCallStart", "ToolCallAbandoned", "Diagnostic"]
    assert texts(events) == "Hi "
    assert_shown_once(events, doc)


# ---------------------------------------------------------------- ids, and tolerances with their own evidence
KIMI_TWICE = ("<|tool_calls_section_begin|><|tool_call_begin|>functions.f:0<|tool_call_argument_begin|>{}<|tool_call_end|>"
              "<|tool_call_begin|>functions.f:0<|tool_call_argument_begin|>{\"a\": 1}<|tool_call_end|><|tool_calls_section_end|>"
              " and <|tool_calls_section_begin|><|tool_call_begin|>functions.f:0<|tool_call_argument_begin|>{}"
              "<|tool_call_end|><|tool_calls_section_end|>")


@pytest.mark.parametrize("runner", ["compiled", "reference"])
@pytest.mark.parametrize("size", [0, 1, 9])
def test_a_wire_id_given_twice_is_made_unique_with_a_diagnostic(size: int, runner: str) -> None:
    parts = [KIMI_TWICE] if not size else [KIMI_TWICE[i : i + size] for i in range(0, len(KIMI_TWICE), size)]
    events = run(parts, dialects=["kimi_k2"], runner=runner)
    starts = [e.id for e in events if isinstance(e, callsieve.ToolCallStart)]
    assert starts == ["functions.f:0", "functions.f:0#2", "functions.f:0#3"]
    assert [e.id for e in events if isinstance(e, callsieve.ToolCall)] == starts
    assert [e.code for e in events if isinstance(e, callsieve.Diagnostic)] == ["duplicate_call_id", "duplicate_call_id"]


def test_openai_tool_calls_entries_never_share_an_id() -> None:
    from callsieve.openai import StreamSieve

    sieve = StreamSieve(["kimi_k2"])
    out = sieve.push({"id": "x", "choices": [{"index": 0, "delta": {"content": KIMI_TWICE}, "finish_reason": "stop"}]})
    ids = [tc["id"] for c in out for tc in (c["choices"][0]["delta"].get("tool_calls") or []) if tc.get("id")]
    assert len(ids) == 3 and len(set(ids)) == 3


@pytest.mark.parametrize("size", [0, 1, 4])
def test_harmony_glued_json_renames_a_call_only_to_a_known_tool(size: int) -> None:
    doc = "<|channel|>commentary to=functions.geojson<|message|>{}<|call|>"
    parts = [doc] if not size else [doc[i : i + size] for i in range(0, len(doc), size)]
    plain = run(parts, dialects=["harmony"])
    assert [e.name for e in plain if isinstance(e, callsieve.ToolCall)] == ["geojson"]
    assert not [e for e in plain if isinstance(e, callsieve.Diagnostic)]
    geo = [{"type": "function", "function": {"name": "geo", "parameters": {"type": "object", "properties": {}}}}]
    known = run(parts, dialects=["harmony"], tools=geo)
    assert [e.name for e in known if isinstance(e, callsieve.ToolCall)] == ["geo"]
    assert [e.code for e in known if isinstance(e, callsieve.Diagnostic)] == ["glued_content_type"]
