"""`ag.config.check_numerics(True)`: the generated code checks each operation's result.

With the switch on, codegen writes, after every line of an operation that can make a NaN
or an infinity out of finite inputs (arithmetic, `log`, `exp`, `sqrt`, `matmul`, `solve`,
reductions, ...), one test of its floating-point results:

    log = k_log(x)
    if not ag_all_finite(log): ag_nonfinite('log', log, (x,))

and the first result that is not finite raises `ag.errors.NonFiniteError` (a
FloatingPointError) naming the operation, the user's line that made it and, inside staged
loops, the iteration and the loop's variables (errors.RunErrorLocator does that, as for any
run-time error). With the switch off (the default) none of this is written: the check
costs nothing, and codegen does not even import this module. The compiled functions of the
two modes are kept apart (codegen.compile_graph's cache, ConcreteFunction's runners).

Operations that only move, select or round values (indexing, reshapes, joins, `where`,
`maximum`, `abs`, ...) are not tested: their result holds a NaN only if an input did, and
that input was tested where it was made. So a NaN passed in as an argument is reported at
the first operation that computes with it, and the message says that an input held it.
Like TensorFlow's `enable_check_numerics` and JAX's `debug_nans`, a NaN computed and then
masked (`np.where(x > 0, np.log(x), 0.0)`) is reported: the `log` made it.
"""

import cmath
import math

import numpy as np

from autograph import errors

# operations whose results hold only values of their inputs (moved, selected, rounded,
# signs changed), or constants that are finite: nothing new to test
MOVES = frozenset({
    "Const", "Identity", "Placeholder", "cond", "while_loop", "getitem", "index_get",
    "reshape", "permute_dims", "expand_dims", "squeeze", "broadcast_to", "stack", "concat",
    "flip", "roll", "repeat", "tile", "take", "take_along_axis", "diagonal", "tril", "triu",
    "setitem", "boolean_mask", "where", "sort", "max", "min", "maximum", "minimum", "fmax",
    "fmin", "abs", "negative", "positive", "real", "imag", "conj", "clip", "sign", "round",
    "round_decimals", "floor", "ceil", "trunc", "zeros", "ones", "zeros_like", "ones_like",
    "ta_new", "ta_read", "ta_write", "ta_stack", "ta_gather", "ta_scatter", "ta_size"})


def emit_checks(compiler, node, ins, env, depth):
    """After the line(s) of `node`: a test of each floating-point result (see above)."""
    if node.op in MOVES:
        return
    for t in node.outputs:
        kind = t.dtype.kind
        if kind not in "fc":
            continue
        name = env.get(id(t))
        if name is None or not name.isidentifier():
            continue
        test = _test_name(compiler, t, kind)
        # the inputs, to say whether one held the NaN already (not one the result replaced)
        inputs = [i for i in ins if i.isidentifier() and i != name]
        inputs = f"({inputs[0]},)" if len(inputs) == 1 else f"({', '.join(inputs)})"
        compiler.emit(depth, f"if not {test}({name}): ag_nonfinite({node.op!r}, {name}, {inputs})")
    if "ag_nonfinite" not in compiler.namespace:
        compiler.namespace["ag_nonfinite"] = _raise_nonfinite


def _test_name(compiler, t, kind):
    """The global of the test for tensor `t` (bound once per compiled function)."""
    ns = compiler.namespace
    if compiler.numpy and t.shape == ():   # a scalar: math's test, no array made
        name = "ag_isfinite" if kind == "f" else "ag_isfinite_complex"
        ns.setdefault(name, math.isfinite if kind == "f" else cmath.isfinite)
        return name
    name = "ag_all_finite" if kind == "f" else "ag_all_finite_complex"
    if name not in ns:
        if compiler.numpy:
            ns[name] = _all_finite_numpy if kind == "f" else _all_finite_numpy_complex
        else:
            xp, to_host = compiler.device.xp, compiler.device.to_host
            ns[name] = lambda a: bool(to_host(xp.all(xp.isfinite(a))))
    return name


# An array is tested by the sum of its squares first (np.vdot: BLAS, one pass, no array
# made; ~2x cheaper than np.isfinite(a).all(), which makes a bool array and reads it
# again). A NaN or an infinity in `a` makes that sum NaN or infinite (squares are never
# negative, so nothing cancels); only then, or when finite values overflow it, the exact
# test runs.

def _all_finite_numpy(a):
    return math.isfinite(np.vdot(a, a)) or bool(np.isfinite(a).all())


def _all_finite_numpy_complex(a):
    return cmath.isfinite(np.vdot(a, a)) or bool(np.isfinite(a).all())


def _count(value):
    """(NaNs, infinities, values) in `value`, on the host."""
    host = np.asarray(value.get() if hasattr(value, "get") and not isinstance(value, np.ndarray)
                      else value)
    return int(np.isnan(host).sum()), int(np.isinf(host).sum()), host.size


def _raise_nonfinite(op, value, inputs):
    """Raise NonFiniteError for the result `value` of an `op` operation (the locator adds
    which node and where)."""
    try:
        nans, infs, size = _count(value)
    except Exception:   # a device array the host cannot count: say what is known
        nans, infs, size = 0, 0, 0
    what = " and ".join(part for part in (
        "NaN" if nans else "", "infinity" if infs else "") if part) or "values that are not finite"
    if size > 1:
        what += f" ({nans + infs} of {size} values)"
    try:
        bad_input = any(not _all_finite_numpy(np.asarray(v)) for v in inputs
                        if np.asarray(v).dtype.kind in "fc")
    except Exception:
        bad_input = False
    source = ("an input held NaN or infinity already" if bad_input
              else "from finite inputs")
    raise errors.NonFiniteError(f"check_numerics: {op} made {what}, {source}")
