"""`ag.profile`'s stored column: the bytes each user line keeps for the backward pass,
measured while the gradient runs. Checked against an independent count (the arrays the
loop's stacks were given, seen by a counting `ad_stack_push` kernel), against the
one-state-per-step figure of docs/gradients.md (T*B*H*8 for a tanh RNN), for lines that
store nothing (0), for a branch, for a checkpointed loop (which stores less), for a GradientTape inside
the function, and on the explorer page (its side column)."""

import inspect
import re

import numpy as np

import autograph as ag
from autograph.runtime.ir import primitives

T, B, H = 10, 4, 8


def rnn_loss(W, xs, h):
    for t in ag.range(xs.shape[0]):
        h = np.tanh(xs[t] @ W + h)
    return np.sum(h * h)


def three(W, xs, h):
    for t in ag.range(xs.shape[0]):
        u = xs[t] * 2.0                 # read only by an add: nothing stored
        a = np.sin(xs[t] @ W)           # sin's rule reads its input, xs[t] @ W
        h = np.tanh(h @ W + a + u)      # tanh's rule reads its output, the next h
    return np.sum(h * h)


def checkpointed(W, xs, h):
    for t in ag.range(xs.shape[0]):
        ag.set_loop_options(checkpoints=3)
        h = np.tanh(xs[t] @ W + h)
    return np.sum(h * h)


def taped(W, xs, h):
    with ag.GradientTape() as tape:
        tape.watch(W)
        for t in ag.range(xs.shape[0]):
            h = np.tanh(xs[t] @ W + h)
        loss = np.sum(h * h)
    return tape.gradient(loss, W)


def branchy(x, n):
    for i in ag.range(n):
        if np.sum(x) > 0:
            x = np.sin(x)
        else:
            x = np.cos(x)
    return np.sum(x)


def line_of(fn, text):
    lines, start = inspect.getsourcelines(fn)
    return start + next(k for k, line in enumerate(lines) if text in line)


def make_args(steps=T):
    rng = np.random.default_rng(0)
    return (rng.standard_normal((H, H)) * 0.3, rng.standard_normal((steps, B, H)),
            rng.standard_normal((B, H)))


def stored(p):
    return {r.line: r.stored for r in p.rows}


def pushed_bytes(fn, args):
    """What the store-all gradient's stacks were given, counted by the push kernel itself
    (arrays of the caller's and views of them excluded: they cost the stack nothing)."""
    prim = primitives.lookup("ad_stack_push")
    pushed = []

    def counting(xp, handle, index, value):
        pushed.append(value)
        return prim.kernel(xp, handle, index, value)
    primitives.PRIMITIVES["ad_stack_push"] = primitives.replace(prim, kernel=counting)
    try:
        ag.function(ag.grad(fn))(*args)
    finally:
        primitives.PRIMITIVES["ad_stack_push"] = prim

    def owned(v):
        root = v
        while isinstance(root, np.ndarray) and root.base is not None:
            root = root.base
        return not any(root is a for a in args)
    assert pushed
    return sum(v.nbytes for v in {id(v): v for v in pushed if owned(v)}.values())


def test_an_rnn_stores_one_state_per_step_at_its_step_line():
    for steps in (T, 2 * T):
        args = make_args(steps)
        p = ag.profile(rnn_loss, gradient=True)(*args)
        got = stored(p)
        # one B x H float64 state a step (docs/gradients.md: (N+1)*B*H*8 with the input;
        # xs[t] is a view of the caller's xs, and h0 is the caller's: free)
        assert got[line_of(rnn_loss, "h = np.tanh")] == steps * B * H * 8
        assert got[line_of(rnn_loss, "for t in")] == 0
        assert got[line_of(rnn_loss, "return")] == 0
        assert p.stored == sum(got.values()) == pushed_bytes(rnn_loss, args)
        np.testing.assert_allclose(p.result, ag.grad(rnn_loss)(*args))
        assert "stored for the backward pass: " in str(p)


def test_each_line_stores_what_the_rules_of_its_consumers_read():
    args = make_args()
    p = ag.profile(three, gradient=True)(*args)
    got = stored(p)
    assert got[line_of(three, "u = xs[t] * 2.0")] == 0
    assert got[line_of(three, "a = np.sin")] == T * B * H * 8
    assert got[line_of(three, "h = np.tanh")] == T * B * H * 8
    assert p.stored == sum(got.values()) == pushed_bytes(three, args)
    rows = {r.line: r for r in p.rows}
    # the line that stores nothing still allocates (its row exists, with its bytes)
    assert rows[line_of(three, "u = xs[t] * 2.0")].bytes >= T * B * H * 8


def test_a_branch_stores_at_its_own_line_what_its_gradient_reads():
    x, n = np.linspace(0.1, 1.0, 100), 5
    p = ag.profile(branchy, gradient=True)(x, np.int64(n))
    got = stored(p)
    # sin's rule reads its input: the caller's x (free), then the n - 1 values sin made
    assert got[line_of(branchy, "x = np.sin(x)")] == (n - 1) * x.nbytes
    assert got.get(line_of(branchy, "x = np.cos(x)"), 0) == 0      # never taken
    assert got[line_of(branchy, "if np.sum")] <= n                # the predicates (bool)
    np.testing.assert_allclose(p.result, ag.grad(branchy)(x, np.int64(n)))


def test_backward_time_is_told_apart_and_a_plain_run_stores_nothing():
    args = make_args()
    g = ag.profile(rnn_loss, gradient=True)(*args)
    f = ag.profile(rnn_loss)(*args)
    step = line_of(rnn_loss, "h = np.tanh")
    assert {r.line: r.backward for r in g.rows}[step] > 0
    assert all(r.backward == 0 and r.stored == 0 for r in f.rows)
    assert not f.has_backward and "stored" not in str(f)
    assert g.has_backward and "backward" in str(g)


def test_a_checkpointed_loop_stores_its_snapshots_only():
    steps = 40
    args = make_args(steps)
    p = ag.profile(checkpointed, gradient=True)(*args)
    got = stored(p)
    state = B * H * 8 + 8         # h and the loop counter
    loop = got[line_of(checkpointed, "for t in")]
    # at most 3 snapshots and the state entering the last step (revolve.py)
    assert 0 < loop <= 4 * state
    # the step line keeps only the final h (read by the seed's product), not a stack
    assert got[line_of(checkpointed, "h = np.tanh")] == B * H * 8
    store_all = ag.profile(rnn_loss, gradient=True)(*args).stored
    assert store_all == steps * B * H * 8 and p.stored < store_all / 5
    np.testing.assert_allclose(p.result, ag.grad(rnn_loss)(*args), rtol=1e-10)


def test_a_gradient_tape_inside_the_function_is_measured_too():
    args = make_args()
    p = ag.profile(taped)(*args)
    got = stored(p)
    assert got[line_of(taped, "h = np.tanh")] == T * B * H * 8
    assert p.stored == sum(got.values())
    np.testing.assert_allclose(p.result, ag.grad(rnn_loss)(*args))


def test_the_page_shows_the_stored_bytes_beside_each_line():
    args = make_args()
    text = ag.explore(rnn_loss, *args, gradient=True, profile=True).html
    step = line_of(rnn_loss, "h = np.tanh")
    column = re.findall(r'<span class="no">(\d+)</span><span class="st"[^>]*>[^<]*</span>'
                        r'<span class="sb([^"]*)"[^>]*title="stored for the backward pass: '
                        r'(\d+) bytes">([^<]*)</span>', text)
    shown = {int(line): (cls.strip(), int(n), label) for line, cls, n, label in column}
    assert shown[step] == ("some", T * B * H * 8, "2.5 KiB"), shown
    assert shown[line_of(rnn_loss, "for t in")][1:] == (0, "0 B")
    assert "stored for backward" in text
    plain = ag.explore(rnn_loss, *args, profile=True).html
    assert 'class="sb' not in plain and 'class="st"' in plain
