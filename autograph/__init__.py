"""autograph: a standalone, NumPy-native AutoGraph.

Python control flow over arrays (`if`, `while`, `for`, `break`, `continue`, `return`,
`and`/`or`/`not`, `a if c else b`) is rewritten into `cond`/`while_loop` graph nodes;
`autograph.function` traces a function once per input signature and runs the cached
graph fast on a device (NumPy on the CPU by default).

This module holds the public API only. Names are imported on first use, so
`import autograph` stays cheap and each layer loads only when it is needed.
"""

import importlib
import sys
import types

from autograph import _bundle

_bundle.install()   # before any other module of ours: it may hold their bytecode

__version__ = "0.1.0"

# public name -> (module, attribute); the module is imported on first access
_EXPORTS = {
    # tf.function counterpart
    "function": ("autograph.function", "function"),
    "Function": ("autograph.function", "Function"),
    "ConcreteFunction": ("autograph.function", "ConcreteFunction"),
    "TensorSpec": ("autograph.runtime.trace_type", "TensorSpec"),
    "config": ("autograph.config", None),
    "data": ("autograph.data", None),
    # the compiler
    "to_code": ("autograph.api", "to_code"),
    "to_graph": ("autograph.api", "to_graph"),
    "do_not_convert": ("autograph.api", "do_not_convert"),
    "converted_call": ("autograph.api", "converted_call"),
    # graph-aware helpers that also run eagerly on NumPy
    "Tensor": ("autograph.runtime.ir.tensor", "Tensor"),
    "Graph": ("autograph.runtime.ir.graph", "Graph"),
    "cond": ("autograph.runtime.control_flow", "cond"),
    "while_loop": ("autograph.runtime.control_flow", "while_loop"),
    "TensorArray": ("autograph.runtime.tensor_array", "TensorArray"),
    "Variable": ("autograph.runtime.variables", "Variable"),
    "print": ("autograph.runtime.ops", "print_"),
    "range": ("autograph.runtime.ops", "range_"),
    "constant": ("autograph.runtime.ops", "constant"),
    "set_loop_options": ("autograph.runtime.loop_options", "set_loop_options"),
    # state: Modules and optimizers
    "Module": ("autograph.module", "Module"),
    "optimizers": ("autograph.optimizers", None),
    # gradients
    "grad": ("autograph.autodiff.api", "grad"),
    "value_and_grad": ("autograph.autodiff.api", "value_and_grad"),
    "vjp": ("autograph.autodiff.api", "vjp"),
    "stop_gradient": ("autograph.autodiff.api", "stop_gradient"),
    # batching
    "vmap": ("autograph.batching.api", "vmap"),
    "GradientTape": ("autograph.autodiff.tape", "GradientTape"),
    "custom_gradient": ("autograph.autodiff.custom", "custom_gradient"),
    # forward mode and Jacobians (issue 33)
    "jvp": ("autograph.autodiff.forward", "jvp"),
    "jacfwd": ("autograph.autodiff.forward", "jacfwd"),
    "jacrev": ("autograph.autodiff.forward", "jacrev"),
    "hessian": ("autograph.autodiff.forward", "hessian"),
    "hvp": ("autograph.autodiff.forward", "hvp"),
    "custom_jvp": ("autograph.autodiff.custom_jvp", "custom_jvp"),
    # devices
    "device": ("autograph.runtime.devices", "device"),
    "register_device": ("autograph.runtime.devices", "register_device"),
    "list_devices": ("autograph.runtime.devices", "list_devices"),
    # saving and loading
    "saved_model": ("autograph.saved_model", None),
    # export for other runtimes
    "onnx": ("autograph.onnx", None),
    # logging
    "set_verbosity": ("autograph.config", "set_verbosity"),
    # seeing what the compiler did
    "explore": ("autograph.explorer", "explore"),
    "profile": ("autograph.explorer.profile", "profile"),
}

__all__ = sorted(_EXPORTS)


def __getattr__(name):
    try:
        module_name, attr = _EXPORTS[name]
    except KeyError:
        raise AttributeError(f"module 'autograph' has no attribute {name!r}") from None
    module = importlib.import_module(module_name)
    value = module if attr is None else getattr(module, attr)
    globals()[name] = value  # cache: later lookups skip __getattr__
    return value


def __dir__():
    return sorted(list(globals()) + __all__)


class _Package(types.ModuleType):
    """`function` is both the decorator and the name of its module. Importing the module
    (`from autograph.function import ConcreteFunction`, or loading anything that needs it)
    makes the import system set this package's attribute `function` to the module; here it
    gets the decorator instead, so `ag.function` is the decorator whatever was imported
    first, and `import autograph` imports no tracing machinery (a process that only loads a
    saved model never does)."""

    def __setattr__(self, name, value):
        if name == "function" and isinstance(value, types.ModuleType) \
                and value.__name__ == "autograph.function":
            value = value.function
        super().__setattr__(name, value)


sys.modules[__name__].__class__ = _Package
