"""Signatures and binding: which values a call gives a trace's parameters, and how a
signature is shown.

For a Function: `get_concrete_function`, and an `input_signature` pinned, checked and made
the trace key. For a ConcreteFunction: a call's arguments bound and checked against the trace
(`structured_values`; `flat_values` for a call passing the arrays alone, as TensorFlow's
flat signature allows), the values it was traced with filling those left out (also when it
is inlined into another trace), its `structured_input_signature`, and `str(concrete)`.

A plain first call uses none of this: Function and ConcreteFunction keep thin methods that
import this module on first use (autograph.function.concrete binds the plain call itself).
"""

import inspect

import numpy as np

from autograph.function import trace_type as tt
from autograph.function.concrete import _traced_object, user_error
from autograph.runtime.ir import nest
from autograph.runtime.ir.tensor import Tensor


# -- Function -----------------------------------------------------------------------------------

def get_concrete_function(fn, args, kwargs):
    if fn._input_signature is not None and not args and not kwargs:
        args = fn._input_signature
    try:
        names, values = fn._bind(args, kwargs)
        if fn._input_signature is not None:
            values = fn._check_input_signature(names, values)
        key = tuple(tt.make_key(v) for v in values)
        if fn._input_signature is not None:
            return fn._lookup(key) or fn._trace_new(names, values, key)
        # asked for these exact types: a trace for them, not a more general one that fits
        return fn._traces.get(key) or fn._trace_new(names, values, key, exact=True)
    except Exception as exc:
        user_error(exc)   # the traceback shows the user's code only (concrete.user_error)
        raise


def set_input_signature(fn, input_signature):
    specs = list(input_signature)
    for spec in nest.flatten(specs):
        if not isinstance(spec, tt.TensorSpec):
            raise TypeError(f"input_signature of {fn.__name__} must hold ag.TensorSpec "
                            f"values (in lists/tuples/dicts), got {spec!r}")
    positional = [n for n in fn._sig.names
                  if fn._sig.kinds[n] in (inspect.Parameter.POSITIONAL_ONLY,
                                          inspect.Parameter.POSITIONAL_OR_KEYWORD)]
    if len(specs) > len(positional):
        raise TypeError(f"input_signature of {fn.__name__} has {len(specs)} specs but the "
                        f"function takes {len(positional)} positional parameters")
    fn._input_signature = tuple(specs)
    fn._signature_names = positional[:len(specs)]


def check_input_signature(fn, names, values):
    """Values converted to fit the input_signature; TypeError naming the argument if not."""
    out = list(values)
    specs = dict(zip(fn._signature_names, fn._input_signature))
    for i, name in enumerate(names):
        if name not in specs:
            continue
        try:
            out[i] = tt.check_value(values[i], tt.make_key(specs[name]), name)
        except tt.SignatureMismatch as e:
            raise TypeError(
                f"{fn.__name__}({', '.join(fn._signature_names)}): argument `{e.path}` does "
                f"not fit the input_signature: expected {e.expected}, got {e.got}. "
                "Pass an array of that dtype and shape (or drop input_signature to trace "
                "for each new type).") from None
    return out


def signature_trace_key(fn, names, values):
    specs = dict(zip(fn._signature_names, fn._input_signature))
    return tuple(tt.make_key(specs[n]) if n in specs else tt.make_key(v)
                 for n, v in zip(names, values))


# -- ConcreteFunction ---------------------------------------------------------------------------

def structured_input_signature(cf):
    args, kwargs = [], {}
    for name in cf._names:
        value = _key_to_signature(cf._param_keys[name], name)
        if cf._sig.kinds[name] == inspect.Parameter.KEYWORD_ONLY:
            kwargs[name] = value
        elif cf._sig.kinds[name] == inspect.Parameter.VAR_KEYWORD:
            kwargs.update(value)
        elif cf._sig.kinds[name] == inspect.Parameter.VAR_POSITIONAL:
            args.extend(value)
        else:
            args.append(value)
    return tuple(args), kwargs


def structured_values(cf, args, kwargs):
    """The value of every parameter, checked against the trace: arguments bound like the
    Python function's; Python arguments left out take the values traced with."""
    if not kwargs and 0 <= len(args) <= cf._sig.fast_arity:
        arguments = dict(zip(cf._sig.names, args))   # what inspect would bind
    else:
        arguments = cf._sig.bind(cf._function_name, args, kwargs, partial=True).arguments
    values = []
    for name in cf._names:
        key = cf._param_keys[name]
        if name in arguments:
            value = arguments[name]
        elif isinstance(key, tt.Literal):
            value = key.value                  # a Python argument left out: as traced
        elif _traced_object(key) is not None:
            value = key.obj                    # an object (a model, an optimizer): as traced
        else:
            value = cf._sig.default(name)
            if value is inspect.Parameter.empty:
                raise TypeError(f"{signature_line(cf)} is missing argument `{name}` "
                                f"({tt.describe_key(key)})")
        values.append(check(cf, name, value, key))
    return values


def flat_values(cf, args, kwargs):
    """Values for a call that passes only the parameters holding arrays (in order), or
    None when the call does not bind that way either."""
    tensor_params = [n for n in cf._names if tt.tensor_specs(cf._param_keys[n])]
    if len(tensor_params) == len(cf._names) or len(args) > len(tensor_params):
        return None
    given = dict(zip(tensor_params, args))
    for name, value in kwargs.items():
        if name not in tensor_params or name in given:
            return None
        given[name] = value
    if len(given) != len(tensor_params):
        return None
    return [check(cf, n, given[n], cf._param_keys[n]) if n in given else ()
            for n in cf._names]


def inline(cf, args, kwargs):
    """Inside another trace: run the Python function on the caller's tensors, with the
    Python values this trace was made for filling the arguments left out."""
    fn = cf._python_fn()
    if fn is None:
        raise ReferenceError(f"the Function that made {cf!r} was deleted; a concrete "
                             "function can be inlined into a trace only while it lives")
    bound = cf._sig.bind(cf._function_name, args, kwargs, partial=True)
    values = dict(bound.arguments)
    for name in cf._names:
        key = cf._param_keys[name]
        if name not in values and isinstance(key, tt.Literal):
            values[name] = key.value
        elif name not in values and _traced_object(key) is not None:
            values[name] = key.obj
    call_args, call_kwargs = cf._sig.call_parts(values)
    return fn._python_call(fn._traceable(), call_args, call_kwargs)


def signature_line(cf):
    params = []
    for name in cf._names:
        key = cf._param_keys[name]
        kind = cf._sig.kinds[name]
        stars = {inspect.Parameter.VAR_POSITIONAL: "*",
                 inspect.Parameter.VAR_KEYWORD: "**"}.get(kind, "")
        params.append(f"{name}={key.value!r}" if isinstance(key, tt.Literal) else stars + name)
    return f"{cf._function_name}({', '.join(params)})"


def check(cf, name, value, key):
    try:
        return tt.check_value(value, key, name)
    except tt.SignatureMismatch as e:
        if isinstance(key, tt.Literal):
            raise TypeError(
                f"ConcreteFunction {signature_line(cf)} was traced with "
                f"{type(key.value).__name__} value {key.value!r} for argument `{name}`, but was "
                f"called with {tt.describe_value(value)}. Call the Function instead (it traces "
                "for new Python values), or get a concrete function for this value.") from None
        what = "dtypes and shapes" if e.expected.startswith("TensorSpec") else "arguments"
        raise TypeError(
            f"ConcreteFunction {signature_line(cf)}: argument `{e.path}` was traced as "
            f"{e.expected}, but got {e.got}. {e.advice}, or call the Function, which "
            f"traces again for new {what}.") from None


def summary(cf, with_prefix):
    lines = [("ConcreteFunction " if with_prefix else "") + signature_line(cf),
             "  Input Parameters:"]
    for name in cf._names:
        kind = cf._sig.kinds[name].name
        lines.append(f"    {name} ({kind}): {tt.describe_key(cf._param_keys[name])}")
    lines.append("  Output Type:")
    lines.append(f"    {_describe_output(cf.structured_outputs)}")
    lines.append("  Captures:")
    captured = cf.variables
    if captured:
        for v in captured:
            lines.append(f"    {_describe_variable(v)}")
    else:
        lines.append("    None")
    return "\n".join(lines)


def _key_to_signature(key, name):
    if type(key) is tt.TensorSpec:
        return key.with_name(name)
    if type(key) is tt.Literal:
        return key.value
    if type(key) is tt.Structure:
        labels = key.labels if isinstance(key.labels, tuple) else range(key.labels)
        kids = [_key_to_signature(k, f"{name}_{i}") for i, k in enumerate(key.children)]
        if key.kind is dict or issubclass(key.kind, dict):
            return key.kind(zip(labels, kids))
        if key.kind in (list, tuple):
            return key.kind(kids)
        if hasattr(key.kind, "__dataclass_fields__"):
            return key  # a dataclass cannot be rebuilt from specs in general: show the key
        return key.kind(*kids)   # namedtuple
    if type(key) is tt.ObjectKey:
        obj = key.obj
        return obj if obj is not None else key
    return key


def _describe_output(out):
    if isinstance(out, Tensor):
        return repr(tt.TensorSpec(out.shape, out.dtype))
    if isinstance(out, (list, tuple)) and not hasattr(type(out), "_fields"):
        kind = "List" if isinstance(out, list) else "Tuple"
        return f"{kind}[{', '.join(_describe_output(o) for o in out)}]"
    if isinstance(out, dict):
        return "Dict[" + ", ".join(f"{k!r}: {_describe_output(v)}" for k, v in out.items()) + "]"
    if nest.is_nested(out):
        return f"{type(out).__name__}[{', '.join(_describe_output(o) for o in nest.children(out))}]"
    if out is None:
        return "None"
    return f"Literal[{out!r}]" if type(out) in tt._PRIMITIVES else f"{type(out).__name__} value"


def _describe_variable(v):
    name = getattr(v, "name", None) or "Variable"
    dtype = getattr(v, "dtype", None)
    shape = getattr(v, "shape", None)
    parts = [f"Variable {name!r}"]
    if dtype is not None:
        parts.append(np.dtype(dtype).name)
    if shape is not None:
        parts.append(f"shape={tt._shape_str(tuple(shape))}")
    return ", ".join(parts)
