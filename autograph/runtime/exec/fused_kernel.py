"""The callable behind a fused chain of generated code (see fused_chains): one Numba loop
over the flattened arrays, compiled once per machine, NumPy until then.

    v0 = s0 * x0                  # the chain's body, the same text in both forms
    v1 = s1 * x1
    v2 = v0 + v1

As Numba source (`kernel_source`) it is the body of `for i in range(n)`, every array input
loaded once per element (`x0 = a0[i]`) and every output stored once (`o0[i] = v2`); as
NumPy source (`numpy_source`) it runs on the whole arrays, one ufunc call per line.

Tiers. A fresh process pays nothing for fusion on a first call: a Chain runs its NumPy form
for its first `HOT_AFTER` calls, then imports Numba and gets the kernel (from Numba's disk
cache when any program on this machine compiled the same structure before: ~1 s the first
time ever, milliseconds after). Without Numba, or where the kernel cannot be had, it keeps
the NumPy form. The environment variable AUTOGRAPH_FUSE=0 turns fusion off when programs
are compiled (`enabled`); tests set HOT_AFTER to 0.

The kernel's source file lives in the native cache folder (native/jit.py: this user's own,
else a private one), named by a hash of its text; it is executed from the string in memory,
never read back.
"""

import hashlib
import os

import numpy as np

HOT_AFTER = 2
_kernels = {}          # source digest -> njit dispatcher (or None: could not be had)
_numpy_fns = {}        # body text -> the NumPy form
_stats = {"compiled": 0, "fused_calls": 0, "numpy_calls": 0}
_available = None


def variable(xp, *, variable, name, function):
    """The Variable a fused update writes (checked to live on this device)."""
    from autograph.runtime import variables
    return variables._on_device(xp, variable, name, function)


def enabled():
    """Whether codegen fuses chains: Numba can be imported (looked up, not imported: a first
    call stays free of it) and AUTOGRAPH_FUSE is not 0."""
    global _available
    if os.environ.get("AUTOGRAPH_FUSE", "1") in ("0", "off", "false"):
        return False
    if _available is None:
        import importlib.util
        _available = importlib.util.find_spec("numba") is not None
    return _available


def stats():
    """Counts for tests: kernels compiled or loaded, calls fused and calls run by NumPy."""
    return dict(_stats)


def kernel_source(name, n_arrays, n_scalars, lines, results, checked=(), layout=None):
    """The Numba loop; it returns whether any value in `checked` (the float ones) came out
    infinite or NaN, where NumPy may have warned or raised (see Chain.run).

    `layout` None: every array has the chain's shape, one loop over the flattened arrays.
    Else `(kinds, reductions)`: the shape is split into R outer and C inner elements and the
    loop is two deep (`r`, `c`); `kinds` says per array how it is indexed ("f" all R*C
    elements, "i" an inner block of C repeated over the rows (a bias), "o" an outer one of R
    repeated along each row (a row's max)); `reductions` are (result, value) pairs: that
    result is the value summed over the rows, in row order from +0.0 (NumPy's order)."""
    if layout is not None:
        return _split_source(name, n_arrays, n_scalars, lines, results, checked, layout)
    params = ([f"a{k}" for k in range(n_arrays)] + [f"s{k}" for k in range(n_scalars)]
              + [f"o{k}" for k in range(len(results))])
    text = _HEADER + [f"def {name}({', '.join(params)}):",
                      "    n = a0.shape[0]"]
    for k in range(1, n_arrays):
        text.append(f"    if a{k}.shape[0] != n:")
        text.append("        raise ValueError('a fused chain got arrays of different sizes')")
    text.append("    bad = False")
    text.append("    for i in range(n):")
    text += [f"        x{k} = a{k}[i]" for k in range(n_arrays)]
    text += ["        " + line for line in lines]
    text += [f"        o{k}[i] = {r}" for k, r in enumerate(results)]
    text += [f"        bad |= ({v} - {v}) != ({v} - {v})" for v in checked]   # inf or NaN
    text.append("    return bad")
    return "\n".join(text) + "\n"


_HEADER = ["import numpy as np", "from numba import njit", "", "",
           "@njit(cache=True, error_model='numpy', boundscheck=False)"]
_INDEX = {"f": "i", "i": "c", "o": "r"}
_SIZE = {"f": "R * C", "i": "C", "o": "R"}


def _split_source(name, n_arrays, n_scalars, lines, results, checked, layout):
    kinds, reductions = layout
    summed = dict(reductions)
    params = (["R", "C"] + [f"a{k}" for k in range(n_arrays)]
              + [f"s{k}" for k in range(n_scalars)] + [f"o{k}" for k in range(len(results))])
    text = _HEADER + [f"def {name}({', '.join(params)}):"]
    for k, kind in enumerate(kinds):
        text.append(f"    if a{k}.shape[0] != {_SIZE[kind]}:")
        text.append("        raise ValueError('a fused chain got arrays of the wrong sizes')")
    sums = [k for k, r in enumerate(results) if r in summed]
    text.append("    bad = False")
    if sums:
        text.append("    for c in range(C):")
        text += [f"        o{k}[c] = 0.0" for k in sums]
    text.append("    for r in range(R):")
    text.append("        for c in range(C):")
    text.append("            i = r * C + c")
    text += [f"            x{k} = a{k}[{_INDEX[kind]}]" for k, kind in enumerate(kinds)]
    text += ["            " + line for line in lines]
    for k, r in enumerate(results):
        text.append(f"            o{k}[c] += {summed[r]}" if r in summed else
                    f"            o{k}[i] = {r}")
    text += [f"            bad |= ({v} - {v}) != ({v} - {v})" for v in checked]
    if sums:
        text.append("    for c in range(C):")
        text += [f"        bad |= (o{k}[c] - o{k}[c]) != (o{k}[c] - o{k}[c])" for k in sums]
    text.append("    return bad")
    return "\n".join(text) + "\n"


def numpy_source(n_arrays, n_scalars, lines, results):
    params = [f"x{k}" for k in range(n_arrays)] + [f"s{k}" for k in range(n_scalars)]
    text = [f"def chain({', '.join(params)}):"] + ["    " + line for line in lines]
    text.append(f"    return ({''.join(r + ', ' for r in results).rstrip()})")
    return "\n".join(text) + "\n"


def _numpy_form(source):
    fn = _numpy_fns.get(source)
    if fn is None:
        namespace = {"np": np}
        exec(compile(source, "<autograph fused chain>", "exec"), namespace)
        fn = _numpy_fns[source] = namespace["chain"]
    return fn


def _kernel(n_arrays, n_scalars, lines, results, checked=(), layout=None):
    """The njit dispatcher of this chain structure, or None without Numba."""
    probe = kernel_source("chain", n_arrays, n_scalars, lines, results, checked, layout)
    if probe in _kernels:
        return _kernels[probe]
    try:
        import numba
        from autograph import __version__ as ag_version
        from autograph.runtime.exec.native import jit
    except ImportError:
        _kernels[probe] = None
        return None
    digest = hashlib.sha256(f"{numba.__version__}\0{ag_version}\0{probe}".encode()).hexdigest()
    name = f"ag_chain_{digest[:16]}"
    found = jit._load(kernel_source(name, n_arrays, n_scalars, lines, results, checked,
                                    layout),
                      digest, name)
    _stats["compiled"] += 1
    _kernels[probe] = found
    return found


def _underflow_ignored():
    """np.geterr()["under"] == "ignore", asked of NumPy's error state object once per
    state (np.geterr builds a dict: ~1.5 us a call, a fused call's largest cost but one)."""
    global _state
    try:
        obj = _ufunc_config._extobj_contextvar.get()
    except AttributeError:           # another NumPy: ask it the slow way
        return np.geterr()["under"] == "ignore"
    if obj is not _state[0]:
        _state = (obj, np.geterr()["under"] == "ignore")
    return _state[1]


try:
    from numpy._core import _ufunc_config
except ImportError:                  # NumPy 1.x
    from numpy.core import _ufunc_config
_state = (None, False)


class Chain:
    """`chain(*arrays, *scalars)` -> a tuple of the chain's outputs (arrays of `shape`, or
    of their `out_shapes` where given; of `out_dtypes`); scalars arrive as NumPy scalars or
    0-d arrays of `scalar_dtypes`. `layout` (split, kinds, reductions): the two-deep loop
    of `kernel_source`, R = prod(shape[:split]) rows of C = prod(shape[split:])."""

    def __init__(self, shape, scalar_dtypes, out_dtypes, n_arrays, loop, whole, results,
                 update=None, checked=(), layout=None, out_shapes=None):
        shape = tuple(shape)
        out_shapes = tuple(tuple(s) for s in out_shapes or [shape] * len(out_dtypes))
        layout = None if layout is None else (int(layout[0]), str(layout[1]),
                                              tuple(tuple(p) for p in layout[2]))
        # what rebuilds it (plain data: function/trace_cache keeps it with the trace)
        self.__fused_chain__ = (shape, tuple(np.dtype(d).str for d in scalar_dtypes),
                                tuple(np.dtype(d).str for d in out_dtypes), n_arrays,
                                tuple(loop), tuple(whole), tuple(results), update,
                                tuple(checked), layout, out_shapes)
        self.checked = tuple(checked)
        # (array position, result position): that argument is a Variable whose value the
        # chain reads there and whose new value is that result, under the Variable's lock
        # (an update loses nothing to another thread's, as update_variable's kernel)
        self.update = None if update is None else tuple(update)
        self.shape = shape
        self.scalar_types = tuple(np.dtype(d).type for d in scalar_dtypes)
        self.out_dtypes = tuple(np.dtype(d) for d in out_dtypes)
        self.out_shapes = out_shapes
        self.out_sizes = tuple((int(np.prod(s)), d) for s, d in zip(out_shapes,
                                                                     self.out_dtypes))
        self.n_arrays = n_arrays
        self.loop, self.results = tuple(loop), tuple(results)
        self.layout = None if layout is None else layout[1:]
        self.rows = () if layout is None else (
            int(np.prod(shape[:layout[0]])), int(np.prod(shape[layout[0]:])))
        self.__doc__ = numpy_source(n_arrays, len(scalar_dtypes), whole, results)
        self.numpy = _numpy_form(self.__doc__)
        self.kernel = None
        self.calls = 0

    def __repr__(self):
        return f"<fused chain of {len(self.loop)} operations: {'; '.join(self.loop)}>"

    def __call__(self, *args):
        if self.update is None:
            return self.run(args)
        at, result = self.update
        var = args[at]
        with var._lock:
            args = list(args)
            args[at] = var._value
            outs = self.run(args)
            var._value = outs[result]
        return outs[:result] + outs[result + 1:]

    def _numpy(self, args):
        _stats["numpy_calls"] += 1
        outs = self.numpy(*args)
        if self.layout is None:
            return outs
        # a reduction's NumPy form sums without keepdims: its shape is the output's
        return tuple(o.reshape(s) for o, s in zip(outs, self.out_shapes))

    def run(self, args):
        kernel = self.kernel
        if kernel is None:
            self.calls += 1
            if self.calls <= HOT_AFTER or not self._hot():
                return self._numpy(args)
            kernel = self.kernel
        if not _underflow_ignored():          # underflow the loop cannot report
            return self._numpy(args)
        _stats["fused_calls"] += 1
        n = self.n_arrays
        flat = [a.reshape(-1) for a in args[:n]]        # a view, or a copy when strided
        flat += [s if s.__class__ is to else to(s)      # (a NumPy scalar is passed as is)
                 for to, s in zip(self.scalar_types, args[n:])]
        outs = [np.empty(size, d) for size, d in self.out_sizes]
        if self.calls >= 0:
            bad = kernel(*self.rows, *flat, *outs)
        else:
            try:   # its first call compiles (or loads) the machine code for these dtypes
                bad = kernel(*self.rows, *flat, *outs)
            except Exception:      # Numba refused: NumPy computes the same values
                self.kernel, self.calls = None, -(1 << 62)
                bad = True
            else:
                self.calls = 0
        if bad:
            # an inf or a NaN: NumPy computes it again, so that np.errstate's warnings and
            # FloatingPointErrors come as they would without fusion (same values)
            _stats["fused_calls"] -= 1
            return self._numpy(args)
        return tuple(o.reshape(s) for o, s in zip(outs, self.out_shapes))

    def _hot(self):
        """Get the kernel (once); False keeps the NumPy form for good."""
        try:
            self.kernel = _kernel(self.n_arrays, len(self.scalar_types), self.loop,
                                  self.results, self.checked, self.layout)
        except Exception as e:   # Numba refused or failed: NumPy computes the same values
            from autograph.config import log
            log(1, "fused chain %r runs as NumPy calls: its kernel failed: %r", self, e)
            self.kernel = None
        if self.kernel is None:
            self.calls = -(1 << 62)
            return False
        self.calls = -1        # its first fused call is checked (see __call__)
        return True
