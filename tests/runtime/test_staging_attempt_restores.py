"""A Python range loop whose jump depends on a tensor first tries to stage the rest of its
range; when the graph loop cannot be made (here: the body indexes a Python list with the
loop counter) it unrolls instead. The attempt traced the body once: the attributes, items,
closure variables and globals' items it wrote are put back first, so the unrolled
iterations compute what Python computes (before, they read body tensors of the abandoned
attempt and failed). Compared with the original Python over several inputs."""

import numpy as np
import pytest

import autograph as ag


class Acc:
    pass


def attr_acc(x):
    a = Acc()
    a.total = 0.0
    w = [1.0 + k for k in range(20)]
    for t in range(20):
        if x[t] < 0:
            continue
        a.total = a.total + x[t] * w[t]
    return a.total


def cell_acc(x):
    total = 0.0
    w = [1.0 + k for k in range(20)]

    def get():
        return total
    for t in range(20):
        if x[t] < 0:
            continue
        total = total + x[t] * w[t]
    return get()


def dict_acc_break(x):
    d = {"s": 0.0}
    w = [2.0 + k for k in range(20)]
    for t in range(20):
        if x[t] > 2.5:
            break
        d["s"] = d["s"] + x[t] * w[t]
    return d["s"]


COUNTS = {"n": 0}


def global_item_count(x):
    s = 0.0
    w = [1.0] * 20
    for t in range(20):
        COUNTS["n"] += 1
        if x[t] < 0:
            continue
        s = s + x[t] * w[t]
    return s + COUNTS["n"]


@pytest.mark.parametrize("fn", [attr_acc, cell_acc, dict_acc_break, global_item_count])
def test_an_abandoned_attempt_leaves_no_trace(fn):
    rng = np.random.default_rng(7)
    for x in (rng.standard_normal(20), np.abs(rng.standard_normal(20)),
              -np.ones(20), rng.choice([-1.0, 1.0, 3.0], size=20)):
        COUNTS["n"] = 0
        want = fn(x)
        COUNTS["n"] = 0
        got = ag.function(fn)(x)     # a new Function: traced for each input
        np.testing.assert_allclose(np.asarray(got, dtype=np.float64), want, rtol=1e-12)
