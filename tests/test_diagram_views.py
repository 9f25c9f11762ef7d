"""Diagrams of machines other than the committed ones: a user's own dialect, dialects that
share an opener (the ``fork`` choice), and the legend's code points for characters a
font may lack."""

from __future__ import annotations

import html
import re
import unicodedata

from callsieve.grammar import qwen3_coder
from callsieve.grammar.api import Block, Call, Dialect, Many, Marker, Param, Raw
from callsieve.grammar.registry import REGISTRY
from callsieve.grammar.tags import close_tag, open_tag
from callsieve.tools.diagrams import dialect_dot, render_dot, view_of, views

#: A test dialect that opens with qwen3_coder's <tool_call> but calls with <invoke>:
#: enabled together, the machine decides between them by what follows the opener.
TWIN = Dialect(
    name="twin",
    title="a test dialect sharing <tool_call>",
    blocks=(Block(
        qwen3_coder.TOOL_CALL,
        Many(Call(
            Marker(open_tag("invoke"), ('<invoke name="f">',), '<invoke name="…">'),
            Many(Param(Marker(open_tag("arg"), ('<arg name="k">',), '<arg name="…">'),
                       Raw(Marker(close_tag("arg"), ("</arg>",), "</arg>")))),
            close=Marker(close_tag("invoke"), ("</invoke>",), "</invoke>"),
        ), min=1),
        qwen3_coder.TOOL_CALL_END,
    ),),
)

EDGE = re.compile(r'^\s*"([^"]+)" -> "([^"]+)" \[(.*)\]$', re.M)


def _edges(dot: str, src: str) -> dict[str, str]:
    return {m.group(2): m.group(3) for m in EDGE.finditer(dot) if m.group(1) == src and "invis" not in m.group(3)}


def _node(dot: str, name: str) -> str:
    return next(m.group(0) for m in re.finditer(rf'^\s*"{re.escape(name)}" \[.*$', dot, re.M))


def test_a_users_own_dialect_is_drawn() -> None:
    dot = dialect_dot([TWIN])
    assert dot == render_dot(view_of([TWIN]))
    for state in ("twin.in_block", "twin.in_call", "in_param", "after_close"):
        assert f'"{state}" [' in dot
    assert "&lt;/arg&gt; in in_param (raw)" in dot  # its own markers label its guards
    assert '"fork" [' not in dot  # one dialect shares nothing


def test_a_shared_opener_is_a_choice_labelled_by_dialect_and_decider() -> None:
    dot = dialect_dot([qwen3_coder.DIALECT, TWIN])
    fork = _node(dot, "fork")
    assert 'shape="diamond"' in fork
    out = _edges(dot, "fork")
    # One edge per candidate, labelled with the dialect and the markers that choose it
    # (its decider: what may follow the opener in that dialect).
    (shared,) = view_of([qwen3_coder.DIALECT, TWIN]).machine.forks
    for c in shared.candidates:
        decider = " | ".join(html.escape(e.marker.shown(), quote=False) for e in c.decider.entries)
        assert f"[{c.dialect}: next is {decider}]" in out[f"{c.dialect}.in_block"]
        assert "fork_bind" in out[f"{c.dialect}.in_block"]
    assert "&lt;function=…&gt;" in out["qwen3_coder.in_block"] and "&lt;invoke name=" in out["twin.in_block"]
    # else: nothing reads what follows, the opener is released as text (red).
    assert "[else]" in out["text"] and "fork_release" in out["text"] and 'color="#b03a2e"' in out["text"]
    # The shared opener in prose leads to the fork, not into either dialect.
    into = [m.group(3) for m in EDGE.finditer(dot) if (m.group(1), m.group(2)) == ("maybe_tag", "fork")]
    assert len(into) == 1 and "if: fork:text:<tool_call>" in into[0]
    assert "[&lt;tool_call&gt; in text, shared by qwen3_coder | twin]" in into[0]
    assert "◇ fork" in _node(dot, "legend")


def test_views_include_one_per_shared_opener() -> None:
    vs = views([qwen3_coder.DIALECT, TWIN])
    assert [v.name for v in vs] == ["dialect-qwen3_coder", "dialect-twin", "opener-tool_call"]
    opener = vs[-1]
    assert [d.name for d in opener.dialects] == ["qwen3_coder", "twin"]
    assert '"fork" [' in render_dot(opener)
    # Among the built-in dialects too: each shared opener's view draws its fork.
    for v in views():
        if v.name.startswith("opener-"):
            assert '"fork" [' in render_dot(v)


def test_characters_outside_latin1_are_named_by_code_point_in_the_legend() -> None:
    dsml = render_dot(view_of(["dsml"]))
    legend = _node(dsml, "legend")
    assert "U+FF5C FULLWIDTH VERTICAL LINE" in legend
    assert "U+FF1C FULLWIDTH LESS-THAN SIGN" in legend  # the lt class has it
    assert "U+2016 DOUBLE VERTICAL LINE" not in legend  # only in patterns, never in a label
    # Every such character of every label is listed, and nothing else is.
    body = dsml.replace(legend, "")
    wide = {c for c in body if ord(c) > 0xFF and c not in "↺↻−×…→·–◇"}
    listed = set(re.findall(r"U\+([0-9A-F]{4,6}) ", legend))
    assert {f"{ord(c):04X}" for c in wide} <= listed
    qwen_legend = _node(render_dot(view_of(["qwen3_coder"])), "legend")
    assert "U+FF5C" not in qwen_legend and "U+FF1C" in qwen_legend
    assert unicodedata.name("\uff5c") == "FULLWIDTH VERTICAL LINE"


def test_the_index_describes_every_view() -> None:
    from callsieve.tools.diagrams import index_markdown

    text = index_markdown(views())
    for name in ["overview"] + [f"dialect-{n}" for n in REGISTRY if n in {d.name for d in views()[0].dialects}]:
        assert f"[{name}]({name}.svg)" in text
