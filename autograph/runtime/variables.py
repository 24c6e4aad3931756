"""Variable: mutable state that graphs read and write at run time.

A Variable holds an array on a device. Eagerly, reading gives that array and `assign`
replaces it. While tracing, a read stages a `read_variable` node and an assignment an
`assign_variable` node; both hold a *weak* reference to the Variable (so does
`graph.variables`), so a graph never keeps a Variable alive. Running a graph whose Variable
was deleted raises an error that names the Variable and the function.

Both nodes are effectful: they are never dropped, merged or reordered, so a read sees
exactly the assignments staged before it.

Updates are atomic per Variable, as TensorFlow's resource variables are by default: each
Variable has a lock, and `assign`, `assign_add` and `assign_sub` hold it, eagerly and when a
graph runs (`assign_add` stages one `update_variable` node whose kernel reads, adds and
writes under the lock). Eight threads adding 1 a thousand times each give 8000. A
read-modify-write spelled out by hand (`v.assign(v + 1)`) is a read and a separate
assignment: another thread may assign in between. Arithmetic and NumPy functions work on a
Variable as on its value (`v + 1`, `np.tanh(v)`), eagerly and while tracing.

`record_creations()` lets `ag.function` see the Variables a trace creates; `name_scope(name)`
prefixes the names of Variables created inside it (`ag.Module.name_scope` uses it).

`trainable` (default True) says whether a gradient tape watches the Variable automatically
and whether `Module.trainable_variables` lists it; an optimizer's own state (slots, the
iteration counter) is made with `trainable=False`. `name` and `trainable` are fixed at
creation, also for Variables created while a function traces.
"""

import contextlib
import operator
import _thread
import weakref

import numpy as np

from autograph.errors import AutographError, StagingError
from autograph.runtime.ir import nest, primitives
from autograph.runtime.devices import DeviceError, device_of, get_device
from autograph.runtime.ir import graph as graph_module
from autograph.runtime.ir.graph import get_default_graph
from autograph.runtime.ir.tensor import Tensor


class DeletedVariableError(AutographError, ReferenceError):
    """A graph ran after one of the Variables it uses was garbage collected."""


# -- creation hook ---------------------------------------------------------------------------

# (kept with the trace state in autograph.runtime.ir.graph: tracing records creations
# without loading this module; `_local.stack` is the hook's stack, `_local.scopes` ours)
_local = graph_module._creation
record_creations = graph_module.record_creations


@contextlib.contextmanager
def name_scope(name):
    """Variables created on this thread inside the block are named `name/<their name>`
    (nested scopes join with '/'), as under TensorFlow's tf.name_scope."""
    scopes = getattr(_local, "scopes", None)
    if scopes is None:
        scopes = _local.scopes = []
    scopes.append(str(name))
    try:
        yield "/".join(scopes) + "/"
    finally:
        scopes.pop()


def _scoped(name):
    scopes = getattr(_local, "scopes", None)
    return "/".join([*scopes, name]) if scopes else name


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
    var = _on_device(xp, variable, name, function)
    lock = var._lock   # never while native code writes the array in place (native/inplace.py)
    lock.acquire()     # (not `with`: this runs on every read of every call, ~0.1 us cheaper)
    value = var._value
    lock.release()
    return value


def _assign_kernel(xp, value, *, variable, name, function, **_):
    var = _on_device(xp, variable, name, function)
    with var._lock:   # never between the read and the write of an update on another thread
        var._value = value


def _update_kernel(xp, delta, *, variable, name, function, op, operand_dtype, dtype,
                   into=False, **_):
    """assign_add / assign_sub: the Variable's value `op` delta, as one step under its lock.
    The value is computed in `operand_dtype` (NumPy's loop dtype, which the staged delta
    already has) and stored in the Variable's `dtype`, as a read, an add and an assign
    would compute it. `into`: generated code proved `delta`'s memory dead (see
    runtime/exec/buffer_reuse.py), so a delta of the value's shape and dtype receives it."""
    var = _on_device(xp, variable, name, function)
    fn = getattr(xp, op)
    with var._lock:
        old = var._value
        if old.dtype != operand_dtype:
            old = xp.astype(old, operand_dtype)
        if into and delta.ndim and delta.shape == old.shape and delta.dtype == old.dtype:
            new = fn(old, delta, out=delta)
        else:
            new = fn(old, delta)
        if new.dtype != dtype:
            new = xp.astype(new, dtype)
        var._value = new


def _read_infer(*, variable, name, function, dtype, shape):
    return [(dtype, shape, False)]


def _assign_infer(value, **_):
    return []


primitives.register("read_variable", _read_infer, _read_kernel, effectful=True,
                    doc="the Variable's current value (ordered with assignments)")
primitives.register("assign_variable", _assign_infer, _assign_kernel, effectful=True,
                    doc="replaces the Variable's value")
primitives.register("update_variable", _assign_infer, _update_kernel, effectful=True,
                    doc="the Variable's value `op` (add/subtract) delta, atomically")


def _root(graph):
    while graph.parent is not None:
        graph = graph.parent
    return graph


# -- the Variable ----------------------------------------------------------------------------

class Variable:
    """A named, mutable array: `v = ag.Variable(1.0)`; `v.assign(2.0)`; `v + 1`.

    `ag.Variable(initial_value, dtype=None, name=None, trainable=True)`: `initial_value` is
    an array, a Python value or a callable giving one; `name` defaults to "Variable" (with
    the enclosing name scopes' prefix); `trainable` must be a bool.
    """

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
        if not isinstance(trainable, (bool, np.bool_)):
            raise TypeError(f"ag.Variable's trainable must be True or False, got {trainable!r}")
        self._name = _scoped("Variable" if name is None else str(name))
        self._trainable = bool(trainable)
        self._lock = _thread.allocate_lock()   # held by assign, assign_add, assign_sub (and kernels)
        for made in getattr(_local, "stack", ()):
            made.append(self)

    # -- properties --------------------------------------------------------------------------

    @property
    def name(self):
        """The name given at creation, with its name scopes (`dense/kernel`)."""
        return self._name

    @property
    def trainable(self):
        """Whether tapes watch it automatically and optimizers' variable lists include it."""
        return self._trainable

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
        with self._lock:   # (native code may be writing the array in place: inplace.py)
            value = self._value
        return _host(value, self._device)

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
            with self._lock:   # (as numpy())
                return self._value
        attrs = self._attrs(graph)
        attrs.update(dtype=self._dtype, shape=self._shape)
        return primitives.bind1("read_variable", (), attrs, node_name="ReadVariableOp")

    def assign(self, value):
        """Replace the value (same shape; cast to the Variable's dtype). Returns self."""
        graph = get_default_graph()
        if graph is None and not isinstance(value, Tensor):
            with self._lock:
                self._assign_now(value)
            return self
        value = primitives.convert(value)
        self._check(value.dtype, value.shape, value.weak)
        if value.dtype != self._dtype:
            from autograph.runtime import control_flow  # noqa: F401 (registers Cast; a
            # loaded model that only reads its Variables never imports control flow)
            value = primitives.bind1("Cast", [value], {"dtype": self._dtype})
        primitives.bind("assign_variable", [value], self._attrs(value.graph),
                        node_name="AssignVariableOp")
        return self

    def assign_add(self, delta):
        """Add `delta` to the value, atomically (see the module docstring). Returns self."""
        return self._update(operator.add, np.add, delta, "AssignAddVariableOp")

    def assign_sub(self, delta):
        """Subtract `delta` from the value, atomically. Returns self."""
        return self._update(operator.sub, np.subtract, delta, "AssignSubVariableOp")

    def _assign_now(self, value):
        new = np.asarray(_host(value))
        self._check(new.dtype, new.shape, isinstance(value, (int, float, bool)))
        self._value = self._device.to_device(new.astype(self._dtype, copy=False))

    def _update(self, op, ufunc, delta, node_name):
        delta = _unwrap(delta)
        graph = get_default_graph()
        if graph is None and not isinstance(delta, Tensor):
            with self._lock:   # the read, the arithmetic and the write as one step
                self._assign_now(op(self._value, delta))
            return self
        # One node: its kernel reads, computes and writes under the lock. Its dtypes are
        # those of `read_value() (op) delta` then `assign`: NumPy's loop for the two
        # operands (the delta made or cast to its loop dtype here), stored in ours.
        from autograph.runtime.numpy import elementwise
        from autograph.runtime.ir import shapes
        entry = elementwise.UFUNCS[ufunc]
        if isinstance(delta, Tensor):
            key = elementwise.dtypes.WEAK_TYPE[delta.dtype.kind] if delta.weak else delta.dtype
        else:
            key = elementwise.operand_key(delta)[0]
        prim, ins, out = entry.plan((self._dtype, key))
        delta = primitives.convert(elementwise.as_tensor(delta, ins[1]))
        try:
            shape = shapes.broadcast(self._shape, delta.shape)
        except ValueError as e:
            # a ValueError, as NumPy's (eagerly) and the staged arithmetic's are
            raise ValueError(f"numpy.{ufunc.__name__} of Variable {self.name!r} of shape "
                             f"{self._shape} and a value of shape {delta.shape}: {e}") from None
        self._check(out, shape, False)
        attrs = self._attrs(delta.graph)
        attrs.update(op=prim, operand_dtype=np.dtype(ins[0]), dtype=self._dtype)
        primitives.bind("update_variable", [delta], attrs, node_name=node_name)
        return self

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

    def __setitem__(self, key, value):
        """`v[key] = value`: the Variable takes its value with the update (an assign of
        the updated copy), so the write persists across calls as NumPy's write into an
        array does; `v[key] += d` reads, adds and assigns the same way."""
        if get_default_graph() is None and not isinstance(value, Tensor) and not any(
                isinstance(k, Tensor) for k in nest.flatten(key)):
            with self._lock:
                new = np.array(self.numpy(), copy=True)
                new[key] = _unwrap(value)
                self._assign_now(new)
            return
        from autograph.runtime.numpy import updates
        self.assign(updates.setitem(self.read_value(), key, _unwrap(value)))

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

    def __getstate__(self):   # copy/deepcopy: a new Variable gets a lock of its own
        state = dict(self.__dict__)
        state.pop("_lock", None)
        return state

    def __setstate__(self, state):
        self.__dict__.update(state)
        self._lock = _thread.allocate_lock()

    def __repr__(self):
        extra = "" if self._trainable else ", trainable=False"
        return (f"<ag.Variable {self.name!r} shape={self._shape} dtype={self._dtype.name}"
                f"{extra}, numpy={self.numpy()!r}>")


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
