"""`jit_compile=True`: a graph compiled to machine code by Numba, cached on disk.

lower.py writes the graph as the Python source of one `@njit(cache=True)`
function. Numba's on-disk cache needs a real source file, so the source is written to
`<cache dir>/native/ag_<hash>.py`, named by a hash of the source itself (and of Numba's and
autograph's versions): a second process that traces the same function writes the same
source, finds the file and Numba's compiled code next to it, and does not compile again.

The cache dir is the disk cache's (`$AUTOGRAPH_CACHE_DIR`, else `$XDG_CACHE_HOME/autograph`,
else `~/.cache/autograph`), used only while it is this user's alone: Numba keeps its
compiled code beside the module as pickles, so a directory others may write (or the disk
cache turned off) gets a private folder of this process instead. Loading is safe against a stale or foreign file: the file is executed
only as the source this process generated (it is compiled from the string in memory, under
the file's name, and rewritten when its text differs), so nothing but autograph's own code
runs from the cache dir; Numba checks its compiled code against the file's timestamp.

The caller (ConcreteFunction) gets `fn(*arrays) -> tuple of outputs` like codegen's. The
first call of each argument type compiles (or loads from the disk cache) and logs the time
at verbosity 1; `stats()` counts compilations and cache hits (tests read it).
"""

import functools
import hashlib
import os
import sys
import tempfile
import threading
import time
import types
import weakref

import numpy as np

from autograph.frames import GLUE_PREFIX
from autograph.log import log
from autograph.runtime.exec.calls import unwrapped
from autograph.runtime.exec.codegen_shapes import box as _box, boxed as _boxed
from autograph.source import cache_auth, disk_cache

__all__ = ["compile_graph", "source_of", "stats", "NativeLoweringError", "available"]


class NativeLoweringError(NotImplementedError):
    """`jit_compile=True` met an operation it cannot compile to native code."""


_cache = weakref.WeakKeyDictionary()      # graph -> compiled runner
_modules = {}                             # source hash -> the njit dispatcher
_lock = threading.Lock()
_stats = {"compiled": 0, "cache_hits": 0, "lowered": 0}


def available():
    """True when Numba can be imported (the `native` extra is installed)."""
    try:
        import numba  # noqa: F401
    except ImportError:
        return False
    return True


def stats():
    """Counts in this process: graphs lowered, signatures compiled by Numba, and loaded
    from its disk cache instead."""
    return dict(_stats)


def cache_dir():
    """The disk cache's `native/` folder when the disk cache is on and its directory is this
    user's alone (`source.cache_auth`: Numba's cache beside the modules holds pickles, which
    only this user may have written), else a private folder of this process, removed at
    exit (the cache off, `AUTOGRAPH_CACHE_DIR=off`, or a directory refused)."""
    root = disk_cache.directory()
    if root is not None and cache_auth.directory_ok(root, create=True):
        folder = os.path.join(root, "native")
        if cache_auth.subfolder_ok(folder):
            return folder
    return _private_dir()


@functools.lru_cache(maxsize=None)
def _private_dir():
    import atexit
    import shutil
    folder = tempfile.mkdtemp(prefix="autograph-native-")   # 0700, a new name
    atexit.register(shutil.rmtree, folder, True)
    return folder


def compile_graph(graph, device=None, function_name=None):
    """`fn(*arrays) -> tuple of arrays` running `graph` as native code (cached)."""
    if device is not None and getattr(device, "name", "cpu") != "cpu":
        raise NativeLoweringError(
            f"jit_compile=True compiles for the CPU only; this call runs on device "
            f"{device.name!r}. Use jit_compile=None there.")
    fn = _cache.get(graph)
    if fn is None:
        with _lock:
            fn = _cache.get(graph)
            if fn is None:
                fn = _cache[graph] = _build(graph, function_name or graph.name)
    return fn


def source_of(graph):
    """The generated Numba source for `graph`."""
    return compile_graph(graph).__source__


def _import_numba():
    try:
        import numba
    except ImportError:
        raise ImportError("jit_compile=True needs Numba: pip install 'autograph[native]' "
                          "(or pip install numba)") from None
    return numba


def _build(graph, function_name):
    numba = _import_numba()
    from autograph import __version__ as ag_version
    from autograph.runtime.exec.native.lower import Lowering   # (not for a loaded recipe)
    lowering = Lowering(graph, "native_" + _identifier(graph.name))
    source = lowering.build()
    _stats["lowered"] += 1
    digest = hashlib.sha256(f"{numba.__version__}\0{ag_version}\0{source}".encode()).hexdigest()
    kernels = [m for m, _ in lowering.kernels]
    plan = Plan.of(graph, lowering)
    run = _runner(source, digest, lowering.name, kernels, plan, function_name)
    if not lowering.variables:   # what the trace cache keeps to load it in a later process
        run.__recipe__ = {"source": source, "digest": digest, "name": lowering.name,
                          "kernels": [(m.module_name, m.file_name, m.text) for m in kernels],
                          "plan": plan.data()}
    return run


def load_recipe(recipe, function_name):
    """The runner `_build` made, from its `__recipe__` (the trace cache: a later process
    runs the trace's native code without tracing and lowering its graph again). The
    recipe's code is executed, so it must be what this user's autograph wrote
    (trace_cache reads only signed entries)."""
    _import_numba()
    kernels = [_KernelText(*k) for k in recipe["kernels"]]
    with _lock:
        run = _runner(recipe["source"], recipe["digest"], recipe["name"], kernels,
                      Plan.from_data(recipe["plan"]), function_name)
    run.__recipe__ = recipe
    return run


def _runner(source, digest, name, kernels, plan, function_name):
    """The runner of the njit function `name` that `source` defines (loaded once per
    process, by `digest`), after the fused kernels' modules (`kernels`) it imports; the
    caller holds `_lock`."""
    dispatcher = _modules.get(digest)
    if dispatcher is None:
        dispatcher = _modules[digest] = _load(source, digest, name, kernels)
    # what source_of shows: the fused kernels' modules (kernel_modules.py), then the function
    shown = "".join(f"# {m.file_name}\n{m.text}\n" for m in kernels) + source
    return _Runner(plan, dispatcher, shown, function_name).make()


class _KernelText:
    """A fused kernel's module as a recipe names it (kernel_modules.KernelModule's fields)."""

    def __init__(self, module_name, file_name, text):
        self.module_name, self.file_name, self.text = module_name, file_name, text


class Plan:
    """What the Python around a native function needs of its graph and lowering: which
    inputs are scalars (`in_scalar`), each output's source (`outs`: the index of the input
    it returns as it is, or None) and scalar dtype (None: an array), whether the function
    returns one value bare (`single`), the constants it is passed (`const_args`), the
    Variables it reads, writes in place and assigns (lowering's `variables`, `inplace`,
    `assigned`), the nodes behind the lines of each generated file (`made_by`, for typing
    errors) and the graph's node count (logged)."""

    def __init__(self, in_scalar, outs, single, const_args, variables=None, inplace=(),
                 assigned=(), made_by=None, nodes=0):
        self.in_scalar, self.outs, self.single = in_scalar, outs, single
        self.const_args = const_args
        self.variables, self.inplace, self.assigned = variables or {}, inplace, assigned
        self.made_by, self.nodes = made_by or {}, nodes

    @classmethod
    def of(cls, graph, lowering):
        passed = {id(t): i for i, t in enumerate(graph.inputs)}
        outs = [(passed.get(id(unwrapped(t))), t.dtype.str if t.shape == () else None)
                for t in graph.outputs]
        made_by = {"": lowering.made_by}   # "": the function's own file
        made_by.update((m.file_name, m.made_by) for m, _ in lowering.kernels)
        return cls([t.shape == () for t in graph.inputs], outs, lowering.single,
                   [value for _, value in lowering.const_args], lowering.variables,
                   lowering.inplace, lowering.assigned, made_by,
                   sum(1 for _ in graph.walk()))

    def data(self):
        """The plan as marshal data (a plan without Variables: they live in this process)."""
        consts = [(v.dtype.str, v.shape, v.tobytes()) for v in self.const_args]
        return {"in_scalar": self.in_scalar, "outs": self.outs, "single": self.single,
                "consts": consts, "nodes": self.nodes}

    @classmethod
    def from_data(cls, d):
        consts = [np.frombuffer(b, dtype).reshape(shape) for dtype, shape, b in d["consts"]]
        return cls(list(d["in_scalar"]), [tuple(o) for o in d["outs"]], d["single"], consts,
                   nodes=d["nodes"])


def _identifier(name):
    return "".join(c if c.isalnum() else "_" for c in name)


def _load(source, digest, name, kernels=()):
    """The njit dispatcher `name` defined by `source`, from a file in the cache dir named by
    `digest` (written when missing or different; executed from the string in memory),
    after the shared library and the fused kernels' modules (`kernels`) it imports.
    (fused_kernel.py loads the chains of code without jit_compile through it too.)"""
    if "from autograph_native_lib_" in source:
        from autograph.runtime.exec.native import library
        library.ensure_loaded(source)
    if kernels:
        from autograph.runtime.exec.native import kernel_modules
        kernel_modules.ensure_loaded(kernels)
    module = _load_module(source, f"autograph_native_{digest[:32]}", f"ag_{digest[:32]}.py")
    return module.__dict__[name]


def _load_module(source, module_name, file_name):
    """The module `module_name` executing `source` under `<cache dir>/<file_name>` (the file
    written when missing or different; the code compiled from the string in memory)."""
    directory = cache_dir()
    os.makedirs(directory, mode=0o700, exist_ok=True)
    path = os.path.join(directory, file_name)
    try:
        with open(path, encoding="utf-8") as f:
            same = f.read() == source
    except OSError:
        same = False
    if not same:   # atomically: a reader never sees half a file
        fd, tmp = tempfile.mkstemp(dir=directory, suffix=".tmp")
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(source)
        os.replace(tmp, path)
    # a module of its own in sys.modules: Numba's disk cache finds the function's globals
    # by the module's name when it loads compiled code
    module = types.ModuleType(module_name)
    module.__file__ = path
    sys.modules[module.__name__] = module
    exec(compile(source, path, "exec"), module.__dict__)
    return module


class _Runner:
    """Builds the Python function that calls the dispatcher: scalars in as `x[()]`,
    constants and Variable values appended, scalar results back as NumPy scalars of the
    graph's dtypes, assigned Variables written back."""

    def __init__(self, plan, dispatcher, source, function_name):
        self.plan, self.dispatcher = plan, dispatcher
        self.source, self.function_name = source, function_name

    def make(self):
        """`run(*arrays) -> tuple of outputs`, plus on it `__direct__(scalars_as_arrays,
        first_only)`: the same run specialized for a call fast path (see `direct`), and
        `__inline__(params, args, first_only)`: its body for a jit call's entry (`inline`)."""
        ns = {"native": None, "np": np}
        run = self._python(ns, scalars_as_arrays=True, first_only=False)
        dispatcher = self.dispatcher

        def first_call(*args):
            # the first call compiles (or loads from the disk cache), timed and logged;
            # later calls go straight to the dispatcher (Numba compiles other types itself)
            self.compile_for(args)
            ns["native"] = dispatcher
            return dispatcher(*args)
        ns["native"] = first_call
        run.__source__ = self.source
        run.__native__ = dispatcher
        run.__direct__ = functools.partial(self.direct, ns)
        run.__inline__ = functools.partial(self.inline, ns)
        return run

    def direct(self, ns, scalars_as_arrays, first_only):
        """`run` for a call fast path that knows its argument types: scalar inputs given as
        NumPy scalars need no `x[()]` (scalars_as_arrays=False: every scalar input is one),
        and a caller that wants the only output gets it without a tuple (first_only). The
        dispatcher is called with the arguments as given; Numba checks their types."""
        if first_only and len(self.plan.outs) != 1:
            raise ValueError("first_only needs a graph with one output")
        return self._python(ns, scalars_as_arrays, first_only)

    def inline(self, ns, params, args, first_only):
        """(lines, namespace): `direct`'s body for arguments named `params`, for a caller
        that puts it in a function of its own (native_call.py) whose globals are the
        namespace, compiled for `args` first. The caller checked those arguments' exact
        types: when every value passed is a scalar (the arguments NumPy scalars, Variables
        of shape ()), the body calls the compiled overload's entry point and skips the
        dispatcher's type resolution; else the dispatcher."""
        ns = dict(ns, native=self.dispatcher)
        lines = self._body(ns, params, False, first_only)
        values = self._passed(ns, args)
        self.compile_for(values)
        if all(isinstance(a, np.generic) for a in args) and all(
                attrs.get("shape") == () for _, _, attrs in self.plan.variables.values()):
            numba = _import_numba()
            overload = self.dispatcher.overloads.get(tuple(numba.typeof(a) for a in values))
            ns["native"] = getattr(overload, "entry_point", None) or self.dispatcher
        return lines, ns

    def _passed(self, ns, args):
        """What the body passes to native code now: `args`, constants, Variables' values."""
        values = list(args) + [ns[f"c{i}"] for i in range(len(self.plan.const_args))]
        if self.plan.variables:
            from autograph.runtime import variables as var_module
            for _, ref, attrs in self.plan.variables.values():
                value = var_module._deref(ref, attrs["name"], self.function_name)._value
                values.append(value[()] if attrs.get("shape") == () else value)
        return values

    def _python(self, ns, scalars_as_arrays, first_only):
        params = [f"a{i}" for i in range(len(self.plan.in_scalar))]
        lines = [f"def run({', '.join(params)}):"]
        lines += ["    " + line for line in self._body(ns, params, scalars_as_arrays, first_only)]
        local = {}   # the function's globals are `ns`, shared by every variant
        exec(compile("\n".join(lines) + "\n", f"{GLUE_PREFIX}: native {self.function_name}>",
                     "exec"), ns, local)
        return local["run"]

    def _body(self, ns, params, scalars_as_arrays, first_only):
        low = self.plan
        args = [f"{p}[()]" if scalar and scalars_as_arrays else p
                for p, scalar in zip(params, low.in_scalar)]
        for i, value in enumerate(low.const_args):
            ns[f"c{i}"] = value[()] if value.ndim == 0 else np.array(value)
            args.append(f"c{i}")
        lines = []
        variables = list(low.variables.values())
        var_ids = list(low.variables)
        if variables:
            from autograph.runtime import variables as var_module
            ns["deref"] = var_module._deref
            for i, (vid, (_, ref, attrs)) in enumerate(zip(var_ids, variables)):
                ns[f"vref{i}"], ns[f"vname{i}"] = ref, attrs["name"]
                lines.append(f"v{i} = deref(vref{i}, vname{i}, {self.function_name!r})")
                shape = attrs.get("shape")
                if shape != () and vid in low.inplace:   # written in place (inplace.py)
                    from autograph.runtime.exec.native.inplace import owned
                    ns["owned"] = owned
                    args.append(f"owned(v{i}._value)")
                else:
                    args.append(f"v{i}._value[()]" if shape == () else f"v{i}._value")
        # the call holds its Variables' locks (in one order: no deadlock) from reading
        # their values to writing the new ones back: another thread then never takes an
        # array that this call writes in place (inplace.py; readers lock too), and an
        # update on another thread is never lost between the read and the write-back
        locked = [f"v{i}" for _, i in sorted((vid, i) for i, vid in enumerate(var_ids))]
        for v in locked:
            lines.append(f"{v}._lock.acquire()")
        if locked:
            lines.append("try:")
        body_start = len(lines)
        lines.append(f"r = native({', '.join(args)})")
        scalar0 = bool(low.outs) and low.outs[0][1] is not None   # (no outputs: Variables)
        bare = first_only and low.single and not scalar0
        if low.single and not bare and not scalar0:
            lines.append("r = (r,)")
        outs = []
        for i, (arg, scalar) in enumerate(low.outs):
            if arg is not None:   # an argument returned as it is: the same object, as
                outs.append(params[arg])   # the interpreter gives (0-d arrays too)
            elif scalar is not None:   # Numba returns a Python scalar: the graph's NumPy scalar
                outs.append(_boxed(ns, f"t{i}", np.dtype(scalar),
                                   "r" if low.single else f"r[{i}]"))
            else:
                outs.append(f"r[{i}]")
        k = len(low.outs)
        order = [next(j for j, v in enumerate(low.variables) if v == vid)
                 for vid in low.assigned]
        for n, j in enumerate(order):
            attrs = variables[j][2]
            if attrs["shape"] == ():   # a NumPy scalar, as the executors' kernels store
                value = _boxed(ns, f"vd{j}", np.dtype(attrs["dtype"]), f"r[{k + n}]")
                lines.append(f"v{j}._value = {value}")
            else:
                lines.append(f"v{j}._value = r[{k + n}]")
        if locked:
            lines[body_start:] = ["    " + line for line in lines[body_start:]]
            lines.append("finally:")
            lines += [f"    {v}._lock.release()" for v in reversed(locked)]
        if first_only:
            bare = bare and outs[0] == "r[0]"
            lines.append("return r" if bare else f"return {outs[0]}")
        else:
            lines.append(f"return ({''.join(o + ', ' for o in outs).rstrip()})")
        return lines

    def compile_for(self, args):
        """Compile (or load) the dispatcher for these arguments, timing it."""
        numba = _import_numba()
        sig = tuple(numba.typeof(a) for a in args)
        d = self.dispatcher
        if sig in d.overloads:
            return
        hits = sum(d.stats.cache_hits.values())
        start = time.perf_counter()
        try:
            d.compile(sig)
        except numba.core.errors.TypingError as exc:
            raise self.typing_error(exc) from None
        ms = (time.perf_counter() - start) * 1e3
        hit = sum(d.stats.cache_hits.values()) > hits
        _stats["cache_hits" if hit else "compiled"] += 1
        log(1, "jit_compile: %s %s in %.1f ms (%d nodes)", self.function_name,
            "loaded from the disk cache" if hit else "compiled to native code", ms,
            self.plan.nodes)

    def typing_error(self, exc):
        """Numba's typing error, naming the node (and the user's line) of the innermost
        generated line it points at. Numba names the failing line first, then the lines
        that called it (a fused loop's line before the graph's line calling the loop); only
        lines of the generated file count (`File "ag_....py", line 12` or `ag_....py (12)`),
        never line numbers of Numba's own files that the message may quote."""
        import re
        message = str(exc)
        files = dict(self.plan.made_by)
        files[os.path.basename(self.dispatcher.py_func.__code__.co_filename)] = \
            files.pop("", [])
        made_by = None
        pattern = "(" + "|".join(map(re.escape, files)) + r')(?:", line | \()(\d+)'
        for m in re.finditer(pattern, message):
            lines, line = files[m.group(1)], int(m.group(2)) - 1
            if 0 <= line < len(lines) and lines[line]:
                made_by = lines[line]
                break
        first = message.strip().splitlines()[0] if message.strip() else "typing failed"
        if made_by is None:
            return NativeLoweringError(f"jit_compile=True: Numba cannot compile "
                                       f"{self.function_name!r}: {first}")
        from autograph import errors
        name, op, origin = made_by
        where = errors.describe_origin(origin) if origin is not None else None
        return NativeLoweringError(
            f"jit_compile=True: cannot compile operation `{op}` (node {name!r}"
            + (f", made at {where}" if where else "") + f") to native code: Numba: {first}")
