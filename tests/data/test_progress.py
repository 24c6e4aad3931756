"""`ds.progress(desc)`: a loop over the dataset, eager or inside an ag.function, shows a bar
of the elements it receives; its total is the dataset's length when known (map, batch,
shuffle, take, ...), else the bar counts without one (filter, generator, repeat()); it
closes once at the end, at a break and on an error. Updates are counted by a recording
stand-in for tqdm; the elements are those of the same pipeline without the bar."""

import numpy as np
import pytest

import autograph as ag
from autograph.runtime import progress
from tests.runtime.test_progress import bars, described  # noqa: F401 (bars: tqdm recorded)

pytestmark = pytest.mark.usefixtures("bars")   # every test records its bars


X = np.arange(2000.0).reshape(1000, 2)


def pipelines():
    base = ag.data.Dataset.from_tensor_slices(X)
    return {
        "slices": (base, 1000),
        "map_batch": (base.map(lambda r: r * 2.0).batch(64), 16),
        "shuffle_batch_take": (base.shuffle(100, seed=1).batch(10).take(30), 30),
        "range_skip_batch": (ag.data.Dataset.range(5, 700).skip(3).batch(7, True), 98),
        "filter": (base.filter(lambda r: r[0] % 4 == 0), None),
        "repeat_filter": (ag.data.Dataset.range(10).repeat(3).filter(lambda v: v > 2), None),
    }


def total(ds):
    s = 0.0
    for elem in ds:
        s = s + np.sum(elem)
    return s


@pytest.mark.parametrize("name", list(pipelines()))
def test_a_dataset_loop_shows_a_bar_eagerly_and_traced(bars, name):
    ds, length = pipelines()[name]
    want = float(sum(np.sum(e) for e in pipelines()[name][0]))    # (a twin: same shuffles)
    count = len(list(pipelines()[name][0]))
    assert bars == []
    f = ag.function(total)
    assert f(ds.progress(name)) == want
    assert float(sum(np.sum(e) for e in pipelines()[name][0].progress(name))) == want
    assert [described(b) for b in bars] == [(length, name, count, 1)] * 2
    if length is not None:
        assert [b.updates for b in bars] == [min(count, progress.UPDATES)] * 2
    else:   # a stride that doubles while updates come fast: few updates
        assert all(b.updates <= count.bit_length() + 2 for b in bars)


def test_the_bar_counts_what_the_loop_receives(bars):
    """A stage after progress() (here batch) counts the batches; the length is the
    iterated dataset's; a dataset closed over counts as an argument does."""
    ds = ag.data.Dataset.from_tensor_slices(X).progress("rows").batch(100)
    assert len(ds) == 10 and ds.cardinality() == 10
    assert ag.function(total)(ds) == X.sum()

    @ag.function
    def closed():
        return total(ds)
    assert closed() == X.sum()
    assert [described(b) for b in bars] == [(10, "rows", 10, 1)] * 2


def test_a_break_closes_the_bar_at_the_count_reached(bars):
    def first_big(ds, limit):
        found = 0.0
        for elem in ds:
            if np.sum(elem) > limit:
                found = np.sum(elem)
                break
        return found
    ds = ag.data.Dataset.from_tensor_slices(X).progress()
    assert ag.function(first_big)(ds, np.float64(500.0)) == 501.0    # row 125: 250 + 251
    for elem in ds:
        if np.sum(elem) > 500.0:
            break
    del elem
    assert [described(b) for b in bars] == [(1000, None, 126, 1)] * 2


def test_an_error_closes_the_bar(bars):
    def failing(ds):
        s = np.int64(0)
        for v in ds:
            s = s + 10 // (v - 40)
        return s
    ds = ag.data.Dataset.range(100).progress()
    with np.errstate(divide="raise"), pytest.raises(FloatingPointError):
        ag.function(failing)(ds)
    assert [(b.total, b.closes) for b in bars] == [(100, 1)]
    with pytest.raises(ZeroDivisionError):
        for v in ds:
            10 // (int(v) - 40)
    assert [(b.total, b.n, b.closes) for b in bars] == [(100, bars[0].n, 1), (100, 41, 1)]


def test_a_generator_dataset_has_no_total(bars):
    def gen():
        yield from range(37)
    ds = ag.data.Dataset.from_generator(gen, ag.TensorSpec((), np.int64)).progress("gen")
    assert ag.function(total)(ds) == sum(range(37))
    assert list(ds) == list(range(37))
    assert [described(b) for b in bars] == [(None, "gen", 37, 1)] * 2


def test_an_iterator_keeps_its_state_with_a_bar(bars):
    ds = ag.data.Dataset.from_tensor_slices(X).batch(100).progress()
    it = iter(ds)
    next(it), next(it)
    state = it.get_state()
    rest = list(it)
    assert len(rest) == 8 and described(bars[0]) == (10, None, 10, 1)
    again = iter(ds)
    again.set_state(state)
    np.testing.assert_array_equal(np.concatenate(list(again)), np.concatenate(rest))


def test_desc_must_be_a_string():
    with pytest.raises(TypeError, match="progress: desc must be a str"):
        ag.data.Dataset.range(3).progress(True)
