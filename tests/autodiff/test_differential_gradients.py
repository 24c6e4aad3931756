"""Differential gradient tests (issue 26): generated programs through cond, while,
TensorArray and Variables (benchmarks/differential/gradgen.py), and a few of the shared
samples, each checked for four derivative kinds (a first gradient, a second gradient() of a
persistent tape, a jacobian, a Hessian as the jacobian of a gradient) in three modes (eager
tape, tape inside ag.function, ag.grad): the modes agree with each other and with central
differences (benchmarks/differential/gradcheck.py).

The full run (>= 2,000 programs) is
`python -m benchmarks.differential.gradrun --count 2000 --seed 0 --jobs 2 --samples`.
"""

import warnings

import pytest

from benchmarks.differential import gradcheck, gradrun
from tests.autodiff import samples

SEED = "ci"
COUNT = 16
SAMPLES = [samples.cond_in_loop, samples.data_dependent_while, samples.break_in_loop,
           samples.tanh_loop]


def _report(findings, source):
    return "\n".join(f"{k} / {m}: {w}\n  {msg[:400]}" for k, m, w, msg in findings) + \
        "\n" + source


@pytest.mark.parametrize("index", range(COUNT))
def test_generated_program_derivatives_agree(index):
    p = gradrun.program(SEED, index)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        findings, _ = gradcheck.check(p, timeout=60.0)
    assert not findings, _report(findings, p.source)


@pytest.mark.parametrize("sample", SAMPLES, ids=lambda f: f.__name__)
def test_shared_sample_derivatives_agree(sample):
    p, f = gradcheck.sample_program(sample)
    findings, kinks = gradcheck.check(p, timeout=60.0, f=f)
    assert not findings, _report(findings, p.source)
    assert kinks == 0


def test_the_checker_sees_a_wrong_gradient(monkeypatch):
    """The checker itself: a mode whose numbers are off is reported."""
    p = gradrun.program(SEED, 0)
    real = gradcheck.RUNNERS["grad"]

    def off(*args):
        out = real(*args)
        out["hessian"] = out["hessian"] * 1.001
        return out
    monkeypatch.setitem(gradcheck.RUNNERS, "grad", off)
    findings, _ = gradcheck.check(p, timeout=60.0)
    assert [(k, m) for k, m, *_ in findings] == [("hessian", "grad")]


def test_the_checker_sees_a_hang(monkeypatch):
    """A mode that does not return is a timeout finding for each kind, not a hang."""
    p = gradrun.program(SEED, 0)

    def spin(*args):
        while True:
            pass
    monkeypatch.setitem(gradcheck.RUNNERS, "eager", spin)
    findings, _ = gradcheck.check(p, timeout=0.5, modes=("eager",))
    assert {(k, w) for k, m, w, _ in findings} == {(k, "timeout") for k in gradcheck.KINDS}
