"""`for i in ag.range(n, progress=True)`: a bar that moves while the staged loop runs.

Updates are counted, not timed: a recording stand-in for tqdm (`bars`) keeps every bar's
total, label, updates and closes; the plain line on stderr is checked where tqdm is
hidden; the real tqdm once. The loop's values are plain Python's, the generated code
tests a loop variable and calls the bar's kernel only when an update is due, and every
way out of the loop (its end, break, return, an error) closes the bar exactly once."""

import os
import subprocess
import sys
import textwrap
import types

import numpy as np
import pytest

import autograph as ag
from autograph.runtime import progress
from autograph.runtime.exec import codegen, interpreter


@pytest.fixture(autouse=True)
def plain_line(monkeypatch):
    """The plain line on stderr unless a test asks for tqdm (installed with the test extra):
    `import tqdm` fails while sys.modules holds None for it. Every update is drawn."""
    monkeypatch.setitem(sys.modules, "tqdm", None)
    monkeypatch.setattr(progress, "MININTERVAL", 0.0)


class Recorded:
    """tqdm's interface, recording what autograph asks of it."""
    made = []

    def __init__(self, total, desc, leave):
        self.total, self.desc, self.n, self.updates, self.closes = total, desc, 0, 0, 0
        Recorded.made.append(self)

    def update(self, k):
        self.n += k
        self.updates += 1

    def close(self):
        self.closes += 1


@pytest.fixture
def bars(monkeypatch):
    Recorded.made = []
    monkeypatch.setitem(sys.modules, "tqdm", types.SimpleNamespace(tqdm=Recorded))
    return Recorded.made


def described(bar):
    return (bar.total, bar.desc, bar.n, bar.closes)


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


def lines(err):
    return [part for part in err.replace("\n", "\r").split("\r") if part]


def test_a_long_loop_updates_its_bar_100_times_and_closes_it_once(bars):
    f = ag.function(weighted)
    for n in (10_000, 7, 1000, 0):
        assert f(np.float64(1.0), np.int64(n)) == plain(1.0, n)
    assert [described(b) for b in bars] == [
        (10_000, "steps", 10_000, 1), (7, "steps", 7, 1), (1000, "steps", 1000, 1),
        (0, "steps", 0, 1)]
    assert [b.updates for b in bars] == [100, 7, 100, 0]
    assert f.experimental_get_tracing_count() == 1


def test_the_generated_code_calls_the_bar_only_when_an_update_is_due(bars, monkeypatch):
    """Work counted: 100 calls for 10,000 iterations (the test is inline); the
    interpreter, which has no inline test, calls it every iteration with the same bar."""
    calls = []
    update = progress.update

    def counting(*args):
        calls.append(1)
        return update(*args)
    monkeypatch.setattr(progress, "update", counting)
    f = ag.function(weighted)
    assert f(np.float64(1.0), np.int64(10_000)) == plain(1.0, 10_000)
    assert len(calls) == 100
    graph = f.get_concrete_function(np.float64(1.0), np.int64(10_000)).graph
    assert interpreter.run(graph, [np.float64(1.0), np.int64(2500)])[0] == plain(1.0, 2500)
    assert len(calls) == 100 + 2500
    assert [(described(b), b.updates) for b in bars] == [
        ((10_000, "steps", 10_000, 1), 100), ((2500, "steps", 2500, 1), 100)]


def test_the_interpreter_updates_the_bar_as_the_generated_code_does(bars):
    """Codegen writes the test inline; the interpreter calls the kernel every iteration,
    which makes the same test."""
    graph = ag.function(weighted).get_concrete_function(np.float64(1.0), np.int64(5)).graph
    out = interpreter.run(graph, [np.float64(1.0), np.int64(2500)])
    assert out[0] == plain(1.0, 2500)
    assert [(described(b), b.updates) for b in bars] == [((2500, "steps", 2500, 1), 100)]


def test_the_generated_code_tests_a_loop_variable_and_keeps_int_counters():
    args = (np.float64(1.0), np.int64(10))
    with_bar = codegen.source_of(ag.function(weighted).get_concrete_function(*args).graph)
    without = codegen.source_of(ag.function(plain).get_concrete_function(*args).graph)
    assert "progress" not in without
    lines_ = with_bar.splitlines()
    call = next(k for k, line in enumerate(lines_) if "progress_update(" in line)
    assert lines_[call - 1].strip() == "if _loop_counter_ >= _progress_bar_:", with_bar
    assert lines_[call].strip().startswith(
        "_progress_bar_ = progress_update(xp, _loop_counter_, _progress_bar_, ")
    # the open, the loop variables, the test, the update, the close: nothing else
    assert sum("progress" in line for line in lines_) == 5, with_bar

    def indexed(xs, h):
        for t in ag.range(xs.shape[0], progress=True):
            h = xs[t] + h
        return h
    source = codegen.source_of(ag.function(indexed).get_concrete_function(
        np.ones((100, 3)), np.ones(3)).graph)
    assert "for _loop_counter_ in range(" in source, source   # Python ints: the bar reads
    #                                                          # the counter as an index
    ag.function(indexed)(np.ones((100, 3)), np.ones(3))


def test_the_plain_line_without_tqdm(capsys):
    f = ag.function(weighted)
    for n in (300, 7):
        assert f(np.float64(1.0), np.int64(n)) == plain(1.0, n)
        err = capsys.readouterr().err
        shown = lines(err)
        assert shown[0] == f"steps 0/{n} (0%)" and shown[-1] == f"steps {n}/{n} (100%)"
        assert len(shown) == min(n, progress.UPDATES) + 1 and err.endswith("\n")
        assert err.count("\n") == 1
        counts = [int(s.split()[1].split("/")[0]) for s in shown]
        assert counts == sorted(counts)


def test_the_plain_line_draws_at_most_every_mininterval(capsys, monkeypatch):
    monkeypatch.setattr(progress, "MININTERVAL", 3600.0)
    assert ag.function(weighted)(np.float64(1.0), np.int64(5000)) == plain(1.0, 5000)
    assert lines(capsys.readouterr().err) == ["steps 0/5000 (0%)", "steps 5000/5000 (100%)"]


def test_a_range_of_python_ints_is_staged_for_its_bar(bars):
    def fixed(x):
        s = 0.0
        for i in ag.range(250, progress=True):
            s = s + x * i
        return s
    f = ag.function(fixed)
    assert f(np.float64(2.0)) == 2 * sum(range(250))
    f(np.float64(2.0))          # the bar moves on later runs too: it is in the graph
    assert [described(b) for b in bars] == [(250, None, 250, 1)] * 2


def test_negative_and_unknown_steps(bars):
    def down(x, step):
        s = 0.0
        for i in ag.range(10, 0, -2, progress=True):
            s = s + x * i
        for i in ag.range(10, 0, step, progress=True):   # the step's sign: run time
            s = s + x * i
        return s
    f = ag.function(down)
    assert f(np.float64(1.0), np.int64(-3)) == 30.0 + 10 + 7 + 4 + 1
    assert f(np.float64(1.0), np.int64(1)) == 30.0
    assert [described(b) for b in bars] == [(5, None, 5, 1), (4, None, 4, 1),
                                            (5, None, 5, 1), (0, None, 0, 1)]


def test_eager_loops(capsys, bars):
    assert list(ag.range(5, progress=True)) == [0, 1, 2, 3, 4]
    assert list(ag.range(0, progress=True)) == []
    for i in ag.range(1000, progress="eager"):
        if i == 499:
            break
    with pytest.raises(ZeroDivisionError):
        for i in ag.range(10, progress=True):
            1 / (i - 3)
    assert [described(b) for b in bars] == [(5, None, 5, 1), (0, None, 0, 1),
                                            (1000, "eager", 500, 1), (10, None, 4, 1)]
    assert bars[2].updates == 50


def until(x, n, stop):
    s = 0.0
    for i in ag.range(n, progress=True):
        if s > stop:
            break
        s = s + x
    return s


def test_break_closes_the_bar_and_a_new_run_starts_a_new_one(bars):
    f = ag.function(until)
    assert f(np.float64(1.0), np.int64(5000), np.float64(10.0)) == 11.0
    assert f(np.float64(1.0), np.int64(500), np.float64(1000.0)) == 500.0
    # (the updates come every 50 iterations: the close shows the count the loop reached)
    assert [described(b) for b in bars] == [(5000, None, 12, 1), (500, None, 500, 1)]


def test_return_inside_the_loop_closes_the_bar(bars):
    def find(xs, target):
        for i in ag.range(xs.shape[0], progress=True):
            if xs[i] == target:
                return i
        return -1
    f = ag.function(find)
    xs = np.arange(1000) * 3
    assert f(xs, np.int64(600)) == 200 and f(xs, np.int64(1)) == -1
    assert [(b.total, b.closes) for b in bars] == [(1000, 1), (1000, 1)]
    assert bars[0].n == 201 and bars[1].n == 1000


def test_an_error_inside_the_loop_closes_the_bar(bars):
    def failing(xs, k):
        s = 0.0
        for i in ag.range(xs.shape[0], progress=True):
            s = s + xs[i] / k[i]
        return s
    f = ag.function(failing)
    xs = np.ones(500)
    k = np.ones(500, np.int64)
    k[250] = 0
    with np.errstate(divide="raise"), pytest.raises(FloatingPointError):
        f(xs, k)
    assert [(b.total, b.closes) for b in bars] == [(500, 1)]
    assert f(xs, np.ones(500, np.int64)) == 500.0     # the next run: a new bar
    assert [(b.total, b.n, b.closes) for b in bars[1:]] == [(500, 500, 1)]
    assert not getattr(progress._local, "runs", {})


def test_nested_loops_have_a_bar_each(bars):
    def table(x, rows, cols):
        s = 0.0
        for i in ag.range(rows, progress="rows"):
            for j in ag.range(cols, progress="cols"):
                s = s + x * i * j
        return s
    f = ag.function(table)
    assert f(np.float64(1.0), np.int64(4), np.int64(300)) == sum(range(4)) * sum(range(300))
    assert [described(b) for b in bars] == [(4, "rows", 4, 1)] + [(300, "cols", 300, 1)] * 4
    assert [b.updates for b in bars] == [4] + [100] * 4


def test_enumerate_of_a_range_keeps_its_bar(bars):
    def f(x, n):
        s = 0.0
        for k, i in enumerate(ag.range(n, progress=True)):
            s = s + x * k * i
        return s
    assert ag.function(f)(np.float64(1.0), np.int64(50)) == sum(i * i for i in range(50))
    assert [described(b) for b in bars] == [(50, None, 50, 1)]


def test_vmap_follows_the_furthest_lane(bars):
    def count(n):
        s = 0
        for i in ag.range(n, progress=True):
            s = s + i
        return s
    out = ag.function(ag.vmap(count))(np.array([3, 250, 10]))
    assert out.tolist() == [3, sum(range(250)), 45]
    assert [(b.total, b.closes) for b in bars] == [(250, 1)]


def test_native_code_refuses_the_bar_naming_the_loop():
    """Numba cannot call back into the host: the error names the loop's line."""
    pytest.importorskip("numba")
    from autograph.runtime.exec.native.lower import NativeLoweringError
    with pytest.raises(NativeLoweringError, match="progress.*without jit_compile") as info:
        ag.function(weighted, jit_compile=True)(np.float64(1.0), np.int64(10))
    assert "test_progress.py" in str(info.value)


def test_the_real_tqdm_bar_reaches_its_total(capsys, monkeypatch):
    """With tqdm installed (the `progress` extra; the test extra installs it), the staged
    loop's bar is tqdm's: its final line shows the whole count."""
    monkeypatch.delitem(sys.modules, "tqdm")
    pytest.importorskip("tqdm")
    f = ag.function(weighted)
    assert f(np.float64(1.0), np.int64(250)) == plain(1.0, 250)
    err = capsys.readouterr().err
    assert "steps" in err and "250/250" in err, err


def test_a_saved_loop_keeps_its_bar(tmp_path, bars):
    module = ag.Module()
    module.f = ag.function(weighted, input_signature=[ag.TensorSpec([], np.float64),
                                                      ag.TensorSpec([], np.int64)])
    ag.saved_model.save(module, str(tmp_path / "m"))
    loaded = ag.saved_model.load(str(tmp_path / "m"))
    assert loaded.f(np.float64(1.0), np.int64(30)) == plain(1.0, 30)
    assert [described(b) for b in bars] == [(30, "steps", 30, 1)]


def test_a_script_shows_the_bar_on_stderr(tmp_path):
    """`python file.py`, no bytecode written, tqdm hidden: the line is on stderr, the
    result on stdout."""
    script = tmp_path / "train.py"
    script.write_text(textwrap.dedent("""
        import sys
        sys.modules["tqdm"] = None
        import numpy as np
        import autograph as ag

        @ag.function
        def f(x, n):
            s = 0.0
            for i in ag.range(n, progress="train"):
                s = s + x * i
            return s

        print(f(np.float64(1.0), np.int64(1000)))
    """))
    env = dict(os.environ, PYTHONDONTWRITEBYTECODE="1")
    done = subprocess.run([sys.executable, str(script)], capture_output=True, text=True,
                          env=env, timeout=120, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == str(float(sum(range(1000))))
    assert lines(done.stderr)[0] == "train 0/1000 (0%)"
    assert lines(done.stderr)[-1] == "train 1000/1000 (100%)" and done.stderr.endswith("\n")
    assert not list(tmp_path.rglob("*.pyc"))
