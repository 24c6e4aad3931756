"""A persistent cache of converted source, so a second process skips parsing and converting.

Converting a function (parse, the passes, unparse) is most of a fresh process's first call,
and it needs gast and some 50 modules of autograph. What conversion produces is only text:
the generated module, the converted function's source (what `to_code` shows) and the map
from generated lines to the user's. This cache keeps exactly that, one text file per
conversion, and loads it back with autograph.source.origin.make_function, which needs neither.

The file is a list of length-prefixed text fields (`encode`/`decode`: no json, whose
import alone costs a fresh process more than reading the file), headed by the format and
the file's own key, which a hit checks: a file that is not ours, is cut short or was
stored under another key is ignored.

Safe by construction: a file holds only source text autograph generated and numbers; it is
compiled, never unpickled or evaluated as data, and it is found only by a key that names
everything the conversion read:

- the text of the user's file (the function's own source is in it; any edit changes it),
  the function's line, qualified name, free variables and future flags;
- autograph's version and Python's, so an upgrade never meets an old conversion; where
  autograph is not an installed package (a dev checkout, an editable install), also its
  converters' own files (name, size, time), so an edited pass never does either;
- what each global or closure name the code reads stood for when it was converted (a
  module's name, a function's or class's module and qualified name, an object's type):
  the passes resolve calls through them (a call of a NumPy function is left as it is).

Where: `$AUTOGRAPH_CACHE_DIR`, else the user cache directory (`$XDG_CACHE_HOME/autograph`
or `~/.cache/autograph`; `%LOCALAPPDATA%\\autograph` on Windows). `AUTOGRAPH_CACHE=0`, `AUTOGRAPH_CACHE_DIR=off`
or `ag.config.set_disk_cache(False)` turns it off. Lambdas and functions without a source
file are not cached. A file that cannot be read or written is ignored (the conversion runs
as before).

Nothing in the directory runs unless this user's autograph wrote it (autograph.source.
cache_auth): a directory that another user owns or others may write is not used; entries
are written through new files that never follow a symlink and renamed into place; each is
signed with an HMAC-SHA256 under a per-user key kept outside the directory, and an entry
whose signature does not verify is ignored (and counted: `cache_auth.refused`).
"""

import _imp
import atexit
import builtins
import linecache
import os
import stat
import sys
import types

from autograph import config
from autograph.source import cache_auth

FORMAT = 2
MAGIC = "autograph-cache"
_fingerprint = None


def directory():
    """The cache directory, or None when the cache is off."""
    if not config.disk_cache_enabled():
        return None
    if os.environ.get("AUTOGRAPH_CACHE", "").strip().lower() in ("0", "off", "false", "no"):
        return None
    path = os.environ.get("AUTOGRAPH_CACHE_DIR")
    if path is not None:
        return None if path.strip().lower() in ("", "0", "off", "none") else path
    if os.name == "nt":
        base = os.environ.get("LOCALAPPDATA") or os.path.expanduser("~")
    else:
        base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "autograph")


# Two SipHash-1-3 keys: the key is 128 bits of CPython's own source hash (what hash-based
# .pyc files use; built in, so a first call loads no hashing extension: importing _sha2 or
# hashlib costs more than the whole key). Not a defence against an attacker who can
# write the cache directory; such a one could write the files themselves.
_HASH_KEYS = (0x6175746f67726170, 0x68646973636163)


class _Hash:
    """Collects the key's bytes; `hexdigest` hashes them once."""

    __slots__ = ("parts",)

    def __init__(self):
        self.parts = []

    def update(self, data):
        self.parts.append(data)

    def hexdigest(self):
        data = b"".join(self.parts)
        if not hasattr(_imp, "source_hash"):   # an interpreter without it: SHA-256
            import hashlib
            return hashlib.sha256(data).hexdigest()
        return "".join(_imp.source_hash(k, data).hex() for k in _HASH_KEYS)


def key(fn):
    """The cache key of plain function `fn`'s conversion, or None when it is not cached."""
    code = fn.__code__
    filename = code.co_filename
    if fn.__name__ == "<lambda>" or filename.startswith("<"):
        return None
    text = _text_hash(filename)   # its bytes: an edit changes the key
    if text is None:
        return None
    h = _Hash()
    parts = [str(FORMAT), _autograph_fingerprint(), sys.version, filename, str(code.co_firstlineno),
             fn.__qualname__, ",".join(code.co_freevars), str(code.co_flags), text]
    for part in parts:
        h.update(part.encode("utf-8", "surrogatepass") + b"\0")
    closure = dict(zip(code.co_freevars, fn.__closure__ or ()))
    for name in sorted(_names(code)):
        h.update(f"{name}={_describe(bound_value(fn, closure, name))}\0".encode(
            "utf-8", "surrogatepass"))
    return h.hexdigest()


# file name -> ((size, mtime), the hash of its bytes): the trace cache asks for the key of a
# function whose conversion asked a moment before; a file is read again only once changed
_texts = {}


def _text_hash(filename):
    """The hash of file `filename`'s bytes, or None (no such file, or an empty one)."""
    try:
        st = os.stat(filename)
    except OSError:
        return None
    if not stat.S_ISREG(st.st_mode):
        return None
    seen = (st.st_size, st.st_mtime_ns)
    known = _texts.get(filename)
    if known is not None and known[0] == seen:
        return known[1]
    linecache.checkcache(filename)    # conversion reads the file as it is now
    try:
        with open(filename, "rb") as f:
            text = f.read()
    except OSError:
        return None
    if not text:
        return None
    h = _Hash()
    h.update(text)
    _texts[filename] = (seen, h.hexdigest())
    return _texts[filename][1]


EMPTY = object()   # what an unbound name, or an empty closure cell, stands for


def bound_value(fn, closure, name):
    """What `name` stands for in `fn` (`closure`: its free variables' cells by name): the
    closure cell's content, else the global, else the builtin, else EMPTY."""
    if name in closure:
        try:
            return closure[name].cell_contents
        except ValueError:   # an empty cell
            return EMPTY
    return fn.__globals__.get(name, getattr(builtins, name, EMPTY))


def _names(code):
    """The global and free names `code` and the code nested in it read."""
    names = set(code.co_names) | set(code.co_freevars)
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            names |= _names(const)
    return names


def _describe(value):
    """What a name stood for, as far as conversion can tell: stable across processes."""
    if value is EMPTY:
        return "-"
    if isinstance(value, types.ModuleType):
        return "module:" + value.__name__
    qualname = getattr(value, "__qualname__", None) or getattr(value, "__name__", None)
    module = getattr(value, "__module__", None)
    if isinstance(qualname, str) and (callable(value) or isinstance(value, type)):
        return f"{type(value).__name__}:{module}.{qualname}"
    t = type(value)
    return f"object:{t.__module__}.{t.__qualname__}"


def _autograph_fingerprint():
    """autograph's version; outside an installed package also the size and time of the
    files conversion runs (an edit in a dev checkout must never meet an old conversion;
    an installed package changes only with its version)."""
    global _fingerprint
    if _fingerprint is None:
        import autograph
        root = checkout_root()
        parts = [getattr(autograph, "__version__", "?")]
        if root:
            for sub in CONVERSION_CODE:
                path = os.path.join(root, sub)
                if sub.endswith(".py"):
                    parts.append(_stamp(sub, path))
                    continue
                try:
                    entries = sorted(os.scandir(path), key=_name)
                except OSError:
                    continue
                for entry in entries:
                    if entry.name.endswith(".py"):
                        parts.append(_stamp(f"{sub}/{entry.name}", entry.path))
        _fingerprint = "|".join(parts)
    return _fingerprint


# the code whose decisions are written into converted source: the converters and analyses,
# and the tables they read (runtime/numpy's CONVERTS, in-place functions, random and SciPy
# functions called directly, the builtins operators replace, which files are libraries)
CONVERSION_CODE = ("converters", "analysis", "source", "runtime/numpy",
                   "operators/py_builtins.py", "frames.py", "api.py")


def _stamp(name, path):
    try:
        st = os.stat(path)
    except OSError:
        return f"{name}:-"
    return f"{name}:{st.st_size}:{st.st_mtime_ns}"


def checkout_root():
    """autograph's folder where it is a checkout someone may edit, else '' (an installed
    package changes only with its version)."""
    import autograph
    from autograph import frames
    root = os.path.dirname(os.path.abspath(autograph.__file__))
    return "" if _installed(root, frames) else root


def _name(entry):
    return entry.name


def _installed(root, frames):
    """Whether autograph's folder `root` is an installed package's (in site-packages,
    written by pip, changed only by another install), not a checkout someone edits."""
    return (os.path.basename(os.path.dirname(root)) in ("site-packages", "dist-packages")
            and frames.is_library(os.path.join(root, "__init__.py")))


def _path(k, suffix=".agc"):
    folder = directory()
    return None if folder is None or k is None else os.path.join(folder, k[:2], k + suffix)


# the record's fields in file order: str, or None (cls), or a list of str (generated), int (flags)
_FIELDS = ("module_text", "source_text", "inner_name", "cls", "generated", "flags")


def encode(k, record, lines):
    """The file text of `record` stored under key `k`; `lines`: the origin map
    (generated line -> (filename, lineno, col_offset, source_line, function_name))."""
    items = [MAGIC, str(FORMAT), k]
    cls = record["cls"]
    items += [record["module_text"], record["source_text"], record["inner_name"],
              "" if cls is None else "=" + cls, " ".join(record["generated"]),
              str(int(record["flags"]))]
    for line, loc in sorted(lines.items()):
        filename, lineno, col, source_line, function_name = loc
        items += [str(line), filename, str(lineno), "" if col is None else str(col),
                  "" if source_line is None else "=" + source_line, function_name]
    return "".join(f"{len(item)}\n{item}\n" for item in items)


def decode(text, k=None):
    """The record in file text `text` (with "lines": a list of str, 6 per generated line),
    or None when it is not a complete file of this format (stored under key `k`, if given)."""
    items, pos, end = [], 0, len(text)
    try:
        while pos < end:
            newline = text.index("\n", pos)
            n = int(text[pos:newline])
            start = newline + 1
            if n < 0 or start + n >= end or text[start + n] != "\n":
                return None
            items.append(text[start:start + n])
            pos = start + n + 1
    except ValueError:
        return None
    if len(items) < 9 or items[0] != MAGIC or items[1] != str(FORMAT) or (len(items) - 9) % 6:
        return None
    if k is not None and items[2] != k:
        return None
    cls = items[6]
    try:
        flags = int(items[8])
    except ValueError:
        return None
    return {"module_text": items[3], "source_text": items[4], "inner_name": items[5],
            "cls": cls[1:] if cls else None, "generated": items[7].split(),
            "flags": flags, "lines": items[9:]}


def load(k):
    """The record stored under key `k`, or None."""
    data = read(_path(k))
    if data is None:
        return None
    try:
        text = data.decode("utf-8")
    except ValueError:
        return None
    return decode(text, k)


def read(path):
    """The bytes stored at `path` (an entry's path from `_path`) when this user's autograph
    wrote them and they are unchanged since (cache_auth: the entry is on the list of those
    written here, or its tag verifies), else None: a cache directory
    others may write, a symlink, an entry of another key or user is never read."""
    if path is None or not cache_auth.directory_ok(os.path.dirname(os.path.dirname(path))):
        return None
    return cache_auth.read_verified(path, os.path.basename(path).encode("utf-8",
                                                                      "surrogatepass"))


_pending = []          # (path, fn making the file's bytes) not written yet
_PENDING_MAX = 32      # written in a batch when this many wait (and at exit)


def store(k, record):
    """Write `record` (module_text, source_text, inner_name, cls, generated, flags, lines)
    under key `k`: at exit, or when `_PENDING_MAX` records wait, so that a first call does
    not pay for building the origin map and writing the file; quietly nothing when the
    directory cannot be written."""
    path = _path(k)
    if path is not None:
        later(path, lambda: encode(k, record, record["lines"]() if callable(record["lines"])
                                   else record["lines"]).encode("utf-8"))


def later(path, make):
    """Write the bytes `make()` gives to `path` when the records waiting are written (at
    exit, or as `store` says); nothing when `make` raises or the file cannot be written.
    (autograph.function.trace_cache stores its files this way too.)"""
    if not _pending:
        atexit.register(flush)
    _pending.append((path, make))
    if len(_pending) >= _PENDING_MAX:
        flush()


def flush():
    """Write the records waiting to be stored."""
    while _pending:
        path, make = _pending.pop()
        _write(path, make)
    atexit.unregister(flush)


def _write(path, make):
    """Store `make()`'s bytes at `path`, signed (cache_auth): through a new temporary file
    (O_EXCL|O_NOFOLLOW, a random name) renamed over the entry, in folders of this user's
    that no one else may write; nothing when any of that fails."""
    folder = os.path.dirname(path)
    if not cache_auth.directory_ok(os.path.dirname(folder), create=True) or \
            not cache_auth.subfolder_ok(folder):
        return
    tmp = None
    try:
        blob = cache_auth.sign(os.path.basename(path).encode("utf-8", "surrogatepass"), make())
        if blob is None:     # no usable key: no cache entries
            return
        tmp = cache_auth.write_new(path, blob)
        os.replace(tmp, path)   # readers see the whole file or none
        tmp = None
        cache_auth.remember(path)
    except Exception:   # a full disk, a read-only home, an unexpected map: no cache entry
        pass
    finally:
        if tmp is not None:
            try:
                os.unlink(tmp)
            except OSError:
                pass


def origin_map(record):
    """The record's origin map: generated line -> LineLocation."""
    from autograph.source.origin import LineLocation
    flat, out = record["lines"], {}
    for i in range(0, len(flat), 6):
        line, filename, lineno, col, source_line, function_name = flat[i:i + 6]
        out[int(line)] = LineLocation(filename, int(lineno), int(col) if col else None,
                                      source_line[1:] if source_line else None, function_name)
    return out
