"""Calls: user code is converted recursively, library code stays as written.

Each call's callee is resolved, when it can be, at conversion time in the function's globals
(and builtins), so generated code stays readable:

- library code (NumPy, the standard library, autograph itself, any installed package) is
  left alone: `np.tanh(x)` stays `np.tanh(x)`, `print(...)` stays Python's print;
- builtins with a tensor meaning become the operator: `range(1, n + 1)` ->
  `ag__.range(1, n + 1)`, likewise len, enumerate, zip, abs, int, float, bool, min, max;
- everything else (user functions, methods, lambdas, callees held in local variables or
  closures, unknown names) becomes `ag__.converted_call(f, a, b, k=v)`, which converts user
  code at run time (cached) and calls anything else directly.
"""

import builtins
import sys

import gast

from autograph.converters.base import Transformer, local_names, rewrite_outermost
from autograph.converters.library import is_library
from autograph.operators.py_builtins import BUILTINS
from autograph.runtime.numpy import packing
from autograph.source import templates, traversal

# Calls that must stay as they are even though they are builtins or look like user code.
_LEAVE_ALONE = {"super", "locals", "globals", "vars", "eval", "exec", "print", "isinstance",
                "type", "getattr", "setattr", "hasattr", "iter", "next", "callable", "id",
                "repr", "str", "list", "tuple", "dict", "set", "sorted", "reversed", "sum",
                "any", "all", "map", "filter", "round", "divmod", "pow", "hash", "format",
                "open", "input", "issubclass", "frozenset", "bytes", "object", "slice",
                "chr", "ord", "hex", "oct", "bin", "complex"}


_CALL_OR_SCOPE = frozenset({gast.Call, gast.FunctionDef, gast.AsyncFunctionDef, gast.Lambda,
                            gast.ClassDef, gast.Delete})


def _is_call_or_scope(node):
    return node.__class__ in _CALL_OR_SCOPE


_DISPLAYS = (gast.List, gast.Tuple, gast.ListComp)
_DISPLAY_CLASSES = frozenset(_DISPLAYS)


def _list_names(fn_node, returns_array):
    """Names the function may bind to a Python list or tuple: assigned a display (or a
    comprehension), or the result of a call that is not NumPy's (a helper may return a
    list), or given `.append`/`.extend`/`.insert`. NumPy calls given one of them go through
    converted_call, which packs lists holding tensors."""
    names = set()
    for n in traversal.walk(fn_node, leaves=False):
        if isinstance(n, gast.Assign) and (
                isinstance(n.value, _DISPLAYS) or
                (isinstance(n.value, gast.Call) and not returns_array(n.value.func))):
            names.update(t.id for t in n.targets if isinstance(t, gast.Name))
        elif isinstance(n, gast.Call) and isinstance(n.func, gast.Attribute) and \
                n.func.attr in ("append", "extend", "insert") and \
                isinstance(n.func.value, gast.Name):
            names.add(n.func.value.id)
    return names


def _is_random_method(value):
    """runtime.numpy.random's test, without importing numpy.random (and OpenSSL, which it
    loads) for programs that draw nothing: before it is imported, no value is its draw."""
    if "numpy.random" not in sys.modules:
        return False
    from autograph.runtime.numpy import random
    return random.is_random_method(value)


def _numpy_packs(value, node, may_be_list):
    """Whether a NumPy call must go through converted_call, which packs Python lists that
    hold tensors as NumPy would: `np.asarray(x)`, `np.zeros(n)` (lengths may be tensors),
    calls given a list or tuple display (`np.concatenate((v, [i]))`) or a name the function
    binds to one (`parts = [a, b]; np.sum(parts)`), or the result of a call that is not
    NumPy's (`np.sum(helper(x))`, `np.stack(list(xs))`). Other NumPy calls stay as written,
    dispatching on tensors by themselves."""
    if _is_random_method(value):   # a draw: staged by converted_call (every run)
        return True
    if (getattr(value, "__module__", None) or "")[:6] == "scipy.":
        from autograph.runtime.numpy import scipy_direct   # scipy.linalg.solve, norm.logpdf
        return scipy_direct.lookup(value) is not None
    if not packing.is_numpy_callable(value):
        return False
    try:
        if value in packing.CONVERTS:
            return True
    except TypeError:   # an unhashable callee
        return False
    return any(may_be_list(a) for a in node.args) or \
        any(may_be_list(k.value) for k in node.keywords)


class _CallTrees(Transformer):

    def __init__(self, ctx):
        super().__init__(ctx)
        self.locals = set()
        self.lists = set()   # names the function binds to list or tuple displays
        code = getattr(ctx.fn, "__code__", None)
        # closure variables are looked up when called (their cells may change or be empty)
        self.free_names = set(code.co_freevars) if code is not None else set(ctx.closure)
        uses_class_cell = code is not None and "__class__" in code.co_freevars
        params = code.co_varnames[:code.co_argcount] if code is not None else ()
        self.first_param = params[0] if uses_class_cell and params else None

    def visit_FunctionDef(self, node):
        saved, saved_lists = self.locals, self.lists
        self.locals = saved | local_names(node)
        self.lists = saved_lists | _list_names(node, self._returns_array)
        self._rewrite_calls(node.body)
        for d in node.args.defaults + [d for d in node.args.kw_defaults if d is not None]:
            self.visit(d)
        self.locals, self.lists = saved, saved_lists
        return node

    def _rewrite_calls(self, stmts):
        """Visit only the calls and nested scopes under `stmts` (found by a plain walk):
        nothing else in a function is rewritten."""
        for i, stmt in enumerate(stmts):
            if _is_call_or_scope(stmt):
                stmts[i] = self.visit(stmt)
                continue
            rewrite_outermost(stmt, _is_call_or_scope, self.visit)

    def visit_Delete(self, node):
        """`del a[k]` -> `ag__.del_item(a, k)`: a deletion is a call of the container's
        method, refused like `pop` when it would change a list once inside a staged loop.
        Deleting names (and attributes) stays a `del` statement."""
        node = self.generic_visit(node)
        if not all(isinstance(t, gast.Subscript) for t in node.targets):
            return node
        calls = []
        for t in node.targets:
            key = t.slice
            if isinstance(key, gast.Slice):
                none = gast.Constant(value=None, kind=None)
                key = templates.replace_as_expression(
                    "slice(lower, upper, step)", lower=key.lower or none,
                    upper=key.upper or none, step=key.step or none)
            calls.append(templates.replace_as_expression(
                "ag__.del_item(target, key)", origin=node, target=t.value, key=key))
        value = calls[0] if len(calls) == 1 else gast.Tuple(elts=calls, ctx=gast.Load())
        return templates.replace("value", origin=node, value=value)[0]

    def _may_be_list(self, arg):
        """Whether an argument may be a Python list or tuple (which may hold tensors)."""
        cls = arg.__class__
        if cls in _DISPLAY_CLASSES:
            return True
        if cls is gast.Name:
            return arg.id in self.lists
        if cls is gast.Call:   # (already rewritten: converted_call(f, ...) or ag__.op(...))
            func = arg.func
            if isinstance(func, gast.Attribute) and isinstance(func.value, gast.Name) and \
                    func.value.id == "ag__":
                return func.attr == "converted_call" and bool(arg.args) and \
                    not self._returns_array(arg.args[0])
            return not self._returns_array(func)
        return False

    def _returns_array(self, func):
        """Whether a call of `func` certainly gives an array, not a list: NumPy's functions."""
        value, known = self._resolve(func)
        return known and value is not None and packing.is_numpy_callable(value)

    def visit_Lambda(self, node):
        saved = self.locals
        self.locals = saved | local_names(node)
        node.body = self.visit(node.body)
        self.locals = saved
        return node

    def _resolve(self, func):
        """The value `func` denotes at conversion time, or None when it cannot be known."""
        parts = []
        while isinstance(func, gast.Attribute):
            parts.append(func.attr)
            func = func.value
        if not isinstance(func, gast.Name):
            return None, False
        root = func.id
        if root == "ag__":  # the operators, called by code other passes generated
            return None, True
        if root in self.locals or root in self.free_names:
            return None, False
        if root in self.ctx.namespace:
            value = self.ctx.namespace[root]
        elif hasattr(builtins, root):
            value = getattr(builtins, root)
        else:
            return None, False
        for attr in reversed(parts):
            if isinstance(value, type(sys)):  # a module: attribute lookups are static enough
                if not hasattr(value, attr):
                    return None, False
                value = getattr(value, attr)
            else:
                # an attribute of an object (a method): only library objects are static
                if not is_library(value):
                    return None, False
                value = getattr(value, attr, None)
                if value is None:
                    return None, False
        return value, True

    def visit_Call(self, node):
        node = self.generic_visit(node)
        func = node.func
        if (isinstance(func, gast.Name) and func.id == "super" and not node.args
                and self.first_param is not None):
            # zero-argument super() finds its class through the compiler's __class__ cell,
            # which generated code does not get: name the class cell and `self` explicitly
            node.args = [templates.replace_as_expression("__class__"),
                         templates.replace_as_expression(self.first_param)]
            return node
        value, known = self._resolve(func)
        if known and value is None:
            return node
        if known:
            if isinstance(func, gast.Name) and func.id in _LEAVE_ALONE and value is getattr(builtins, func.id, None):
                return node
            try:
                op_name = BUILTINS.get(value)
            except TypeError:  # unhashable callee
                op_name = None
            if op_name is not None:
                node.func = templates.replace_as_expression(f"ag__.{op_name}", origin=node)
                return node
            if is_library(value) and not _numpy_packs(value, node, self._may_be_list):
                return node
        new = templates.replace_as_expression("ag__.converted_call(f)", origin=node,
                                              f=templates.moved(func))
        new.args = new.args + node.args
        new.keywords = node.keywords
        return new


def transform(node, ctx):
    """Rewrite the calls of the function (and of the functions nested in it)."""
    return _CallTrees(ctx).visit(node)

