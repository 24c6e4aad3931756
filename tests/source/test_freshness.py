"""The changed-source check (autograph.source.freshness): it never refuses a file that did
not change, however Python compiled it (long jumps that need EXTENDED_ARG, calls on imported
modules, with or without a .pyc, timestamp or hash-based), and it still refuses a file
edited after import, whichever layer answers. The full count (1,000 generated programs and
their long variants) is `python -m benchmarks.staleness`; a sample runs here."""

import importlib
import linecache
import os
import py_compile
import sys
import textwrap
import time

import numpy as np
import pytest

import autograph as ag
from autograph.errors import ConversionError
from autograph.source import freshness, parser
from benchmarks import staleness

LONG = textwrap.dedent("""
    import numpy as np

    def long_body(x, k):
        for i in range(k):
    {body}
        return x

    class Holder:
        def method(self, x):
            y = 0.0
            for i in range(3):
    {mbody}
            return y
""").format(body="".join(f"        x = np.tanh(x) + 0.{j % 9 + 1}\n" for j in range(60)),
            mbody="".join(f"            y = y + np.sin(x + {j})\n" for j in range(55)))


def _import(tmp_path, monkeypatch, name, text, pyc=None):
    """Import `text` as module `name`; pyc: None (no .pyc), 'timestamp', 'checked' or
    'unchecked' (a hash-based .pyc)."""
    path = tmp_path / f"{name}.py"
    path.write_text(text)
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setattr(sys, "dont_write_bytecode", True)
    sys.modules.pop(name, None)
    if pyc is not None:
        mode = {"timestamp": py_compile.PycInvalidationMode.TIMESTAMP,
                "checked": py_compile.PycInvalidationMode.CHECKED_HASH,
                "unchecked": py_compile.PycInvalidationMode.UNCHECKED_HASH}[pyc]
        py_compile.compile(str(path), invalidation_mode=mode, doraise=True)
    importlib.invalidate_caches()
    mod = importlib.import_module(name)
    assert (mod.__cached__ is not None and os.path.exists(mod.__cached__)) == (pyc is not None)
    return mod, path


def _edit(path, text):
    path.write_text(text)
    st = os.stat(path)
    os.utime(path, (st.st_atime, st.st_mtime + 5))   # a later mtime, whatever the clock
    linecache.checkcache(str(path))


@pytest.fixture
def cleanup():
    names = []
    yield names
    for n in names:
        sys.modules.pop(n, None)


@pytest.mark.parametrize("pyc", [None, "timestamp", "checked", "unchecked"])
def test_long_bodies_convert(tmp_path, monkeypatch, cleanup, pyc):
    name = f"ag_fresh_long_{pyc}"
    cleanup.append(name)
    mod, _ = _import(tmp_path, monkeypatch, name, LONG, pyc)
    for fn in (mod.long_body, mod.Holder.method):
        node = parser._locate(fn, parser._source_lines(fn)[0])
        assert freshness.compiles_the_same(fn, node)   # the last layer on its own
        parser.parse_entity(fn)
    x = np.float64(0.3)
    assert ag.function(mod.long_body)(x, np.int64(3)) == pytest.approx(mod.long_body(x, 3))
    h = mod.Holder()
    assert ag.to_graph(mod.Holder.method)(h, 0.5) == pytest.approx(h.method(0.5))


@pytest.mark.parametrize("pyc", [None, "timestamp", "checked", "unchecked"])
@pytest.mark.parametrize("edit", [
    lambda t: t.replace("0.1\n", "0.2\n", 1),                   # a constant
    lambda t: t.replace("np.tanh(x) + 0.3", "np.tanh(x) - 0.3", 1),   # an operator
    lambda t: "\n\n\n" + t.replace("np.sin(x + 3)", "np.cos(x + 3)"),  # moved, a name
])
def test_an_edited_module_is_refused(tmp_path, monkeypatch, cleanup, pyc, edit):
    name = f"ag_fresh_edit_{pyc}"
    cleanup.append(name)
    mod, path = _import(tmp_path, monkeypatch, name, LONG, pyc)
    _edit(path, edit(LONG))
    refused = []
    for fn in (mod.long_body, mod.Holder.method):
        try:
            parser.parse_entity(fn)
        except ConversionError as e:
            # moved: no def at the code's line; else: the text compiles to other code
            assert "changed after it was" in str(e) and str(path) in str(e)
            refused.append(fn)
    changed_method = "sin(x + 3)" in LONG and "sin(x + 3)" not in edit(LONG)
    assert refused == [mod.long_body] + ([mod.Holder.method] if changed_method else [])


def test_a_comment_or_blank_line_is_not_a_change(tmp_path, monkeypatch, cleanup):
    cleanup.append("ag_fresh_comment")
    mod, path = _import(tmp_path, monkeypatch, "ag_fresh_comment", LONG)
    _edit(path, LONG.replace("        return x\n", "\n        return x   # done\n"))
    parser.parse_entity(mod.long_body)


def test_a_file_older_than_the_process_is_vouched_for(tmp_path, monkeypatch, cleanup):
    if freshness.PROCESS_START is None:
        pytest.skip("the process's start time is known on Linux only")
    cleanup.append("ag_fresh_old")
    mod, path = _import(tmp_path, monkeypatch, "ag_fresh_old", LONG)
    assert not freshness._older_than_process(mod.long_body)   # written by this process
    old = freshness.PROCESS_START - 3600
    os.utime(path, (old, old))
    linecache.checkcache(str(path))
    assert freshness._older_than_process(mod.long_body)
    # linecache holding other lines than the file's (another size or mtime) is not vouched
    linecache.cache[str(path)] = (1, old + 1, ["x\n"], str(path))
    assert not freshness._older_than_process(mod.long_body)
    linecache.checkcache(str(path))


def test_exec_text_registered_in_linecache():
    text = LONG.replace("def long_body", "def long_exec")
    filename = "<ag fresh exec>"
    linecache.cache[filename] = (len(text), None, text.splitlines(True), filename)
    namespace = {}
    exec(compile(text, filename, "exec"), namespace)
    parser.parse_entity(namespace["long_exec"])
    edited = text.replace("0.1\n", "0.9\n", 1)
    linecache.cache[filename] = (len(edited), None, edited.splitlines(True), filename)
    with pytest.raises(ConversionError, match="changed"):
        parser.parse_entity(namespace["long_exec"])
    del linecache.cache[filename]


def test_operations_leave_out_the_encoding():
    """The same text compiled where `np` is a module-level import (LOAD_ATTR, short jumps)
    and inside a function (LOAD_METHOD, jumps that need EXTENDED_ARG on 3.11) has the
    same operations."""
    body = "".join(f"        x = np.tanh(x) + {j}\n" for j in range(40))
    at_module = compile(f"import numpy as np\ndef f(x):\n    for i in range(3):\n{body}"
                        "    return x\n", "<a>", "exec")
    inside = compile(f"def outer():\n    global np\n    def f(x):\n        for i in range(3):\n"
                     + textwrap.indent(body, "    ") + "        return x\n", "<b>", "exec")
    f_a = next(c for c in at_module.co_consts if getattr(c, "co_name", "") == "f")
    outer = next(c for c in inside.co_consts if getattr(c, "co_name", "") == "outer")
    f_b = next(c for c in outer.co_consts if getattr(c, "co_name", "") == "f")
    assert freshness.operations(f_a) == freshness.operations(f_b)
    assert freshness.same_code(f_a, f_b)
    edited = compile(f"import numpy as np\ndef f(x):\n    for i in range(3):\n"
                     f"{body.replace('+ 7', '- 7')}    return x\n", "<c>", "exec")
    f_c = next(c for c in edited.co_consts if getattr(c, "co_name", "") == "f")
    assert not freshness.same_code(f_a, f_c)


@pytest.mark.parametrize("index", range(0, 60, 3))
def test_generated_programs_are_never_refused(tmp_path, index):
    """A sample of benchmarks.staleness: generated programs, and their long variants,
    written and run as scripts: no refusal, and an edit of each is caught."""
    import random
    from benchmarks.differential.generator import generate
    program = generate(random.Random(f"ci:{index}"))
    for kind, source in (("plain", program.source),
                         ("long", staleness.long_variant(program.source))):
        n, refused, recompiled, caught = staleness.check_file(
            source, str(tmp_path / f"p{index}_{kind}_{time.monotonic_ns()}.py"))
        assert n >= 1 and refused == 0 and recompiled == 0
        assert caught is not False


def test_an_unchecked_pyc_older_than_its_source_is_not_vouched_for(tmp_path, monkeypatch,
                                                                   cleanup):
    """Python imports an unchecked-hash .pyc without looking at the source: when the
    source was edited before the process started, the code is the .pyc's, and the file
    being older than the process proves nothing."""
    if freshness.PROCESS_START is None:
        pytest.skip("the process's start time is known on Linux only")
    cleanup.append("ag_fresh_unchecked")
    path = tmp_path / "ag_fresh_unchecked.py"
    path.write_text(LONG)
    py_compile.compile(str(path), invalidation_mode=py_compile.PycInvalidationMode
                       .UNCHECKED_HASH, doraise=True)
    path.write_text(LONG.replace("0.1\n", "0.2\n", 1))   # edited; the .pyc stays
    old = freshness.PROCESS_START - 3600
    os.utime(path, (old, old))
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setattr(sys, "dont_write_bytecode", True)
    sys.modules.pop("ag_fresh_unchecked", None)
    importlib.invalidate_caches()
    mod = importlib.import_module("ag_fresh_unchecked")
    linecache.checkcache(str(path))
    assert not freshness._older_than_process(mod.long_body)
    with pytest.raises(ConversionError, match="changed after it was imported"):
        parser.parse_entity(mod.long_body)
