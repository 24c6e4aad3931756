"""`ag.function`: trace a Python function into graphs, one per input signature, and call them.

A `Function` wraps a Python function. Each call computes a trace key from its arguments
(autograph.trace_type: arrays by dtype and shape, Python values by value, other objects by
identity). A new key *traces*: the function runs once on symbolic placeholders inside a new
Graph (Python side effects such as `print` happen now, and only now), and the graph is wrapped
in a `ConcreteFunction`, compiled once per device, and cached. Calls with a known key skip
Python entirely and run the compiled graph.

Rules worth knowing (they follow TensorFlow's tf.function guide):
- Globals, closures and plain attributes are read while tracing, so later changes are not seen
  (`buggy_add`); `ag.Variable`s are read when the graph runs, so `assign_add` is seen.
- Creating an `ag.Variable` is allowed in a Function's first trace only; the Function keeps
  those Variables alive. A later trace that creates one raises ValueError.
- A Function called while another function is being traced (its arguments are symbolic
  tensors, or it is simply called from traced code) is *inlined*: its Python body runs on the
  caller's tensors and its operations join the caller's graph. Its own cache is not used, and
  its Python side effects happen while the caller traces.
- Decorating a method traces per instance: `obj.method` is a Function of its own, kept while
  `obj` lives (held weakly).
- Separate `ag.function(f)` objects never share traces.
- `ag.config.run_functions_eagerly(True)` calls the original Python function instead.

The steady-state call is the hot path: for positional array arguments the key is a tuple of
(type, dtype, shape) per argument, looked up in one dict that holds a ready-to-run callable.
"""

import functools
import importlib
import inspect
import sys
import threading
import types
import warnings
import weakref

import numpy as np

from autograph import config
from autograph import trace_type as tt
from autograph.errors import ConversionError
from autograph.log import log
from autograph.runtime import devices, nest, variables
from autograph.runtime import graph as graph_module
from autograph.runtime.graph import Graph, get_default_graph
from autograph.runtime.tensor import Tensor

__all__ = ["function", "Function", "ConcreteFunction", "RetracingWarning", "AutographWarning"]

# a warning after this many traces of one Function
RETRACE_WARNING_THRESHOLD = 5

def _busy():
    """Whether a `with ag.device(...)` scope is open or a graph is being built on this
    thread (then calls take the general path)."""
    return devices.current_device() is not None or get_default_graph() is not None


_SCOPES = getattr(devices, "_scope", None)          # the thread-local stacks behind those two
_GRAPHS = getattr(graph_module, "_state", None)
if isinstance(_SCOPES, threading.local) and isinstance(_GRAPHS, threading.local):
    def _busy():  # noqa: F811 - the same question, ~10x cheaper: reading a missing
        # thread-local attribute raises and catches AttributeError inside getattr (~0.5 us)
        return _SCOPES.__dict__.get("stack") or _GRAPHS.__dict__.get("stack")


def _fast_key(args):
    """The fast path's key: per argument its type, then dtype and shape for an array or the
    value and None for a Python value. Only keys of arrays and Python primitives are ever
    stored, so other objects (whose key parts mean nothing) simply miss. getattr with a
    default does not raise internally, so this stays cheap for Python values too."""
    if len(args) == 1:
        a = args[0]
        return (type(a), getattr(a, "dtype", a), getattr(a, "shape", None))
    if len(args) == 2:
        a, b = args
        return (type(a), getattr(a, "dtype", a), getattr(a, "shape", None),
                type(b), getattr(b, "dtype", b), getattr(b, "shape", None))
    return tuple([x for a in args
                  for x in (type(a), getattr(a, "dtype", a), getattr(a, "shape", None))])


class RetracingWarning(UserWarning):
    """A Function traced again; the message says which argument changed and how."""


class AutographWarning(UserWarning):
    """ag.function had to trace a function without converting its control flow."""


def function(func=None, *, input_signature=None, reduce_retracing=False, autograph=True,
             device=None, outputs="device"):
    """Make `func` a `Function` that traces it once per input signature and runs the graph.

    Use as `@ag.function`, `@ag.function(...)` or `ag.function(f, ...)`.
    - input_signature: a list of `ag.TensorSpec` (or structures of them), one per positional
      parameter: the one signature this Function accepts; other calls raise TypeError.
    - reduce_retracing: after an argument is seen with a second shape, trace once with the
      shapes relaxed to unknown dims (`(None,)`), and reuse that trace for later shapes.
    - autograph: convert Python control flow over tensors (`if`, `while`, `for`, ...) first.
    - device: where the graph runs ("cpu", "cuda", ...); default: the `with ag.device(...)`
      scope's device, else the device of the input arrays, else "cpu".
    - outputs: "device" returns arrays of the device that ran the graph, "host" NumPy arrays.
    """
    def decorate(f):
        return Function(f, input_signature=input_signature, reduce_retracing=reduce_retracing,
                        autograph=autograph, device=device, outputs=outputs)

    return decorate if func is None else decorate(func)


# -- helpers shared by Function and ConcreteFunction -------------------------------------------

def _choose_device(explicit, flat_inputs):
    """Explicit device, else the scope's, else the first input array's, else the default."""
    if explicit is not None:
        return devices.get_device(explicit)
    dev = devices.current_device()
    if dev is not None:
        return dev
    for a in flat_inputs:
        dev = devices.device_of(a)
        if dev is not None:
            return dev
    return devices.get_device(None)


class _Signature:
    """The parameters of the wrapped function (without `self` for a method bound to an
    instance) and how to bind call arguments to them."""

    def __init__(self, python_function, drop_first):
        sig = inspect.signature(python_function)
        params = list(sig.parameters.values())
        if drop_first:
            params = params[1:]
        self.signature = sig.replace(parameters=params)
        self.names = [p.name for p in params]
        self.kinds = {p.name: p.kind for p in params}
        self.defaults = {p.name: p.default for p in params}
        # the fast path handles calls that pass every parameter positionally
        simple = all(p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD) for p in params)
        self.fast_arity = len(params) if simple else -1
        # ... or leaves out trailing parameters whose defaults are immutable Python values
        self.fast_min = self.fast_arity
        while self.fast_min > 0 and type(params[self.fast_min - 1].default) in tt._PRIMITIVES:
            self.fast_min -= 1

    def default(self, name):
        """The value a parameter takes when a call leaves it out (empty if it must be given)."""
        kind = self.kinds[name]
        if kind == inspect.Parameter.VAR_POSITIONAL:
            return ()
        if kind == inspect.Parameter.VAR_KEYWORD:
            return {}
        return self.signature.parameters[name].default

    def bind_values(self, fn_name, args, kwargs):
        """(names, values) of every parameter for a call, defaults applied. A plain loop for
        the common signature (no *args/**kwargs); inspect's binder otherwise and for errors."""
        if self.fast_arity >= len(args) and all(
                self.kinds.get(k) == inspect.Parameter.POSITIONAL_OR_KEYWORD for k in kwargs):
            values, used = list(args), 0
            for name in self.names[len(args):]:
                if name in kwargs:
                    values.append(kwargs[name])
                    used += 1
                elif self.defaults[name] is not inspect.Parameter.empty:
                    values.append(self.defaults[name])
                else:
                    break              # a missing argument: let inspect say so
            else:
                if used == len(kwargs):   # no keyword repeats a positional argument
                    return self.names, values
        bound = self.bind(fn_name, args, kwargs)
        names = list(bound.arguments)
        return names, [bound.arguments[n] for n in names]

    def bind(self, fn_name, args, kwargs, partial=False):
        try:
            bound = (self.signature.bind_partial if partial else self.signature.bind)(*args, **kwargs)
        except TypeError as e:
            raise TypeError(f"{fn_name}{self.signature}: {e}") from None
        if not partial:
            bound.apply_defaults()
        return bound

    def call_parts(self, values):
        """Positional args and kwargs for calling the function with `values` (by name)."""
        args, kwargs = [], {}
        for name in self.names:
            if name not in values:
                continue
            kind = self.kinds[name]
            value = values[name]
            if kind == inspect.Parameter.VAR_POSITIONAL:
                args.extend(value)
            elif kind == inspect.Parameter.VAR_KEYWORD:
                kwargs.update(value)
            elif kind == inspect.Parameter.KEYWORD_ONLY:
                kwargs[name] = value
            else:
                args.append(value)
        return args, kwargs


_MISSING = object()


def _flat_arrays(values):
    """The array leaves of a list of argument values, in placeholder order."""
    out = []
    for value in values:
        if type(value) in tt._PRIMITIVES:
            continue
        if tt.is_array(value):
            out.append(value)
        elif nest.is_nested(value):
            out.extend(leaf for leaf in nest.flatten(value) if tt.is_array(leaf))
    return out


# -- Function ---------------------------------------------------------------------------------

class Function:
    """A Python function plus a cache of its traces (ConcreteFunctions); see `function`."""

    def __init__(self, python_function, input_signature=None, reduce_retracing=False,
                 autograph=True, device=None, outputs="device", *, _instance=None):
        if isinstance(python_function, Function):
            python_function = python_function._python_function
        if not callable(python_function):
            raise TypeError(f"ag.function expects a function, got {python_function!r}")
        if outputs not in ("device", "host"):
            raise ValueError(f"outputs must be 'device' or 'host', got {outputs!r}")
        functools.update_wrapper(self, python_function)
        if not hasattr(self, "__name__"):   # a functools.partial or a callable object
            self.__name__ = getattr(python_function, "func", type(python_function)).__name__
        self._python_function = python_function
        self._autograph = autograph
        self._device = device
        self._outputs = outputs
        self._reduce_retracing = reduce_retracing
        self._instance_ref = _instance     # weakref to the instance of a bound method
        self._sig = _Signature(python_function, drop_first=_instance is not None)
        self._input_signature = None
        if input_signature is not None:
            self._set_input_signature(input_signature)
        self._converted = None
        self._lock = threading.RLock()
        self._traces = {}        # trace key -> ConcreteFunction
        self._dispatch = {}      # call key -> ConcreteFunction of a supertype key
        self._fast = {}          # _fast_key(args) -> runner (see __call__)
        self._tracing_count = 0
        self._last_trace = None  # (names, key) of the latest trace, to explain retraces
        self._variables = []     # Variables created by the first trace: kept alive
        self._bound = {}         # id(instance) -> (weakref, bound Function), for methods

    # -- public API ---------------------------------------------------------------------------

    @property
    def python_function(self):
        """The original Python function (a bound method for a Function bound to an instance)."""
        if self._instance_ref is not None:
            return types.MethodType(self._python_function, self._instance())
        return self._python_function

    @property
    def input_signature(self):
        return self._input_signature

    def experimental_get_tracing_count(self):
        """How many times this Function traced its Python function."""
        return self._tracing_count

    def get_concrete_function(self, *args, **kwargs):
        """The ConcreteFunction for these arguments, tracing it if needed. Arguments may be
        arrays, `ag.TensorSpec`s (also inside lists/dicts) or Python values."""
        if self._input_signature is not None and not args and not kwargs:
            args = self._input_signature
        names, values = self._bind(args, kwargs)
        if self._input_signature is not None:
            values = self._check_input_signature(names, values)
        key = tuple(tt.make_key(v) for v in values)
        if self._input_signature is not None:
            return self._lookup(key) or self._trace_new(names, values, key)
        # asked for these exact types: a trace for them, not a more general one that fits
        return self._traces.get(key) or self._trace_new(names, values, key, exact=True)

    def pretty_printed_concrete_signatures(self):
        """Every cached trace's signature, as `str(concrete)` shows it, one after another."""
        return "\n\n".join(c._summary(with_prefix=False) for c in list(self._traces.values()))

    def __call__(self, *args, **kwargs):
        # The fast path: positional arrays and Python values whose types, dtypes, shapes and
        # values were seen before, no device scope, not inside a trace, not eager.
        # Everything else takes _call.
        if not kwargs:
            try:
                runner = self._fast.get(_fast_key(args))
            except TypeError:   # an unhashable argument (a list, a dict): the general path
                runner = None
            if runner is not None and not _busy() and not config._run_functions_eagerly:
                return runner(*args)
        return self._call(args, kwargs)

    def __get__(self, instance, owner=None):
        """`obj.method` for a decorated method: a Function bound to `obj` (one per instance,
        held as long as `obj` lives), so each instance traces on its own."""
        if instance is None:
            return self
        entry = self._bound.get(id(instance))
        if entry is not None and entry[0]() is instance:
            return entry[1]
        with self._lock:
            entry = self._bound.get(id(instance))   # another thread may have just made it
            if entry is not None and entry[0]() is instance:
                return entry[1]
            try:
                ref = weakref.ref(instance, functools.partial(_forget_instance, self._bound,
                                                              id(instance)))
            except TypeError:   # no weakrefs (e.g. __slots__): keep it for the Function's life
                ref = _StrongRef(instance)
            bound = Function(self._python_function, self._input_signature, self._reduce_retracing,
                             self._autograph, self._device, self._outputs, _instance=ref)
            self._bound[id(instance)] = (ref, bound)
            return bound

    def __repr__(self):
        return f"<autograph Function {self.__name__} ({self._tracing_count} traces)>"

    # -- calling ------------------------------------------------------------------------------

    def _instance(self):
        instance = self._instance_ref()
        if instance is None:
            raise ReferenceError(f"the object whose method {self.__name__} this is was deleted")
        return instance

    def _python_call(self, fn, args, kwargs):
        if self._instance_ref is not None:
            return fn(self._instance(), *args, **kwargs)
        return fn(*args, **kwargs)

    def _call(self, args, kwargs):
        if get_default_graph() is not None:
            # called while another function is traced: inline our Python into its graph
            return self._python_call(self._traceable(), args, kwargs)
        if config._run_functions_eagerly:
            return self._python_call(self._python_function, args, kwargs)
        names, values = self._bind(args, kwargs)
        if self._input_signature is not None:
            values = self._check_input_signature(names, values)
        key = tuple(tt.make_key(v) for v in values)
        concrete = self._lookup(key) or self._trace_new(names, values, key)
        flat = _flat_arrays(values)
        dev = _choose_device(self._device, flat)
        on_numpy = all(type(a) is np.ndarray or isinstance(a, np.generic) for a in flat)
        # NumPy arrays on the cpu need no moving; anything else goes through devices.place
        runner = concrete._runner(dev, self._outputs, move=not (on_numpy and dev.name == "cpu"))
        if not kwargs and self._sig.fast_min <= len(args) <= self._sig.fast_arity:
            self._remember_fast(args, flat, runner, on_numpy)
        return runner(*flat)

    def _remember_fast(self, args, flat, runner, on_numpy):
        """Let later calls with the same argument types, dtypes and shapes (and the same
        Python values) go straight to the compiled graph. Only for arguments that are arrays
        or Python primitives, outside device scopes, and for NumPy arrays or an explicit
        device: then the arguments' types pin the device."""
        positions = tuple(i for i, a in enumerate(args) if type(a) not in tt._PRIMITIVES)
        if len(positions) != len(flat) or not all(tt.is_array(args[i]) for i in positions):
            return   # structures or objects among the arguments: keyed the general way
        if devices.current_device() is not None or (not on_numpy and self._device is None):
            return
        if len(positions) < len(args):   # Python values: the graph takes only the arrays
            runner = functools.partial(_select, runner, positions)
        self._fast[_fast_key(args)] = runner

    def _bind(self, args, kwargs):
        return self._sig.bind_values(self.__name__, args, kwargs)

    def _set_input_signature(self, input_signature):
        specs = list(input_signature)
        for spec in nest.flatten(specs):
            if not isinstance(spec, tt.TensorSpec):
                raise TypeError(f"input_signature of {self.__name__} must hold ag.TensorSpec "
                                f"values (in lists/tuples/dicts), got {spec!r}")
        positional = [n for n in self._sig.names
                      if self._sig.kinds[n] in (inspect.Parameter.POSITIONAL_ONLY,
                                                inspect.Parameter.POSITIONAL_OR_KEYWORD)]
        if len(specs) > len(positional):
            raise TypeError(f"input_signature of {self.__name__} has {len(specs)} specs but the "
                            f"function takes {len(positional)} positional parameters")
        self._input_signature = tuple(specs)
        self._signature_names = positional[:len(specs)]

    def _check_input_signature(self, names, values):
        """Values converted to fit the input_signature; TypeError naming the argument if not."""
        out = list(values)
        specs = dict(zip(self._signature_names, self._input_signature))
        for i, name in enumerate(names):
            if name not in specs:
                continue
            try:
                out[i] = tt.check_value(values[i], tt.make_key(specs[name]), name)
            except tt.SignatureMismatch as e:
                raise TypeError(
                    f"{self.__name__}({', '.join(self._signature_names)}): argument `{e.path}` does "
                    f"not fit the input_signature: expected {e.expected}, got {e.got}. "
                    "Pass an array of that dtype and shape (or drop input_signature to trace "
                    "for each new type).") from None
        return out

    # -- the cache ----------------------------------------------------------------------------

    def _lookup(self, key):
        """The trace for `key`: an exact match, else the most specific trace whose key is a
        supertype of `key` (a `(2,)` trace beats a `(None,)` one), else None."""
        concrete = self._traces.get(key) or self._dispatch.get(key)
        if concrete is not None:
            return concrete
        if self._input_signature is None and not self._traces:
            return None
        best, best_score = None, -1
        for trace_key, candidate in list(self._traces.items()):
            if tt.is_subtype(key, trace_key):
                score = tt.specificity(trace_key)
                if score > best_score:
                    best, best_score = candidate, score
        if best is not None:
            self._dispatch[key] = best
        return best

    def _trace_new(self, names, values, key, exact=False):
        with self._lock:   # concurrent first calls with one key trace once
            concrete = self._traces.get(key) if exact else self._lookup(key)
            if concrete is not None:
                return concrete
            trace_key = key
            if self._input_signature is not None:
                trace_key = self._signature_trace_key(names, values)
            elif self._reduce_retracing:
                trace_key = self._generalize(key)
            if trace_key in self._traces:
                return self._traces[trace_key]
            concrete = self._trace(names, values, trace_key)
            self._traces[trace_key] = concrete
            self._dispatch.clear()
            self._fast.clear()
            self._watch_objects(trace_key, concrete)
            return concrete

    def _signature_trace_key(self, names, values):
        specs = dict(zip(self._signature_names, self._input_signature))
        return tuple(tt.make_key(specs[n]) if n in specs else tt.make_key(v)
                     for n, v in zip(names, values))

    def _generalize(self, key):
        """reduce_retracing: relax `key` against earlier traces whose keys differ only in
        shapes, so one trace with unknown dims serves them all."""
        general = key
        for trace_key in list(self._traces):   # a GC callback may drop one meanwhile
            relaxed = tt.supertype(general, trace_key)
            if relaxed is not None:
                general = relaxed
        return general

    def _watch_objects(self, key, concrete):
        """Drop the trace when an object its key holds weakly dies."""
        this = weakref.ref(self)

        def forget(_ref, key=key):
            fn = this()
            if fn is not None:
                fn._traces.pop(key, None)
                fn._dispatch.clear()
                fn._fast.clear()

        concrete._watches = [weakref.ref(k.obj, forget) for k in tt.objects(key)
                             if k.obj is not None]

    # -- tracing ------------------------------------------------------------------------------

    def _traceable(self):
        """The function traced: converted by the compiler when autograph=True."""
        if not self._autograph:
            return self._python_function
        if self._converted is None:
            try:
                api = importlib.import_module("autograph.api")
            except ModuleNotFoundError as e:   # the compiler is not part of this build yet
                if e.name != "autograph.api":
                    raise
                log(1, "autograph.api is missing: tracing %s unconverted", self.__name__)
                return self._python_function
            try:
                self._converted = api.to_graph(self._python_function)
            except ConversionError as e:
                # like tf.function: warn, and trace the Python function as it is (its Python
                # control flow then runs while tracing and cannot depend on tensor values)
                warnings.warn(f"ag.function could not convert {self.__name__}, so it is traced "
                              f"unconverted: {e}", AutographWarning, stacklevel=_user_stacklevel())
                self._converted = self._python_function
        return self._converted

    def _trace(self, names, values, key):
        fn = self._traceable()
        graph = Graph(self.__name__)
        specs = iter(tt.tensor_specs(key))
        placed = {}
        with graph.as_default(), variables.record_creations() as created:
            for name, value in zip(names, values):
                placed[name] = _placeholders(graph, name, value, specs)
            args, kwargs = self._sig.call_parts(placed)
            result = self._python_call(fn, args, kwargs)
            flat = nest.flatten(result)
            for i, leaf in enumerate(flat):
                if tt.is_variable(leaf):   # a returned Variable is read when the graph runs
                    flat[i] = leaf.read_value()
            tensor_slots = [i for i, leaf in enumerate(flat) if isinstance(leaf, Tensor)]
            outputs = graph.set_outputs([flat[i] for i in tensor_slots])
        if created:
            if self._tracing_count > 0:
                names_ = ", ".join(repr(getattr(v, "name", "?")) for v in created)
                raise ValueError(
                    f"{self.__name__} created ag.Variable {names_} while tracing again (trace "
                    f"#{self._tracing_count + 1}). A Function may create Variables only in its first "
                    "trace: create them outside the function, or once, guarded like "
                    "`if self.v is None: self.v = ag.Variable(...)`.")
            self._variables.extend(created)
        self._tracing_count += 1
        log(1, "traced %s #%d for %s", self.__name__, self._tracing_count, key)
        self._warn_if_retracing(names, key)
        self._last_trace = (names, key)
        for i, t in zip(tensor_slots, outputs):
            flat[i] = t
        return ConcreteFunction(self, graph, names, values, key, result, flat, tensor_slots)

    def _warn_if_retracing(self, names, key):
        if self._tracing_count <= RETRACE_WARNING_THRESHOLD or self._last_trace is None:
            return
        old_names, old_key = self._last_trace
        reasons = []
        if old_names == names:
            for name, a, b in zip(names, old_key, key):
                reasons.extend(tt.explain_change(a, b, name))
        why = "; ".join(reasons) if reasons else "the arguments' structure changed"
        warnings.warn(
            f"ag.function {self.__name__} traced {self._tracing_count} times; this trace because "
            f"{why}. Tracing is slow: keep argument types and shapes stable.",
            RetracingWarning, stacklevel=_user_stacklevel())


def _select(runner, positions, *args):
    return runner(*[args[i] for i in positions])


def _user_stacklevel():
    """The warnings.warn stacklevel of the first frame outside this module (the user's call)."""
    frame, level = sys._getframe(1), 1
    while frame is not None and frame.f_code.co_filename == __file__:
        frame, level = frame.f_back, level + 1
    return level


class _StrongRef:
    """weakref.ref's interface for objects that cannot be weakly referenced."""

    def __init__(self, obj):
        self._obj = obj

    def __call__(self):
        return self._obj


def _forget_instance(bound, key, _ref):
    bound.pop(key, None)


def _placeholders(graph, name, value, specs):
    """`value` with each array/TensorSpec leaf replaced by a placeholder named after the
    argument (`x`, `x_1`, ...), shaped by the next spec of the trace key."""
    if nest.is_nested(value) and not tt.is_tensor_leaf(value):
        leaves = [_placeholder(graph, name, leaf, specs) for leaf in nest.flatten(value)]
        return nest.pack_sequence_as(value, leaves)
    return _placeholder(graph, name, value, specs)


def _placeholder(graph, name, leaf, specs):
    if not tt.is_tensor_leaf(leaf):
        return leaf
    spec = next(specs)
    label = leaf.name if isinstance(leaf, tt.TensorSpec) and leaf.name else name
    return graph.placeholder(label, spec.dtype, spec.shape)


# -- ConcreteFunction -----------------------------------------------------------------------------

class ConcreteFunction:
    """One trace: a graph for one input signature, compiled once per device, callable with
    arrays (Python arguments must equal the values it was traced with)."""

    def __init__(self, function, graph, names, values, key, structure, flat_outputs, tensor_slots):
        self._function_name = function.__name__
        self._sig = function._sig
        self._device = function._device
        self._outputs_mode = function._outputs
        self._python_fn = weakref.ref(function)
        self.graph = graph
        self._names = names
        self._key = key
        self._watches = []
        self._lock = threading.Lock()
        self._optimized = None
        self._runners = {}
        # what the trace saw, for validation and summaries (objects weakly, via the key)
        self._param_keys = dict(zip(names, key))
        self._structure = structure
        self._flat_outputs = flat_outputs
        self._tensor_slots = tensor_slots
        self._unpack = _make_unpack(structure, flat_outputs, tensor_slots)

    # -- public API ---------------------------------------------------------------------------

    @property
    def name(self):
        return self._function_name

    @property
    def structured_input_signature(self):
        """(positional, keyword) arguments as traced: TensorSpecs named after the parameters
        for arrays, the values themselves for Python arguments."""
        args, kwargs = [], {}
        for name in self._names:
            value = _key_to_signature(self._param_keys[name], name)
            if self._sig.kinds[name] == inspect.Parameter.KEYWORD_ONLY:
                kwargs[name] = value
            elif self._sig.kinds[name] == inspect.Parameter.VAR_KEYWORD:
                kwargs.update(value)
            elif self._sig.kinds[name] == inspect.Parameter.VAR_POSITIONAL:
                args.extend(value)
            else:
                args.append(value)
        return tuple(args), kwargs

    @property
    def structured_outputs(self):
        """The traced result with the graph's output tensors in place of arrays."""
        if nest.is_nested(self._structure):
            return nest.pack_sequence_as(self._structure, self._flat_outputs)
        return self._flat_outputs[0]   # a single value: a tensor, or a Python value

    @property
    def variables(self):
        """The Variables the graph reads or writes (those still alive)."""
        return [v for v in (r() for r in self.graph.variables) if v is not None]

    def __call__(self, *args, **kwargs):
        if get_default_graph() is not None:
            return self._inline(args, kwargs)
        try:
            values = self._structured_values(args, kwargs)
        except TypeError:
            # the arrays alone, as TensorFlow's concrete functions also accept them: the
            # Python arguments (a model object, a setting) are part of the trace already
            values = self._flat_values(args, kwargs)
            if values is None:
                raise
        flat = _flat_arrays(values)
        dev = _choose_device(self._device, flat)
        on_numpy = all(type(a) is np.ndarray or isinstance(a, np.generic) for a in flat)
        move = not (on_numpy and dev.name == "cpu")
        return self._runner(dev, self._outputs_mode, move=move)(*flat)

    def _structured_values(self, args, kwargs):
        """The value of every parameter, checked against the trace: arguments bound like the
        Python function's; Python arguments left out take the values traced with."""
        bound = self._sig.bind(self._function_name, args, kwargs, partial=True)
        values = []
        for name in self._names:
            key = self._param_keys[name]
            if name in bound.arguments:
                value = bound.arguments[name]
            elif isinstance(key, tt.Literal):
                value = key.value                  # a Python argument left out: as traced
            else:
                value = self._sig.default(name)
                if value is inspect.Parameter.empty:
                    raise TypeError(f"{self._signature_line()} is missing argument `{name}` "
                                    f"({tt.describe_key(key)})")
            values.append(self._check(name, value, key))
        return values

    def _flat_values(self, args, kwargs):
        """Values for a call that passes only the parameters holding arrays (in order), or
        None when the call does not bind that way either."""
        tensor_params = [n for n in self._names if tt.tensor_specs(self._param_keys[n])]
        if len(tensor_params) == len(self._names) or len(args) > len(tensor_params):
            return None
        given = dict(zip(tensor_params, args))
        for name, value in kwargs.items():
            if name not in tensor_params or name in given:
                return None
            given[name] = value
        if len(given) != len(tensor_params):
            return None
        return [self._check(n, given[n], self._param_keys[n]) if n in given else ()
                for n in self._names]

    def _inline(self, args, kwargs):
        """Inside another trace: run the Python function on the caller's tensors, with the
        Python values this trace was made for filling the arguments left out."""
        fn = self._python_fn()
        if fn is None:
            raise ReferenceError(f"the Function that made {self!r} was deleted; a concrete "
                                 "function can be inlined into a trace only while it lives")
        bound = self._sig.bind(self._function_name, args, kwargs, partial=True)
        values = dict(bound.arguments)
        for name in self._names:
            key = self._param_keys[name]
            if name not in values and isinstance(key, tt.Literal):
                values[name] = key.value
        call_args, call_kwargs = self._sig.call_parts(values)
        return fn._python_call(fn._traceable(), call_args, call_kwargs)

    def __str__(self):
        return self._summary(with_prefix=True)

    def __repr__(self):
        return f"<ConcreteFunction {self._signature_line()} at {id(self):#x}>"

    # -- internals ----------------------------------------------------------------------------

    def _signature_line(self):
        params = []
        for name in self._names:
            key = self._param_keys[name]
            kind = self._sig.kinds[name]
            stars = {inspect.Parameter.VAR_POSITIONAL: "*",
                     inspect.Parameter.VAR_KEYWORD: "**"}.get(kind, "")
            params.append(f"{name}={key.value!r}" if isinstance(key, tt.Literal) else stars + name)
        return f"{self._function_name}({', '.join(params)})"

    def _check(self, name, value, key):
        try:
            return tt.check_value(value, key, name)
        except tt.SignatureMismatch as e:
            if isinstance(key, tt.Literal):
                raise TypeError(
                    f"ConcreteFunction {self._signature_line()} was traced with "
                    f"{type(key.value).__name__} value {key.value!r} for argument `{name}`, but was "
                    f"called with {tt.describe_value(value)}. Call the Function instead (it traces "
                    "for new Python values), or get a concrete function for this value.") from None
            what = "dtypes and shapes" if e.expected.startswith("TensorSpec") else "arguments"
            raise TypeError(
                f"ConcreteFunction {self._signature_line()}: argument `{e.path}` was traced as "
                f"{e.expected}, but got {e.got}. {e.advice}, or call the Function, which "
                f"traces again for new {what}.") from None

    def _graph_to_run(self):
        if self._optimized is None:
            try:
                from autograph.runtime import optimize
            except ImportError:
                self._optimized = self.graph
            else:
                self._optimized = optimize.optimize(self.graph)
        return self._optimized

    def _runner(self, dev, outputs_mode, move):
        """A callable(*flat arrays) -> structured result on `dev` (built once per device)."""
        cache_key = (dev.name, outputs_mode, move)
        runner = self._runners.get(cache_key)
        if runner is not None and runner.__device__ is dev:
            return runner
        with self._lock:
            from autograph.runtime import codegen
            compiled = codegen.compile_graph(self._graph_to_run(), dev)
            runner = _make_runner(compiled, self._unpack, dev, outputs_mode, move,
                                  self._function_name)
            runner.__device__ = dev
            self._runners[cache_key] = runner
            return runner

    def _summary(self, with_prefix):
        lines = [("ConcreteFunction " if with_prefix else "") + self._signature_line(),
                 "  Input Parameters:"]
        for name in self._names:
            kind = self._sig.kinds[name].name
            lines.append(f"    {name} ({kind}): {tt.describe_key(self._param_keys[name])}")
        lines.append("  Output Type:")
        lines.append(f"    {_describe_output(self.structured_outputs)}")
        lines.append("  Captures:")
        captured = self.variables
        if captured:
            for v in captured:
                lines.append(f"    {_describe_variable(v)}")
        else:
            lines.append("    None")
        return "\n".join(lines)


def _first(outs):
    return outs[0]


def _make_unpack(structure, flat_outputs, tensor_slots):
    """flat graph outputs -> the structure the Python function returned (Python values in it
    pass through as they were while tracing)."""
    if not tensor_slots:
        return lambda outs: structure
    if not nest.is_nested(structure) and len(flat_outputs) == 1:
        return _first
    template = list(flat_outputs)
    slots = list(tensor_slots)

    def unpack(outs):
        flat = list(template)
        for i, value in zip(slots, outs):
            flat[i] = value
        return nest.pack_sequence_as(structure, flat)

    return unpack


def _make_runner(compiled, unpack, dev, outputs_mode, move, name):
    to_host = dev.to_host if outputs_mode == "host" else None
    if not move and to_host is None:
        if unpack is _first:
            def run(*arrays):
                return compiled(*arrays)[0]
        else:
            def run(*arrays):
                return unpack(compiled(*arrays))
        return run

    def run(*arrays):
        if move:
            arrays = [devices.place(a, dev, f"an argument of {name}") for a in arrays]
        outs = compiled(*arrays)
        if to_host is not None:
            outs = [to_host(o) for o in outs]
        return unpack(outs)
    return run


def _key_to_signature(key, name):
    if type(key) is tt.TensorSpec:
        return key.with_name(name)
    if type(key) is tt.Literal:
        return key.value
    if type(key) is tt.Structure:
        labels = key.labels if isinstance(key.labels, tuple) else range(key.labels)
        kids = [_key_to_signature(k, f"{name}_{i}") for i, k in enumerate(key.children)]
        if key.kind is dict or issubclass(key.kind, dict):
            return key.kind(zip(labels, kids))
        if key.kind in (list, tuple):
            return key.kind(kids)
        if nest.dataclasses.is_dataclass(key.kind):
            return key  # a dataclass cannot be rebuilt from specs in general: show the key
        return key.kind(*kids)   # namedtuple
    if type(key) is tt.ObjectKey:
        obj = key.obj
        return obj if obj is not None else key
    return key


def _describe_output(out):
    if isinstance(out, Tensor):
        return repr(tt.TensorSpec(out.shape, out.dtype))
    if isinstance(out, (list, tuple)) and not hasattr(type(out), "_fields"):
        kind = "List" if isinstance(out, list) else "Tuple"
        return f"{kind}[{', '.join(_describe_output(o) for o in out)}]"
    if isinstance(out, dict):
        return "Dict[" + ", ".join(f"{k!r}: {_describe_output(v)}" for k, v in out.items()) + "]"
    if nest.is_nested(out):
        return f"{type(out).__name__}[{', '.join(_describe_output(o) for o in nest.children(out))}]"
    if out is None:
        return "None"
    return f"Literal[{out!r}]" if type(out) in tt._PRIMITIVES else f"{type(out).__name__} value"


def _describe_variable(v):
    name = getattr(v, "name", None) or "Variable"
    dtype = getattr(v, "dtype", None)
    shape = getattr(v, "shape", None)
    parts = [f"Variable {name!r}"]
    if dtype is not None:
        parts.append(np.dtype(dtype).name)
    if shape is not None:
        parts.append(f"shape={tt._shape_str(tuple(shape))}")
    return ", ".join(parts)


class _CallableModule(types.ModuleType):
    """Importing this module by name (`from autograph.function import ConcreteFunction`)
    makes Python set the package attribute `autograph.function` to the module, shadowing the
    decorator that `autograph/__init__.py` exports lazily under the same name. So the module
    forwards calls to `function`: `ag.function(f)` and `@ag.function(...)` work either way."""

    def __call__(self, *args, **kwargs):
        return function(*args, **kwargs)


sys.modules[__name__].__class__ = _CallableModule
