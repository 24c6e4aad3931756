"""The explorer page (autograph.explorer) read as text: what it links, that it needs no
network, that the passes add up to `to_code`, that every node of the graph is drawn with the
user's line that made it; and the `autograph explore` command and `Function._repr_html_`."""

import html.parser
import inspect
import io
import re

import numpy as np
import pytest

import autograph as ag
from autograph import cli, errors
from autograph.explorer import layout, passes


def collatz(n):
    steps = 0
    while n != 1:
        n = n // 2 if n % 2 == 0 else 3 * n + 1
        steps += 1
    return steps


def line_of(fn, text):
    lines, start = inspect.getsourcelines(fn)
    return start + next(k for k, line in enumerate(lines) if text in line)


class Elements(html.parser.HTMLParser):
    """Every element's tag and attributes, in document order."""

    def __init__(self, text):
        super().__init__()
        self.found = []
        self.feed(text)

    def handle_starttag(self, tag, attrs):
        self.found.append((tag, dict(attrs)))


def graph_nodes(graph):
    return list(graph.walk())


def test_the_page_links_source_generated_code_and_nodes_by_line():
    page = ag.explore(collatz, np.int64(27))
    graph = ag.function(collatz).get_concrete_function(np.int64(27)).graph
    elements = Elements(page.html).found
    drawn = [a for tag, a in elements if tag == "g" and "node" in a.get("class", "")]
    # every node of the graph and of its branch/body graphs is drawn once, with its line
    nodes = graph_nodes(graph)
    assert sorted(a["data-name"] for a in drawn) == sorted(n.name for n in nodes)
    source, first = inspect.getsourcelines(collatz)
    expected = []
    for n in nodes:    # (an output node made at the caller's line names no line of collatz)
        loc = errors.origin_location(n.origin)
        mine = n.op != "Placeholder" and loc is not None and loc.filename == __file__ and \
            first <= loc.lineno < first + len(source)
        expected.append((n.name, str(loc.lineno) if mine else ""))
    assert sorted((a["data-name"], a["data-lines"]) for a in drawn) == sorted(expected)
    body_line = line_of(collatz, "n = n // 2 if")
    ops = {a["data-op"] for a in drawn if a["data-lines"] == str(body_line)}
    assert {"floor_divide", "multiply", "remainder", "cond"} <= ops, ops
    # the source lines are numbered as in the file; the generated lines name user lines
    spans = [a for tag, a in elements if tag == "span" and a.get("class") == "ln"]
    lines = {a["data-lines"] for a in spans}
    assert {str(line_of(collatz, text)) for text in
            ("steps = 0", "while n != 1", "n = n // 2 if", "steps += 1")} <= lines
    assert sum(1 for a in spans if a["data-lines"] == str(body_line)) >= 2   # source + code


def test_the_page_is_self_contained():
    text = ag.explore(collatz, np.int64(27)).html
    assert not re.search(r"""(src|href)\s*=\s*["']?(https?:)?//""", text), "a network link"
    assert "<script src" not in text and "@import" not in text and "url(" not in text


def test_the_passes_add_up_to_to_code():
    steps = passes.changes(collatz)
    assert steps[-1][2].strip() == ag.to_code(collatz).strip()
    for (_, _, after), (_, before, _) in zip(steps, steps[1:]):
        assert after == before
    changed = {name for name, before, after in steps if before != after}
    assert "control_flow" in changed


def test_explore_without_arguments_shows_no_graph():
    text = ag.explore(collatz).html
    assert "<svg" not in text and "Not traced" in text


def test_clusters_hold_their_graphs():
    def branchy(x):
        if x > 0:
            y = x * 2.0
        else:
            y = -x
        return y
    graph = ag.function(branchy).get_concrete_function(np.float64(1.0)).graph
    source, first = inspect.getsourcelines(branchy)
    svg = layout.to_svg(graph, (__file__, first, first + len(source) - 1))
    assert svg.count('class="node cluster"') == 1
    assert "true_graph" in svg and "false_graph" in svg
    assert f'data-lines="{line_of(branchy, "y = x * 2.0")}"' in svg


def test_function_repr_html_is_the_page_of_its_latest_trace():
    f = ag.function(collatz)
    assert "Not traced" in f._repr_html_()
    f(np.int64(6))
    shown = f._repr_html_()
    assert shown.startswith("<iframe") and "while_loop" in shown and "&lt;svg" in shown


def test_the_command_writes_the_page(tmp_path):
    source = tmp_path / "program.py"
    source.write_text(inspect.getsource(collatz))
    out = io.StringIO()
    path = tmp_path / "page.html"
    status = cli.main(["explore", f"{source}::collatz", "--arg", "int64[]", "-o", str(path)],
                      out=out)
    assert status == 0, out.getvalue()
    text = path.read_text()
    assert "while_loop" in text and 'data-lines="4"' in text   # `n = n // 2 ...` is line 4
    assert "wrote" in out.getvalue()


def test_a_gradient_page_draws_the_backward_nodes_at_the_forward_lines():
    def rnn_loss(W, xs, h):
        for t in ag.range(xs.shape[0]):
            h = np.tanh(xs[t] @ W + h)
        return np.sum(h * h)
    args = (np.eye(3) * 0.5, np.ones((20, 2, 3)), np.zeros((2, 3)))
    forward = ag.explore(rnn_loss, *args).html
    backward = ag.explore(rnn_loss, *args, gradient=True).html
    step = line_of(rnn_loss, "h = np.tanh(xs[t] @ W + h)")
    count = lambda text: text.count(f'data-lines="{step}"')   # noqa: E731
    assert "the gradient" in backward and count(backward) > count(forward)
    # the backward pass of tanh (1 - y**2) and of matmul (a transposed product) are there
    assert 'data-op="permute_dims"' in backward or 'data-op="matmul"' in backward
    assert backward.count('class="node cluster"') > forward.count('class="node cluster"')


def test_a_profiled_page_shows_each_lines_time_beside_the_source():
    def summed(x, n):
        s = 0.0
        for i in ag.range(n):
            s = s + np.sum(x * i)
        return s
    text = ag.explore(summed, np.ones(100), np.int64(50), profile=True).html
    body = line_of(summed, "s = s + np.sum(x * i)")
    columns = re.findall(r'<span class="no">(\d+)</span><span class="st"[^>]*>([^<]*)</span>',
                         text)
    shown = {int(line): value for line, value in columns}
    assert shown[body].endswith("%") and " ms " in shown[body], shown
    assert re.search(rf'<span class="no">{body}</span><span class="st" title="(\d+) runs',
                     text)
    assert 'class="st"' not in ag.explore(summed, np.ones(3), np.int64(2)).html
