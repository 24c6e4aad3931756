"""`ag.Module`: a named container of Variables, functions and other Modules (tf.Module).

A Module is an ordinary Python object whose attributes are searched for state: its
`variables`, `trainable_variables` and `submodules` are found through attributes, and
inside them through lists, tuples (namedtuples too), dicts and nested Modules, at any depth.
Nothing needs registering: `self.w = ag.Variable(...)` or `self.layers = [Dense(...), ...]`
is enough, so an optimizer gets `model.trainable_variables` and a saver the whole object tree.

Order is deterministic, the same on every run, so that two programs building the same model
list the same Variables in the same order (an optimizer's slots, a checkpoint's entries):
- a Module's attributes are visited in sorted name order, dict entries in sorted key order
  (insertion order when the keys do not sort), lists and tuples in index order;
- a Module's own leaves come before those of its submodules, which follow in the order they
  were found (TensorFlow's tf.Module order);
- each object is listed once, at the first path that reaches it (a Variable shared by two
  layers, a Module reachable twice, or a cycle of references).

`walk(obj)` is that traversal with paths: the contract the saved-model writer builds on.

`name` is the Module's name: a valid Python identifier, by default the class name in
snake_case (`SimpleModel` -> `simple_model`). Variables created under `with
module.name_scope:` (or in a method decorated with `Module.with_name_scope`) are named
`module_name/variable_name`, as in TensorFlow.

Methods decorated with `ag.function` trace per instance (ag.function binds a Function of its
own to each instance), so two models of one class never share traces or Variables.
"""

import functools
import re

from autograph.runtime import variables as variables_module
from autograph.runtime.variables import Variable

__all__ = ["Module", "walk", "follow"]

_IDENTIFIER = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
_CAMEL = re.compile(r"((?<=[a-z0-9])[A-Z]|(?!^)[A-Z](?=[a-z]))")

# instance attributes that belong to Module itself, not to the user's object tree
_OWN_ATTRIBUTES = frozenset({"_ag_module_name", "_ag_scope_name"})

# leaves Python may share between unrelated places: never deduplicated by identity
_VALUE_TYPES = (type(None), bool, int, float, complex, str, bytes)


def _snake_case(name):
    return _CAMEL.sub(r"_\1", name).lower()


def _check_name(name):
    if not isinstance(name, str) or not _IDENTIFIER.match(name):
        raise ValueError(
            f"{name!r} is not a valid module name: a Module's name must be a valid Python "
            "identifier (letters, digits and underscores, not starting with a digit), as a "
            "class name is.")
    return name


class Module:
    """Base class for objects that own Variables: `class Dense(ag.Module): ...`.

    `Module(name=None)`: `name` defaults to the class name in snake_case. Subclasses that do
    not call `super().__init__()` (the seeds' `Count`) still work, with the default name.
    A subclass may name attributes the walk skips in a class attribute
    `_ag_ignored_attributes` (a set of names), e.g. an index that refers back to objects
    that live elsewhere in the tree.
    """

    _ag_ignored_attributes = frozenset()

    def __init__(self, name=None):
        if name is None:
            name = _snake_case(type(self).__name__)
        self._ag_module_name = _check_name(name)
        self._ag_scope_name = name

    # -- naming --------------------------------------------------------------------------------

    @property
    def name(self):
        """The Module's name (a valid identifier)."""
        try:
            return self._ag_module_name
        except AttributeError:   # __init__ not called: the class's default
            return _snake_case(type(self).__name__)

    @property
    def name_scope(self):
        """A context manager: Variables created inside are named `<name>/<their name>`."""
        return variables_module.name_scope(getattr(self, "_ag_scope_name", self.name))

    @classmethod
    def with_name_scope(cls, method):
        """Decorator: run `method` inside the instance's `name_scope`."""
        @functools.wraps(method)
        def wrapped(self, *args, **kwargs):
            with self.name_scope:
                return method(self, *args, **kwargs)
        return wrapped

    # -- the object tree -----------------------------------------------------------------------

    @property
    def variables(self):
        """Every Variable of this Module and its submodules, each once, in walk order."""
        return tuple(v for _, v in walk(self) if isinstance(v, Variable))

    @property
    def trainable_variables(self):
        """The Variables with `trainable=True`, in the order of `variables`."""
        return tuple(v for v in self.variables if v.trainable)

    @property
    def non_trainable_variables(self):
        """The Variables with `trainable=False` (an optimizer's counters, statistics)."""
        return tuple(v for v in self.variables if not v.trainable)

    @property
    def submodules(self):
        """Every Module reachable from this one (not itself), each once, in walk order."""
        return tuple(m for path, m in walk(self) if path and isinstance(m, Module))

    def __repr__(self):
        return f"<{type(self).__name__} {self.name!r}>"


def _module_items(module):
    """A Module's attributes as (name, value), sorted by name, without Module's own and
    without those its class lists in `_ag_ignored_attributes` (indexes, caches)."""
    ignored = getattr(type(module), "_ag_ignored_attributes", ())
    return sorted((k, v) for k, v in vars(module).items()
                  if k not in _OWN_ATTRIBUTES and k not in ignored)


def _children(value):
    """(step, child) pairs of a container, in their deterministic order; None for a leaf."""
    if isinstance(value, dict):
        items = list(value.items())
        try:
            items.sort(key=lambda kv: kv[0])
        except TypeError:   # keys of mixed types: keep insertion order
            pass
        return items
    if isinstance(value, (list, tuple)):
        fields = getattr(type(value), "_fields", None)   # a namedtuple: its field names
        if isinstance(value, tuple) and fields:
            return list(zip(fields, value))
        return list(enumerate(value))
    return None


def walk(obj, recursive=True):
    """The object tree below `obj` as a list of `(path, value)` pairs.

    Contract (the saved-model writer relies on it):
    - `path` is a tuple of steps from `obj`: a `str` for a Module attribute or a namedtuple
      field, an `int` for a list/tuple index, the key itself for a dict entry. `obj` itself,
      if it is a Module, comes first with the path `()`.
    - Lists, tuples and dicts are looked into, never listed themselves. Every other value is
      listed: Modules, Variables, `ag.function`s, arrays, Python numbers, strings, None.
      A Module is listed and then, when `recursive`, its attributes are too, with paths that
      extend its own; with `recursive=False`, submodules are listed but not entered.
    - Each object appears once, at the first path that reaches it, so a shared Variable or
      a reference cycle is listed once; Python values that may be shared by accident
      (None, bools, numbers, strings, bytes) are listed at every path (a container object
      reached twice is entered once).
    - Order is deterministic: attributes by sorted name, dict entries by sorted key
      (insertion order if the keys do not sort), sequences by index; a Module's own values
      before those of the submodules found in it, which follow in the order found.
    - Attributes are the instance's `vars()`, less the class's `_ag_ignored_attributes`:
      methods and functions defined on the class (e.g. an `@ag.function def __call__`) are
      not part of the walk.

    `walk` accepts any object; a non-Module, non-container `obj` gives `[((), obj)]`.
    """
    out = []
    seen = set()

    def note(value):
        if isinstance(value, _VALUE_TYPES):
            return True
        if id(value) in seen:
            return False
        seen.add(id(value))
        return True

    def visit(value, path, pending):
        children = _children(value)
        if children is not None:
            if id(value) in seen:   # a container already entered: a cycle or an alias
                return
            seen.add(id(value))
            for step, child in children:
                visit(child, path + (step,), pending)
            return
        if not note(value):
            return
        out.append((path, value))
        if isinstance(value, Module) and recursive:
            pending.append((path, value))

    def expand(path, module):
        pending = []
        for name, value in _module_items(module):
            visit(value, path + (name,), pending)
        for sub_path, sub in pending:
            expand(sub_path, sub)

    if isinstance(obj, Module):
        seen.add(id(obj))
        out.append(((), obj))
        expand((), obj)
    else:
        pending = []
        visit(obj, (), pending)
        for sub_path, sub in pending:
            expand(sub_path, sub)
    return out


def follow(obj, path):
    """The value at `path` (a path from `walk(obj)`): the inverse of the walk's steps."""
    for step in path:
        if isinstance(obj, dict):
            obj = obj[step]
        elif isinstance(step, str):   # a Module attribute or a namedtuple field
            obj = getattr(obj, step)
        else:
            obj = obj[step]
    return obj
