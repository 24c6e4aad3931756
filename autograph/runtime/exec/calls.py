"""How a compiled graph is called from Python: the pieces `ConcreteFunction`, `Function` and
a loaded model's functions (saved_model/restored.py) share.

- the call fast paths' key (`fast_key`) and the thread-local checks they read (`FAST_PATH`,
  `SCOPES`, `GRAPHS`);
- which device runs a call (`choose_device`);
- the runner around compiled code: arguments placed on the device, outputs unpacked
  (`_make_runner`), constant outputs copied so each call gets a writable array
  (`constant_outputs`, `_fresh_constants`);
- `user_error`: an exception leaving a call shows the user's lines.

They live apart from autograph.function (which re-exports them from concrete.py) so that
loading and calling a saved model does not import the tracing machinery.
"""

import _thread

import numpy as np

from autograph.runtime import devices
from autograph.runtime.ir import graph as graph_module


# The call fast paths (here and in autograph.function) ask "is a `with ag.device(...)` scope
# open, or a graph being built, on this thread?" by reading the runtime's thread-local
# stacks through their __dict__ (a missing thread-local attribute is slow to look up). If
# the runtime ever keeps them differently, the fast paths are simply off (every call takes
# the general path, which asks the public API).
SCOPES = getattr(devices, "_scope", None)
GRAPHS = getattr(graph_module, "_state", None)
FAST_PATH = isinstance(SCOPES, _thread._local) and isinstance(GRAPHS, _thread._local)


# NumPy's numeric scalar types (np.int64, np.float32, np.bool_, ...): each has one dtype
# (not timedelta64, an integer type whose dtype carries a unit)
_NUMERIC_SCALARS = frozenset(t for t in np.sctypeDict.values()
                             if issubclass(t, (np.bool_, np.number))
                             and not issubclass(t, np.timedelta64))


def fast_key(args):
    """The fast paths' key: per argument its type, then dtype and shape for an array or the
    value and None for a Python value. Only keys of arrays and Python primitives are ever
    stored, so other objects (whose key parts mean nothing) simply miss. getattr with a
    default does not raise internally, so this stays cheap for Python values too. One
    NumPy numeric scalar is keyed by its type alone (it fixes dtype and shape; a bare type
    never equals a tuple key)."""
    if len(args) == 1:
        a = args[0]
        if type(a) in _NUMERIC_SCALARS:   # its type fixes its dtype and shape: the key
            return type(a)
        return (type(a), getattr(a, "dtype", a), getattr(a, "shape", None))
    if len(args) == 2:
        a, b = args
        return (type(a), getattr(a, "dtype", a), getattr(a, "shape", None),
                type(b), getattr(b, "dtype", b), getattr(b, "shape", None))
    return tuple([x for a in args
                  for x in (type(a), getattr(a, "dtype", a), getattr(a, "shape", None))])


def choose_device(explicit, flat_inputs):
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


def user_error(exc):
    """Make an exception leaving an ag.function / ConcreteFunction call speak of the user's
    code: its traceback starts at the user's call, converted code and a failing graph node
    show as the user's lines, autograph's own frames are hidden (unless
    ag.config.show_internal_frames(True)). See autograph.source.origin.user_traceback."""
    try:
        from autograph.source import origin
    except ImportError:   # the front end is not part of this build: tracebacks as they are
        return
    origin.user_traceback(exc)


def _first(outs):
    return outs[0]


def unwrapped(t):
    """`t` without Identity nodes around it (an unoptimised graph, as a saved model's
    first call runs it, may return the Identity of a constant or an argument)."""
    while t.node.op == "Identity" and t.node.inputs:
        t = t.node.inputs[0]
    return t


def constant_outputs(graph):
    """The places of `graph`'s outputs that are constant arrays (not 0-d): see
    _fresh_constants."""
    return [i for i, t in enumerate(graph.outputs)
            if unwrapped(t).node.op == "Const" and t.shape != () and t.shape is not None]


def _fresh_constants(compiled, consts, dev):
    """`compiled`, copying the outputs at `consts`, constants of the graph (`return
    np.zeros(3)`): the graph holds one read-only array for them, while the Python function
    makes a new writable array in every call. Graphs without such outputs run as they are."""
    if not consts:
        return compiled
    xp = dev.xp

    def run(*arrays):
        outs = list(compiled(*arrays))
        for i in consts:
            outs[i] = xp.asarray(outs[i], copy=True)
        return tuple(outs)
    return run


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

    activate = dev.activate  # None, or a context making the device current (CuPy's GPU N)

    def run(*arrays):
        if move:
            arrays = [devices.place(a, dev, f"an argument of {name}") for a in arrays]
        if activate is None:
            outs = compiled(*arrays)
        else:
            with activate:
                outs = compiled(*arrays)
        if to_host is not None:
            outs = [to_host(o) for o in outs]
        return unpack(outs)
    return run
