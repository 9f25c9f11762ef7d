"""The diagrams: generated from the machine, complete, deterministic, legible.

They are drawn on demand (``callsieve diagram``), not committed: every redraw of the
whole set is megabytes of text, and a repository keeps none of what a command makes
again. ``test_every_view_is_drawn_and_checked`` draws them all, through ``dot``, as CI
does. The other tests read the ``.dot`` text and hold it to the machine: every state a
node, every declared transition drawn (and nothing else), every edge and label
``transitions``' own GraphMachine draws present.
"""

from __future__ import annotations

import html
import os
import re
import shutil
import subprocess
import sys
from functools import cache
from pathlib import Path

import pytest

import callsieve
from callsieve.grammar.registry import REGISTRY
from callsieve.grammar.states import EOF_TRIGGER, OVERFLOW
from callsieve.tools import diagrams
from callsieve.tools.cli import main as cli_main
from callsieve.tools.diagrams_read import home_twin
from callsieve.tools.diagrams import label_overlaps, read_machine, render_dot, triggers_label, views
from callsieve.tools.diagrams_read import BASE_CHAR_TRIGGERS
from callsieve.tools.trace import trace, trace_marks

ROOT = Path(__file__).resolve().parent.parent
HAVE_DOT = shutil.which("dot") is not None

SEED4 = (
    "Writing it.\n<tool_call>\n<function=create_file>\n<parameter=path>\na.md\n</parameter>\n"
    "<parameter=content>\nline\n</parameter>\nmore\n</parameter>\n</function>\n</tool_call>"
)
#: The guard of a qwen3_coder value close, listened for in in_param.
QWEN_CLOSE = "hit:in_param@qwen3_coder.value.raw:</parameter>"

EDGE = re.compile(r'^\s*"([^"]+)" -> "([^"]+)" \[(.*)\]$', re.M)
NODE = re.compile(r'^\s*"([^"]+)" \[', re.M)
TOOLTIP = re.compile(r'tooltip="((?:[^"\\]|\\.)*)"')

Drawn = tuple[str, str, str, tuple[str, ...], tuple[str, ...]]


def esc(s: str) -> str:
    """As a label shows it (HTML-escaped)."""
    return html.escape(s, quote=False)


def _unescape(s: str) -> str:
    return re.sub(r"\\(.)", lambda m: "\n" if m.group(1) == "n" else m.group(1), s)


def tooltip(attrs: str) -> str:
    tip = TOOLTIP.search(attrs)
    assert tip, f"no tooltip in {attrs[:80]}"
    return _unescape(tip.group(1))


def drawn(dot: str) -> tuple[set[str], set[Drawn]]:
    """Nodes, and (source, trigger, dest, guards, actions) for every transition an edge's
    tooltip says it stands for (reachable or not), read back from the DOT text."""
    nodes = {m.group(1) for m in NODE.finditer(dot) if "->" not in m.group(0)}
    rows: set[Drawn] = set()
    for m in EDGE.finditer(dot):
        attrs = m.group(3)
        if 'style="invis"' in attrs:
            continue
        lines = tooltip(attrs).split("\n")
        assert lines[0].startswith("from: ") and lines[1].startswith("to: "), lines[:2]
        fields = dict(line.split(": ", 1) for line in lines[:2])
        sources = fields["from"].split()
        dest = fields["to"]
        assert dest == m.group(2)
        assert m.group(1) in sources or "ltail=" in attrs
        guards: tuple[str, ...] = ()
        for line in lines[2:]:
            # An edge from a box may hold one section per state: "from: S" starts it.
            if line.startswith("from: "):
                (src,) = line.removeprefix("from: ").split()
                assert src in fields["from"].split(), (src, fields["from"])
                sources, guards = [src], ()
                continue
            cond = re.match(r"(?:\d+\. )?if: (.+)$", line)
            if cond:
                guards = tuple(cond.group(1).split(" & "))
                continue
            on = re.match(r"(?:unreachable )?on (.+): (.+)$", line)
            if not on:
                continue
            actions = () if on.group(2) == "-" else tuple(on.group(2).split())
            for src in sources:
                for trig in on.group(1).split():
                    rows.add((src, trig, dest, guards, actions))
    return nodes, rows


def declared(view: diagrams.View) -> tuple[set[str], set[Drawn]]:
    decl = view.machine.decl
    return set(decl.state_names()), {(t.source, t.trigger, t.dest, t.guards, t.actions) for t in decl.transitions
                                     if not home_twin(t.dest, t.guards, t.actions)}


@cache
def _dot_of(name: str) -> str:
    return render_dot(BY_NAME[name])


def committed(view: diagrams.View) -> str:
    """The ``.dot`` text ``callsieve diagram`` writes for this view."""
    return _dot_of(view.name)


VIEWS = views()
BY_NAME = {v.name: v for v in VIEWS}


def test_there_is_an_overview_and_one_diagram_per_dialect() -> None:
    names = [v.name for v in VIEWS]
    forks = views()[0].machine.forks
    assert names == ["overview"] + [f"dialect-{d}" for d in callsieve.DIALECTS] + [n for n in names if n.startswith("opener-")]
    assert len([n for n in names if n.startswith("opener-")]) == len(forks)


@pytest.mark.skipif(not HAVE_DOT, reason="needs Graphviz's dot")
def test_every_view_is_drawn_and_checked(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """What CI runs: every view drawn through ``dot`` (a layout ``dot`` cannot make
    fails here), then ``--check`` on what was written."""
    out = tmp_path / "diagrams"
    assert cli_main(["diagram", "--out", str(out)]) == 0
    for name in [v.name for v in VIEWS] + ["index"]:
        assert (out / f"{name}.dot").is_file(), f"{name}.dot was not written"
        assert (out / f"{name}.svg").read_bytes().lstrip().startswith((b"<?xml", b"<svg")), f"{name}.svg is no SVG"
    capsys.readouterr()
    assert cli_main(["diagram", "--check", "--out", str(out)]) == 0, capsys.readouterr().err


def test_check_names_each_stale_missing_or_extra_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "diagrams"
    assert diagrams.main(["--out", str(out), "--format", "dot"]) == 0
    for stem in [v.name for v in VIEWS] + ["index"]:
        (out / f"{stem}.svg").write_text("<svg/>")  # --check wants them present, not equal
    capsys.readouterr()
    assert diagrams.main(["--check", "--out", str(out)]) == 0
    before = {p.name: p.read_bytes() for p in out.iterdir()}

    stale = out / "dialect-xml.dot"
    stale.write_text(stale.read_text().replace("in_param", "in_parm", 1))
    (out / "overview.dot").unlink()
    (out / "dialect-gone.dot").write_text("digraph {}\n")
    assert diagrams.main(["--check", "--out", str(out)]) == 1
    err = capsys.readouterr().err
    assert "dialect-xml.dot is stale" in err
    assert "overview.dot is missing" in err
    assert "dialect-gone.dot is not generated any more" in err
    assert "dialect-dsml.dot" not in err
    # --check writes nothing.
    assert (out / "dialect-xml.dot").read_bytes() != before["dialect-xml.dot"]
    assert not (out / "overview.dot").exists()


@pytest.mark.parametrize("view", VIEWS, ids=lambda v: v.name)
def test_every_state_is_a_node_and_every_declared_transition_is_drawn(view: diagrams.View) -> None:
    nodes, rows = drawn(committed(view))
    states, transitions = declared(view)
    assert states <= nodes, f"states not drawn: {sorted(states - nodes)}"
    panels = {n for n in nodes - states if n == "legend" or n.startswith("dialect_")}
    assert nodes - states == panels
    assert transitions - rows == set(), "declared but not drawn"
    assert rows - transitions == set(), "drawn but not declared"


def _graphmachine_rows(source: str, triggers: tuple[str, ...]) -> set[tuple[str, str, str, tuple[str, ...]]]:
    """(source, trigger, dest, guards) of every transition in GraphMachine's own DOT.

    GraphMachine labels an edge ``" | ".join(items)``, an item being ``TRIGGER`` or
    ``TRIGGER [cond1 & cond2]``. A guard name may itself hold ``[`` and ``]`` (Mistral's
    ``hit:text:[TOOL_CALLS]``, ``hit:in_param@xml.value.raw:<![CDATA[``), so the
    conditions end at the ``]`` that the next item (one of the machine's triggers) or the
    end of the label follows, not at the first or last bracket.
    """
    name = r'("(?:[^"\\]|\\.)*"|[\w.]+)'
    edge = re.compile(rf"^\s*{name} -> {name} \[label=(\"(?:[^\"\\]|\\.)*\"|[\w.]+)\]$", re.M)
    trig = "|".join(re.escape(t) for t in sorted(triggers, key=len, reverse=True))
    item = re.compile(rf"({trig})(?: \[(.*?)\])?(?= \| (?:{trig})(?: \[| \||$)|$)")
    out = set()
    for m in edge.finditer(source):
        src, dest, label = (x[1:-1].replace('\\"', '"') if x.startswith('"') else x for x in m.groups())
        pos = 0
        while pos < len(label):
            got = item.match(label, pos)
            assert got, f"unreadable GraphMachine label at {label[pos:pos + 60]!r}"
            cond = got.group(2)
            out.add((src, got.group(1), dest, tuple(cond.split(" & ")) if cond is not None else ()))
            pos = got.end() + len(" | ")
    return out


def test_graphmachine_labels_are_read_whole_when_guard_names_hold_brackets() -> None:
    label = "other [hit:text:[TOOL_CALLS]] | lt [hit:in_param@x:<![CDATA[ & j_bad] | eof"
    dot = f'\t"maybe_tag" -> "in_capture" [label="{label}"]\n'
    assert _graphmachine_rows(dot, ("lt", "other", "eof")) == {
        ("maybe_tag", "other", "in_capture", ("hit:text:[TOOL_CALLS]",)),
        ("maybe_tag", "lt", "in_capture", ("hit:in_param@x:<![CDATA[", "j_bad")),
        ("maybe_tag", "eof", "in_capture", ()),
    }


@pytest.mark.parametrize("view", VIEWS, ids=lambda v: v.name)
def test_every_edge_transitions_graphmachine_draws_is_drawn(view: diagrams.View) -> None:
    _states, _rows, machine = read_machine(view.machine.decl, graph=True)
    decl = view.machine.decl
    theirs = _graphmachine_rows(machine.get_graph().source, decl.char_triggers + (EOF_TRIGGER, OVERFLOW))
    assert len({(s, d) for s, _t, d, _g in theirs}) > 20
    # (a block begun in reasoning ends back there: those twins are named in the legend, not drawn)
    twins = {(t.source, t.trigger, t.dest, t.guards) for t in decl.transitions if home_twin(t.dest, t.guards, t.actions)}
    theirs -= twins
    _nodes, rows = drawn(committed(view))
    assert theirs == {(src, t, dest, g) for src, t, dest, g, _a in rows}


def _edge_attrs(dot: str, src: str, dest: str, contains: str) -> str:
    hits = [m.group(3) for m in EDGE.finditer(dot) if (m.group(1), m.group(2)) == (src, dest) and contains in m.group(3)]
    assert len(hits) == 1, f"{src} -> {dest} with {contains!r}: {len(hits)} edges"
    return hits[0]


def _label(attrs: str) -> str:
    got = re.search(r"label=<(.*)>, tooltip=", attrs)
    assert got, attrs[:80]
    return got.group(1)


def test_the_overview_has_a_box_per_region_and_per_dialect() -> None:
    dot = committed(BY_NAME["overview"])
    decl = BY_NAME["overview"].machine.decl
    for owner in {s.owner for s in decl.states}:
        assert f'subgraph "cluster_{owner}"' in dot
    for name in callsieve.DIALECTS:
        assert f'subgraph "cluster_dialect_{name}"' in dot  # its grammar panel
        for m in REGISTRY[name].markers():
            assert esc(m.shown()) in dot
    # Every state sits in its owner's box: the box opened last before the node is its own.
    opened: list[str] = []
    for line in dot.splitlines():
        if line.strip().startswith("subgraph"):
            opened.append(line.split('"')[1])
        elif line.strip() == "}" and opened:
            opened.pop()
        elif (node := NODE.match(line)) and "->" not in line and node.group(1) in decl.state_names():
            owner = next(s.owner for s in decl.states if s.name == node.group(1))
            assert opened[-1] == f"cluster_{owner}", node.group(1)


@pytest.mark.parametrize(
    "dialect, shown",
    [("qwen3_coder", "&lt;/parameter&gt; in in_param (raw | bare raw)"), ("dsml", "&lt;/｜DSML｜parameter&gt; in json_value (json | bare json) | in_param (raw | bare raw)]"),
     ("minimax_m2", "&lt;/parameter&gt; in in_param (raw)")],
)
def test_a_dialect_diagram_labels_marker_guards_with_its_own_markers(dialect: str, shown: str) -> None:
    dot = committed(BY_NAME[f"dialect-{dialect}"])
    attrs = _edge_attrs(dot, "maybe_tag", "after_close", "if: hit:in_param@")
    assert f"[{shown}" in _label(attrs).replace("<br/>", " ")
    # Guard names are for tooltips; labels say what the marker is.
    assert not any("hit:" in _label(m.group(3)) for m in EDGE.finditer(dot) if "label=<" in m.group(3))
    # after_close says which markers confirm the held close.
    looks = _label(_edge_attrs(dot, "after_close", "maybe_tag", "tag_begin"))
    follow = [m.shown() for m in REGISTRY[dialect].markers_by_role()["param_open"]]
    assert "looks for:" in looks and all(esc(f) in looks.replace("<br/>", " ") for f in follow)


def test_a_dialect_diagram_has_only_the_regions_its_grammar_needs() -> None:
    qwen = committed(BY_NAME["dialect-qwen3_coder"])
    xml = committed(BY_NAME["dialect-xml"])
    assert '"in_cdata" [' not in qwen and '"json_value" [' not in qwen
    live = _edge_attrs(xml, "maybe_tag", "in_cdata", "open_cdata")
    assert 'style="dotted"' not in live and "[&lt;![CDATA[ in in_param (raw | bare raw)]" in _label(live)


def test_block_wide_eof_and_overflow_are_drawn_once_from_the_box() -> None:
    dot = committed(BY_NAME["overview"])
    boxed = {tooltip(m.group(3)).split("\n")[2]: tooltip(m.group(3)) for m in EDGE.finditer(dot)
             if m.group(2) == "text" and 'ltail="cluster_block"' in m.group(3)}
    # eof releases the block from the box; overflow no longer leaves its state (a block
    # past the limit spills: the state reads on, releasing what it reads), so it is no
    # box edge to text but a self-loop of every held state.
    assert sorted(boxed) == ["on eof: abort_block_eof"]
    decl = BY_NAME["overview"].machine.decl
    held = {s.name for s in decl.states if s.in_block}
    overflow = {(t.source, t.dest, t.actions) for t in decl.transitions if t.trigger == OVERFLOW}
    assert held <= {src for src, _d, _a in overflow} <= held | {"maybe_tag"}
    assert all(dest == src and actions == ("abort_oversized",) for src, dest, actions in overflow)
    sources = {k: set(v.split("\n")[0].removeprefix("from: ").split()) for k, v in boxed.items()}
    # eof: every held state releases the block, but the positions where a bare block
    # (dsml's, mistral's) may end, which end it complete; the label names each of them.
    releases = {t.source for t in decl.transitions if t.trigger == EOF_TRIGGER and t.actions == ("abort_block_eof",)}
    complete = {t.source for t in decl.transitions if t.trigger == EOF_TRIGGER and t.actions == ("end_bare_block",)}
    assert sources["on eof: abort_block_eof"] == held & releases
    assert held - releases == held & complete and 1 <= len(held & complete) <= max(3, len(held) // 6)
    eof_edge = next(m.group(3) for m in EDGE.finditer(dot) if "on eof: abort_block_eof" in m.group(3) and "cluster_block" in m.group(3))
    for name in (s.name for s in decl.states if s.name in held & complete):
        assert name in eof_edge
    # No other edge from a held state draws that eof, and none draws overflow to text.
    tips = [t for m in EDGE.finditer(dot) if "tooltip=" in m.group(3)
            for t in [tooltip(m.group(3))] if set(t.split("\n")[0].removeprefix("from: ").split()) <= held]
    assert sum("on eof: abort_block_eof" in t for t in tips) == 1
    assert not [t for t in tips if f"on {OVERFLOW}:" in t and "to: text" in t]


def _sections(tip: str) -> dict[str, set[str]]:
    """State → triggers, from a box edge's tooltip with one "from: S" section per state."""
    out: dict[str, set[str]] = {}
    state = ""
    for line in tip.split("\n")[2:]:
        if line.startswith("from: "):
            state = line.removeprefix("from: ")
        elif line.startswith("on ") and state:
            out.setdefault(state, set()).update(line.removeprefix("on ").split(": ", 1)[0].split())
    return out


@pytest.mark.parametrize("name", ["overview", "dialect-mistral"])
def test_each_json_states_else_is_drawn_once_from_the_box_and_means_any_other_character(name: str) -> None:
    dot = committed(BY_NAME[name])
    decl = BY_NAME[name].machine.decl
    body = [s.name for s in decl.states if s.owner == "json_body"]
    chars = set(decl.char_triggers)
    (edge,) = [m.group(3) for m in EDGE.finditer(dot) if 'ltail="cluster_json_body"' in m.group(3)
               and "[else] any other character / j_abort ↺" in _label(m.group(3)).replace("<br/>", " ")]
    per_state = _sections(tooltip(edge))
    aborts: dict[str, set[str]] = {}
    others: dict[str, set[str]] = {}
    for t in decl.transitions:
        if t.source in body and not t.guards and t.trigger in chars:
            into = aborts if (t.dest, t.actions) == ("text", ("j_abort", "reprocess")) else others
            into.setdefault(t.source, set()).add(t.trigger)
    # Each state's section lists exactly the characters it aborts on, and those are the
    # ones no other unguarded edge of it takes: "any other character" holds.
    assert per_state == aborts and len(per_state) >= 2
    for state, trig in per_state.items():
        assert trig | others.get(state, set()) == chars and not trig & others.get(state, set())
    missing = [s for s in body if s not in per_state]
    assert f"from every state in the box but {', '.join(missing)}</i>" in edge
    # No other edge from a JSON state draws that fallback, nor [j_bad]: the box's do.
    (bad,) = [m.group(3) for m in EDGE.finditer(dot) if re.search(r"if: j_bad(?! &)(?!\w)", m.group(3))]
    assert 'ltail="cluster_json_body"' in bad
    assert {t.source for t in decl.transitions if t.guards == ("j_bad",)} == set(body) - {
        s for s in body if f"but {s}" in bad}


def test_the_json_tokenizers_moves_are_listed_inside_its_states() -> None:
    dot = committed(BY_NAME["dialect-mistral"])
    decl = BY_NAME["dialect-mistral"].machine.decl
    body = {s.name for s in decl.states if s.owner == "json_body"}
    moves = {(t.source, t.dest) for t in decl.transitions if t.source in body and t.dest in body and t.source != t.dest}
    assert len(moves) > 15
    for src, dest in moves:
        node = next(m.group(0) for m in re.finditer(rf'^\s*"{re.escape(src)}" \[.*$', dot, re.M))
        assert f"→ <b>{esc(dest)}</b>: " in node, (src, dest)
        arrows = [m.group(3) for m in EDGE.finditer(dot) if (m.group(1), m.group(2)) == (src, dest)]
        assert arrows and all("label=" not in a for a in arrows), (src, dest)
    # Where the body leads stays on the arrows: each exit to a dialect position is labelled.
    exits = [m.group(3) for m in EDGE.finditer(dot) if m.group(1) in body and m.group(2) == "mistral.after_json_calls"]
    assert exits and all("j_outermost" in _label(a) and "j_close_body" in _label(a) for a in exits)


def test_a_json_state_with_several_ways_out_lists_them_inside_itself() -> None:
    # In the overview j_key_first and j_next close the body into each JSON dialect's
    # next position: each such exit is a line inside the state (its guard and where it
    # leads, the shared trigger and action once), and no arrow of theirs carries a label
    # that dot could stack on another's.
    dot = committed(BY_NAME["overview"])
    decl = BY_NAME["overview"].machine.decl
    owner = {s.name: s.owner for s in decl.states}
    for src in ("j_key_first", "j_next"):
        out = {(t.dest, t.guards) for t in decl.transitions
               # (giving the body up, to text or read on to its close, is drawn from the box)
               if t.source == src and owner[t.dest] not in ("json_body", "tag") and t.dest not in ("text", "block_rest")
               and not home_twin(t.dest, t.guards, t.actions)}
        assert len({d for d, _g in out}) >= 6
        node = next(m.group(0) for m in re.finditer(rf'^\s*"{src}" \[.*$', dot, re.M))
        assert "→ <i>out of the box</i>: rbrace / j_close_body" in node
        for dest, guards in out:
            assert f"[{esc(', '.join(guards))}]</font> → <b>{esc(dest)}</b>" in node, (src, dest)
            arrows = [m.group(3) for m in EDGE.finditer(dot) if (m.group(1), m.group(2)) == (src, dest)]
            assert arrows and all("label=" not in a and "if: " + " & ".join(guards) in a for a in arrows), (src, dest)


def test_dot_text_is_the_same_across_runs_and_hash_seeds() -> None:
    code = "import sys; from callsieve.tools.diagrams import render_dot, views; sys.stdout.write(''.join(render_dot(v) for v in views()))"
    # A fresh process under a fixed hash seed other than this process's own (random unless
    # set), against this process's drawing: two hashings, two runs (each composes and
    # renders every view, some seconds apiece).
    seed = "4242" if os.environ.get("PYTHONHASHSEED") == "0" else "0"
    env = dict(os.environ, PYTHONHASHSEED=seed)
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, check=True).stdout
    assert out.decode("utf-8") == "".join(committed(v) for v in VIEWS)  # (this process's, drawn once)
    assert b"0x" not in out  # no addresses


def test_trigger_sets_are_spelled_compactly() -> None:
    assert triggers_label(BASE_CHAR_TRIGGERS) == "*"
    assert triggers_label([t for t in BASE_CHAR_TRIGGERS if t not in ("lt", "tick")]) == "* − lt|tick"
    assert triggers_label(["nl", "ws"]) == "ws|nl"
    assert triggers_label(["lt", EOF_TRIGGER]) == "lt, eof"
    assert triggers_label([EOF_TRIGGER]) == "eof"
    # A machine's own classes count: without u0040, "*" would hide it.
    assert triggers_label(BASE_CHAR_TRIGGERS, BASE_CHAR_TRIGGERS + ("u0040",)) == "* − u0040"


def test_guards_are_numbered_in_the_order_they_are_tried() -> None:
    dot = committed(BY_NAME["dialect-qwen3_coder"])
    decl = BY_NAME["dialect-qwen3_coder"].machine.decl
    tried = [t for t in decl.ordered() if t.source == "maybe_tag" and t.trigger == "other" and t.guards]
    assert len(tried) > 8
    # (rows only the end of the stream tries, a held info string's and a held span's:
    # numbered among them)
    seen = {(t.dest, t.guards) for t in tried}
    at_eof = [t for t in decl.ordered() if t.source == "maybe_tag" and t.trigger == "eof" and t.guards]
    assert [t.guards for t in at_eof if (t.dest, t.guards) not in seen] == [("info_holds",), ("span_holds",)]
    tried = sorted(tried + [t for t in at_eof if (t.dest, t.guards) not in seen], key=lambda t: t.rank)
    node = next(m.group(0) for m in re.finditer(r'^\s*"maybe_tag" \[.*$', dot, re.M))
    numbers = []
    for t in tried:
        if t.dest == t.source:  # a self-loop is listed inside its state
            found = re.search(r"<b>(\d+)\.</b> \[" + re.escape(", ".join(t.guards)) + r"\]", node)
            assert found, t
            numbers.append(int(found.group(1)))
            continue
        attrs = _edge_attrs(dot, "maybe_tag", t.dest, "if: " + " & ".join(t.guards) + "\\n")
        got = re.search(r"(?:^|\\n)(\d+)\. if: " + re.escape(" & ".join(t.guards)) + r"\\n", attrs)
        assert got, t
        n = int(got.group(1))
        # The label shows the same number, alone or merged with others ("4, 6.").
        assert re.search(rf"<b>(?:\d+, )*{n}(?:, \d+)*\.</b>", _label(attrs)), (t, n)
        numbers.append(n)
    assert numbers == list(range(1, len(tried) + 1))


@pytest.mark.skipif(not HAVE_DOT, reason="graphviz dot is not installed")
@pytest.mark.parametrize("view", VIEWS, ids=lambda v: v.name)
def test_no_label_overlaps_another_in_the_committed_views(view: diagrams.View) -> None:
    assert label_overlaps(committed(view)) == []


@pytest.mark.skipif(not HAVE_DOT, reason="graphviz dot is not installed")
def test_the_overlap_check_sees_overlaps() -> None:
    crowded = "digraph { rankdir=LR; " + " ".join(
        f'a -> b [label="label {n}", constraint=false];' for n in range(3)
    ) + " }"
    assert label_overlaps(crowded)


def test_a_trace_counts_every_transition_the_reference_machine_fired() -> None:
    t = trace(SEED4, ["qwen3_coder"])
    steps = [(f.source, f.dest) for f in t.fires]
    assert steps.count(("maybe_tag", "after_close")) == 3  # three </parameter>
    assert steps.count(("after_close", "in_param")) == 1  # one of them was data: "more" followed
    # Every value character, re-read "m" included, is one in_param self-loop.
    values = "\na.md\n" + "\nline\n" + "more\n"
    assert steps.count(("in_param", "in_param")) == len(values)
    assert t.fires[-1].trigger == EOF_TRIGGER
    call = [e for e in t.events if isinstance(e, callsieve.ToolCall)]
    assert call and call[0].arguments["content"] == "line\n</parameter>\nmore"


def test_a_trace_marks_decisions_and_counts_on_the_picture() -> None:
    view, marks, log = trace_marks(SEED4, ["qwen3_coder"])
    dot = render_dot(view, marks)
    hold = _edge_attrs(dot, "maybe_tag", "after_close", f"if: {QWEN_CLOSE}")
    assert "×3" in hold and "@" in hold and 'color="#d35400"' in hold
    reopen = _edge_attrs(dot, "after_close", "in_param", "reopen_value")
    assert "×1" in reopen
    assert marks.decision_totals[("after_close", "in_param", ())] == 1
    think = _edge_attrs(dot, "maybe_tag", "in_reasoning", "enter_reasoning")
    assert "×" not in think and 'color="#a8a8a8"' in think  # not taken: grey
    assert any(line.lstrip().startswith(tuple("0123456789")) and "* after_close" in line and "reopen_value" in line for line in log)


def test_trace_command_writes_the_picture_and_prints_the_path(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    src = tmp_path / "in.txt"
    src.write_text("```\n<tool_call>\n```\n", encoding="utf-8")
    assert cli_main(["diagram", "--trace", str(src), "--out", str(tmp_path), "--format", "dot"]) == 0
    out = capsys.readouterr().out
    assert "→ in_fence" in out  # the fence made the markup text
    assert "ToolCall " not in out
    dot = (tmp_path / "trace.dot").read_text(encoding="utf-8")
    assert "read ×" in dot
    assert (tmp_path / "trace-path.dot").is_file()
    # (the fence listens for markup, to report it: the held tag goes back to it)
    assert "[hit:in_fence:<tool_call>] → in_fence / code_opener" in out
    assert "markup_in_code" in out


def test_diagram_command_rejects_unknown_dialects_and_formats(capsys: pytest.CaptureFixture[str]) -> None:
    assert cli_main(["diagram", "--dialect", "nope", "--out", "-"]) == 2
    assert cli_main(["diagram", "--format", "gif", "--out", "-"]) == 2
    assert "unknown" in capsys.readouterr().err


def test_a_value_grammar_a_dialect_brings_is_drawn_compactly() -> None:
    """Gemma's object syntax (``Dialect.regions``) is a tokenizer like the JSON body:
    its states list their moves inside themselves and the arrows between them carry no
    label (in the overview, key <-> value labels overlapped otherwise)."""
    for name in ("overview", "dialect-gemma4"):
        dot = committed(BY_NAME[name])
        node = next(m.group(0) for m in re.finditer(r'^\s*"gemma4\.key" \[.*$', dot, re.M))
        assert "→ <b>gemma4.value</b>" in node, name
        edge = next(m.group(0) for m in re.finditer(r'^\s*"gemma4\.key" -> "gemma4\.value" \[.*$', dot, re.M))
        assert "label=" not in edge, name
