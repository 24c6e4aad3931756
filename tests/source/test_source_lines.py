"""parser._getlines reads what linecache.getlines reads, and caches it the same way, for
every kind of file: plain UTF-8 (its own fast path) and everything it leaves to
linecache (BOM, coding cookie, carriage returns, bad bytes, missing files)."""

import glob
import linecache
import os

import pytest

from autograph.source import parser

_CASES = {
    "plain.py": b"def f(x):\n    return x\n",
    "no_final_newline.py": b"def f(x):\n    return x",
    "empty.py": b"",
    "only_newlines.py": b"\n\n\n",
    "blank_last.py": b"x = 1\n\n",
    "crlf.py": b"def f(x):\r\n    return x\r\n",
    "cr.py": b"def f(x):\r    return x\r",
    "bom.py": b"\xef\xbb\xbfdef f(x):\n    return x\n",
    "latin1_cookie.py": b"# -*- coding: latin-1 -*-\ns = '\xe9'\n",
    "cookie_line2.py": b"#!/usr/bin/env python\n# coding=utf-8\ns = 1\n",
    "coding_word_later.py": b"x = 1\ny = 2\ncoding = 'utf-8'\n",
    "utf8.py": "s = 'é ü 中'\n".encode(),
    "odd_breaks.py": "s = 'a\x0cb\x0bc\x1cd\x85e\u2028f'\nt = 1\n".encode(),
    "bad_utf8.py": b"s = '\xff'\n",
}


def _both(path):
    linecache.cache.pop(path, None)
    expected = linecache.getlines(path)
    expected_entry = linecache.cache.pop(path, None)
    got = parser._getlines(path, None)
    got_entry = linecache.cache.get(path)
    return expected, got, expected_entry, got_entry


@pytest.mark.parametrize("name", sorted(_CASES))
def test_reads_like_linecache(tmp_path, name):
    path = str(tmp_path / name)
    with open(path, "wb") as f:
        f.write(_CASES[name])
    expected, got, expected_entry, got_entry = _both(path)
    assert got == expected
    assert got_entry == expected_entry
    if got_entry:  # a second call answers from the cache
        assert parser._getlines(path, None) is got_entry[2]


def test_plain_files_take_the_fast_path(tmp_path):
    path = str(tmp_path / "plain.py")
    with open(path, "wb") as f:
        f.write(_CASES["plain.py"])
    assert parser._read_lines(path) == ["def f(x):\n", "    return x\n"]
    for name in ("crlf.py", "bom.py", "latin1_cookie.py", "bad_utf8.py"):
        other = str(tmp_path / name)
        with open(other, "wb") as f:
            f.write(_CASES[name])
        assert parser._read_lines(other) is None, name  # left to linecache


def test_library_sources_read_like_linecache():
    files = sorted(glob.glob(os.path.join(os.path.dirname(os.__file__), "*.py")))[:40]
    files += glob.glob(os.path.join(os.path.dirname(parser.__file__), "*.py"))
    for path in files:
        expected, got, expected_entry, got_entry = _both(path)
        assert got == expected and got_entry == expected_entry, path
        linecache.cache.pop(path, None)


def test_missing_and_pseudo_files_are_left_to_linecache(tmp_path):
    assert parser._getlines(str(tmp_path / "missing.py"), None) == []
    linecache.cache["<autograph test text>"] = (3, None, ["x\n"], "<autograph test text>")
    try:
        assert parser._getlines("<autograph test text>", None) == ["x\n"]
    finally:
        del linecache.cache["<autograph test text>"]
    assert parser._getlines("<never registered>", None) == []
