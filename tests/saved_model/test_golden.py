"""Golden saved models of format 1.0 (tests/saved_model/golden, written once by
make_golden.py and kept for good): every autograph must load them and reproduce the
recorded outputs bitwise. Never regenerate them; a new format version adds new ones."""

import json
import os

import numpy as np
import pytest

import autograph as ag

HERE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "golden")
NAMES = ["collatz_steps", "rnn_tensor_array", "module_with_state"]


@pytest.mark.parametrize("name", NAMES)
def test_golden_model_of_format_1_0_loads_and_reproduces_its_outputs(name):
    d = os.path.join(HERE, name)
    with open(os.path.join(d, "saved_model.json")) as f:
        assert json.load(f)["format_version"] == "1.0"
    expected = np.load(os.path.join(d, "expected.npz"), allow_pickle=False)
    inputs = {k[len("input_"):]: expected[k] for k in expected.files if k.startswith("input_")}
    outputs = [expected[f"output_{i}"] for i in range(len(expected.files) - len(inputs))]
    obj = ag.saved_model.load(d)
    if name == "module_with_state":
        result = obj(inputs["x"], training=True)
        assert [v.name for v in obj.trainable_variables] == ["b", "w", "b", "w"]
        assert obj.encoder(inputs["x"]).shape == (8, 4)
    elif name == "collatz_steps":
        result = obj(inputs["n"][()])
    else:
        result = obj(**inputs)
    leaves = list(result) if isinstance(result, tuple) else [result]
    assert len(leaves) == len(outputs)
    for got, want in zip(leaves, outputs):
        got = np.asarray(got)
        assert got.dtype == want.dtype and got.shape == want.shape
        assert got.tobytes() == want.tobytes()
