"""What composing and compiling a machine shares and skips changes nothing it makes.

The compiled runner reads its table from the declaration's rows
(``callsieve.compiler.declared_rows``) rather than from a ``transitions`` machine built
for it; these tests hold the two to the same rows in the same order, for machines with
each kind of row (forks, the reasoning twins of ``calls_in_reasoning="call"``, strict).
"""

from __future__ import annotations

import pytest

import callsieve
from callsieve.compiler import compile_machine, declared_rows
from callsieve.grammar.registry import resolve
from callsieve.machine import build_machine, compose

SETS = [
    (tuple(callsieve.DIALECTS), {}),
    (("hermes", "qwen3_coder", "glm45"), {"calls_in_reasoning": "call"}),
    (("mistral", "xlam", "kimi_k2"), {"strict": True}),
    (("harmony",), {"think": False}),
]


@pytest.mark.parametrize("names, options", SETS, ids=lambda x: ",".join(x) if isinstance(x, tuple) else str(x))
def test_the_compiled_table_reads_the_rows_the_transitions_machine_holds(names: tuple[str, ...],
                                                                          options: dict[str, object]) -> None:
    machine = compose(resolve(list(names)), **options)
    decl = machine.decl
    events = build_machine(decl, None).events
    held: dict[str, dict[str, list[tuple[tuple[str, ...], tuple[str, ...], str]]]] = {s: {} for s in decl.state_names()}
    for trigger, event in events.items():
        for source, transitions in event.transitions.items():
            held[source][trigger] = [(tuple(c.func for c in tr.conditions), tuple(tr.before), tr.dest)
                                     for tr in transitions]
            assert all(c.target for tr in transitions for c in tr.conditions)  # (no "unless")
    read = declared_rows(decl)
    assert read == held
    # (the keys in the same order too: a bulk rule's loop characters are read in it)
    assert [list(by) for by in read.values()] == [list(by) for by in held.values()]
    # The table's rows are those rows, each name the model's callback of that name.
    model = machine.model
    table = compile_machine(machine).table
    assert {s: list(by) for s, by in table.items()} == {s: list(by) for s, by in held.items()}
    for s, by in held.items():
        for t, rows in by.items():
            got = table[s][t]
            assert len(got) == len(rows)
            for (guards, actions, dest), (fg, fa, fd) in zip(rows, got):
                assert fd == dest
                assert [(f, True) for f in (getattr(model, g) for g in guards)] == list(fg)
                assert [getattr(model, a) for a in actions] == list(fa)
