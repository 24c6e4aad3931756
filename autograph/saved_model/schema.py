"""The attribute schema of every primitive: what each attribute of a node may hold.

The loader checks every node's attributes against its primitive's entry before it builds
anything: the attribute names must be the entry's (required ones present), and each value
must have the entry's type. Strings that kernels use to pick a function (`fft`'s `name`,
`ufunc_at`'s `ufunc`, `random`'s `method`, `update_variable`'s `op`) must come from a fixed
set, so a file can never make a kernel look up an arbitrary name.

The table was derived from the attributes that traced graphs actually carry (the test suite,
the sample programs and the differential programs, recorded node by node). A test checks
that every registered primitive has an entry: a new primitive without one fails CI.
"""

import numpy as np

from autograph.saved_model.format import Composite, Marker, Ref, SavedModelError


class Bad(Exception):
    """A value that does not fit (the message says what was expected)."""


# -- checkers: each takes a decoded value and raises Bad when it does not fit -------------------

def _type(name, test):
    def check(v):
        if not test(v):
            raise Bad(name)
    check.__doc__ = name
    return check


INT = _type("an int", lambda v: type(v) is int)
BOOL = _type("a bool", lambda v: type(v) is bool)
FLOAT = _type("a number", lambda v: type(v) in (int, float))
STR = _type("a string", lambda v: type(v) is str)
NONE = _type("None", lambda v: v is None)
DTYPE = _type("a dtype", lambda v: isinstance(v, np.dtype))
SCALAR = _type("a number or bool", lambda v: type(v) in (bool, int, float, complex))
GRAPH = _type("a graph reference", lambda v: type(v) is Ref and v.kind == "graph")
VARIABLE = _type("a Variable reference", lambda v: type(v) is Ref and v.kind == "variable")
ARRAY = _type("an array", lambda v: (type(v) is Ref and v.kind == "array") or
              (type(v) is np.ndarray and v.dtype.kind in "biufc"))


def opt(check):
    """`check`, or None."""
    def c(v):
        if v is not None:
            check(v)
    c.__doc__ = f"None or {check.__doc__}"
    return c


def either(*checks):
    def c(v):
        for check in checks:
            try:
                check(v)
                return
            except Bad:
                pass
        raise Bad(" or ".join(k.__doc__ for k in checks))
    c.__doc__ = " or ".join(k.__doc__ for k in checks)
    return c


def tup(check, max_len=64):
    """A tuple of values that each pass `check`."""
    def c(v):
        if type(v) is not tuple or len(v) > max_len:
            raise Bad(f"a tuple of {check.__doc__}")
        for x in v:
            check(x)
    c.__doc__ = f"a tuple of {check.__doc__}"
    return c


def choice(*names):
    allowed = frozenset(names)

    def c(v):
        if type(v) is not str or v not in allowed:
            raise Bad(f"one of {sorted(allowed)}")
    c.__doc__ = f"one of {sorted(allowed)}"
    return c


def record(tag, *fields):
    """A tuple (tag, field...) as the indexing attributes use."""
    def c(v):
        if type(v) is not tuple or len(v) != 1 + len(fields) or v[0] != tag:
            raise Bad(f"a ({tag!r}, ...) record")
        for check, x in zip(fields, v[1:]):
            check(x)
    c.__doc__ = f"({tag!r}, ...)"
    return c


def plain(v, depth=0):
    """Template data: Python scalars, strings, tuples/lists/dicts of them, template slots,
    formatting records, array references."""
    t = type(v)
    if v is None or t in (bool, int, float, complex, str) or t is Marker:
        return
    if (t is Ref and v.kind == "array") or t is np.ndarray:
        return
    if t in (tuple, list) or t is Composite:
        for x in (v.items if t is Composite else v):
            plain(x, depth + 1)
        return
    if t is dict:
        for x in v.values():
            plain(x, depth + 1)
        return
    raise Bad("template data (numbers, strings, tuples, lists, dicts, slots)")


plain.__doc__ = "template data"



class maybe:
    def __init__(self, check):
        self.check = check


DIM = either(INT, record("d", INT))
SHAPE = opt(tup(opt(INT)))
AXES = opt(tup(INT))
BOUND = either(NONE, INT, record("d", INT))
INDEX = tup(either(record("n"), record("e"), record("i", INT), record("d", INT),
                   record("t", INT), record("s", BOUND, BOUND, BOUND)))
REDUCE = {"axis": AXES, "keepdims": BOOL, "dtype": maybe(opt(DTYPE))}
ARG_REDUCE = {"axis": opt(INT), "keepdims": BOOL, "dtype": maybe(opt(DTYPE))}
VAR = {"variable": VARIABLE, "name": STR, "function": STR}
TA = {"dtype": DTYPE, "element_shape": SHAPE}
FILL = {"shape": tup(DIM), "dtype": DTYPE, "fill_value": maybe(opt(SCALAR))}
LIKE = {"dtype": maybe(opt(DTYPE)), "fill_value": maybe(opt(SCALAR))}

_FFT = ("fft", "ifft", "rfft", "irfft", "hfft", "ihfft", "fftn", "ifftn", "rfftn", "irfftn",
        "fft2", "ifft2", "rfft2", "irfft2")
_UFUNCS = ("add", "subtract", "multiply", "divide", "true_divide", "floor_divide", "power",
           "maximum", "minimum", "fmax", "fmin", "bitwise_and", "bitwise_or", "bitwise_xor",
           "logical_and", "logical_or", "logical_xor", "remainder", "fmod")


def _random_methods():
    from autograph.runtime.numpy import random
    return tuple(sorted(random.SUPPORTED))


def lazy_choice(names, what):
    """`choice(*names())`, the names read on the first check: they live in a module that
    imports NumPy's random package, which a model without random draws never needs."""
    made = []

    def c(v):
        if not made:
            made.append(choice(*names()))
        made[0](v)
    c.__doc__ = what
    return c


NO_ATTRS = (
    "Identity abs acos acosh add asin asinh atan atan2 atanh bitwise_and bitwise_invert "
    "bitwise_left_shift bitwise_or bitwise_right_shift bitwise_xor boolean_mask ceil cholesky "
    "conj copysign cos cosh deg2rad det divide equal exp exp2 expm1 floor floor_divide fmax "
    "fmin fmod greater greater_equal hypot imag inv isfinite isinf isnan less less_equal log "
    "log10 log1p log2 logaddexp logical_and logical_not logical_or logical_xor matmul maximum "
    "minimum multiply negative nonzero not_equal polymul positive positive_bool pow "
    "rad2deg real remainder round shape_of sign signbit sin sinh size_of slogdet solve sqrt "
    "square subtract svdvals tan tanh trunc where ta_write ta_unstack stop_gradient "
    "ad_stack_new ad_stack_push ad_ckpt_offer ad_gl_new ad_gl_add ad_gl_put ad_gl_from_rows "
    "ad_gl_scatter ad_gl_copy ad_gl_set ad_gl_set_rows eig gcd lcm nextafter spacing "
    "data_iter_close data_shuffle_iteration jvp_zero_handle ta_insert ad_gl_shift").split()


def never(why):
    """An attribute no file can give (the op stands for something of one process only)."""
    def c(v):
        raise Bad(why)
    c.__doc__ = why
    return c


def pair(first, second):
    def c(v):
        if type(v) is not tuple or len(v) != 2:
            raise Bad("a pair")
        first(v[0])
        second(v[1])
    c.__doc__ = f"({first.__doc__}, {second.__doc__})"
    return c


def _table():
    t = {name: {} for name in NO_ATTRS}
    t.update({
        "Placeholder": {},    # its dtype and shape are its output spec's
        "Const": {"value": ARRAY, "weak": BOOL},
        "Cast": {"dtype": DTYPE, "weak": maybe(BOOL)},
        "astype": {"dtype": DTYPE, "weak": maybe(BOOL)},
        "cond": {"true_graph": GRAPH, "false_graph": GRAPH},
        "while_loop": {"cond_graph": GRAPH, "body_graph": GRAPH,
                       "maximum_iterations": either(NONE, INT, choice("input"))},
        "loop_count": {"limit": INT, "loop": STR},      # saved_model.loop_limit
        "read_variable": {**VAR, "dtype": DTYPE, "shape": SHAPE},
        "assign_variable": VAR,
        "update_variable": {**VAR, "op": choice("add", "subtract"), "operand_dtype": DTYPE,
                            "dtype": DTYPE},
        **{r: REDUCE for r in ("all", "any", "max", "min", "mean", "sum", "prod")},
        "argmax": ARG_REDUCE, "argmin": ARG_REDUCE,
        "arange": {"dtype": DTYPE, "length": maybe(opt(INT))},
        **{a: {"axis": INT} for a in ("argsort", "sort", "concat", "stack", "take",
                                      "take_along_axis")},
        "cumulative_sum": {"axis": INT, "dtype": opt(DTYPE)},
        "cumulative_prod": {"axis": INT, "dtype": opt(DTYPE)},
        "bincount": {"minlength": INT},
        "reshape": {"shape": tup(DIM)},
        "broadcast_to": {"shape": tup(DIM)},
        "full": FILL, "zeros": FILL, "ones": FILL,
        "full_of_shape": {"dtype": DTYPE, "fill_value": SCALAR}, "repeat_index": {},
        "full_like": LIKE, "zeros_like": LIKE, "ones_like": LIKE,
        "check_bound": {"message": STR},
        "assert": {"message": STR},
        "clip": {"which": tup(choice("min", "max"), 2)},
        "diagonal": {"offset": INT},
        "eigh": {"uplo": choice("L", "U")},
        "eigvalsh": {"uplo": choice("L", "U")},
        "expand_dims": {"axis": either(INT, tup(INT))},
        "squeeze": {"axis": opt(either(INT, tup(INT)))},
        "fft": {"name": choice(*_FFT), "n": tup(opt(INT)), "axes": tup(INT),
                "norm": choice("backward", "ortho", "forward")},
        "flip": {"axis": AXES},
        "roll": {"shift": either(INT, tup(INT)), "axis": AXES},
        "getitem": {"index": INDEX},
        "setitem": {"index": INDEX},
        "ufunc_at": {"index": INDEX, "ufunc": choice(*_UFUNCS)},
        "lstsq": {"rcond": opt(FLOAT)},
        "matrix_rank": {"rtol": opt(FLOAT)},
        "pinv": {"rtol": opt(FLOAT)},
        "permute_dims": {"axes": tup(INT)},
        "tensordot": {"axes": either(INT, tup(tup(INT), 2))},
        "tile": {"reps": tup(INT)},
        "tril": {"k": INT}, "triu": {"k": INT},
        "repeat": {"repeats": either(INT, tup(INT, 1 << 20)), "axis": opt(INT)},
        "round_decimals": {"decimals": INT},
        "searchsorted": {"side": choice("left", "right")},
        "svd": {"full_matrices": BOOL},
        "qr": {"mode": choice("reduced", "complete", "r", "raw")},
        "unique": {"outputs": tup(choice("values", "index", "inverse", "counts"), 4)},
        "range": {"dtype": DTYPE},
        "print": {"template": plain, "sep": STR, "end": STR, "file": NONE},
        "progress_open": {"desc": STR, "token": INT, "known": BOOL, "counted": BOOL},
        "progress": {"token": INT, "sign": INT, "counted": BOOL},
        "progress_close": {"token": INT},
        "random": {"source": either(NONE, choice("numpy.random")),
                   "method": lazy_choice(_random_methods, "a method of numpy.random"),
                   "template": plain,
                   "dtype": choice(*[np.dtype(k).name for k in "?bBhHiIlLqQefdgFDG"]),
                   "shape": SHAPE, "weak": BOOL},
        "random_seed": {"fn": choice("numpy.random.seed"), "template": plain},
        "rng_new": {"factory": choice("numpy.random.default_rng"), "template": plain},
        "ta_new": {"dynamic_size": BOOL},
        "ta_read": TA, "ta_gather": TA, "ta_concat": TA,
        "ta_stack": {**TA, "size": opt(INT)},
        "ta_size": {"dtype": DTYPE},
        "ta_pop": {**TA, "end": BOOL},
        "ta_nonempty": {"message": STR},
        # the reverse-mode transform's own (a saved train step holds its backward pass)
        "sum_to_shape": {"shape": tup(DIM)},
        "add_along_axis": {"axis": INT, "shape": tup(DIM)},
        "index_get": {"index": INDEX},
        "ad_assume_shape": {"shape": SHAPE},
        "ad_stack_get": {"dtype": DTYPE, "shape": SHAPE},
        "ad_ckpt_new": {"capacity": INT},
        "ad_ckpt_restore": {"dtypes": tup(DTYPE), "shapes": tup(SHAPE), "weak": tup(BOOL)},
        "ad_gl_pop": {"dtype": DTYPE, "shape": SHAPE},
        "ad_gl_pop_rows": {"dtype": DTYPE, "shape": SHAPE},
        "ad_gl_get": {"dtype": DTYPE, "shape": SHAPE},
        "ad_gl_gather": {"dtype": DTYPE, "shape": SHAPE},
        "custom_gradient": {"grad_graph": GRAPH, "n_args": INT},
        # an inner vmap inside an outer one's function (batching/nested.py)
        "vmap_call": {"graph": GRAPH, "flags": tup(BOOL),
                      "out_specs": tup(tup(either(DTYPE, SHAPE, BOOL), 3))},
        "custom_jvp": {"jvp_graph": GRAPH, "n_args": INT},
        # datasets: arrays are saved; an iterator over host data lives in one process only
        "data_source": {"array": ARRAY},
        "data_shuffle_order": {"buffer_size": INT},
        "data_iter_open": {"keep": opt(never("None: a host-side dataset cannot be loaded"))},
        "data_iter_next": {"specs": tup(pair(DTYPE, SHAPE), 1 << 16)},
        "special_polygamma": {"n": INT},
    })
    return t


# SciPy's ufuncs (`special_<name>`) take no attributes; their names are scipy_special.NAMES,
# read when a model holds one (that module registers ~200 primitives as it is imported)
_TABLE = _table()


def _special(op):
    from autograph.runtime.numpy import scipy_special
    if op.startswith(scipy_special.PREFIX) and op[len(scipy_special.PREFIX):] in \
            scipy_special.NAMES:
        return {}
    return None


def schema_of(op):
    """The attribute schema of primitive `op` ({attribute: check}), or None for an op no
    saved model may hold."""
    schema = _TABLE.get(op)
    if schema is None and op.startswith("special_"):
        return _special(op)
    return schema


def __getattr__(name):
    # SCHEMAS: the whole table, SciPy's ufuncs included (for the tests and tools that list it)
    if name == "SCHEMAS":
        from autograph.runtime.numpy import scipy_special
        return {**_TABLE, **{scipy_special.PREFIX + n: {} for n in scipy_special.NAMES}}
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


# the packages whose modules register primitives (each module registers on import)
PRIMITIVE_PACKAGES = ("autograph.runtime.numpy", "autograph.autodiff", "autograph.data",
                      "autograph.batching")
PRIMITIVE_MODULES = ("autograph.runtime.control_flow", "autograph.runtime.tensor_array",
                     "autograph.runtime.list_edits",
                     "autograph.runtime.variables", "autograph.runtime.ops",
                     "autograph.operators.asserts", "autograph.operators.variables",
                     "autograph.runtime.exec.codegen", "autograph.runtime.exec.optimize",
                     "autograph.runtime.progress", "autograph.saved_model.loop_limit")


def register_all_primitives():
    """Import every module that registers primitives (autograph's own, a fixed list), so
    the table is complete; returns the table."""
    import importlib
    import pkgutil
    from autograph.runtime.ir.primitives import PRIMITIVES
    for name in PRIMITIVE_MODULES:
        importlib.import_module(name)
    for package in PRIMITIVE_PACKAGES:
        try:
            pkg = importlib.import_module(package)
        except ImportError:       # a part of autograph that this build does not have
            continue
        for info in pkgutil.iter_modules(pkg.__path__):
            importlib.import_module(f"{package}.{info.name}")
    return PRIMITIVES


def check_attrs(op, attrs, where):
    """Raise SavedModelError unless `attrs` (decoded) fit primitive `op`'s schema."""
    schema = schema_of(op)
    if schema is None:
        raise SavedModelError(f"{where}: op {op!r} has no attribute schema (not loadable)")
    for name in attrs:
        if name not in schema:
            raise SavedModelError(f"{where}: op {op!r} has no attribute {name!r} (it takes "
                                  f"{sorted(schema) or 'none'})")
    for name, check in schema.items():
        if type(check) is maybe:
            if name not in attrs:
                continue
            check = check.check
        elif name not in attrs:
            raise SavedModelError(f"{where}: op {op!r} needs attribute {name!r}")
        try:
            check(attrs[name])
        except Bad as e:
            raise SavedModelError(f"{where}: attribute {name!r} of op {op!r} must be {e}, "
                                  f"got {_describe(attrs[name])}") from None


def _describe(v):
    if isinstance(v, Ref):
        return f"a {v.kind} reference"
    text = f"{type(v).__name__} {v!r}"
    return text if len(text) < 80 else text[:80] + "..."
