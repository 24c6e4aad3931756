"""A first call in a fresh process imports only what it needs (issue 16): with the
conversion in the disk cache, no parser, analysis, converter pass or gast; only the
elementwise family of the NumPy surface for Python operators; no numpy.random, logging,
sysconfig or OpenSSL. Counted in a subprocess (modules, not time)."""

import json
import os
import subprocess
import sys
import textwrap

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

SCRIPT = textwrap.dedent('''
    import json, sys
    import numpy as np
    before = set(sys.modules)
    import autograph as ag
    from collatz_mod import collatz
    assert ag.function(collatz)(np.int64(27)) == 111
    print(json.dumps(sorted(set(sys.modules) - before)))
''')

COLLATZ = textwrap.dedent('''
    def collatz(n):
        steps = 0
        while n != 1:
            n = n // 2 if n % 2 == 0 else 3 * n + 1
            steps += 1
        return steps
''')


def _first_call_modules(tmp_path):
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([ROOT, str(tmp_path)]),
               AUTOGRAPH_CACHE_DIR=str(tmp_path / "cache"))
    env.pop("AUTOGRAPH_CACHE", None)
    out = subprocess.run([sys.executable, str(tmp_path / "script.py")], env=env, cwd=tmp_path,
                         capture_output=True, text=True, check=True).stdout
    return set(json.loads(out.splitlines()[-1]))


def test_a_warm_first_call_imports_no_compiler(tmp_path):
    (tmp_path / "script.py").write_text(SCRIPT)
    (tmp_path / "collatz_mod.py").write_text(COLLATZ)
    cold = _first_call_modules(tmp_path)
    warm = _first_call_modules(tmp_path)
    assert "autograph.converters.pipeline" in cold and "gast" in cold   # it converted
    compiler = {m for m in warm if m == "gast" or m.startswith(
        ("gast.", "autograph.analysis", "autograph.source.parser", "autograph.source.templates",
         "autograph.converters.pipeline", "autograph.converters.control_flow"))}
    assert not compiler, sorted(compiler)
    surface = {m for m in warm if m.startswith("autograph.runtime.numpy.")}
    assert surface <= {"autograph.runtime.numpy.elementwise", "autograph.runtime.numpy.packing"}, \
        sorted(surface)
    for unused in ("numpy.random", "logging", "sysconfig", "_hashlib", "difflib", "string"):
        assert unused not in warm, unused
    assert len(warm) < len(cold) / 2
