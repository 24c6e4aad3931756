"""ag.onnx.export of loops whose arrays change shape and of the counted selections
(x[mask], x[mask] = v, nonzero, unique, compress, repeat with a tensor count): onnxruntime
gives Python's answer for loop counts 0, 1 and 3; what ONNX cannot express is refused by
name and line. (benchmarks/shape_targets.py runs the whole corpus.)"""

import numpy as np
import pytest

import autograph as ag
from tests.converters import shape_corpus as corpus

onnx = pytest.importorskip("onnx")
ort = pytest.importorskip("onnxruntime")

SAMPLE = [corpus.grow_rows_concat, corpus.grow_vector_append, corpus.grow_with_return,
          corpus.shrink_with_break, corpus.mask_loop_variable, corpus.mask_matrix_rows,
          corpus.nonzero_loop, corpus.unique_counts_loop, corpus.compress_loop_variable,
          corpus.repeat_per_element, corpus.mask_assign_values, corpus.mask_assign_scalar]


def _session(program):
    traced = corpus.traced(program)
    traced(corpus.X, np.int64(1))
    return ort.InferenceSession(ag.onnx.export(traced).SerializeToString())


@pytest.mark.parametrize("program", SAMPLE, ids=lambda f: f.__name__)
def test_onnxruntime_gives_pythons_answer(program):
    session = _session(program)
    names = [i.name for i in session.get_inputs()]
    for n in corpus.NS:
        expected = program(corpus.X.copy(), n)
        expected = expected if isinstance(expected, tuple) else (expected,)
        got = session.run(None, dict(zip(names, (corpus.X, np.asarray(n, np.int64)))))
        assert len(got) == len(expected)
        for g, e in zip(got, expected):
            e = np.asarray(e)
            assert (g.dtype, g.shape) == (e.dtype, e.shape), (n, g, e)
            np.testing.assert_allclose(g, e, rtol=1e-12, atol=1e-14)


def test_a_rank_that_changes_is_refused_by_line():
    traced = corpus.traced(corpus.grow_rank)
    traced(corpus.X, np.int64(1))
    from autograph.onnx.export import ExportError
    with pytest.raises(ExportError, match=r"unknown rank.*shape_corpus.py:\d+"):
        ag.onnx.export(traced)
