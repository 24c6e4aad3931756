"""Cases 8a-8f: the cliffs of issue 16, each against the program a user would compare with.

- 8a `range(x.shape[0])` with a tensor `break`, 100,000 steps, first call (a fresh
  function per call): staged as one while_loop, where it used to unroll without end.
- 8b a search loop with `break`, n = 10^6, steady state, against the same loop in plain
  Python (`numpy_hand`): the flags cost no kernel call per iteration.
- 8c a call with five arrays and a dict of two, against the same seven arrays flat
  (`autograph_flat`) and jax.jit: structured arguments on the call fast path.
- 8d the seed RNN over a static `range` (32x100x256), against the hand-written loop: a
  TensorArray written at constant indices is a preallocated buffer.
- 8e ten steps of tanh(x @ w), 1000x1000 (300x300 with --quick), unrolled, against the
  hand-written loop: dead intermediates are released.
Peak memory of 8d/8e is measured by tests/runtime/test_lifetimes.py (tracemalloc).
"""

import functools

import numpy as np

from benchmarks import programs
from benchmarks.cases import dynamic_rnn
from benchmarks.cases._common import autograph, blocking, jax_contender
from benchmarks.harness import Case, Contender, Goal

SEARCH_RANGE = """
def search(x, target):
    found = -1
    for t in range(x.shape[0]):
        if x[t] == target:
            found = t
            break
    return found
"""


# the eager contender runs the same text as plain Python; so does the floor (the loop is
# already what a person would write by hand)
_plain = {"np": np}
exec(compile(SEARCH_RANGE, "<cliffs search>", "exec"), _plain)
search_loop = search_hand = _plain["search"]


def _build_unroll(quick):
    n = 10_000 if quick else 100_000
    x = np.arange(n, dtype=np.float64)
    target = np.float64(n // 2)

    def make_ag():
        ag = autograph()
        fn = programs.fresh_function(SEARCH_RANGE, "search", {"np": np})
        return lambda: ag.function(fn)(x, target)

    return {"n": n, "fresh_function_per_call": True}, [
        Contender("numpy_eager", lambda: functools.partial(search_loop, x, int(target))),
        Contender("numpy_hand", lambda: functools.partial(search_hand, x, int(target))),
        Contender("autograph", make_ag, fresh=True),
    ]


def _build_search(quick):
    n = 100_000 if quick else 1_000_000
    x = np.arange(n, dtype=np.float64)
    target = np.float64(n - 3)

    def make_ag():
        ag = autograph()

        def search(x, target):
            found = -1
            for t in ag.range(x.shape[0]):
                if x[t] == target:
                    found = t
                    break
            return found
        return functools.partial(ag.function(search), x, target)

    return {"n": n}, [
        Contender("numpy_eager", lambda: functools.partial(search_loop, x, target)),
        Contender("numpy_hand", lambda: functools.partial(search_hand, x, target)),
        Contender("autograph", make_ag),
    ]


def with_dict(a, b, c, d, e, cfg):
    return a + b + c + d + e + cfg["w"] * cfg["v"]


def flat7(a, b, c, d, e, w, v):
    return a + b + c + d + e + w * v


def _build_structured(quick):
    arrays = [np.full((2, 2), float(i)) for i in range(7)]
    cfg = {"w": arrays[5], "v": arrays[6]}

    def make_ag():
        return functools.partial(autograph().function(with_dict), *arrays[:5], cfg)

    def make_flat():
        return functools.partial(autograph().function(flat7), *arrays)

    def make_jax(jax, jnp, lax):
        js = [jnp.asarray(a) for a in arrays]
        return blocking(jax.jit(with_dict), *js[:5], {"w": js[5], "v": js[6]})

    return {"arrays": 7, "shape": [2, 2]}, [
        Contender("numpy_eager", lambda: functools.partial(with_dict, *arrays[:5], cfg)),
        Contender("numpy_hand", lambda: functools.partial(flat7, *arrays)),
        Contender("autograph", make_ag),
        Contender("autograph_flat", make_flat),
        jax_contender(make_jax),
    ]


rnn_step = dynamic_rnn.rnn_step


def _static_rnn(ag):
    def static_rnn(input_data, initial_state):
        input_data = np.transpose(input_data, [1, 0, 2])
        states = ag.TensorArray(np.float32, size=input_data.shape[0])
        state = initial_state
        for i in range(input_data.shape[0]):
            state = rnn_step(input_data[i], state)
            states = states.write(i, state)
        return np.transpose(states.stack(), [1, 0, 2])
    return static_rnn


def rnn_hand(input_data, initial_state):
    """The floor: case 5's hand-written loop (a preallocated output filled in place)."""
    return dynamic_rnn.dynamic_rnn_hand(rnn_step, input_data, initial_state)


def _build_rnn(quick):
    batch, length, features = (4, 10, 16) if quick else (32, 100, 256)
    rng = np.random.default_rng(0)
    data = rng.uniform(size=(batch, length, features)).astype(np.float32)
    h0 = np.zeros((batch, features), np.float32)

    def make_ag():
        ag = autograph()
        return functools.partial(ag.function(_static_rnn(ag)), data, h0)

    return {"batch": batch, "length": length, "features": features}, [
        Contender("numpy_eager", lambda: functools.partial(_static_rnn(autograph()), data, h0)),
        Contender("numpy_hand", lambda: functools.partial(rnn_hand, data, h0)),
        Contender("autograph", make_ag),
    ]


def matmul_steps(x, w):
    for _ in range(10):
        x = np.tanh(x @ w)
    return x


def _build_matmul(quick):
    n = 300 if quick else 1000
    rng = np.random.default_rng(0)
    x, w = rng.uniform(size=(n, n)), rng.uniform(size=(n, n)) / n
    return {"n": n, "steps": 10}, [
        Contender("numpy_eager", lambda: functools.partial(matmul_steps, x, w)),
        Contender("numpy_hand", lambda: functools.partial(matmul_steps, x, w)),
        Contender("autograph", lambda: functools.partial(autograph().function(matmul_steps), x, w)),
    ]


CASES = [
    Case("12a_unroll_range_break", "range(x.shape[0]) + tensor break, 100k steps, first call",
         _build_unroll, goals=[Goal("<= 50 ms", "autograph", max_ns=50e6)]),
    Case("12b_search_break", "search loop with break, n = 1e6, steady state", _build_search,
         goals=[Goal("<= 1.5x plain Python", "autograph", "numpy_hand", max_ratio=1.5)]),
    Case("12c_structured_args", "5 arrays + a dict of 2, per call", _build_structured,
         goals=[Goal("<= 2x the flat call", "autograph", "autograph_flat", max_ratio=2.0),
                Goal("below jax.jit", "autograph", "jax", max_ratio=1.0)]),
    Case("12d_static_rnn", "seed RNN over a static range, 32x100x256", _build_rnn,
         goals=[Goal("<= 1.05x hand-written", "autograph", "numpy_hand", max_ratio=1.05)]),
    Case("12e_matmul_steps", "10 unrolled steps of tanh(x @ w), 1000x1000", _build_matmul,
         goals=[Goal("<= 1.05x hand-written", "autograph", "numpy_hand", max_ratio=1.05)]),
]
