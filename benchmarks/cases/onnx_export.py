"""Case 10: the same graph run by autograph and by onnxruntime after `ag.onnx.export`.

Two loops, reported per call and per loop iteration (the table's params give the count):
a scalar while loop (collatz(27): 111 iterations of a conditional expression) and an RNN
`h = tanh(h @ W + x_t)` over 100 steps (batch 32, 64 features, float64) writing every state
into a TensorArray, which ONNX holds as a sequence."""

import functools

import numpy as np

from benchmarks import programs
from benchmarks.cases._common import autograph
from benchmarks.harness import Case, Contender, Unavailable


def _ort_contender(fn, *args):
    try:
        import onnxruntime as ort
        import onnx  # noqa: F401
    except ImportError:
        return Unavailable("onnxruntime", "pip install -e '.[onnx]'")

    def make():
        model = autograph().onnx.export(fn)
        options = ort.SessionOptions()
        options.intra_op_num_threads = 1     # one core, as autograph and NumPy here
        session = ort.InferenceSession(model.SerializeToString(), options,
                                       providers=["CPUExecutionProvider"])
        feeds = {i.name: np.asarray(a) for i, a in zip(session.get_inputs(), args)}
        outputs = [o.name for o in session.get_outputs()]

        def call():
            out = session.run(outputs, feeds)
            return out[0] if len(out) == 1 else tuple(out)
        return call
    return Contender("onnxruntime", make, result=lambda v: v)


def build_scalar(quick):
    ag = autograph()
    collatz = ag.function(programs.fresh_function(programs.COLLATZ, "collatz", {"np": np}))
    n = np.int64(27)
    collatz(n)
    plain = programs.fresh_function(programs.COLLATZ, "collatz", {"np": np})
    return {"n": 27, "iterations": 111}, [
        Contender("numpy_eager", lambda: functools.partial(plain, n)),
        Contender("autograph", lambda: functools.partial(collatz, n)),
        _ort_contender(collatz, n)]


def rnn_source(ag):
    def rnn(x, w, h):
        states = ag.TensorArray(np.float64, size=x.shape[0])
        for t in ag.range(x.shape[0]):
            h = np.tanh(h @ w + x[t])
            states = states.write(t, h)
        return states.stack()
    return rnn


def build_rnn(quick):
    ag = autograph()
    steps = 10 if quick else 100
    rng = np.random.default_rng(0)
    args = (rng.normal(size=(steps, 32, 64)), rng.normal(size=(64, 64)) * 0.1, np.zeros((32, 64)))
    plain = rnn_source(ag)
    traced = ag.function(rnn_source(ag))
    traced(*args)
    return {"steps": steps, "batch": 32, "features": 64}, [
        Contender("numpy_eager", lambda: functools.partial(plain, *args)),
        Contender("autograph", lambda: functools.partial(traced, *args)),
        _ort_contender(traced, *args)]


CASES = [
    Case("10a_onnx_scalar_loop", "collatz(27): autograph vs onnxruntime on the exported model",
         build_scalar),
    Case("10b_onnx_rnn", "RNN 100 steps (32x64, float64): autograph vs onnxruntime",
         build_rnn, rtol=1e-12),
]
