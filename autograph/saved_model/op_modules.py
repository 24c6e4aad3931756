"""Which of autograph's modules registers each primitive, so `load` imports only those a
model's graphs use.

Every family of primitives registers itself when its module is imported. Importing all of
them (some 80 modules, NumPy's random and FFT packages, the dataset and gradient wings) cost
a fresh process more than the rest of loading and the first call together, for a model that
needs a handful. The loader reads the ops a file names, refuses any that is not in the
table below, and imports the (fixed) modules of the ones it holds: nothing a file names is
imported, only this table's entries.

`tests/saved_model/test_op_modules.py` keeps the table right: in a fresh process it records
which module's import registers each primitive and compares it with the table (a new
primitive, or one that moved, fails there, with the line to write here).

Gradient rules registered apart from their primitive (control flow's and TensorArrays' in
`autograph.autodiff`) are imported by the reverse-mode transform itself when it runs.
"""

# module -> the primitives its import registers (SciPy's ufuncs are below, by their prefix)
_BY_MODULE = {
    "autograph.autodiff.api": "stop_gradient",
    "autograph.autodiff.conds": "ad_assume_shape",
    "autograph.autodiff.checkpointed": "ad_ckpt_new ad_ckpt_offer ad_ckpt_restore",
    "autograph.autodiff.custom": "custom_gradient",
    "autograph.autodiff.custom_jvp": "custom_jvp",
    "autograph.autodiff.jvp_rules_state": "jvp_zero_handle",
    "autograph.batching.nested": "vmap_call",
    "autograph.autodiff.list_edits": "ad_gl_shift",
    "autograph.autodiff.gradlists": "ad_gl_copy ad_gl_gather ad_gl_get ad_gl_set ad_gl_set_rows",
    "autograph.autodiff.stacks":
        "ad_gl_add ad_gl_from_rows ad_gl_new ad_gl_pop ad_gl_pop_rows ad_gl_put ad_gl_scatter "
        "ad_stack_get ad_stack_new ad_stack_push",
    "autograph.data.host": "data_iter_close data_iter_next data_iter_open",
    "autograph.data.lowering": "data_source",
    "autograph.data.shuffle": "data_shuffle_iteration data_shuffle_order",
    "autograph.operators.asserts": "assert",
    "autograph.operators.variables": "check_bound",
    "autograph.runtime.control_flow": "Cast cond while_loop",
    "autograph.runtime.list_edits": "ta_insert ta_nonempty ta_pop",
    "autograph.runtime.progress": "progress progress_close progress_open",
    "autograph.runtime.ir.primitives": "Const Identity Placeholder",
    "autograph.runtime.numpy.array_ops":
        "arange argsort clip full full_like imag matmul ones ones_like real round_decimals sort "
        "tensordot where zeros zeros_like",
    "autograph.runtime.numpy.composed_ufuncs": "gcd lcm nextafter spacing",
    "autograph.runtime.numpy.counted_shapes": "full_of_shape repeat_index",
    "autograph.runtime.numpy.composites": "polymul",
    "autograph.runtime.numpy.elementwise":
        "abs acos acosh add asin asinh astype atan atan2 atanh bitwise_and bitwise_invert "
        "bitwise_left_shift bitwise_or bitwise_right_shift bitwise_xor ceil conj copysign cos "
        "cosh deg2rad divide equal exp exp2 expm1 floor floor_divide fmax fmin fmod greater "
        "greater_equal hypot isfinite isinf isnan less less_equal log log10 log1p log2 logaddexp "
        "logical_and logical_not logical_or logical_xor maximum minimum multiply negative "
        "not_equal positive positive_bool pow rad2deg remainder round sign signbit sin sinh sqrt "
        "square subtract tan tanh trunc",
    "autograph.runtime.numpy.fft": "fft",
    "autograph.runtime.numpy.indexing": "boolean_mask getitem take",
    "autograph.runtime.numpy.joins": "concat repeat stack tile",
    "autograph.runtime.numpy.linalg":
        "cholesky det diagonal eigh eigvalsh inv lstsq matrix_rank pinv qr slogdet solve svd "
        "svdvals tril triu",
    "autograph.runtime.numpy.linalg_eig": "eig",
    "autograph.runtime.numpy.random": "random random_seed rng_new",
    "autograph.runtime.numpy.reductions":
        "all any argmax argmin cumulative_prod cumulative_sum max mean min prod sum",
    "autograph.runtime.numpy.shape_ops":
        "broadcast_to expand_dims flip permute_dims reshape roll shape_of size_of squeeze "
        "sum_to_shape",
    "autograph.runtime.numpy.sorting": "add_along_axis nonzero searchsorted take_along_axis unique",
    "autograph.runtime.numpy.statistics": "bincount",
    "autograph.runtime.numpy.updates": "index_get setitem ufunc_at",
    "autograph.runtime.ops": "print range",
    "autograph.runtime.tensor_array":
        "ta_concat ta_gather ta_new ta_read ta_size ta_stack ta_unstack ta_write",
    "autograph.runtime.variables": "assign_variable read_variable update_variable",
    "autograph.saved_model.loop_limit": "loop_count",
}

SPECIAL_PREFIX = "special_"          # scipy_special.PREFIX (not imported: it registers ~200)
SPECIAL_MODULE = "autograph.runtime.numpy.scipy_special"

MODULES = {name: module for module, names in _BY_MODULE.items() for name in names.split()}


def module_of(op):
    """The module whose import registers primitive `op`, or None for a name autograph does
    not define (the caller refuses it)."""
    module = MODULES.get(op)
    if module is None and op.startswith(SPECIAL_PREFIX):
        return SPECIAL_MODULE          # which special_ names exist: scipy_special.NAMES
    return module


def import_for(ops):
    """Import the modules that register `ops` (names already checked by `module_of`)."""
    for module in sorted({module_of(op) for op in ops}):
        __import__(module)
