"""The cyclic garbage collector is paused while a first call converts, traces and compiles
(issue 30, goal 5: its passes walked the whole growing heap of AST and graph objects), and
put back as it was afterwards: on if it was on, off if the user had turned it off, also
when tracing raises; nested and concurrent pauses share one count."""

import gc
import threading

import numpy as np
import pytest

import autograph as ag
from autograph import gc_pause


def long_function(x):
    y = x * 0.0
    for k in range(60):              # unrolled: ~120 graph nodes
        if x > 0.5:
            y = y + x * 0.5
        else:
            y = y - 1.0
    return y


def _passes(fn):
    """The collector's passes while fn() runs (gc.callbacks sees every one)."""
    seen = []

    def callback(phase, info):
        if phase == "start":
            seen.append(info["generation"])
    gc.callbacks.append(callback)
    try:
        fn()
    finally:
        gc.callbacks.remove(callback)
    return seen


def test_no_collection_while_a_first_call_traces():
    # the objects a trace makes stay alive until it ends: no pass may run meanwhile
    # (a low threshold makes passes certain where the collector is on)
    old = gc.get_threshold()
    gc.set_threshold(50, 2, 2)
    try:
        fn = ag.function(long_function)
        real, during = fn._trace_or_load, []

        def counted(*args):
            result = []
            during.append(_passes(lambda: result.append(real(*args))))
            return result[0]
        fn._trace_or_load = counted
        np.testing.assert_allclose(fn(np.float64(0.7)), long_function(0.7))
        assert during == [[]]
        assert _passes(lambda: [[] for _ in range(500)])        # and on again after
    finally:
        gc.set_threshold(*old)
    assert gc.isenabled()


def test_the_collector_comes_back_as_it_was():
    assert gc.isenabled()
    with gc_pause.paused():
        assert not gc.isenabled()
        with gc_pause.paused():
            assert not gc.isenabled()
        assert not gc.isenabled()              # nested: the outer block still holds it
    assert gc.isenabled()
    gc.disable()
    try:
        with gc_pause.paused():
            pass
        assert not gc.isenabled()              # the user's choice stays
    finally:
        gc.enable()


def test_a_failing_trace_restores_it():
    def bad(x):
        return x + undefined_name  # noqa: F821
    with pytest.raises(NameError):
        ag.function(bad)(np.float64(1.0))
    assert gc.isenabled()


def test_concurrent_first_calls_restore_it_once_all_are_done():
    barrier = threading.Barrier(3)
    errors = []

    def call(k):
        try:
            barrier.wait()
            ag.function(long_function)(np.float64(0.1 * k))
        except Exception as e:       # pragma: no cover - reported below
            errors.append(e)
    threads = [threading.Thread(target=call, args=(k,)) for k in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors and gc.isenabled()


def _young_after_block(make):
    """gc.get_count()[0] right after a paused block in which make() ran, and the passes
    the block's exit ran."""
    out = []
    passes = _passes(lambda: out.append(_block(make)))
    return gc.get_count()[0], passes, out[0]


def _block(make):
    with gc_pause.paused():
        return make()


def test_a_block_that_leaves_many_objects_promotes_them_unwalked(monkeypatch):
    monkeypatch.setattr(gc_pause, "PROMOTE_ABOVE", 5_000)
    gc.collect()
    young, passes, kept = _young_after_block(lambda: [[k] for k in range(20_000)])
    assert passes == [] and young < 100          # no walk, and the young generation is empty
    assert any(o is kept for o in gc.get_objects(2))
    # a small block is walked as before (its few objects stay young)
    young, _, small = _young_after_block(lambda: [[k] for k in range(100)])
    assert young >= 100 and not any(o is small for o in gc.get_objects(2))
    assert gc.isenabled()


def test_a_programs_own_freeze_is_left_as_it_is(monkeypatch):
    monkeypatch.setattr(gc_pause, "PROMOTE_ABOVE", 5_000)
    gc.collect()
    gc.freeze()
    try:
        frozen = gc.get_freeze_count()
        young, _, kept = _young_after_block(lambda: [[k] for k in range(20_000)])
        assert gc.get_freeze_count() == frozen    # unfreeze would have thawed the program's
        assert not any(o is kept for o in gc.get_objects(2))
    finally:
        gc.unfreeze()


class _Cycle:
    pass


def test_garbage_of_promoted_blocks_is_collected_within_the_budget(monkeypatch):
    import weakref
    monkeypatch.setattr(gc_pause, "PROMOTE_ABOVE", 1_000)
    monkeypatch.setattr(gc_pause, "FULL_AFTER", 10_000)
    gc.collect()

    def make():
        a = _Cycle()
        a.me = a                        # garbage the moment the block ends: a cycle
        refs.append(weakref.ref(a))
        return [[k] for k in range(3_000)]
    refs = []
    _block(make)
    assert refs[0]() is not None        # promoted with the rest: waits for a full pass
    for _ in range(5):                  # 3,000 young objects a block: over 10,000 by then
        _block(make)
    assert all(r() is None for r in refs[:4]), [r() is None for r in refs]
    assert gc.isenabled()
