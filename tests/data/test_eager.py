"""Eager iteration of ag.data.Dataset against plain Python references."""

import numpy as np
import pytest

import autograph as ag
from autograph.data import Dataset
from autograph.data.shuffle import shuffle_order


def ints(ds):
    return [int(x) for x in ds]


def test_sources():
    xs, ys = np.arange(6.0), np.arange(6) * 2
    got = list(Dataset.from_tensor_slices((xs, ys)))
    assert [(float(a), int(b)) for a, b in got] == list(zip(xs.tolist(), ys.tolist()))
    d = list(Dataset.from_tensor_slices({"a": xs, "b": ys}))
    assert [int(e["b"]) for e in d] == ys.tolist()
    assert ints(Dataset.range(2, 11, 3)) == list(range(2, 11, 3))
    assert [x.tolist() for x in Dataset.from_tensors(np.ones(3))] == [[1.0, 1.0, 1.0]]


def test_transforms_match_python():
    ref = list(range(23))
    assert ints(Dataset.range(23).skip(4).take(9)) == ref[4:13]
    assert ints(Dataset.range(23).shard(4, 1)) == ref[1::4]
    assert ints(Dataset.range(23).filter(lambda x: x % 3 == 1)) == [x for x in ref if x % 3 == 1]
    assert ints(Dataset.range(5).repeat(3)) == list(range(5)) * 3
    assert ints(Dataset.range(5).repeat().take(12)) == (list(range(5)) * 3)[:12]
    assert ints(Dataset.range(23).filter(lambda x: x % 2 == 0).skip(2).shard(3, 2)) == \
        [x for x in ref if x % 2 == 0][2:][2::3]
    batches = [b.tolist() for b in Dataset.range(10).batch(4)]
    assert batches == [[0, 1, 2, 3], [4, 5, 6, 7], [8, 9]]
    assert [b.tolist() for b in Dataset.range(10).batch(4, drop_remainder=True)] == batches[:2]
    assert [b.tolist() for b in Dataset.range(10).filter(lambda x: x > 2).batch(3)] == \
        [[3, 4, 5], [6, 7, 8], [9]]
    assert [(int(i), int(x)) for i, x in Dataset.range(3, 6).enumerate(1)] == [(1, 3), (2, 4), (3, 5)]


def test_map_converts_python_control_flow():
    def f(x):
        if x % 2 == 0:
            return x // 2
        return 3 * x + 1
    assert ints(Dataset.range(8).map(f)) == [f(x) for x in range(8)]
    pairs = Dataset.from_tensor_slices((np.arange(4), np.arange(4) * 10)).map(lambda a, b: a + b)
    assert ints(pairs) == [0, 11, 22, 33]


def test_len_and_element_spec():
    ds = Dataset.from_tensor_slices((np.zeros((10, 3), np.float32), np.arange(10)))
    assert len(ds) == 10 and len(ds.batch(3)) == 4 and len(ds.batch(3, True)) == 3
    assert len(ds.repeat(2).skip(5)) == 15 and len(ds.shard(3, 2)) == 3
    spec = ds.batch(3).element_spec
    assert spec[0].dtype == np.float32 and spec[0].shape == (None, 3)
    assert ds.map(lambda x, y: x.sum() + y).element_spec.shape == ()
    with pytest.raises(TypeError, match="filter"):
        len(ds.filter(lambda x, y: y > 2))
    with pytest.raises(TypeError, match="infinite"):
        len(ds.repeat())


def test_shuffle_is_seeded_and_reshuffles_each_epoch():
    ds = Dataset.range(50).shuffle(10, seed=7)
    a, b = ints(ds), ints(Dataset.range(50).shuffle(10, seed=7))
    assert a == b and sorted(a) == list(range(50)) and a != list(range(50))
    epochs = ints(Dataset.range(50).shuffle(10, seed=7).repeat(3))
    e0, e1, e2 = epochs[:50], epochs[50:100], epochs[100:]
    assert e0 == a and e1 != e0 and e2 != e1 and sorted(e1) == list(range(50))
    assert epochs == ints(Dataset.range(50).shuffle(10, seed=7).repeat(3))
    fixed = ints(Dataset.range(50).shuffle(10, seed=7, reshuffle_each_iteration=False).repeat(2))
    assert fixed[:50] == fixed[50:]


def test_buffered_shuffle_moves_elements_at_most_buffer_ahead():
    order = shuffle_order(200, 5, seed=3, epoch=0)
    # with a buffer of 5, output k is one of the first k + 5 inputs
    assert all(order[k] < k + 5 for k in range(200))


def test_stream_shuffle_uses_the_same_routine():
    """A generator (host stream) shuffled with a seed: the order of range() shuffled."""
    sig = ag.TensorSpec((), np.int64)
    gen = Dataset.from_generator(lambda: iter(range(40)), output_signature=sig)
    assert ints(gen.shuffle(8, seed=5)) == ints(Dataset.range(40).shuffle(8, seed=5))


def test_generator_and_prefetch():
    sig = (ag.TensorSpec((), np.int64), ag.TensorSpec((2,), np.float64))

    def gen():
        for i in range(7):
            yield i, np.full(2, i / 2)
    ds = Dataset.from_generator(gen, output_signature=sig)
    ref = [(i, [i / 2] * 2) for i in range(7)]
    assert [(int(a), b.tolist()) for a, b in ds] == ref
    assert [(int(a), b.tolist()) for a, b in ds.prefetch(3)] == ref
    assert [b.tolist() for b in ds.map(lambda a, b: b * a).batch(3).prefetch(2)][-1] == [[18.0, 18.0]]
    with pytest.raises(TypeError, match="generator"):
        len(ds)


def test_prefetch_errors_reach_the_consumer():
    def gen():
        yield 1
        raise ValueError("boom in the generator")
    ds = Dataset.from_generator(gen, output_signature=ag.TensorSpec((), np.int64)).prefetch(2)
    it = iter(ds)
    assert int(next(it)) == 1
    with pytest.raises(ValueError, match="boom"):
        next(it)


class Counting:
    def __init__(self, n):
        self.n, self.pulled = n, 0

    def __call__(self):
        for i in range(self.n):
            self.pulled += 1
            yield i


@pytest.mark.parametrize("size", [1, 2, 4])
def test_break_pulls_at_most_k_plus_prefetch(size):
    import time
    src = Counting(1000)
    ds = Dataset.from_generator(src, output_signature=ag.TensorSpec((), np.int64)).prefetch(size)
    it = iter(ds)
    for k, _ in enumerate(it, 1):
        if k == 5:
            break
    for _ in range(200):    # give the producer every chance to overrun
        if src.pulled >= 5 + size:
            break
        time.sleep(0.001)
    assert 5 <= src.pulled <= 5 + size
    it.close()
