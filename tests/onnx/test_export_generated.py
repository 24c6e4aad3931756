"""ag.onnx.export on generated programs (benchmarks/differential: nested if/while/for,
break/continue/return at any depth, helpers, tuple unpacking): every program that traces
either exports and onnxruntime gives the traced function's results exactly (int64), or is
refused with ExportError naming a primitive. No third outcome."""

import numpy as np
import pytest

import autograph as ag
from autograph.runtime.ir import nest

pytest.importorskip("onnx")
ort = pytest.importorskip("onnxruntime")

from autograph.onnx.export import ExportError  # noqa: E402
from benchmarks.differential import check as checking  # noqa: E402
from benchmarks.differential.run import program  # noqa: E402

COUNT = 60


def _tensor_leaves(concrete, result):
    flat = nest.flatten(result)
    return [np.asarray(flat[i]) for i in concrete._tensor_slots]


def test_generated_programs_export_or_are_refused_by_name():
    exported = refused = 0
    for index in range(COUNT):
        p = program("onnx", index)
        fn, _ = checking.load(p.source)
        traced = ag.function(fn)
        for inputs in p.inputs:
            args = checking.numpy_args(inputs, (True, True, True))
            try:
                expected = traced(*args)
            except Exception:
                continue     # Python raises here too, or autograph refuses: not ONNX's business
            concrete = traced.get_concrete_function(*args)
            try:
                model = ag.onnx.export(concrete)
            except ExportError as e:
                assert "primitive '" in str(e) or "returns no arrays" in str(e)
                refused += 1
                continue
            session = ort.InferenceSession(model.SerializeToString())
            feeds = {i.name: np.asarray(a) for i, a in zip(session.get_inputs(), args)}
            got = session.run(None, feeds)
            want = _tensor_leaves(concrete, expected)
            assert len(got) == len(want), p.source
            for g, w in zip(got, want):
                assert g.dtype == w.dtype and g.shape == w.shape, (p.source, inputs)
                np.testing.assert_array_equal(g, w, err_msg=p.source + f"\ninputs {inputs}")
            exported += 1
    assert exported >= 60, (exported, refused)
