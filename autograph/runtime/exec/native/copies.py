"""Array assignments in native code as loops that are cheap for Numba to compile.

`dst[key] = value` with an array `value` (a stack push, a TensorArray fill, a `setitem`
or `ufunc_at` update, `acc[i] += row`) is, in Numba, one generic slice assignment whose
error path formats both shapes into its message: typing that message (`str` of ints,
`join`, an f-string) costs 4-5 s of CPU time per new pair of ranks in every process,
and a differentiated RNN needs several pairs. The same assignment written as a loop nest
over the destination view costs ~0.1 s to compile and runs as fast (LLVM vectorizes it).

`put(low, op, dst_rank, src_rank)` names a helper `put_<op>_<d>_<s>(d, s)`: for ranks up
to 4 one of the shared library's (library.py: compiled once per machine), else its source
is added to the module once (Lowering.helpers). The helper keeps NumPy's meaning:

- `s` broadcasts into `d` (a dimension of 1 repeats, missing leading ones repeat, extra
  leading ones of size 1 are dropped); any other shape is a `ValueError`;
- a source that overlaps the destination in memory (`x[1:] = x[:-1]` on views) is copied
  first, as NumPy copies it;
- `op` is `set`, `add`, `subtract`, `multiply`, `maximum` or `minimum` (`ufunc.at`'s and
  augmented assignment's ops); each element is cast to the destination's dtype as the
  slice assignment casts it (callers check that NumPy would allow the cast).
"""

_OPS = {"set": "{d} = {s}", "add": "{d} += {s}", "subtract": "{d} -= {s}",
        "multiply": "{d} *= {s}", "maximum": "{d} = np.maximum({d}, {s})",
        "minimum": "{d} = np.minimum({d}, {s})"}

OPS = tuple(_OPS)


def helper_name(op, dst_rank, src_rank):
    return f"put_{op}_{dst_rank}_{src_rank}"


def put(low, op, dst_rank, src_rank):
    """The name of the helper doing `d[...] <op>= s` for these ranks: one of the shared
    library's (library.py, compiled once per machine), else defined in `low`'s module
    (its source added to `low.helpers` the first time)."""
    from autograph.runtime.exec.native import library
    name = helper_name(op, dst_rank, src_rank)
    if library.holds(name):
        low.library.add(name)
    elif name not in low.used:
        low.used.add(name)
        lines = source(name, op, dst_rank, src_rank)
        low.helpers.extend(lines)
        low.helper_made_by.extend([None] * len(lines))
    return name


def source(name, op, dst_rank, src_rank):
    """The lines of helper `name` (see the module doc)."""
    lines = ["", "@njit(cache=True, error_model='numpy', boundscheck=False)",
             f"def {name}(d, s):"]
    extra = max(src_rank - dst_rank, 0)
    fits = [f"s.shape[{k}] == 1" for k in range(extra)]
    steps = []      # per source axis used: its step per destination index (0 broadcasts)
    for k in range(extra, src_rank):
        dk = dst_rank - src_rank + k
        fits.append(f"(s.shape[{k}] == d.shape[{dk}] or s.shape[{k}] == 1)")
        steps.append((k, dk))
    if fits:
        lines.append(f"    if not ({' and '.join(fits)}):")
        lines.append("        raise ValueError('could not broadcast the assigned array "
                     "into the shape of the indexed array')")
    if src_rank:
        lines += _overlap_lines(dst_rank, src_rank)
    for k, dk in steps:
        lines.append(f"    m{k} = 0 if s.shape[{k}] == 1 else 1")
    index_d = ", ".join(f"i{k}" for k in range(dst_rank))
    index_s = ", ".join(["0"] * extra + [f"i{dk} * m{k}" for k, dk in steps])
    for k in range(dst_rank):
        lines.append("    " * (k + 1) + f"for i{k} in range(d.shape[{k}]):")
    target = f"d[{index_d}]"
    value = f"s[{index_s}]" if src_rank else "s"
    lines.append("    " * (dst_rank + 1) + _OPS[op].format(d=target, s=value))
    return lines


def _overlap_lines(dst_rank, src_rank):
    """`s = s.copy()` when the memory of `s` and `d` may overlap (NumPy copies too)."""
    lines = []
    for a, rank in (("d", dst_rank), ("s", src_rank)):
        lines.append(f"    {a}_lo = {a}.ctypes.data")
        lines.append(f"    {a}_hi = {a}_lo + {a}.itemsize")
        for k in range(rank):
            lines.append(f"    {a}_e = ({a}.shape[{k}] - 1) * {a}.strides[{k}]")
            lines.append(f"    if {a}_e < 0:")
            lines.append(f"        {a}_lo += {a}_e")
            lines.append("    else:")
            lines.append(f"        {a}_hi += {a}_e")
    lines.append("    if d.size and s.size and d_lo < s_hi and s_lo < d_hi:")
    lines.append("        s = s.copy()")
    return lines


def view_rank(index, x_rank):
    """The rank of `x[key]` for an encoded basic index (runtime.numpy.indexing), or None
    when it holds an index array or a mask."""
    removed = added = 0
    for item in index:
        tag = item[0]
        if tag in ("i", "d"):
            removed += 1
        elif tag == "n":
            added += 1
        elif tag not in ("s", "e"):
            return None
    return x_rank - removed + added
