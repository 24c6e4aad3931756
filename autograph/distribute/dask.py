"""Run `ag.function`s over Dask arrays: the saved graph travels, never pickled code.

    import dask.array as da
    import autograph as ag
    import autograph.dask

    @ag.function
    def clip_steps(x):
        while np.any(x > 1.0):
            x = np.where(x > 1.0, x / 2, x)
        return x

    y = autograph.dask.map_blocks(clip_steps, da.from_array(big, chunks=1_000_000))
    y.compute()                       # on any scheduler, e.g. a dask.distributed cluster

`map_blocks` traces once, with None for every axis whose blocks differ in length (so an
uneven last chunk does not trace again), takes the output dtype and block shape from that
trace (no probe call on 0-d inputs), and puts the saved-model bytes into the task graph
once, as one key every block task depends on. Workers load the bytes with the safe loader
once per process (cached by hash) and run them on their default device. Variables are
snapshotted into the bytes when the job is built.

`grad_sum` is data-parallel training's reduction: per-block gradients of a loss, summed
pairwise as a tree. Needs the optional extra `dask` (`pip install -e '.[dask]'`).
"""

import numpy as np

from autograph import distribute


def _block_task(payload, *blocks, follow=()):
    out = distribute.run_packed(payload, *blocks)
    if isinstance(out, (tuple, list)):
        out = out[0]
    out = np.asarray(out)
    ref = blocks[0]
    for axis in follow:
        if out.shape[axis] != ref.shape[axis]:
            raise ValueError(
                f"autograph.dask.map_blocks: the traced function's result has length "
                f"{out.shape[axis]} on axis {axis} for a block of length {ref.shape[axis]}; "
                "a result whose length differs from its block's must be given chunks= "
                "(as for dask.array.map_blocks)")
    return out


def _unified(arrays, by_rows=False):
    """The arrays rechunked so their blocks line up: by trailing axes, as NumPy
    broadcasting does (map_blocks), or by axis 0 only (examples split into shards)."""
    import dask.array as da
    from dask.array.core import unify_chunks
    arrays = [da.asarray(a) for a in arrays]
    if len(arrays) > 1:
        rank = max(a.ndim for a in arrays)
        args = []
        for k, a in enumerate(arrays):
            index = (("rows",) + tuple((k, ax) for ax in range(1, a.ndim))) if by_rows \
                else tuple(range(rank - a.ndim, rank))
            args += [a, index]
        _, arrays = unify_chunks(*args)
    if by_rows:   # a shard holds whole examples: one block along every other axis
        arrays = [a.rechunk({ax: -1 for ax in range(1, a.ndim)}) for a in arrays]
    return arrays


def _specs(arrays):
    specs = []
    for a in arrays:
        relax = {ax for ax, c in enumerate(a.chunks) if len(set(c)) > 1}
        shape = [c[0] for c in a.chunks]
        specs.append(distribute.relaxed_spec(shape, a.dtype, relax))
    return specs


def prepare(fn, arrays, kwargs=None):
    """(concrete function, payload bytes) for `fn` on blocks of `arrays`."""
    concrete = distribute.concrete_for(fn, _specs(arrays), kwargs)
    return concrete, distribute.pack(concrete)


def map_blocks(fn, *arrays, chunks=None, drop_axis=None, new_axis=None, **kwargs):
    """`fn` (an ag.function, or a function to trace) on every block of `arrays`, block
    i of each array together, as dask.array.map_blocks does. `kwargs` are Python values
    passed to `fn` when tracing (they are part of its trace, not of the tasks)."""
    import dask
    import dask.array as da
    arrays = _unified(arrays)
    if not arrays:
        raise TypeError("autograph.dask.map_blocks needs at least one Dask array")
    concrete, payload = prepare(fn, arrays, kwargs)
    outs = distribute.output_specs(concrete)
    if len(outs) != 1:
        raise TypeError(
            f"autograph.dask.map_blocks: {concrete.name} returns {len(outs)} arrays; a Dask "
            "array is made of one result per block (return one array, or call map_blocks "
            "once per result)")
    dtype, shape = outs[0]
    ref = arrays[0]
    follow = ()
    if chunks is None and drop_axis is None and new_axis is None:
        if shape is None or len(shape) != ref.ndim:
            raise ValueError(
                f"autograph.dask.map_blocks: {concrete.name} turns blocks of rank {ref.ndim} "
                f"into results of rank {'unknown' if shape is None else len(shape)}; say how "
                "the result is blocked with chunks=, drop_axis= or new_axis= (as for "
                "dask.array.map_blocks)")
        chunks = tuple(ref.chunks[ax] if d is None else (int(d),) * ref.numblocks[ax]
                       for ax, d in enumerate(shape))
        follow = tuple(ax for ax, d in enumerate(shape) if d is None)
    ndim = len(shape) if shape is not None else ref.ndim
    token = dask.base.tokenize(payload)
    packed = dask.delayed(payload, pure=True, name=f"autograph-graph-{token}")
    return da.map_blocks(_block_task, packed, *arrays, follow=follow,
                         dtype=dtype, chunks=chunks, drop_axis=drop_axis, new_axis=new_axis,
                         meta=np.empty((0,) * ndim, dtype), name=f"autograph-{concrete.name}")


def grad_sum(loss_fn, params, *arrays):
    """(total loss, gradients) of `loss_fn(params, *blocks)` summed over the blocks of the
    Dask arrays (split along axis 0), computed block by block on the workers and added
    pairwise as a tree. `params` is a list of NumPy arrays; the result's gradients are a
    list in the same order. With a loss that is a sum over examples, this equals the
    full-batch gradient (to rounding)."""
    import dask
    import autograph as ag
    _check_grad_sum_call(loss_fn, params, arrays)
    arrays = _unified(arrays, by_rows=True)
    params = [np.asarray(p) for p in params]

    @ag.function
    def shard_value_and_grad(params, *blocks):
        return ag.value_and_grad(loss_fn)(params, *blocks)

    param_specs = [ag.TensorSpec(p.shape, p.dtype) for p in params]
    try:
        concrete = shard_value_and_grad.get_concrete_function(param_specs, *_specs(arrays))
    except Exception as e:
        if hasattr(e, "add_note"):
            e.add_note(f"(grad_sum called {_loss_name(loss_fn)}(params, "
                       f"{', '.join(f'block{i}' for i in range(len(arrays)))}) with params "
                       f"ONE list of {len(params)} arrays (shapes "
                       f"{', '.join(str(p.shape) for p in params)}): index it, "
                       f"`w, b = params`, rather than taking the arrays as parameters of "
                       f"their own)")
        raise
    payload = distribute.pack(concrete)
    token = dask.base.tokenize(payload)
    packed = dask.delayed(payload, pure=True, name=f"autograph-graph-{token}")
    delayed_params = dask.delayed(params, pure=True)
    block_lists = [a.to_delayed().ravel() for a in arrays]
    parts = [dask.delayed(distribute.run_packed, pure=True)(packed, delayed_params, *blocks)
             for blocks in zip(*block_lists)]
    total = _tree(parts)
    value, grads = dask.compute(total)[0]
    return value, list(grads)


def _loss_name(loss_fn):
    return getattr(loss_fn, "__name__", None) or type(loss_fn).__name__


def _check_grad_sum_call(loss_fn, params, arrays):
    """A clear error for the calls grad_sum cannot mean: `params` must be one list (or
    tuple) of arrays, and loss_fn must take it and then one block per Dask array."""
    import inspect
    name = _loss_name(loss_fn)
    if not isinstance(params, (list, tuple)):
        raise TypeError(
            f"grad_sum(loss_fn, params, *arrays): params must be a list (or tuple) of NumPy "
            f"arrays, got {type(params).__name__}. grad_sum calls {name}(params, *blocks) "
            f"with params as that one list; for one array w pass [w] and read it in the "
            f"loss as params[0].")
    if not arrays:
        raise TypeError("grad_sum(loss_fn, params, *arrays) needs at least one Dask array "
                        "to split into blocks.")
    try:
        sig = inspect.signature(loss_fn)
    except (TypeError, ValueError):
        return
    try:
        sig.bind(params, *arrays)
    except TypeError:
        raise TypeError(
            f"grad_sum calls {name}(params, *blocks): params as ONE list ({len(params)} "
            f"arrays), then one block of each of the {len(arrays)} Dask array(s), so "
            f"{name} must take {1 + len(arrays)} positional arguments; its signature is "
            f"{name}{sig}. Write it as `def {name}(params, "
            f"{', '.join(f'x{i}' for i in range(len(arrays)))}):` and unpack the "
            f"parameters inside (`w, b = params`).") from None


def _add(a, b):
    from autograph.runtime.ir import nest
    return nest.map_structure(np.add, a, b)


def _tree(parts):
    import dask
    while len(parts) > 1:
        nxt = [dask.delayed(_add, pure=True)(parts[i], parts[i + 1])
               for i in range(0, len(parts) - 1, 2)]
        if len(parts) % 2:
            nxt.append(parts[-1])
        parts = nxt
    return parts[0]
