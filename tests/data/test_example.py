"""examples/dataset_training.py runs as a user runs it and shows what it claims."""

import os
import re
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def test_dataset_training_example():
    env = dict(os.environ, PYTHONPATH=ROOT)
    out = subprocess.run([sys.executable, os.path.join(ROOT, "examples", "dataset_training.py")],
                         capture_output=True, text=True, env=env, cwd=ROOT, timeout=300)
    assert out.returncode == 0, out.stderr
    text = out.stdout
    ds_nodes = [int(n) for n in re.findall(r"pairs\) = \d+: (\d+) nodes", text)]
    consts = [int(n) for n in re.findall(r"(\d+) bytes in constants", text)]
    list_nodes = [int(n) for n in re.findall(r"list of \d+ pairs\): (\d+) nodes", text)]
    assert len(ds_nodes) == 2 and ds_nodes[0] == ds_nodes[1]
    assert all(c < 1024 for c in consts)
    assert list_nodes[0] < list_nodes[1]             # a Python list unrolls
    assert "train(Dataset of 1000000 pairs) = 2000000" in text
    w = [float(v) for v in re.search(r"w: \[([^\]]*)\]", text).group(1).split()]
    assert max(abs(a - b) for a, b in zip(w, [2.0, -1.0, 0.5])) < 0.01
    assert "same as eager iteration: True" in text and "steps: 640" in text
    assert "while_loop nodes in fit's graph: 1" in text
