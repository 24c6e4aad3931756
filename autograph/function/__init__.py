"""`ag.function`: trace a Python function into graphs, one per input signature, and call them.

A `Function` wraps a Python function. Each call computes a trace key from its arguments
(autograph.function.trace_type: arrays by dtype and shape, Python values by value, other objects by
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

The steady-state call is the hot path: when the arguments are arrays and Python primitives,
the key is a flat tuple of (type, dtype, shape) per array and (type, value) per Python value,
looked up in one dict that holds a ready-to-run callable (the compiled graph of the matching
trace). Anything else (structures, objects, device scopes) takes the general path: bind the
arguments, build the trace key, find the most specific trace. A `jit_compile=True` Function
goes further: its calls skip `__call__` for a function written for their argument types
(autograph.function.native_call).

ConcreteFunction lives in autograph.function.concrete (re-exported here). The package holds
the wing, one file per idea: concrete, trace_type (keys), signatures (binding), retracing,
fast_args (the fast path for structures), trace_cache (on disk), native_call.
"""

import contextlib
import functools
import importlib
import operator
import sys
import _thread
import types
import warnings
import weakref

import numpy as np

from autograph import _bundle, config, gc_pause
from autograph.function import trace_type as tt
from autograph.function.concrete import (FAST_PATH, GRAPHS, SCOPES, ConcreteFunction, Signature,
                                         choose_device, direct_runner, fast_key, flat_arrays,
                                         user_error)
from autograph.errors import AutographWarning, ConversionError, RetracingWarning  # noqa: F401 (public here too)
from autograph.config import get_verbosity, log
from autograph.runtime import devices
from autograph.runtime.ir import nest, primitives
from autograph.runtime.ir.graph import Graph, get_default_graph, record_creations
from autograph.runtime.ir.tensor import Tensor

__all__ = ["function", "Function", "ConcreteFunction", "RetracingWarning", "AutographWarning"]

# a warning after this many traces of one Function
RETRACE_WARNING_THRESHOLD = 5

# the call fast path (its key and thread-local checks: concrete.fast_key, FAST_PATH)
_FAST_PATH_ENTRIES = 1024   # per Function
BUSY = config._busy   # the call fast path's flag (autograph.config)
_structures = None    # autograph.function.fast_args: imported by the first call with a structure


def _fast_args():
    global _structures
    from autograph.function import fast_args as module
    _structures = module
    return module


# Functions passed as arguments (the seed's `dynamic_rnn(rnn_step, ...)`) are keyed by
# identity like any object, and may take the fast path too. The fast path's key holds them
# weakly (fast_args._WeakPart), as the trace key does: a function and its closure die when
# the caller drops them, and so do their trace and fast-path entries. Other objects never
# enter the fast path.
_PLAIN_CALLABLES = (types.FunctionType, types.BuiltinFunctionType, np.ufunc)
_HELD_WEAKLY = (types.FunctionType, types.BuiltinFunctionType)   # ufuncs live forever


def _calm():
    """The exact check behind the fast path's flag (autograph.config._busy, set while any
    thread is in a device scope or a trace, functions run eagerly or numerics are checked):
    on this thread no device scope is open, no graph is being built, functions do not run
    eagerly and numerics are not checked (a runner of the fast path runs unchecked code)."""
    return (not SCOPES.__dict__.get("stack") and not GRAPHS.__dict__.get("stack")
            and not config._run_functions_eagerly and not config._check_numerics)


def _kw_key(args, kwargs):
    """The fast path's key of a call with keywords (never equal to a fast_key: its first
    item is a tuple, not a type)."""
    return (fast_key(args), tuple(kwargs), fast_key(tuple(kwargs.values())))


def function(func=None, *, input_signature=None, reduce_retracing=False, autograph=True,
             device=None, outputs="device", jit_compile=None):
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
    - jit_compile: True compiles the traced graph to machine code with Numba (loops and
      branches included; see docs/native.md), raising an error naming the operation and
      your line where something cannot be compiled; None (the default) and False run the
      graph with the Python executor.
    """
    def decorate(f):
        cls = _NativeFunction if jit_compile else Function
        return cls(f, input_signature=input_signature, reduce_retracing=reduce_retracing,
                   autograph=autograph, device=device, outputs=outputs, jit_compile=jit_compile)

    return decorate if func is None else decorate(func)


def _refuse_generator(fn):
    """A generator (or coroutine) function cannot be traced: a trace runs it once and
    keeps what it returns, and a generator returns before its body runs (its yields would
    hand the user the trace's symbolic tensors). Refused where it is decorated."""
    import inspect
    inner = inspect.unwrap(fn.func if isinstance(fn, functools.partial) else fn)
    inner = getattr(inner, "__func__", inner)
    kinds = ((inspect.isgeneratorfunction, "a generator function (it has `yield`)"),
             (inspect.iscoroutinefunction, "a coroutine function (`async def`)"),
             (inspect.isasyncgenfunction, "an async generator function"))
    what = next((text for test, text in kinds if test(inner)), None)
    if what is None:
        return
    code = inner.__code__
    raise TypeError(
        f"ag.function cannot trace {inner.__qualname__} ({code.co_filename}:"
        f"{code.co_firstlineno}): it is {what}. A traced function runs once to build its "
        "graph and returns its results; a generator would hand out symbolic tensors. Return "
        "the values instead (a list, or an array built in a loop: ag.TensorArray), or, for a "
        "stream of inputs, make the generator a dataset (ag.data.Dataset.from_generator) and "
        "trace the function that consumes it.")


# -- Function ---------------------------------------------------------------------------------

class Function:
    """A Python function plus a cache of its traces (ConcreteFunctions); see `function`."""

    def __init__(self, python_function, input_signature=None, reduce_retracing=False,
                 autograph=True, device=None, outputs="device", jit_compile=None, *,
                 _instance=None):
        if isinstance(python_function, Function):
            python_function = python_function._python_function
        if not callable(python_function):
            raise TypeError(f"ag.function expects a function, got {python_function!r}")
        if outputs not in ("device", "host"):
            raise ValueError(f"outputs must be 'device' or 'host', got {outputs!r}")
        _refuse_generator(python_function)
        functools.update_wrapper(self, python_function)
        if not hasattr(self, "__name__"):   # a functools.partial or a callable object
            self.__name__ = getattr(python_function, "func", type(python_function)).__name__
        self._python_function = python_function
        self._autograph = autograph
        self._device = device
        self._outputs = outputs
        self._jit_compile = jit_compile
        self._reduce_retracing = reduce_retracing
        self._instance_ref = _instance     # weakref to the instance of a bound method
        self._sig = Signature(python_function, drop_first=_instance is not None)
        self._input_signature = None
        if input_signature is not None:
            self._set_input_signature(input_signature)
        self._converted = None
        self._lock = _thread.RLock()
        self._traces = {}        # trace key -> ConcreteFunction
        self._dispatch = {}      # call key -> ConcreteFunction of a supertype key
        self._fast = {}          # fast_key(args) -> runner (see __call__)
        self._fast_checked = {}  # ... and the runners of checked calls (check_numerics: _call)
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
        from autograph.function import signatures
        return signatures.get_concrete_function(self, args, kwargs)

    def _repr_html_(self):
        """In a notebook: the explorer page (source, converted code, passes, the latest
        trace's graph; autograph.explorer)."""
        from autograph.explorer import page_of_function   # (the page: loaded when asked)
        return page_of_function(self)._repr_html_()

    def pretty_printed_concrete_signatures(self):
        """Every cached trace's signature, as `str(concrete)` shows it, one after another."""
        return "\n\n".join(c._summary(with_prefix=False) for c in list(self._traces.values()))

    def __call__(self, *args, **kwargs):
        # The fast path: arrays and Python values whose types, dtypes, shapes and values were
        # seen before, no device scope, not inside a trace, not eager (BUSY empty, or the
        # exact check says so for this thread: _calm). Else: _call. The keys of one and two
        # arguments are fast_key's, written out here (a call of fast_key costs ~50 ns of the
        # ~650 a NumPy scalar's call takes): a NumPy scalar's key is its type, and no other
        # key is a bare type, so one dict lookup with the type finds it or nothing.
        try:
            try:
                if kwargs:
                    key = _kw_key(args, kwargs)
                elif len(args) == 1:
                    a = args[0]
                    runner = self._fast.get(type(a))
                    if runner is not None and (not BUSY or _calm()):
                        return runner(a)
                    key = (type(a), getattr(a, "dtype", a), getattr(a, "shape", None))
                elif len(args) == 2:
                    a, b = args
                    key = (type(a), getattr(a, "dtype", a), getattr(a, "shape", None),
                           type(b), getattr(b, "dtype", b), getattr(b, "shape", None))
                else:
                    key = fast_key(args)
                runner = self._fast.get(key)
            except TypeError:   # an unhashable argument (a list, a dict): structured key
                nested = (_structures or _fast_args()).key(args, kwargs)
                runner = None if nested is None else self._fast.get(nested[0])
                if runner is not None and (not BUSY or _calm()):
                    return runner(*nested[1])
            if runner is not None and (not BUSY or _calm()):
                return runner(*args, *kwargs.values()) if kwargs else runner(*args)
            return self._call(args, kwargs)
        except Exception as exc:
            # (a try costs nothing until something raises) the traceback starts at the
            # user's call and shows the user's lines only (concrete.user_error)
            user_error(exc)
            raise

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
            bound = type(self)(self._python_function, self._input_signature,
                               self._reduce_retracing, self._autograph, self._device,
                               self._outputs, self._jit_compile, _instance=ref)
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
            if config._check_numerics:   # NumPy's own operations, checked eagerly
                from autograph.runtime.exec import eager_numerics
                return eager_numerics.call(self._python_call, self._python_function, args,
                                           kwargs)
            return self._python_call(self._python_function, args, kwargs)
        if config._check_numerics and self._fast_checked and not kwargs and \
                not SCOPES.__dict__.get("stack"):
            # check_numerics' own fast path (the plain one stays free of the switch's test)
            try:
                runner = self._fast_checked.get(fast_key(args))
            except TypeError:   # an unhashable argument
                runner = None
            if runner is not None:
                return runner(*args)
        names, values = self._bind(args, kwargs)
        if self._input_signature is not None:
            values = self._check_input_signature(names, values)
        key = tuple(tt.make_key(v) for v in values)
        if any(isinstance(v, tt.TensorSpec) or nest.is_nested(v) and any(
                isinstance(leaf, tt.TensorSpec) for leaf in nest.flatten(v)) for v in values):
            raise TypeError(f"{self.__name__} was called with an ag.TensorSpec; a call needs "
                            "arrays. To trace for a spec without running, use "
                            f"{self.__name__}.get_concrete_function(spec).")
        concrete = self._lookup(key) or self._trace_new(names, values, key)
        flat = flat_arrays(values)
        dev = choose_device(self._device, flat)
        on_numpy = all(type(a) is np.ndarray or isinstance(a, np.generic) for a in flat)
        # NumPy arrays on the cpu need no moving; anything else goes through devices.place
        runner = concrete._runner(dev, self._outputs, move=not (on_numpy and dev.name == "cpu"))
        if FAST_PATH and self._sig.fast_arity >= 0:
            # (a checked runner is remembered apart: the fast path runs with the check off)
            if not config._check_numerics:
                self._remember_fast(args, kwargs, names, values, flat, runner, on_numpy)
            elif not kwargs:
                self._remember_fast(args, kwargs, names, values, flat, runner, on_numpy,
                                    checked=True)
        if _bundle.pending:   # the process's first call: keep what it imported (_bundle)
            result = runner(*flat)
            _bundle.first_call_done()
            return result
        return runner(*flat)

    def _remember_fast(self, args, kwargs, names, values, flat, runner, on_numpy,
                       checked=False):
        """Let later calls with the same argument types, dtypes and shapes (and the same
        Python values) go straight to the compiled graph. Only when every argument is an
        array, a Python primitive or a plain function (parameters left out too), outside
        device scopes, and for NumPy arrays or an explicit device: then the arguments'
        types pin the device. `checked`: a runner of check_numerics' code, which only
        `_call` finds (in `_fast_checked`), while the switch is on."""
        given = args + tuple(kwargs.values())
        where = {name: len(args) + i for i, name in enumerate(kwargs)}
        where.update((name, i) for i, name in enumerate(names[:len(args)]))
        positions = []   # for each array parameter, in placeholder order: its place in `given`
        for name, value in zip(names, values):
            if type(value) in tt._PRIMITIVES or type(value) in _PLAIN_CALLABLES:
                continue
            i = where.get(name)
            if i is None or not tt.is_array(given[i]) or given[i] is not value:
                # an array default, a structure, an object, a converted value
                if checked:
                    return
                return self._remember_nested(args, kwargs, flat, runner, on_numpy)
            positions.append(i)
        if len(positions) != len(flat):
            return
        if devices.current_device() is not None or (not on_numpy and self._device is None):
            return
        direct = positions == list(range(len(given)))
        if not direct:   # Python values or reordered keywords
            runner = functools.partial(_select, runner, tuple(positions))
        else:
            runner = direct_runner(runner, given)
        fast = self._fast_checked if checked else self._fast
        if len(fast) >= _FAST_PATH_ENTRIES:   # many shapes through one [None] trace:
            self._forget_fast()               # start over rather than grow forever
        key = fast_key(args) if not kwargs else _kw_key(args, kwargs)
        if any(type(v) in _HELD_WEAKLY for v in given):
            from autograph.function import fast_args
            key = fast_args.weak_parts(key, self)
        elif direct and not kwargs and not checked:
            self._remembered(given, runner)
        fast[key] = runner

    def _remembered(self, args, runner):
        """The fast path now runs `runner` for calls like this one, all of whose arguments
        are arrays passed positionally (_NativeFunction goes further)."""

    def _forget_fast(self):
        """Start the call fast path over (a new trace, a key's object died, too many keys)."""
        self._fast.clear()
        self._fast_checked.clear()

    def _remember_nested(self, args, kwargs, flat, runner, on_numpy):
        """The fast path for a call with structures of NumPy arrays (fast_args)."""
        from autograph.function import fast_args
        fast_args.remember_nested(self, args, kwargs, flat, runner, on_numpy)

    def _bind(self, args, kwargs):
        return self._sig.bind_values(self.__name__, args, kwargs)

    def _set_input_signature(self, input_signature):
        from autograph.function import signatures
        signatures.set_input_signature(self, input_signature)

    def _check_input_signature(self, names, values):
        """Values converted to fit the input_signature; TypeError naming the argument if not."""
        from autograph.function import signatures
        return signatures.check_input_signature(self, names, values)

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
            if len(self._dispatch) >= _FAST_PATH_ENTRIES:
                self._dispatch.clear()   # bounded, like the fast path's cache
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
            with gc_pause.paused():   # the heap grows with the program: see gc_pause
                concrete = self._trace_or_load(names, values, trace_key)
            self._traces[trace_key] = concrete
            self._dispatch.clear()
            self._forget_fast()
            self._watch_objects(trace_key, concrete)
            return concrete

    def _signature_trace_key(self, names, values):
        from autograph.function import signatures
        return signatures.signature_trace_key(self, names, values)

    def _generalize(self, key):
        """reduce_retracing: `key` relaxed against earlier traces (retracing)."""
        from autograph.function import retracing
        return retracing.generalize(self, key)

    def _watch_objects(self, key, concrete):
        """Drop the trace when an object its key holds weakly dies."""
        this = weakref.ref(self)

        def forget(_ref, key=key):
            fn = this()
            if fn is not None:
                fn._traces.pop(key, None)
                fn._dispatch.clear()
                fn._forget_fast()

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
                from autograph.operators import unconverted   # later errors say why
                unconverted.remember(self._python_function, e)
                self._converted = self._python_function
        return self._converted

    def _trace_or_load(self, names, values, key):
        """The ConcreteFunction of a new trace key: from the trace cache where it has the
        trace (a later process), else traced, and kept there if it may be (see
        autograph.function.trace_cache: plain functions converted by autograph, on the cpu)."""
        if not self._autograph or self._device is not None or \
                self._instance_ref is not None or not config.disk_cache_enabled():
            return self._trace(names, values, key)
        from autograph.function import trace_cache
        return trace_cache.trace(self, names, values, key)

    def _trace(self, names, values, key):
        graph, result, flat, tensor_slots, created = self._trace_graph(names, values, key)
        if created:
            if self._tracing_count > 0:   # (normally refused at creation, see _forbid_creation)
                raise ValueError(self._creation_error(
                    ", ".join(repr(getattr(v, "name", "?")) for v in created)))
            self._variables.extend(created)
        self._traced(names, key, "traced", graph)
        return ConcreteFunction(self, graph, names, values, key, result, flat, tensor_slots)

    def _traced(self, names, key, how, graph=None):
        """Count a new trace (`how`: "traced", or where it came from) and say so."""
        self._tracing_count += 1
        log(1, "%s %s #%d for %s", how, self.__name__, self._tracing_count, key)
        if graph is not None and get_verbosity() >= 2:   # counting nested nodes walks the graph
            log(2, "graph of %s: %d nodes, %d counting branch and loop bodies", self.__name__,
                len(graph.nodes), sum(1 for _ in graph.walk()))
        self._warn_if_retracing(names, key)
        self._last_trace = (names, key)

    def _trace_graph(self, names, values, key):
        """(graph, result, flat result with the graph's outputs in it, their places in it,
        the Variables made) of the Python function traced for `values` (`key`)."""
        fn = self._traceable()
        graph = Graph(self.__name__)
        specs = iter(tt.tensor_specs(key))
        placed = {}
        native = _ALLOWED
        if self._jit_compile:   # long Python ranges: one loop for Numba (jit_ranges)
            from autograph.operators import jit_ranges
            native = jit_ranges.tracing_for_native()
        with graph.as_default(), record_creations() as created, native, \
                _forbid_creation(self._creation_error("{name}") if self._tracing_count else None):
            for name, value in zip(names, values):
                placed[name] = _placeholders(graph, name, value, specs)
            args, kwargs = self._sig.call_parts(placed)
            try:
                result = self._python_call(fn, args, kwargs)
            except Exception as e:
                # say which trace failed: the traceback shows where, this says for what
                params = ", ".join(f"{n}: {tt.describe_key(k)}" for n, k in zip(names, key))
                if hasattr(e, "add_note"):   # Python 3.11+
                    e.add_note(f"(raised while ag.function traced {self.__name__}({params}))")
                raise
            flat = nest.flatten(result)
            for i, leaf in enumerate(flat):
                if tt.is_variable(leaf):   # a returned Variable is read when the graph runs
                    flat[i] = leaf.read_value()
                elif isinstance(leaf, (np.ndarray, np.generic)):  # arrays become constants
                    flat[i] = primitives.constant(leaf)
                elif _is_staged_string(leaf):
                    raise sys.modules["autograph.runtime.formatting"].returned_error(
                        leaf, self.__name__)
            tensor_slots = [i for i, leaf in enumerate(flat) if isinstance(leaf, Tensor)]
            outputs = graph.set_outputs([flat[i] for i in tensor_slots])
        for i, t in zip(tensor_slots, outputs):
            flat[i] = t
        return graph, result, flat, tensor_slots, created

    def _creation_error(self, what):
        return (f"{self.__name__} created ag.Variable {what} while tracing again (trace "
                f"#{self._tracing_count + 1}). A Function may create Variables only in its first "
                "trace: create them outside the function, or once, guarded like "
                "`if self.v is None: self.v = ag.Variable(...)`.")

    def _warn_if_retracing(self, names, key):
        if self._tracing_count <= RETRACE_WARNING_THRESHOLD or self._last_trace is None:
            return
        from autograph.function import retracing
        retracing.warn_retracing(self, names, key)


_ALLOWED = contextlib.nullcontext()


def _forbid_creation(message):
    """Refuse Variable creation inside the block (message None: allow it; retracing)."""
    if message is None:
        return _ALLOWED
    from autograph.function import retracing
    return retracing.forbid_creation(message)


def _is_staged_string(leaf):
    """A string made by ag formatting (runtime.formatting: loaded only where one was made)."""
    formatting = sys.modules.get("autograph.runtime.formatting")
    return formatting is not None and isinstance(leaf, formatting.StagedString)


class _NativeFunction(Function):
    """A Function with jit_compile=True. Its `__call__` is a property giving `_entry`, which
    the interpreter calls with the arguments, no frame of ours before it: after a call with
    NumPy arguments, a function of its own for those argument types that checks them and
    runs the native code (autograph.function.native_call); else `Function.__call__`."""

    __call__ = property(operator.attrgetter("_entry"))

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self._generic = self._entry = types.MethodType(Function.__call__, self)

    def _remembered(self, args, runner):
        if self._entry is self._generic:   # the first argument types only: no churn
            from autograph.function import native_call
            self._entry = native_call.entry(self, args, runner) or self._generic

    def _forget_fast(self):
        super()._forget_fast()
        self._entry = self._generic


def _select(runner, positions, *args):
    return runner(*[args[i] for i in positions])


# this module, those with its rarely used parts and the trace cache, which calls _trace
_OWN_FILES = frozenset({__file__} | {__file__[:-len("__init__.py")] + name for name in (
    "signatures.py", "retracing.py", "trace_cache.py")})


def _user_stacklevel():
    """The warnings.warn stacklevel of the first frame outside this package's call path
    (the user's call)."""
    frame, level = sys._getframe(1), 1
    while frame is not None and frame.f_code.co_filename in _OWN_FILES:
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
        flat = nest.flatten(value)
        if not any(tt.is_tensor_leaf(leaf) for leaf in flat):
            # no arrays in it: the object itself, as Python passes it (a mutable default
            # or a list the caller keeps sees the function's appends)
            return value
        leaves = [_placeholder(graph, name, leaf, specs) for leaf in flat]
        return nest.pack_sequence_as(value, leaves)
    return _placeholder(graph, name, value, specs)


def _placeholder(graph, name, leaf, specs):
    if not tt.is_tensor_leaf(leaf):
        return leaf
    spec = next(specs)
    label = leaf.name if isinstance(leaf, tt.TensorSpec) and leaf.name else name
    return graph.placeholder(label, spec.dtype, spec.shape)


class _Package(types.ModuleType):
    """`import autograph.function.concrete as c` reads attribute `function` of `autograph`,
    which is the decorator (autograph/__init__.py), and then attribute `concrete` of that.
    So each submodule the import system sets on this package is set on the decorator too,
    and the statement finds it (as `ag.function.concrete` does once it is imported)."""

    def __setattr__(self, name, value):
        super().__setattr__(name, value)
        _mirror(self, name, value)


def _mirror(package, name, value):
    if isinstance(value, types.ModuleType) and \
            sys.modules.get(f"{package.__name__}.{name}") is value:
        setattr(function, name, value)


for _name, _value in list(globals().items()):   # the submodules imported before this line
    _mirror(sys.modules[__name__], _name, _value)
sys.modules[__name__].__class__ = _Package
