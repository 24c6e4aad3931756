"""A loaded trace's first call runs a graph without loops or branches through the
reference interpreter (no optimiser, no code generation imported: what a one-shot call in
a fresh process needs); from the second call on, and from the first for a graph with a
loop or a branch (the interpreter would walk the body node by node every iteration), it
runs compiled (restored.py). Both must give what the saved
object gives: every case of cases.py is called twice on the original and twice on the
loaded object, bit for bit, result types (array or NumPy scalar) and printed output too."""

import contextlib
import io

import numpy as np

import autograph as ag

from tests.saved_model import cases


def _strictly_same(got, want):
    lg, lw = cases.leaves(got), cases.leaves(want)
    return cases.same(got, want) and [type(x) for x in lg] == [type(x) for x in lw]


def test_first_interpreted_then_compiled_calls_match_the_original(tmp_path):
    for c in cases.all_cases():
        with contextlib.redirect_stdout(io.StringIO()):
            c.call(c.obj)        # the first call traces (and moves any state on)
        d = str(tmp_path / c.name)
        ag.saved_model.save(c.obj, d)
        loaded = ag.saved_model.load(d)
        for call in ("first (interpreted)", "second (compiled)"):
            with contextlib.redirect_stdout(io.StringIO()) as want_out:
                want = c.call(c.obj)
            with contextlib.redirect_stdout(io.StringIO()) as got_out:
                got = c.call(loaded, loaded=True)
            assert _strictly_same(got, want), (c.name, call, got, want)
            assert got_out.getvalue() == want_out.getvalue(), (c.name, call)


class _MLP(ag.Module):
    def __init__(self):
        super().__init__()
        r = np.random.default_rng(1)
        self.w = ag.Variable(r.standard_normal((5, 3)))
        self.b = ag.Variable(np.zeros(3))

    @ag.function(input_signature=[ag.TensorSpec([None, 5], np.float64)])
    def __call__(self, x):
        return np.tanh(x @ self.w + self.b)


def test_the_first_call_interprets_and_later_calls_reuse_one_compiled_runner(tmp_path):
    m = _MLP()
    ag.saved_model.save(m, str(tmp_path / "m"))
    loaded = ag.saved_model.load(str(tmp_path / "m"))
    concrete, = loaded._children["__call__"].concrete_functions
    x = np.linspace(-1, 1, 10).reshape(2, 5)
    first = loaded(x)
    assert concrete._interpreted and not concrete._runners      # nothing compiled yet
    second = loaded(x)
    assert len(concrete._runners) == 1                           # compiled once
    third = loaded(x)
    assert len(concrete._runners) == 1
    for y in (first, second, third):
        assert type(y) is np.ndarray and y.tobytes() == m(x).tobytes()
    # the returned array is the caller's: changing it changes no later result
    first[...] = 7.0
    assert loaded(x).tobytes() == m(x).tobytes()


def test_a_constant_output_is_a_fresh_writable_array_in_both_tiers(tmp_path):
    @ag.function(input_signature=[ag.TensorSpec([3], np.float64)])
    def f(x):
        return x * 2.0, np.zeros(3)

    ag.saved_model.save(f, str(tmp_path / "f"))
    g = ag.saved_model.load(str(tmp_path / "f"))
    for _ in range(2):
        y, z = g(np.ones(3))
        assert z.flags.writeable and z.tobytes() == np.zeros(3).tobytes()
        z[0] = 5.0                      # must not change the graph's constant
    assert g(np.ones(3))[1][0] == 0.0


def test_0d_outputs_have_one_type_in_both_tiers(tmp_path):
    """A computed 0-d output is a NumPy scalar (codegen's rule); an argument returned as it
    is stays the object passed in."""
    @ag.function(input_signature=[ag.TensorSpec([], np.float64), ag.TensorSpec([3], np.float64)])
    def f(s, v):
        return s, np.sum(v) * s, v

    ag.saved_model.save(f, str(tmp_path / "f"))
    g = ag.saved_model.load(str(tmp_path / "f"))
    s, v = np.asarray(2.0), np.arange(3.0)
    for _ in range(2):
        a, b, c = g(s, v)
        assert a is s and c is v
        assert type(b) is np.float64 and b == 6.0


def test_a_graph_with_a_loop_is_compiled_from_its_first_call(tmp_path):
    """A one-shot process running a saved recurrence over much data must not pay the
    interpreter's per-iteration walk (12.7 s against 0.07 s for 100,000 steps)."""
    @ag.function(input_signature=[ag.TensorSpec([None], np.float64)])
    def prefix(x):
        out = np.zeros_like(x)
        out[0] = x[0]
        for i in ag.range(1, len(x)):
            out[i] = out[i - 1] + x[i]
        return out

    ag.saved_model.save(prefix, str(tmp_path / "p"))
    loaded = ag.saved_model.load(str(tmp_path / "p"))
    concrete, = loaded.concrete_functions
    x = np.linspace(0.0, 1.0, 50)
    assert loaded(x).tobytes() == np.cumsum(x).tobytes()
    assert len(concrete._runners) == 1                  # compiled, not interpreted
