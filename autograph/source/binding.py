"""Make a live function from generated module text: the part of loading that needs no
tree (autograph.source.loader has the rest), so the disk cache of converted source
(autograph.source.disk_cache) can load a conversion without importing gast or the passes.

The generated function is compiled nested in a factory `def` whose parameters are the free
variable names; its code object is paired with the user's closure cells and globals (see
autograph.source.loader for why).
"""

import functools
import inspect
import itertools
import os
import _thread
import types
import weakref

from autograph import errors, frames
from autograph.source import origin

_FACTORY = "__autograph_factory"
_counter = itertools.count(1)
_names_lock = _thread.RLock()   # reentrant: _forget runs from GC callbacks
_used_filenames = set()


def _short_path(path):
    return _short_path_from(path, os.getcwd())


@functools.lru_cache(maxsize=256)
def _short_path_from(path, cwd):
    try:
        rel = os.path.relpath(path, cwd)
    except ValueError:  # another drive on Windows
        return path
    return path if rel.startswith(".." + os.sep + "..") else rel


def _filename_for(fn):
    code = fn.__code__
    base = f"<autograph: {fn.__qualname__} at {_short_path(code.co_filename)}:{code.co_firstlineno}"
    with _names_lock:
        name = base + ">"
        while name in _used_filenames:
            name = f"{base} #{next(_counter)}>"
        _used_filenames.add(name)
    if frames.is_package_file(code.co_filename):
        frames.mark_internal(name)
    return name


def _forget(filename):
    origin.unregister(filename)
    frames._internal_converted.discard(filename)
    with _names_lock:
        _used_filenames.discard(filename)


def _find_code(code, name):
    for const in code.co_consts:
        if isinstance(const, types.CodeType) and const.co_name == name:
            return const
    raise AssertionError(f"no code object {name!r} in {code.co_name}")


def _requalify(code, old, new, generated):
    """`code` with the qualified names of the functions and classes nested in it as Python
    gave them in the original: under `new` (the user's `Outer.make`) instead of `old` (what
    compiling inside the factory gave), without the `if_true.<locals>` of generated
    functions (`generated`: their names) a def or class was moved into."""
    consts = list(code.co_consts)
    changed = False
    for i, const in enumerate(consts):
        if isinstance(const, types.CodeType):
            fixed = _requalify(const, old, new, generated)
            if fixed is not const:
                consts[i], changed = fixed, True
    qualname = code.co_qualname
    if qualname == old or qualname.startswith(old + "."):
        parts = qualname[len(old):].split(".")[1:]
        kept = []
        for part in parts:
            if part == "<locals>" and kept and kept[-1] in generated:
                kept.pop()
                continue
            kept.append(part)
        qualname = ".".join([new] + kept)
    if qualname != code.co_qualname and not code.co_flags & inspect.CO_NEWLOCALS:
        # a class body: it stores its __qualname__ as a constant
        consts = [qualname if c == code.co_qualname and isinstance(c, str) else c
                  for c in consts]
        changed = True
    if not changed and qualname == code.co_qualname:
        return code
    return code.replace(co_consts=tuple(consts), co_qualname=qualname)


def make_function(module_text, fn, cells, inner_name, cls, generated, filename, flags, line_map):
    """The function `inner_name` defined by generated `module_text` (registered under
    `filename`, with origin map `line_map`: a dict or a callable making one), bound to
    `fn`'s globals and defaults and to `cells` (free variable name -> cell)."""
    try:
        module_code = compile(module_text, filename, "exec", flags=flags, dont_inherit=True)
    except SyntaxError as e:
        raise errors.ConversionError(
            f"internal: the converted code of {fn.__qualname__} does not compile: {e.msg} "
            f"(line {e.lineno} of {filename}):\n{module_text}") from e
    if cls is not None:
        module_code = _find_code(module_code, cls)
    factory_code = _find_code(module_code, _FACTORY)
    inner_code = _find_code(factory_code, inner_name)
    if hasattr(inner_code, "co_qualname"):   # Python 3.11+
        inner_code = _requalify(inner_code, inner_code.co_qualname, fn.__qualname__,
                                frozenset(generated))

    missing = [v for v in inner_code.co_freevars if v not in cells]
    if missing:
        raise errors.ConversionError(f"internal: no cell for free variables {missing}")
    new_fn = types.FunctionType(inner_code, fn.__globals__, fn.__name__, fn.__defaults__,
                                tuple(cells[v] for v in inner_code.co_freevars))
    new_fn.__kwdefaults__ = dict(fn.__kwdefaults__) if fn.__kwdefaults__ else None
    new_fn.__qualname__ = fn.__qualname__
    new_fn.__doc__ = fn.__doc__
    new_fn.__module__ = fn.__module__
    new_fn.__annotations__ = dict(getattr(fn, "__annotations__", {}) or {})
    new_fn.__dict__.update({k: v for k, v in fn.__dict__.items()
                            if k not in ("__wrapped__", "__autograph_converted__")})
    new_fn.__autograph_original__ = fn

    origin.register(filename, module_text, line_map)
    # the file's text, origin map (and the tree it is built from) and name live as long as
    # the generated code does (functions made from it, frames and tracebacks running it)
    weakref.finalize(inner_code, _forget, filename).atexit = False
    return new_fn
