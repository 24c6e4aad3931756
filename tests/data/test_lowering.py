"""`for x in dataset:` inside ag.function: one while_loop node, equal to eager iteration."""

import numpy as np
import pytest

import autograph as ag
from autograph.data import Dataset


def _nodes(graph):
    return list(graph.walk())


def _const_bytes(graph):
    return sum(n.attrs["value"].nbytes for n in graph.walk() if n.op == "Const")


def _loops(graph):
    return [n for n in graph.nodes if n.op == "while_loop"]


@ag.function
def train(dataset):
    loss = np.int64(0)
    for x, y in dataset:
        loss += np.abs(y - x)
    return loss


def test_seed_train_pattern_node_count_does_not_grow_with_data():
    counts = []
    for n in (10, 10**6):
        ds = Dataset.from_tensor_slices((np.arange(n), np.arange(n) * 2))
        assert train(ds) == np.sum(np.arange(n))
        graph = train.get_concrete_function(ds).graph
        counts.append(len(_nodes(graph)))
        assert len(_loops(graph)) == 1 and _const_bytes(graph) < 1024
    assert counts[0] == counts[1]


def test_new_dataset_with_same_spec_reuses_the_trace():
    f = ag.function(train.python_function)
    f(Dataset.from_tensor_slices((np.arange(5), np.arange(5))))
    assert f(Dataset.from_tensor_slices((np.arange(5) + 1, np.arange(5) * 4))) == 27
    assert f.experimental_get_tracing_count() == 1
    f(Dataset.from_tensor_slices((np.arange(5), np.arange(5))).map(lambda a, b: (a, 2 * b)))
    assert f.experimental_get_tracing_count() == 2   # another pipeline structure


def test_big_closure_dataset_holds_no_constant_bytes():
    data = np.ones((100 * 2**20) // 8)        # 100 MB of float64
    ds = Dataset.from_tensor_slices(data).batch(2**16)

    @ag.function
    def total():
        s = 0.0
        for b in ds:
            s += np.sum(b)
        return s
    assert total() == data.size
    graph = total.get_concrete_function().graph
    assert _const_bytes(graph) < 1024 and len(_loops(graph)) == 1


def _order_sensitive(ds):
    """A checksum that changes when elements or their order change (eagerly)."""
    s = 0.0
    for e in ds:
        s = s * 1.25 + float(np.sum(e)) + 0.5
    return s


def _checksum(dataset):
    s = 0.0
    for e in dataset:
        s = s * 1.25 + np.sum(e) + 0.5
    return s


PIPELINES = {
    "shuffle_batch": lambda d: d.shuffle(7, seed=3).batch(4),
    "shuffle_batch_drop_repeat": lambda d: d.shuffle(5, seed=1).batch(3, drop_remainder=True).repeat(3),
    "map_filter_batch": lambda d: d.map(lambda x: x * 2 + 1).filter(lambda x: x % 3 != 0).batch(4),
    "repeat_shuffle_take": lambda d: d.shuffle(30, seed=9).repeat().take(70),
    "filter_batch_drop": lambda d: d.filter(lambda x: x > 4).batch(4, drop_remainder=True),
    "shard_skip_batch_map": lambda d: d.shard(3, 1).skip(2).batch(2).map(lambda b: b - 1),
    "map_batch_unindexed_rows": lambda d: d.map(lambda x: x if x % 2 == 0 else -x).batch(5),
    "filter_shard_take": lambda d: d.filter(lambda x: x % 2 == 0).shard(2, 0).take(4),
    "enumerate": lambda d: d.enumerate(3).map(lambda i, x: i * x),
    "filter_shuffle_on_host": lambda d: d.filter(lambda x: x % 5 != 0).shuffle(5, seed=1).batch(3),
    "repeat_filter_batch_take": lambda d: d.repeat(2).filter(lambda x: x % 3 == 0).batch(4).take(3),
}


@pytest.mark.parametrize("name", sorted(PIPELINES))
def test_traced_equals_eager(name):
    """The k-th run of the traced loop over a dataset equals the k-th eager iteration over
    its twin (a shuffle reshuffles on each new iteration), with one trace."""
    make = lambda: PIPELINES[name](Dataset.from_tensor_slices(np.arange(23, dtype=np.int64)))  # noqa: E731
    ds, twin = make(), make()
    checksum = ag.function(_checksum)
    for _ in range(2):
        assert checksum(ds) == pytest.approx(_order_sensitive(twin))
    assert checksum.experimental_get_tracing_count() == 1
    assert len(_loops(checksum.get_concrete_function(ds).graph)) == 1


def test_each_epoch_reshuffles_in_the_graph_as_eagerly():
    ds = Dataset.range(20).shuffle(20, seed=11).repeat(3)

    @ag.function
    def collect(dataset):
        ta = ag.TensorArray(np.int64, size=0, dynamic_size=True)
        i = 0
        for x in dataset:
            ta = ta.write(i, x)
            i += 1
        return ta.stack()
    got = collect(ds)
    twin = Dataset.range(20).shuffle(20, seed=11).repeat(3)
    assert got.tolist() == [int(x) for x in twin]
    assert got[:20].tolist() != got[20:40].tolist()


def test_break_continue_return_and_enumerate():
    ds = Dataset.from_tensor_slices(np.arange(30, dtype=np.int64))

    @ag.function
    def f(dataset):
        s = np.int64(0)
        for i, x in enumerate(dataset):
            if x % 4 == 0:
                continue
            if i > 17:
                break
            s += x * i
        return s

    @ag.function
    def first_over(dataset, limit):
        for x in dataset:
            if x * x > limit:
                return x
        return np.int64(-1)

    ref = sum(x * x for x in range(18) if x % 4)
    assert f(ds) == ref and len(_loops(f.get_concrete_function(ds).graph)) == 1
    assert first_over(ds, np.int64(50)) == 8 and first_over(ds, np.int64(10**6)) == -1


def test_map_with_python_control_flow_in_a_traced_loop():
    def collatz_steps(n):
        steps = np.int64(0)
        while n != 1:
            n = n // 2 if n % 2 == 0 else 3 * n + 1
            steps += 1
        return steps
    ds = Dataset.range(1, 12).map(collatz_steps)

    @ag.function
    def total(dataset):
        s = np.int64(0)
        for x in dataset:
            s += x
        return s
    assert total(ds) == sum(int(x) for x in ds)


SIG = (ag.TensorSpec((), np.int64), ag.TensorSpec((), np.int64))


def test_generator_loop_is_one_node_of_fixed_size():
    sizes = []
    for n in (3, 1000):
        data = [(1, 3)] * n
        ds = Dataset.from_generator(lambda data=data: iter(data), output_signature=SIG)
        assert train(ds) == 2 * n
        graph = train.get_concrete_function(ds).graph
        sizes.append(len(_nodes(graph)))
        assert len(_loops(graph)) == 1
    assert sizes[0] == sizes[1]


def test_generator_pipeline_traced_equals_eager():
    def make():
        ds = Dataset.from_generator(lambda: iter(range(31)), output_signature=SIG[0])
        return ds.map(lambda x: x * 3).filter(lambda x: x % 2 == 1).shuffle(6, seed=2).batch(4).prefetch(2)
    ds, twin = make(), make()
    checksum = ag.function(_checksum)
    runs = [checksum(ds) for _ in range(2)]
    assert runs == pytest.approx([_order_sensitive(twin) for _ in range(2)])
    assert runs[0] != runs[1]     # the host shuffle reshuffles on each iteration too


class Counting:
    def __init__(self):
        self.pulled = 0

    def __call__(self):
        for i in range(10**6):
            self.pulled += 1
            yield i


@pytest.mark.parametrize("prefetch", [0, 2])
def test_break_after_k_pulls_at_most_k_plus_prefetch_in_the_graph(prefetch):
    src = Counting()
    ds = Dataset.from_generator(src, output_signature=SIG[0])
    if prefetch:
        ds = ds.prefetch(prefetch)

    @ag.function
    def first(dataset, k):
        s = np.int64(0)
        n = np.int64(0)
        for x in dataset:
            s += x
            n += 1
            if n >= k:
                break
        return s
    assert first(ds, np.int64(6)) == 15
    assert 6 <= src.pulled <= 6 + prefetch
