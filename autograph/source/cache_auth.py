"""Who wrote a disk-cache entry: the checks that keep the caches of converted source (`.agc`)
and of traces (`.agt`) from running anything this user's own process did not write.

Both caches hold code that a later process compiles and runs, so a file another user could
plant or edit there is code run as this user (issue 29). Three layers, each enough alone
against a different attacker:

- **the directory**: a cache directory that another user owns, or that its group or others
  may write (a shared /tmp folder, a team share), is refused as ssh and pip refuse theirs:
  the process runs without the disk caches (counted in `refused["directory"]`, logged at
  verbosity 1). Created, it is made 0700.
- **the files**: an entry is opened with O_NOFOLLOW (a symlink at its name is not read);
  written, it goes to a temporary file created with O_CREAT|O_EXCL|O_NOFOLLOW under a random
  name in its folder (a symlink planted at any name is never followed, never written
  through), then renamed over the entry atomically (readers see a whole file or none).
- **the entries**: each file is headed by an HMAC-SHA256 of its name and bytes under a
  per-user key. The key is 32 random bytes in a file outside the cache directory
  (`$AUTOGRAPH_CACHE_KEY`, else `$XDG_CONFIG_HOME/autograph/cache-key`, else
  `~/.config/autograph/cache-key`), mode 0600, created atomically (written under a temporary
  name, then hard-linked into place, so two processes starting together agree on one key).
  An entry whose tag does not verify (written by another user, by another key, or changed
  since) is ignored and counted (`refused["entry"]`): a shared or restored
  `AUTOGRAPH_CACHE_DIR` (a CI cache) can then at worst cost a cache miss. A key file that is
  not this user's, is readable by others or is not 32 bytes turns the caches off
  (`refused["key"]`).

**Entries this user's autograph wrote here need no HMAC to be read.** After renaming an
entry into place, the writer appends its identity (device, inode, size, modification and
change times, to the nanosecond) to a list beside the key (`cache-written`, mode 0600, the
key's folder). A reader whose open entry (fstat) has an identity on that list knows this
user's autograph wrote that very file and nothing changed it since: any write or rename
sets its change time, which no process but the kernel can set back, and a restored or
copied cache is new files (or rewritten ones) with new change times. Such an entry is read
without loading SHA-256 (~0.3 ms of a fresh process, issue 29); every other entry is
checked by its tag as above. The list is no secret but is trusted like the key (a regular
file of this user's, writable by no one else; else it is ignored); it is started again
past 64 KiB (the entries it forgets fall back to their tags).

Speed (a fresh process's first call reads one or two entries): the HMAC is computed with
the interpreter's own built-in SHA-256 module (`_sha256`, `_sha2` from 3.12), not `hmac` and
`hashlib`, whose import (OpenSSL's `_hashlib`) alone costs ~4 ms; the key is read once per
process and the directory checked once per process.
"""

import os
import stat

KEY_BYTES = 32
TAG_BYTES = 32
# refusals since the process started (what verbosity 1 reports as they happen)
refused = {"directory": 0, "entry": 0, "key": 0}

_O_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_O_CLOEXEC = getattr(os, "O_CLOEXEC", 0)
_O_BINARY = getattr(os, "O_BINARY", 0)
_POSIX = hasattr(os, "geteuid")
_directories = {}    # cache directory -> whether it may be used (asked once per process)
_mac = None          # (inner, outer) SHA-256 states keyed by the per-user key, or False
_key_bytes = None    # the key, or False when there is no usable one
_written = None      # the identities of entries this user's autograph wrote (bytes)
_IDENTITY_BYTES = 40
_WRITTEN_MAX = 64 << 10


def _log(msg, *args):
    from autograph.config import log
    log(1, msg, *args)


def key_path():
    """Where this user's cache key lives (outside the cache directory)."""
    path = os.environ.get("AUTOGRAPH_CACHE_KEY")
    if path:
        return path
    if os.name == "nt":
        base = os.environ.get("APPDATA") or os.path.expanduser("~")
    else:
        base = os.environ.get("XDG_CONFIG_HOME") or os.path.join(os.path.expanduser("~"),
                                                                 ".config")
    return os.path.join(base, "autograph", "cache-key")


# -- the directory --------------------------------------------------------------------------

def _foreign(st):
    """Why stat result `st` is not safely this user's alone, or None."""
    if not _POSIX:
        return None
    if st.st_uid != os.geteuid():
        return f"it is owned by uid {st.st_uid}, not by this user ({os.geteuid()})"
    if st.st_mode & (stat.S_IWGRP | stat.S_IWOTH):
        return f"its group or others may write it (mode {stat.filemode(st.st_mode)})"
    return None


def directory_ok(root, create=False):
    """Whether cache directory `root` may be read (and written): this user's, writable by
    no one else. `create`: make it (0700) when missing. A refusal is counted and logged."""
    ok = _directories.get(root)
    if ok is not None:
        return ok
    try:
        st = os.stat(root)
    except FileNotFoundError:
        if not create:
            return False        # nothing cached yet; asked again once there is
        try:
            os.makedirs(root, mode=0o700, exist_ok=True)
            st = os.stat(root)
        except OSError:
            return False
    except OSError:
        return False
    why = "it is not a directory" if not stat.S_ISDIR(st.st_mode) else _foreign(st)
    if why is not None:
        refused["directory"] += 1
        _log("disk cache: the cache directory %s is refused, %s; running without the disk "
             "caches (make it yours with mode 0700, or set AUTOGRAPH_CACHE_DIR)", root, why)
    _directories[root] = ok = why is None
    return ok


def subfolder_ok(folder):
    """Whether `folder` (an entry's folder in the cache directory) is a real directory of
    this user's that no one else may write; made (0700) when missing."""
    try:
        os.mkdir(folder, 0o700)
        return True
    except FileExistsError:
        pass
    except OSError:
        return False
    try:
        st = os.lstat(folder)
    except OSError:
        return False
    why = "it is not a directory" if not stat.S_ISDIR(st.st_mode) else _foreign(st)
    if why is not None:
        refused["directory"] += 1
        _log("disk cache: %s is refused, %s", folder, why)
    return why is None


# -- the key and the tags -------------------------------------------------------------------

def _sha256():
    try:
        from _sha256 import sha256          # CPython <= 3.11: built in, no OpenSSL
    except ImportError:
        try:
            from _sha2 import sha256        # CPython 3.12+
        except ImportError:
            from hashlib import sha256
    return sha256


def _states():
    """(inner, outer): SHA-256 states that have hashed the key xor ipad / opad (RFC 2104),
    or False when there is no usable key."""
    global _mac
    if _mac is None:
        key = _key()
        if key is None:
            _mac = False
        else:
            sha256 = _sha256()
            block = int.from_bytes(key.ljust(64, b"\0"), "big")
            _mac = (sha256((block ^ int.from_bytes(b"\x36" * 64, "big")).to_bytes(64, "big")),
                    sha256((block ^ int.from_bytes(b"\x5c" * 64, "big")).to_bytes(64, "big")))
    return _mac


def _key():
    """This user's key, read once per process (None: unusable, the caches are off)."""
    global _key_bytes
    if _key_bytes is None:
        _key_bytes = load_key() or False
    return _key_bytes or None


def tag(name, data):
    """HMAC-SHA256 of entry `name` (bytes: its file name, which holds its key) and its
    bytes `data` under this user's key; None without a usable key."""
    states = _states()
    if not states:
        return None
    inner = states[0].copy()
    inner.update(name)
    inner.update(b"\0")
    inner.update(data)
    outer = states[1].copy()
    outer.update(inner.digest())
    return outer.digest()


def sign(name, data):
    """The file bytes of entry `name` holding `data`: its tag, then `data` (None: no key)."""
    t = tag(name, data)
    return None if t is None else t + data


def verify(name, blob):
    """The data of file bytes `blob` of entry `name` when its tag is this user's, else None
    (counted and logged)."""
    from _operator import _compare_digest
    data = blob[TAG_BYTES:]
    t = tag(name, data)
    if t is None:
        return None
    if len(blob) < TAG_BYTES or not _compare_digest(t, blob[:TAG_BYTES]):
        refused["entry"] += 1
        _log("disk cache: %s was not written by this user's autograph (or was changed "
             "since): ignored", name.decode("utf-8", "replace"))
        return None
    return data


def load_key():
    """This user's cache key (made on first use), or None when the key file is unsafe."""
    path = key_path()
    for _ in range(3):
        try:
            return _read_key(path)
        except FileNotFoundError:
            pass
        except (OSError, ValueError) as e:
            refused["key"] += 1
            _log("disk cache: the cache key %s is refused (%s); running without the disk "
                 "caches", path, e)
            return None
        try:
            _make_key(path)
        except OSError as e:
            refused["key"] += 1
            _log("disk cache: no cache key could be made at %s (%s); running without the "
                 "disk caches", path, e)
            return None
    return None


def _read_key(path):
    fd = os.open(path, os.O_RDONLY | _O_NOFOLLOW | _O_CLOEXEC | _O_BINARY)
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise ValueError("it is not a regular file")
        if _POSIX and st.st_uid != os.geteuid():
            raise ValueError(f"it is owned by uid {st.st_uid}, not by this user")
        if _POSIX and st.st_mode & 0o077:
            raise ValueError(f"its mode is {stat.filemode(st.st_mode)}, not -rw-------")
        key = os.read(fd, KEY_BYTES + 1)
    finally:
        os.close(fd)
    if len(key) != KEY_BYTES:
        raise ValueError(f"it holds {len(key)} bytes, not {KEY_BYTES}")
    return key


def _make_key(path):
    """Write a new random key at `path` atomically, unless another process did first."""
    folder = os.path.dirname(path)
    os.makedirs(folder, mode=0o700, exist_ok=True)
    why = _foreign(os.stat(folder))
    if why is not None:
        raise OSError(f"its folder {folder} is refused: {why}")
    tmp = write_new(path, os.urandom(KEY_BYTES))
    try:
        os.link(tmp, path)          # no clobbering: a key made meanwhile stays the key
    except FileExistsError:
        pass
    finally:
        os.unlink(tmp)


def write_new(path, data):
    """Write `data` to a new file beside `path` (mode 0600; created with O_EXCL|O_NOFOLLOW
    under a random name, so no planted file or symlink is ever followed) and return its
    name, for the caller to rename or link into place."""
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | _O_NOFOLLOW | _O_CLOEXEC | _O_BINARY
    for _ in range(16):
        tmp = temp_name(path)
        try:
            fd = os.open(tmp, flags, 0o600)
        except FileExistsError:      # a name taken (or planted): another random one
            continue
        try:
            with open(fd, "wb", closefd=True) as f:
                f.write(data)
        except BaseException:
            os.unlink(tmp)
            raise
        return tmp
    raise FileExistsError(f"no free temporary name beside {path}")


def temp_name(path):
    """A fresh random temporary name beside `path` (48 random bits: not guessable ahead)."""
    return f"{path}.{os.urandom(6).hex()}.tmp"


def _read_entry(path, count=True):
    """(bytes, fstat result) of the file at `path`, not following a symlink at its name;
    None when there is none (or it is no regular file). `count`: a refused file is counted
    and logged as an entry."""
    try:
        fd = os.open(path, os.O_RDONLY | _O_NOFOLLOW | _O_CLOEXEC | _O_BINARY)
    except FileNotFoundError:
        return None
    except OSError as e:        # a symlink at its name (ELOOP), no permission
        if count:
            refused["entry"] += 1
            _log("disk cache: %s is not read (%s)", path, e)
        return None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            refused["entry"] += count
            return None
        chunks, size = [], st.st_size + 1     # (one read of the size fstat gives, and one
        while True:                           #  more byte to see the end)
            chunk = os.read(fd, size)
            if not chunk:
                break
            chunks.append(chunk)
            size = 1 << 16
        return (chunks[0] if len(chunks) == 1 else b"".join(chunks)), st
    except OSError:
        return None
    finally:
        os.close(fd)


def reset():
    """Forget the checked directories, the key and the list of written entries (tests; a
    changed environment)."""
    global _mac, _written, _key_bytes
    _directories.clear()
    _mac = _written = _key_bytes = None


# -- entries this user's autograph wrote -------------------------------------------------------

def read_verified(path, name):
    """The data of the entry at `path` (its file name `name`, bytes) when this user's
    autograph wrote it and nothing changed it since, else None: known by its identity
    (written here) or by its tag."""
    if _key() is None:       # (an unusable key turns the caches off, whoever wrote what)
        return None
    got = _read_entry(path)
    if got is None:
        return None
    blob, st = got
    if _POSIX and len(blob) >= TAG_BYTES and _is_written(_identity(st)):
        return blob[TAG_BYTES:]
    return verify(name, blob)


def remember(path):
    """Add the entry just renamed into place at `path` to the list of entries written here
    (nothing when the list cannot be kept: its entries are then read by their tags)."""
    global _written
    if not _POSIX:
        return
    try:
        identity = _identity(os.lstat(path))
        list_path = _written_path()
        flags = os.O_WRONLY | os.O_APPEND | os.O_CREAT | _O_NOFOLLOW | _O_CLOEXEC
        fd = os.open(list_path, flags, 0o600)
        try:
            st = os.fstat(fd)
            if _unsafe_list(st):
                return
            if st.st_size >= _WRITTEN_MAX:
                os.ftruncate(fd, 0)
            os.write(fd, identity)     # one small O_APPEND write: whole, whatever runs beside
        finally:
            os.close(fd)
    except OSError:
        return
    if _written is not None:
        _written += identity


def _identity(st):
    mask = (1 << 64) - 1
    return b"".join((v & mask).to_bytes(8, "little") for v in
                    (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns))


def _is_written(identity):
    global _written
    if _written is None:
        _written = _read_written()
    at = _written.find(identity)
    while at >= 0 and at % _IDENTITY_BYTES:      # (only whole records count)
        at = _written.find(identity, at + 1)
    return at >= 0


def _written_path():
    return os.path.join(os.path.dirname(key_path()), "cache-written")


def _unsafe_list(st):
    return not stat.S_ISREG(st.st_mode) or _foreign(st) is not None


def _read_written():
    """The list's bytes; empty when there is none or it is not safely this user's."""
    got = _read_entry(_written_path(), count=False)
    if got is None or _unsafe_list(got[1]):
        return b""
    return got[0]
