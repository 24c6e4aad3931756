"""autodiff/stack_buffers.py: a differentiated loop's stack of same-shaped arrays lives in
one contiguous buffer that the next call takes again (no fresh memory, so no page faults,
per call). Counted, not timed: buffers allocated and reused. Gradients with buffered
stacks equal central differences in every mode and the list-of-references path exactly;
what must not be buffered or reused is not (a view of a row still alive, a push of
another shape, a push past the capacity, scalars, small stacks)."""

import numpy as np
import pytest

import autograph as ag
from autograph.autodiff import stack_buffers, stacks
from tests.autodiff.modes import MODES, fd, fd2, grad, second


@pytest.fixture
def buffered(monkeypatch):
    """Every preallocated stack of arrays is buffered (the tests' arrays are small)."""
    monkeypatch.setattr(stack_buffers, "MIN_BYTES", 0)
    stack_buffers.clear()
    before = dict(stack_buffers.counts)
    yield lambda: {k: stack_buffers.counts[k] - before[k] for k in before}
    stack_buffers.clear()


def rnn_for(W, xs, h0):
    h = h0
    for t in ag.range(xs.shape[0]):
        h = np.tanh(h @ W + xs[t])
    return np.sum(h * h)


def rnn_while_bias(W, xs, h0, b, n):
    h = h0
    t = 0
    while t < n:                # (n an array argument: a staged loop when traced)
        h = np.tanh(h @ W + xs[t] + b)
        t += 1
    return np.sum(np.sin(h))


def rnn_break(W, xs, h0):
    h = h0
    for t in ag.range(xs.shape[0]):
        h = np.tanh(h @ W + xs[t])
        if np.sum(h) > 1e9:     # (never: the stacks' capacity is the bound, not the trips)
            break
    return np.sum(h)


def _data(n, batch, hidden, seed=0):
    rng = np.random.default_rng(seed)
    return (rng.standard_normal((hidden, hidden)) / 2,
            0.5 * rng.standard_normal((n, batch, hidden)),
            0.1 * rng.standard_normal((batch, hidden)),
            0.1 * rng.standard_normal(hidden))


CASES = [(rnn_for, 5, 2, 3), (rnn_for, 1, 3, 2), (rnn_while_bias, 4, 2, 3),
         (rnn_while_bias, 6, 1, 4), (rnn_break, 5, 2, 3)]


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("f, n, batch, hidden", CASES)
def test_gradients_with_buffered_stacks(buffered, mode, f, n, batch, hidden):
    W, xs, h0, b = _data(n, batch, hidden)
    extra = (xs, h0, b, np.int64(n)) if f is rnn_while_bias else (xs, h0)
    got = grad(mode, f, W, *extra)
    np.testing.assert_allclose(got, fd(f, W, *extra), rtol=1e-6, atol=1e-8)
    if mode != "eager":
        assert buffered()["new"] >= 1     # (the eager tape's stacks have no capacity)


@pytest.mark.parametrize("f, n, batch, hidden", CASES[::2])
def test_buffered_equals_references(monkeypatch, f, n, batch, hidden):
    """The same gradient, bit for bit, whether the stacks keep references or copies."""
    W, xs, h0, b = _data(n, batch, hidden, seed=3)
    extra = (xs, h0, b, np.int64(n)) if f is rnn_while_bias else (xs, h0)
    monkeypatch.setattr(stack_buffers, "MIN_BYTES", 1 << 62)
    listed = ag.value_and_grad(f)(W, *extra)
    monkeypatch.setattr(stack_buffers, "MIN_BYTES", 0)
    before = stack_buffers.counts["new"] + stack_buffers.counts["reused"]
    copied = ag.value_and_grad(f)(W, *extra)
    assert stack_buffers.counts["new"] + stack_buffers.counts["reused"] > before
    np.testing.assert_array_equal(listed[1], copied[1])
    assert listed[0] == copied[0]
    stack_buffers.clear()


def test_second_gradient_of_persistent_tape(buffered):
    def f(x):
        y = x
        for _ in ag.range(4):
            y = np.sin(y) * x
        return np.sum(y)
    x0 = np.array([0.3, -0.7, 1.1])

    @ag.function
    def traced(x):
        with ag.GradientTape(persistent=True) as outer:
            outer.watch(x)
            with ag.GradientTape() as inner:
                inner.watch(x)
                y = f(x)
            s = np.sum(inner.gradient(y, x))
        return outer.gradient(s, x), outer.gradient(s, x)
    with ag.GradientTape(persistent=True) as outer:    # eagerly
        x = outer.watch(x0)
        with ag.GradientTape() as inner:
            inner.watch(x)
            y = f(x)
        s = np.sum(inner.gradient(y, x))
    for got in (outer.gradient(s, x), outer.gradient(s, x)) + tuple(traced(x0)):
        np.testing.assert_allclose(got, fd2(f, x0), rtol=1e-5, atol=1e-6)
    x = x0
    for mode in ("traced", "grad"):
        np.testing.assert_allclose(second(mode, f, x), fd2(f, x), rtol=1e-5, atol=1e-6)


def test_buffers_are_reused_from_call_to_call(buffered):
    W, xs, h0, _ = _data(6, 2, 3)
    vg = ag.value_and_grad(rnn_for)
    first = vg(W, xs, h0)
    made = buffered()
    assert made["new"] >= 1
    for _ in range(3):
        again = vg(W, xs, h0)
        np.testing.assert_array_equal(again[1], first[1])
    now = buffered()
    assert now["new"] == made["new"]                  # no new memory after the first call
    assert now["reused"] - made["reused"] == 3 * made["new"]
    assert stack_buffers.held_bytes() > 0
    stack_buffers.clear()
    assert stack_buffers.held_bytes() == 0


def _pushed(capacity, values):
    s = stacks._stack_new_kernel(np, np.int64(capacity))
    for i, v in enumerate(values):
        s = stacks._stack_push_kernel(np, s, np.int64(i), v)
    return s


def test_a_row_still_seen_is_never_reused(buffered):
    rows = [np.full((2, 3), float(i)) for i in range(4)]
    s = _pushed(4, rows)
    assert isinstance(s.items, np.ndarray)
    kept = stacks._stack_get_kernel(np, s, 2, dtype=np.float64, shape=(2, 3))
    del s                                           # its buffer goes to the pool
    t = _pushed(4, [np.full((2, 3), -1.0)] * 4)      # must not take it: `kept` sees it
    np.testing.assert_array_equal(kept, rows[2])
    assert kept.base is not t.items
    del t, kept
    u = _pushed(4, rows)                            # now free: taken again
    assert buffered()["reused"] >= 1
    np.testing.assert_array_equal(stacks._stack_get_kernel(np, u, 3, dtype=None, shape=None),
                                  rows[3])


def test_what_does_not_fit_keeps_references(buffered):
    a, b = np.ones((2, 3)), np.arange(9.0).reshape(3, 3)
    s = _pushed(3, [a, a, b])                       # another shape: back to a list
    assert isinstance(s.items, list)
    assert s.items[2] is b
    np.testing.assert_array_equal(s.items[0], a)
    s = _pushed(2, [a, a * 2, a * 3])               # past the capacity: appended
    assert isinstance(s.items, list) and len(s.items) == 3
    np.testing.assert_array_equal(s.items[1], a * 2)
    s = _pushed(2, [a, a.astype(np.float32)])       # another dtype
    assert s.items[1].dtype == np.float32
    for values in ([np.float64(1.0)] * 3, [np.array(2.0)] * 3, [[1.0]] * 3):
        s = _pushed(3, values)                      # scalars, 0-d arrays, non-arrays
        assert isinstance(s.items, list) and s.items[1] is values[1]
    g = stacks._stack_new_kernel(np)                # no capacity: grows, never buffered
    stacks._stack_push_kernel(np, g, 0, a)
    assert isinstance(g.items, list)


def test_small_stacks_keep_references():
    stack_buffers.clear()
    s = _pushed(4, [np.ones(3)] * 4)       # 96 bytes: below MIN_BYTES
    assert isinstance(s.items, list)
    big = np.ones(stack_buffers.MIN_BYTES // 8)
    s = _pushed(2, [big, big])
    assert isinstance(s.items, np.ndarray) and s.items.shape == (2,) + big.shape
    del s
    stack_buffers.clear()


# -- values computed into their rows (runtime/exec/stack_rows.py) ---------------------------

@pytest.fixture
def lending(monkeypatch, buffered):
    """Counts, for functions compiled from now on: rows lent, pushes that found their
    value already in its row, pushes that copied into a buffer."""
    seen = {"lent": 0, "in_place": 0, "copied": 0}
    real_next, real_push = stacks.next_row, stacks._buffered_push

    def next_row(handle, fallback, row):
        out = real_next(handle, fallback, row)
        seen["lent"] += out is not fallback
        return out

    def buffered_push(handle, i, value):
        lent = handle.lent is not None and value is handle.lent
        ok = real_push(handle, i, value)
        seen["in_place" if lent else "copied"] += ok
        return ok
    monkeypatch.setattr(stacks._stack_push_kernel, "next_row", next_row)
    monkeypatch.setattr(stacks, "_buffered_push", buffered_push)
    return seen


def test_an_rnn_state_is_computed_into_its_row(lending):
    from autograph.runtime.exec import codegen
    W, xs, h0, _ = _data(7, 2, 3, seed=5)
    vg = ag.value_and_grad(rnn_for)
    value, g = vg(W, xs, h0)
    # the 7 new states were computed in their rows; h0 (pushed before the loop) copied
    assert lending == {"lent": 7, "in_place": 7, "copied": 1}
    cf = vg.__wrapped_function__.get_concrete_function(W, xs, h0)
    assert "out=k_ad_stack_next(" in codegen.source_of(cf._graph_to_run())
    np.testing.assert_allclose(g, fd(rnn_for, W, xs, h0), rtol=1e-6, atol=1e-8)


def test_a_returned_state_keeps_its_value(lending):
    """The final state is a view of the buffer and escapes: the next call must not take
    that buffer (the reference count sees the view) nor change the value."""
    def loss(W, xs, h0):
        h = h0
        for t in ag.range(xs.shape[0]):
            h = np.tanh(h @ W + xs[t])
        return np.sum(h), h
    W, xs, h0, _ = _data(5, 2, 3, seed=6)
    vg = ag.value_and_grad(loss, has_aux=True)
    (_, h_first), g_first = vg(W, xs, h0)
    kept = np.array(h_first)
    assert lending["in_place"] == 5
    for scale in (2.0, -1.0):
        (_, h_again), _ = vg(W * scale, xs, h0)
        assert not np.shares_memory(h_again, h_first)
    np.testing.assert_array_equal(h_first, kept)
    np.testing.assert_allclose(g_first, fd(lambda W, xs, h0: loss(W, xs, h0)[0], W, xs, h0),
                               rtol=1e-6, atol=1e-8)


def test_a_lent_row_pushed_elsewhere_is_never_written_again(buffered):
    rows = [np.full((2, 3), float(i)) for i in range(5)]
    s = _pushed(5, rows[:2])                        # rows 0, 1 written
    key = ((2, 3), np.dtype(np.float64).str)
    lent = stacks.next_row(s, None, key)
    assert lent is not None and np.shares_memory(lent, s.items)
    assert stacks.next_row(s, None, key) is None    # one row lent at a time
    lent[...] = 7.0                                  # the value computed into it
    s = stacks._stack_push_kernel(np, s, np.int64(3), lent)   # pushed at another index
    assert isinstance(s.items, list)                 # the buffer is never written again
    s = stacks._stack_push_kernel(np, s, np.int64(2), rows[4])
    np.testing.assert_array_equal(lent, 7.0)
    np.testing.assert_array_equal(s.items[3], 7.0)
    np.testing.assert_array_equal(s.items[2], rows[4])
    t = _pushed(3, rows[:1])
    assert stacks.next_row(t, "fallback", ((3, 2), key[1])) == "fallback"   # other shape
    assert stacks.next_row(t, "fallback", ((2, 3), "<f4")) == "fallback"   # other dtype
    t = stacks._stack_push_kernel(np, t, np.int64(0), rows[1])   # a row written twice
    assert isinstance(t.items, list)
    np.testing.assert_array_equal(t.items[0], rows[1])


def test_threads_share_the_pool(buffered):
    """Calls in several threads at once: each stack has its own buffer (the pool hands a
    buffer to one taker), and every gradient is the one a lone call gives."""
    import threading
    vg = ag.value_and_grad(rnn_for)
    data = [_data(6, 2, 3, seed=s)[:3] for s in range(4)]
    want = [vg(*d)[1] for d in data]
    got, errors = {}, []

    def work(k):
        try:
            for _ in range(20):
                got[k] = vg(*data[k])[1]
                np.testing.assert_array_equal(got[k], want[k])
        except Exception as exc:          # (reported below, in the test's thread)
            errors.append(exc)
    threads = [threading.Thread(target=work, args=(k,)) for k in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors[0]
    assert buffered()["reused"] > 0
