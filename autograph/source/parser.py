"""Python source as gast trees: find, parse and unparse the code of functions and lambdas.

`parse_entity(fn)` finds the source of a function, method, nested function, decorated
function or lambda through its code object (file and first line) and linecache, so code
defined in a file, by exec() of text registered in linecache, or in a notebook cell works.
The whole source file is parsed (cached per file text), and the entity is picked out by
position and name, so indentation, decorators, and several lambdas on one line need no
text surgery. Every parsed node carries `anno.Basic.ORIGIN`: its place in the user's file.
"""

import ast
import codecs
import collections
import dataclasses
import functools
import inspect
import linecache
import os
import re
import sys
import textwrap
import _thread
import types

import gast

from autograph import errors
from autograph.source import anno, bridge, freshness, traversal, unparser
from autograph.source.origin import LineLocation


@dataclasses.dataclass
class EntityInfo:
    """Where a parsed entity lives in the user's code."""
    name: str              # the function's __name__ ('<lambda>' for lambdas)
    qualname: str
    filename: str
    lineno: int            # first line of the def (or of the lambda keyword)
    col_offset: int
    source_lines: list     # all lines of the user's file (for error messages)
    future_flags: int = 0  # compiler flags of `from __future__` imports in effect


# ---------------------------------------------------------------------------------------
# text <-> tree

def parse_str(code):
    """Parse (dedented) source text into a gast.Module."""
    return bridge.to_gast(ast.parse(textwrap.dedent(code)))


def parse_expression(code):
    """Parse one expression into a gast expression node."""
    module = parse_str(code.strip())
    if len(module.body) != 1 or not isinstance(module.body[0], gast.Expr):
        raise ValueError(f"expected a single expression, got {code!r}")
    return module.body[0].value


def unparse(node):
    """Source text of a gast node, or of a list of nodes (joined by newlines)."""
    if isinstance(node, (list, tuple)):
        return "\n".join(unparse(n) for n in node)
    if hasattr(ast, "unparse"):
        return unparser.unparse(node)  # the text of ast.unparse(bridge.to_ast(node))
    import astunparse  # Python 3.8 (setup.cfg installs it there)
    tree = gast.gast_to_ast(node)
    if isinstance(tree, ast.AST) and not isinstance(tree, ast.mod):
        ast.fix_missing_locations(tree)
    return astunparse.unparse(tree).strip()


# ---------------------------------------------------------------------------------------
# finding an entity's source

def _describe(fn):
    name = getattr(fn, "__qualname__", None) or getattr(fn, "__name__", None) or repr(fn)
    code = getattr(fn, "__code__", None)
    where = f" (defined at {code.co_filename}:{code.co_firstlineno})" if code else ""
    return f"{name}{where}"


def _unwrap_callable(fn):
    if isinstance(fn, (staticmethod, classmethod)):
        fn = fn.__func__
    if inspect.ismethod(fn):
        fn = fn.__func__
    if isinstance(fn, functools.partial):
        raise errors.ConversionError(
            f"cannot convert {fn!r}: functools.partial objects have no source of their own; "
            "convert the wrapped function instead (autograph converts it when it is called).")
    if not isinstance(fn, types.FunctionType):
        kind = type(fn).__name__
        raise errors.ConversionError(
            f"cannot convert {_describe(fn)}: it is a {kind}, not a Python function, so it has "
            "no Python source to read. Built-ins and C extensions run as they are: call them "
            "directly, or mark the caller with @autograph.do_not_convert.")
    return fn


_BLOCKS = frozenset(traversal.BLOCK_FIELDS)
_BLOCK_FIELDS = {}  # ast class -> its fields (in order) that may hold statements


class _FileIndex:
    """A parsed file with its functions (and, when first asked for, its lambdas) indexed by
    line, so that finding one entity does not walk the whole module each time. Functions
    are statements: finding them needs no walk through expressions. The walk is breadth
    first, as ast.walk (the first node found wins when names repeat), and goes only as far
    as the def asked for: a function near the top of a file is found without indexing the
    rest. Cached indexes are shared between threads: the walk holds a lock."""

    def __init__(self, tree):
        self.tree = tree
        self._defs = {}       # first line (of the def or of its first decorator) -> [nodes]
        self._todo = collections.deque([tree])
        self._lock = _thread.allocate_lock()
        self._lambdas = None  # line of the `lambda` keyword -> [nodes]

    def _step(self):
        """Index the next node of the walk; return it when it is a def."""
        node = self._todo.popleft()
        cls = node.__class__
        fields = _BLOCK_FIELDS.get(cls)
        if fields is None:
            fields = _BLOCK_FIELDS[cls] = [f for f in cls._fields if f in _BLOCKS]
        for f in fields:  # defs sit only in statement lists (and handlers', cases')
            block = getattr(node, f, None)
            if block.__class__ is list:
                self._todo.extend(block)
        if cls is ast.FunctionDef or cls is ast.AsyncFunctionDef:
            first = min([node.lineno] + [d.lineno for d in node.decorator_list])
            for line in {first, node.lineno}:
                self._defs.setdefault(line, []).append(node)
            return node
        return None

    def find_def(self, line, name):
        """The first def (in walk order) named `name` that starts at `line` (its def line
        or its first decorator's), or None."""
        with self._lock:
            for node in self._defs.get(line, ()):
                if node.name == name:
                    return node
            while self._todo:
                node = self._step()
                if node is not None and node.name == name and line in self._lines_of(node):
                    return node
            return None

    @staticmethod
    def _lines_of(node):
        return (node.lineno, min([node.lineno] + [d.lineno for d in node.decorator_list]))

    @property
    def defs(self):
        """Every def of the file, by line (walks the rest of the file)."""
        with self._lock:
            while self._todo:
                self._step()
            return self._defs

    @property
    def lambdas(self):
        if self._lambdas is None:
            lambdas = {}
            for node in ast.walk(self.tree):
                if isinstance(node, ast.Lambda):
                    lambdas.setdefault(node.lineno, []).append(node)
            self._lambdas = lambdas
        return self._lambdas


@functools.lru_cache(maxsize=64)
def _parse_file_text(text):
    return _FileIndex(ast.parse(text))


_OTHER_LINE_BREAKS = re.compile("[\x0b\x0c\x1c-\x1e\x85\u2028\u2029]")  # str.splitlines breaks there too


def _read_lines(filename):
    """The lines linecache.updatecache reads and caches for a plain UTF-8 file (no BOM,
    no coding cookie, no carriage returns), without tokenize.open's encoding detection
    and line-buffered text layer; None for any other file (linecache then reads it)."""
    try:
        fd = os.open(filename, os.O_RDONLY)
        try:
            st = os.fstat(fd)
            data = os.read(fd, st.st_size + 1)
            while len(data) > st.st_size:  # it grew since fstat: read the rest
                more = os.read(fd, 1 << 16)
                if not more:
                    break
                data += more
        finally:
            os.close(fd)
    except OSError:
        return None
    if data.startswith(codecs.BOM_UTF8) or b"\r" in data:
        return None
    second_end = data.find(b"\n", data.find(b"\n") + 1)
    if b"coding" in (data if second_end < 0 else data[:second_end]):
        return None  # perhaps a coding cookie: tokenize's rules decide
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return None
    if _OTHER_LINE_BREAKS.search(text):  # universal newlines split at \n only
        parts = text.split("\n")
        if parts[-1] == "":
            parts.pop()
        lines = [p + "\n" for p in parts]
    else:
        lines = text.splitlines(True)
        if lines and not lines[-1].endswith("\n"):
            lines[-1] += "\n"  # as linecache does
    linecache.cache[filename] = (st.st_size, st.st_mtime, lines, filename)
    return lines


def _getlines(filename, module_globals):
    """linecache.getlines(filename, module_globals), reading uncached plain files faster."""
    entry = linecache.cache.get(filename)
    if entry is not None and len(entry) != 1:
        return entry[2]
    if filename and not (filename.startswith("<") and filename.endswith(">")):
        lines = _read_lines(filename)
        if lines is not None:
            return lines
    return linecache.getlines(filename, module_globals)


def _no_source(fn):
    hint = ("Code typed at the interactive prompt or passed to exec() as a string has no "
            "file to read. Define the function in a file (or, for exec, register the text "
            "with linecache.cache under the filename given to compile()), or mark it with "
            "@autograph.do_not_convert to run it unconverted.")
    return errors.ConversionError(
        f"cannot convert {_describe(fn)}: its source code is not available "
        f"(no text for file {fn.__code__.co_filename!r}). {hint}")


def _command_lines(fn):
    """The text of `python -c TEXT` when `fn` may come from it (a '<string>' function of
    __main__ in a process started with -c), else None. Python keeps the text only in
    sys.orig_argv; parse_entity checks that it is `fn`'s code (an exec() of other text in
    __main__ also makes '<string>' functions)."""
    main = sys.modules.get("__main__")
    if (fn.__code__.co_filename != "<string>" or main is None
            or fn.__globals__ is not getattr(main, "__dict__", None)
            or sys.argv[:1] != ["-c"]):
        return None
    argv = getattr(sys, "orig_argv", [])
    for i, arg in enumerate(argv[1:-1], 1):
        if arg == "-c" or (arg[:1] == "-" and arg[1:2] != "-" and arg.endswith("c")
                           and arg[1:].isalpha()):
            return argv[i + 1].splitlines(True)
    return None


def _source_lines(fn):
    """The lines of `fn`'s file, and whether they are the text of `python -c`."""
    code = fn.__code__
    lines = _getlines(code.co_filename, fn.__globals__)
    if lines:
        return lines, False
    lines = _command_lines(fn)
    if not lines:
        raise _no_source(fn)
    return lines, True


def _param_names(args):
    """Parameter names of an ast.arguments in code-object order."""
    names = [a.arg for a in args.posonlyargs + args.args]
    names += [a.arg for a in args.kwonlyargs]
    if args.vararg:
        names.append(args.vararg.arg)
    if args.kwarg:
        names.append(args.kwarg.arg)
    return names


def _code_param_names(code):
    n = code.co_argcount + code.co_kwonlyargcount
    n += bool(code.co_flags & inspect.CO_VARARGS) + bool(code.co_flags & inspect.CO_VARKEYWORDS)
    # code-object order: positional, keyword-only, *args, **kwargs (as _param_names)
    return list(code.co_varnames[:n])


def _span(node):
    return (node.lineno, node.col_offset), (node.end_lineno, node.end_col_offset)


def _body_positions(code):
    """(line, col) start/end of the expressions a code object evaluates (3.11+)."""
    if not hasattr(code, "co_positions"):
        return []
    out = []
    for line, end_line, col, end_col in code.co_positions():
        if line is None or col is None or end_line is None or end_col is None:
            continue
        if (end_line, end_col) <= (line, col):  # scaffolding (RESUME, implicit return)
            continue
        out.append(((line, col), (end_line, end_col)))
    return out


def _find_lambda(index, fn):
    code = fn.__code__
    candidates = list(index.lambdas.get(code.co_firstlineno, ()))
    params = _code_param_names(code)
    matching = [n for n in candidates if _param_names(n.args) == params]
    if len(matching) > 1:
        positions = _body_positions(code)
        if positions:
            def contains(node):
                start, end = _span(node.body)
                return all(start <= s and e <= end for s, e in positions)
            inside = [n for n in matching if contains(n)]
            # nested lambdas: the innermost body containing all positions is this one
            inside.sort(key=lambda n: (n.body.lineno, n.body.col_offset), reverse=True)
            matching = inside[:1] or matching
    if not matching:
        return None, len(candidates)
    if len(matching) > 1:
        raise errors.ConversionError(
            f"cannot convert the lambda defined at {code.co_filename}:{code.co_firstlineno}: "
            f"{len(matching)} lambdas on that line look alike and autograph cannot tell which "
            "one it is. Put the lambda on its own line, or use a def.")
    return matching[0], len(candidates)


def _find_def(index, fn):
    code = fn.__code__
    return index.find_def(code.co_firstlineno, code.co_name)


def _parse_block(lines, fn):
    """Fallback when the whole file does not parse (e.g. notebook magics elsewhere in a
    cell): parse just the entity's block, keeping its original line numbers and columns."""
    start = fn.__code__.co_firstlineno
    block = inspect.getblock(lines[start - 1:])
    text = "".join(block)
    indented = block and block[0][:1] in (" ", "\t")
    # `if 1:` lets an indented block parse without dedenting (columns stay right)
    padded = "\n" * (start - 2) + "if 1:\n" + text if indented else "\n" * (start - 1) + text
    try:
        return ast.parse(padded)
    except SyntaxError as e:
        raise errors.ConversionError(
            f"cannot convert {_describe(fn)}: its source does not parse ({e.msg}, line "
            f"{e.lineno}). If the file changed since it was imported, reload it.") from None


def _dedent_lines(lines):
    """textwrap.dedent("".join(lines)) for lines split at newlines, without its regular
    expressions: when every line that is not blank starts with the first line's
    indentation, that indentation is the margin, and blank lines lose their spaces."""
    first = lines[0] if lines else ""
    margin = first[:len(first) - len(first.lstrip(" \t"))]
    if not first.strip(" \t\n"):
        return textwrap.dedent("".join(lines))
    n = len(margin)
    out = []
    for line in lines:
        if not line.strip(" \t\n"):  # blank or only spaces and tabs
            out.append("\n" if line.endswith("\n") else "")
        elif n == 0 or line.startswith(margin):
            out.append(line[n:])
        else:  # a line indented less than the first: dedent finds the margin
            return textwrap.dedent("".join(lines))
    return "".join(out)


def _locate(fn, lines):
    text = "".join(lines)
    try:
        index = _parse_file_text(text)
    except SyntaxError:
        index = _FileIndex(_parse_block(lines, fn))
    is_lambda = fn.__code__.co_name == "<lambda>"
    if is_lambda:
        node, seen = _find_lambda(index, fn)
    else:
        node = _find_def(index, fn)
    if node is None:
        raise errors.ConversionError(
            f"cannot convert {_describe(fn)}: no matching {'lambda' if is_lambda else 'def'} "
            "was found at that line of its source. The file probably changed after it was "
            "loaded: reload the module, or mark the function with @autograph.do_not_convert.")
    return node


# ---------------------------------------------------------------------------------------
# origins

class _OriginAnnotator(gast.NodeVisitor):
    def __init__(self, filename, lines, function_name):
        self.filename = filename
        self.lines = lines
        self.function_names = [function_name]

    def visit(self, node):
        if isinstance(node, _SHARED_LEAVES):
            return  # ast may share these between nodes: no per-node facts on them
        lineno = getattr(node, "lineno", None)
        if lineno is not None:
            line = self.lines[lineno - 1].rstrip("\r\n") if 0 < lineno <= len(self.lines) else ""
            loc = LineLocation(self.filename, lineno, getattr(node, "col_offset", 0), line,
                               self.function_names[-1])
        else:  # `arguments`, `comprehension`, `withitem`, ...: the enclosing node's place
            loc = self.current
        if loc is not None:
            anno.setanno(node, anno.Basic.ORIGIN, loc)
        outer, self.current = self.current, loc
        nested = isinstance(node, (gast.FunctionDef, gast.AsyncFunctionDef, gast.Lambda))
        if nested and node is not self.root:
            self.function_names.append(getattr(node, "name", "<lambda>"))
        self.generic_visit(node)
        if nested and node is not self.root:
            self.function_names.pop()
        self.current = outer

    def run(self, root):
        self.root = root
        self.current = None
        self.visit(root)


_SHARED_LEAVES = (gast.expr_context, gast.operator, gast.unaryop, gast.cmpop, gast.boolop)


def annotate_origins(node, filename, lines, function_name):
    """Set anno.Basic.ORIGIN on every node under `node` (nodes without a position of their
    own, like `arguments`, get their parent's); operator and context leaves are skipped."""
    _OriginAnnotator(filename, lines, function_name).run(node)
    return node


_FUTURE_MASK = freshness._FUTURE_MASK


def parse_entity(fn):
    """Parse a function, method or lambda into (node, source, info).

    node: the gast FunctionDef (decorators removed) or gast.Lambda, every node annotated
    with anno.Basic.ORIGIN in the user's file; source: the entity's own source text
    (dedented); info: an EntityInfo. Raises errors.ConversionError with a message saying
    what to do when the source cannot be had.
    """
    fn = _unwrap_callable(fn)
    lines, command = _source_lines(fn)
    try:
        py_node = _locate(fn, lines)
        freshness.check_unchanged(fn, py_node, _describe)
    except errors.ConversionError:
        if command:   # not the -c text's code after all (exec of other text in __main__)
            raise _no_source(fn) from None
        raise
    code = fn.__code__
    if isinstance(py_node, ast.Lambda):
        source = ast.get_source_segment("".join(lines), py_node, padded=False) or ""
    else:
        source = _dedent_lines(lines[py_node.lineno - 1:py_node.end_lineno])
    # a fresh tree (the cached file tree stays intact), ORIGIN set in the same pass
    node = bridge.to_gast(py_node, (code.co_filename, lines, fn.__name__))
    if not isinstance(node, gast.Lambda):
        node.decorator_list = []
    info = EntityInfo(name=fn.__name__, qualname=fn.__qualname__, filename=code.co_filename,
                      lineno=py_node.lineno, col_offset=py_node.col_offset, source_lines=lines,
                      future_flags=code.co_flags & _FUTURE_MASK)
    return node, source, info
