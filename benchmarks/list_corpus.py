"""The whole list-program corpus (tests/converters/list_corpus.py), every check (issue 31).

    python -m benchmarks.list_corpus

tests/converters/test_list_corpus.py checks every program's answer and the gradients of a
sample (the suite's time is bounded); this runs every differentiable program's gradient in
every mode (eager tape, tape inside ag.function, ag.grad) against central differences, and
the second gradient (nested tapes, ag.grad of ag.grad) of each, and prints what failed.
"""

import sys
import time

import numpy as np

from tests.autodiff.modes import MODES, fd, fd2, grad, second
from tests.converters.list_corpus import CORPUS, DIFFERENTIABLE
from tests.converters.test_list_corpus import _loss


def main():
    failed, checks, start = [], 0, time.perf_counter()
    for name, fn, (x, n) in CORPUS:
        if name not in DIFFERENTIABLE:
            continue
        loss = _loss(fn)
        want = fd(loss, x, n)
        want2 = fd2(lambda z: loss(z, n), x)
        for mode in MODES:
            checks += 2
            try:
                np.testing.assert_allclose(grad(mode, loss, x, np.int64(n)), want,
                                           rtol=1e-6, atol=1e-6)
            except Exception as exc:   # noqa: BLE001 (a report of every failure)
                failed.append((name, mode, "gradient", exc))
            try:
                got = second(mode, lambda z: loss(z, np.int64(n)), x)
                np.testing.assert_allclose(got, want2, rtol=1e-3, atol=1e-4)
            except Exception as exc:   # noqa: BLE001
                failed.append((name, mode, "second gradient", exc))
    print(f"{checks} checks of {len(DIFFERENTIABLE)} programs in "
          f"{time.perf_counter() - start:.1f} s: {len(failed)} failed")
    for name, mode, what, exc in failed:
        print(f"  {name} ({mode}, {what}): {type(exc).__name__}: {str(exc)[:200]}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
