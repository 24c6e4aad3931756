"""The seal at the end of `saved_model.json`: a checksum of the description itself and,
when the model was saved with a key, an HMAC-SHA256 of every file (issue 29).

The description holds the SHA-256 of each `.npz` file (`checksums`) but could not hold its
own; since format 1.1 its last field is

    ,"seal":{"sha256":"<hex>"}}                                   save(obj, dir)
    ,"seal":{"sha256":"<hex>","hmac_sha256":"<hex>"}}             save(obj, dir, key=...)

where `sha256` hashes every byte of the description before `,"seal":`, and `hmac_sha256`
is keyed with the caller's key over that same text and then each archive's name, length
and bytes (constants.npz, variables.npz: every file of the model). The loader recomputes
both before it builds anything.

What they give: the checksums catch accidents (a truncated download, a flipped bit, an
edit by hand that forgot a file); they do not stop tampering, since whoever edits a file
can recompute them. The HMAC does: without the key no one can make a file that
`load(dir, key=...)` accepts, so a team that shares the key shares models safely. A file
of format 1.0 (no seal) still loads without a key; with a key it is refused (unsigned).
"""

import json

from autograph.saved_model import format as fmt
from autograph.saved_model.format import SavedModelError

_HEAD = b',"seal":'
_MEMBERS = (fmt.CONSTANTS_FILE, fmt.VARIABLES_FILE)


def _key_bytes(key):
    if isinstance(key, str):
        key = key.encode("utf-8")
    if not isinstance(key, (bytes, bytearray, memoryview)) or len(key) == 0:
        raise TypeError("a saved model's key is non-empty bytes (or a str)")
    return bytes(key)


try:
    from _sha256 import sha256 as _builtin_sha256      # CPython <= 3.11: built in
except ImportError:
    try:
        from _sha2 import sha256 as _builtin_sha256    # CPython 3.12+
    except ImportError:
        _builtin_sha256 = None

# below this size the interpreter's built-in SHA-256 (no import cost); above, OpenSSL's
# (hashlib: some ms to import, several times faster per byte)
_SMALL = 1 << 20


def sha256_hex(data):
    """The SHA-256 of `data`, in hex. A small model's load pays no OpenSSL import (a
    fresh process's load of a small model is measured against onnxruntime's)."""
    if len(data) < _SMALL and _builtin_sha256 is not None:
        return _builtin_sha256(data).hexdigest()
    import hashlib
    return hashlib.sha256(data).hexdigest()


def _mac(key, prefix, files):
    import hashlib
    import hmac
    h = hmac.new(key, digestmod=hashlib.sha256)
    h.update(prefix)
    for name in _MEMBERS:
        data = files.get(name, b"")
        h.update(b"\0" + name.encode() + b"\0" + str(len(data)).encode() + b"\0")
        h.update(data)
    return h.hexdigest()


def close(text, files, key=None):
    """The description `text` (bytes of a JSON object) with its seal as the last field;
    `files`: {name: bytes} of the archives."""
    if not text.endswith(b"}"):
        raise ValueError("not a JSON object")
    prefix = text[:-1]
    seal = {"sha256": sha256_hex(prefix)}
    if key is not None:
        seal["hmac_sha256"] = _mac(_key_bytes(key), prefix, files)
    return prefix + _HEAD + json.dumps(seal, separators=(",", ":")).encode() + b"}"


def check(text, doc, files, key, where):
    """Verify the seal of description `text` (parsed: `doc`) and of `files` with `key`."""
    seal = doc.get("seal")
    if seal is None:
        if key is not None:
            raise SavedModelError(f"{where}: the model is not signed (it was saved without "
                                  "a key), but load was given one: refused")
        if fmt.version_tuple(doc.get("format_version")) >= (1, 1):
            raise SavedModelError(f"{where}: the description has no seal (a file of format "
                                  "1.1 or later always has one): damaged or edited")
        return
    if type(seal) is not dict or not all(type(k) is str and type(v) is str
                                         for k, v in seal.items()):
        raise SavedModelError(f"{where}: 'seal' must map names to hex digests")
    tail = _HEAD + json.dumps(seal, separators=(",", ":")).encode() + b"}"
    body = text.rstrip(b" \t\r\n")
    if not body.endswith(tail):
        raise SavedModelError(f"{where}: the seal is not the description's last field: "
                              "the file was edited")
    prefix = body[:-len(tail)]
    got = sha256_hex(prefix)
    if got != seal.get("sha256", ""):     # a checksum, not a secret: no constant time needed
        raise SavedModelError(f"{where}: checksum mismatch (the description is damaged or "
                              f"was changed): expected {seal.get('sha256')!r}, got {got!r}")
    if key is not None:
        want = seal.get("hmac_sha256")
        if want is None:
            raise SavedModelError(f"{where}: the model is not signed (it was saved without "
                                  "a key), but load was given one: refused")
        import hmac
        if not hmac.compare_digest(_mac(_key_bytes(key), prefix, files), want):
            raise SavedModelError(f"{where}: the HMAC does not match: the model was saved "
                                  "with another key, or a file was changed since")
