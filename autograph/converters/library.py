"""What counts as library code: never converted, called as it is.

NumPy, the standard library, installed packages (anything under site-packages) and
autograph itself are library code; everything else (the user's files, `__main__`, tests,
code exec'd from a string) is user code that the compiler converts when it is called.
The call-tree converter reads this at conversion time, converted_call at run time.
"""

import functools
import os
import sys
import types

from autograph.frames import library_dirs

_LIBRARY_ROOTS = {"numpy", "autograph", "scipy", "cupy", "torch", "jax", "jaxlib",
                  "tensorflow", "pandas", "gast", "array_api_strict", "array_api_compat",
                  "pytest", "_pytest", "hypothesis"}


@functools.lru_cache(maxsize=4096)   # bounded: exec'd code may invent module names
def _module_is_library(module_name):
    if not module_name:
        return False
    root = module_name.split(".")[0]
    if root in _LIBRARY_ROOTS or root in sys.stdlib_module_names or root == "builtins":
        return True
    if root == "__main__":
        return False
    module = sys.modules.get(module_name) or sys.modules.get(root)
    path = getattr(module, "__file__", None)
    if not path:
        return module is not None  # built-in or frozen modules
    path = os.path.realpath(path)
    return path.startswith(library_dirs())


def is_library(value):
    """True when `value` (a module, function, class, method or object) is library code."""
    if isinstance(value, types.ModuleType):
        return _module_is_library(value.__name__)
    if isinstance(value, types.MethodType):
        value = value.__func__
    module = getattr(value, "__module__", None)
    if isinstance(value, types.FunctionType) and not isinstance(module, str):
        return False  # Python code exec'd without a module name: the user's
    if not isinstance(module, str):
        module = getattr(type(value), "__module__", None)
    if isinstance(value, (types.FunctionType, type)) or callable(value):
        return _module_is_library(module) if isinstance(module, str) else True
    return _module_is_library(getattr(type(value), "__module__", None))
