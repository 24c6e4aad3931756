"""A small sample of the vmap differential run (benchmarks/differential/vmaprun.py, which
runs >= 1,000): generated programs with nested control flow, batched over drawn in_axes,
equal the stacked per-element results (or every element's program raises and so does the
batch, or the refusal is a documented BatchingError)."""

import pytest

from benchmarks.differential import vmaprun

SEED = "ci"


@pytest.mark.parametrize("index", range(6))
def test_generated_program_batched_equals_per_element(index):
    outcome, detail = vmaprun.run_one(SEED, index)
    assert outcome in ("pass", "both raise", "refused"), (outcome, detail)
    if outcome == "refused":
        assert "ragged" in detail or "one value" in detail, detail


def test_the_runner_sees_a_wrong_batch(monkeypatch):
    # the reference itself: a vmap that drops a lane's work is reported as wrong
    import autograph as ag
    real = ag.vmap

    def off_by_one(fn, in_axes=0, out_axes=0):
        g = real(fn, in_axes, out_axes)
        return lambda *a: tuple(v + 1 for v in g(*a))
    monkeypatch.setattr(ag, "vmap", off_by_one)
    outcome, _ = vmaprun.run_one(SEED, 0)
    assert outcome == "wrong"
