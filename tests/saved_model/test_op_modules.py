"""`load` imports only the modules that register the ops a model holds (op_modules.py).

The table is checked against what the code does: in a fresh process every call that
registers a primitive is recorded with the module whose import made it (the innermost
module body on the stack), and that must be the table's module. Then fresh processes load
models and use them: a small MLP imports none of the families it does not hold, a model
with a loop still takes gradients after loading (rules registered apart from their
primitive come with the reverse-mode transform), and ops no table names are refused
without importing anything."""

import json
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import autograph as ag
from autograph.saved_model import SavedModelError, op_modules
from autograph.saved_model.schema import SCHEMAS

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

RECORD = textwrap.dedent('''
    import json, sys
    from autograph.runtime.ir import primitives

    made_by = {}
    real = primitives.register

    def register(name, *args, **kwargs):
        frame = sys._getframe(1)
        while frame is not None and frame.f_code.co_name != "<module>":
            frame = frame.f_back
        made_by.setdefault(name, frame.f_globals["__name__"] if frame else None)
        return real(name, *args, **kwargs)

    primitives.register = register      # before any family is imported
    made_by.update({name: "autograph.runtime.ir.primitives" for name in primitives.PRIMITIVES})
    from autograph.saved_model.schema import register_all_primitives
    register_all_primitives()
    print(json.dumps(made_by))
''')


def _run(script, tmp_path):
    env = dict(os.environ, PYTHONPATH=ROOT, AUTOGRAPH_CACHE_DIR=str(tmp_path / "cache"))
    out = subprocess.run([sys.executable, "-c", script], env=env, cwd=tmp_path,
                         capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout.splitlines()[-1])


def test_the_table_names_the_module_that_registers_each_primitive(tmp_path):
    made_by = _run(RECORD, tmp_path)
    loadable = set(SCHEMAS)          # every primitive of autograph's own (test_schema.py)
    assert loadable <= set(made_by)
    wrong = {name: (op_modules.module_of(name), made_by[name]) for name in sorted(loadable)
             if op_modules.module_of(name) != made_by[name]}
    assert not wrong, (
        "autograph/saved_model/op_modules.py names the wrong module (table, actual) for: "
        f"{wrong}. Add each primitive to the entry of the module that registers it, or the "
        "loader cannot load a model that holds it.")
    assert all(made_by[n] == op_modules.SPECIAL_MODULE for n in loadable
               if n.startswith(op_modules.SPECIAL_PREFIX))


def test_each_primitive_is_listed_once():
    listed = [name for names in op_modules._BY_MODULE.values() for name in names.split()]
    assert len(listed) == len(set(listed)), sorted(n for n in set(listed) if listed.count(n) > 1)


def test_names_outside_the_table_have_no_module():
    for op in ("os.system", "__import__", "", "special", "autograph.runtime.numpy.linalg"):
        assert op_modules.module_of(op) is None


class _MLP(ag.Module):
    def __init__(self):
        super().__init__()
        r = np.random.default_rng(0)
        self.w1 = ag.Variable(r.standard_normal((5, 7)))
        self.w2 = ag.Variable(r.standard_normal((7, 3)))

    @ag.function(input_signature=[ag.TensorSpec([None, 5], np.float64)])
    def __call__(self, x):
        return np.tanh(x @ self.w1) @ self.w2


@ag.function(input_signature=[ag.TensorSpec([3], np.float64)])
def _loop(x):
    i = 0
    while i < 4:
        x = np.sin(x) * 1.5
        i += 1
    return np.sum(x)


LOAD = textwrap.dedent('''
    import json, sys
    import numpy as np
    before = set(sys.modules)
    import autograph as ag
    m = ag.saved_model.load({mlp!r})
    y = m(np.full((2, 5), 0.5))
    mlp_modules = sorted(set(sys.modules) - before)
    f = ag.saved_model.load({loop!r})
    x = np.array([0.1, 0.2, 0.3])
    g = ag.grad(lambda v: f(v))(x)
    print(json.dumps([y.tolist(), float(f(x)), g.tolist(), mlp_modules]))
''')


def test_a_fresh_load_imports_the_families_it_uses_and_still_differentiates(tmp_path):
    m = _MLP()
    ag.saved_model.save(m, str(tmp_path / "mlp"))
    _loop(np.zeros(3))
    ag.saved_model.save(_loop, str(tmp_path / "loop"))
    y, value, grad, modules = _run(LOAD.format(mlp=str(tmp_path / "mlp"),
                                               loop=str(tmp_path / "loop")), tmp_path)
    x = np.array([0.1, 0.2, 0.3])
    np.testing.assert_allclose(y, m(np.full((2, 5), 0.5)), rtol=1e-12)
    assert value == pytest.approx(float(_loop(x)), rel=1e-12)
    np.testing.assert_allclose(grad, ag.grad(_loop)(x), rtol=1e-12)
    # the MLP holds matmul, tanh and Variable reads: none of these families
    unused = {"autograph.runtime.numpy.linalg", "autograph.runtime.numpy.fft",
              "autograph.runtime.numpy.random", "autograph.runtime.numpy.scipy_special",
              "autograph.runtime.numpy.sorting", "autograph.data", "autograph.autodiff",
              "numpy.random", "numpy.fft", "_hashlib", "zipfile", "shutil", "dataclasses"}
    assert not unused & set(modules), sorted(unused & set(modules))


@pytest.mark.parametrize("op", ["special_not_a_scipy_function", "os.system", "Const."])
def test_an_op_outside_the_table_is_refused(tmp_path, op):
    ag.saved_model.save(_loop, str(tmp_path / "m"))
    path = tmp_path / "m" / "saved_model.json"
    doc = json.loads(path.read_text())
    node = next(n for g in doc["graphs"] for n in g["nodes"] if n["op"] == "sin")
    node["op"] = op
    doc.pop("seal")        # unsigned, as a 1.0 file: the op check is what refuses it
    doc["format_version"] = "1.0"
    path.write_text(json.dumps(doc))
    with pytest.raises(SavedModelError, match="unknown op"):
        ag.saved_model.load(str(tmp_path / "m"))


BUNDLED = textwrap.dedent('''
    import json, sys
    import numpy as np
    import autograph as ag
    from autograph import _bundle
    y = ag.saved_model.load({path!r})(np.full((2, 5), 0.5))
    print(json.dumps([y.tolist(), sorted(_bundle._served)]))
''')


def test_a_process_that_only_loads_keeps_its_bytecode_in_the_bundle(tmp_path):
    # a copy of the package: its __pycache__ (and bundle) are this test's own
    import shutil
    shutil.copytree(os.path.join(ROOT, "autograph"), tmp_path / "autograph",
                    ignore=shutil.ignore_patterns("__pycache__"))
    m = _MLP()
    ag.saved_model.save(m, str(tmp_path / "mlp"))
    env = dict(os.environ, PYTHONPATH=str(tmp_path), AUTOGRAPH_CACHE_DIR=str(tmp_path / "c"))
    for name in ("PYTHONDONTWRITEBYTECODE", "PYTHONPYCACHEPREFIX", "AUTOGRAPH_BUNDLE"):
        env.pop(name, None)
    runs = []
    for _ in range(2):
        out = subprocess.run([sys.executable, "-c", BUNDLED.format(path=str(tmp_path / "mlp"))],
                             env=env, cwd=tmp_path, capture_output=True, text=True)
        assert out.returncode == 0, out.stderr
        runs.append(json.loads(out.stdout.splitlines()[-1]))
    np.testing.assert_allclose(runs[1][0], m(np.full((2, 5), 0.5)), rtol=1e-12)
    assert runs[0][1] == []
    # (a one-shot call runs the graph through the interpreter: codegen is not imported)
    assert {"autograph.saved_model.load", "autograph.saved_model.graphs",
            "autograph.runtime.exec.interpreter"} <= set(runs[1][1])
