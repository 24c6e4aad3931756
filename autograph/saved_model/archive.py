"""Reading the uncompressed zip archives of a saved model (.npz files and the single-bytes
form) without `zipfile`.

A saved model's archives hold stored members only (no compression: the loader refuses
anything else, so no size a file claims is ever decompressed into memory). Reading those
needs the end record, the central directory and each member's local header: this module,
~100 lines, where `zipfile` (with the `shutil`, `bz2`, `lzma`, `threading` and code-page
modules it imports) was a third of what a fresh process paid to load a small model, and
more without bytecode.

It trusts nothing: every offset and length is checked against the bytes present before
it is used, members must be stored and unencrypted with equal declared sizes, a member's
local header must name the member its directory entry names, and the member count is
bounded. It does not check CRC-32s: the description's SHA-256 checksums (and seal) cover
every archive's bytes already. Zip64 records (NumPy writes them for big arrays) are read.
"""

import struct

from autograph.saved_model.format import SavedModelError

MAX_MEMBERS = 1 << 16

_END = struct.Struct("<4s4H2LH")                 # end of central directory record
_END64_LOCATOR = struct.Struct("<4sLQL")
_END64 = struct.Struct("<4sQ2H2L4Q")
_ENTRY = struct.Struct("<4s6H3L5H2L")            # central directory entry
_LOCAL = struct.Struct("<4s5H3L2H")              # local file header
_U32 = 0xFFFFFFFF


class Member:
    """One member: its name, declared sizes, compression method and flags, and where its
    bytes are in the archive (`data` is a view of them, never a copy)."""

    __slots__ = ("name", "file_size", "compress_size", "method", "flags", "data")

    def __init__(self, name, file_size, compress_size, method, flags, data):
        self.name, self.file_size, self.compress_size = name, file_size, compress_size
        self.method, self.flags, self.data = method, flags, data


def members(data, where):
    """The members of zip archive `data` (bytes), in directory order; SavedModelError when
    it is not a well-formed archive of stored members."""
    view = memoryview(data)
    count, size, offset = _directory(view, where)
    if count > MAX_MEMBERS:
        raise SavedModelError(f"{where} has {count} members, over {MAX_MEMBERS}")
    if offset + size > len(view):
        raise SavedModelError(f"{where}: the central directory lies outside the archive")
    out, spans, pos, end = [], [], offset, offset + size
    for _ in range(count):
        if pos + _ENTRY.size > end:
            raise SavedModelError(f"{where}: the central directory is truncated")
        (sig, _made, _need, flags, method, _time, _date, _crc, csize, usize, name_len,
         extra_len, comment_len, _disk, _iattr, _eattr, local) = _ENTRY.unpack_from(view, pos)
        if sig != b"PK\x01\x02":
            raise SavedModelError(f"{where}: a bad central directory entry")
        pos += _ENTRY.size
        if pos + name_len + extra_len + comment_len > end:
            raise SavedModelError(f"{where}: the central directory is truncated")
        raw_name = bytes(view[pos:pos + name_len])
        extra = view[pos + name_len:pos + name_len + extra_len]
        pos += name_len + extra_len + comment_len
        usize, csize, local = _zip64(extra, usize, csize, local, where)
        name = _name(raw_name, flags, where)
        start = _data_start(view, local, raw_name, csize, offset, where)
        out.append(Member(name, usize, csize, method, flags, view[start:start + csize]))
        spans.append((local, start + csize))
    spans.sort()
    for (_, end_a), (start_b, _) in zip(spans, spans[1:]):
        if start_b < end_a:         # members sharing bytes: one file's bytes read many times
            raise SavedModelError(f"{where}: members overlap")
    return out


def _directory(view, where):
    """(member count, size, offset) of the central directory, from the end record (and
    the zip64 end record where the end record defers to it)."""
    at = len(view) - _END.size
    if at < 0:
        raise SavedModelError(f"{where} is not a zip archive")
    if bytes(view[at:at + 4]) != b"PK\x05\x06":      # a trailing comment: search for it
        base = max(0, at - 0xFFFF)
        found = bytes(view[base:]).rfind(b"PK\x05\x06")
        if found < 0 or base + found + _END.size > len(view):
            raise SavedModelError(f"{where} is not a zip archive")
        at = base + found
    _sig, disk, cd_disk, _here, count, size, offset, _comment = _END.unpack_from(view, at)
    if disk or cd_disk:
        raise SavedModelError(f"{where}: a multi-disk zip archive")
    if count == 0xFFFF or size == _U32 or offset == _U32:
        loc = at - _END64_LOCATOR.size
        if loc < 0:
            raise SavedModelError(f"{where}: the zip64 end record is missing")
        sig, _disk, end64, _disks = _END64_LOCATOR.unpack_from(view, loc)
        if sig != b"PK\x06\x07" or end64 + _END64.size > loc:
            raise SavedModelError(f"{where}: the zip64 end record is missing")
        (sig, _size, _made, _need, _d, _cd, _here, count, size,
         offset) = _END64.unpack_from(view, end64)
        if sig != b"PK\x06\x06":
            raise SavedModelError(f"{where}: a bad zip64 end record")
    return count, size, offset


def _zip64(extra, usize, csize, local, where):
    """The sizes and header offset, from the zip64 extra field where the entry defers."""
    pos = 0
    while pos + 4 <= len(extra):
        tag, length = struct.unpack_from("<2H", extra, pos)
        pos += 4
        if pos + length > len(extra):
            raise SavedModelError(f"{where}: a bad extra field")
        if tag == 1:
            field, k = extra[pos:pos + length], 0
            values = []
            for value in (usize, csize, local):
                if value == _U32:
                    if k + 8 > len(field):
                        raise SavedModelError(f"{where}: a bad zip64 extra field")
                    value = struct.unpack_from("<Q", field, k)[0]
                    k += 8
                values.append(value)
            usize, csize, local = values
        pos += length
    return usize, csize, local


def _name(raw, flags, where):
    try:   # names of saved models are ASCII; UTF-8 where the entry says so (bit 11)
        return raw.decode("utf-8" if flags & 0x800 else "ascii")
    except UnicodeDecodeError:
        raise SavedModelError(f"{where}: member name {raw[:80]!r} is not a valid name") from None


def _data_start(view, local, raw_name, csize, directory, where):
    """Where a member's bytes start, found through its local header (which must name it)."""
    if local + _LOCAL.size > directory:
        raise SavedModelError(f"{where}: member {raw_name[:80]!r} lies outside the archive")
    sig, *_rest, name_len, extra_len = _LOCAL.unpack_from(view, local)
    start = local + _LOCAL.size + name_len + extra_len
    if sig != b"PK\x03\x04" or bytes(view[local + _LOCAL.size:
                                          local + _LOCAL.size + name_len]) != raw_name:
        raise SavedModelError(f"{where}: member {raw_name[:80]!r}: its local header does not "
                              "match the directory")
    if start + csize > directory:
        raise SavedModelError(f"{where}: member {raw_name[:80]!r} lies outside the archive")
    return start
