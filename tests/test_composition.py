"""What composing and compiling a machine shares and skips changes nothing it makes.

The compiled runner reads its table from the declaration's rows
(``callsieve.declare.declared_rows``) rather than from a ``transitions`` machine built
for it; these tests hold the two to the same rows in the same order, for machines with
each kind of row (forks, the reasoning twins of ``calls_in_reasoning="call"``, strict).
"""

from __future__ import annotations

import contextlib
import copy
import dataclasses
import enum
import functools
import re
import sys
import types
from functools import cached_property
from typing import Any, Iterator

import pytest
import regex

import callsieve
import callsieve.machine as machine_module
import callsieve.sieve as sieve_module
from callsieve.compiler import CompiledMachine, CompiledRunner, compile_machine
from callsieve.declare import declared_rows
from callsieve.events import merged
from callsieve.grammar.api import Dialect
from callsieve.grammar.registry import REGISTRY, resolve
from callsieve.machine import Machine, build_machine, compose
from callsieve.regions.whole import WholeBlocks
from strategies import run

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


# ------------------------------------------------------------ caches change nothing
#
# Composing and compiling are memoised: ``compose`` by the dialect objects and options
# (and by their value), ``compiled`` by the machine, and inside them pure functions of
# grammar data by value (a marker read against another's examples, a pattern's factoring,
# a compiled alternation, ...). The tests below hold a machine made through every cache,
# warm, to one made with every memo of the package emptied first, value for value.

#: Attributes that are caches a machine fills as it runs (a matcher's classify memo and
#: its alternation, compiled when first used, and its word finder with the last word it
#: found; the table's scanners and the decision trees of the rows it stepped; the
#: whole-block readers' count): not what was composed.
_FILLED_AS_IT_RUNS = frozenset({"_memo", "_last_end", "_partial", "_by_group", "_field_groups", "_word_finder",
                                "scanners", "taken", "decide", "decide_rest", "trees"})


_LEAVES = (type(None), bool, int, float, str, bytes)
_LEAF_KINDS = frozenset(_LEAVES)


class _Same:
    """Whether two objects hold the same value, what they hold compared recursively
    (functions by their code, defaults and closure; classes by their own attributes;
    patterns by their text), never by identity, so that a structure made of shared
    parts and one made of equal copies are the same. Compared pairwise: an object is
    the same as itself at once (what a machine shares with its twin is not walked), a
    pair met again (shared parts, cycles) is taken as the same while it is compared.
    ``trail`` says where the first difference found lies, from the inside out."""

    def __init__(self) -> None:
        self.assumed: set[tuple[int, int]] = set()
        self.alive: list[object] = []  # (keeps every compared object's id its own)
        self.trail: list[str] = []

    def __call__(self, a: object, b: object) -> bool:
        if a is b:
            return True
        kind = type(a)
        if kind is not type(b):
            self.trail.append(f"{kind.__qualname__} against {type(b).__qualname__}")
            return False
        if kind in _LEAVES or isinstance(a, enum.Enum):
            if repr(a) == repr(b):
                return True
            self.trail.append(f"{a!r} against {b!r}")
            return False
        key = (id(a), id(b))
        if key in self.assumed:
            return True
        self.assumed.add(key)
        self.alive += (a, b)
        return self._same(a, b, kind)

    def _all(self, pairs: Any, where: str) -> bool:
        for label, x, y in pairs:
            if not self(x, y):
                self.trail.append(f"{where}[{label!r}]")
                return False
        return True

    def _same(self, a: Any, b: Any, kind: type) -> bool:
        name = kind.__qualname__
        if isinstance(a, (tuple, list)):
            if all(type(x) in _LEAF_KINDS for x in a) and all(type(x) in _LEAF_KINDS for x in b):
                # (a row's guards and actions, a class's characters: compared at once)
                if a == b and list(map(type, a)) == list(map(type, b)):
                    return True
                self.trail.append(f"{a!r} against {b!r}")
                return False
            return (len(a) == len(b) or bool(self.trail.append(f"{name} of {len(a)} against {len(b)}"))) and \
                self._all(((i, x, y) for i, (x, y) in enumerate(zip(a, b))), name)
        if isinstance(a, dict):
            if len(a) != len(b):
                self.trail.append(f"{name} of {len(a)} against {len(b)}")
                return False
            return self._all(((i, ka, kb) for i, (ka, kb) in enumerate(zip(a, b))), name + " key") and \
                self._all(((ka, a[ka], b[kb]) for ka, kb in zip(a, b)), name)
        if isinstance(a, (set, frozenset)):
            if all(type(x) in _LEAVES for x in a) and all(type(x) in _LEAVES for x in b):
                return a == b or bool(self.trail.append(f"{sorted(map(repr, a ^ b))} in one {name} only"))
            rest = list(b)
            for x in a:  # (a partner for each: sets of objects are small)
                partner = next((y for y in rest if _Same()(x, y)), None)
                if partner is None:
                    self.trail.append(f"{x!r} in one {name} only")
                    return False
                rest.remove(partner)
                self(x, partner)
            return not rest
        if isinstance(a, (re.Pattern, regex.Pattern)):
            return self(a.pattern, b.pattern) and self(a.flags, b.flags)
        if isinstance(a, types.FunctionType):
            return self._all((
                ("module", a.__module__, b.__module__), ("name", a.__qualname__, b.__qualname__),
                ("code", a.__code__, b.__code__), ("defaults", a.__defaults__, b.__defaults__),
                ("kwdefaults", a.__kwdefaults__, b.__kwdefaults__),
                ("closure", tuple(c.cell_contents for c in a.__closure__ or ()),
                 tuple(c.cell_contents for c in b.__closure__ or ())),
            ), a.__qualname__)
        if isinstance(a, types.CodeType):
            return self._all((("code", a.co_code, b.co_code), ("consts", a.co_consts, b.co_consts),
                              ("names", a.co_names, b.co_names)), a.co_qualname)
        if isinstance(a, (types.BuiltinFunctionType, types.MethodType, types.MethodWrapperType)):
            owners = [getattr(x, "__self__", None) for x in (a, b)]
            owners = [None if isinstance(o, types.ModuleType) else o for o in owners]
            return self._all((("name", a.__qualname__, b.__qualname__), ("self", *owners),
                              ("func", getattr(a, "__func__", None), getattr(b, "__func__", None))), name)
        if isinstance(a, (types.MethodDescriptorType, types.WrapperDescriptorType, types.ClassMethodDescriptorType,
                          types.GetSetDescriptorType, types.MemberDescriptorType)):
            # (a compiled class's methods and attributes: its code is its class's)
            return self._all((("name", a.__qualname__, b.__qualname__),
                              ("class", f"{a.__objclass__.__module__}.{a.__objclass__.__qualname__}",
                               f"{b.__objclass__.__module__}.{b.__objclass__.__qualname__}")), name)
        if isinstance(a, functools.partial):
            return self._all((("func", a.func, b.func), ("args", a.args, b.args),
                              ("keywords", a.keywords, b.keywords)), name)
        if isinstance(a, type):
            return self._all((("name", f"{a.__module__}.{a.__qualname__}", f"{b.__module__}.{b.__qualname__}"),
                              ("bases", a.__bases__, b.__bases__), ("attributes", _own(a), _own(b))),
                             a.__qualname__)
        if isinstance(a, (types.ModuleType, staticmethod, classmethod, property, cached_property)):
            return self(*(repr(getattr(x, "__name__", getattr(x, "__func__", ""))) for x in (a, b)))
        return self._all((("fields", _fields(a), _fields(b)),), name)


def _own(klass: type) -> dict[str, object]:
    """A class's own attributes, by name."""
    return dict(sorted((k, v) for k, v in vars(klass).items() if not (k.startswith("__") and k.endswith("__"))))


def _fields(obj: object) -> dict[str, object]:
    """An object's attributes, by name, but the caches it fills as it runs."""
    kind = type(obj)
    fields: dict[str, object] = {}
    if hasattr(obj, "__dict__"):
        fields.update(vars(obj))
    for slot in getattr(kind, "__slots__", ()):
        if hasattr(obj, slot):
            fields[slot] = getattr(obj, slot)
    # A class mypyc compiled (the compiled build) keeps its attributes natively, with
    # no __dict__ or __slots__; it lists them in __mypyc_attrs__ (its closures too).
    for klass in kind.__mro__:
        for attr in getattr(klass, "__mypyc_attrs__", ()):
            if not attr.startswith("__") or attr == "__mypyc_env__":
                if hasattr(obj, attr):
                    fields[attr] = getattr(obj, attr)
    assert fields or dataclasses.is_dataclass(obj), f"no way to compare a {kind.__qualname__}"
    return dict(sorted((k, v) for k, v in fields.items() if k not in _FILLED_AS_IT_RUNS))


def _package_memos() -> list[Any]:
    """Every ``functools`` cache in the package's modules (``lru_cache``, ``cache``)."""
    found: dict[int, Any] = {}
    for modname, module in list(sys.modules.items()):
        if modname == "callsieve" or modname.startswith("callsieve."):
            for value in vars(module).values():
                if callable(value) and hasattr(value, "cache_clear") and hasattr(value, "cache_info"):
                    found[id(value)] = value
    return list(found.values())


def _cold(dialects: tuple[Dialect, ...], options: dict[str, Any]) -> tuple[Machine, CompiledMachine, WholeBlocks]:
    """A machine composed and compiled with every memo of the package empty, and through
    none of the caches of whole machines (``compose``, ``compiled``, ``whole_blocks``:
    ``KeptBySize``, not ``functools`` memos, so left as they are)."""
    memos = _package_memos()
    assert any(getattr(m, "__name__", "") == "_reads_same" for m in memos)  # (the helpers are found)
    for memo in memos:
        memo.cache_clear()
    machine = machine_module._Composer(dialects, options.get("reasoning", True), options.get("calls_in_reasoning", "dialect"),
                                       options.get("strict", False), options["bare_calls"]).compose()
    table = compile_machine(machine)
    return machine, table, WholeBlocks(machine, table.steps_rest, table.class_of, table.bulk, table.table)


def _sieve_parts(s: callsieve.Sieve) -> tuple[Machine, CompiledMachine, WholeBlocks]:
    runner = s.runner
    assert isinstance(runner, CompiledRunner) and runner.whole is not None
    return s.machine, runner.c, runner.whole


def _matchers(m: Machine) -> list[Any]:
    return [*m.matchers.values(), *(x for by in m.scoped.values() for x in by.values()), m.openers]


#: Every registered dialect alone (as ``Sieve([name])`` composes it: bare calls read),
#: the default ``Sieve()`` (every built-in dialect, no bare calls), and sets with each
#: option the machine depends on.
FINGERPRINTED: list[tuple[list[str] | None, dict[str, Any]]] = [
    *(([name], {"bare_calls": True}) for name in callsieve.DIALECTS),
    (None, {"bare_calls": False}),
    (["hermes", "qwen3_coder", "glm45"], {"bare_calls": True, "calls_in_reasoning": "call"}),
    (["mistral", "xlam", "kimi_k2"], {"bare_calls": True, "strict": True}),
    (["harmony", "dsml", "llama3_json"], {"bare_calls": False, "reasoning": False}),
]


@pytest.mark.parametrize("names, options", FINGERPRINTED,
                         ids=lambda x: ",".join(x) if isinstance(x, list) else "-".join(f"{k}={v}" for k, v in x.items())
                         if isinstance(x, dict) else str(x))
def test_a_machine_through_every_cache_is_the_machine_composed_with_none(names: list[str] | None,
                                                                          options: dict[str, Any]) -> None:
    warm = callsieve.Sieve(names, **options)
    again = callsieve.Sieve(names, **options)
    # The caches of whole machines: a second sieve of the same dialects runs the same
    # machine and table (shared: read only, every stream's state is on its own model).
    assert again.machine is warm.machine and _sieve_parts(again) == _sieve_parts(warm)
    # Equal dialects that are other objects find the same machine too (by value).
    copies = tuple(dataclasses.replace(d) for d in warm.dialects)
    assert copies == warm.dialects and all(c is not d for c, d in zip(copies, warm.dialects))
    assert callsieve.Sieve(list(copies), **options).machine is warm.machine
    cold = _cold(warm.dialects, options)
    assert cold[0] is not warm.machine
    assert cold[0].decl == warm.machine.decl
    same = _Same()
    for made, cached in zip(cold, _sieve_parts(warm)):
        assert same(made, cached), f"{type(made).__name__}: " + " in ".join(same.trail)
    # A matcher's alternation is compiled when first used (memoised by its text): each
    # is the pattern of its own alternation, cold or warm.
    for m in _matchers(cold[0]) + _matchers(warm.machine):
        assert m is None or not m._alts or m._load().pattern == m._alts


def test_the_comparison_tells_machines_apart() -> None:
    """(The comparison above can fail: machines that differ are told apart, in their
    declaration, their matchers and their table; equal copies are not.)"""
    hermes, qwen = callsieve.Sieve(["hermes"]), callsieve.Sieve(["qwen3_coder"])
    strict = callsieve.Sieve(["hermes"], strict=True)
    parts = [_sieve_parts(s) for s in (hermes, qwen, strict)]
    for k in range(2):  # the machine, the table
        for i in range(3):
            for j in range(3):
                assert _Same()(parts[i][k], parts[j][k]) == (i == j)
    assert not _Same()(parts[0][2], parts[1][2])  # the whole-block readers (strict or not: alike)
    assert not _Same()(hermes.machine.matchers, qwen.machine.matchers)
    differ = _Same()
    assert not differ(hermes.machine.decl, strict.machine.decl) and differ.trail
    # Equal copies are the same; a one-character difference deep inside is found, and
    # where it lies is said.
    decl = hermes.machine.decl
    assert _Same()(decl, copy.deepcopy(decl))
    changed = copy.deepcopy(decl)
    last = changed.transitions[-1]
    object.__setattr__(changed, "transitions", (*changed.transitions[:-1], dataclasses.replace(last, dest=last.dest + "x")))
    told = _Same()
    assert not told(decl, changed) and "x" in told.trail[0], told.trail


# ------------------------------------------------------------ sieves of one machine

DOCS = [
    'Hi <tool_call>{"name": "f", "arguments": {"k": 1}}</tool_call> and `<tool_call>` in code.',
    "<think>maybe <tool_call>\n</think>\n<tool_call>\n<function=w>\n<parameter=c>\nx < y\n</parameter>\n"
    "</function>\n</tool_call> done",
    '[TOOL_CALLS]get[ARGS]{"a": [1, 2]} then <|tool_calls_section_begin|> broken <tool_call',
    "```\n<tool_call>{}</tool_call>\n```\n<tool_calls>\n<invoke name=\"w\">\n<parameter name=\"c\">"
    "<![CDATA[a]]>b]]></parameter>\n</invoke>\n</tool_calls>",
]


@pytest.mark.parametrize("runner", ["compiled", "reference"])
@pytest.mark.parametrize("size", [1, 2, 3, 7])
def test_sieves_of_one_cached_machine_keep_their_streams_apart(runner: str, size: int) -> None:
    """Sieves built from one cached machine share its tables (read only) and nothing
    they write: fed in turn, each cut its own way, each stream ends as it does alone."""
    cuts = [[d[i : i + size + k] for i in range(0, len(d), size + k)] for k, d in enumerate(DOCS)]
    alone = [merged(run(parts, runner=runner)) for parts in cuts]
    sieves = [callsieve.Sieve(runner=runner, id_prefix="call_") for _ in DOCS]  # type: ignore[arg-type]
    assert all(s.machine is sieves[0].machine for s in sieves)
    assert len({id(s._ctx) for s in sieves}) == len(sieves)
    out: list[list[callsieve.Event]] = [[] for _ in DOCS]
    for step in range(max(map(len, cuts))):
        for k, parts in enumerate(cuts):
            if step < len(parts):
                out[k] += sieves[k].feed(parts[step])
    assert [merged(o + s.close()) for o, s in zip(out, sieves)] == alone
    assert all(any(isinstance(e, callsieve.ToolCall) for e in a) for a in alone)


def test_dialects_made_afresh_keep_no_more_than_a_bounded_number_alive() -> None:
    """The registry knows a dialect object it has checked by its identity (keeping it
    alive, so that its id is no other's): a program that makes equal dialects afresh,
    one per request, must not keep them all."""
    import callsieve.grammar.registry as registry

    hermes = registry.REGISTRY["hermes"]
    copies = [dataclasses.replace(hermes) for _ in range(registry._CHECKED_IDS_MAX + 100)]
    for d in copies:
        assert resolve([d]) == (d,)
    assert len(registry._checked_ids) <= registry._CHECKED_IDS_MAX
    assert sum(1 for d in registry._checked_ids.values() if d == hermes) < len(copies)
    # And the machines they compose are found by value, the objects kept by identity
    # no more than the machines ``compose`` keeps.
    machines = {id(compose((d,))) for d in copies[: machine_module._COMPOSED_MAX + 20]}
    assert len(machines) == 1
    few, many = machine_module._composed_by_identity.parts
    assert len(few) <= machine_module._COMPOSED_MAX and len(many) <= machine_module._COMPOSED_MANY_MAX


#: Every cache of whole machines: each keeps the large ones apart.
WHOLE_MACHINE_CACHES = [machine_module._composed_by_identity, machine_module._composed_by_value,
                        sieve_module._compiled, sieve_module._whole_blocks]


@contextlib.contextmanager
def whole_machine_caches_put_back() -> Iterator[None]:
    """The caches of whole machines as they were before, after the block: a test that
    fills them leaves this process's other tests the machines they had (composing
    afresh what it pushed out would cost more than the test)."""
    saved = [[part.copy() for part in cache.parts] for cache in WHOLE_MACHINE_CACHES]
    try:
        yield
    finally:
        for cache, parts in zip(WHOLE_MACHINE_CACHES, saved):
            for part, was in zip(cache.parts, parts):
                part.clear()
                part.update(was)


def test_the_machine_of_every_dialect_outlives_a_stream_of_small_compositions() -> None:
    """The default ``Sieve()`` composes every dialect (the most costly machine to make,
    and the one most programs run): however many distinct one-dialect machines are
    composed and compiled after it, every cache of whole machines still holds it, each
    within its bounds."""
    every = callsieve.Sieve()
    assert machine_module.composed_of_many(every.machine)
    parts = _sieve_parts(every)
    glm45 = REGISTRY["glm45"]
    # (by value: equal dialects that are other objects; the machine ``every`` runs unless
    # eight other large machines were looked up by value since)
    by_value = callsieve.Sieve([dataclasses.replace(d) for d in every.dialects], bare_calls=False).machine
    with whole_machine_caches_put_back():
        for i in range(machine_module._COMPOSED_MAX + 8):
            # (distinct values: each one composed, compiled and read whole afresh)
            small = compose((dataclasses.replace(glm45, name=f"glm45_{i}"),), False, "dialect", True, False)
            assert not machine_module.composed_of_many(small)
            sieve_module.whole_blocks(small)
        for cache in WHOLE_MACHINE_CACHES:
            few, many = cache.parts
            assert len(few) == machine_module._COMPOSED_MAX and 1 <= len(many) <= machine_module._COMPOSED_MANY_MAX
        again = callsieve.Sieve()
        assert again.machine is every.machine
        assert all(a is b for a, b in zip(_sieve_parts(again), parts))
        assert callsieve.Sieve([dataclasses.replace(d) for d in every.dialects], bare_calls=False).machine is by_value


def test_a_cache_of_whole_machines_keeps_each_part_to_its_bound_least_recently_used_out() -> None:
    cache: machine_module.KeptBySize[int, str] = machine_module.KeptBySize(3, 2)
    for k in range(5):
        cache.put(k, f"few{k}", many=False)
    assert list(cache.parts[0]) == [2, 3, 4] and not cache.parts[1]
    cache.put(10, "many10", many=True)
    cache.put(11, "many11", many=True)
    assert cache.get(10, many=True) == "many10"  # (used: now the last out)
    assert cache.get(10, many=False) is None  # (each key in the part the caller says)
    for k in range(5, 9):
        cache.put(k, f"few{k}", many=False)
    cache.put(12, "many12", many=True)
    assert list(cache.parts[0]) == [6, 7, 8] and list(cache.parts[1]) == [10, 12]
    assert cache.get(2, many=False) is None and len(cache) == 5
    cache.clear()
    assert len(cache) == 0
