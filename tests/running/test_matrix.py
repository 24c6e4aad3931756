"""Issue 27's matrix: one corpus (tests/running/corpus.py) run in every way people run
Python, each in its own subprocess, every case compared with plain Python by
tests/running/harness.py inside that process: a script (with and without bytecode, and a
file older than the process), an imported module (with a timestamp .pyc, without, from a
checked- and an unchecked-hash .pyc), `python -c`, exec of text registered in linecache,
importlib.reload after an edit, a zip import, doctest, pytest's assertion-rewritten
modules, IPython's interactive shell and a Jupyter notebook run by nbclient on an ipykernel
kernel (with a function redefined in a later cell). All contexts start at once and run
side by side; the test of each reads its result.
"""

import json
import os
import py_compile
import subprocess
import sys
import time
import zipfile

import pytest

from tests.running import corpus

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
TIMEOUT = 300
FOOTER = "\nif __name__ == '__main__':\n" + "".join(
    "    " + line + "\n" for line in corpus.REPORT.strip().splitlines())


def _has(*modules):
    import importlib.util
    return all(importlib.util.find_spec(m) is not None for m in modules)


# -- the contexts: each writes its files under `d` and returns (argv, env changes) -----------

def _write(path, text, old=False):
    with open(path, "w") as f:
        f.write(text)
    if old:   # as a file written before the process started (the usual case)
        t = time.time() - 3600
        os.utime(path, (t, t))
    return path


def script(d, old=False, bytecode=True):
    path = _write(os.path.join(d, "corpus_script.py"), corpus.corpus_text() + FOOTER, old)
    return [sys.executable, path], {} if bytecode else {"PYTHONDONTWRITEBYTECODE": "1"}


def imported(d, pyc):
    path = _write(os.path.join(d, "corpus_mod.py"), corpus.corpus_text())
    if pyc is not None:
        py_compile.compile(path, invalidation_mode=pyc, doraise=True)
    code = ("import sys; sys.path.insert(0, %r); import corpus_mod; "
            "assert (corpus_mod.__cached__ is not None and "
            "__import__('os').path.exists(corpus_mod.__cached__)) == %r; "
            "import tests.running.harness as h; h.report(vars(corpus_mod))" % (d, pyc is not None))
    return [sys.executable, "-c", code], {"PYTHONDONTWRITEBYTECODE": "1"}


def command(d):
    return [sys.executable, "-c", corpus.corpus_text() + corpus.REPORT], {}


def exec_linecache(d):
    code = ("import linecache; from tests.running import corpus, harness\n"
            "t = corpus.corpus_text(); name = '<corpus text>'\n"
            "linecache.cache[name] = (len(t), None, t.splitlines(True), name)\n"
            "ns = {'__name__': 'corpus_exec'}\n"
            "exec(compile(t, name, 'exec'), ns)\n"
            "harness.report(ns)\n")
    return [sys.executable, "-c", code], {}


def reload(d):
    path = _write(os.path.join(d, "corpus_reload.py"), corpus.corpus_text())
    code = ("import importlib, os, sys, time; sys.path.insert(0, %r)\n"
            "import corpus_reload as m; import autograph as ag\n"
            "import tests.running.harness as h\n"
            "h.report(vars(m))\n"
            "old = m.edited_later\n"
            "path = m.__file__; text = open(path).read()\n"
            "new = text.replace('lambda x: x * x if x > 1', 'lambda x: x * x * 3 if x > 1')\n"
            "new = new.replace('        return x + 1\\n', '        return x + 2\\n')\n"
            "assert new != text\n"
            "open(path, 'w').write(new + '\\n# edited\\n')\n"
            "st = os.stat(path); os.utime(path, (st.st_atime, st.st_mtime + 5))\n"
            "importlib.reload(m)\n"
            "extra = {}\n"
            "try:\n"
            "    ag.to_graph(old); extra['stale function'] = ['converted after its file changed']\n"
            "except __import__('autograph.errors').errors.ConversionError as e:\n"
            "    if 'changed after it was imported' not in str(e):\n"
            "        extra['stale function'] = [str(e)]\n"
            "if m.run_lambda(2.0) != 12.0: extra['reload'] = ['the edit did not take']\n"
            "h.report(vars(m), extra)\n" % d)
    return [sys.executable, "-c", code], {"PYTHONDONTWRITEBYTECODE": "1"}


def zip_import(d):
    archive = os.path.join(d, "corpus.zip")
    with zipfile.ZipFile(archive, "w") as z:
        z.writestr("corpus_zip.py", corpus.corpus_text())
    code = ("import sys; sys.path.insert(0, %r); import corpus_zip; "
            "assert 'zip' in type(corpus_zip.__loader__).__name__.lower(); "
            "import tests.running.harness as h; h.report(vars(corpus_zip))" % archive)
    return [sys.executable, "-c", code], {}


def doctest_file(d):
    examples = []
    for stmt in corpus.statements(corpus.corpus_text()) + corpus.statements(corpus.REPORT):
        lines = stmt.rstrip("\n").split("\n")
        examples.append(">>> " + lines[0] + "\n" + "".join(
            "... " + line + "\n" for line in lines[1:]))
    path = _write(os.path.join(d, "corpus_doctest.txt"), "\n".join(examples))
    code = ("import doctest, sys\n"
            "r = doctest.testfile(%r, module_relative=False, globs={'__name__': 'corpus_doc'},"
            " optionflags=doctest.ELLIPSIS, verbose=False)\n" % path)
    return [sys.executable, "-c", code], {}


def pytest_rewritten(d):
    body = corpus.corpus_text() + (
        "\n\ndef test_corpus():\n"
        "    import tests.running.harness as h\n"
        "    assert type(__loader__).__name__ == 'AssertionRewritingHook'\n"
        "    result = h.report(globals())\n"
        "    assert result['meta']['cases'] >= 50\n")
    path = _write(os.path.join(d, "test_corpus_rewritten.py"), body)
    return [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--rootdir", d,
            "-c", os.devnull, path], {}


def _cell_texts():
    return corpus.cells(corpus.corpus_text()) + [
        corpus.REDEFINE_FIRST, "x_between = 1\n", corpus.REDEFINE_LATER, corpus.REPORT]


def ipython_shell(d):
    cells = os.path.join(d, "cells.json")
    _write(cells, json.dumps(_cell_texts()))
    code = ("import json\n"
            "from IPython.core.interactiveshell import InteractiveShell\n"
            "shell = InteractiveShell.instance()\n"
            "for cell in json.load(open(%r)):\n"
            "    shell.run_cell(cell, store_history=True).raise_error()\n" % cells)
    return [sys.executable, "-c", code], {}


def notebook(d):
    import nbformat
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell(c) for c in _cell_texts()]
    path = os.path.join(d, "corpus.ipynb")
    nbformat.write(nb, path)
    code = ("import nbformat, nbclient\n"
            "nb = nbformat.read(%r, as_version=4)\n"
            "nbclient.NotebookClient(nb, timeout=%d, startup_timeout=120,\n"
            "                        kernel_name='python3',\n"
            "                        resources={'metadata': {'path': %r}}).execute()\n"
            % (path, TIMEOUT - 30, d))
    return [sys.executable, "-c", code], {}


CHECKED = py_compile.PycInvalidationMode.CHECKED_HASH
UNCHECKED = py_compile.PycInvalidationMode.UNCHECKED_HASH
TIMESTAMP = py_compile.PycInvalidationMode.TIMESTAMP
CONTEXTS = {
    "script": lambda d: script(d),
    "script, PYTHONDONTWRITEBYTECODE=1": lambda d: script(d, bytecode=False),
    "script, file older than the process": lambda d: script(d, old=True, bytecode=False),
    "import, timestamp .pyc": lambda d: imported(d, TIMESTAMP),
    "import, no .pyc": lambda d: imported(d, None),
    "import, checked-hash .pyc": lambda d: imported(d, CHECKED),
    "import, unchecked-hash .pyc": lambda d: imported(d, UNCHECKED),
    "python -c": command,
    "exec of text in linecache": exec_linecache,
    "importlib.reload after an edit": reload,
    "zip import": zip_import,
    "doctest": doctest_file,
    "pytest assertion rewriting": pytest_rewritten,
    "IPython shell": ipython_shell,
    "Jupyter notebook (nbclient + ipykernel)": notebook,
}
NEEDS = {"IPython shell": ("IPython",),
         "Jupyter notebook (nbclient + ipykernel)": ("nbclient", "nbformat", "ipykernel")}
REPORTS = {"importlib.reload after an edit": 2}


@pytest.fixture(scope="module")
def matrix(tmp_path_factory):
    """Start every context at once; their results, by name: (reports, process output)."""
    runs = {}
    only = os.environ.get("AG_MATRIX_ONLY")   # (to run some contexts while debugging)
    for name, make in CONTEXTS.items():
        if not _has(*NEEDS.get(name, ())) or (only and only not in name):
            continue
        d = str(tmp_path_factory.mktemp("ctx"))
        argv, env_changes = make(d)
        out = os.path.join(d, "result.jsonl")
        env = {k: v for k, v in os.environ.items()
               if k not in ("PYTHONDONTWRITEBYTECODE", "PYTEST_ADDOPTS")}
        env.update(env_changes, AG_MATRIX_OUT=out, PYTHONPATH=ROOT,
                   PYTHONHASHSEED="0", AUTOGRAPH_CACHE_DIR=os.path.join(d, "cache"))
        log = open(os.path.join(d, "output.txt"), "w+")
        started = time.monotonic()
        runs[name] = (started, subprocess.Popen(argv, cwd=d, env=env, stdout=log,
                                       stderr=subprocess.STDOUT), out, log)
    results = {}
    deadline = time.monotonic() + TIMEOUT
    for name, (started, proc, out, log) in runs.items():
        try:
            proc.wait(max(1, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        log.seek(0)
        output = log.read()
        log.close()
        reports = []
        if os.path.exists(out):
            with open(out) as f:
                reports = [json.loads(line) for line in f if line.strip()]
        results[name] = (reports, output, proc.returncode)
        print(f"{name}: {time.monotonic() - started:.1f} s")
    return results


@pytest.mark.parametrize("context", list(CONTEXTS))
def test_every_program_gives_pythons_answer(matrix, context):
    if context not in matrix:
        pytest.skip(f"needs {', '.join(NEEDS.get(context, ()))} (or AG_MATRIX_ONLY)")
    reports, output, rc = matrix[context]
    assert len(reports) == REPORTS.get(context, 1), output[-3000:]
    for report in reports:
        assert report["meta"]["cases"] >= 50, report["meta"]
        assert report["problems"] == {}, json.dumps(report["problems"], indent=1)[:6000]
    if context != "doctest":   # (doctest's exit status is 0 either way; its report says)
        assert rc == 0, output[-3000:]
