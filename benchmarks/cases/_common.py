"""Helpers the case modules share: getting at each framework, or saying why not."""

import functools

import numpy as np

from benchmarks import frameworks
from benchmarks.harness import Contender, Unavailable


def autograph():
    """The autograph package (always importable in this repo; its parts may not be yet)."""
    import autograph as ag
    return ag


def tf_contender(make, fresh=False, name="tensorflow"):
    """A TensorFlow contender; `make(tf)` builds the callable. Unavailable without TF."""
    tf, note = frameworks.tensorflow()
    if tf is None:
        return Unavailable(name, note)
    return Contender(name, functools.partial(make, tf), fresh=fresh, result=_tf_numpy)


def jax_contender(make, fresh=False, name="jax"):
    """A JAX contender; `make(jax, jnp, lax)` builds the callable, which must block until
    its result is ready (JAX dispatches asynchronously)."""
    jax, note = frameworks.jax()
    if jax is None:
        return Unavailable(name, note)
    import jax.numpy as jnp
    from jax import lax
    return Contender(name, functools.partial(make, jax, jnp, lax), fresh=fresh, result=np.asarray)


def numba_contender(make, name="numba"):
    """A `numba.njit` contender; `make(numba)` builds the callable. Unavailable without
    Numba (the `native` extra)."""
    try:
        import numba
    except ImportError:
        return Unavailable(name, "numba is not installed (pip install -e '.[native]')")
    return Contender(name, functools.partial(make, numba))


def autograph_jit_contender(make, name="autograph_jit"):
    """autograph with `jit_compile=True`; `make(ag)` builds the callable (the first call,
    which compiles or loads the disk cache, is made while building). Unavailable without
    Numba."""
    try:
        import numba  # noqa: F401
    except ImportError:
        return Unavailable(name, "numba is not installed (pip install -e '.[native]')")

    def build():
        fn = make(autograph())
        fn()
        return fn
    return Contender(name, build)


def _tf_numpy(value):
    return value.numpy() if hasattr(value, "numpy") else np.asarray(value)


def blocking(fn, *args):
    """`fn(*args)` as a zero-argument callable that waits for JAX's asynchronous result."""
    def call():
        return fn(*args).block_until_ready()
    return call
