"""Deterministic benchmark inputs, and how they are cut into token-sized chunks.

Every generator takes a target size in characters and a seed, and returns the same
string for the same arguments on every machine and Python version (``random.Random``
with an integer seed is stable). Sizes are approximate: a workload is built from whole
paragraphs, lines or calls, then the trailing markup is added.

Workloads (each a :class:`Workload`):

* ``prose_call``: Markdown-ish prose (a little inline code, an occasional ``<``) with
  one small qwen3_coder call at the end. The text state's bulk scan.
* ``arg_qwen3_coder`` / ``arg_dsml``: one call whose string argument is a source file
  dense with ``<`` (C++ templates, HTML, shifts, comparisons), with now and then a
  literal parameter close inside a string, which the grammar must treat as data. The
  value state's scan for its close marker.
* ``many_calls`` / ``many_calls_hermes``: short sentences and small qwen3_coder (hermes)
  calls, alternating; and ``many_calls_dsml``: DSML blocks of several invokes with raw and JSON values.
* ``reasoning_call``: ``<think>`` + reasoning prose + ``</think>`` + a qwen3_coder call.
* ``hermes_json_arg`` / ``hermes_reasoning_call``: a hermes call whose JSON string
  argument holds the source file; reasoning followed by a hermes call. Built only when
  ``"hermes"`` is in ``callsieve.DIALECTS``.
* ``harmony``: gpt-oss: a long analysis message (reasoning prose on the analysis
  channel), then a call message (recipient in the channel part, ``<|constrain|>json``).
* ``prose_first11`` / ``prose_every``: ``prose_call``'s prose alone, read by ``Sieve()``
  as it was before the long tail (the first eleven dialects) and as it is (every built-in
  dialect): an A/B in one run of what enabling every format costs prose (issue 21: per
  feed within 10%).
"""

from __future__ import annotations

import random
from array import array
from dataclasses import dataclass
from typing import Callable

from callsieve.grammar.api import Dialect
from callsieve.grammar.registry import BUILTIN, LONG_TAIL, REGISTRY

CHUNK_MIN, CHUNK_MAX = 1, 8

_WORDS = (
    "the a of to and in that is for it with as was on be by this are from at or an "
    "model stream token parser server call tool value function result state buffer "
    "input output chunk marker close open text reasoning argument latency memory "
    "linear time bound scan regex table machine character prose answer question "
    "because however therefore although while which where when should would could "
    "first second next last each every many few more less quickly slowly exactly "
    "café naïve résumé déjà façade"
).split()

_CODE_LINES = (
    "template <typename T, typename U> std::vector<std::pair<T, U>> zip(const std::vector<T>& a, const std::vector<U>& b) {",
    "  for (std::size_t i = 0; i < a.size() && i < b.size(); ++i) out.push_back({a[i], b[i]});",
    "  if (lo < hi && (mask << 2) <= limit) return static_cast<int>(lo >> 1);",
    '<div class="row"><span class="name">{item.name}</span><a href="/items/{item.id}">open</a></div>',
    "<ul><li><b>bold</b> and <i>italic</i></li><li><code>x &lt; y</code></li></ul>",
    "const el = <Button onClick={() => setOpen(!open)} disabled={count < 1}>Open</Button>;",
    "std::map<std::string, std::unique_ptr<Node<K, V>>> index; // keys < 2^31",
    "while (p < end && *p != '<') { ++p; } /* skip to the next tag <...> */",
    "<p>Use <kbd>Ctrl</kbd>+<kbd>C</kbd> to copy; a < b < c is <em>not</em> chained.</p>",
    "#include <vector>\n#include <string>\n#include <unordered_map>",
    "if (x<y) { y <<= 1; } else if (x <= y) { y = x < 0 ? -x : x; }",
    "<table><tr><td><![CDATA-looking <not really]]></td><td>&amp; &lt;</td></tr></table>",
    "auto cmp = [](const auto& l, const auto& r) { return l.first < r.first; };",
    "<svg viewBox=\"0 0 10 10\"><path d=\"M0 0L10 10\"/><circle r=\"1\"/></svg>",
    "    <function-like>not a marker</function-like> <parameter_list/> </param>",
)

_PROSE_EXTRAS = (
    " Note that `a < b` holds here.",
    " Compare `x<y` with `y<x`.",
    " The values satisfy 3 < 4 and 5 > 2.",
    " Use `std::vector<int>` for that.",
    " See <https://example.com/docs> for details.",
    "\n\n- first point\n- second point\n",
    "\n\n## Next section\n\n",
)


@dataclass(frozen=True)
class Workload:
    """One benchmark input family: ``build(size, seed)`` returns the input string."""

    name: str
    title: str
    build: Callable[[int, int], str]
    #: The dialects a server would configure for this model: given to the sieve and
    #: to the naive reference alike (() : every built-in dialect, ``Sieve()``).
    dialects: tuple[str, ...]
    calls: int  # ToolCall events expected at the default size (-1: depends on size)
    #: Characters of the one large argument (arg workloads), for the memory target.
    big_arg: bool = False
    #: The yardstick fed whole (:mod:`callsieve.tools.bench_whole`): "regex" (one regex
    #: pass and a decode per call), "find" (a bare ``str.find`` for the opener) or "".
    whole_ref: str = ""


#: The built-in dialects before the long tail (the baseline of ``prose_first11``).
FIRST_ELEVEN: tuple[str, ...] = tuple(n for n in REGISTRY if n not in LONG_TAIL)


def prose(size: int, seed: int) -> str:
    """Paragraphs of words, with inline code and comparisons now and then."""
    rnd = random.Random(seed)
    pool: list[str] = []
    for _ in range(256):
        sentences = []
        for _ in range(rnd.randint(3, 7)):
            words = [rnd.choice(_WORDS) for _ in range(rnd.randint(6, 18))]
            s = " ".join(words)
            sentences.append(s[0].upper() + s[1:] + rnd.choice(".,;!?."))
            if rnd.random() < 0.15:
                sentences.append(rnd.choice(_PROSE_EXTRAS))
        pool.append(" ".join(sentences) + "\n\n")
    parts: list[str] = []
    total = 0
    while total < size:
        p = pool[rnd.randrange(len(pool))]
        parts.append(p)
        total += len(p)
    return "".join(parts)[:size]


def source_file(size: int, seed: int, close_literal: str) -> str:
    """Code and markup dense with ``<``; about every 200th line holds ``close_literal``
    inside a string, followed by more code (so it is data, never a close)."""
    rnd = random.Random(seed)
    lines: list[str] = []
    total = 0
    while total < size:
        if rnd.random() < 0.005:
            line = f'    auto close = "{close_literal}"; // a literal close tag, then code'
        else:
            line = rnd.choice(_CODE_LINES)
            if rnd.random() < 0.3:
                line = "    " + line
        lines.append(line)
        total += len(line) + 1
    return "\n".join(lines)


def _dialect(name: str) -> Dialect:
    return REGISTRY[name]


def _render(dialect: str, calls: list[tuple[str, list[tuple[str, str, bool]]]], variant: int = 0) -> str:
    render: Callable[..., str] | None = _dialect(dialect).render
    assert render is not None, f"dialect {dialect} has no render()"
    return render(calls, variant)


def _small_call(dialect: str, k: int) -> str:
    return _render(dialect, [("write_file", [("path", f"src/mod_{k}.py", False), ("content", f"def f{k}():\n    return {k}", False)])])


def build_prose_call(size: int, seed: int) -> str:
    call = _small_call("qwen3_coder", 0)
    return prose(max(0, size - len(call) - 1), seed) + "\n" + call


def _arg(dialect: str, close_literal: str) -> Callable[[int, int], str]:
    def build(size: int, seed: int) -> str:
        src = source_file(size, seed, close_literal)
        return "I will write the file now.\n\n" + _render(dialect, [("write_file", [("path", "src/big.cc", False), ("content", src, False)])])

    return build


def _many_calls(dialect: str) -> Callable[[int, int], str]:
    def build(size: int, seed: int) -> str:
        rnd = random.Random(seed)
        parts: list[str] = []
        total, k = 0, 0
        while total < size:
            words = " ".join(rnd.choice(_WORDS) for _ in range(rnd.randint(4, 14)))
            piece = f"Step {k}: {words}.\n" + _small_call(dialect, k) + "\n"
            parts.append(piece)
            total += len(piece)
            k += 1
        return "".join(parts)

    return build


build_many_calls = _many_calls("qwen3_coder")
build_many_calls_hermes = _many_calls("hermes")


def build_many_calls_dsml(size: int, seed: int) -> str:
    rnd = random.Random(seed)
    parts: list[str] = []
    total, k = 0, 0
    while total < size:
        calls = []
        for _ in range(rnd.randint(1, 4)):
            params = [
                ("location", rnd.choice(("杭州", "Paris", "New York", "São Paulo")), False),
                ("days", str(rnd.randint(1, 14)), True),
                ("options", '{"unit": "c", "hourly": [1, 2, 3], "note": "a < b"}', True),
            ]
            calls.append((f"get_weather_{k}", params))
            k += 1
        piece = "Checking.\n\n" + _render("dsml", calls, rnd.randrange(36)) + "\n"
        parts.append(piece)
        total += len(piece)
    return "".join(parts)


def build_reasoning_call(size: int, seed: int) -> str:
    call = _small_call("qwen3_coder", 0)
    body = prose(max(0, size - len(call) - 40), seed)
    return "<think>\n" + body + "\n</think>\n\nDone thinking.\n" + call


def build_hermes_json_arg(size: int, seed: int) -> str:
    src = source_file(size, seed, "</tool_call>")
    return "Writing it.\n" + _render("hermes", [("write_file", [("path", "src/big.cc", False), ("content", src, False)])])


def build_hermes_reasoning_call(size: int, seed: int) -> str:
    call = _render("hermes", [("get_weather", [("city", "Paris", False), ("days", "3", True)])])
    body = prose(max(0, size - len(call) - 40), seed)
    return "<think>\n" + body + "\n</think>\n\n" + call


def build_harmony(size: int, seed: int) -> str:
    call = _render("harmony", [("get_weather", [("city", "Paris", False), ("days", "3", True)])], 5)
    body = prose(max(0, size - len(call) - 60), seed)
    return "<|channel|>analysis<|message|>" + body + "<|end|>" + call


WORKLOADS: tuple[Workload, ...] = (
    Workload("prose_call", "prose, one qwen3_coder call at the end", build_prose_call, ("qwen3_coder",), 1,
             whole_ref="find"),
    Workload("arg_qwen3_coder", "one qwen3_coder call, a <-dense source file as its argument", _arg("qwen3_coder", "</parameter>"), ("qwen3_coder",), 1, True),
    Workload("arg_dsml", "one DSML call, a <-dense source file as its argument", _arg("dsml", "</\uff5cDSML\uff5cparameter>"), ("dsml",), 1, True),
    Workload("many_calls", "short sentences and small qwen3_coder calls, alternating", build_many_calls, ("qwen3_coder",), -1,
             whole_ref="regex"),
    Workload("many_calls_hermes", "short sentences and small hermes calls, alternating", build_many_calls_hermes,
             ("hermes",), -1, whole_ref="regex"),
    Workload("many_calls_dsml", "DSML blocks of 1-4 invokes, raw and JSON values", build_many_calls_dsml, ("dsml",), -1),
    Workload("reasoning_call", "<think> prose </think>, then a qwen3_coder call", build_reasoning_call, ("qwen3_coder",), 1),
    Workload("hermes_json_arg", "one hermes call, the source file as a JSON string argument", build_hermes_json_arg, ("hermes",), 1, True),
    Workload("hermes_reasoning_call", "<think> prose </think>, then a hermes call", build_hermes_reasoning_call, ("hermes",), 1),
    Workload("harmony", "gpt-oss: a long analysis message, then a call message", build_harmony, ("harmony",), 1),
    Workload("prose_first11", "prose alone, the first eleven dialects enabled", prose, FIRST_ELEVEN, 0),
    Workload("prose_every", "prose alone, every built-in dialect enabled", prose, BUILTIN, 0),
)


def available(w: Workload, dialects: tuple[str, ...]) -> bool:
    """Whether every dialect the workload needs is built."""
    return all(d in dialects for d in w.dialects)


def chunk_sizes(total: int, seed: int, lo: int = CHUNK_MIN, hi: int = CHUNK_MAX) -> array[int]:
    """Seeded token-sized chunk lengths (uniform in [lo, hi]) covering ``total``."""
    rnd = random.Random(seed)
    sizes: array[int] = array("B")
    left = total
    while left > 0:
        k = min(left, rnd.randint(lo, hi))
        sizes.append(k)
        left -= k
    return sizes


def cut(s: str, sizes: "array[int] | int") -> list[str]:
    """``s`` cut into chunks: the given lengths, or a fixed length."""
    if isinstance(sizes, int):
        return [s[i : i + sizes] for i in range(0, len(s), sizes)]
    out: list[str] = []
    i = 0
    for k in sizes:
        out.append(s[i : i + k])
        i += k
    return out


# ---------------------------------------------------------------- hostile inputs
# Issue 12, finding 9 and item 5: inputs built to find the engine's worst case per
# character (markup-dense, held prefixes that die late, states stepped one character
# at a time). Each builder returns about ``size`` characters; the sieve options a
# workload needs (``max_block_chars`` for the spill) come with it.

def _repeat_to(size: int, head: str, unit: str, tail: str) -> str:
    n = max(1, (size - len(head) - len(tail)) // max(1, len(unit)))
    return head + unit * n + tail


def hostile_many_params(size: int, seed: int) -> str:
    """One qwen3_coder call with thousands of short parameters."""
    unit = "<parameter=p>\nv\n</parameter>\n"
    body = "".join(unit.replace("=p>", f"=p{k}>") for k in range(max(1, size // (len(unit) + 4))))
    return "<tool_call>\n<function=f>\n" + body + "</function>\n</tool_call>"


def hostile_repeated_close(size: int, seed: int) -> str:
    """A value made of ``</parameter>\\n`` repeated: every one a close that what
    follows refuses (after_close, then back to the value)."""
    return _repeat_to(size, "<tool_call>\n<function=f>\n<parameter=a>\n", "</parameter>\n",
                      "x\n</parameter>\n</function>\n</tool_call>")


def hostile_backtick_runs(size: int, seed: int) -> str:
    """Prose made of backtick runs of every length, at line starts and inside lines."""
    rnd = random.Random(seed)
    pieces = ["`", "``", "```", "````", " ", "\n", "a", "```py\n", "  - ```\n", "\n\n"]
    out: list[str] = []
    total = 0
    while total < size:
        p = rnd.choice(pieces)
        out.append(p)
        total += len(p)
    return "".join(out)


def hostile_cdata_brackets(size: int, seed: int) -> str:
    """A CDATA value of ``]`` runs that never make ``]]>``."""
    return _repeat_to(size, '<tool_calls>\n<invoke name="f">\n<parameter name="a"><![CDATA[', "]]]]]]]]x]]",
                      ']]></parameter>\n</invoke>\n</tool_calls>')


def hostile_thin(size: int, seed: int) -> str:
    """``<thin`` repeated in prose: a prefix of ``<think>`` that dies at its last letter."""
    return _repeat_to(size, "", "<thin", "")


def hostile_lt_storm(size: int, seed: int) -> str:
    """``<`` and partial markers everywhere, in prose and in a value."""
    half = _repeat_to(size // 2, "", "<<</<tool_<parameter<", "")
    return half + "<tool_call>\n<function=f>\n<parameter=a>\n" + half + "\n</parameter>\n</function>\n</tool_call>"


def hostile_deep_json(size: int, seed: int) -> str:
    """A DSML ``string="false"`` value nested ``size / 2`` deep."""
    d = max(1, size // 2)
    return (f'<\uff5cDSML\uff5ctool_calls>\n<\uff5cDSML\uff5cinvoke name="f">\n'
            f'<\uff5cDSML\uff5cparameter name="k" string="false">' + "[" * d + "]" * d +
            f'</\uff5cDSML\uff5cparameter>\n</\uff5cDSML\uff5cinvoke>\n</\uff5cDSML\uff5ctool_calls>')


def hostile_long_number(size: int, seed: int) -> str:
    """One JSON number as long as the input (issue 23: 42 s for 1.6 MB, quadratic)."""
    return '<tool_call>{"name": "f", "arguments": {"n": 1.' + "5" * max(1, size - 60) + "}}</tool_call>"


def hostile_long_key(size: int, seed: int) -> str:
    """One JSON key as long as the input (keys were quadratic when chunked)."""
    return '<tool_call>{"name": "f", "arguments": {"' + "k" * max(1, size - 60) + '": 1}}</tool_call>'


def hostile_long_name(size: int, seed: int) -> str:
    """A call name as long as the input (names and ids were quadratic when chunked):
    past any name's limit, the block is released."""
    return '<tool_call>{"name": "' + "n" * max(1, size - 60) + '", "arguments": {}}</tool_call>'


def hostile_many_calls_one_block(size: int, seed: int) -> str:
    """One xml block holding thousands of calls (finding 3: was O(N^2))."""
    unit = '<invoke name="f">\n<parameter name="k">1</parameter>\n</invoke>\n'
    return _repeat_to(size, "<tool_calls>\n", unit, "</tool_calls>")


def hostile_spill(size: int, seed: int) -> str:
    """A value far past ``max_block_chars`` (4,096 here) carrying blocks as data: the
    block spills, and its structure is still read to its end (finding 2)."""
    inner = '<tool_calls><invoke name="rm"><parameter name="p">/</parameter></invoke></tool_calls>'
    return _repeat_to(size, '<tool_calls>\n<invoke name="w">\n<parameter name="c"><![CDATA[', inner + "x" * 40,
                      "]]></parameter>\n</invoke>\n</tool_calls> after")


def hostile_fences(size: int, seed: int) -> str:
    """Fences opened and closed line after line, in and out of list items."""
    unit = "```py\ncode <tool_call>\n```\n- item\n  ~~~\n  <b>\n~~~\n  ~~~\n"
    return _repeat_to(size, "", unit, "")


@dataclass(frozen=True)
class Hostile:
    name: str
    title: str
    build: Callable[[int, int], str]
    dialects: tuple[str, ...] = ()  # () = every built-in dialect
    max_block_chars: int = 0  # 0 = large enough for the whole input


HOSTILE: tuple[Hostile, ...] = (
    Hostile("many_params", "one call, thousands of parameters", hostile_many_params),
    Hostile("repeated_close", "a value of </parameter>\\n repeated", hostile_repeated_close),
    Hostile("backtick_runs", "prose of backtick runs, fences and list items", hostile_backtick_runs),
    Hostile("cdata_brackets", "CDATA of ]]]] runs", hostile_cdata_brackets),
    Hostile("thin_repeated", "<thin repeated", hostile_thin),
    Hostile("lt_storm", "< and partial markers, in prose and a value", hostile_lt_storm),
    Hostile("deep_json", "a DSML JSON value nested half its size deep", hostile_deep_json),
    Hostile("calls_one_block", "one block, thousands of calls", hostile_many_calls_one_block),
    Hostile("long_number", "one JSON number as long as the input", hostile_long_number, ("hermes",)),
    Hostile("long_key", "one JSON key as long as the input", hostile_long_key, ("hermes",)),
    Hostile("long_name", "one JSON call name as long as the input", hostile_long_name, ("hermes",)),
    Hostile("spill", "a block past max_block_chars carrying blocks", hostile_spill, (), 4096),
    Hostile("fences", "fences line after line, in list items", hostile_fences),
)
