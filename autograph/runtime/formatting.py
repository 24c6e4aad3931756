"""Staged strings: text formatted from tensors when the graph runs.

While tracing, `f"loss={loss:.4f}"` (and `str.format`, `%` on a literal template) cannot make
the text: `loss` has no value yet. Converted code makes a `StagedString` instead (see
autograph.operators.formatting): the parts known now (literal text, Python values already
formatted) and a `Field` per operand that holds tensors, with its conversion (`!r`) and
spec (`.4f`). `ag.print` stages it as part of one print node, whose kernel renders the fields
from the run's values exactly as Python formats those NumPy values (0-d arrays as NumPy
scalars, as NumPy's own operations give them).

A staged string is not a `str`: where Python needs the text now (a dict key, a comparison,
`len`) it raises with the user's line. Its `str()` is its symbolic text (tensors shown by their
`repr`, as Python's `print` shows a tensor), so Python's `print` and messages still work.
"""

import numpy as np

from autograph.runtime.devices import device_of
from autograph.runtime.ir import nest
from autograph.runtime.ir import tensor as tensor_module
from autograph.runtime.ir.tensor import SymbolicTensorError, Tensor


class _Slot:
    """Where a tensor's run-time value goes in a field's value."""

    __slots__ = ()

    def __repr__(self):
        return "<tensor>"


SLOT = _Slot()


class _Sub:
    """A staged string used as an operand of another: rendered first, then formatted."""

    __slots__ = ("parts",)

    def __init__(self, parts):
        self.parts = parts

    def __repr__(self):
        return f"<text {self.parts!r}>"


class Field:
    """One operand that holds tensors. `value`: the operand with SLOT for each tensor (and
    _Sub for each staged string); `style` "{}": `format(convert(value), spec)`, "%":
    `spec % value` (value a tuple: `*` widths first). `spec` is text, or parts when a
    nested field of the spec holds tensors."""

    __slots__ = ("value", "conversion", "spec", "style")

    def __init__(self, value, conversion, spec, style):
        self.value, self.conversion, self.spec, self.style = value, conversion, spec, style

    def __repr__(self):
        conv = f"!{self.conversion}" if self.conversion else ""
        return f"Field({self.value!r}{conv}, {self.spec!r}, {self.style})"


def lift(value, tensors):
    """`value` with its tensors replaced by SLOT (appended to `tensors` in flatten order)
    and staged strings by _Sub; None when it holds neither (a Python value)."""
    if isinstance(value, Tensor):
        tensors.append(value)
        return SLOT
    if isinstance(value, StagedString):
        tensors.extend(value.tensors)
        return _Sub(value.parts)
    if _is_variable(value):
        return lift(value.read_value(), tensors)
    if not nest.is_nested(value):
        return None
    leaves = nest.flatten(value)
    if not any(isinstance(x, (Tensor, StagedString)) or _is_variable(x) for x in leaves):
        return None
    lifted = []
    for leaf in leaves:
        slot = lift(leaf, tensors)
        lifted.append(leaf if slot is None else slot)
    return nest.pack_sequence_as(value, lifted)


# types formatting never stages (asked first: the common case must cost next to nothing)
PLAIN = frozenset([int, float, str, bool, complex, bytes, type(None), np.float64, np.int64])


def holds_staged(value):
    """Whether formatting `value` needs run-time values: a tensor, a staged string, an
    ag.Variable while tracing, or a structure holding one."""
    t = type(value)
    if t in PLAIN:
        return False
    if t is Tensor or t is StagedString:
        return True
    if t is tuple or t is list:
        for v in value:
            if type(v) not in PLAIN and holds_staged(v):
                return True
        return False
    if isinstance(value, (Tensor, StagedString)):
        return True
    if _is_variable(value):
        from autograph.runtime.ir.graph import get_default_graph
        return get_default_graph() is not None
    if nest.is_nested(value):
        return any(holds_staged(x) for x in nest.children(value))
    return False


def _is_variable(x):
    return hasattr(x, "read_value") and hasattr(x, "assign")


# -- rendering (in the print kernel, and for the symbolic text) -------------------------------

def host_value(a):
    """A run's array as Python would see it eagerly: on the host, 0-d as a NumPy scalar."""
    if not isinstance(a, (np.ndarray, np.generic)):
        device = device_of(a)
        a = device.to_host(a) if device is not None else np.asarray(a)
    if isinstance(a, np.ndarray) and a.ndim == 0:
        return a[()]
    return a


def render(parts, values, field_fn=None):
    """The text of `parts`, taking the tensors' values in order from the iterator `values`."""
    field_fn = field_fn or _render_field
    out = []
    for p in parts:
        out.append(p if type(p) is str else field_fn(p, values))
    return "".join(out)


def _fill(template, values, field_fn):
    if template is SLOT:
        return next(values)
    if type(template) is _Sub:
        return render(template.parts, values, field_fn)
    if not nest.is_nested(template):
        return template
    return nest.pack_sequence_as(template,
                                 [_fill(x, values, field_fn) for x in nest.flatten(template)])


_CONVERT = {"r": repr, "s": str, "a": ascii}


def _render_field(field, values):
    value = _fill(field.value, values, _render_field)
    spec = field.spec if type(field.spec) is str else render(field.spec, values)
    if field.style == "%":
        return spec % value
    if field.conversion:
        value = _CONVERT[field.conversion](value)
    return format(value, spec)


class _Shown:
    """A tensor in the symbolic text: shown by its repr, whatever the spec."""

    __slots__ = ("tensor",)

    def __init__(self, tensor):
        self.tensor = tensor

    def __repr__(self):
        return repr(self.tensor)

    __str__ = __repr__


def _symbolic_field(field, values):
    value = _fill(field.value, values, _symbolic_field)
    if type(field.spec) is not str:
        render(field.spec, values, _symbolic_field)   # (takes the spec's tensors)
    if field.style == "%":
        value = value[-1]   # (after the `*` width and precision)
    return repr(value) if isinstance(value, _Shown) else str(value)


def symbolic_text(parts, tensors):
    """The text with each tensor shown as its repr (what Python's print shows)."""
    return render(parts, (_Shown(t) for t in tensors), _symbolic_field)


# -- the staged string ----------------------------------------------------------------------

class StagedString:
    """Text that `ag.print` prints with the values of a run (see the module docstring).
    `parts`: str and Field items; `tensors`: the tensors their slots take, in order."""

    __slots__ = ("parts", "tensors")

    def __init__(self, parts, tensors):
        merged = []
        for p in parts:   # adjacent literal text in one piece
            if type(p) is str and merged and type(merged[-1]) is str:
                merged[-1] += p
            elif p != "":
                merged.append(p)
        self.parts = tuple(merged)
        self.tensors = tuple(tensors)

    def __str__(self):
        return symbolic_text(self.parts, self.tensors)

    def __repr__(self):
        return f"StagedString({str(self)!r})"

    def __format__(self, spec):
        return format(str(self), spec)

    # `text + staged` and `staged + text` stay staged: as sound as the formatting itself
    def __add__(self, other):
        if isinstance(other, str):
            return StagedString(self.parts + (other,), self.tensors)
        if isinstance(other, StagedString):
            return StagedString(self.parts + other.parts, self.tensors + other.tensors)
        return NotImplemented

    def __radd__(self, other):
        if isinstance(other, str):
            return StagedString((other,) + self.parts, self.tensors)
        return NotImplemented

    # what needs the text now
    def _refuse(self, what):
        raise SymbolicTensorError(
            f"Cannot use the string {str(self)!r}, formatted from symbolic tensors, {what}: "
            "its text exists only when the graph runs. Print it with ag.print(...) (it "
            "prints the values on every call); to compute with the values, use the tensors "
            f"themselves.{tensor_module.where(' At ')}")

    def __hash__(self):
        self._refuse("as a dict key or set element (hash)")

    def __eq__(self, other):
        self._refuse("in a comparison (==)")

    def __ne__(self, other):
        self._refuse("in a comparison (!=)")

    def __lt__(self, other):
        self._refuse("in a comparison (<)")

    __le__ = __gt__ = __ge__ = __lt__

    def __bool__(self):
        self._refuse("as a truth value")

    def __len__(self):
        self._refuse("with len()")

    def __iter__(self):
        self._refuse("in an iteration")

    def __contains__(self, item):
        self._refuse("with `in`")

    def __getitem__(self, key):
        self._refuse("with an index or slice")

    def __mul__(self, other):
        self._refuse("repeated with *")

    def __getattr__(self, name):
        # an AttributeError (hasattr probes stay False), that says why for str's methods
        if name.startswith("_") or not hasattr(str, name):
            raise AttributeError(f"'StagedString' object has no attribute {name!r}")
        raise AttributeError(
            f"Cannot use the string {str(self)!r}, formatted from symbolic tensors, with the "
            f"str method .{name}(): its text exists only when the graph runs. Print it with "
            f"ag.print(...) (it prints the values on every call).{tensor_module.where(' At ')}")


def returned_error(staged, function_name):
    """The error for a staged string returned by a traced function."""
    return TypeError(
        f"{function_name} returned the string {str(staged)!r}, formatted from symbolic "
        "tensors while tracing: its text exists only inside the graph. Print it with "
        "ag.print(...) inside the function, or return the tensors and format the arrays "
        "the call gives.")
