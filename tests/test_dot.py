"""Graph pictures: DOT structure (always), SVG rendering (when Graphviz's dot is installed),
and the message when dot is missing.

The graphs here are built by hand with Graph.add_node, so these tests depend only on the graph
IR, not on the tracer: a collatz-shaped graph whose while_loop body holds a cond.
"""

import os
import re
import shutil
import subprocess
import sys

import numpy as np
import pytest

from autograph.runtime.exec import dot
from autograph.runtime.ir.graph import Graph

I64 = np.dtype(np.int64)
B = np.dtype(bool)


def _op(g, op, inputs, dtype=I64, shape=(), name=None, attrs=None):
    return g.add_node(op, inputs, attrs or {}, [(dtype, shape, False)], name=name).outputs[0]


def _const(g, value):
    return _op(g, "Const", (), I64, (), attrs={"value": np.asarray(value, I64)})


def collatz_graph():
    """n -> while n != 1: n = n // 2 if n % 2 == 0 else 3 * n + 1; steps += 1."""
    g = Graph("collatz")
    n = g.placeholder("n", I64, ())
    steps0 = _const(g, 0)
    one = _const(g, 1)

    cond_g = Graph("while_cond", parent=g)
    cn = cond_g.placeholder("n", I64, ())
    cond_g.placeholder("steps", I64, ())
    cond_g.set_outputs([_op(cond_g, "not_equal", [cn, cond_g.capture(one)], B)], identity=False)

    body = Graph("while_body", parent=g)
    bn = body.placeholder("n", I64, ())
    bs = body.placeholder("steps", I64, ())
    even = _op(body, "equal", [_op(body, "remainder", [bn, _const(body, 2)]), _const(body, 0)], B)
    true_g = Graph("cond_true", parent=body)
    tn = true_g.placeholder("n", I64, ())
    true_g.set_outputs([_op(true_g, "floor_divide", [tn, _const(true_g, 2)])], identity=False)
    false_g = Graph("cond_false", parent=body)
    fn = false_g.placeholder("n", I64, ())
    # the false branch reads `one` from the outermost graph: a capture through two levels
    false_g.set_outputs([_op(false_g, "add", [_op(false_g, "multiply", [_const(false_g, 3), fn]),
                                              false_g.capture(one)])], identity=False)
    new_n = _op(body, "cond", [even, bn], attrs={"true_graph": true_g, "false_graph": false_g})
    body.set_outputs([new_n, _op(body, "add", [bs, _const(body, 1)])], identity=False)

    loop = g.add_node("while_loop", [n, steps0] + body.captured_inputs() + cond_g.captured_inputs(),
                      {"cond_graph": cond_g, "body_graph": body}, [(I64, (), False), (I64, (), False)])
    g.set_outputs([loop.outputs[1]])
    return g


def _clusters(text):
    """Map cluster name -> (its label, the cluster names directly inside it, node ids inside)."""
    tree, stack = {}, []
    for line in text.splitlines():
        s = line.strip()
        m = re.match(r"subgraph (cluster_\d+) \{", s)
        if m:
            tree[m.group(1)] = {"label": None, "children": [], "nodes": []}
            if stack:
                tree[stack[-1]]["children"].append(m.group(1))
            stack.append(m.group(1))
        elif s == "}" and stack:
            stack.pop()
        elif stack and s.startswith("label=") and tree[stack[-1]]["label"] is None:
            tree[stack[-1]]["label"] = re.match(r'label="([^"]*)"', s).group(1)
        elif stack and re.match(r"n\d+ \[", s):
            tree[stack[-1]]["nodes"].append(s)
    return tree


def test_while_and_cond_are_nested_clusters():
    text = collatz_graph().to_dot()
    assert text.startswith('digraph "collatz" {') and text.rstrip().endswith("}")
    assert text.count("{") == text.count("}")
    tree = _clusters(text)
    by_label = {}
    for k, v in tree.items():
        by_label.setdefault(v["label"], []).append(k)
    [loop], [body] = by_label["while_loop"], by_label["body_graph"]
    [cond_sub], [cond_node] = by_label["cond_graph"], by_label["cond"]
    assert set(tree[loop]["children"]) == {body, cond_sub}
    assert tree[body]["children"] == [cond_node]            # the cond sits inside the loop body
    branches = {tree[c]["label"] for c in tree[cond_node]["children"]}
    assert branches == {"true_graph", "false_graph"}
    # the branch bodies hold their own ops
    [true_c] = by_label["true_graph"]
    assert any("floor_divide" in n for n in tree[true_c]["nodes"])
    assert not any("floor_divide" in n for n in tree[body]["nodes"])


def test_inputs_outputs_and_captures_are_drawn_distinctly():
    text = collatz_graph().to_dot()
    arg_lines = [l for l in text.splitlines() if "invhouse" in l]
    assert len(arg_lines) == 1 and '"n\\nint64[]"' in arg_lines[0]
    out_lines = [l for l in text.splitlines() if 'shape="house"' in l]
    assert len(out_lines) == 1 and "output 0" in out_lines[0]
    captures = [l for l in text.splitlines() if "(captured)" in l]
    # `one` is captured by the cond graph, the body, and the false branch inside the body
    assert len(captures) == 3
    assert text.count('style="dashed"') == 3
    # every edge is written at the top level, after all clusters closed
    lines = text.splitlines()
    last_brace = max(i for i, l in enumerate(lines[:-1]) if l.strip() == "}")
    assert all(i > last_brace for i, l in enumerate(lines) if "->" in l)


def test_every_edge_names_declared_nodes():
    text = collatz_graph().to_dot()
    declared = set(re.findall(r"^\s*((?:n|out)\d+) \[", text, re.M))
    edges = re.findall(r"^\s*((?:n|out)\d+) -> ((?:n|out)\d+)", text, re.M)
    assert edges
    for a, b in edges:
        assert a in declared and b in declared


def test_labels_are_escaped():
    g = Graph('we"ird\\name')
    x = g.placeholder('x"y', I64, (None, 3))
    g.set_outputs([x])
    text = dot.to_dot(g)
    assert 'digraph "we\\"ird\\\\name"' in text
    assert "int64[?,3]" in text


needs_dot = pytest.mark.skipif(shutil.which("dot") is None, reason="Graphviz's dot is not installed")


@needs_dot
def test_svg_has_the_clusters(tmp_path):
    path = tmp_path / "collatz.svg"
    dot.write(collatz_graph(), path)
    svg = path.read_text()
    assert svg.lstrip().startswith("<?xml") and "<svg" in svg
    # loop, its cond and body graphs, the cond node, its two branches
    assert svg.count('class="cluster"') == 6
    for word in ("while_loop", "true_graph", "false_graph", "floor_divide"):
        assert word in svg


@needs_dot
def test_png_and_dot_by_extension(tmp_path):
    dot.write(collatz_graph(), tmp_path / "g.png")
    assert (tmp_path / "g.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    dot.write(collatz_graph(), tmp_path / "g.dot")
    assert (tmp_path / "g.dot").read_text() == collatz_graph().to_dot()
    with pytest.raises(ValueError, match=r"graph\.svg"):
        dot.write(collatz_graph(), tmp_path / "g.jpeg")


def test_missing_dot_says_how_to_install(tmp_path, monkeypatch):
    monkeypatch.setenv("PATH", str(tmp_path))     # an empty PATH: no dot anywhere
    assert not dot.dot_available()
    with pytest.raises(dot.GraphvizNotFound, match="apt-get install graphviz"):
        dot.render(collatz_graph(), "svg")
    assert dot.repr_svg(collatz_graph()) is None
    # DOT text needs no Graphviz at all
    assert dot.write(collatz_graph(), tmp_path / "g.gv") and (tmp_path / "g.gv").read_text()


@needs_dot
def test_notebooks_get_svg():
    svg = collatz_graph()._repr_svg_()
    assert svg is not None and "<svg" in svg and "while_loop" in svg


def test_unused_aligned_captures_are_not_drawn():
    """A branch gets a placeholder for every capture of either branch (so both take the same
    inputs); the picture shows only the ones the branch uses."""
    g = Graph("pick")
    a = g.placeholder("a", I64, ())
    b = g.placeholder("b", I64, ())
    t = Graph("t", parent=g)
    t.set_outputs([t.capture(a)], identity=False)
    t.capture(b)                                    # aligned, unused in this branch
    f = Graph("f", parent=g)
    f.capture(a)                                    # aligned, unused in this branch
    f.set_outputs([f.capture(b)], identity=False)
    pred = _op(g, "less", [a, b], B)
    node = g.add_node("cond", [pred, a, b], {"true_graph": t, "false_graph": f}, [(I64, (), False)])
    g.set_outputs([node.outputs[0]])
    text = g.to_dot()
    captures = [l for l in text.splitlines() if "(captured)" in l]
    assert len(captures) == 2                       # a in the true branch, b in the false one
    assert text.count('style="dashed"') == 2


def test_print_shows_what_it_prints():
    g = Graph("p")
    x = g.placeholder("x", I64, ())
    g.add_node("print", [x], {"template": ("x is", None), "sep": " ", "end": "\n"}, [])
    assert "'x is {}'" in g.to_dot()


@needs_dot
def test_renders_without_the_graphviz_package(monkeypatch):
    """The graphviz Python package is optional: without it, dot runs as a subprocess."""
    monkeypatch.setitem(sys.modules, "graphviz", None)       # `import graphviz` fails
    svg = dot.render(collatz_graph(), "svg").decode()
    assert "<svg" in svg and svg.count('class="cluster"') == 6


@needs_dot
def test_ipython_displays_a_graph_as_svg():
    """What a Jupyter notebook does with a Graph on the last line of a cell."""
    pytest.importorskip("IPython")
    from IPython.core.formatters import DisplayFormatter
    formatter = DisplayFormatter()
    formatter.active_types = ["image/svg+xml", "text/plain"]
    graph = collatz_graph()
    data, _ = formatter.format(graph)
    assert data["image/svg+xml"].count('class="cluster"') == 6
    assert data["text/plain"] == repr(graph)
