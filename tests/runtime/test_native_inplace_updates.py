"""Variables updated in place by native code (issue 30, goal 3, `jit_compile=True`):
`assign_add`/`assign_sub` of an elementwise delta joins the kernel computing the delta
(native/fuse_updates.py), and a kernel writes a Variable's new value into its old array
when nothing else can see that array (native/inplace.py). Counted in the generated source
and by the arrays' identities; every result is compared with generated NumPy code
(`ag.function` without jit), including programs where writing in place would be wrong."""

import re

import numpy as np
import pytest

numba = pytest.importorskip("numba")

import autograph as ag  # noqa: E402
from autograph.runtime.exec import native  # noqa: E402
from autograph.runtime.exec.native import inplace  # noqa: E402

RNG = np.random.default_rng(11)


@pytest.fixture(autouse=True)
def _cache_dir(tmp_path_factory, monkeypatch):
    monkeypatch.setenv("AUTOGRAPH_CACHE_DIR", str(tmp_path_factory.getbasetemp() / "agcache"))


def _main(fn, *args):
    source = native.source_of(fn.get_concrete_function(*args)._graph_to_run())
    return source, source.split("\ndef native_")[1]


def _kernels(source):
    """{kernel module's file: its text}: source_of shows each fused kernel's module
    (kernel_modules.py) under a `# ag_k_<hash>.py` line, then the function's module."""
    parts = re.split(r"^# (ag_k_\w+\.py)\n", source, flags=re.M)
    return {parts[i]: parts[i + 1].split("\n\nimport math")[0]
            for i in range(1, len(parts), 2)}


def _in_place_outputs(text):
    """How many of a kernel's outputs are arrays it was given (`o3 = a1`)."""
    return len(re.findall(r"^    o\d+ = a\d+$", text, re.M))


def _step(jit, dtype):
    """Adam's update of a weight and a bias from given gradients, returning the weight:
    (step, w, b, optimizer)."""
    w = ag.Variable(RNG.standard_normal((6, 4)).astype(dtype), name="w")
    b = ag.Variable(np.zeros(4, dtype), name="b")
    opt = ag.optimizers.Adam(0.01)
    opt.build([w, b])

    @ag.function(jit_compile=jit)
    def step(gw, gb):
        opt.apply_gradients([(gw * 1.0, w), (gb * 1.0, b)])
        return w.read_value()
    return step, w, b, opt


def _grads(dtype):
    return (RNG.standard_normal((6, 4)).astype(dtype), RNG.standard_normal(4).astype(dtype))


def test_adam_writes_in_place_what_nobody_else_holds():
    dtype = np.float32
    gw, gb = _grads(dtype)
    jit, w_j, b_j, opt_j = _step(True, dtype)
    ref, w_r, b_r, opt_r = _step(False, dtype)
    w_r.assign(w_j.numpy().copy())
    source, main = _main(jit, gw, gb)
    # the update is in the kernel (no np.subtract of a Variable after it) ...
    assert "np.subtract(var_" not in main and "np.add(var_" not in main, main
    # ... and each parameter's kernel writes w (or b), m and v into their own arrays
    adam = [k for k in _kernels(source).values() if "np.sqrt" in k]
    assert len(adam) == 2 and all(_in_place_outputs(k) == 3 for k in adam), adam
    tol = dict(rtol=2e-5, atol=1e-6)
    kept_j, kept_r = [], []

    def both():
        g = _grads(dtype)
        wj, wr = jit(*g), ref(*g)
        kept_j.append((wj, wj.copy()))
        kept_r.append(wr)

    both()
    slots = [b_j._value] + [opt_j.get_slot(v, s)._value for v in (w_j, b_j) for s in "mv"]
    ids = [id(a) for a in slots]
    del slots
    for _ in range(3):
        both()
    taken = w_j.numpy()                 # the caller holds w's array: the next step copies it
    snapshot = taken.copy()
    view = w_j.numpy()[1:3]
    view_snapshot = view.copy()
    both()
    for (held, copy), want in zip(kept_j, kept_r):
        np.testing.assert_array_equal(held, copy)        # untouched by later steps
        np.testing.assert_allclose(held, want, **tol)
    np.testing.assert_array_equal(taken, snapshot)
    np.testing.assert_array_equal(view, view_snapshot)
    for vj, vr in ((w_j, w_r), (b_j, b_r)):
        np.testing.assert_allclose(vj.numpy(), vr.numpy(), **tol)
        for s in ("m", "v"):
            np.testing.assert_allclose(opt_j.get_slot(vj, s).numpy(),
                                       opt_r.get_slot(vr, s).numpy(), **tol)
    now = [b_j._value] + [opt_j.get_slot(v, s)._value for v in (w_j, b_j) for s in "mv"]
    assert [id(a) for a in now] == ids       # b and the four slots: updated in place
    assert all(a.dtype == dtype for a in now)


def _kept(h):
    """owned() handed back h's own array (outside an assert: pytest's rewriting keeps
    references to the values it shows)."""
    return inplace.owned(h._value) is h._value


def test_owned_copies_whatever_someone_else_can_see():
    class Holder:
        pass

    h = Holder()
    h._value = np.zeros(3)
    assert _kept(h)
    other = h._value
    assert not _kept(h)                                     # a second name
    del other
    view = h._value[1:]
    assert not _kept(h)                                     # a view holds it
    del view
    assert _kept(h)
    h._value.flags.writeable = False
    assert not _kept(h)                                     # read-only
    base = np.zeros(4)
    h._value = base[:3]
    assert not _kept(h)                                     # someone else's memory

    @numba.njit
    def make():
        a = np.ones(3)
        return a, a
    h._value, twin = make()     # two arrays over one allocation (two MemInfo objects)
    assert h._value is not twin and not _kept(h)
    del twin
    assert _kept(h)                                         # its MemInfo held by it alone
    copy = inplace.owned(h._value[::2])
    assert copy.flags.owndata


def _variables_pair(shape=(4, 3)):
    init = RNG.standard_normal(shape)
    return init, ag.Variable(init.copy(), name="vj"), ag.Variable(init.copy(), name="vr")


def _run_both(make, x, calls=2):
    """make(v) -> f; the jit and the reference each with their own Variable."""
    init, vj, vr = _variables_pair(x.shape)
    fj = ag.function(make(vj), jit_compile=True)
    fr = ag.function(make(vr))
    outs = []
    for _ in range(calls):
        outs.append((fj(x), fr(x)))
    for got, want in outs:
        got, want = (got, want) if isinstance(got, tuple) else ((got,), (want,))
        for g, w in zip(got, want):
            np.testing.assert_allclose(g, w, rtol=1e-13, atol=1e-15)
    np.testing.assert_allclose(vj.numpy(), vr.numpy(), rtol=1e-13)
    return fj, outs


def _source(fn, x):
    return _main(fn, x)


def test_the_old_value_returned_stays_a_new_array():
    def make(v):
        def f(x):
            old = v.read_value()
            v.assign_sub(x * 0.5)
            return old, v.read_value() * 2.0
        return f
    x = RNG.standard_normal((4, 3))
    fj, outs = _run_both(make, x, calls=3)
    olds = [got[0] for got, _ in outs]
    assert not np.allclose(olds[0], olds[1])       # each call's old value kept
    source, _ = _source(fj, x)
    assert not any(_in_place_outputs(k) for k in _kernels(source).values()), source


def test_an_old_value_read_after_the_update_stays_a_new_array():
    def make(v):
        def f(x):
            old = v.read_value()
            v.assign(old * 0.5 + x)
            y = np.exp(x) if x[0, 0] > 10.0 else x     # (ends the kernel)
            return np.sum(old * y)              # the old value read after the kernel
        return f
    x = RNG.standard_normal((4, 3))
    fj, _ = _run_both(make, x)
    source, _ = _source(fj, x)
    assert not any(_in_place_outputs(k) for k in _kernels(source).values()), source


def test_the_second_write_of_a_variable_is_not_in_place():
    def make(v):
        def f(x):
            v.assign(x * 2.0)                    # the first write: into v's array...
            v.assign_add(np.exp(x))              # ...the second: a new array
            return v.read_value() + 1.0
        return f
    x = RNG.standard_normal((4, 3))
    x_before = x.copy()
    fj, _ = _run_both(make, x, calls=3)
    np.testing.assert_array_equal(x, x_before)
    source, main = _source(fj, x)
    assert sum(_in_place_outputs(k) for k in _kernels(source).values()) == 1, source
    assert re.search(r"var_\w+ = np.add\(var_", main), main


def test_an_update_inside_a_loop_is_not_in_place():
    def make(v):
        def f(x):
            before = v.read_value()
            for i in range(3):
                v.assign_sub(before * 0.1 + x)   # `before` read again every iteration
            return v.read_value()
        return f
    x = RNG.standard_normal((4, 3))
    _run_both(make, x, calls=2)


def _through_its_transpose(v, x):
    v.assign(v.read_value() * 0.9 + v.read_value().T * 0.5 + x)


def _by_a_view_of_itself(v, x):
    v.assign_sub(np.tanh(v.read_value().T) * x)


@pytest.mark.parametrize("update", [_through_its_transpose, _by_a_view_of_itself])
def test_a_kernel_reading_the_old_value_through_a_view_stays_a_new_array(update):
    """`W.T` read element (i, j) while W[i, j] is written would see W[j, i] already
    overwritten: a kernel reading the old value through a view is not done in place."""
    def make(v):
        def f(x):
            update(v, x)
            return np.sum(x)
        return f
    x = RNG.standard_normal((4, 4))
    fj, _ = _run_both(make, x, calls=3)
    source, _ = _source(fj, x)
    assert not any(_in_place_outputs(k) for k in _kernels(source).values()), source


def test_random_programs_agree_with_generated_numpy_code():
    """A sample (one program) of benchmarks/inplace_updates_fuzz.py (reads, assigns,
    updates, views of two Variables; every result of three calls kept to the end)."""
    import random
    from benchmarks import inplace_updates_fuzz as fuzz
    rng = random.Random(1)
    exercised = 0
    for n in range(1):
        source = fuzz.program(rng)
        (got, fn), (want, _) = fuzz.run(source, n, True), fuzz.run(source, n, False)
        assert fuzz.agree(got, want), source
        if not isinstance(got, str):
            exercised += fuzz.in_place_outputs(fn, np.zeros((4, 4)))
    assert exercised >= 1       # the program writes in place


def test_the_ownership_check_and_the_write_hold_the_variables_locks(monkeypatch):
    """Another thread never takes an array the call writes in place: the call holds its
    Variables' locks from `owned` to the write-back, and readers (numpy(), read_value(),
    a graph's read) take the lock, so a reader gets the array before the check (which then
    copies) or the new one after."""
    jit, w, b, opt = _step(True, np.float64)
    gw, gb = _grads(np.float64)
    seen = []
    real = inplace.owned

    def checking(a):
        seen.append(w._lock.locked() and b._lock.locked())
        return real(a)
    monkeypatch.setattr(inplace, "owned", checking)   # (the runner binds it when built)
    jit(gw, gb)
    jit(gw, gb)
    assert seen and all(seen), seen
    import threading
    got = []
    w._lock.acquire()                    # as a running native call holds it
    try:
        reader = threading.Thread(target=lambda: got.append(w.numpy()))
        reader.start()
        reader.join(0.2)
        assert reader.is_alive() and not got     # the reader waits for the call to end
    finally:
        w._lock.release()
    reader.join(10)
    assert len(got) == 1 and got[0] is w._value
    before = got[0].copy()
    jit(gw, gb)                                  # the reader holds it: the step copies
    np.testing.assert_array_equal(got[0], before)
