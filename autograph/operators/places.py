"""Places: attributes and items that a branch or loop writes (`self.total`, `d['k']`).

A tensor `if` runs both branches while tracing, and a tensor loop runs its body once, on
the same Python objects: a write like `x['b'] = 1` in one branch would still be there when
the other branch runs, and a tensor made inside a loop body would be left on the object
after the loop. So the statement's operator treats each place it writes as state, like a
variable: it reads the place before the statement, restores it before each branch or
iteration is traced, reads it after, and writes the staged result back.

Generated code names the places only (`places=(ag__.item(x, 'b'),)`); on Python values the
operators never touch them, so converted code does exactly what the original does. A place
that does not exist yet (a key not in the dict, an attribute not set) reads as
`Undefined(name)`, and putting an Undefined back removes it again, so restoring never
invents keys or attributes the program did not make.
"""

from autograph.operators.variables import Undefined


class Place:
    """One attribute or item of an object, named as the user wrote it."""

    __slots__ = ("obj", "key", "name")

    def __init__(self, obj, key, name):
        self.obj, self.key, self.name = obj, key, name

    def __repr__(self):
        return f"<place {self.name}>"


class _Attr(Place):
    __slots__ = ()

    def get(self):
        try:
            return getattr(self.obj, self.key)
        except AttributeError:
            return Undefined(self.name)

    def put(self, value):
        if not isinstance(value, Undefined):
            setattr(self.obj, self.key, value)
        elif hasattr(self.obj, self.key):
            delattr(self.obj, self.key)


class _Item(Place):
    __slots__ = ()

    def get(self):
        try:
            return self.obj[self.key]
        except (KeyError, IndexError):
            return Undefined(self.name)

    def put(self, value):
        if not isinstance(value, Undefined):
            self.obj[self.key] = value
            return
        try:
            del self.obj[self.key]
        except (KeyError, IndexError):
            pass


class _Variable(Place):
    """A variable of the function around the statement, which closures made inside the
    statement read (so the statement's functions share it through `nonlocal` instead of
    passing it as state: Python's late binding). `obj` reads it, `key` assigns it."""
    __slots__ = ()

    def get(self):
        try:
            return self.obj()
        except NameError:
            return Undefined(self.name)

    def put(self, value):
        self.key(value)


def variable(read, assign, name):
    """The variable `name` as a place: `read()` gives its value, `assign(v)` sets it."""
    return _Variable(read, assign, name)


def attr(obj, name, label=None):
    """`obj.name` as a place (`label`: how the user wrote it, for messages)."""
    return _Attr(obj, name, label or name)


def item(obj, key, label=None):
    """`obj[key]` as a place."""
    return _Item(obj, key, label or repr(key))


def get_all(places):
    return tuple(p.get() for p in places)


def put_all(places, values):
    for p, v in zip(places, values):
        p.put(v)
