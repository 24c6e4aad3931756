"""A persistent cache of converted source, so a second process skips parsing and converting.

Converting a function (parse, the passes, unparse) is most of a fresh process's first call,
and it needs gast and some 50 modules of autograph. What conversion produces is only text:
the generated module, the converted function's source (what `to_code` shows) and the map
from generated lines to the user's. This cache keeps exactly that, one JSON file per
conversion, and loads it back with autograph.source.binding, which needs neither.

Safe by construction: a file holds only source text autograph generated and numbers; it is
compiled, never unpickled or evaluated as data, and it is found only by a key that names
everything the conversion read:

- the text of the user's file (the function's own source is in it; any edit changes it),
  the function's line, qualified name, free variables and future flags;
- autograph's version and its converters' own files (name, size, time) and Python's
  version, so an upgrade or an edited pass never meets an old conversion;
- what each global or closure name the code reads stood for when it was converted (a
  module's name, a function's or class's module and qualified name, an object's type):
  the passes resolve calls through them (a call of a NumPy function is left as it is).

Where: `$AUTOGRAPH_CACHE_DIR`, else the user cache directory (`$XDG_CACHE_HOME/autograph`
or `~/.cache/autograph`; `%LOCALAPPDATA%\\autograph` on Windows). `AUTOGRAPH_CACHE=0`, `AUTOGRAPH_CACHE_DIR=off`
or `ag.config.set_disk_cache(False)` turns it off. Lambdas and functions without a source
file are not cached. A file that cannot be read or written is ignored (the conversion runs
as before).
"""

import atexit
import builtins
import json
import linecache
import os
import sys
import types

from autograph import config

FORMAT = 1
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


def _sha256():
    """A new SHA-256 hash from CPython's own small module (_sha2 from 3.12, _sha256
    before): importing hashlib loads OpenSSL, which costs a first call more than the key."""
    for name in ("_sha2", "_sha256"):
        try:
            return __import__(name).sha256()
        except ImportError:
            pass
    import hashlib
    return hashlib.sha256()


def key(fn):
    """The cache key of plain function `fn`'s conversion, or None when it is not cached."""
    code = fn.__code__
    filename = code.co_filename
    if fn.__name__ == "<lambda>" or filename.startswith("<") or not os.path.isfile(filename):
        return None
    linecache.checkcache(filename)    # the file as it is now (an edit changes the key)
    lines = linecache.getlines(filename, fn.__globals__)
    if not lines:
        return None
    h = _sha256()
    parts = [str(FORMAT), _autograph_fingerprint(), sys.version, filename, str(code.co_firstlineno),
             fn.__qualname__, ",".join(code.co_freevars), str(code.co_flags)]
    for part in parts:
        h.update(part.encode("utf-8", "surrogatepass") + b"\0")
    h.update("".join(lines).encode("utf-8", "surrogatepass") + b"\0")
    closure = dict(zip(code.co_freevars, fn.__closure__ or ()))
    for name in sorted(_names(code)):
        if name in closure:
            try:
                value = closure[name].cell_contents
            except ValueError:   # an empty cell
                value = _EMPTY
        else:
            value = fn.__globals__.get(name, getattr(builtins, name, _EMPTY))
        h.update(f"{name}={_describe(value)}\0".encode("utf-8", "surrogatepass"))
    return h.hexdigest()


_EMPTY = object()


def _names(code):
    """The global and free names `code` and the code nested in it read."""
    names = set(code.co_names) | set(code.co_freevars)
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            names |= _names(const)
    return names


def _describe(value):
    """What a name stood for, as far as conversion can tell: stable across processes."""
    if value is _EMPTY:
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
    """autograph's version and the size and time of the files conversion runs."""
    global _fingerprint
    if _fingerprint is None:
        import autograph
        root = os.path.dirname(os.path.abspath(autograph.__file__))
        parts = [getattr(autograph, "__version__", "?")]
        for sub in ("converters", "analysis", "source"):
            try:
                entries = sorted(os.scandir(os.path.join(root, sub)), key=lambda e: e.name)
            except OSError:
                continue
            for entry in entries:
                if entry.name.endswith(".py"):
                    st = entry.stat()
                    parts.append(f"{sub}/{entry.name}:{st.st_size}:{st.st_mtime_ns}")
        _fingerprint = "|".join(parts)
    return _fingerprint


def _path(k):
    folder = directory()
    return None if folder is None or k is None else os.path.join(folder, k[:2], k + ".json")


def load(k):
    """The record stored under key `k`, or None."""
    path = _path(k)
    if path is None:
        return None
    try:
        with open(path, encoding="utf-8") as f:
            record = json.load(f)
    except (OSError, ValueError):
        return None
    if not isinstance(record, dict) or record.get("format") != FORMAT:
        return None
    return record


_pending = []          # (path, record) not written yet
_PENDING_MAX = 32      # written in a batch when this many wait (and at exit)


def store(k, record):
    """Write `record` (module_text, source_text, inner_name, cls, generated, flags, lines)
    under key `k`: at exit, or when `_PENDING_MAX` records wait, so that a first call does
    not pay for building the origin map and writing the file; quietly nothing when the
    directory cannot be written."""
    path = _path(k)
    if path is None:
        return
    if not _pending:
        atexit.register(flush)
    _pending.append((path, record))
    if len(_pending) >= _PENDING_MAX:
        flush()


def flush():
    """Write the records waiting to be stored."""
    while _pending:
        path, record = _pending.pop()
        _write(path, record)
    atexit.unregister(flush)


def _write(path, record):
    try:
        lines = record["lines"]() if callable(record["lines"]) else record["lines"]
        text = json.dumps({
            "format": FORMAT, "module_text": record["module_text"],
            "source_text": record["source_text"], "inner_name": record["inner_name"],
            "cls": record["cls"], "generated": list(record["generated"]),
            "flags": record["flags"],
            "lines": {str(line): list(loc) for line, loc in lines.items()}})
        os.makedirs(os.path.dirname(path), exist_ok=True)
        tmp = f"{path}.{os.getpid()}.tmp"
        with open(tmp, "w", encoding="utf-8") as f:
            f.write(text)
        os.replace(tmp, path)   # readers see the whole file or none
    except Exception:   # a full disk, a read-only home, an unexpected map: no cache entry
        pass


def origin_map(record):
    """The record's origin map: generated line -> LineLocation."""
    from autograph.source.origin import LineLocation
    return {int(line): LineLocation(*loc) for line, loc in record["lines"].items()}
