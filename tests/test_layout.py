"""The layout holds (issue 28): imports point down the layer order of docs/internals.md, and
no circle of imports joins files of different packages.

Every module's imports are read with `ast` (nothing is imported): `import autograph.x`,
`from autograph.x import y` (y a module or a name), at the top of a file or inside a
function (a *lazy* import, run on first use). A lazy import that points up a layer, or
closes a circle, is allowed only where LAZY_EXCEPTIONS names it and says why; an import at
the top of a file never. A circle inside one package is allowed when one of its imports is
lazy (Python could not import it otherwise) and says why in a comment there.
"""

import ast
import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PACKAGE = os.path.join(ROOT, "autograph")

# The layers, bottom up; a module belongs to the last (longest) prefix that names it.
# An import may point to its own layer or one below, never above.
LAYERS = [
    # what everything may use: the bytecode bundle, settings, logging, stack frames, errors
    ("autograph._bundle", "autograph.config", "autograph.log", "autograph.frames",
     "autograph.errors", "autograph.gc_pause",
     "autograph.runtime.fpu"),          # the CPU's float modes (ctypes only), set by config
    ("autograph.source",),              # Python source as data
    ("autograph.analysis",),            # CFG and dataflow over gast trees
    ("autograph.runtime.devices",),     # the device registry
    ("autograph.runtime.ir",),          # Tensor, Graph, the primitive table
    ("autograph.runtime.numpy",),       # the NumPy surface
    ("autograph.runtime",),             # control flow, TensorArray, Variable, print/range
    ("autograph.runtime.exec",),        # interpreter, optimize, codegen, native/
    ("autograph.operators",),           # what generated code calls (ag__)
    ("autograph.converters",),          # the compiler's passes
    ("autograph.api",),                 # to_code, to_graph, converted_call
    ("autograph.function", "autograph.module", "autograph.optimizers"),   # tf.function, state
    ("autograph",),                     # the public face (autograph/__init__.py): ag.function
    ("autograph.autodiff", "autograph.batching", "autograph.data", "autograph.onnx",
     "autograph.saved_model", "autograph.explorer"),                         # explorer: the page
    ("autograph.distribute", "autograph.dask", "autograph.ray"),          # scale-out adapters
    ("autograph.cli", "autograph.__main__"),
]

# (importer, imported): why this lazy import may point up or close a circle. The imported
# side is the module the import names (a package means its __init__.py).
LAZY_EXCEPTIONS = {
    # inside the runtime family (one package, lazy, each with its comment there)
    ("autograph.runtime.ir.primitives", "autograph.runtime.numpy.dispatch"):
        "the table fills as the NumPy families load; a saved model or a gradient rule may "
        "name a primitive before its family was used, and then the surface loads",
    ("autograph.runtime.ir.primitives", "autograph.runtime.control_flow"):
        "as the NumPy surface: Cast, cond and while_loop register when control flow is first "
        "used, and a rule or a graph read back may name them before (a loaded model that "
        "only reads its Variables never imports control flow)",
    ("autograph.runtime.ir.graph", "autograph.runtime.exec.dot"):
        "Graph.to_dot() and the notebook picture (public API on the IR record) draw with "
        "runtime/exec/dot.py, loaded when asked",
    ("autograph.runtime.ir.tensor", "autograph.runtime.numpy.array_api"):
        "Tensor.__array_namespace__() (the array API's entry point, on the IR record) returns "
        "the namespace of staged operations, loaded when a library first asks for it",
    ("autograph.runtime.ir.tensor", "autograph.runtime.numpy.array_api_writes"):
        "a library's in-place write on a tensor (x[i] = v inside SciPy) is staged as a new "
        "node by the NumPy surface; the IR record only forwards it, on first use",
    ("autograph.runtime.ir.tensor", "autograph.runtime.numpy.library_calls"):
        "a symbolic tensor refused inside SciPy/scikit-learn names the library's function; "
        "the frame walk that finds it lives with the surface, loaded only on that error",
    ("autograph.runtime.ir.primitives", "autograph.runtime.numpy.scipy_special"):
        "a scipy.special primitive (special_<name>) is registered on first use; a saved model "
        "or gradient rule may name one before its ufunc was traced",
    ("autograph.runtime.numpy.scipy_direct", "autograph.runtime.control_flow"):
        "scipy.linalg.expm's staged version squares in a while_loop (the runtime's control "
        "flow sits one layer up; loaded only when expm is traced)",
    ("autograph.runtime.numpy.scipy_coverage", "autograph"):
        "the SciPy probe behind docs/scipy_coverage.md runs each function through "
        "ag.function; it is a generator script (python -m), never imported by the runtime",
    ("autograph.function", "autograph.explorer"):
        "Function._repr_html_ (a notebook's view of a Function) is the explorer page, "
        "loaded only when a notebook asks for it",
    # across packages, in files other work was changing while the layout moved (issue 28)
    ("autograph.source.disk_cache", "autograph"):
        "reads autograph.__version__ and __file__ for the conversion key: the face is always "
        "imported before any of its modules, so this only names it (as FACE_CONSTANTS do)",
    ("autograph.operators.for_loops", "autograph.data.lowering"):
        "a `for` over an ag.data.Dataset while tracing becomes one while_loop that "
        "autograph.data builds, imported only when the iterable is a Dataset; the way out "
        "is a lowering hook that autograph.data registers with the operators",
    ("autograph.runtime.trace_type", "autograph.function.retracing"):
        "the trace keys live in the runtime so that loading a saved model imports no "
        "tracing machinery; ordering and explaining keys (retracing) stays with "
        "ag.function, and trace_type forwards those names to it when first asked",
}

# `from autograph import __version__` reads a constant of the face, which is always
# imported first (every `import autograph.x` runs autograph/__init__.py before x).
FACE_CONSTANTS = {"__version__"}


def _modules():
    found = {}
    for folder, dirs, files in os.walk(PACKAGE):
        dirs[:] = [d for d in dirs if d != "__pycache__"]
        for f in files:
            if f.endswith(".py"):
                path = os.path.join(folder, f)
                name = os.path.relpath(path, ROOT)[:-3].replace(os.sep, ".")
                found[name[:-len(".__init__")] if name.endswith(".__init__") else name] = path
    return found


MODULES = _modules()


def _target(name):
    """The module an imported name lives in: itself, else the longest module prefix."""
    while name not in MODULES:
        name = name.rpartition(".")[0]
    return name


def _imports(module, path):
    """[(imported module, lazy, line)] of one file; imports of autograph only."""
    tree = ast.parse(open(path, encoding="utf-8").read(), path)
    package = module if path.endswith("__init__.py") else module.rpartition(".")[0]
    out = []

    def visit(node, lazy):
        for child in ast.iter_child_nodes(node):
            inner = lazy or isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef,
                                               ast.Lambda))
            if isinstance(child, ast.Import):
                out.extend((_target(a.name), inner, child.lineno) for a in child.names
                           if a.name == "autograph" or a.name.startswith("autograph."))
            elif isinstance(child, ast.ImportFrom):
                base = child.module or ""
                if child.level:
                    parts = package.split(".")[:len(package.split(".")) - child.level + 1]
                    base = ".".join(parts + ([base] if base else []))
                if base != "autograph" and not base.startswith("autograph."):
                    continue
                for a in child.names:
                    if base == "autograph" and a.name in FACE_CONSTANTS:
                        continue
                    full = f"{base}.{a.name}"
                    out.append((full if full in MODULES else _target(base), inner,
                                child.lineno))
            visit(child, inner)

    visit(tree, False)
    return [(m, lazy, line) for m, lazy, line in out if m != module]


EDGES = {m: _imports(m, p) for m, p in MODULES.items()}


def layer(module):
    best, where = -1, None
    for i, names in enumerate(LAYERS):
        for name in names:
            if (module == name or module.startswith(name + ".")) and len(name) > best:
                best, where = len(name), i
    return where


def package(module):
    """A file's package (DESIGN.md's family): the subpackage of autograph it is in
    (autograph.runtime, autograph.function, ...); a top-level file is a package of its own."""
    return ".".join(module.split(".")[:2])


def _circles(edges):
    """The strongly connected components of more than one module (Tarjan, iterative)."""
    index, low, on, stack, out, counter = {}, {}, set(), [], [], [0]
    for start in edges:
        if start in index:
            continue
        work = [(start, iter(edges[start]))]
        index[start] = low[start] = counter[0]
        counter[0] += 1
        stack.append(start)
        on.add(start)
        while work:
            node, it = work[-1]
            for nxt in it:
                if nxt not in index:
                    index[nxt] = low[nxt] = counter[0]
                    counter[0] += 1
                    stack.append(nxt)
                    on.add(nxt)
                    work.append((nxt, iter(edges.get(nxt, ()))))
                    break
                if nxt in on:
                    low[node] = min(low[node], index[nxt])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[node])
                if low[node] == index[node]:
                    part = set()
                    while True:
                        m = stack.pop()
                        on.discard(m)
                        part.add(m)
                        if m == node:
                            break
                    if len(part) > 1:
                        out.append(sorted(part))
    return out


def test_every_module_has_a_layer():
    assert [m for m in MODULES if layer(m) is None] == []


def test_imports_point_down_the_layers():
    up = []
    for m, imports in EDGES.items():
        for target, lazy, line in imports:
            if layer(target) > layer(m) and (m, target) not in LAZY_EXCEPTIONS:
                up.append(f"{MODULES[m]}:{line}: {m} -> {target}"
                          f"{' (lazy)' if lazy else ''}")
    assert up == [], "imports that point up the layer order:\n" + "\n".join(up)


def test_no_circle_joins_files_of_different_packages():
    edges = {m: {t for t, _, _ in imports if (m, t) not in LAZY_EXCEPTIONS}
             for m, imports in EDGES.items()}
    mixed = [c for c in _circles(edges) if len({package(m) for m in c}) > 1]
    assert mixed == [], mixed


def test_a_circle_inside_a_package_is_lazy():
    """Imports at the top of files form no circle: one of each circle's imports runs on
    first use, so no file meets another half-imported."""
    eager = {m: {t for t, lazy, _ in imports if not lazy} for m, imports in EDGES.items()}
    assert _circles(eager) == []


def test_the_exceptions_are_lazy_imports_that_exist():
    for (m, target), why in LAZY_EXCEPTIONS.items():
        found = [lazy for t, lazy, _ in EDGES.get(m, ()) if t == target]
        assert found, f"{m} -> {target} is listed but no longer imported: drop it"
        assert all(found), f"{m} imports {target} at the top of the file: {why}"


def test_old_public_paths_still_import():
    """autograph.function is the decorator on the package and a module by import;
    autograph.dask and autograph.ray are the adapters' modules themselves."""
    import autograph
    from autograph.distribute import dask, ray
    from autograph.function import ConcreteFunction, Function
    import autograph.dask
    import autograph.ray

    assert callable(autograph.function) and isinstance(autograph.function(lambda x: x),
                                                       Function)
    assert sys.modules["autograph.function"].ConcreteFunction is ConcreteFunction
    assert sys.modules["autograph.dask"] is dask and sys.modules["autograph.ray"] is ray
    assert autograph.dask.map_blocks is dask.map_blocks
