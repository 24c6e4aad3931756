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
import re
import textwrap
import types

import gast

from autograph import errors
from autograph.source import anno, traversal
from autograph.source import origin
from autograph.source import parser
from autograph.source.origin import (_FACTORY, _filename_for, _find_code,  # noqa: F401
                                     _forget, _names_lock, _requalify, _short_path,
                                     _used_filenames, make_function)

_OTHER_LINE_BREAKS = "\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029"


def _indent(text, prefix="    "):
    """textwrap.indent(text, prefix): `prefix` before every line that is not blank."""
    if any(c in text for c in _OTHER_LINE_BREAKS):  # str.splitlines breaks there too
        return textwrap.indent(text, prefix)
    return "\n".join([prefix + line if line.strip() else line for line in text.split("\n")])


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


def load(node, original_fn, extra=None, name=None, generated=(), record=None):
    """Compile converted `node` (gast FunctionDef or Lambda) into a function bound to
    `original_fn`'s globals and closure cells plus `extra` (name -> value or cell).

    Returns (new_fn, source_text, filename): source_text is the converted function's own
    text (what to_code shows); filename is where linecache and the origin map have it.
    A bound method in gives a bound method out. `record`: a dict that receives what
    autograph.source.disk_cache needs to make the function again without the tree.
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
    if record is not None:   # what the disk cache keeps (autograph.source.disk_cache)
        record.update(module_text=module_text, source_text=source_text, inner_name=inner_name,
                      cls=cls, generated=sorted(generated), flags=flags,
                      lines=lambda: build_origin_map(node, module_text))
    # built on first use (most converted functions never raise): the tree is not changed
    # after loading, so the map built later is the same
    new_fn = make_function(module_text, fn, cells, inner_name, cls, generated, filename, flags,
                           lambda: build_origin_map(node, module_text))
    if bound_self is not None:
        new_fn = types.MethodType(new_fn, bound_self)
    return new_fn, source_text, filename
