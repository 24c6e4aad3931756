"""The JSON description grows linearly with the node count (counted, not timed), small
constants go into the JSON and large ones into constants.npz, and `signatures` are kept."""

import json

import numpy as np

import autograph as ag
from autograph.saved_model.save import serialize
from benchmarks.saved_model import build, nodes


def test_json_size_is_linear_in_node_count():
    per_node = []
    for steps in (50, 100, 200, 400):
        m = build(2, 4, steps)
        per_node.append(len(serialize(m)["saved_model.json"]) / nodes(m))
    assert max(per_node) / min(per_node) < 1.05, per_node
    assert max(per_node) < 200, per_node      # bytes per node


def test_small_constants_inline_large_ones_in_the_archive(tmp_path):
    big = np.arange(1000.0)

    @ag.function
    def f(x):
        return x * np.float32(2.5) + big
    f(np.float64(1.0))
    files = serialize(f)
    text = files["saved_model.json"].decode()
    assert '"$ndarray"' in text and '"$array"' in text
    loaded = ag.saved_model.from_bytes(ag.saved_model.to_bytes(f))
    assert np.array_equal(loaded(np.float64(1.0)), f(np.float64(1.0)))


def test_signatures_are_saved(tmp_path):
    class Holder:
        pass
    h = Holder()
    h.v = ag.Variable(np.float64(3.0), name="v")

    @ag.function(input_signature=[ag.TensorSpec([None], np.float64)])
    def serve(x):
        return {"scaled": x * h.v}
    ag.saved_model.save(h, str(tmp_path / "m"), signatures={"serving_default": serve})
    doc = json.loads((tmp_path / "m" / "saved_model.json").read_text())
    assert list(doc["signatures"]) == ["serving_default"]
    lo = ag.saved_model.load(str(tmp_path / "m"))
    out = lo.signatures["serving_default"](np.array([1.0, 2.0]))
    assert np.array_equal(out["scaled"], [3.0, 6.0])
