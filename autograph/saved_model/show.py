"""`autograph saved-model show DIR`: what a saved model holds, like TensorFlow's
`saved_model_cli show --all`: the object tree, every function's saved signatures (inputs
and outputs with dtypes and shapes) and the Variables. The model is loaded with the same
checks as `load` (nothing in it runs)."""

from autograph.saved_model import format as fmt
from autograph.saved_model.load import load
from autograph.saved_model.restored import RestoredFunction, RestoredObject


def describe(export_dir):
    obj = load(export_dir)
    lines = [f"saved model {export_dir} (format {fmt.FORMAT_VERSION} reader)", "",
             "objects:"]
    seen = set()
    _tree(obj, "root", 1, lines, seen)
    functions = []
    _functions(obj, "root", functions, set())
    lines += ["", "functions:"]
    if not functions:
        lines.append("  (none)")
    for path, fn in functions:
        lines.append(f"  {path}")
        for c in fn.concrete_functions:
            lines.append(f"    {c.signature()}")
            lines.append(f"      -> {c.outputs_text() or '()'}")
    variables = obj.variables if isinstance(obj, RestoredObject) else \
        [v for c in getattr(obj, "concrete_functions", ()) for v in c.variables]
    lines += ["", "variables:"]
    if not variables:
        lines.append("  (none)")
    for v in variables:
        shape = "(" + ", ".join(str(d) for d in v.shape) + ("," if len(v.shape) == 1 else "") + ")"
        lines.append(f"  {v.name}: {v.dtype.name}{shape}" +
                     ("" if v.trainable else "  (not trainable)"))
    return "\n".join(lines)


def _tree(x, name, depth, lines, seen):
    pad = "  " * depth
    if id(x) in seen and isinstance(x, (RestoredObject, list, dict)):
        lines.append(f"{pad}{name}: (shown above)")
        return
    seen.add(id(x))
    if isinstance(x, RestoredObject):
        label = x._class_name + (f" {x._module_name!r}" if x._module_name else "")
        lines.append(f"{pad}{name}: {label}")
        for k, child in x._children.items():
            _tree(child, k, depth + 1, lines, seen)
    elif isinstance(x, RestoredFunction):
        n = len(x.concrete_functions)
        lines.append(f"{pad}{name}: function ({n} signature{'' if n == 1 else 's'})")
    elif isinstance(x, (list, tuple)):
        lines.append(f"{pad}{name}: {type(x).__name__}[{len(x)}]")
        for i, child in enumerate(x):
            _tree(child, f"[{i}]", depth + 1, lines, seen)
    elif isinstance(x, dict):
        lines.append(f"{pad}{name}: dict[{len(x)}]")
        for k, child in x.items():
            _tree(child, f"[{k!r}]", depth + 1, lines, seen)
    elif hasattr(x, "assign") and hasattr(x, "numpy"):
        lines.append(f"{pad}{name}: Variable {x.name!r} {x.dtype.name}{tuple(x.shape)}")
    else:
        lines.append(f"{pad}{name}: {x!r}")


def _functions(x, path, out, seen):
    if id(x) in seen:
        return
    seen.add(id(x))
    if isinstance(x, RestoredFunction):
        out.append((path, x))
    elif isinstance(x, RestoredObject):
        for k, child in x._children.items():
            _functions(child, f"{path}.{k}", out, seen)
    elif isinstance(x, (list, tuple)):
        for i, child in enumerate(x):
            _functions(child, f"{path}[{i}]", out, seen)
    elif isinstance(x, dict):
        for k, child in x.items():
            _functions(child, f"{path}[{k!r}]", out, seen)
