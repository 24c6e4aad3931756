"""One file holding the bytecode of the modules a first call needs, so a fresh process finds
and reads them at once.

A fresh process's first call of a small function imports about 33 of autograph's modules.
Through the standard machinery each import costs some 100-170 microseconds before the
module's own code runs (the path finders search, a .pyc is opened, read and checked), about
5 ms in all: half of what autograph may add to `import numpy` (issue 16). This module keeps
the compiled code of those modules in one file and serves it from a finder placed first on
`sys.meta_path`: one read for all of them, then one `stat` per module to check that its
source is unchanged. Everything else is importlib's own: module locks, `sys.modules`, parent
packages, `__spec__`, `__file__`; the loader is a `SourceFileLoader`, so tracebacks,
`inspect`, `linecache` and `importlib.reload` read the real source files.

It follows Python's rules for bytecode:

- the file lives beside the package's .pyc files (`__pycache__`, or under
  `sys.pycache_prefix`) and names the interpreter's cache tag; its header holds the
  bytecode magic number and the optimization level, and a file with other ones is ignored;
- it is written only where bytecode may be written (not under `python -B` or
  `PYTHONDONTWRITEBYTECODE`), atomically: a new temporary file under a random name, created
  with O_EXCL|O_NOFOLLOW (nothing planted at the name is followed), then renamed;
- a module whose source differs from the one compiled (size or modification time, to the
  nanosecond) is imported the normal way, and the file is written again.

When: after a process's first call of a Function, if a module that trace needed was imported the
normal way (there was no file, or it lacked the module, or the module changed), the file is
written again with the modules in it that are still current and those imported since.
`AUTOGRAPH_BUNDLE=0` turns it off (neither read nor written).
"""

import _frozen_importlib as _bootstrap
import _frozen_importlib_external as _external
import _thread
import marshal
import os
import sys

_PACKAGE = os.path.dirname(os.path.abspath(__file__))
_HEADER = b"autograph-bundle\n" + _external.MAGIC_NUMBER + bytes([sys.flags.optimize & 0xff])

_index = {}      # module name -> what _read gives
_served = set()  # names imported from the file in this process
_fd = None       # the file, open while the process runs
pending = True   # until the first call of the process is done


def _enabled():
    return os.environ.get("AUTOGRAPH_BUNDLE", "").strip().lower() not in ("0", "off", "false", "no")


def path():
    """Where the file is for this interpreter, or None where it keeps no bytecode."""
    try:
        init = _external.cache_from_source(os.path.join(_PACKAGE, "__init__.py"))
    except NotImplementedError:   # sys.implementation.cache_tag is None
        return None
    return os.path.join(os.path.dirname(init), f"first-call.{sys.implementation.cache_tag}.bundle")


def _read(file):
    """The file's index, module name -> (path relative to the package, mtime_ns, size,
    is_package, (start, end) of its code in the file), and the file's open descriptor:
    a module's code is read when it is imported, so modules the process does not import
    (the compiler's, after a conversion has been cached) cost nothing."""
    fd = os.open(file, os.O_RDONLY | getattr(os, "O_BINARY", 0))
    try:
        head = os.read(fd, len(_HEADER) + 4)
        if head[:len(_HEADER)] != _HEADER or len(head) < len(_HEADER) + 4:
            raise ValueError("not a bundle")
        size = int.from_bytes(head[len(_HEADER):], "little")
        index = marshal.loads(os.read(fd, size))
        if type(index) is not dict:
            raise ValueError("not a bundle")
        base = len(head) + size
        return {name: (*entry[:4], (base + entry[4], base + entry[5]))
                for name, entry in index.items()}, fd
    except BaseException:
        os.close(fd)
        raise


_seek_lock = _thread.allocate_lock()


def _code(span):
    """The code object stored at `span` of the open file."""
    start, end = span
    if hasattr(os, "pread"):
        data = os.pread(_fd, end - start, start)
    else:   # Windows: one seek and read at a time
        with _seek_lock:
            os.lseek(_fd, start, os.SEEK_SET)
            data = os.read(_fd, end - start)
    return marshal.loads(data)


class _Loader(_external.SourceFileLoader):
    """A source file's loader whose code is the file's when the source is unchanged."""

    def __init__(self, fullname, path, span):
        super().__init__(fullname, path)
        self.span = span

    def get_code(self, fullname):
        span, self.span = self.span, None
        if span is not None and fullname == self.name:
            try:
                code = _code(span)
            except (OSError, ValueError, EOFError, TypeError):
                code = None
            if code is not None:
                _served.add(fullname)
                return code
        return super().get_code(fullname)


def _relative_path(name, is_package):
    """Where module `name` of this package lives, relative to it (a/b.py, a/b/__init__.py)."""
    parts = name.split(".")[1:]
    return os.path.join(*parts, "__init__.py") if is_package else os.path.join(*parts) + ".py"


class _Finder:
    """First on sys.meta_path: a spec for each module the file holds whose source is the
    one compiled (size and modification time), else nothing (the normal finders go on)."""

    @staticmethod
    def find_spec(name, path=None, target=None):
        entry = _index.get(name)
        if entry is None:
            return None
        relative, mtime_ns, size, is_package, span = entry
        if relative != _relative_path(name, is_package):
            return None    # a module known by a second name (sys.modules alias): not ours to make
        origin = os.path.join(_PACKAGE, relative)
        try:
            st = os.stat(origin)
        except OSError:
            return None
        if st.st_mtime_ns != mtime_ns or st.st_size != size:
            return None
        spec = _bootstrap.ModuleSpec(name, _Loader(name, origin, span), origin=origin,
                                     is_package=is_package)
        if is_package:
            spec.submodule_search_locations = [os.path.dirname(origin)]
        spec.has_location = True
        return spec

    @staticmethod
    def invalidate_caches():
        pass


def install():
    """Read the file and put its finder first on sys.meta_path (once, at `import autograph`).
    A file that is missing, not ours or damaged is ignored: imports go the normal way."""
    if not _enabled() or _Finder in sys.meta_path:
        return
    file = path()
    if file is None:
        return
    global _fd
    try:
        entries, _fd = _read(file)
    except (OSError, ValueError, EOFError, TypeError):
        return
    _index.update(entries)
    sys.meta_path.insert(0, _Finder)


def first_call_done():
    """After the process's first call: write the file again when a module imported so far
    came the normal way (once per process; never raises)."""
    global pending
    if not pending:
        return
    pending = False
    if sys.dont_write_bytecode or not _enabled():
        return
    try:
        _write()
    except Exception:   # a cache: a file that cannot be written is no error
        pass


def _ours(module):
    spec = getattr(module, "__spec__", None)
    origin = getattr(spec, "origin", None)
    return (isinstance(getattr(spec, "loader", None), _external.SourceFileLoader)
            and isinstance(origin, str) and origin.endswith(".py")
            and os.path.abspath(origin).startswith(_PACKAGE + os.sep))


def _write():
    if all(name in _served or name == __name__ or not name.startswith("autograph.")
           for name in list(sys.modules)):
        return   # all came from the file
    file = path()
    # (a module under a second name, `sys.modules[alias] = module` as
    # autograph.function.trace_type is, is kept under its own name only)
    here = [name for name, module in list(sys.modules.items())
            if name.startswith("autograph.") and name != __name__ and _ours(module)
            and module.__name__ == name]
    if file is None or all(name in _served for name in here):
        return
    old = _index
    index, blobs, offset = {}, [], 0
    for name in sorted(set(here) | set(old)):
        module = sys.modules.get(name)
        if module is not None and module.__name__ != name:
            continue
        origin = (os.path.abspath(module.__spec__.origin) if module is not None and _ours(module)
                  else os.path.join(_PACKAGE, old[name][0]))
        try:
            st = os.stat(origin)
            code = _external.SourceFileLoader(name, origin).get_code(name)
        except (OSError, ImportError, SyntaxError):
            continue   # gone or broken: left out
        if code is None:
            continue
        blob = marshal.dumps(code)
        index[name] = (os.path.relpath(origin, _PACKAGE), st.st_mtime_ns, st.st_size,
                       os.path.basename(origin) == "__init__.py", offset, offset + len(blob))
        blobs.append(blob)
        offset += len(blob)
    head = marshal.dumps(index)
    os.makedirs(os.path.dirname(file), exist_ok=True)
    # a new file under a random name (O_EXCL|O_NOFOLLOW: a file or symlink planted at the
    # name is never written through), renamed over the old one: readers see all or nothing
    temporary = f"{file}.{os.urandom(6).hex()}.tmp"
    fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0)
                 | getattr(os, "O_BINARY", 0), 0o666)
    try:
        with open(fd, "wb") as f:
            f.write(b"".join([_HEADER, len(head).to_bytes(4, "little"), head, *blobs]))
        os.replace(temporary, file)
    except BaseException:
        os.unlink(temporary)
        raise
