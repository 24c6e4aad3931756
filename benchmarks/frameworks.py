"""Optional contenders: TensorFlow and JAX, imported once, only if installed.

They come from the `bench` extra and live in a separate virtualenv (they pin their own NumPy);
without them the suite still runs and the table says why those columns are empty.
`--no-tf` / `--no-jax` (or AUTOGRAPH_BENCH_NO_TF / _NO_JAX) turn them off on purpose.
"""

import os
import sys

from benchmarks import threads

_cache = {}


def _load(name, importer):
    if name not in _cache:
        if os.environ.get(f"AUTOGRAPH_BENCH_NO_{name.upper()}"):
            _cache[name] = (None, f"{name} turned off (--no-{name})")
        else:
            try:
                _cache[name] = (importer(), "")
            except Exception as e:  # noqa: BLE001 - ImportError, or a broken install
                _cache[name] = (None, f"not importable ({e}); see the bench extra")
    return _cache[name]


def _import_tf():
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
    import tensorflow as tf
    tf.get_logger().setLevel("ERROR")
    tf.autograph.set_verbosity(0)
    n = threads.pinned()
    if n:     # TF's two pools are sized by a call, before its first op
        tf.config.threading.set_intra_op_parallelism_threads(n)
        tf.config.threading.set_inter_op_parallelism_threads(n)
    return tf


def _import_jax():
    os.environ.setdefault("JAX_PLATFORMS", "cpu")
    import jax
    # our programs use int64/float64 like NumPy; without x64 JAX would silently use 32 bits
    jax.config.update("jax_enable_x64", True)
    return jax


def _import_torch():
    import torch
    n = threads.pinned()
    if n:
        torch.set_num_threads(n)
    return torch


def torch():
    """(torch module or None, note)."""
    return _load("torch", _import_torch)


def tensorflow():
    """(tf module or None, note)."""
    return _load("tf", _import_tf)


def jax():
    """(jax module or None, note)."""
    return _load("jax", _import_jax)


def versions():
    """Versions of the optional frameworks that are loaded (not importing them for this)."""
    out = {}
    tf, _ = _cache.get("tf", (None, ""))
    jx, _ = _cache.get("jax", (None, ""))
    if tf is not None:
        out["tensorflow"] = tf.__version__
    if jx is not None:
        import jaxlib
        out["jax"] = jx.__version__
        out["jaxlib"] = jaxlib.__version__
    for name in ("torch", "numba", "onnxruntime"):     # imported by some case of this run,
        module = sys.modules.get(name)                 # or (onnxruntime) only by its processes
        if module is not None:
            out[name] = getattr(module, "__version__", "?")
        else:
            try:
                from importlib.metadata import version
                out[name] = version(name)
            except Exception:  # noqa: BLE001 - not installed
                pass
    return out
