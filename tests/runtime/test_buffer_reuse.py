"""Dead buffers reused (issue 30, goal 3): generated NumPy code writes an elementwise result
into the memory of an input that nothing reads afterwards (`out=`), so a chain of
elementwise ops, an optimizer update, allocates one buffer instead of one per op.

Counted, never timed: the `out=` of the generated source, and the most NumPy memory alive
at once during a call (tracemalloc's NumPy domain). Every program is compared with the
interpreter (which never reuses a buffer); the counter-examples are graphs where writing
into the input would give a wrong answer if the proof were skipped (the input read later,
a view of it alive, returned, assigned to a Variable, a user's array, a Variable's own
array, a constant, a loop's carried value)."""

import tracemalloc

import numpy as np
import pytest

import autograph as ag
from autograph.runtime.exec import buffer_reuse, codegen, interpreter
from tests.runtime.tracing import run, trace



@pytest.fixture(autouse=True)
def _unfused(monkeypatch):
    """These programs as NumPy runs them without Numba: chains of elementwise ops are not
    fused (tests/runtime/test_fused_chains.py covers fusion), so `out=` is what is counted."""
    monkeypatch.setenv("AUTOGRAPH_FUSE", "0")


N = 1000
RNG = np.random.default_rng(3)
X = RNG.standard_normal(N)
Y = RNG.standard_normal(N)


def _check(fn, *args):
    """Compile `fn` traced on `args`; its outputs equal the interpreter's (and the user's
    arrays are unchanged). Returns the generated source."""
    kept = [np.array(a, copy=True) for a in args]
    g, _ = trace(fn, *args)
    want = run(g, args, "interpreter")
    for mode in ("codegen", "optimized_codegen"):
        got = run(g, args, mode)
        got2 = run(g, args, mode)          # twice: nothing it wrote leaks into the next call
        for w, a, b in zip(want, got, got2):
            np.testing.assert_array_equal(a, w)
            np.testing.assert_array_equal(b, w)
    for a, k in zip(args, kept):
        np.testing.assert_array_equal(a, k)
    return codegen.source_of(g)


def _peak_buffers(fn, *args):
    """The most NumPy memory alive at once during one call of the compiled `fn`, in arrays
    of N float64s (the arguments are allocated before tracing starts)."""
    g, _ = trace(fn, *args)
    f = codegen.compile_graph(g)
    f(*args)
    tracemalloc.start()
    try:
        tracemalloc.reset_peak()
        base = tracemalloc.get_traced_memory()[0]
        f(*args)
        peak = tracemalloc.get_traced_memory()[1] - base
    finally:
        tracemalloc.stop()
    return peak / (N * 8)


# -- chains reuse ---------------------------------------------------------------------------

def chain(x):
    return np.exp(np.sin(np.cos(x * 2.0)) + 1.0) / 3.0


def test_a_chain_writes_one_buffer():
    src = _check(chain, X)
    assert src.count("out=") == 5      # all six ops but the first (x is the user's)
    # one buffer alive at once (plus the result's small overhead), not two
    assert _peak_buffers(chain, X) < 1.5


def test_full_check_numerics_code_reuses_no_buffer():
    """Full check_numerics' test of a result reads the op's inputs after it (is a NaN new,
    or passed on?): writing the result into an input would blame the input. Watch mode
    (the switch's default for a graph that can run again) keeps no input and reuses; a
    failing call runs again in full mode (runtime/exec/numerics_plan.py)."""
    g, _ = trace(chain, X)
    assert codegen.source_of(g, check_numerics=False).count("out=") == 5
    assert "out=" not in codegen.source_of(g, check_numerics="full")
    assert codegen.source_of(g, check_numerics=True).count("out=") == 5
    bad = np.full_like(X, 1e308)
    with np.errstate(all="ignore"), pytest.raises(ag.errors.NonFiniteError) as info:
        codegen.compile_graph(g, check_numerics=True)(bad)
    assert str(info.value).startswith("check_numerics: multiply made infinity"), info.value


def test_without_the_plan_a_chain_keeps_two_buffers(monkeypatch):
    monkeypatch.setattr(buffer_reuse, "plan", lambda graph, overridden=(): {})
    assert _peak_buffers(chain, X) >= 2


def binary_chain(x, y):
    a = x * y
    b = x - y
    return (a + b) * (a - b)       # a + b into a; a - b into b; the product into one of them


def test_binary_chain():
    src = _check(binary_chain, X, Y)
    assert src.count("out=") == 2
    assert _peak_buffers(binary_chain, X, Y) < 3.5      # a, b and a + b; not four


# -- counter-examples: the input's memory is not dead ----------------------------------------

def read_later(x):
    a = x * 2.0
    b = np.sin(a)                  # a is read again below: sin must not write into it
    return b + a


def view_alive(x):
    a = x * 2.0
    v = a[1:]                      # a view of a
    b = np.sin(a)                  # writing into a would change v
    return b[1:] + v


def reshaped_alive(x):
    a = x * 2.0
    r = a.reshape(10, -1)
    b = np.cos(a)
    return b, r                    # r is a result and a view of a


def returned(x):
    a = x * 2.0
    return a, np.sin(a)


def transposed_read_after(x):
    a = x.reshape(10, -1) * 2.0
    t = a.T
    b = np.sin(a)
    return b.sum() + t[0, 0] + t.sum()


def broadcast_into(x):
    a = (x * 2.0)[:, None]         # (N, 1) into (N, 3): a's memory is too small
    return a + np.ones(3)


def casting(x):
    a = (x * 2.0).astype(np.float32)
    return a + np.float64(1.0)     # float32 in, float64 out: not its memory either


def constant_operand(x):
    c = np.linspace(0.0, 1.0, N)   # a constant of the graph, bound once for every call
    return np.sin(c) + x


@pytest.mark.parametrize("fn", [read_later, view_alive, reshaped_alive, returned,
                                transposed_read_after, broadcast_into, casting,
                                constant_operand])
def test_counter_examples_agree_with_the_interpreter(fn):
    _check(fn, X)


def _line_of(src, kernel):
    return next(ln for ln in src.splitlines() if f"k_{kernel}(" in ln)


@pytest.mark.parametrize("fn, kernel", [(read_later, "sin"), (view_alive, "sin"),
                                        (reshaped_alive, "cos"), (returned, "sin"),
                                        (transposed_read_after, "sin")])
def test_what_may_still_be_read_is_never_written(fn, kernel):
    assert "out=" not in _line_of(_check(fn, X), kernel)


@pytest.mark.parametrize("fn", [read_later, view_alive, returned, transposed_read_after])
def test_the_counter_examples_fail_without_the_proof(monkeypatch, fn):
    """Skipping the liveness proof (every owned input counted dead) gives wrong answers on
    these graphs: the tests above would catch a proof that let them through."""
    monkeypatch.setattr(buffer_reuse.inplace_reads, "reads_done", lambda *a, **k: True)
    with pytest.raises(AssertionError):
        _check(fn, X)


def test_shapes_and_dtypes_that_differ_are_not_reused():
    assert "out=" not in _check(broadcast_into, X)
    assert "out=" not in _check(casting, X)


def test_a_users_array_and_a_constant_are_never_written():
    g, _ = trace(constant_operand, X)
    f = codegen.compile_graph(g)
    first = f(X)[0].copy()
    np.testing.assert_array_equal(f(X)[0], first)       # the constant is unchanged
    src = codegen.source_of(g)
    assert "out=arg0" not in src and "out=Const" not in src


# -- Variables, loops and branches ------------------------------------------------------------

def test_an_assigned_value_is_not_overwritten_and_a_read_is_not_written():
    v = ag.Variable(np.zeros(N), name="kept")
    w = ag.Variable(np.ones(N), name="read")

    @ag.function
    def f(x):
        a = x * 2.0
        v.assign(a)                # v now holds a's memory
        r = w.read_value()         # w's own array
        return np.sin(a) + r * 3.0, r

    out, r = f(X)
    np.testing.assert_allclose(v.numpy(), X * 2.0)
    np.testing.assert_allclose(out, np.sin(X * 2.0) + 3.0)
    np.testing.assert_array_equal(w.numpy(), np.ones(N))
    np.testing.assert_array_equal(r, np.ones(N))


def test_assign_sub_writes_into_its_dead_delta_only():
    v = ag.Variable(np.ones(N), name="v")

    @ag.function
    def step(x):
        v.assign_sub(x * 0.5)             # the delta dies in the update: into=True
        d = x * 0.25
        v.assign_add(d)                   # d is returned too: not written
        return d

    d = step(X)
    np.testing.assert_allclose(v.numpy(), 1.0 - X * 0.25)
    np.testing.assert_allclose(d, X * 0.25)
    src = codegen.source_of(step.get_concrete_function(X)._graph_to_run())
    assert src.count("into=True") == 1


def test_loops_and_branches_agree_with_the_interpreter():
    def body_chain(x, n):
        h = x
        for _ in ag.range(n):
            a = h * 0.5 + 1.0          # a dies in tanh
            h = np.tanh(a) - x          # the carried value h is not written in place
        return h

    def branches(x, flag):
        a = x * 2.0
        if flag > 0:
            b = np.sin(a) + 1.0        # a read in a branch, and after the branch
        else:
            b = np.cos(a)
        return b * a

    for fn, args in ((body_chain, (X, np.int64(4))), (branches, (X, np.float64(1.0))),
                     (branches, (X, np.float64(-1.0)))):
        f = ag.function(fn)
        kept = X.copy()
        got = f(*args)
        ref = interpreter.run(f.get_concrete_function(*args).graph, list(args))[0]
        np.testing.assert_array_equal(got, ref)
        np.testing.assert_array_equal(X, kept)


# -- an optimizer step ------------------------------------------------------------------------

def _adam_reference(w, grads, steps, lr=0.01, b1=0.9, b2=0.999, eps=1e-7):
    m, v = np.zeros_like(w), np.zeros_like(w)
    for t, g in enumerate(grads[:steps], start=1):
        m = b1 * m + (1 - b1) * g
        v = b2 * v + (1 - b2) * (g * g)
        alpha = lr * np.sqrt(1 - b2 ** t) / (1 - b1 ** t)
        w = w - alpha * m / (np.sqrt(v) + eps)
    return w, m, v


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_adam_steps_reuse_buffers_and_match_numpy(dtype):
    w0 = RNG.standard_normal((30, 20)).astype(dtype)
    w = ag.Variable(w0.copy(), name="w")
    opt = ag.optimizers.Adam(0.01)
    opt.build([w])

    @ag.function
    def step(g):
        opt.apply_gradients([(g * 1.0, w)])     # a gradient the step computes (it dies)
        return w.read_value()

    grads = [RNG.standard_normal((30, 20)).astype(dtype) for _ in range(3)]
    for g in grads:
        kept = g.copy()
        step(g)
        np.testing.assert_array_equal(g, kept)
    ref_w, ref_m, ref_v = _adam_reference(w0, grads, 3)
    tol = 1e-5 if dtype == np.float32 else 1e-12
    np.testing.assert_allclose(w.numpy(), ref_w, rtol=tol, atol=tol)
    np.testing.assert_allclose(opt.get_slot(w, "m").numpy(), ref_m, rtol=tol, atol=tol)
    np.testing.assert_allclose(opt.get_slot(w, "v").numpy(), ref_v, rtol=tol, atol=tol)
    src = codegen.source_of(step.get_concrete_function(grads[0])._graph_to_run())
    # per parameter: 5 of the update's 11 array ops and the final subtraction write into
    # a dead buffer; the moments (assigned to their slots) are never written again
    assert src.count("out=") >= 5 and src.count("into=True") == 1


def test_a_delta_two_updates_read_is_not_written_by_the_first():
    v = ag.Variable(np.ones(N), name="v2")
    w = ag.Variable(np.ones(N), name="w2")

    @ag.function
    def step(x):
        d = x * 0.5
        v.assign_sub(d)            # d is read again below: not written here
        w.assign_add(d)            # (an earlier effectful reader: the proof refuses it too)
        return v.read_value() + w.read_value()

    out = step(X)
    np.testing.assert_allclose(v.numpy(), 1.0 - X * 0.5)
    np.testing.assert_allclose(w.numpy(), 1.0 + X * 0.5)
    np.testing.assert_allclose(out, 2.0)
    src = codegen.source_of(step.get_concrete_function(X)._graph_to_run())
    lines = [ln for ln in src.splitlines() if "k_update_variable" in ln]
    assert "into=True" not in lines[0], lines
