"""The loader's zip reader (archive.py) against the standard library's `zipfile`: the same
members and bytes for the archives NumPy and `to_bytes` write (zip64 records included), and
on damaged archives (every truncation, byte flips, crafted headers) only SavedModelError."""

import io
import random
import struct
import zipfile
import zlib

import numpy as np
import pytest

from autograph.saved_model import SavedModelError, archive


def _npz(**arrays):
    buf = io.BytesIO()
    np.savez(buf, **arrays)        # stored members, zip64 local headers (force_zip64)
    return buf.getvalue()


def _zip(members, comment=b""):
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_STORED) as z:
        for name, data in members:
            z.writestr(name, data)
        z.comment = comment
    return buf.getvalue()


def _same_as_zipfile(data):
    with zipfile.ZipFile(io.BytesIO(data)) as z:
        want = [(i.filename, z.read(i)) for i in z.infolist()]
    got = [(m.name, bytes(m.data)) for m in archive.members(data, "test")]
    assert got == want


@pytest.mark.parametrize("data", [
    _npz(a=np.arange(10.0), b=np.zeros((3, 4), np.float32), c=np.array(True)),
    _npz(),
    _zip([("saved_model.json", b"{}"), ("variables.npz", _npz(v=np.ones(5)))]),
    _zip([("x.npy", b"")], comment=b"a comment"),
], ids=["npz", "empty-npz", "to_bytes-like", "comment"])
def test_members_and_bytes_match_zipfile(data):
    _same_as_zipfile(data)


def _zip64(name, payload):
    """A one-member archive whose directory entry and end record defer to zip64 records
    (as for a member over 4 GiB), built by hand."""
    crc = zlib.crc32(payload)
    local = struct.pack("<4s5H3L2H", b"PK\x03\x04", 45, 0, 0, 0, 0, crc, 0xFFFFFFFF,
                        0xFFFFFFFF, len(name), 0) + name + payload
    extra = struct.pack("<2H3Q", 1, 24, len(payload), len(payload), 0)
    entry = struct.pack("<4s6H3L5H2L", b"PK\x01\x02", 45, 45, 0, 0, 0, 0, crc, 0xFFFFFFFF,
                        0xFFFFFFFF, len(name), len(extra), 0, 0, 0, 0, 0xFFFFFFFF) + name + extra
    end64_at = len(local) + len(entry)
    end64 = struct.pack("<4sQ2H2L4Q", b"PK\x06\x06", 44, 45, 45, 0, 0, 1, 1, len(entry),
                        len(local))
    locator = struct.pack("<4sLQL", b"PK\x06\x07", 0, end64_at, 1)
    end = struct.pack("<4s4H2LH", b"PK\x05\x06", 0, 0, 0xFFFF, 0xFFFF, 0xFFFFFFFF,
                      0xFFFFFFFF, 0)
    return local + entry + end64 + locator + end


def test_zip64_records_are_read():
    data = _zip64(b"v0.npy", b"0123456789")
    _same_as_zipfile(data)
    (m,) = archive.members(data, "test")
    assert (m.name, m.file_size, m.compress_size, bytes(m.data)) == \
        ("v0.npy", 10, 10, b"0123456789")


def _only_saved_model_errors(data):
    try:
        return [(m.name, bytes(m.data)) for m in archive.members(data, "test")]
    except SavedModelError:
        return None


def test_every_truncation_and_random_flips_raise_only_saved_model_error():
    data = _npz(a=np.arange(6.0), b=np.ones(3, np.int32))
    for n in range(len(data)):
        _only_saved_model_errors(data[:n])
    rng = random.Random(0)
    for _ in range(2000):
        mutant = bytearray(data)
        for _ in range(rng.randint(1, 4)):
            mutant[rng.randrange(len(mutant))] = rng.randrange(256)
        _only_saved_model_errors(bytes(mutant))


def test_crafted_archives_are_refused():
    data = _zip([("a.npy", b"x" * 100), ("b.npy", b"y" * 100)])
    with pytest.raises(SavedModelError, match="not a zip archive"):
        archive.members(b"PK" * 5, "test")
    at = data.rindex(b"PK\x05\x06")
    # the second entry points at the first member's local header: bytes read twice
    second = data.index(b"PK\x01\x02", data.index(b"PK\x01\x02") + 1)
    renamed = bytearray(data)
    renamed[second + 42:second + 46] = struct.pack("<L", 0)
    with pytest.raises(SavedModelError, match="does not match|overlap"):
        archive.members(bytes(renamed), "test")
    # a directory past the end of the archive
    far = bytearray(data)
    far[at + 16:at + 20] = struct.pack("<L", len(data) + 10)
    with pytest.raises(SavedModelError, match="outside the archive"):
        archive.members(bytes(far), "test")
    # a member claiming more bytes than lie before the directory
    big = bytearray(data)
    first = data.index(b"PK\x01\x02")
    big[first + 20:first + 28] = struct.pack("<2L", 10**6, 10**6)
    with pytest.raises(SavedModelError, match="outside the archive"):
        archive.members(bytes(big), "test")
    # more members than the bound
    many = bytearray(data)
    many[at + 8:at + 12] = struct.pack("<2H", 0xFFFE, 0xFFFE)
    with pytest.raises(SavedModelError, match="truncated|over"):
        archive.members(bytes(many), "test")
