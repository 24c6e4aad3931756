"""A Variable's new value written into its old array by the fused kernel that computes it
(`jit_compile=True`), as XLA does with donated buffers: Adam's step then reads and writes
each parameter and both slots once, and allocates nothing.

Unfused, an optimizer step assigns each Variable a new array: `m = b1 * m + (1 - b1) * g`
allocates `m`'s size, and so do `v` and `w - step`. A fused kernel (fuse.py) computing
those values element by element can store each one where the old value was, since it
reads the old element just before it writes the new one. Two things must hold for that.

What the program sees, decided when lowering (`plan`), per kernel output that is a
Variable's new value (a fused `assign_add`/`assign_sub`, fuse_updates.py, or a deferred
`assign` of a kernel output):

- the kernel is in the function's top graph (a loop body runs again: a value captured
  from before the loop would see the new numbers) and has one inner loop (no row
  reduction whose later loop would read an element already overwritten); the value has
  the Variable's full static shape and dtype;
- it is the function's first write of that Variable, so the old array is the one the
  call passed in (not some tensor an earlier `assign` gave it);
- every read of the old value (each `read_variable` of it and all that may share its
  memory, inplace_reads.reads_done) happens before the member that computes the new
  value, in the order the kernel's body and the main function run, and none is a result
  of the function or kept by an effectful node;
- the kernel's members read the old value only directly, element (i, j) at (i, j): not
  through a view (`W.T`, a reshape, a slice), whose element (i, j) is another element of
  the array, one the loop may have overwritten already;
- one Variable per value (a value assigned to two Variables stays a new array).

What the caller holds, checked at every call (`owned`): the array must be referenced by
the Variable alone. If the user kept it (a result of an earlier call that returned the
Variable's value, `v.numpy()`'s array, a view of it, a second Variable sharing it) or it
is read-only or a view of memory something else owns, the call passes a copy instead, so
writing in place is never visible outside the call. Between that check and the write no
other thread can take a reference: the call holds its Variables' locks from reading their
values to writing the new ones back (jit.py), and every reader of a Variable's array
(`numpy()`, an eager `read_value()`, a graph's `read_variable`) takes the lock.
"""

import sys

import numpy as np

from autograph.runtime.exec import inplace_reads


def plan(low, kernel, graph, readers, depth, env):
    """({id(output tensor): the Variable's local}, {main-function name: the same array's
    Variable local}) for the outputs of `kernel` that may be written into their
    Variable's old array (see the module doc), recording the Variables in `low.inplace`.
    The second map names each earlier read of such a Variable (`ReadVariableOp_7 =
    var_m`: the same array when the kernel runs) by its Variable, so the kernel reads
    and writes the array through one parameter: LLVM then sees a load and a store of
    the same element and vectorizes the loop, where two parameters that might overlap
    would send it to its scalar fallback every call."""
    if depth != 1 or graph.parent is not None or not kernel.shape:
        return {}, {}
    if max(kernel.phase.values()) != 0 or any(kind != "full" for kind in kernel.kind.values()):
        return {}, {}
    targets = []      # (new value tensor, its producing graph node, the writing node)
    for update in kernel.updates():
        targets.append((update.outputs[0], update.original, update.original))
    for assign in kernel.deferred:
        if assign.op == "assign_variable":
            t = assign.inputs[0]
            if id(t) in kernel.kind:
                targets.append((t, t.node, assign))
    into, alias, taken = {}, {}, set()
    for t, producer, writer in targets:
        var = writer.attrs["variable"]()
        if var is None or id(var) in low.assigned or id(var) in taken or id(t) in into:
            continue
        if tuple(t.shape) != tuple(np.shape(var._value)) or t.dtype != np.dtype(var.dtype):
            continue
        reads = _old_reads(graph, readers, var, writer)
        if not all(inplace_reads.reads_done(readers, r.outputs[0], producer) for r in reads):
            continue
        if _reads_a_view(kernel, readers, reads):
            continue
        taken.add(id(var))
        into[id(t)] = local = low.variable_local(writer)
        alias.update((env[id(r.outputs[0])], local) for r in reads
                     if id(r.outputs[0]) in env)
        low.inplace.add(id(var))
    return into, alias


def _old_reads(graph, readers, var, writer):
    """The read_variable nodes of `var` in `graph` before `writer` (its first write):
    they read the array the call passed in."""
    limit = readers.order[id(writer)]
    return [node for node in graph.nodes[:limit]
            if node.op == "read_variable" and _var(node) is var]


def _reads_a_view(kernel, readers, reads):
    """True when a member of `kernel` reads the old value other than directly (element
    (i, j) of a transpose, a reshape or a slice is another element of the array, one
    the loop may have overwritten already)."""
    direct = {id(r.outputs[0]) for r in reads}
    aliases, stack = set(), [r.outputs[0] for r in reads]
    while stack:
        for node, _ in readers.get(stack.pop()):
            if node is None or inplace_reads.makes_new(node):
                continue
            for out in node.outputs:
                if id(out) not in aliases:
                    aliases.add(id(out))
                    stack.append(out)
    return any(id(t) in aliases and id(t) not in direct
               for member in kernel.members for t in member.inputs)


def _var(node):
    ref = node.attrs.get("variable")
    return ref() if callable(ref) else None


# -- at every call ------------------------------------------------------------------------------

def _count(a):
    return sys.getrefcount(a)


class _Probe:
    pass


def _calibrate():
    """The reference count `_count` sees for an array held by one attribute only (the
    interpreter's own references while calling differ between Python versions)."""
    probe = _Probe()
    probe._value = np.empty(1)
    return _count(probe._value)


_ALONE = _calibrate()
_BASE_ALONE = 2    # sys.getrefcount(a.base) for a base object held by `a` alone


def owned(a):
    """`a` itself when only its Variable holds it and it may be written (see the module
    doc), else a copy. Call as `owned(v._value)`."""
    if type(a) is np.ndarray and _count(a) == _ALONE + 1 and a.flags.writeable:
        base = a.base
        if base is None:
            return a
        # an array Numba returned: its memory belongs to a MemInfo held by it alone. Numba
        # boxes an allocation it returns twice (a Variable's value and a result) as two
        # arrays, each with a MemInfo object of its own over one allocation: the
        # allocation's own count (`refcount`) says whether another array shares it
        if type(base).__name__ == "_MemInfo" and sys.getrefcount(base) == _BASE_ALONE + 1 \
                and base.refcount == 1:
            return a
    return a.copy()
