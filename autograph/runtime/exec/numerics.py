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
`maximum`, ...) or whose real result is finite whenever their real inputs are (`tanh`,
`sin`, `cos`, `arctan`, `arcsinh`, `abs`; on complex values they are tested) are not
tested: their result holds a NaN only if an input did, and that input was tested where it
was made. So a NaN passed in as an argument is reported at the first operation that
computes with it (that can make one), and the message says that an input held it.
Like TensorFlow's `enable_check_numerics` and JAX's `debug_nans`, a NaN computed and then
masked (`np.where(x > 0, np.log(x), 0.0)`) is reported: the `log` made it.

That is "full" mode. A graph that can be run again (numerics_plan.replayable: no print,
random draw, assignment, ...) is compiled in "watch" mode instead: only the results that
numerics_plan.Plan cannot prove to be seen later are tested (a value that an add carries
into a tested one, a loop's state tested once after the loop), with no input kept for the
message (so dead buffers are reused as without the switch); when a test fails or anything
raises, `Recheck` runs the call again in full mode, which raises the error described
above. A call that succeeds pays for a few tests, not one per operation.
"""

import cmath
import math
import weakref

import numpy as np

from autograph import errors
from autograph.runtime.exec import numerics_plan

# operations whose results hold only values of their inputs (moved, selected, rounded,
# signs changed), or constants that are finite: nothing new to test
MOVES = frozenset({
    "Const", "Identity", "Placeholder", "cond", "while_loop", "getitem", "index_get",
    "reshape", "permute_dims", "expand_dims", "squeeze", "broadcast_to", "stack", "concat",
    "flip", "roll", "repeat", "tile", "take", "take_along_axis", "diagonal", "tril", "triu",
    "setitem", "boolean_mask", "where", "sort", "max", "min", "maximum", "minimum", "fmax",
    "fmin", "negative", "positive", "real", "imag", "conj", "clip", "sign", "round",
    "floor", "ceil", "trunc", "zeros", "ones", "zeros_like", "ones_like",
    "ta_new", "ta_read", "ta_write", "ta_stack", "ta_gather", "ta_scatter", "ta_size",
    "ad_stack_get"})
# ... and operations whose real result is finite whenever their real inputs are (a NaN in
# it was in an input, tested where it was made): nothing new to test either. Not on complex
# values: sin(x + 800j) overflows (cosh), tanh has poles, abs(1.5e308 + 1.5e308j) = inf
BOUNDED = frozenset({"tanh", "sin", "cos", "arctan", "arcsinh", "abs"})


def untested(node):
    """True when no result of `node` needs a test of its own (see MOVES and BOUNDED)."""
    op = node.op
    if op in MOVES:
        return True
    return op in BOUNDED and all(t.dtype.kind != "c" for t in (*node.inputs, *node.outputs))


def emit_checks(compiler, node, ins, env, depth):
    """After the line(s) of `node`: a test of each floating-point result (see above)."""
    plan = compiler.numerics_plan
    if plan is not None:     # watch mode: the planned tests, without inputs
        outputs = [t for t in node.outputs if id(t) not in plan.untested]
        if node.op == "while_loop":
            outputs = [node.outputs[k] for k in plan.after.get(id(node), ())]
        elif untested(node):
            return
        for t in outputs:
            name = _value_text(env, t)
            if t.dtype.kind in "fc" and name is not None:
                test = _test_name(compiler, t, t.dtype.kind)
                compiler.emit(depth, f"if not {test}({name}): "
                                     f"ag_nonfinite_seen({node.op!r}, {name})")
        compiler.namespace.setdefault("ag_nonfinite_seen", _raise_seen)
        return
    if untested(node):
        return
    for t in node.outputs:
        kind = t.dtype.kind
        if kind not in "fc":
            continue
        name = _value_text(env, t)
        if name is None:
            continue
        test = _test_name(compiler, t, kind)
        # the inputs, to say whether one held the NaN already (not one the result replaced)
        inputs = [i for i in ins if i.isidentifier() and i != name]
        inputs = f"({inputs[0]},)" if len(inputs) == 1 else f"({', '.join(inputs)})"
        compiler.emit(depth, f"if not {test}({name}): ag_nonfinite({node.op!r}, {name}, {inputs})")
    if "ag_nonfinite" not in compiler.namespace:
        compiler.namespace["ag_nonfinite"] = _raise_nonfinite


def _value_text(env, t):
    """The code's text for the value of `t`: a name, or (parenthesised) the expression that
    reads it (a subscript of a buffer written in place), tested like a name; None when the
    code holds no value for it (a result never written)."""
    text = env.get(id(t))
    if text is None or text.isidentifier():
        return text
    return f"({text})"


def watch_plan(graph):
    """The numerics_plan.Plan of `graph` in watch mode, with `recheck` (see Recheck)."""
    from autograph.runtime.exec.codegen import _counter_loop

    def terminates(node, consts):     # (a counter loop runs as a `for` over a range)
        return node.attrs.get("maximum_iterations") is not None or \
            _counter_loop(node, consts, 0) is not None or numerics_plan.counts_down(node, consts)
    plan = numerics_plan.Plan(graph, untested, terminates)
    plan.recheck = Recheck
    return plan


class Recheck:
    """What a watch-mode function calls when its run raised (a test saw a NaN, or any
    other error, which a NaN may have caused: an index made from it): the same call again
    with every result tested (full mode), whose error, naming the first operation that
    made the value, replaces the first one. When the second run raises nothing, the
    first error stands. `calls` counts the runs again (work, for tests)."""
    calls = 0

    def __init__(self, graph, device):
        self.graph, self.device = weakref.ref(graph), device   # (the cache holds fn weakly)

    def __call__(self, *args):
        graph = self.graph()
        if graph is None:
            return
        from autograph.runtime.exec import codegen
        full = codegen.compile_graph(graph, self.device, "full")
        Recheck.calls += 1
        try:
            full(*args)
        except Exception as error:
            raise error from None


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
    return math.isfinite(np.vdot(a, a)) or _exact(a)


def _all_finite_numpy_complex(a):
    return cmath.isfinite(np.vdot(a, a)) or _exact(a)


EXACT_TESTS = [0]     # exact tests run (work, counted for tests)


def _exact(a):
    EXACT_TESTS[0] += 1
    return bool(np.isfinite(a).all())


def _count(value):
    """(NaNs, infinities, values not finite, values) in `value`, on the host (a complex
    value with a NaN part and an infinite one counts once in the third)."""
    host = np.asarray(value.get() if hasattr(value, "get") and not isinstance(value, np.ndarray)
                      else value)
    return (int(np.isnan(host).sum()), int(np.isinf(host).sum()),
            int(host.size - np.isfinite(host).sum()), host.size)


def _raise_seen(op, value):
    """Watch mode's error (replaced by full mode's when the run again raises)."""
    try:
        what = "{2} values of {3} that are not finite".format(*_count(value))
    except Exception:   # a device array the host cannot count
        what = "values that are not finite"
    raise errors.NonFiniteError(
        f"check_numerics: the result of {op} holds {what} (the call run again with every "
        f"operation checked raised nothing)")


def _raise_nonfinite(op, value, inputs):
    """Raise NonFiniteError for the result `value` of an `op` operation (the locator adds
    which node and where)."""
    try:
        nans, infs, bad, size = _count(value)
    except Exception:   # a device array the host cannot count: say what is known
        nans, infs, bad, size = 0, 0, 0, 0
    what = " and ".join(part for part in (
        "NaN" if nans else "", "infinity" if infs else "") if part) or "values that are not finite"
    if size > 1:
        what += f" ({bad} of {size} values)"
    try:
        bad_input = any(not np.isfinite(np.asarray(v)).all() for v in inputs
                        if np.asarray(v).dtype.kind in "fc")
    except Exception:
        bad_input = False
    source = ("an input held NaN or infinity already" if bad_input
              else "from finite inputs")
    raise errors.NonFiniteError(f"check_numerics: {op} made {what}, {source}")
