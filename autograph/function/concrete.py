"""ConcreteFunction: one trace of an `ag.function`, a graph for one input signature.

A ConcreteFunction holds the traced Graph (`graph`, what users inspect), compiles it once per
device (optimised, through runtime.codegen) and calls it with arrays. It remembers the trace
key of every parameter, so a call is checked against what was traced: arrays must fit the
TensorSpecs, Python arguments must equal the traced values (they may be left out, as may
objects traced by identity while they live, and a call
may pass the arrays alone, as TensorFlow's flat signature allows). `str(concrete)` summarises
the input parameters, the output type and the captured Variables.

Also here: the parameter binding and device choice that `Function` (autograph.function) shares.
"""

import functools
import inspect
import operator
import _thread
import weakref

import numpy as np

from autograph import gc_pause
from autograph.function import trace_type as tt
from autograph import config
from autograph.config import _busy as BUSY
from autograph.runtime import devices
from autograph.runtime.ir import nest
from autograph.runtime.ir.graph import get_default_graph
from autograph.runtime.exec.calls import (  # noqa: F401 (shared with Function; names kept here)
    FAST_PATH, GRAPHS, SCOPES, _NUMERIC_SCALARS, _first, _fresh_constants, _make_runner,
    choose_device, constant_outputs, fast_key, user_error)


_FAST_ENTRIES = 256   # per ConcreteFunction


# -- shared with Function ----------------------------------------------------------------------


def _traced_object(key):
    """The object a parameter was traced with, when it is a plain object (not a Variable)
    that still lives: a call may leave it out, as TensorFlow's concrete functions allow
    (the seeds' `train_step_1(w, x, y)` traced with an optimizer). None otherwise."""
    if isinstance(key, tt.ObjectKey) and not key.identity_only:
        return key.obj
    return None


class Signature:
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
        # the plain binder and the fast path handle signatures without *args, **kwargs and
        # keyword-only parameters (-1 otherwise)
        simple = all(p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD) for p in params)
        self.fast_arity = len(params) if simple else -1

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


def flat_arrays(values):
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


# -- ConcreteFunction -----------------------------------------------------------------------------

class ConcreteFunction:
    """One trace: a graph for one input signature, compiled once per device, callable with
    arrays (Python arguments must equal the values it was traced with)."""

    def __init__(self, function, graph, names, values, key, structure, flat_outputs, tensor_slots,
                 program=None):
        self._function_name = function.__name__
        self._sig = function._sig
        self._device = function._device
        self._outputs_mode = function._outputs
        self._jit_compile = getattr(function, "_jit_compile", None)
        self._python_fn = weakref.ref(function)
        self._graph = graph
        # from the trace cache (autograph.function.trace_cache): the graph's compiled code for the
        # cpu, (fn, indices of the outputs that are constants); the graph is then traced
        # only when asked for (`graph`), from these values
        self._program = program
        self._values = None if program is None else tuple(
            k if type(k) is tt.TensorSpec else v for k, v in zip(key, values))
        self._tracer = None if program is None else function   # (held: it traces `graph`)
        self._cache_key = None   # the trace cache's key for a trace it may keep
        self._names = names
        self._key = key
        self._watches = []
        self._lock = _thread.allocate_lock()
        self._optimized = None
        self._runners = {}
        # what the trace saw, for validation and summaries (objects weakly, via the key)
        self._param_keys = dict(zip(names, key))
        self._structure = structure
        self._flat_outputs = flat_outputs
        self._tensor_slots = tensor_slots
        self._unpack = _make_unpack(structure, flat_outputs, tensor_slots)
        # the call fast path: for a function whose parameters are all plain arrays
        self._fast = {}   # fast_key(args) -> runner
        self._arrays_only = self._sig.fast_arity == len(names) and all(
            type(k) is tt.TensorSpec for k in key)

    # -- public API ---------------------------------------------------------------------------

    @property
    def graph(self):
        """The traced graph (for a trace loaded from the trace cache: traced again now, the
        graph the trace cache's program was compiled from)."""
        if self._graph is None:   # (two threads may both trace: the same graph, one kept)
            graph, _, flat, _, _ = self._tracer._trace_graph(self._names, self._values,
                                                             self._key)
            self._flat_outputs, self._graph = flat, graph   # (in this order: see above)
        return self._graph

    @property
    def name(self):
        return self._function_name

    @property
    def structured_input_signature(self):
        """(positional, keyword) arguments as traced: TensorSpecs named after the parameters
        for arrays, the values themselves for Python arguments."""
        from autograph.function import signatures
        return signatures.structured_input_signature(self)

    @property
    def structured_outputs(self):
        """The traced result with the graph's output tensors in place of arrays."""
        self.graph   # (a trace from the trace cache: traced now)
        if nest.is_nested(self._structure):
            return nest.pack_sequence_as(self._structure, self._flat_outputs)
        return self._flat_outputs[0]   # a single value: a tensor, or a Python value

    @property
    def variables(self):
        """The Variables the graph reads or writes (those still alive)."""
        return [v for v in (r() for r in self.graph.variables) if v is not None]

    def __call__(self, *args, **kwargs):
        # The fast path: NumPy arrays of dtypes and shapes that passed the checks before, no
        # keywords, no device scope, not inside a trace. Else: the checked call below.
        try:
            if not kwargs:
                try:
                    runner = self._fast.get(fast_key(args))
                except TypeError:   # an unhashable argument
                    runner = None
                if runner is not None and (not BUSY or (not SCOPES.__dict__.get("stack")
                                                        and not GRAPHS.__dict__.get("stack")
                                                        and not config._check_numerics)):
                    return runner(*args)
            return self._call(args, kwargs)
        except Exception as exc:
            user_error(exc)
            raise

    def _call(self, args, kwargs):
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
        flat = flat_arrays(values)
        dev = choose_device(self._device, flat)
        on_numpy = all(type(a) is np.ndarray or isinstance(a, np.generic) for a in flat)
        move = not (on_numpy and dev.name == "cpu")
        runner = self._runner(dev, self._outputs_mode, move=move)
        result = runner(*flat)
        if FAST_PATH and not kwargs and self._arrays_only and len(args) == len(self._names) and \
                not config._check_numerics and \
                (on_numpy or self._device is not None) and devices.current_device() is None \
                and all(a is v and tt.is_array(a) for a, v in zip(args, values)):
            # every argument is an array that passed the checks above unchanged: the same
            # types, dtypes and shapes pass them again, so later calls may skip them
            if len(self._fast) >= _FAST_ENTRIES:
                self._fast.clear()
            self._fast[fast_key(args)] = direct_runner(runner, args)
        return result

    # (the rarely used parts live in autograph.function.signatures, imported on first use)

    def _structured_values(self, args, kwargs):
        from autograph.function import signatures
        return signatures.structured_values(self, args, kwargs)

    def _flat_values(self, args, kwargs):
        from autograph.function import signatures
        return signatures.flat_values(self, args, kwargs)

    def _inline(self, args, kwargs):
        from autograph.function import signatures
        return signatures.inline(self, args, kwargs)

    def __str__(self):
        return self._summary(with_prefix=True)

    def __repr__(self):
        return f"<ConcreteFunction {self._signature_line()} at {id(self):#x}>"

    # -- internals ----------------------------------------------------------------------------

    def _signature_line(self):
        from autograph.function import signatures
        return signatures.signature_line(self)

    def _check(self, name, value, key):
        from autograph.function import signatures
        return signatures.check(self, name, value, key)

    def _graph_to_run(self):
        if self._optimized is None:
            try:
                from autograph.runtime.exec import optimize
            except ImportError:
                self._optimized = self.graph
            else:
                self._optimized = optimize.optimize(self.graph)
        return self._optimized

    def _runner(self, dev, outputs_mode, move):
        """A callable(*flat arrays) -> structured result on `dev` (built once per device)."""
        numerics = config._check_numerics    # (its code is compiled apart: numerics.py)
        cache_key = (dev.name, outputs_mode, move, numerics)
        runner = self._runners.get(cache_key)
        if runner is not None and runner.__device__ is dev:
            return runner
        with self._lock, gc_pause.paused():   # compiling: see autograph.gc_pause
            if self._program is not None and dev.name == "cpu" and not numerics:
                compiled, consts = self._program   # (native code for jit_compile=True)
            else:
                graph = self._graph_to_run()
                consts = constant_outputs(graph)
                if self._jit_compile and not numerics:   # native code (Numba); None and
                    # False, or check_numerics (native code has no tests): codegen
                    from autograph.runtime.exec import native
                    compiled = native.compile_graph(graph, dev, self._function_name)
                else:
                    from autograph.runtime.exec import codegen
                    compiled = codegen.compile_graph(graph, dev, numerics)
                if self._cache_key is not None and dev.name == "cpu" and not numerics:
                    from autograph.function import trace_cache
                    trace_cache.store(self, compiled, consts)
            fresh = _fresh_constants(compiled, consts, dev)
            runner = _make_runner(fresh, self._unpack, dev, outputs_mode, move,
                                  self._function_name)
            runner.__device__ = dev
            direct = getattr(compiled, "__direct__", None)   # native code: see direct_runner
            if direct is not None and fresh is compiled and not move and \
                    (outputs_mode != "host" or dev.to_host is None):
                runner.__direct__ = _direct(direct, self._unpack,
                                            getattr(compiled, "__inline__", None))
            self._runners[cache_key] = runner
            return runner

    def _summary(self, with_prefix):
        from autograph.function import signatures
        return signatures.summary(self, with_prefix)


# Python leaves of these exact types are mutable containers NumPy-free code makes fresh in
# each call (`return {1, 2}`): each call gets its own shallow copy, like the lists around it.
_COPIED_LEAVES = {set: set, bytearray: bytearray}


def _make_unpack(structure, flat_outputs, tensor_slots):
    """flat graph outputs -> the structure the Python function returned, built anew by every
    call: lists, tuples, dicts, namedtuples and dataclasses are fresh objects each time (as
    the Python function would return them), so a caller mutating one result never changes
    the next; graph outputs fill the tensor leaves; other Python leaves are the values the
    trace returned (sets and bytearrays copied, other objects shared as they are).

    The common shapes get a builder of their own: one array (`_first`), a flat tuple or
    list of arrays (`tuple`/`list` of the outputs), so plain array results stay as fast."""
    if not nest.is_nested(structure):
        if tensor_slots:
            return _first
        copy = _COPIED_LEAVES.get(type(structure))
        if copy is not None:
            return lambda outs: copy(structure)
        return lambda outs: structure   # an immutable Python value or an object
    n = len(flat_outputs)
    if len(tensor_slots) == n and type(structure) in (tuple, list) and \
            len(structure) == n and not any(nest.is_nested(s) for s in structure):
        return tuple if type(structure) is tuple else list   # outs is a fresh tuple per run
    where = {flat_i: k for k, flat_i in enumerate(tensor_slots)}
    leaves = iter(range(n))

    def leaf(value):
        i = next(leaves)
        if i in where:
            return operator.itemgetter(where[i])
        copy = _COPIED_LEAVES.get(type(value))
        if copy is not None:
            return lambda outs: copy(value)
        return lambda outs: value

    build = _builder(structure, leaf)
    return build


def _builder(s, leaf):
    """fn(outs) -> `s` rebuilt from fresh containers (see _make_unpack); `leaf(value)` gives
    the builder of each leaf, in flatten order."""
    if not nest.is_nested(s):
        return leaf(s)
    kids = [_builder(k, leaf) for k in nest.children(s)]
    kind = type(s)
    if kind is tuple:
        return lambda outs: tuple([k(outs) for k in kids])
    if kind is list:
        return lambda outs: [k(outs) for k in kids]
    if kind is dict:   # children come in sorted key order; the result keeps the dict's order
        by_key = dict(zip(nest._sorted_keys(s), kids))
        pairs = [(key, by_key[key]) for key in s]
        return lambda outs: {key: k(outs) for key, k in pairs}
    return lambda outs: nest.rebuild(s, [k(outs) for k in kids])


def _direct(make, unpack, inline=None):
    """The runner of native code for calls whose scalar arguments are NumPy scalars: the
    dispatcher called with them as given, the only output returned without a tuple. With
    `__inline__(params, args)` on it: that body as lines for a function of its own
    (native.py's `inline`, native_call.py)."""
    if unpack is _first:
        direct = make(scalars_as_arrays=False, first_only=True)
    else:
        run = make(scalars_as_arrays=False, first_only=False)

        def direct(*arrays):
            return unpack(run(*arrays))
    direct.__native_direct__ = True   # (tests ask which runner a fast path keeps)
    if inline is not None:
        direct.__inline__ = functools.partial(_inline, inline, unpack)
    return direct


def _inline(inline, unpack, params, args):
    lines, ns = inline(params, args, first_only=unpack is _first)
    if unpack is not _first:   # the body returns the outputs' tuple: the structure instead
        assert lines[-1].startswith("return ")
        lines[-1] = f"return unpack({lines[-1][len('return '):]})"
        ns["unpack"] = unpack
    return lines, ns


def direct_runner(runner, args):
    """What a call fast path keeps for these NumPy arguments (in placeholder order): the
    runner's direct form (native code, `_direct`) when no argument is a 0-d array (those
    go in as `x[()]`), else the runner."""
    direct = getattr(runner, "__direct__", None)
    if direct is None or any(type(a) is np.ndarray and a.ndim == 0 for a in args):
        return runner
    return direct


