"""The compiled runner does exactly what the reference runner (the transitions machine) does.

Inputs are built from the grammar's own literals (every marker example, every bar
variant, think tags, CDATA, fences) so that both runners visit every state; each runner
gets its own random chunking, so bulk scans, held prefixes and pushback are all compared.
"""

from __future__ import annotations

from typing import Any

from hypothesis import given, strategies as st

import callsieve
from callsieve.events import merged
from strategies import REASONING_POLICIES, prefills, any_dialect, chunks, document, run, soup

TOOLS = [
    {"type": "function", "function": {"name": "f", "parameters": {"properties": {
        "k": {"type": "integer"}, "s": {"type": "string"}, "o": {"anyOf": [{"type": "object"}, {"type": "null"}]},
    }}}},
    {"type": "function", "function": {"name": "write", "parameters": {"properties": {"content": {"type": "string"}}}}},
]


def both(doc: str, data: st.DataObject, **kw: Any) -> None:
    compiled = run(data.draw(chunks(doc)), **kw)
    reference = run(data.draw(chunks(doc)), runner="reference", **kw)
    assert merged(compiled) == merged(reference)
    raw = "".join(e.raw for e in compiled)
    if kw.get("on_malformed") == "raise" and compiled and isinstance(compiled[-1], callsieve.Diagnostic):
        assert doc.startswith(raw)  # the stream stopped at the block that raised
    else:
        assert raw == doc


@given(st.data())
def test_runners_agree_on_grammar_soup(data: st.DataObject) -> None:
    both(data.draw(soup()), data)


@given(st.data())
def test_runners_agree_per_dialect_with_tools_and_policies(data: st.DataObject) -> None:
    d = data.draw(any_dialect)
    doc = data.draw(soup())
    both(
        doc,
        data,
        dialects=[d.name],
        tools=data.draw(st.sampled_from([None, TOOLS])),
        unknown_tool=data.draw(st.sampled_from(["call", "text", "drop"])),
        on_malformed=data.draw(st.sampled_from(["text", "drop", "raise"])),
        start_in_reasoning=data.draw(st.booleans()) and prefills([d.name]),
        calls_in_reasoning=data.draw(REASONING_POLICIES),
        max_block_chars=data.draw(st.sampled_from([1 << 20, 30, 1, 7, 64])),
    )


@given(st.data())
def test_runners_agree_on_overflowing_documents(data: st.DataObject) -> None:
    """Blocks past max_block_chars spill (issue 12, finding 2): both runners read the
    rest of the block the same way, wherever the limit falls, under every policy."""
    d = data.draw(any_dialect)
    doc, _ = data.draw(document(d))
    noise = data.draw(soup(4))
    at = data.draw(st.integers(0, len(doc)))
    doc = doc[:at] + noise + doc[at:]
    both(
        doc,
        data,
        dialects=data.draw(st.sampled_from([[d.name], None])),
        on_malformed=data.draw(st.sampled_from(["text", "drop", "raise"])),
        max_block_chars=data.draw(st.integers(1, max(1, len(doc)))),
    )


@given(st.data())
def test_runners_agree_on_documents_with_noise(data: st.DataObject) -> None:
    d = data.draw(any_dialect)
    doc, _ = data.draw(document(d))
    noise = data.draw(soup(6))
    at = data.draw(st.integers(0, len(doc)))
    both(doc[:at] + noise + doc[at:], data)


@given(st.data())
def test_runners_agree_on_bracket_runs_in_cdata(data: st.DataObject) -> None:
    """``]`` runs after ``]]`` are taken whole by the compiled runner (one run form):
    the value keeps every bracket, whatever the run lengths and the chunking."""
    value = data.draw(st.text("]x>", max_size=40).filter(lambda v: "]]>" not in v and not v.endswith("]")))
    doc = f'<tool_calls>\n<invoke name="w">\n<parameter name="c"><![CDATA[{value}]]></parameter>\n</invoke>\n</tool_calls>'
    both(doc, data, dialects=["xml"])
    calls = [e for e in run(data.draw(chunks(doc)), dialects=["xml"]) if isinstance(e, callsieve.ToolCall)]
    assert [c.arguments for c in calls] == [{"c": value}]


def test_reference_runners_share_one_machine_and_each_keeps_its_own_stream() -> None:
    """The reference runners of one composition drive one ``transitions`` machine (built
    once: callsieve.reference); interleaved streams through it end as each does alone,
    and a trace instruments a machine of its own, not the shared one."""
    from callsieve.tools.trace import trace

    docs = ['a <tool_call>{"name": "f", "arguments": {"k": 1}}</tool_call> b',
            "<think>x</think><tool_calls>\n<invoke name=\"w\">\n<parameter name=\"c\">1</parameter>\n</invoke>\n</tool_calls>"]
    alone = [merged(run([d], runner="reference")) for d in docs]
    sieves = [callsieve.Sieve(runner="reference", id_prefix="call_") for _ in docs]
    assert sieves[0].runner.machine is sieves[1].runner.machine
    out: list[list[callsieve.Event]] = [[], []]
    for i in range(max(map(len, docs))):
        for k, d in enumerate(docs):
            out[k] += sieves[k].feed(d[i : i + 1])
    assert [merged(o + s.close()) for o, s in zip(out, sieves)] == alone
    assert alone[0] == merged(run([docs[0]]))  # and the compiled runner agrees
    assert any(isinstance(e, callsieve.ToolCall) for e in alone[0]) and any(isinstance(e, callsieve.ToolCall) for e in alone[1])

    t = trace(docs[0])
    assert t.fires
    shared = callsieve.Sieve(runner="reference").runner.machine
    assert all(tr.execute.__name__ != "traced" for ev in shared.events.values()
               for trs in ev.transitions.values() for tr in trs)
