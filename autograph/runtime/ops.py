"""Graph-aware helpers that also run eagerly: `ag.print`, `ag.range`, `ag.constant`.

Each one does the plain NumPy/Python thing when no graph is being built, and stages a node
while tracing. `print_` is effectful: its node prints on every run of the graph (Python's
own `print` inside a traced function runs only while tracing).
"""

import sys

import numpy as np

from autograph.runtime import control_flow, formatting

from autograph.runtime.ir import nest, primitives  # noqa: F401 (Cast)
from autograph.runtime.devices import device_of
from autograph.runtime.ir.graph import get_default_graph
from autograph.runtime.ir.tensor import Tensor


def _tracing(args):
    return get_default_graph() is not None or any(isinstance(a, Tensor) for a in args)


# -- print -----------------------------------------------------------------------------------

def _host(a):
    """An array of any device as a NumPy array, for printing."""
    if isinstance(a, (np.ndarray, np.generic)):
        return a
    device = device_of(a)      # CuPy and GPU torch refuse np.asarray: ask their device
    return device.to_host(a) if device is not None else np.asarray(a)


def _is_variable(x):
    return hasattr(x, "read_value") and hasattr(x, "assign")


def format_value(x, nested=False):
    """How `ag.print` shows one argument: strings as they are, arrays like NumPy's `str`
    (`[1 2 3]`, a scalar as `5`), lists/tuples/dicts of them like Python does."""
    if isinstance(x, str):
        return repr(x) if nested else x
    if _is_variable(x):   # a Variable, printed eagerly
        x = x.numpy()
    if isinstance(x, dict):
        return "{" + ", ".join(f"{k!r}: {format_value(v, True)}" for k, v in x.items()) + "}"
    if isinstance(x, (list, tuple)):
        inner = ", ".join(format_value(v, True) for v in x)
        if isinstance(x, list):
            return f"[{inner}]"
        return f"({inner}{',' if len(x) == 1 else ''})"
    if isinstance(x, (bool, int, float, complex)) or x is None:
        return str(x)
    return str(_host(x))


class _Slot:
    """Marks where a tensor's run-time value goes in a printed structure."""

    def __repr__(self):
        return "<tensor>"


_SLOT = _Slot()


def _print_infer(*_, **__):
    return []


class _Text:
    """A staged string (f-string, str.format, % of tensors) in a print's template."""

    __slots__ = ("parts",)

    def __init__(self, parts):
        self.parts = parts

    def __repr__(self):
        return f"<text {self.parts!r}>"


def _print_kernel(xp, *arrays, template, sep, end, file):
    it = iter(arrays)
    parts = []
    for p in template:
        if p is None:
            parts.append(format_value(next(it)))
        elif isinstance(p, str):
            parts.append(p)
        elif type(p) is _Text:   # formatted as Python formats the run's NumPy values
            parts.append(formatting.render(p.parts, map(formatting.host_value, it)))
        else:   # a structure holding tensors: put this run's values in, then format
            leaves = [next(it) if leaf is _SLOT else leaf for leaf in nest.flatten(p)]
            parts.append(format_value(nest.pack_sequence_as(p, leaves)))
    print(*parts, sep=sep, end=end, file=sys.stdout if file is None else file)


primitives.register("print", _print_infer, kernel=_print_kernel, effectful=True,
                    doc="prints its inputs (formatted like NumPy's str) on every run")


def _read(x):
    return x.read_value() if _is_variable(x) else x


def print_(*args, sep=" ", end="\n", file=None):
    """Print `args` (arrays like NumPy's `str`, strings as they are, lists/tuples/dicts of
    them) now when eager, and on every run of the graph when tracing, in program order with
    other effects."""
    if not _tracing([leaf for a in args for leaf in nest.flatten(a)]) and \
            not any(isinstance(a, formatting.StagedString) for a in args):
        print(*(format_value(a) for a in args), sep=sep, end=end,
              file=sys.stdout if file is None else file)
        return None
    tensors, template = [], []
    for a in args:
        a = nest.map_structure(_read, a) if nest.is_nested(a) else _read(a)
        if isinstance(a, Tensor):
            tensors.append(a)
            template.append(None)
        elif isinstance(a, formatting.StagedString):
            tensors.extend(a.tensors)
            template.append(_Text(a.parts))
        elif nest.is_nested(a) and any(isinstance(x, Tensor) for x in nest.flatten(a)):
            leaves = nest.flatten(a)
            tensors.extend(x for x in leaves if isinstance(x, Tensor))
            template.append(nest.pack_sequence_as(
                a, [_SLOT if isinstance(x, Tensor) else x for x in leaves]))
        else:
            template.append(format_value(a))
    primitives.bind("print", tensors, {"template": tuple(template), "sep": sep, "end": end,
                                       "file": file})
    return None


# -- range -----------------------------------------------------------------------------------

def _range_dtype(inputs):
    """NumPy's promotion of the three arguments (Python scalars weak, as in NEP 50)."""
    weak_value = {"b": False, "i": 0, "u": 0, "f": 0.0, "c": 0j}
    return np.result_type(*[weak_value[t.dtype.kind] if t.weak else t.dtype for t in inputs])


def _range_infer(start, limit, delta, *, dtype):
    length = None
    if all(t.node.op == "Const" for t in (start, limit, delta)):
        values = [t.node.attrs["value"] for t in (start, limit, delta)]
        length = len(np.arange(*[v.item() for v in values]))
    return [(np.dtype(dtype), (length,), False)]


def _range_kernel(xp, start, limit, delta, *, dtype):
    cast = float if _is_float_dtype(xp, dtype) else int
    return xp.arange(cast(start), cast(limit), cast(delta), dtype=dtype)


def _is_float_dtype(xp, dtype):
    isdtype = getattr(xp, "isdtype", None)
    if isdtype is not None:
        return isdtype(dtype, ("real floating", "complex floating"))
    return np.dtype(dtype).kind in "fc"


primitives.register("range", _range_infer, kernel=_range_kernel,
                    doc="arange(start, limit, delta); a for-loop over it loops with a counter")
primitives.nondifferentiable("print", "range")   # an effect; integer counters


_ONE_BOUND = object()      # range_(n): the default `limit`, told apart from an explicit None


def range_(start, limit=_ONE_BOUND, delta=1, dtype=None, progress=False):
    """`range` that also works on tensors.

    Eager Python ints give a Python `range`, other eager values (or a `dtype`) `np.arange`.
    While tracing it makes a `range` node (inputs start, limit, delta; int64 unless given
    floats, or `dtype`) that autograph's for-loop turns into a counting `while_loop`
    without building the array. `progress=True` (or a description string) shows a
    progress bar as a `for` loop runs over it (autograph.runtime.progress); while tracing
    the loop is then staged even over Python ints, so the bar moves on every run."""
    if limit is _ONE_BOUND:
        start, limit = 0, start
    args = (start, limit, delta)
    if any(a is None for a in args):         # (np.arange(0, None) would quietly be empty)
        if get_default_graph() is not None:
            from autograph.runtime.ir import tensor
            raise TypeError(f"ag.range() bound{tensor.where(' at ')}: "
                            + primitives.not_a_value(None))
        raise TypeError(f"ag.range() bounds must be numbers or arrays, got {args}")
    staged_bar = progress is not False and progress is not None and \
        get_default_graph() is not None
    if not _tracing(args) and not staged_bar:
        if dtype is None and all(isinstance(a, (int, np.integer)) and not isinstance(a, bool)
                                 for a in args):
            values = range(int(start), int(limit), int(delta))
            if progress:
                from autograph.runtime import progress as bars
                return bars.iterate(values, progress if isinstance(progress, str) else "")
            return values
        return np.arange(start, limit, delta, dtype=dtype)
    inputs = [primitives.convert(a) for a in args]
    dtype = _range_dtype(inputs) if dtype is None else np.dtype(dtype)
    out = primitives.bind1("range", inputs, {"dtype": dtype})
    if staged_bar:
        from autograph.runtime import progress as bars
        bars.mark(out, progress if isinstance(progress, str) else "")
    return out


# -- constant --------------------------------------------------------------------------------

def constant(value, dtype=None):
    """`np.asarray(value, dtype)` when eager; a Const node while tracing. Unlike a bare
    Python scalar inside a computation, a constant has a definite dtype (NumPy's default
    for the value)."""
    if isinstance(value, Tensor):
        if dtype is None or np.dtype(dtype) == value.dtype:
            return value
        return primitives.bind1("Cast", [value], {"dtype": np.dtype(dtype)})
    array = np.asarray(value, dtype=dtype)
    if get_default_graph() is None:
        return array
    return primitives.constant(array, dtype=array.dtype)
