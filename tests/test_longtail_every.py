"""Every built-in dialect, each by name (issue 21: the contract and the differential
test over every dialect, the long tail included). The properties of test_contract.py
and test_differential.py draw their dialect at random, so one of the thirty may go a
run without an example; here each gets a few, in one parametrized property: its
well-formed documents (own dialect and every dialect enabled, chunked at random) leave
only the prose, lose nothing, and the reference runner agrees with the compiled one;
a soup of its own markup never makes ``feed`` raise. (Examples per dialect stay few:
the README test command's budget; the random-dialect properties carry the volume.)"""

from __future__ import annotations

import pytest
from hypothesis import given, settings, strategies as st

import callsieve
from callsieve.events import merged
from callsieve.grammar.api import Dialect
from strategies import DIALECTS, calls, chunks, document, run, texts

PER_DIALECT = settings(max_examples=4)


def _literals(d: Dialect) -> list[str]:
    return sorted({ex for m in d.markers() for ex in m.examples} | {ex for _m, v in d.variants() for ex in v.examples}
                  | {ex for m in d.framing for ex in m.examples})


@pytest.mark.parametrize("d", DIALECTS, ids=lambda d: d.name)
@PER_DIALECT
@given(data=st.data())
def test_each_dialect_keeps_the_contract_and_both_runners_agree(d: Dialect, data: st.DataObject) -> None:
    doc, expected = data.draw(document(d))
    own = run(data.draw(chunks(doc)), dialects=[d.name])
    assert texts(own) == expected.text and calls(own) == expected.calls  # no leak, no loss
    assert "".join(e.raw for e in own) == doc
    every = run(data.draw(chunks(doc)))  # every dialect enabled
    assert texts(every) == expected.text and calls(every) == expected.calls
    assert "".join(e.raw for e in every) == doc
    reference = run(data.draw(chunks(doc)), dialects=[d.name], runner="reference")
    assert merged(reference) == merged(own)  # chunking does not matter, the runners agree


@pytest.mark.parametrize("d", DIALECTS, ids=lambda d: d.name)
@PER_DIALECT
@given(data=st.data())
def test_each_dialect_never_raises_on_a_soup_of_its_own_markup(d: Dialect, data: st.DataObject) -> None:
    pieces = st.one_of(st.sampled_from(_literals(d)), st.text("<>[]{}()\"'=:,|/\\ \n`\uff5cafx01", max_size=3))
    doc = "".join(data.draw(st.lists(pieces, max_size=30)))
    tools = data.draw(st.sampled_from([None, TOOLS]))
    compiled = run(data.draw(chunks(doc)), dialects=[d.name], tools=tools)
    assert "".join(e.raw for e in compiled) == doc
    reference = run(data.draw(chunks(doc)), dialects=[d.name], tools=tools, runner="reference")
    assert merged(compiled) == merged(reference)


TOOLS = [{"type": "function", "function": {"name": "f", "parameters": {"properties": {"k": {"type": "integer"}}}}}]


def test_every_built_in_dialect_is_covered() -> None:
    assert {d.name for d in DIALECTS} == set(callsieve.DIALECTS)
