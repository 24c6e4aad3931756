"""Is the source text autograph reads the text a function was compiled from?

autograph reads a function's source through linecache, that is from its file *now*. When
the file was edited after the module was imported, the text is no longer the code that
runs, and converting it would silently compute something else: `check_unchanged(fn,
node)` refuses that case with a ConversionError. It guards against a rare case, so it must
never refuse the common one; it answers in layers, cheapest and surest first:

1. code an import hook compiled from the module's file (pytest's assertion rewriting, a
   zip import, ...) is trusted: the hook may compile other code than the text, so nothing
   can be compared;
2. the file has not been modified since this process started (its mtime is older than
   the process, with a margin for clock resolution) while linecache's lines are the file's
   current ones: whatever this process imported from it is that text (Linux, where
   /proc tells the process's start), unless an unchecked-hash .pyc was imported instead;
3. the module's .pyc vouches for the file: its timestamp header holds the file's mtime and
   size, or its checked-hash header the hash of the file's bytes (an unchecked-hash .pyc
   vouches for nothing: Python never compared it with the source);
4. otherwise (a file written while the process runs, exec of text, notebook cells) the
   text is compiled again, as the original was, and the two code objects compared by what
   the text decides: names, constants, operations and their arguments, nested code. How
   the compiler encoded them is left out: jump offsets and the EXTENDED_ARG prefixes long
   jumps need, NOPs, caches, and the LOAD_METHOD / LOAD_ATTR and PUSH_NULL choices that
   depend on the module around the function (a call on an imported module is compiled
   one way at module level and another inside a function). Only an edit that changes
   what the function computes makes them differ; a comment or a blank line does not.
"""

import ast
import importlib.machinery
import importlib.util
import linecache
import os
import re
import types

from autograph import errors

_PLAIN_LOADERS = (importlib.machinery.SourceFileLoader, importlib.machinery.SourcelessFileLoader)
_MARGIN_S = 2.0   # /proc's process start has 1 s resolution (btime) and 10 ms ticks

_FUTURE_MASK = 0
for _feature in __import__("__future__").all_feature_names:
    _FUTURE_MASK |= getattr(__import__("__future__"), _feature).compiler_flag


def _read_process_start():
    """Wall-clock time this process started (Linux), or None where that is not known."""
    try:
        with open("/proc/self/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
        ticks = int(fields[19])   # field 22 of stat(5): start time in clock ticks after boot
        with open("/proc/stat") as f:
            btime = next(int(line.split()[1]) for line in f if line.startswith("btime "))
        return btime + ticks / os.sysconf("SC_CLK_TCK")
    except (OSError, ValueError, IndexError, StopIteration, AttributeError):
        return None


PROCESS_START = _read_process_start()


def _pyc_flags(fn):
    """The flags word of the module's .pyc header (0: timestamp, 0b11: checked hash,
    0b01: unchecked hash), or None without a readable .pyc."""
    cached = fn.__globals__.get("__cached__")
    try:
        with open(cached, "rb") as f:
            header = f.read(8)
    except (OSError, TypeError):
        return None
    return int.from_bytes(header[4:8], "little") if len(header) == 8 else None


# -- the layers -------------------------------------------------------------------------------

def _compiled_by_hook(fn):
    """Layer 1: `fn` comes from its module's file, which a loader of its own compiled
    (text that exec() compiled in such a module is compared as any other)."""
    g = fn.__globals__
    loader = g.get("__loader__")
    return (loader is not None and not isinstance(loader, _PLAIN_LOADERS)
            and g.get("__file__") == fn.__code__.co_filename)


def _loaded_from_file(fn):
    """Was `fn`'s module loaded from its code's file by Python's own source loader (a
    module, or a script run as __main__), so that the code is the file's text at import?"""
    g = fn.__globals__
    return (g.get("__file__") == fn.__code__.co_filename
            and isinstance(g.get("__loader__"), importlib.machinery.SourceFileLoader))


def _older_than_process(fn):
    """Layer 2: the file is unchanged since this process started (and linecache holds it)."""
    if PROCESS_START is None or not _loaded_from_file(fn):
        return False
    if _pyc_flags(fn) == 0b01:   # an unchecked-hash .pyc may hold older code than the file
        return False
    filename = fn.__code__.co_filename
    try:
        st = os.stat(filename)
    except OSError:
        return False
    if st.st_mtime >= PROCESS_START - _MARGIN_S:
        return False
    entry = linecache.cache.get(filename)
    if entry is not None and len(entry) == 4 and entry[1] is not None:
        return entry[0] == st.st_size and entry[1] == st.st_mtime
    return True


def _bytecode_vouches(fn):
    """Layer 3: the module's .pyc records the file's state now (mtime and size, or the
    hash of its bytes)."""
    cached = fn.__globals__.get("__cached__")
    filename = fn.__code__.co_filename
    if not cached or fn.__globals__.get("__file__") != filename:
        return False
    try:
        with open(cached, "rb") as f:
            header = f.read(16)
        st = os.stat(filename)
    except OSError:
        return False
    if len(header) < 16:
        return False
    flags = int.from_bytes(header[4:8], "little")
    if flags == 0:   # timestamp-based
        return (int.from_bytes(header[8:12], "little") == int(st.st_mtime) & 0xFFFFFFFF
                and int.from_bytes(header[12:16], "little") == st.st_size & 0xFFFFFFFF)
    if flags == 0b11:   # checked-hash: Python compared it with the source at import
        try:
            with open(filename, "rb") as f:
                return importlib.util.source_hash(f.read()) == header[8:16]
        except OSError:
            return False
    return False   # unchecked-hash, or unknown: the code comparison decides


# -- layer 4: compile again and compare -------------------------------------------------------

_SCAFFOLDING = frozenset({"EXTENDED_ARG", "NOP", "CACHE", "PUSH_NULL", "RESUME"})
_AS_ATTR = {"LOAD_METHOD": "LOAD_ATTR"}
_DIRECTION = re.compile(r"_(FORWARD|BACKWARD)(?=_|$)")
_jumps = None   # the jump opcodes (dis is imported by the last layer only)


def operations(code):
    """What the text of `code` decides about its operations: (name, argument) pairs, with
    the encoding choices (see the module docstring) left out."""
    import dis
    global _jumps
    if _jumps is None:
        _jumps = frozenset(dis.hasjrel) | frozenset(dis.hasjabs)
    out = []
    for i in dis.get_instructions(code):
        name = i.opname
        if name in _SCAFFOLDING:
            continue
        name = _DIRECTION.sub("", _AS_ATTR.get(name, name))
        if i.opcode in _jumps:
            arg = None
        elif isinstance(i.argval, types.CodeType):   # compared on their own, lines aside
            arg = ("code", i.argval.co_name)
        else:   # (argval: a name, not the raw arg whose low bits say how NULL is pushed)
            arg = i.argval
        out.append((name, arg))
    return out


def same_code(a, b):
    """Do code objects `a` and `b` run the same program (line numbers and encoding aside)?"""
    if (a.co_varnames != b.co_varnames or a.co_freevars != b.co_freevars
            or a.co_cellvars != b.co_cellvars or len(a.co_consts) != len(b.co_consts)
            or a.co_argcount != b.co_argcount or a.co_kwonlyargcount != b.co_kwonlyargcount):
        return False
    if a.co_code != b.co_code and operations(a) != operations(b):
        return False
    for x, y in zip(a.co_consts, b.co_consts):
        if isinstance(x, types.CodeType) and isinstance(y, types.CodeType):
            if not same_code(x, y):
                return False
        elif x == getattr(a, "co_qualname", None) and y == getattr(b, "co_qualname", None):
            continue   # a class body's own __qualname__ (what encloses it may differ)
        elif type(x) is not type(y) or repr(x) != repr(y):
            return False
    return True


def _owner_class(fn):
    parts = fn.__qualname__.split(".")[:-1]
    while parts:
        if parts[-1] == "<locals>":
            parts = parts[:-2]
            continue
        return parts[-1]
    return None


def _recompiled(fn, py_node):
    """The text of `py_node` compiled as `fn`'s code was: inside a factory whose
    parameters are the free variables (closures compile the same way), in a class of the
    owner's name (private names are mangled by the class they are written in), with the
    same `from __future__` flags. None when it does not compile."""
    code = fn.__code__
    name = code.co_name
    inner = ast.Return(value=py_node) if isinstance(py_node, ast.Lambda) else py_node
    factory = ast.FunctionDef(name="__autograph_check", args=ast.arguments(
        posonlyargs=[], args=[ast.arg(arg=v) for v in code.co_freevars], kwonlyargs=[],
        kw_defaults=[], defaults=[]), body=[], decorator_list=[], returns=None)
    if name != "<lambda>" and name not in code.co_freevars:
        factory.body.append(ast.Global(names=[name]))   # as a module-level def sees itself
    factory.body.append(inner)
    module = ast.Module(body=[factory], type_ignores=[])
    owner = _owner_class(fn)
    if owner is not None:
        module.body = [ast.ClassDef(name=owner, bases=[], keywords=[], body=[factory],
                                    decorator_list=[])]
    for n in (module, factory, factory.args, *factory.args.args, *module.body, *factory.body):
        if n is not py_node and hasattr(n, "_attributes") and "lineno" in n._attributes:
            n.lineno, n.col_offset = py_node.lineno, 0
            n.end_lineno, n.end_col_offset = py_node.lineno, 0
    try:
        return compile(module, code.co_filename, "exec",
                       flags=code.co_flags & _FUTURE_MASK, dont_inherit=True)
    except (SyntaxError, ValueError, TypeError):
        return None


def compiles_the_same(fn, py_node):
    """Layer 4: does the text of `py_node`, compiled again, give `fn`'s code? (True when
    it cannot be compiled: the conversion itself then says what is wrong.)"""
    compiled = _recompiled(fn, py_node)
    if compiled is None:
        return True
    code = fn.__code__
    todo = [compiled]
    while todo:
        c = todo.pop()
        if c.co_name == code.co_name and same_code(c, code):
            return True
        todo.extend(k for k in c.co_consts if isinstance(k, types.CodeType))
    return False


def check_unchanged(fn, py_node, describe):
    """Raise errors.ConversionError when the text of `py_node` (an ast def or lambda read
    from `fn`'s file now) is not the code `fn` runs; `describe(fn)` names it."""
    if _compiled_by_hook(fn) or _older_than_process(fn) or _bytecode_vouches(fn):
        return
    if compiles_the_same(fn, py_node):
        return
    code = fn.__code__
    raise errors.ConversionError(
        f"cannot convert {describe(fn)}: the source text of {code.co_filename} at line "
        f"{code.co_firstlineno} no longer matches the code that runs (the file changed "
        "after it was imported), and converting the new text would compute something else. "
        "Reload the module (importlib.reload) or restart Python. ag.function traces it "
        "unconverted meanwhile (with a warning), as for any function it cannot convert.")
