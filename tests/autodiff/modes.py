"""The three ways to differentiate a function, for tests parametrised by mode.

- "eager":  an `ag.GradientTape` on NumPy values (the tape's live graph);
- "traced": the same tape code inside an `ag.function`;
- "grad":   `ag.grad` (no tape).

`grad(mode, f, *args)` is df/dargs[0]; `second(mode, f, x)` is d2f/dx2 of a scalar f by
nesting the same mechanism twice (nested tapes; `ag.grad` of `ag.grad`). `fd(f, x)` and
`fd2(f, x)` are central differences (the reference every mode is compared with).
"""

import numpy as np

import autograph as ag

MODES = ("eager", "traced", "grad")


def _tape_grad(f, x, args, watch):
    with ag.GradientTape() as tape:
        x = watch(tape, x)
        y = f(x, *args)
    # zeros where y does not depend on x: TF's graph answer (cond_v2's tests); eagerly TF
    # gives None there, as the tape does without the option
    return tape.gradient(y, x, unconnected_gradients="zero")


def _eager_watch(tape, x):
    return tape.watch(x)


def _traced_watch(tape, x):
    tape.watch(x)
    return x


def grad(mode, f, x, *args):
    x = np.asarray(x, dtype=np.float64)
    if mode == "eager":
        return _tape_grad(f, x, args, _eager_watch)
    if mode == "traced":
        return ag.function(lambda x, *a: _tape_grad(f, x, a, _traced_watch))(x, *args)
    assert mode == "grad", mode
    return ag.grad(f)(x, *args)


def _tape_second(f, x, watch):
    with ag.GradientTape() as outer:
        x = watch(outer, x)
        with ag.GradientTape() as inner:
            inner.watch(x)
            y = f(x)
        dy = inner.gradient(y, x, unconnected_gradients="zero")
    return outer.gradient(dy, x, unconnected_gradients="zero")


def second(mode, f, x):
    """d/dx (df/dx) summed over df/dx's elements: the Hessian's row sums for a vector x."""
    x = np.asarray(x, dtype=np.float64)
    if mode == "eager":
        return _tape_second(f, x, _eager_watch)
    if mode == "traced":
        return ag.function(lambda x: _tape_second(f, x, _traced_watch))(x)
    assert mode == "grad", mode
    return ag.grad(lambda x: np.sum(ag.grad(f)(x)))(x)


def fd(f, x, *args, h=1e-6):
    """The gradient of scalar f at x by central differences."""
    x = np.asarray(x, dtype=np.float64)
    out = np.zeros_like(x)
    for i in np.ndindex(x.shape):
        e = np.zeros_like(x)
        e[i] = h
        out[i] = (float(np.asarray(f(x + e, *args))) - float(np.asarray(f(x - e, *args)))) / (2 * h)
    return out


def fd2(f, x, h=1e-4):
    """`second`'s quantity by central differences of the central-difference gradient."""
    return fd(lambda z: np.sum(fd(f, z, h=h)), x, h=h)
