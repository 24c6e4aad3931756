"""`autograph saved-model show DIR` prints the object tree, signatures and Variables."""

import io
import os

from autograph import cli

GOLDEN = os.path.join(os.path.dirname(os.path.abspath(__file__)), "golden")


def test_show_prints_tree_signatures_and_variables():
    out = io.StringIO()
    assert cli.main(["saved-model", "show", os.path.join(GOLDEN, "module_with_state")],
                    out=out) == 0
    text = out.getvalue()
    assert "root: Model 'model'" in text and "encoder: Dense 'encoder'" in text
    assert "__call__(x: TensorSpec(shape=(None, 3), dtype=float64), training: True)" in text
    assert "-> float64(None, 1)" in text
    assert "calls: int64()  (not trainable)" in text and "w: float64(3, 4)" in text


def test_show_of_a_function_and_of_a_missing_directory(tmp_path, capsys):
    out = io.StringIO()
    assert cli.main(["saved-model", "show", os.path.join(GOLDEN, "rnn_tensor_array")],
                    out=out) == 0
    assert "rnn(x: TensorSpec(shape=(None, 4, 3), dtype=float32)" in out.getvalue()
    assert cli.main(["saved-model", "show", str(tmp_path)], out=io.StringIO()) == 1
    assert "not a saved model" in capsys.readouterr().err
