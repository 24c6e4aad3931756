"""Iterator state: saved after n batches as JSON, restored in a new process."""

import json
import os
import subprocess
import sys
import textwrap

import numpy as np

import autograph as ag
from autograph.data import Dataset

PIPELINE = textwrap.dedent("""
    import numpy as np
    from autograph.data import Dataset
    def make():
        x = np.arange(60, dtype=np.float64).reshape(30, 2)
        return (Dataset.from_tensor_slices((x, np.arange(30)))
                .shuffle(8, seed=4).repeat(2).map(lambda a, b: (a * 2, b)).batch(4))
""")


def _run(code):
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    env = dict(os.environ, PYTHONPATH=root + os.pathsep + os.environ.get("PYTHONPATH", ""))
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         env=env, cwd=root, timeout=120)
    assert out.returncode == 0, out.stderr
    return out.stdout


def _batches(it, k):
    return [[a.tolist(), b.tolist()] for a, b in (next(it) for _ in range(k))]


def test_state_restored_in_a_new_process_gives_the_same_following_batches():
    namespace = {}
    exec(PIPELINE, namespace)
    it = iter(namespace["make"]())
    _batches(it, 5)
    state = json.dumps(it.get_state())          # plain JSON
    expected = _batches(it, 6)                   # crosses the epoch boundary (15 batches)
    code = PIPELINE + textwrap.dedent(f"""
        import json
        it = iter(make())
        it.set_state(json.loads({state!r}))
        out = [[a.tolist(), b.tolist()] for a, b in (next(it) for _ in range(6))]
        print(json.dumps(out))
    """)
    assert json.loads(_run(code)) == expected
    assert json.loads(state)["position"] is not None   # restored without replaying


def test_generator_state_replays_the_consumed_elements():
    sig = ag.TensorSpec((), np.int64)
    ds = Dataset.from_generator(lambda: iter(range(20)), output_signature=sig).batch(3).prefetch(2)
    it = iter(ds)
    first = [next(it).tolist() for _ in range(2)]
    state = json.loads(json.dumps(it.get_state()))
    rest = [b.tolist() for b in it]
    again = iter(ds)
    again.set_state(state)
    assert [b.tolist() for b in again] == rest and first[0] == [0, 1, 2]


def test_exhausted_state_stays_exhausted():
    it = iter(Dataset.range(3))
    assert [int(x) for x in it] == [0, 1, 2]
    other = iter(Dataset.range(3))
    other.set_state(it.get_state())
    assert list(other) == []
