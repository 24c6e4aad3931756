"""Turn a converted gast function back into a live Python function.

`load(node, original_fn, extra, name)` unparses the converted FunctionDef (or Lambda),
registers the text in linecache under a readable filename such as
'<autograph: collatz at examples/collatz.py:12>' (so inspect.getsource, tracebacks and pdb
show the generated code), compiles it, and builds the function with types.FunctionType:

- its globals are the USER'S OWN globals dict, so a global changed after conversion is seen
  (exactly as by the original function), and nothing is written into that dict;
- its free variables are the original function's closure cells (a nonlocal rebound later is
  seen, and `nonlocal x; x = ...` in converted code writes the user's cell), plus fresh
  cells for `extra` names (e.g. `ag__`, the operators module);
- it keeps the original's defaults, keyword defaults, __name__, __qualname__, __doc__,
  __module__, annotations and attributes; `fn.__autograph_original__` is the original
  function (not `__wrapped__`: inspect.getsource follows `__wrapped__` and would show the
  user's code instead of the generated code).

How: the function is compiled nested in a factory `def` whose parameters are the free
variable names, which makes the compiler emit closure loads for them; the factory is never
run, its nested code object is paired with the cells directly.

The generated file's origin map (generated line -> user's LineLocation) is built by
re-parsing the generated text and walking it alongside the converted tree, reading each
node's anno.Basic.ORIGIN; it is registered with autograph.source.origin.
"""

import ast
import functools
import inspect
import itertools
import os
import re
import textwrap
import threading
import types
import weakref

import gast

from autograph import errors
from autograph.source import anno, traversal
from autograph.source import origin
from autograph.source import parser

_FACTORY = "__autograph_factory"
_counter = itertools.count(1)
_names_lock = threading.RLock()   # reentrant: _forget runs from GC callbacks
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


_OTHER_LINE_BREAKS = "\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029"


def _indent(text, prefix="    "):
    """textwrap.indent(text, prefix): `prefix` before every line that is not blank."""
    if any(c in text for c in _OTHER_LINE_BREAKS):  # str.splitlines breaks there too
        return textwrap.indent(text, prefix)
    return "\n".join([prefix + line if line.strip() else line for line in text.split("\n")])


def _filename_for(fn):
    code = fn.__code__
    base = f"<autograph: {fn.__qualname__} at {_short_path(code.co_filename)}:{code.co_firstlineno}"
    with _names_lock:
        name = base + ">"
        while name in _used_filenames:
            name = f"{base} #{next(_counter)}>"
        _used_filenames.add(name)
    return name


def _forget(filename):
    origin.unregister(filename)
    with _names_lock:
        _used_filenames.discard(filename)


def _twins(converted, reparsed):
    """Is the plain-ast node `reparsed` the counterpart of gast node `converted`?"""
    name = type(reparsed).__name__
    return type(converted).__name__ == name or (name == "arg" and isinstance(converted, gast.Name))


def _pair_walk(converted, reparsed, stmt_lines, expr_lines):
    """Walk the converted gast tree and the plain ast of its unparsed text together (same
    shape); record each reparsed node's lines -> the ORIGIN of its converted twin (inner
    nodes overwrite outer ones). Plain ast: converting the re-parse to gast costs more
    than the rest of loading."""
    if not _twins(converted, reparsed):
        return
    loc = anno.getanno(converted, anno.Basic.ORIGIN, None)
    lineno = getattr(reparsed, "lineno", None)
    if isinstance(converted, gast.match_case):  # no position of its own: its pattern's
        loc = anno.getanno(converted.pattern, anno.Basic.ORIGIN, loc)
        lineno = reparsed.pattern.lineno
    if loc is not None and lineno is not None:
        header = isinstance(reparsed, (ast.stmt, ast.excepthandler, ast.match_case))
        lines = stmt_lines if header else expr_lines
        end = getattr(reparsed, "end_lineno", None) or lineno
        if isinstance(reparsed, gast.match_case):
            end = reparsed.pattern.end_lineno
        for line in range(lineno, end + 1):
            lines[line] = loc
    for field in converted._fields:
        a = getattr(converted, field, None)
        b = getattr(reparsed, field, None)
        if isinstance(a, list) and isinstance(b, list) and len(a) == len(b):
            for x, y in zip(a, b):
                if isinstance(x, gast.AST):
                    _pair_walk(x, y, stmt_lines, expr_lines)
        elif isinstance(a, gast.AST) and isinstance(b, ast.AST):
            _pair_walk(a, b, stmt_lines, expr_lines)


def build_origin_map(converted, module_text):
    """generated line -> LineLocation, for `module_text` whose factory holds `converted`."""
    module = ast.parse(module_text)
    factory = module.body[0]
    if isinstance(factory, ast.ClassDef):
        factory = factory.body[0]
    if isinstance(converted, gast.Lambda):
        twin = next(s for s in factory.body if isinstance(s, ast.Return)).value
    else:
        twin = next(s for s in factory.body if _twins(converted, s))
    stmt_lines, expr_lines = {}, {}
    _pair_walk(converted, twin, stmt_lines, expr_lines)
    expr_lines.update(stmt_lines)  # a statement's own origin wins over its expressions'
    return expr_lines


# `__x` not preceded by a word character; written literal-first ("__", then the look
# back) so that the regex engine scans for "__" instead of trying every position
_PRIVATE_HINT = re.compile(r"__(?<!\w__)\w*?[^\W_]_?(?!\w)")


def _mangling_class(fn, node, source_text):
    """The name of the class whose body `fn` was defined in (directly or nested in one of
    its methods) when the converted code uses private names (`self.__x`): compiling inside
    a class of that name makes the compiler mangle them as it did for the original."""
    if not _PRIVATE_HINT.search(source_text):
        return None  # no `__x` token in the text at all: the tree walk cannot find one
    private = any(
        (isinstance(n, gast.Name) and n.id.startswith("__") and not n.id.endswith("__")) or
        (isinstance(n, gast.Attribute) and n.attr.startswith("__") and not n.attr.endswith("__"))
        for n in traversal.walk(node, leaves=False))
    if not private:
        return None
    parts = fn.__qualname__.split(".")[:-1]
    while parts:
        if parts[-1] == "<locals>":
            parts = parts[:-2]  # skip the function these locals belong to
            continue
        return parts[-1]
    return None


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


def load(node, original_fn, extra=None, name=None, generated=()):
    """Compile converted `node` (gast FunctionDef or Lambda) into a function bound to
    `original_fn`'s globals and closure cells plus `extra` (name -> value or cell).

    Returns (new_fn, source_text, filename): source_text is the converted function's own
    text (what to_code shows); filename is where linecache and the origin map have it.
    A bound method in gives a bound method out.
    """
    bound_self = getattr(original_fn, "__self__", None) if isinstance(original_fn, types.MethodType) else None
    fn = original_fn.__func__ if bound_self is not None else original_fn
    extra = dict(extra or {})
    is_lambda = isinstance(node, gast.Lambda)
    if not is_lambda and not isinstance(node, (gast.FunctionDef, gast.AsyncFunctionDef)):
        raise TypeError(f"load() needs a gast FunctionDef or Lambda, got {type(node).__name__}")
    inner_name = "<lambda>" if is_lambda else (name or node.name)

    closure = dict(zip(fn.__code__.co_freevars, fn.__closure__ or ()))
    clash = set(closure) & set(extra)
    if clash:
        names = ", ".join(repr(n) for n in sorted(clash))
        raise errors.ConversionError(
            f"{fn.__qualname__} (defined at {fn.__code__.co_filename}:"
            f"{fn.__code__.co_firstlineno}) uses the variable {names} from an enclosing "
            f"function; autograph's generated code reserves that name. Rename the variable.")
    cells = dict(closure)
    for key, value in extra.items():
        cells[key] = value if isinstance(value, types.CellType) else types.CellType(value)

    source_text = parser.unparse(node)
    params = sorted(cells)
    header = [f"def {_FACTORY}({', '.join(params)}):"]
    if not is_lambda and inner_name not in cells:
        # keep the function's own name global, as in the original (recursion finds the
        # module-level object, not the factory's local)
        header.append(f"    global {inner_name}")
    body = _indent(source_text)
    footer = (f"    return {inner_name}" if not is_lambda else "")
    if is_lambda:
        body = "    return (\n" + _indent(source_text, "        ") + "\n    )"
    module_text = "\n".join(header + [body] + ([footer] if footer else [])) + "\n"
    cls = _mangling_class(fn, node, source_text)
    if cls is not None:
        module_text = f"class {cls}:\n" + _indent(module_text)

    filename = _filename_for(fn)
    flags = fn.__code__.co_flags & parser._FUTURE_MASK
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

    # built on first use (most converted functions never raise): the tree is not changed
    # after loading, so the map built later is the same
    origin.register(filename, module_text, lambda: build_origin_map(node, module_text))
    # the file's text, origin map (and the tree it is built from) and name live as long as
    # the generated code does (functions made from it, frames and tracebacks running it)
    weakref.finalize(inner_code, _forget, filename).atexit = False
    if bound_self is not None:
        new_fn = types.MethodType(new_fn, bound_self)
    return new_fn, source_text, filename
