"""String formatting in converted code: f-strings, `str.format`, `%`, and Python's `print`.

The formatting converter writes

    f"step {i}: loss={loss:.4f}"   ->  ag__.str_format('step {}: loss={:.4f}', i, loss)
    "{} {:>6}".format(a, b)       ->  ag__.str_format('{} {:>6}', a, b)
    "%d: %.2f" % (i, x)           ->  ag__.str_mod('%d: %.2f', (i, x))
    print(...)                    ->  ag__.py_print(...)

On Python values each is exactly the Python operation (`template.format(...)`,
`template % values`, `print`). When an operand holds a tensor (or a staged string, or an
ag.Variable while tracing) they make an autograph.runtime.formatting.StagedString: the
fields of Python values are formatted now, the others when the graph runs, so
`ag.print(f"{loss:.4f}")` prints the value of every call.

Python's `print` keeps its meaning (it runs while tracing and shows the symbolic tensor), but
warns once per line when an argument is a tensor or a staged string: `ag.print` prints values.
"""

import builtins
import functools
import re

import numpy as np

from autograph.operators.location import warn_once, where
from autograph.runtime.formatting import PLAIN, Field, StagedString, holds_staged, lift
from autograph.runtime.ir.tensor import SymbolicTensorError, Tensor


@functools.lru_cache(maxsize=None)
def _formatter():
    """string.Formatter, imported when a format string meets a tensor (string's import
    compiles a regex: most first calls format nothing)."""
    import string
    return string.Formatter()


def _any_staged(args, kwargs):
    for a in args:
        if type(a) not in PLAIN and holds_staged(a):
            return True
    if kwargs:
        for a in kwargs.values():
            if type(a) not in PLAIN and holds_staged(a):
                return True
    return False


# -- str.format -------------------------------------------------------------------------------

def str_format(template, *args, **kwargs):
    """`template.format(*args, **kwargs)`; staged when an operand holds tensors."""
    if not _any_staged(args, kwargs):
        return template.format(*args, **kwargs)
    tensors = []
    try:
        parts = _format_parts(template, args, kwargs, tensors, [0], depth=2)
    except (ValueError, IndexError, KeyError, AttributeError, TypeError) as e:
        raise type(e)(f"{e}{where(' (at ')}{')' if where() else ''}") from None
    return StagedString(parts, tensors)


def any_format(obj, *args, **kwargs):
    """`obj.format(*args, **kwargs)` where converted code cannot tell that `obj` is a str
    (`template.format(loss)` with the template in a variable): a str formats as
    str_format does (staged on tensors); any other object calls its own method."""
    if type(obj) is str:
        return str_format(obj, *args, **kwargs)
    return obj.format(*args, **kwargs)


def _format_parts(template, args, kwargs, tensors, auto, depth):
    """Python's str.format, field by field (string.Formatter's parse and get_field): fields
    of Python values are formatted now; the others become Fields. `auto` holds the next
    automatic field number (-1 once a field was numbered by hand), as Python counts them."""
    if depth < 0:
        raise ValueError("Max string recursion exceeded")
    parts = []
    for literal, name, spec, conversion in _formatter().parse(template):
        if literal:
            parts.append(literal)
        if name is None:
            continue
        if name == "" or name[0] in ".[":
            if auto[0] < 0:
                raise ValueError("cannot switch from manual field specification to "
                                 "automatic field numbering")
            name = str(auto[0]) + name
            auto[0] += 1
        elif name.split(".")[0].split("[")[0].isdigit():
            if auto[0] > 0:
                raise ValueError("cannot switch from automatic field numbering to manual "
                                 "field specification")
            auto[0] = -1
        value, _ = _formatter().get_field(name, args, kwargs)
        spec_tensors = []   # (rendered after the value's: lifted after them)
        spec_parts = _format_parts(spec, args, kwargs, spec_tensors, auto, depth - 1) \
            if spec else ()
        spec_staged = any(type(p) is not str for p in spec_parts)
        if not holds_staged(value) and not spec_staged:
            parts.append(format(_formatter().convert_field(value, conversion), "".join(spec_parts)))
            continue
        _check_format(value, conversion, spec_parts)
        slot = lift(value, tensors)
        tensors.extend(spec_tensors)
        parts.append(Field(value if slot is None else slot, conversion,
                           tuple(spec_parts) if spec_staged else "".join(spec_parts), "{}"))
    return parts


def _check_format(value, conversion, spec_parts):
    """The error eager NumPy gives, now: an array of known rank > 0 has no format spec."""
    if isinstance(value, Tensor) and not conversion and spec_parts and \
            value.shape is not None and len(value.shape) > 0:
        raise TypeError("unsupported format string passed to numpy.ndarray.__format__ "
                        f"(the tensor {value!r} is an array of shape {value.shape})")


# -- % ----------------------------------------------------------------------------------------

_PERCENT = (r"%(?:\((?P<key>[^()]*)\))?(?P<flags>[-#0 +]*)(?P<width>\*|\d+)?"
            r"(?:\.(?P<prec>\*|\d*))?[hlL]?(?P<type>[diouxXeEfFgGcrsa%])")   # re's cache compiles it


def str_mod(template, values):
    """`template % values`; staged when the values hold tensors."""
    if type(values) in PLAIN or not holds_staged(values):
        return template % values
    _probe(template, values)
    if isinstance(values, tuple):
        positional, mapping = list(values), None
    else:
        positional = [values]
        mapping = values if hasattr(type(values), "__getitem__") else None
    tensors, parts, pos, last = [], [], 0, 0
    for m in re.finditer(_PERCENT, template):
        parts.append(template[last:m.start()])
        last = m.end()
        if m["type"] == "%":
            parts.append("%")
            continue
        items = []
        for star in (m["width"], m["prec"]):
            if star == "*":
                items.append(positional[pos])
                pos += 1
        if m["key"] is not None:
            items.append(mapping[m["key"]])
        else:
            items.append(positional[pos])
            pos += 1
        spec = m.group(0) if m["key"] is None else "%" + m.group(0)[len(m["key"]) + 3:]
        items = tuple(items)
        if not holds_staged(items):
            parts.append(spec % items)
            continue
        parts.append(Field(lift(items, tensors), None, spec, "%"))
    parts.append(template[last:])
    return StagedString(parts, tensors)


class _Probe:
    """A float tensor's stand-in for Python's own check of a % template and its values."""

    def __int__(self):
        return 0

    def __float__(self):
        return 0.0

    def __repr__(self):
        return "0"


class _IntProbe(_Probe):
    """An integer (or bool) tensor's stand-in: also an index, as NumPy's integers are."""

    def __index__(self):
        return 0


def _stand_in(x):
    if isinstance(x, Tensor):
        return _IntProbe() if x.dtype.kind in "iub" else _Probe()
    if isinstance(x, StagedString):
        return ""
    return x


def _probe(template, values):
    """Raise Python's error (with the user's line) when `template % values` fails whatever
    the values: wrong number of arguments, a bad format character, a missing key, a float
    for %x."""
    if isinstance(values, tuple):
        probe = tuple(_stand_in(v) for v in values)
    elif type(values) is dict:
        probe = {k: _stand_in(v) for k, v in values.items()}
    else:
        probe = _stand_in(values)
    try:
        template % probe
    except SymbolicTensorError:
        raise
    except (TypeError, ValueError, KeyError) as e:
        raise type(e)(f"{e}{where(' (at ')}{')' if where() else ''}") from None


# -- print ------------------------------------------------------------------------------------

class SymbolicPrintWarning(UserWarning):
    """Python's print was given a tensor while tracing: it prints the symbolic tensor once."""


_warned = set()


def py_print(*args, **kwargs):
    """Python's `print`; warns once per user line when an argument holds a tensor."""
    for a in args:
        if isinstance(a, (Tensor, StagedString)) or (
                type(a) not in (str, int, float) and holds_staged(a)):
            _warn_print()
            break
    return builtins.print(*args, **kwargs)


def _warn_print():
    warn_once("print() was given a symbolic tensor: Python's print runs only while tracing "
              "and shows the tensor, not its value (fine to show when a trace happens). Use "
              "ag.print(...) to print the values on every call.", SymbolicPrintWarning,
              _warned)
