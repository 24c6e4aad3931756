"""reshuffle_each_iteration: every new iteration over a shuffled dataset sees a new order,
the k-th the same eagerly, in a traced loop and in another process."""

import json
import os
import subprocess
import sys

import numpy as np

import autograph as ag
from autograph.data import Dataset


def ints(it):
    return [int(x) for x in it]


def make(reshuffle=True, repeat=None):
    ds = Dataset.range(40).shuffle(16, seed=5, reshuffle_each_iteration=reshuffle)
    return ds if repeat is None else ds.repeat(repeat)


@ag.function
def collect(dataset):
    ta = ag.TensorArray(np.int64, size=0, dynamic_size=True)
    i = 0
    for x in dataset:
        ta = ta.write(i, x)
        i += 1
    return ta.stack()


def test_each_eager_iteration_reshuffles_reproducibly():
    ds = make()
    epochs = [ints(ds) for _ in range(3)]
    assert all(sorted(e) == list(range(40)) for e in epochs)
    assert epochs[0] != epochs[1] and epochs[1] != epochs[2] and epochs[0] != epochs[2]
    twin = make()
    assert [ints(iter(twin)) for _ in range(3)] == epochs    # iter() and for-loops count alike


def test_training_loop_sees_a_new_order_per_epoch():
    x = np.arange(32, dtype=np.float64)
    ds = Dataset.from_tensor_slices((x, -x)).shuffle(32, seed=1).batch(8)
    firsts = []
    for _ in range(4):
        for xb, yb in ds:
            assert np.array_equal(yb, -xb)
            firsts.append(xb.tolist())
            break
    assert len({tuple(f) for f in firsts}) == 4


def test_without_reshuffle_every_iteration_sees_one_order():
    ds = make(reshuffle=False, repeat=2)
    runs = [ints(ds) for _ in range(3)]
    assert runs[0] == runs[1] == runs[2] and runs[0][:40] == runs[0][40:]
    assert runs[0][:40] != list(range(40))
    assert [collect(ds).tolist() for _ in range(2)] == runs[:2]


def test_kth_traced_run_equals_kth_eager_iteration_with_one_trace():
    ds, twin = make(), make()
    f = ag.function(collect.python_function)
    traced = [f(ds).tolist() for _ in range(3)]
    assert traced == [ints(twin) for _ in range(3)]
    assert traced[0] != traced[1] != traced[2]
    assert f.experimental_get_tracing_count() == 1
    # a new dataset of the same structure reuses the trace and starts at its own iteration 0
    assert f(make()).tolist() == traced[0] and f.experimental_get_tracing_count() == 1


def test_closure_dataset_reshuffles_per_call():
    ds, twin = make(), make()

    @ag.function
    def first_five():
        out = np.zeros(5, np.int64)
        i = 0
        for x in ds:
            if i >= 5:
                break
            out[i] = x
            i += 1
        return out
    got = [first_five().tolist() for _ in range(3)]
    assert got == [ints(twin)[:5] for _ in range(3)]
    assert first_five.experimental_get_tracing_count() == 1


def test_epoch_loop_inside_one_function_reshuffles_each_inner_loop():
    ds, twin = make(), make()

    @ag.function
    def epochs(dataset, n):
        ta = ag.TensorArray(np.int64, size=0, dynamic_size=True)
        i = 0
        for _ in ag.range(n):
            for x in dataset:
                ta = ta.write(i, x)
                i += 1
        return ta.stack()
    got = epochs(ds, np.int64(3)).tolist()
    want = [ints(twin) for _ in range(3)]
    assert got == sum(want, []) and want[0] != want[1]
    assert epochs(ds, np.int64(1)).tolist() == ints(twin)   # the 4th iteration of both


def test_repeat_inside_an_iteration_reshuffles_per_pass_and_per_iteration():
    ds, twin = make(repeat=3), make(repeat=3)
    a, b = ints(ds), ints(ds)
    passes = [a[:40], a[40:80], a[80:], b[:40], b[40:80], b[80:]]
    assert len({tuple(p) for p in passes}) == 6
    assert all(sorted(p) == list(range(40)) for p in passes)
    assert [collect(twin).tolist() for _ in range(2)] == [a, b]


def test_host_stream_shuffle_reshuffles_per_iteration():
    sig = ag.TensorSpec((), np.int64)
    gen = Dataset.from_generator(lambda: iter(range(30)), output_signature=sig).shuffle(8, seed=5)
    a, b = ints(gen), ints(gen)
    assert a != b and sorted(a) == sorted(b) == list(range(30))
    # the same routine as an indexed shuffle, iteration by iteration
    rng = Dataset.range(30).shuffle(8, seed=5)
    assert [ints(rng), ints(rng)] == [a, b]


def test_kth_iteration_is_the_same_in_another_process():
    ds = make(repeat=2)
    third = [ints(ds) for _ in range(3)][2]
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    code = ("import json\nfrom autograph.data import Dataset\n"
            "ds = Dataset.range(40).shuffle(16, seed=5).repeat(2)\n"
            "runs = [[int(x) for x in ds] for _ in range(3)]\n"
            "print(json.dumps(runs[2]))\n")
    env = dict(os.environ, PYTHONPATH=root + os.pathsep + os.environ.get("PYTHONPATH", ""))
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         env=env, cwd=root, timeout=120)
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout) == third


def test_state_of_a_later_iteration_resumes_its_order():
    ds = make(repeat=2)
    ints(ds)                                  # iteration 0
    it = iter(ds)                             # iteration 1
    head = [int(next(it)) for _ in range(50)]
    state = json.loads(json.dumps(it.get_state()))
    rest = ints(it)
    assert state["iterations"] == [1]
    other = iter(make(repeat=2))              # a fresh dataset: its iteration 0
    other.set_state(state)
    assert ints(other) == rest and head + rest != ints(make(repeat=2))


def test_saved_function_reshuffles_per_call_after_loading_elsewhere(tmp_path):
    ds = make()

    class Orders(ag.Module):
        @ag.function(input_signature=[])
        def order(self):
            return collect.python_function(ds)
    m = Orders()
    first = [m.order().tolist() for _ in range(2)]
    twin = make()
    assert first == [ints(twin), ints(twin)] and first[0] != first[1]
    ag.saved_model.save(m, str(tmp_path))
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    code = (f"import json, autograph as ag\nm = ag.saved_model.load({str(tmp_path)!r})\n"
            "print(json.dumps([m.order().tolist() for _ in range(2)]))\n")
    env = dict(os.environ, PYTHONPATH=root + os.pathsep + os.environ.get("PYTHONPATH", ""))
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         env=env, cwd=root, timeout=120)
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout) == first     # a loaded graph counts its iterations from 0
