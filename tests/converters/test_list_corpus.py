"""The list-program corpus (list_corpus.py): each program gives Python's answer converted
on Python values and converted + traced (its loops staged) with NumPy arguments; the
gradients of a sample of the differentiable ones match central differences in every mode
(benchmarks/list_corpus.py checks them all, and their second gradients)."""

import numpy as np
import pytest

import autograph as ag
from autograph import api
from tests.autodiff.modes import MODES, fd, grad
from tests.converters.list_corpus import CORPUS, DIFFERENTIABLE


def same(got, want):
    """`got` is `want`: the same containers (a list stays a list, a dict a dict), equal
    arrays and numbers."""
    if isinstance(want, (list, tuple, dict)):
        assert type(got) is type(want), (got, want)
        assert len(got) == len(want), (got, want)
        if isinstance(want, dict):
            assert list(got) == list(want)
            got, want = list(got.values()), list(want.values())
        for g, w in zip(got, want):
            same(g, w)
        return
    g, w = np.asarray(got), np.asarray(want)
    assert g.shape == w.shape, (got, want)
    assert g.dtype.kind == w.dtype.kind or {g.dtype.kind, w.dtype.kind} <= set("iu"), (got, want)
    np.testing.assert_allclose(g, w, rtol=1e-12, atol=1e-12)


def _as_numpy(args):
    return tuple(np.int64(a) if isinstance(a, int) else a for a in args)


@pytest.mark.parametrize("name,fn,args", CORPUS, ids=[c[0] for c in CORPUS])
def test_gives_pythons_answer_converted_and_traced(name, fn, args):
    want = fn(*args)
    same(api.to_graph(fn)(*args), want)
    same(ag.function(fn)(*_as_numpy(args)), want)


def _loss(fn):
    def loss(x, n):
        return sum(np.sum(leaf) for leaf in _float_leaves(fn(x, n)))
    return loss


def _float_leaves(value):
    if isinstance(value, dict):
        value = list(value.values())
    if isinstance(value, (list, tuple)):
        return [leaf for v in value for leaf in _float_leaves(v)]
    return [value] if np.asarray(value).dtype.kind == "f" else []


# a sample (benchmarks/list_corpus.py runs every differentiable program, second gradients too)
_SAMPLE = ["append_for", "pop_front", "insert_middle", "read_write_loop", "stack_machine",
           "tuples_popped", "dicts_read", "return_inside"]
_GRADS = [c for c in CORPUS if c[0] in _SAMPLE]


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("name,fn,args", _GRADS, ids=[c[0] for c in _GRADS])
def test_gradients_match_central_differences(name, fn, args, mode):
    x, n = args
    loss = _loss(fn)
    np.testing.assert_allclose(grad(mode, loss, x, np.int64(n)), fd(loss, x, n),
                               rtol=1e-6, atol=1e-6)


def test_the_corpus_covers_every_idiom():
    names = {c[0] for c in CORPUS}
    assert len(names) == len(CORPUS) >= 60
    assert set(_SAMPLE) <= set(DIFFERENTIABLE) <= names
