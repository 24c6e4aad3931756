"""Lists changed in staged loops export to ONNX as sequences (issue 31): appends, pops
(SequenceAt + SequenceErase) and inserts (SequenceInsert); onnxruntime gives Python's
answer on the corpus programs (tests/converters/list_corpus.py)."""

import numpy as np
import pytest

import autograph as ag
from tests.converters.list_corpus import CORPUS

onnx = pytest.importorskip("onnx")
ort = pytest.importorskip("onnxruntime")

_NAMES = ["append_for", "pop_last", "pop_front", "stack_machine", "insert_middle",
          "insert_clamped", "read_write_loop"]


@pytest.mark.parametrize("name,fn,args", [c for c in CORPUS if c[0] in _NAMES],
                         ids=lambda v: v if isinstance(v, str) else "")
def test_onnxruntime_gives_pythons_answer(name, fn, args):
    x, n = args
    concrete = ag.function(fn).get_concrete_function(
        ag.TensorSpec(x.shape, np.float64), ag.TensorSpec([], np.int64))
    session = ort.InferenceSession(ag.onnx.export(concrete).SerializeToString())
    feeds = dict(zip([i.name for i in session.get_inputs()], [x, np.asarray(n, np.int64)]))
    want = fn(x, n)
    want = want if isinstance(want, tuple) else (want,)
    got = session.run(None, feeds)
    assert len(got) == len(want)
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w, rtol=1e-12)
