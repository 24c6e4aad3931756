"""Variable: mutable state that graphs read and write at run time.

A Variable holds an array on a device. Eagerly, reading gives that array and `assign`
replaces it. While tracing, a read stages a `read_variable` node and an assignment an
`assign_variable` node; both hold a *weak* reference to the Variable (so does
`graph.variables`), so a graph never keeps a Variable alive. Running a graph whose Variable
was deleted raises an error that names the Variable and the function.

Both nodes are effectful: they are never dropped, merged or reordered, so a read sees
exactly the assignments staged before it. Arithmetic and NumPy functions work on a
Variable as on its value (`v + 1`, `np.tanh(v)`), eagerly and while tracing.

`record_creations()` lets `ag.function` see the Variables a trace creates.
"""

import contextlib
import operator
import threading
import weakref

import numpy as np

from autograph.errors import AutographError, StagingError
from autograph.runtime import control_flow, nest, primitives  # noqa: F401 (registers Cast)
from autograph.runtime.devices import DeviceError, device_of, get_device
from autograph.runtime.graph import get_default_graph
from autograph.runtime.tensor import Tensor


class DeletedVariableError(AutographError, ReferenceError):
    """A graph ran after one of the Variables it uses was garbage collected."""


# -- creation hook ---------------------------------------------------------------------------

_local = threading.local()


@contextlib.contextmanager
def record_creations():
    """Collect every Variable created on this thread inside the block (nested blocks each
    get them): `with record_creations() as made: ...; made` is a list of Variables."""
    stack = getattr(_local, "stack", None)
    if stack is None:
        stack = _local.stack = []
    made = []
    stack.append(made)
    try:
        yield made
    finally:
        stack.pop()


# -- kernels ---------------------------------------------------------------------------------

def _deref(variable, name, function):
    var = variable()
    if var is None:
        raise DeletedVariableError(
            f"The Variable {name!r} that function {function!r} uses was deleted (garbage "
            "collected): a traced function holds its Variables only weakly. Keep a reference "
            "to the Variable (e.g. as a global or an attribute of an object that lives as long "
            "as the function) for as long as you call the function.")
    return var


def _on_device(xp, variable, name, function):
    """The Variable, checked to live on the device running the graph (namespace `xp`)."""
    var = _deref(variable, name, function)
    if var._device.xp is not xp:  # say so, rather than let a kernel fail on a foreign array
        raise DeviceError(
            f"Variable {name!r} lives on device {var._device.name!r} (the default device when "
            f"it was created), but function {function!r} runs on another device (array "
            f"namespace {getattr(xp, '__name__', xp)}). Create the Variable inside `with "
            "ag.device(...)` for the device the function runs on.")
    return var


def _read_kernel(xp, *, variable, name, function, **_):
    return _on_device(xp, variable, name, function)._value


def _assign_kernel(xp, value, *, variable, name, function, **_):
    _on_device(xp, variable, name, function)._value = value


def _read_infer(*, variable, name, function, dtype, shape):
    return [(dtype, shape, False)]


def _assign_infer(value, **_):
    return []


primitives.register("read_variable", _read_infer, _read_kernel, effectful=True,
                    doc="the Variable's current value (ordered with assignments)")
primitives.register("assign_variable", _assign_infer, _assign_kernel, effectful=True,
                    doc="replaces the Variable's value")


def _root(graph):
    while graph.parent is not None:
        graph = graph.parent
    return graph


# -- the Variable ----------------------------------------------------------------------------

class Variable:
    """A named, mutable array: `v = ag.Variable(1.0)`; `v.assign(2.0)`; `v + 1`."""

    __array_priority__ = 1001   # NumPy defers to our operators (which defer to Tensor's)

    def __init__(self, initial_value, dtype=None, name=None, trainable=True):
        if callable(initial_value):
            initial_value = initial_value()
        if isinstance(initial_value, Variable):
            initial_value = initial_value.numpy()
        if isinstance(initial_value, Tensor) or any(
                isinstance(x, Tensor) for x in nest.flatten(initial_value)):
            raise StagingError(
                f"The initial value of Variable {name or ''!r} is a symbolic tensor: a "
                "Variable is created with a concrete value, even inside a traced function. "
                "Create it from a NumPy array or Python number (outside the function, or "
                "once, in the first trace).")
        self._device = get_device(None)
        value = np.asarray(_host(initial_value), dtype=dtype)
        self._dtype = value.dtype
        self._shape = value.shape
        self._value = self._device.to_device(value)
        self.name = "Variable" if name is None else str(name)
        self.trainable = trainable
        for made in getattr(_local, "stack", ()):
            made.append(self)

    # -- properties --------------------------------------------------------------------------

    @property
    def dtype(self):
        return self._dtype

    @property
    def shape(self):
        return self._shape

    @property
    def ndim(self):
        return len(self._shape)

    @property
    def device(self):
        return self._device

    @property
    def value(self):
        """The value: the array eagerly, a `read_variable` tensor while tracing."""
        return self.read_value()

    def numpy(self):
        """The current value as a NumPy array (always concrete)."""
        return _host(self._value, self._device)

    # -- reading and writing -----------------------------------------------------------------

    def _attrs(self, graph):
        ref = weakref.ref(self)
        for g in (graph, _root(graph)):
            if not any(r() is self for r in g.variables):
                g.variables.append(ref)
        return {"variable": ref, "name": self.name, "function": _root(graph).name}

    def read_value(self):
        graph = get_default_graph()
        if graph is None:
            return self._value
        attrs = self._attrs(graph)
        attrs.update(dtype=self._dtype, shape=self._shape)
        return primitives.bind1("read_variable", (), attrs, node_name="ReadVariableOp")

    def assign(self, value):
        """Replace the value (same shape; cast to the Variable's dtype). Returns self."""
        graph = get_default_graph()
        if graph is None and not isinstance(value, Tensor):
            new = np.asarray(_host(value))
            self._check(new.dtype, new.shape, isinstance(value, (int, float, bool)))
            self._value = self._device.to_device(new.astype(self._dtype, copy=False))
            return self
        value = primitives.convert(value)
        self._check(value.dtype, value.shape, value.weak)
        if value.dtype != self._dtype:
            value = primitives.bind1("Cast", [value], {"dtype": self._dtype})
        primitives.bind("assign_variable", [value], self._attrs(value.graph),
                        node_name="AssignVariableOp")
        return self

    def assign_add(self, delta):
        return self.assign(self.read_value() + _unwrap(delta))

    def assign_sub(self, delta):
        return self.assign(self.read_value() - _unwrap(delta))

    def _check(self, dtype, shape, weak):
        if dtype != self._dtype and not weak and \
                not np.can_cast(dtype, self._dtype, "same_kind"):
            raise StagingError(
                f"Cannot assign a value of dtype {np.dtype(dtype).name} to Variable "
                f"{self.name!r} of dtype {self._dtype.name}; convert it first with "
                f".astype(np.{self._dtype.name})")
        if shape is not None and tuple(shape) != self._shape and \
                not (len(shape) == len(self._shape) and
                     all(a is None or a == b for a, b in zip(shape, self._shape))):
            raise StagingError(
                f"Cannot assign a value of shape {tuple(shape)} to Variable {self.name!r} of "
                f"shape {self._shape}: a Variable keeps its shape.")

    # -- behaving like its value -------------------------------------------------------------

    def __array__(self, dtype=None, copy=None):
        return np.asarray(self.numpy(), dtype=dtype)

    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        inputs = [_unwrap(x) for x in inputs]
        return getattr(ufunc, method)(*inputs, **kwargs)

    def __array_function__(self, func, types, args, kwargs):
        args = nest.map_structure(_unwrap, list(args))
        kwargs = nest.map_structure(_unwrap, dict(kwargs))
        return func(*args, **kwargs)

    def __getitem__(self, index):
        return self.read_value()[index]

    def __bool__(self):
        return bool(self.read_value())

    def __float__(self):
        return float(self.read_value())

    def __int__(self):
        return int(self.read_value())

    def __index__(self):
        return operator.index(self.read_value())

    def __len__(self):
        return self._shape[0]

    __hash__ = object.__hash__   # Variables are keys by identity (trace cache)

    def __repr__(self):
        return (f"<ag.Variable {self.name!r} shape={self._shape} dtype={self._dtype.name}, "
                f"numpy={self.numpy()!r}>")


def _host(value, device=None):
    if isinstance(value, (np.ndarray, np.generic)):
        return value
    device = device_of(value) or device  # by type: torch tensors have no __array_namespace__
    return value if device is None else device.to_host(value)


def _unwrap(x):
    return x.read_value() if isinstance(x, Variable) else x


def _binary(op):
    def forward(self, other):
        return op(self.read_value(), _unwrap(other))

    def reflected(self, other):
        return op(_unwrap(other), self.read_value())
    return forward, reflected


for _name, _op in [("add", operator.add), ("sub", operator.sub), ("mul", operator.mul),
                   ("truediv", operator.truediv), ("floordiv", operator.floordiv),
                   ("mod", operator.mod), ("pow", operator.pow), ("matmul", operator.matmul),
                   ("and", operator.and_), ("or", operator.or_), ("xor", operator.xor)]:
    _fwd, _ref = _binary(_op)
    setattr(Variable, f"__{_name}__", _fwd)
    setattr(Variable, f"__r{_name}__", _ref)

for _name, _op in [("lt", operator.lt), ("le", operator.le), ("gt", operator.gt),
                   ("ge", operator.ge)]:
    setattr(Variable, f"__{_name}__", _binary(_op)[0])

for _name, _op in [("neg", operator.neg), ("pos", operator.pos), ("abs", operator.abs),
                   ("invert", operator.invert)]:
    setattr(Variable, f"__{_name}__", lambda self, _op=_op: _op(self.read_value()))
