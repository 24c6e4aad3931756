"""The explorer page in a real browser: headless Chromium (the distribution's package, which
.ci/run installs) loads the page, selects a line (by the URL fragment, and by a script that
clicks a graph node), and the DOM it dumps says which elements are marked; a screenshot is
kept as a test artefact (in $AUTOGRAPH_TEST_ARTEFACTS when set, else the test's tmp dir).

Skips when no Chromium runs here."""

import html.parser
import inspect
import os
import subprocess

import numpy as np
import pytest

import autograph as ag
from autograph import errors
from benchmarks.explorer_screenshots import chromium


CHROMIUM = chromium()   # (the screenshot script's finder: one place to fix)
pytestmark = pytest.mark.skipif(CHROMIUM is None, reason="no headless Chromium here")
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
         "--no-first-run", "--disable-extensions"]


def collatz(n):
    steps = 0
    while n != 1:
        n = n // 2 if n % 2 == 0 else 3 * n + 1
        steps += 1
    return steps


def _run(*args, tmp_path):
    done = subprocess.run([CHROMIUM, *FLAGS, f"--user-data-dir={tmp_path / 'profile'}", *args],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout


class Marked(html.parser.HTMLParser):
    """The elements the page's script marked (class `hl`), and the body's selection."""

    def __init__(self, text):
        super().__init__()
        self.nodes, self.lines, self.selected = [], [], None
        self.feed(text)

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        classes = (attrs.get("class") or "").split()
        if tag == "body":
            self.selected = attrs.get("data-selected")
        if "hl" not in classes:
            return
        if tag == "g":
            self.nodes.append((attrs["data-op"], attrs["data-lines"]))
        else:
            self.lines.append(attrs["data-lines"])


def _expected_ops(graph, line):
    """The ops of the nodes (in every nested graph) that `line` of this file made."""
    ops = []
    for node in graph.walk():
        loc = errors.origin_location(node.origin)
        if node.op != "Placeholder" and loc is not None and loc.filename == __file__ \
                and loc.lineno == line:
            ops.append(node.op)
    return sorted(ops)


def test_selecting_a_line_marks_its_generated_lines_and_nodes(tmp_path):
    page = ag.explore(collatz, np.int64(27))
    path = page.save(str(tmp_path / "collatz.html"))
    graph = ag.function(collatz).get_concrete_function(np.int64(27)).graph
    lines, first = inspect.getsourcelines(collatz)
    line = first + next(k for k, text in enumerate(lines) if "n = n // 2" in text)

    # 1. the URL fragment selects the line on load (and the screenshot, kept, shows it)
    where = os.environ.get("AUTOGRAPH_TEST_ARTEFACTS") or str(tmp_path)
    os.makedirs(where, exist_ok=True)
    shot = os.path.join(where, "explorer_collatz.png")
    marked = Marked(_run("--dump-dom", f"--screenshot={shot}", "--window-size=1500,1000",
                         f"file://{path}#line={line}", tmp_path=tmp_path))
    assert marked.selected == str(line)
    assert sorted(op for op, _ in marked.nodes) == _expected_ops(graph, line)
    assert {"floor_divide", "multiply", "cond"} <= {op for op, _ in marked.nodes}
    assert set(marked.lines) == {str(line)} and len(marked.lines) >= 2   # source + code
    with open(shot, "rb") as f:
        assert f.read(8) == b"\x89PNG\r\n\x1a\n"

    # 2. a click on a graph node selects the line that made it (and so its siblings); a
    # click on a cluster's header closes the cluster and leaves the selection alone
    clicking = tmp_path / "click.html"
    clicking.write_text(page.html.replace("</body>", (
        "<script>function click(q) { document.querySelector(q).dispatchEvent("
        "new MouseEvent('click', {bubbles: true})); }"
        "click('g.node[data-op=\"remainder\"]'); click('g.cluster > .header');"
        "</script></body>")))
    dom = _run("--dump-dom", f"file://{clicking}", tmp_path=tmp_path)
    marked = Marked(dom)
    assert marked.selected == str(line)
    assert sorted(op for op, _ in marked.nodes) == _expected_ops(graph, line)
    assert dom.count("cluster closed") == 1


def rnn_loss(W, xs, h):
    for t in ag.range(xs.shape[0]):
        h = np.tanh(xs[t] @ W + h)
    return np.sum(h * h)


class Stored(html.parser.HTMLParser):
    """The stored-bytes column of the source pane as the browser laid it out: per source
    line (its data-lines), whether it is marked and the column's text."""

    def __init__(self, text):
        super().__init__()
        self.rows, self.line, self.open = {}, None, False
        self.feed(text)

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        classes = (attrs.get("class") or "").split()
        if tag == "span" and "ln" in classes:
            self.line = (attrs["data-lines"], "hl" in classes)
        self.open = tag == "span" and "sb" in classes

    def handle_data(self, data):
        if self.open and self.line is not None:
            self.rows[self.line[0]] = (self.line[1], data)
            self.open = False


def test_a_profiled_gradient_page_shows_each_lines_stored_bytes(tmp_path):
    T, B, H = 10, 4, 8
    args = (np.eye(H) * 0.5, np.ones((T, B, H)), np.zeros((B, H)))
    page = ag.explore(rnn_loss, *args, gradient=True, profile=True)
    path = page.save(str(tmp_path / "rnn.html"))
    lines, first = inspect.getsourcelines(rnn_loss)
    step = first + next(k for k, text in enumerate(lines) if "np.tanh" in text)
    where = os.environ.get("AUTOGRAPH_TEST_ARTEFACTS") or str(tmp_path)
    os.makedirs(where, exist_ok=True)
    shot = os.path.join(where, "explorer_rnn_gradient.png")
    dom = _run("--dump-dom", f"--screenshot={shot}", "--window-size=1500,1000",
               f"file://{path}#line={step}", tmp_path=tmp_path)
    rows = Stored(dom).rows
    # the step line, selected, stores one B x H float64 state per step: 2560 bytes
    assert rows[str(step)] == (True, "2.5 KiB"), rows
    assert rows[str(first + 1)] == (False, "0 B")        # the `for` line stores nothing
    with open(shot, "rb") as f:
        assert f.read(8) == b"\x89PNG\r\n\x1a\n"
