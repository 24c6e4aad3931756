"""A gradient's trace in the trace cache: the nodes its rules made carry GradientOrigin
(the forward line's origin, marked as backward work, which ag.profile reads), a tuple
subclass that marshal cannot write; the cache writes it as a list and reads it back as
one. Without that a traced gradient was never kept (its entry failed to write)."""

import marshal
import sys

import numpy as np

import autograph as ag
from autograph.function import trace_cache
from autograph.runtime.ir.graph import GradientOrigin
from autograph.source import disk_cache
from tests.conftest import load_module

function_module = sys.modules["autograph.function"]

MODULE = '''
import numpy as np
import autograph as ag

def rnn_grad(W, xs, h):
    with ag.GradientTape() as tape:
        tape.watch(W)
        for t in ag.range(xs.shape[0]):
            h = np.tanh(xs[t] @ W + h)
        loss = np.sum(h * h)
    return tape.gradient(loss, W)
'''


def _refuse(*args, **kwargs):
    raise AssertionError("traced again instead of loading the trace")


def test_origins_survive_marshal_as_what_they_were():
    for origin in (GradientOrigin(("f.py", 3, "g")), ("f.py", 3, "g"), None):
        back = trace_cache._read_origin(marshal.loads(marshal.dumps(
            trace_cache._write_origin(origin))))
        assert back == origin and type(back) is type(origin)


def test_a_gradient_trace_is_kept_and_loaded(tmp_path, cache_dir, monkeypatch):
    args = (np.eye(3) * 0.5, np.ones((4, 2, 3)), np.zeros((2, 3)))
    first = ag.function(load_module(tmp_path, MODULE, "grad_mod").rnn_grad)
    traced = first(*args)
    disk_cache.flush()
    second = ag.function(load_module(tmp_path, MODULE, "grad_mod").rnn_grad)
    with monkeypatch.context() as m:
        m.setattr(function_module.Function, "_trace_graph", _refuse)
        loaded = second(*args)
    np.testing.assert_array_equal(traced, loaded)
    # the loaded code's nodes: its backward ones still marked as such
    compiled, _ = next(iter(second._traces.values()))._program
    made_by = [m for m in compiled.__globals__["ag_error_at"].made_by if m is not None]
    assert any(isinstance(m[2], GradientOrigin) for m in made_by)
    assert any(type(m[2]) is tuple for m in made_by)
