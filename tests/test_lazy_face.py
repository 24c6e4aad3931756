"""`import autograph` imports nothing but the face (issue 30, goal 7), yet every public name
resolves, `dir()` and `from autograph import *` list them, and the names that are also
submodules (`ag.function`, `ag.saved_model.load`/`save`) are the functions whatever was
imported first. Each order runs in a fresh process (the import system sets a package's
attribute only on a submodule's first import)."""

import json
import os
import subprocess
import sys
import textwrap

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

FIRST = {
    "nothing": "",
    "a function submodule": "from autograph.function import trace_cache",
    "trace_type by its old name": "from autograph.function import trace_type",
    "the saved-model writer": "from autograph.saved_model.save import serialize",
}

SCRIPT = textwrap.dedent('''
    import json, sys, types
    before = set(sys.modules)
    import autograph as ag
    face = sorted(set(sys.modules) - before)
    {first}
    import numpy as np
    ns = {{}}
    exec("from autograph import *", ns)
    out = {{
        "face": face,
        "missing_star": sorted(set(ag.__all__) - set(ns)),
        "missing_dir": sorted(set(ag.__all__) - set(dir(ag))),
        "function_is_decorator": isinstance(ag.function, types.FunctionType)
            and ag.function is sys.modules["autograph.function"].function,
        "call": float(ag.function(lambda x: x * 2.0)(np.float64(3.0))),
        "save_load": [type(ag.saved_model.save).__name__, type(ag.saved_model.load).__name__],
        "one_trace_type": sys.modules["autograph.function.trace_type"]
            is sys.modules["autograph.runtime.trace_type"],
        "spec": ag.TensorSpec is sys.modules["autograph.function.trace_type"].TensorSpec,
    }}
    print(json.dumps(out))
''')


@pytest.mark.parametrize("first", sorted(FIRST))
def test_the_face_is_lazy_and_every_name_resolves(tmp_path, first):
    env = dict(os.environ, PYTHONPATH=ROOT, AUTOGRAPH_CACHE_DIR=str(tmp_path / "cache"))
    out = subprocess.run([sys.executable, "-c", SCRIPT.format(first=FIRST[first])], env=env,
                         cwd=tmp_path, capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    got = json.loads(out.stdout.splitlines()[-1])
    assert got["face"] == ["autograph", "autograph._bundle"]
    assert got["missing_star"] == [] and got["missing_dir"] == []
    assert got["function_is_decorator"] and got["call"] == 6.0
    assert got["save_load"] == ["function", "function"]
    assert got["one_trace_type"] and got["spec"]


IMPORT_AS = textwrap.dedent('''
    import json, pkgutil, sys, types
    {first}
    import autograph.function as package_or_decorator   # (the decorator: `ag.function`)
    names = sorted(m.name for m in pkgutil.iter_modules(
        sys.modules["autograph.function"].__path__))
    got = {{}}
    for name in names:
        exec(f"import autograph.function.{{name}} as m", globals())
        got[name] = m is sys.modules[f"autograph.function.{{name}}"]
    import autograph as ag
    print(json.dumps({{"got": got, "decorator": isinstance(ag.function, types.FunctionType),
                      "calls": ag.function(lambda x: x + 1)(2) == 3}}))
''')


@pytest.mark.parametrize("first", ["", "import autograph", "import autograph.function.concrete"])
def test_import_a_submodule_of_function_as_a_name(tmp_path, first):
    """`import autograph.function.X as Y` reads `function` of autograph, which is the
    decorator, then `X` of it: each of the package's submodules must be found there,
    whatever was imported first (fresh processes)."""
    env = dict(os.environ, PYTHONPATH=ROOT, AUTOGRAPH_CACHE_DIR=str(tmp_path / "cache"))
    out = subprocess.run([sys.executable, "-c", IMPORT_AS.format(first=first)], env=env,
                         cwd=tmp_path, capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    result = json.loads(out.stdout.splitlines()[-1])
    assert len(result["got"]) >= 8 and all(result["got"].values()), result["got"]
    assert result["decorator"] and result["calls"]
