"""Test helper: trace a function into a Graph the way ag.function does, and run a graph in
every execution mode (interpreter, codegen, optimised + either)."""

import contextlib
import io

import numpy as np

from autograph.runtime.exec import codegen, interpreter, optimize

from autograph.runtime.ir import nest
from autograph.runtime.ir.graph import Graph
from autograph.runtime.ir.tensor import Tensor


def trace(fn, *args, name=None):
    """A Graph computing `fn` on placeholders shaped like `args` (arrays), and `fn`'s
    result (the graph's outputs are its tensor leaves, in order)."""
    g = Graph(name or getattr(fn, "__name__", "f"))
    with g.as_default():
        phs = [g.placeholder(f"arg{i}", np.asarray(a).dtype, np.shape(a))
               for i, a in enumerate(args)]
        out = fn(*phs)
        g.set_outputs([t for t in nest.flatten(out) if isinstance(t, Tensor)])
    return g, out


MODES = ("interpreter", "codegen", "optimized_interpreter", "optimized_codegen")


def run(graph, args, mode, device=None):
    """Flat outputs of `graph` on `args` in one mode."""
    if mode.startswith("optimized_"):
        graph, mode = optimize.optimize(graph), mode[len("optimized_"):]
    if mode == "interpreter":
        return list(interpreter.run(graph, args, device, check=True))
    return list(codegen.compile_graph(graph, device)(*args))


def capture_stdout(fn, *args):
    """(result, printed text) of calling fn(*args)."""
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        result = fn(*args)
    return result, buf.getvalue()


def assert_same(got, want):
    """Flat results equal in value and dtype (NumPy scalars and 0-d arrays alike)."""
    got, want = nest.flatten(got), nest.flatten(want)
    assert len(got) == len(want), (got, want)
    for g, w in zip(got, want):
        g, w = np.asarray(g), np.asarray(w)
        assert g.shape == w.shape, (g, w)
        assert g.dtype == w.dtype, (g.dtype, w.dtype)
        np.testing.assert_allclose(g, w, rtol=1e-6, atol=1e-6)
