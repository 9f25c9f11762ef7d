"""Diagrams of machines other than the committed ones: a user's own dialect, dialects that
share an opener (the ``fork`` choice), and the legend's code points for characters a
font may lack."""

from __future__ import annotations

import html
import re
import shutil
import unicodedata

import pytest

from callsieve.grammar import qwen3_coder
from callsieve.grammar.api import Block, Call, Dialect, Many, Marker, Param, Raw
from callsieve.grammar.registry import BUILTIN, REGISTRY
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


@pytest.mark.skipif(shutil.which("dot") is None, reason="graphviz dot is not installed")
def test_a_rendered_legend_shows_every_character_class_in_its_own_row() -> None:
    """Each class row of the legend, as Graphviz lays it out: the class's name alone in
    one text, its characters in the next, on the same line. (A bare ``]`` in an HTML
    label once emptied the rbrack row and glued ``]`` to the next row's name.)"""
    import html
    import re as re_

    from callsieve.machine import compose
    from callsieve.tools.diagrams import render_bytes
    from callsieve.tools.diagrams_dot import _CLASS_SHOWN, _class_chars
    from callsieve.tools.diagrams_read import view_of

    view = view_of(["xml"])  # CDATA: the rbrack class and its states
    svg = render_bytes(render_dot(view), "svg").decode("utf-8")
    texts = [(float(y), html.unescape(t)) for y, t in re_.findall(r'<text[^>]* y="([-\d.]+)"[^>]*>([^<]*)</text>', svg)]
    classes = compose(view.dialects).decl.classes
    assert "rbrack" in classes
    for name, chars in classes.items():
        at = [i for i, (_, t) in enumerate(texts) if t == name]
        assert at, f"the legend has no row for {name!r}"
        y, shown = texts[at[-1] + 1]
        assert y == texts[at[-1]][0], f"{name!r}: its characters are not on its row"
        assert shown == _class_chars(chars), (name, shown)
    assert not [t for _, t in texts if t.startswith("]") and t[1:] in classes], "a ] glued to the next row's name"
    assert _CLASS_SHOWN  # (the table the legend names spaces and newlines with)


def test_the_index_links_every_dialect_and_shared_opener_to_its_own_diagram() -> None:
    """The first picture `callsieve diagram` draws: one box per built-in dialect, each a
    link to its view, the shared openers' forks linking theirs; every link is a file the
    same command writes."""
    from callsieve.tools.diagrams import generate

    written = generate(views())
    index = written["index.dot"]
    links = re.findall(r'URL="([^"]+)"', index)
    for name in BUILTIN:
        assert f"dialect-{name}.svg" in links, name
    assert "opener-tool_call.svg" in links and "overview.svg" in links
    for link in links:
        assert link.endswith(".svg") and link[: -len(".svg")] + ".dot" in written, link


@pytest.mark.skipif(shutil.which("dot") is None, reason="graphviz dot is not installed")
def test_the_index_is_small_enough_to_read_on_a_screen() -> None:
    from callsieve.tools.diagrams import generate, render_bytes

    svg = render_bytes(generate(views())["index.dot"], "svg").decode("utf-8")
    width, height = (float(x) for x in re.search(r'<svg width="([\d.]+)pt" height="([\d.]+)pt"', svg).groups())  # type: ignore[union-attr]
    # (text at its own size, a screen wide; with dozens of dialects it scrolls down, where
    # the overview is ~8,000 x 12,500)
    assert width < 1600 and height < 2400, (width, height)
