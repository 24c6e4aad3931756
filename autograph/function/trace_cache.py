"""A persistent cache of traces: a later process loads the compiled code of a trace instead of
converting, tracing, optimizing and compiling the function again.

A fresh process's first call of a small function spends ~7 ms in autograph: loading the
converted code (the disk cache of converted source, autograph.source.disk_cache), tracing it,
optimizing the graph and generating its Python, and importing the ~20 modules that do it.
What comes out is one small Python function per trace. This cache keeps that function's
source, its compiled code and what its globals stand for, so the next process runs ~20 lines
without compiling them (issue 16: the first call in a fresh process).

**A trace is kept only when it is a function of what the key names, and tracing it did
nothing a later process would miss.** Every trace is checked; nothing is kept on a guess:

- the function: a plain `def` with a source file (the disk cache's key: the file's text, the
  function's line, names and flags, autograph's and Python's versions), in an ag.function
  with autograph on, no device, not a method; NumPy's version; with `jit_compile=True`,
  Numba's; in a checkout (not an installed package) the file holds the size and time of
  each of autograph's modules the tracing process had imported, and a load checks them;
- or a gradient of one: a function `ag.value_and_grad` or `ag.grad` made of such a `def`
  (or of another gradient), named by the transform, its options (`argnums`, `has_aux`,
  `checkpoints`) and the function it differentiates (function/transforms.py: only
  functions of autodiff's own code are taken for gradients);
- the arguments: arrays (dtype and shape) and Python primitives (type and value);
- each global, closure or builtin name the function's code reads: a module of NumPy, math,
  cmath or autograph, an attribute of one of those by name (`from numpy import where`), or
  an immutable value (None, bools, numbers, strings, bytes, NumPy scalars and dtypes, tuples
  and frozensets of them), whose value is part of the key. A name bound to anything else (a
  function of the user's, a list, a dict, an object) keeps the trace out: its contents can
  change between processes without changing the key;
- every call the converted code made while tracing was to a graph operation, a NumPy
  function (but those reading or writing files or NumPy's global state), a method of a
  tensor or of a Python value, a pure builtin (`len`, `range`, `isinstance`, ...), a
  function defined inside the traced one, or one the key names (a gradient calls the
  function it differentiates). `print`, `open`, `id`, anything else: not kept,
  because Python's side effects run when tracing (TensorFlow's rule), and a process that
  loads the trace would skip them (examples/fizzbuzz.py prints "Tracing ..." every run);
- tracing made no Variables and warned nothing;
- every global of the generated code is NumPy, a function reached by module and name, a
  constant array or scalar, or a plain value.

A loaded trace has no graph until one is asked for (`concrete.graph`, gradients, saving,
another device): the function is traced then, as it would have been. It counts as a trace
(`experimental_get_tracing_count`) like any other.

The file (`<key>.agt` in the disk cache's directory, same switches; `AUTOGRAPH_TRACE_CACHE=0`
turns off this cache alone) is marshal data:
generated source and its compiled code (in this interpreter's bytecode format, which the key
names), numbers, strings and array bytes. A `jit_compile=True` trace's entry holds instead
its native recipe (native/jit.py `load_recipe`): the generated Numba module's source, its
fused kernels' modules and what the Python around the call needs (which arguments are
scalars, the outputs' dtypes, the constants); Numba's own cache beside those modules keeps
the machine code, so a later process neither traces, lowers nor compiles. A trace reading
Variables is not kept (they live in the process). Like the disk cache's converted source
(and Python's own .pyc files) its code is compiled and run, so it is read only through
disk_cache.read: from a directory no one else may write, signed with this user's key
(autograph.source.cache_auth); a file anyone else wrote or changed is ignored.
"""

import _frozen_importlib_external as _bytecode
import collections
import functools
import itertools
import marshal
import os
import sys
import types

import numpy as np

from autograph import errors
from autograph.config import log
from autograph import frames
from autograph.function import trace_type as tt
from autograph.function.concrete import ConcreteFunction
from autograph.runtime.ir import nest
from autograph.runtime.ir.graph import GradientOrigin
from autograph.source import disk_cache

FORMAT = 3          # 2: loop records for run-time errors; 3: the entry holds the compiled code
_PLACEHOLDER = "<autograph trace cache>"
_SUFFIX = ".agt"
_MAX_CONSTANT_BYTES = 1 << 22   # a larger constant array keeps the trace out of the cache


def trace(function, names, values, key):
    """The ConcreteFunction of Function `function` for trace key `key`: loaded when the
    cache has it, else traced (and stored once compiled, if it may be)."""
    try:
        k, conversion = cache_key(function, names, key)
    except _NotKept as why:
        log(2, "trace cache: %s is traced each process: %s", function.__name__, why)
        k = None
    if k is None:   # traced outside the handler: its errors carry no _NotKept as context
        return function._trace(names, values, key)
    concrete = _load(function, k, names, values, key)
    if concrete is not None:
        function._traced(names, key, "loaded the trace of")
        return concrete
    chain = _chain(function._python_function)   # a gradient: its code is autograph's
    if len(chain) == 1 and function._traceable() is function._python_function:
        log(2, "trace cache: %s is traced each process: it could not be converted",
            function.__name__)    # (it warned, saying why)
        return function._trace(names, values, key)
    from autograph.operators import calls
    record = _Record(chain)
    before, calls._state.watch = calls._state.watch, record.watch
    try:
        concrete = function._trace(names, values, key)
    finally:
        calls._state.watch = before
    if record.pure is not True:
        log(2, "trace cache: %s is traced each process: tracing %s", function.__name__,
            "warned" if record.pure is None else f"called {record.pure!r}")
    elif concrete.graph.variables:
        log(2, "trace cache: %s is traced each process: it made Variables", function.__name__)
    else:
        concrete._cache_key = (k, conversion)   # stored once compiled (ConcreteFunction._runner)
    return concrete


# -- the key ------------------------------------------------------------------------------------

def cache_key(function, names, key):
    """(the file key of this trace, the disk cache's key of its conversion); raises _NotKept
    saying why a trace may not be cached."""
    if disk_cache.directory() is None:
        raise _NotKept("the disk cache is off")
    if os.environ.get("AUTOGRAPH_TRACE_CACHE", "").strip().lower() in ("0", "off", "false", "no"):
        raise _NotKept("AUTOGRAPH_TRACE_CACHE is off")
    parts, conversion = _function_parts(function._python_function)
    parts += [str(FORMAT), _MAGIC, np.__version__, str(sys.flags.optimize), _checkout(),
              str(function._outputs), ",".join(names), _native_version(function)]
    for name, k in zip(names, key):
        described = _describe_key(k)
        if described is None:
            raise _NotKept(f"argument {name} is not an array or a Python primitive")
        parts.append(described)
    h = disk_cache._Hash()
    for part in parts:
        h.update(part.encode("utf-8", "surrogatepass") + b"\0")
    return h.hexdigest(), conversion


def _function_parts(fn):
    """(what names plain function `fn` across processes, the disk cache's key of its
    conversion); a gradient of one (function/transforms.py) is named by the transform,
    its options and the function it differentiates."""
    transform = _transform(fn)
    if transform is not None:
        name, f, *options = transform
        described = [_describe_value(o) for o in options]
        if None in described:
            raise _NotKept(f"{name} has options that cannot be named")
        parts, conversion = _function_parts(f)
        return [f"{name}({','.join(described)})"] + parts, conversion
    if type(fn) is not types.FunctionType:
        raise _NotKept("not a plain function")
    base = disk_cache.key(fn)
    if base is None:
        raise _NotKept("a lambda, or no source file")
    parts = [base]
    code, closure = fn.__code__, dict(zip(fn.__code__.co_freevars, fn.__closure__ or ()))
    if _acts_outside(code, bool(code.co_freevars)):
        raise _NotKept("it imports, or writes a global or nonlocal variable")
    for name in disk_cache._names(code):
        if name in _EFFECT_NAMES or name.startswith("set") and name != "set":
            raise _NotKept(f"it reads {name!r}")   # (maybe an attribute: np.save, a setter)
    for name in sorted(_global_names(code) | set(code.co_freevars)):
        value = disk_cache.bound_value(fn, closure, name)
        if name not in closure and name not in fn.__globals__ and \
                value is not disk_cache.EMPTY and not _pure_builtin(name, value):
            # print, open, id, ...: called directly, unseen by `_Record`
            raise _NotKept(f"it reads the builtin {name}")
        described = _describe_value(value)
        if described is None:
            raise _NotKept(f"{name} is a {type(value).__name__} (it could change between "
                           "processes without changing the key)")
        parts.append(f"{name}={described}")
    return parts, base


def _transform(fn):
    if getattr(fn, "__ag_transform__", None) is None:   # (a plain function: nothing to
        return None                                     # import)
    from autograph.function import transforms
    return transforms.transform_of(fn)


def _chain(fn):
    """[fn, the function it differentiates, ..., the user's function]: `fn` and, when it is
    a gradient, the functions the key names behind it."""
    transform = _transform(fn)
    return [fn] if transform is None else [fn] + _chain(transform[1])


# compiled code is marshalled in this interpreter's bytecode format: another one never reads it
_MAGIC = _bytecode.MAGIC_NUMBER.hex()


class _NotKept(Exception):
    """Why a trace is not cached (logged at verbosity 2), or why it cannot be stored."""


_PLAIN = {type(None), bool, int, float, complex, str, bytes}
_MODULES = {"numpy", "math", "cmath", "autograph", "builtins"}


def _pure_builtin(name, value):
    return name in _PURE_BUILTINS or value in _PURE_TYPES or \
        isinstance(value, type) and issubclass(value, BaseException)


def _acts_outside(code, has_free):
    """Whether `code` (or code nested in it) imports, writes a global, or, in a function
    with free variables (`has_free`), writes a cell: effects outside the trace, and
    direct calls of what the key cannot name (`import time; time.time()`)."""
    import opcode
    ops = {opcode.opmap[name] for name in ("IMPORT_NAME", "IMPORT_FROM", "STORE_GLOBAL",
                                           "DELETE_GLOBAL")}
    if has_free:
        ops |= {opcode.opmap["STORE_DEREF"], opcode.opmap["DELETE_DEREF"]}
    return _has_op(code, ops)


def _global_names(code):
    """The names `code` and the code nested in it read as globals (or builtins)."""
    import opcode
    load_global, load_name = opcode.opmap["LOAD_GLOBAL"], opcode.opmap["LOAD_NAME"]
    extended = opcode.opmap["EXTENDED_ARG"]
    shift = 1 if sys.version_info >= (3, 11) else 0   # LOAD_GLOBAL's arg: index << 1 | flag
    names, raw, arg = set(), code.co_code, 0
    for i in range(0, len(raw), 2):
        op = raw[i]
        arg = arg << 8 | raw[i + 1] if op != 0 else 0
        if op == extended:
            continue
        if op == load_global:
            names.add(code.co_names[arg >> shift])
        elif op == load_name:
            names.add(code.co_names[arg])
        arg = 0
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            names |= _global_names(const)
    return names


def _has_op(code, ops):
    # code units are two bytes, the first the opcode (CACHE entries: 0)
    if not ops.isdisjoint(code.co_code[::2]):
        return True
    return any(_has_op(c, ops) for c in code.co_consts if isinstance(c, types.CodeType))


def _describe_key(k):
    if type(k) is tt.TensorSpec and isinstance(k.dtype, np.dtype):
        return f"T{k.dtype.str}{k.shape}"
    if type(k) is tt.Literal:
        return _describe_value(k.value)
    return None   # an object, a structure, a Variable: not cached


def _describe_value(value):
    """`value` as text that names it across processes, or None when it cannot be named
    (see the module docstring)."""
    if value is disk_cache.EMPTY:
        return "-"
    kind = type(value)
    if kind in _PLAIN:
        return f"{kind.__name__}:{value!r}"
    if kind is tuple or kind is frozenset:
        items = [_describe_value(v) for v in value]
        if None in items:
            return None
        return f"{kind.__name__}({','.join(sorted(items) if kind is frozenset else items)})"
    if isinstance(value, np.generic) and value.dtype.kind not in "OV":
        return f"np.{value.dtype.str}:{value.tobytes().hex()}"
    if isinstance(value, np.dtype) and value.kind not in "OV":
        return f"dtype:{value.str}"
    if issubclass(kind, types.ModuleType):   # (autograph's own packages are subclasses)
        return f"module:{value.__name__}" if _ours(value.__name__) else None
    ref = _reference(value)
    return None if ref is None else "ref:" + ":".join(ref)


def _ours(module):
    return module.partition(".")[0] in _MODULES


def _reference(value):
    """(module, qualified name) reaching `value` from one of _MODULES, or None."""
    module = getattr(value, "__module__", None)
    name = getattr(value, "__qualname__", None) or getattr(value, "__name__", None)
    if not isinstance(module, str) or not isinstance(name, str) or not _ours(module):
        return None
    try:
        return (module, name) if _resolve(module, name) is value else None
    except Exception:   # (an attribute that raises: not a reference)
        return None


def _resolve(module, name):
    obj = sys.modules.get(module)
    for part in name.split("."):
        obj = getattr(obj, part, None)
    return obj


_root = None   # autograph's folder when it is a checkout (not an installed package)


def _checkout():
    """autograph's folder if it is a checkout someone may edit, else '' (an installed
    package changes only with its version, which the disk cache's key holds)."""
    global _root
    if _root is None:
        _root = disk_cache.checkout_root()
    return _root


_files = (-1, None, [])   # (len(sys.modules), autograph's module names, their files)


def _files_now():
    """(path in autograph, size, mtime) of each of autograph's modules this process has
    imported, in a checkout: the code a trace ran is among them. A loaded trace checks
    them (`_unchanged`), so an edit in a checkout never meets an old trace."""
    global _files
    root = _checkout()
    if not root:
        return []
    count, names, files = _files
    if len(sys.modules) != count:   # (other modules are only named, never touched: many
        count = len(sys.modules)    # of TensorFlow's and JAX's load themselves when read)
        now = frozenset(n for n in list(sys.modules) if n.startswith("autograph"))
        if now != names:
            names, files = now, []
            for name in names:
                path = getattr(sys.modules.get(name), "__file__", None)
                if isinstance(path, str) and path.startswith(root + os.sep):
                    st = os.stat(path)
                    files.append((path[len(root):], st.st_size, st.st_mtime_ns))
            files.sort()
        _files = (count, names, files)
    return files


def _unchanged(files):
    root = _checkout()
    for path, size, mtime in files:
        st = os.stat(root + path)
        if st.st_size != size or st.st_mtime_ns != mtime:
            return False
    return True


# -- what a trace calls -------------------------------------------------------------------------

_PURE_BUILTINS = {"abs", "all", "any", "ascii", "bin", "callable", "chr", "divmod", "format",
                  "getattr", "hasattr", "hex", "isinstance", "issubclass", "iter", "len", "max",
                  "min", "next", "oct", "ord", "pow", "repr", "round", "sorted", "sum",
                  "NotImplemented", "Ellipsis"}
_PURE_TYPES = {range, enumerate, zip, int, float, bool, complex, str, bytes, tuple, list, dict,
               set, frozenset, slice, reversed, map, filter, type}
_VALUES = {list, dict, set, tuple, str, bytes, bytearray, int, float, complex, frozenset,
           collections.deque}
# NumPy functions that read or write files or NumPy's global state (or an array in place)
_NUMPY_EFFECTS = {"save", "savez", "savez_compressed", "savetxt", "load", "loadtxt",
                  "genfromtxt", "fromfile", "fromregex", "memmap", "tofile", "dump", "seed",
                  "get_state", "copyto", "put", "putmask", "place", "fill_diagonal",
                  "put_along_axis", "info", "show_config", "show_runtime", "errstate",
                  "printoptions", "get_printoptions", "fill", "resize", "sort", "partition",
                  "itemset", "byteswap"}
# names whose reading keeps a trace out (they may be attributes: `np.save(...)`, direct calls
# of library code that converted code makes without operators.calls seeing them)
_EFFECT_NAMES = _NUMPY_EFFECTS | {"open", "print", "input", "exec", "eval", "globals", "locals",
                                  "vars", "id", "hash", "breakpoint", "__import__"}


class _Record:
    """What a trace called: `pure` stays True while every callee is one a later process
    may skip calling (operators.calls.converted_call shows `watch` each callee)."""

    def __init__(self, chain):
        fn = chain[-1]
        self.pure = True   # else the first callee that was not
        self.inner = f"{fn.__qualname__}.<locals>."   # functions defined inside the traced one
        self.module = fn.__module__
        self.keyed = {id(f) for f in chain}   # the traced function, and those it differentiates

    def watch(self, f):
        if self.pure is True and id(f) not in self.keyed and not self._skippable(f):
            self.pure = f

    def _skippable(self, f):
        kind = type(f)
        if kind is types.BuiltinFunctionType:   # a builtin, a C function, a C method
            owner = f.__self__
            if owner is None or isinstance(owner, types.ModuleType):
                return _pure_function(getattr(f, "__module__", None) or
                                      getattr(owner, "__name__", ""), f.__name__)
            return type(owner) in _VALUES or _numpy_object(owner, f.__name__)
        if kind is type:
            return f in _PURE_TYPES or _ours(f.__module__) and f.__module__ != "builtins"
        if kind is types.MethodType:
            owner = type(f.__self__).__module__
            return owner.startswith("autograph.") or _numpy_object(f.__self__, f.__name__)
        if kind is functools.partial:
            return self._skippable(f.func)
        if kind is types.FunctionType and f.__module__ == self.module and \
                f.__qualname__.startswith(self.inner):
            return True    # its code is in the key (the file), its calls are watched too
        if isinstance(f, np.ufunc):
            return True
        return _pure_function(getattr(f, "__module__", None), getattr(f, "__name__", ""))


def _pure_function(module, name):
    if not isinstance(module, str) or not isinstance(name, str):
        return False
    top = module.partition(".")[0]
    if top == "builtins":
        return name in _PURE_BUILTINS
    if top == "numpy":
        return not _numpy_effect(name)
    return top in ("math", "cmath", "autograph")


def _numpy_object(owner, name):
    """A method of a NumPy array, scalar or random generator that changes nothing outside."""
    return type(owner).__module__.partition(".")[0] == "numpy" and not _numpy_effect(name)


def _numpy_effect(name):
    """Whether NumPy's function or method `name` may touch files, global state or its array
    in place (setters too: np.seterr, np.random.set_state, ...)."""
    return name in _NUMPY_EFFECTS or name.startswith("set")


# -- storing ------------------------------------------------------------------------------------

def store(concrete, compiled, consts):
    """Keep the trace of `concrete`, compiled by codegen to `compiled` (outputs at `consts`
    constant), under its key: written when the disk cache writes (at exit)."""
    (k, conversion), concrete._cache_key = concrete._cache_key, None
    path = disk_cache._path(k, _SUFFIX)
    if path is None:
        return
    try:
        if concrete._jit_compile:
            entry = _native_entry(concrete, compiled, consts, k)
        else:
            entry = _entry(concrete, compiled, consts, k, conversion)
    except _NotKept as why:
        log(2, "trace cache: %s is traced each process: its code holds %s", concrete.name, why)
        return
    except Exception as e:   # a cache: what cannot be written down is not kept, never raised
        log(2, "trace cache: %s is not kept: %r", concrete.name, e)
        return
    # the module files are listed when the file is written (at exit, mostly): listing them
    # walks sys.modules, ~0.7 ms per trace in a process beside TensorFlow and JAX
    disk_cache.later(path, lambda: marshal.dumps({
        **entry, "files": _files_now(),
        "code": None if "native" in entry else _module_code(entry["source"])}))


def _module_code(source):
    """The compiled module code of `source`, as marshal bytes: a loading process runs it
    without compiling (~0.25 ms of a fresh process's first call, issue 29). Its file name is
    a placeholder: `_program` names the code like a freshly compiled one."""
    return marshal.dumps(compile(source, _PLACEHOLDER, "exec"))


def _named(code, filename):
    """`code` and the code objects it holds, with file name `filename`."""
    consts = tuple(_named(c, filename) if type(c) is types.CodeType else c
                   for c in code.co_consts)
    return code.replace(co_filename=filename, co_consts=consts)


def _entry(concrete, compiled, consts, k, conversion):
    namespace = compiled.__globals__
    name = compiled.__name__
    where = namespace["ag_error_at"]
    kernels = getattr(compiled, "__kernels__", {})
    globals_ = []
    for n, v in namespace.items():
        if n in ("__builtins__", "ag_error_at", name):
            continue
        op, module = kernels.get(n), getattr(v, "__module__", None)
        if op is not None and isinstance(module, str) and _ours(module) and \
                _kernel(op, module) is v:
            globals_.append((n, ("kernel", op, module)))
            continue
        try:
            globals_.append((n, _describe_global(v)))
        except _NotKept:
            raise _NotKept(f"{n} = {v!r:.60}") from None
    # node origins stay lines of the converted code (`_Locator` maps them on an error)
    generated = {m[2][0] for m in where.made_by if m is not None and m[2] is not None}
    generated.update(loop[2][0] for loop in where.loops if loop[2] is not None)
    if len(generated) > 1:
        raise _NotKept("nodes made by more than one function")
    made_by = [None if m is None else (m[0], m[1], _write_origin(m[2])) for m in where.made_by]
    return {**_outputs(concrete, consts, k), "source": compiled.__source__, "name": name,
            "graph_name": where.graph_name, "globals": globals_, "made_by": made_by,
            "loops": [(p, n, _write_origin(o), *rest) for p, n, o, *rest in where.loops],
            "in_loop": list(where.in_loop), "conversion": (conversion, next(iter(generated), ""))}


def _native_entry(concrete, compiled, consts, k):
    """The entry of a `jit_compile=True` trace: the recipe of its native code
    (native/jit.py `load_recipe`), whose machine code Numba's own cache keeps."""
    recipe = getattr(compiled, "__recipe__", None)
    if recipe is None:
        raise _NotKept("Variables")
    return {**_outputs(concrete, consts, k), "native": recipe}


def _outputs(concrete, consts, k):
    """What every entry holds: its format and key, and how the function's result is built
    from the graph's outputs (`consts`: those that are constants)."""
    structure = _encode_structure(concrete._structure, set(concrete._tensor_slots),
                                  itertools.count())
    return {"format": FORMAT, "key": k, "structure": structure,
            "tensor_slots": list(concrete._tensor_slots), "consts": list(consts)}


def _native_version(function):
    """Numba's version for a `jit_compile=True` function ('' for others): native code
    lowered for one Numba may not run on another."""
    if not function._jit_compile:
        return ""
    try:
        import numba
    except ImportError:
        raise _NotKept("jit_compile=True without Numba") from None
    return "numba " + numba.__version__


def _describe_global(value):
    if isinstance(value, types.ModuleType):
        if not _ours(value.__name__):
            raise _NotKept
        return ("module", value.__name__)
    if type(value) is np.ndarray and value.dtype.kind in "biufcmM":
        if value.nbytes > _MAX_CONSTANT_BYTES:
            raise _NotKept
        return ("array", value.dtype.str, value.shape, value.tobytes())
    if isinstance(value, np.generic) and value.dtype.kind in "biufcmM":
        return ("scalar", value.dtype.str, value.tobytes())
    if isinstance(value, np.dtype) and value.kind in "biufcmM":
        return ("dtype", value.str)
    recipe = getattr(value, "__fused_chain__", None)    # runtime/exec/fused_kernel.Chain
    if recipe is not None:
        return ("fused_chain", recipe)
    ref = _reference(value) if callable(value) else None
    if ref is not None:
        return ("ref",) + ref
    return ("value", _plain(value))


def _plain(value):
    """`value` as marshal data: None, bools, numbers, strings, bytes, NumPy dtypes, and
    tuples, lists, dicts and slices of them (tagged)."""
    kind = type(value)
    if kind in _PLAIN or value is Ellipsis:
        return value
    if kind is tuple or kind is list:
        return (kind.__name__, [_plain(v) for v in value])
    if kind is dict:
        return ("dict", [[_plain(k), _plain(v)] for k, v in value.items()])
    if kind is slice:
        return ("slice", [_plain(value.start), _plain(value.stop), _plain(value.step)])
    if isinstance(value, np.dtype) and value.kind in "biufcmM":   # (a tuple of dtypes: a
        return ("dtype", value.str)                               # checkpointed loop's)
    raise _NotKept


def _encode_structure(s, slots, leaves):
    """The function's result `s` as marshal data: ("out",) where a graph output goes
    (leaf number in `slots`, leaves counted in nest.flatten's order)."""
    kind = type(s)
    if kind is tuple or kind is list:
        return (kind.__name__, [_encode_structure(c, slots, leaves) for c in s])
    if kind is dict:
        by_key = {key: _encode_structure(s[key], slots, leaves) for key in nest._sorted_keys(s)}
        return ("dict", [(_plain(key), by_key[key]) for key in s])
    if nest.is_nested(s):   # a namedtuple, a dataclass, an object with __ag_flatten__
        raise _NotKept
    if next(leaves) in slots:
        return ("out",)
    return ("value", _plain(s))


# -- loading ------------------------------------------------------------------------------------

def _load(function, k, names, values, key):
    path = disk_cache._path(k, _SUFFIX)
    if path is None:
        return None
    data = disk_cache.read(path)    # None unless this user's autograph wrote it, unchanged
    if data is None:
        return None
    try:
        entry = marshal.loads(data)
        if type(entry) is not dict or entry.get("format") != FORMAT or entry.get("key") != k \
                or not _unchanged(entry["files"]):
            return None
        if "native" in entry:
            from autograph.runtime.exec.native import jit
            program = jit.load_recipe(entry["native"], function.__name__)
        else:
            program = _program(entry)
        structure = _decode_structure(entry["structure"])
    except Exception:   # no file, another format, damaged: trace as if there were none
        return None
    flat = nest.flatten(structure)
    return ConcreteFunction(function, None, names, values, key, structure, flat,
                            entry["tensor_slots"], program=(program, entry["consts"]))


def _write_origin(origin):
    """A node's origin as marshal data: a gradient rule's (GradientOrigin) as a list."""
    return list(origin) if isinstance(origin, GradientOrigin) else origin


def _read_origin(origin):
    return GradientOrigin(origin) if type(origin) is list else origin and tuple(origin)


def _program(entry):
    """The compiled function of `entry`, as codegen.compile_graph would have made it."""
    namespace = {name: _decode_global(d) for name, d in entry["globals"]}
    name, graph_name, source = entry["name"], entry["graph_name"], entry["source"]
    filename, number = frames.take_codegen_filename(graph_name, " from the trace cache")
    made_by = [None if m is None else (m[0], m[1], _read_origin(m[2]))
               for m in entry["made_by"]]
    loops = tuple((p, n, _read_origin(o), tuple(tuple(v) for v in vs), tuple(it))
                  for p, n, o, vs, it in entry["loops"])
    namespace["ag_error_at"] = _Locator(filename, graph_name, made_by, entry["conversion"],
                                        loops, entry["in_loop"])
    code = marshal.loads(entry["code"])   # signed with the entry: this user's process wrote it
    if type(code) is not types.CodeType or code.co_filename != _PLACEHOLDER:
        raise ValueError("not a compiled trace")
    exec(_named(code, filename), namespace)
    fn = namespace[name]
    fn.__source__ = source
    frames.register_source(filename, number, source, fn)   # forgotten with fn
    return fn


def _kernel(op, module):
    """Primitive `op`'s kernel on the cpu, as codegen binds it (`module`: where it is
    defined, imported first: importing it registers the primitive)."""
    from autograph.runtime import devices
    from autograph.runtime.ir import primitives
    if module not in sys.modules:
        __import__(module)
    cpu = devices.get_device("cpu")
    kernel = cpu.kernels.get(op) or primitives.lookup(op).kernel
    return kernel if callable(kernel) else cpu.kernel(op, kernel)


class _Locator(errors.RunErrorLocator):
    """A loaded trace's error handler. Its nodes' origins are lines of the function's
    converted code, which a process that loaded the trace never made: on the first error,
    the disk cache's record of the conversion maps them to the user's lines."""
    __slots__ = ("conversion",)

    def __init__(self, filename, graph_name, made_by, conversion, loops=(), in_loop=()):
        super().__init__(filename, graph_name, made_by, loops, in_loop)
        self.conversion = conversion   # (the conversion's key, its generated file name)

    def __call__(self, exc):
        if self.conversion is not None:
            conversion, self.conversion = self.conversion, None
            try:
                user = _user_lines(*conversion)
                self.made_by = [None if m is None else (m[0], m[1], user(m[2]))
                                for m in self.made_by]
                self.loops = tuple((p, n, user(o), vs, it) for p, n, o, vs, it in self.loops)
            except Exception:   # no record: the message names the node, not the line
                pass
        super().__call__(exc)


def _user_lines(conversion, generated):
    """origin -> the user's origin, for the origins in lines of `generated` (the converted
    code of the conversion whose disk-cache key is `conversion`)."""
    record = disk_cache.load(conversion)
    lines = disk_cache.origin_map(record) if record is not None else {}

    def user(origin):
        if origin is None or origin[0] != generated:
            return origin
        for line in range(origin[1], max(0, origin[1] - 50), -1):   # (as origin_location)
            loc = lines.get(line)
            if loc is not None:
                return (loc.filename, loc.lineno, loc.function_name)
        return None
    return user


def _decode_global(d):
    kind = d[0]
    if kind == "kernel":
        if not _ours(d[2]):
            raise ValueError(d[2])
        return _kernel(d[1], d[2])
    if kind == "module":
        if not _ours(d[1]):
            raise ValueError(d[1])
        return sys.modules.get(d[1]) or __import__(d[1], fromlist=["_"])
    if kind == "array":
        dtype, shape, data = d[1:]
        return np.frombuffer(data, dtype).reshape(shape)   # read-only, as graph constants are
    if kind == "scalar":
        return np.frombuffer(d[2], d[1])[0]
    if kind == "dtype":
        return np.dtype(d[1])
    if kind == "fused_chain":
        from autograph.runtime.exec import fused_kernel
        return fused_kernel.Chain(*d[1])
    if kind == "ref":
        module, name = d[1:]
        if not _ours(module):
            raise ValueError(module)
        if module not in sys.modules:
            __import__(module)
        value = _resolve(module, name)
        if value is None:
            raise ValueError(f"{module}:{name}")
        return value
    if kind == "value":
        return _unplain(d[1])
    raise ValueError(kind)


def _unplain(value):
    if type(value) is tuple:
        kind, items = value
        if kind == "dtype":
            return np.dtype(items)
        if kind == "dict":
            return {_unplain(k): _unplain(v) for k, v in items}
        items = [_unplain(v) for v in items]
        return tuple(items) if kind == "tuple" else items if kind == "list" else slice(*items)
    return value


def _decode_structure(d):
    kind = d[0]
    if kind == "out":
        return None    # (the output's place: the runner fills it)
    if kind == "value":
        return _unplain(d[1])
    if kind == "dict":
        return {_unplain(key): _decode_structure(c) for key, c in d[1]}
    items = [_decode_structure(c) for c in d[1]]
    return tuple(items) if kind == "tuple" else items
