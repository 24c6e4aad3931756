"""Checks of reverse-mode rules against float64 central differences.

`check_vjp(f, *args)` traces `f` on placeholders, differentiates the traced graph with the
primitives' VJP rules, runs the forward and backward graph with the reference interpreter
(`check=True`: every value must match its tensor's static dtype and shape), and compares
<ct, J v> from Richardson-extrapolated central differences of eager `f` with <vjp(ct), v>
along random directions v, ct. `order=2` also checks the VJP of the VJP: the gradient of
x -> <vjp(x, ct), w> against central differences of the first-order graph.

The reverse pass is `reverse` below (a straight-line accumulation over the graph's nodes
that calls each primitive's rule exactly as the autodiff transform does), so the rules are
tested by themselves; the transform itself has its own tests.
"""

import numpy as np

from autograph.autodiff import transform
from autograph.runtime.exec import interpreter
from autograph.runtime.ir import primitives
from autograph.runtime.ir.graph import Graph

RTOL = 1e-6


class _Counting:
    """The resolver of a top-level graph (the tensor itself) that records which primal
    values the rules read."""

    def __init__(self, node, reads):
        self.node, self.reads = node, reads

    def __call__(self, t):
        if self.reads is not None:
            self.reads.append((self.node.op, t))
        return t


def reverse(nodes, seeds, reads=None):
    """Cotangents of every tensor reached from `seeds` ({id(tensor): (tensor, ct)}), walking
    `nodes` backwards (rules see a transform.NodeView, as in the autodiff transform).
    `reads` (a list) collects (op, tensor) for each primal value a rule reads.
    Returns {id(tensor): ct}."""
    cts = {k: v[1] for k, v in seeds.items()}
    for node in reversed(nodes):
        outs = [cts.get(id(t)) for t in node.outputs]
        if all(c is None for c in outs) or not node.inputs:
            continue
        prim = primitives.lookup(node.op)
        if prim.nondiff:
            continue
        assert prim.vjp is not None, f"primitive {node.op!r} has no VJP rule"
        # what the transform gives a rule: static metadata, primal values read on use
        ins = prim.vjp(outs, transform.NodeView(node, _Counting(node, reads), None))
        assert len(ins) == len(node.inputs), (node.op, len(ins), len(node.inputs))
        for t, c in zip(node.inputs, ins):
            if c is None:
                continue
            assert t.dtype.kind in "fc", f"{node.op}: cotangent for a {t.dtype} input"
            assert c.dtype == t.dtype, f"{node.op}: cotangent {c!r} for input {t!r}"
            if t.shape is not None and c.shape is not None:
                assert len(c.shape) == len(t.shape) and all(
                    a is None or b is None or a == b for a, b in zip(c.shape, t.shape)), \
                    f"{node.op}: cotangent {c!r} for input {t!r}"
            old = cts.get(id(t))
            cts[id(t)] = c if old is None else old + c
    return cts


def _spec(a, dynamic):
    a = np.asarray(a)
    shape = tuple(None if dynamic else d for d in a.shape)
    return a.dtype, shape


class Traced:
    """`f` traced on placeholders for `args` (`dynamic`: every length unknown while
    tracing), with graph outputs: f's outputs, then <ct, f> gradients w.r.t. each arg.
    `order=2` adds the gradient of <grad, w> w.r.t. each arg (w: more placeholders)."""

    def __init__(self, f, args, order=1, dynamic=False, wrt=None):
        self.graph = g = Graph("check")
        self.args = [np.asarray(a) for a in args]
        self.wrt = list(range(len(args))) if wrt is None else list(wrt)
        with g.as_default():
            xs = [g.placeholder(f"x{i}", *_spec(a, dynamic)) for i, a in enumerate(args)]
            ys = f(*xs)
            ys = list(ys) if isinstance(ys, (tuple, list)) else [ys]
            self.out_specs = [(y.dtype, y.shape) for y in ys]
            cts = [g.placeholder(f"ct{j}", y.dtype, y.shape) for j, y in enumerate(ys)]
            forward = list(g.nodes)
            grads = reverse(forward, {id(y): (y, c) for y, c in zip(ys, cts)})
            gs = [grads.get(id(xs[i])) for i in self.wrt]
            gs = [gr if gr is not None else np.zeros_like(xs[i]) for gr, i in zip(gs, self.wrt)]
            outs = ys + gs
            if order == 2:
                ws = [g.placeholder(f"w{i}", xs[i].dtype, xs[i].shape) for i in self.wrt]
                inner = None
                for gr, w in zip(gs, ws):
                    term = np.sum(np.real(gr * w))
                    inner = term if inner is None else inner + term
                second = reverse(list(g.nodes), {id(inner): (inner, np.ones_like(inner))})
                outs += [second.get(id(xs[i])) if second.get(id(xs[i])) is not None
                         else np.zeros_like(xs[i]) for i in self.wrt]
            g.set_outputs(outs)
        self.n_out, self.order = len(ys), order

    def run(self, args, cts, ws=()):
        return interpreter.run(self.graph, list(args) + list(cts) + list(ws), check=True)


def _pair(a, b):
    return float(sum(np.real(np.sum(np.asarray(x) * np.asarray(y))) for x, y in zip(a, b)))


def _random_like(rng, a):
    a = np.asarray(a)
    r = rng.standard_normal(a.shape)
    if a.dtype.kind == "c":
        r = r + 1j * rng.standard_normal(a.shape)
    return r.astype(a.dtype)


def _richardson(fun, h):
    d1 = (fun(h) - fun(-h)) / (2 * h)
    d2 = (fun(h / 2) - fun(-h / 2)) / h
    return (4 * d2 - d1) / 3


def _close(num, ana, what, rtol=RTOL):
    scale = max(abs(num), abs(ana), 1e-3)
    assert abs(num - ana) <= rtol * scale + 1e-10, f"{what}: numeric {num!r} vs rule {ana!r}"


def check_vjp(f, *args, order=1, dynamic=False, wrt=None, seed=0, h=1e-3, rtol=RTOL,
              eager=None):
    """Assert that the rules' VJP of `f` at `args` matches central differences (and, with
    order=2, that the VJP of the VJP does). `eager` evaluates f on arrays (default f)."""
    rng = np.random.default_rng(seed)
    eager = eager or f
    tr = Traced(f, args, order, dynamic, wrt)
    args = tr.args
    outs0 = eager(*args)
    outs0 = list(outs0) if isinstance(outs0, (tuple, list)) else [outs0]
    cts = [_random_like(rng, np.asarray(o)) for o in outs0]
    vs = [_random_like(rng, args[i]) for i in tr.wrt]
    ws = [_random_like(rng, args[i]) for i in tr.wrt] if order == 2 else []
    res = tr.run(args, cts, ws)
    for got, want in zip(res[:tr.n_out], outs0):
        np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)
    grads = res[tr.n_out:tr.n_out + len(tr.wrt)]

    def shifted(t):
        moved = list(args)
        for i, v in zip(tr.wrt, vs):
            moved[i] = args[i] + t * v
        return moved

    def along(t):
        out = eager(*shifted(t))
        out = list(out) if isinstance(out, (tuple, list)) else [out]
        return _pair(cts, out)
    _close(_richardson(along, h), _pair(grads, vs), "first order", rtol)
    if order == 2:
        second = res[tr.n_out + len(tr.wrt):]

        def inner(t):
            gs = tr.run(shifted(t), cts, ws)[tr.n_out:tr.n_out + len(tr.wrt)]
            return _pair(gs, ws)
        _close(_richardson(inner, h), _pair(second, vs), "second order", rtol)
    return grads
