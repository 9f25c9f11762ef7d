"""The built-in dialects, by name, and :func:`register` for a user's own."""

from __future__ import annotations

import difflib
import re
from typing import Iterable

from callsieve.grammar import (
    apertus,
    cohere_command,
    deepseek,
    dsml,
    ernie45,
    gemma4,
    gigachat3,
    glm45,
    granite,
    harmony,
    hermes,
    hunyuan,
    inkling,
    internlm,
    kimi_k2,
    kimi_k3,
    lfm2,
    llama3_json,
    longcat,
    minimax_m2,
    mistral,
    nemotron,
    olmo3,
    phi4_mini,
    pythonic,
    qwen3_coder,
    seed_oss,
    step3,
    xlam,
    xml,
)
from callsieve.grammar.api import Dialect, validate
from callsieve.grammar.errors import GrammarError, UnknownDialectError

REGISTRY: dict[str, Dialect] = {
    d.name: d
    for d in (
        dsml.DIALECT, xml.DIALECT, qwen3_coder.DIALECT, minimax_m2.DIALECT,
        hermes.DIALECT, glm45.DIALECT, kimi_k2.DIALECT, deepseek.V3, deepseek.V31, mistral.DIALECT, harmony.DIALECT,
        # the long tail (dialects-long-tail.md)
        granite.DIALECT, granite.DIALECT_20B, nemotron.DIALECT, cohere_command.DIALECT, seed_oss.DIALECT,
        internlm.DIALECT, hunyuan.DIALECT, step3.DIALECT, longcat.DIALECT, gigachat3.DIALECT, inkling.DIALECT,
        kimi_k3.DIALECT, apertus.DIALECT, lfm2.DIALECT, ernie45.DIALECT, olmo3.DIALECT,
        gemma4.DIALECT, phi4_mini.DIALECT, llama3_json.DIALECT, pythonic.DIALECT, xlam.DIALECT,
    )
}
#: The built-in names; ``Sieve()`` (dialects=None) enables these, not registered extras.
BUILTIN: tuple[str, ...] = tuple(REGISTRY)
#: The built-in dialects of dialects-long-tail.md (the formats added after the first
#: eleven; each file's docstring cites its section).
LONG_TAIL: tuple[str, ...] = BUILTIN[BUILTIN.index("granite"):]

#: The names other serving stacks give these formats (vLLM's and SGLang's
#: ``--tool-call-parser`` values, their parser files' stems), each to the built-in
#: dialect that reads the same wire format. Looked up after the registry, spelled as
#: :func:`canonical_name` spells them (``minimax-m2`` is ``minimax_m2``), so switching
#: from a server's parser is one name. Sources: shared/reference/dialects.md §11 and
#: dialects-long-tail.md §0.
ALIASES: dict[str, str] = {
    # Llama 3.x / 4 JSON (vLLM llama3_json, llama4_json; SGLang llama3)
    "llama3": "llama3_json",
    "llama4_json": "llama3_json",
    # Python call lists (vLLM pythonic, llama4_pythonic; SGLang pythonic)
    "llama4_pythonic": "pythonic",
    # DeepSeek V3.2 and V4 DSML (vLLM deepseek_v32, SGLang deepseekv32/deepseekv4)
    "deepseek_v32": "dsml",
    "deepseekv32": "dsml",
    "deepseek_v4": "dsml",
    "deepseekv4": "dsml",
    "deepseekv3": "deepseek_v3",
    "deepseek_r1": "deepseek_v3",
    "deepseekv31": "deepseek_v31",
    # Qwen3-Coder XML: vLLM's qwen3_xml and mimo share its engine parser; SGLang
    # routes step3p5 to its Qwen3-Coder detector
    "qwen3_xml": "qwen3_coder",
    "qwen3coder": "qwen3_coder",
    "mimo": "qwen3_coder",
    "step3p5": "qwen3_coder",
    # Hermes JSON: SGLang's qwen25 and qwen detectors
    "qwen25": "hermes",
    "qwen": "hermes",
    # GLM-4.7 / GLM-5 (vLLM glm47; SGLang glm4_moe / glm47_moe)
    "glm47": "glm45",
    "glm4_moe": "glm45",
    "glm47_moe": "glm45",
    "kimik2": "kimi_k2",
    "minimax": "minimax_m2",
    # gpt-oss harmony (vLLM openai, SGLang gpt-oss)
    "openai": "harmony",
    "gpt_oss": "harmony",
    "gptoss": "harmony",
    # the long tail (dialects-long-tail.md §0)
    # DeepSeek V4.1: DSML whose tag names carry a leading space (``<｜DSML｜ invoke``),
    # which the dsml dialect reads (spaces before a tag name are part of its prefix)
    "deepseek_v41": "dsml",
    "deepseekv41": "dsml",
    # Hunyuan-A13B (vLLM hunyuan_a13b, listed with hy_v3; SGLang hunyuan); AI21 Jamba
    # writes the same <tool_calls>[…]</tool_calls> block
    "hunyuan_a13b": "hunyuan",
    "hy_v3": "hunyuan",
    "jamba": "hunyuan",
    # InternLM2 (vLLM internlm), Intern-S1 (SGLang interns1)
    "interns1": "internlm",
    "internlm2": "internlm",
    "cohere_command3": "cohere_command",
    "cohere_command4": "cohere_command",
    "cmd3": "cohere_command",
    "cmd4": "cohere_command",
    "gigachat35": "gigachat3",
    "granite_20b_functioncalling": "granite_20b_fc",
    # Granite 4 writes Hermes blocks, one JSON call per <tool_call> (vLLM granite4)
    "granite4": "hermes",
    "nemotron_json": "nemotron",
    "seedoss": "seed_oss",
    # Ling 3 writes GLM-4.5's grammar; glm45 reads its looser newlines (literal_newline)
    "ling3": "glm45",
    "kimik3": "kimi_k3",
    # Apertus (vLLM apertus, SGLang apertus2509)
    "apertus2509": "apertus",
    # vLLM registers functiongemma beside gemma4 (its file was not read for the reference)
    "functiongemma": "gemma4",
    # Phi-4-mini (vLLM phi4_mini_json)
    "phi4_mini_json": "phi4_mini",
    "phi4mini": "phi4_mini",
}
_checked: set[Dialect] = set()
#: id → a dialect object found in ``_checked`` (kept alive here, so that its id is no
#: other object's): asked again, it is known without hashing it (a dialect hashes its
#: whole declaration, ~20 µs; every Sieve() asked it of each of its dialects). Bounded:
#: a program that makes equal dialects afresh keeps no more than these alive.
_checked_ids: dict[int, Dialect] = {}
_CHECKED_IDS_MAX = 1024


def _checked_dialect(d: Dialect) -> Dialect:
    # Validated once per distinct dialect (dialects are frozen: equal ones are equally valid).
    if _checked_ids.get(id(d)) is d:
        return d
    try:
        seen = d in _checked
    except TypeError:  # unhashable: a list where a tuple belongs; validate names the field
        validate(d)
        raise
    if not seen:
        validate(d)
        _checked.add(d)
    if len(_checked_ids) >= _CHECKED_IDS_MAX:
        _checked_ids.clear()
    _checked_ids[id(d)] = d
    return d


def register(dialect: Dialect, *, replace: bool = False) -> Dialect:
    """Make ``dialect`` resolvable by its name (``Sieve(dialects=["acme"])``).

    The dialect is validated now. Registering it again (the same declaration, say a
    module imported twice) changes nothing; a *different* dialect under a name already
    registered raises unless ``replace=True``. The built-in names, and the server
    parser names that stand for them (:data:`ALIASES`), can never be taken.
    """
    if not isinstance(dialect, Dialect):
        raise GrammarError(
            f"register() takes a Dialect object, not {type(dialect).__name__} {dialect!r}"
            + (": a registered dialect is used by name, Sieve(dialects=[" + repr(dialect) + "]); "
               "to register one, build it first, register(Dialect(name=..., title=..., blocks=(...)))"
               if isinstance(dialect, str) else "")
        )
    validate(dialect)
    if dialect.name in BUILTIN:
        raise GrammarError(f"dialect name {dialect.name!r} is a built-in dialect's; give yours another name")
    if dialect.name in ALIASES:
        raise GrammarError(f"dialect name {dialect.name!r} stands for the built-in {ALIASES[dialect.name]} dialect "
                           "(a serving stack's parser name, callsieve.grammar.ALIASES); give yours another name")
    old = REGISTRY.get(dialect.name)
    if old is not None and old != dialect and not replace:
        raise GrammarError(f"a different dialect named {dialect.name!r} is already registered; give this one "
                           "another name, or pass register(..., replace=True) to replace it")
    REGISTRY[dialect.name] = dialect
    return dialect


def canonical_name(name: str) -> str:
    """A dialect name as the registry and :data:`ALIASES` spell it: lower case, ``_``
    for ``-`` and spaces (servers write ``minimax-m2``, ``gpt-oss``)."""
    return re.sub(r"[-\s]+", "_", name.strip().lower())


def lookup(name: str) -> Dialect | None:
    """The dialect a name or alias stands for, or None."""
    if name in REGISTRY:
        return REGISTRY[name]
    key = canonical_name(name)
    if key in REGISTRY:
        return REGISTRY[key]
    target = ALIASES.get(key)
    return REGISTRY.get(target) if target is not None else None


def _unknown(d: object) -> UnknownDialectError:
    names = list(REGISTRY)
    hint = ""
    if isinstance(d, str):
        close = difflib.get_close_matches(canonical_name(d), names + list(ALIASES), n=1)
        if close:
            target = ALIASES.get(close[0])
            hint = f" (did you mean {close[0]!r}" + (f", the {target} dialect" if target else "") + "?)"
    return UnknownDialectError(f"unknown dialect {d!r}{hint}; known: {', '.join(names)}, "
                               "and the server parser names in callsieve.grammar.ALIASES")


def resolve(dialects: Iterable[str | Dialect] | str | Dialect | None) -> tuple[Dialect, ...]:
    """Dialect objects for names or aliases (``None``: all built-in); unknown names raise.

    A string may list several names separated by commas (``"hermes,qwen3_coder"``),
    as the command line's ``--dialects`` does."""
    if dialects is None:
        return tuple(_checked_dialect(REGISTRY[n]) for n in BUILTIN)
    if isinstance(dialects, str):
        dialects = [n for n in (p.strip() for p in dialects.split(",")) if n]
    elif isinstance(dialects, Dialect):
        dialects = [dialects]
    out: list[Dialect] = []
    for d in dialects:
        if isinstance(d, Dialect):
            out.append(_checked_dialect(d))
            continue
        found = lookup(d) if isinstance(d, str) else None
        if found is None:
            raise _unknown(d)
        out.append(_checked_dialect(found))
    if not out:
        raise UnknownDialectError("no dialect given")
    names = [d.name for d in out]
    dup = {n for n in names if names.count(n) > 1}
    if dup:
        raise UnknownDialectError(f"dialect {sorted(dup)[0]!r} given twice")
    return tuple(out)
