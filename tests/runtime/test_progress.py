"""`for i in ag.range(n, progress=True)`: a bar that moves while the staged loop runs (tqdm's
when importable: a stand-in module and the real one; else a line on stderr), at most ~100 redraws a
run, a new bar each run, the same values as plain Python, and no trace of it in the
generated code of a loop that did not ask for one."""

import sys
import types

import numpy as np
import pytest

import autograph as ag
from autograph.runtime import progress
from autograph.runtime.exec import codegen


@pytest.fixture(autouse=True)
def plain_line(monkeypatch):
    """The plain line on stderr unless a test asks for tqdm (installed with the test extra):
    `import tqdm` fails while sys.modules holds None for it."""
    monkeypatch.setitem(sys.modules, "tqdm", None)


def weighted(x, n):
    s = 0.0
    for i in ag.range(n, progress="steps"):
        s = s + x * i
    return s


def plain(x, n):
    s = 0.0
    for i in ag.range(n):
        s = s + x * i
    return s


def redraws(err):
    return [part for part in err.replace("\n", "\r").split("\r") if part]


def test_a_staged_loop_moves_its_bar_on_every_run(capsys):
    f = ag.function(weighted)
    for n in (1000, 7, 1000):
        assert f(np.float64(1.0), np.int64(n)) == sum(range(n))
        shown = redraws(capsys.readouterr().err)
        assert shown[-1] == f"steps {n}/{n} (100%)", shown[-3:]
        assert shown[0] == f"steps 1/{n} ({100 // n}%)"       # a new bar each run
        assert len(shown) <= progress.UPDATES + 1
        counts = [int(s.split()[1].split("/")[0]) for s in shown]
        assert counts == sorted(counts)
    assert f.experimental_get_tracing_count() == 1


def test_only_a_loop_that_asks_has_the_bar_in_its_code():
    args = (np.float64(1.0), np.int64(10))
    with_bar = codegen.source_of(ag.function(weighted).get_concrete_function(*args).graph)
    without = codegen.source_of(ag.function(plain).get_concrete_function(*args).graph)
    assert with_bar.count("k_progress(") == 1 and "progress" not in without


def test_a_range_of_python_ints_is_staged_for_its_bar(capsys):
    def fixed(x):
        s = 0.0
        for i in ag.range(250, progress=True):
            s = s + x * i
        return s
    f = ag.function(fixed)
    assert f(np.float64(2.0)) == 2 * sum(range(250))
    capsys.readouterr()
    f(np.float64(2.0))          # the bar moves on later runs too: it is in the graph
    shown = redraws(capsys.readouterr().err)
    assert shown[-1] == "250/250 (100%)" and len(shown) <= progress.UPDATES + 1


def test_negative_steps_and_eager_loops(capsys):
    def down(x):
        s = 0.0
        for i in ag.range(10, 0, -2, progress=True):
            s = s + x * i
        return s
    assert ag.function(down)(np.float64(1.0)) == 30.0
    assert redraws(capsys.readouterr().err)[-1] == "5/5 (100%)"
    assert list(ag.range(5, progress=True)) == [0, 1, 2, 3, 4]
    assert redraws(capsys.readouterr().err) == [f"{k}/5 ({20 * k}%)" for k in range(1, 6)]
    assert list(ag.range(0, progress=True)) == []


def test_an_early_stop_then_a_new_run_starts_a_new_bar(capsys):
    def until(x, n, stop):
        s = 0.0
        for i in ag.range(n, progress=True):
            if s > stop:
                break
            s = s + x
        return s
    f = ag.function(until)
    assert f(np.float64(1.0), np.int64(500), np.float64(10.0)) == 11.0
    capsys.readouterr()
    assert f(np.float64(1.0), np.int64(500), np.float64(1000.0)) == 500.0
    shown = redraws(capsys.readouterr().err)
    assert shown[0] == "1/500 (0%)" and shown[-1] == "500/500 (100%)"


def test_tqdm_drives_the_bar_when_importable(monkeypatch):
    bars = []

    class FakeTqdm:
        def __init__(self, total, desc, leave):
            self.total, self.desc, self.n, self.closed = total, desc, 0, False
            bars.append(self)

        def update(self, k):
            self.n += k

        def close(self):
            self.closed = True
    monkeypatch.setitem(sys.modules, "tqdm", types.SimpleNamespace(tqdm=FakeTqdm))
    f = ag.function(weighted)
    f(np.float64(1.0), np.int64(300))
    f(np.float64(1.0), np.int64(40))
    assert [(b.total, b.desc, b.n, b.closed) for b in bars] == [
        (300, "steps", 300, True), (40, "steps", 40, True)]


def test_the_real_tqdm_bar_reaches_its_total(capsys, monkeypatch):
    """With tqdm installed (the `progress` extra; the test extra installs it), the staged
    loop's bar is tqdm's: its final line shows the whole count."""
    monkeypatch.delitem(sys.modules, "tqdm")
    pytest.importorskip("tqdm")
    f = ag.function(weighted)
    assert f(np.float64(1.0), np.int64(250)) == sum(range(250))
    err = capsys.readouterr().err
    assert "steps" in err and "250/250" in err, err


def test_a_saved_loop_keeps_its_bar(tmp_path, capsys):
    module = ag.Module()
    module.f = ag.function(weighted, input_signature=[ag.TensorSpec([], np.float64),
                                                      ag.TensorSpec([], np.int64)])
    ag.saved_model.save(module, str(tmp_path / "m"))
    loaded = ag.saved_model.load(str(tmp_path / "m"))
    capsys.readouterr()
    assert loaded.f(np.float64(1.0), np.int64(30)) == sum(range(30))
    assert redraws(capsys.readouterr().err)[-1] == "steps 30/30 (100%)"
