"""The Numba helper functions that native handles call (source text, see grad.py).

They live in the shared native library (library.py: one module per machine, compiled
with `cache=True`), as generic `@njit` functions: Numba compiles one version per element
type actually used, once per machine; a generated module imports those it calls. Each keeps
the interpreter's meaning (autodiff/stacks.py, gradlists.py, runtime/tensor_array.py):

- `grow(a, i)`: a stack's flat buffer with room for index i (doubling; new rows unset:
  a stack writes before it reads);
- gradient lists `(rows, base)`: index j's cotangent is rows[j - base], zeros outside;
  `gl_cover` makes room for [lo, hi) by doubling towards the side that grows, so a
  backward loop that adds one cotangent per step at decreasing indices costs a row per
  step; adding a list into another adds only its rows; a pop returns the row and zeroes
  it (the interpreter removes the entry: the same as zeros for every later reader);
- TensorArrays `(buffer, written, length)`: reads and `stack` check that elements were
  written (the interpreter's errors), reads and `stack` copy (values are immutable),
  writes past the end grow an array made with `dynamic_size=True`.
"""

HELPERS = {}

# rows `src` (or one row, a scalar for 1-D `dst`: `row` True) written (`add` False) or added into C-contiguous
# `dst` from row `at` on, as one flat loop: Numba's slice assignment would compile its
# shape-formatting error path, seconds per rank pair (copies.py)
HELPERS["rows_into"] = '''
@njit(cache=True, boundscheck=False)
def rows_into(dst, at, src, row, add):
    d = dst.reshape(dst.size)
    s = np.ascontiguousarray(src)
    s = s.reshape(s.size)
    width = d.size // dst.shape[0] if dst.shape[0] else 0
    rows = 1 if row else (s.size // width if width else 0)
    if s.size != rows * width or at < 0 or at + rows > dst.shape[0]:
        raise ValueError("autograph: a row of another shape, or out of range, for a native buffer")
    o = at * width
    if add:
        for k in range(s.size):
            d[o + k] += s[k]
    else:
        for k in range(s.size):
            d[o + k] = s[k]
'''

HELPERS["grow"] = '''
@njit(cache=True)
def grow(a, i):
    b = np.empty((max(2 * a.shape[0], i + 1, 8),) + a.shape[1:], a.dtype)
    rows_into(b, 0, a, False, False)
    return b
'''

HELPERS["gl_cover"] = '''
@njit(cache=True)
def gl_cover(gl, lo, hi):
    buf, base = gl
    n = buf.shape[0]
    if n == 0:
        return np.zeros((hi - lo,) + buf.shape[1:], buf.dtype), lo
    if lo >= base and hi <= base + n:
        return gl
    new_lo = min(lo, base)
    new_hi = max(hi, base + n)
    size = max(new_hi - new_lo, 2 * n)
    if lo < base:
        new_lo = new_hi - size
    b = np.zeros((size,) + buf.shape[1:], buf.dtype)
    rows_into(b, base - new_lo, buf, False, False)
    return b, new_lo
'''

HELPERS["gl_put"] = '''
@njit(cache=True)
def gl_put(gl, i, v):
    gl = gl_cover(gl, i, i + 1)
    rows_into(gl[0], i - gl[1], v, True, True)
    return gl
'''

HELPERS["gl_set"] = '''
@njit(cache=True)
def gl_set(gl, i, v):
    gl = gl_cover(gl, i, i + 1)
    rows_into(gl[0], i - gl[1], v, True, False)
    return gl
'''

HELPERS["gl_unset"] = '''
@njit(cache=True)
def gl_unset(gl, i):
    k = i - gl[1]
    if k >= 0 and k < gl[0].shape[0]:
        gl[0][k] = 0
    return gl
'''

HELPERS["gl_pop_a"] = '''
@njit(cache=True)
def gl_pop_a(gl, i, remove):
    buf, base = gl
    k = i - base
    if k >= 0 and k < buf.shape[0]:
        v = buf[k].copy()
        if remove:
            buf[k] = 0
        return v, gl
    return np.zeros(buf.shape[1:], buf.dtype), gl
'''

HELPERS["gl_pop_s"] = '''
@njit(cache=True)
def gl_pop_s(gl, i, remove):
    buf, base = gl
    k = i - base
    if k >= 0 and k < buf.shape[0]:
        v = buf[k]
        if remove:
            buf[k] = 0
        return v, gl
    return np.zeros(1, buf.dtype)[0], gl
'''

HELPERS["gl_add"] = '''
@njit(cache=True)
def gl_add(a, b):
    nb = b[0].shape[0]
    if nb == 0:
        return a
    if a[0].shape[0] == 0:
        return b
    a = gl_cover(a, b[1], b[1] + nb)
    k = b[1] - a[1]
    rows_into(a[0], k, b[0], False, True)
    return a
'''

HELPERS["gl_scatter"] = '''
@njit(cache=True)
def gl_scatter(gl, indices, rows):
    for k in range(indices.shape[0]):
        gl = gl_put(gl, indices[k], rows[k])
    return gl
'''

HELPERS["gl_gather"] = '''
@njit(cache=True)
def gl_gather(gl, indices, out):
    buf, base = gl
    for k in range(indices.shape[0]):
        j = indices[k] - base
        if j >= 0 and j < buf.shape[0]:
            rows_into(out, k, buf[j], True, False)
    return out, gl
'''

HELPERS["gl_pop_rows"] = '''
@njit(cache=True)
def gl_pop_rows(gl, out):
    buf, base = gl
    lo = max(base, 0)
    hi = min(base + buf.shape[0], out.shape[0])
    if lo < hi:
        rows_into(out, lo, buf[lo - base:hi - base], False, False)
        buf[lo - base:hi - base] = 0
    return out, gl
'''

HELPERS["gl_set_rows"] = '''
@njit(cache=True)
def gl_set_rows(gl, rows):
    gl = gl_cover(gl, 0, rows.shape[0])
    rows_into(gl[0], -gl[1], rows, False, False)
    return gl
'''

HELPERS["ta_write"] = '''
@njit(cache=True)
def ta_write(ta, i, v, dynamic):
    buf, written, n = ta
    if i < 0 or i >= n and not dynamic:
        raise IndexError("TensorArray index out of range for its size (create it with "
                         "a larger size, or with dynamic_size=True)")
    if i >= buf.shape[0]:
        buf = grow(buf, i)
        w = np.zeros(buf.shape[0], np.bool_)
        rows_into(w, 0, written, False, False)
        written = w
    rows_into(buf, i, v, True, False)
    written[i] = True
    return buf, written, max(n, i + 1)
'''

HELPERS["ta_unstack"] = '''
@njit(cache=True)
def ta_unstack(ta, value, dynamic):
    buf, written, n = ta
    m = value.shape[0]
    if m > n and not dynamic and n > 0:
        raise IndexError("TensorArray.unstack: more rows than the TensorArray's size")
    if m > buf.shape[0]:
        buf = grow(buf, m - 1)
        w = np.zeros(buf.shape[0], np.bool_)
        rows_into(w, 0, written, False, False)
        written = w
    rows_into(buf, 0, value, False, False)
    written[:m] = True
    return buf, written, max(n, m)
'''

HELPERS["ta_check"] = '''
@njit(cache=True)
def ta_check(ta, i):
    if i < 0 or i >= ta[2]:
        raise IndexError("TensorArray index out of range for its size")
    if not ta[1][i]:
        raise ValueError("TensorArray element was read before it was written")
    return i
'''

HELPERS["ta_stack"] = '''
@njit(cache=True)
def ta_stack(ta):
    buf, written, n = ta
    for i in range(n):
        if not written[i]:
            raise ValueError("TensorArray.stack(): an element was never written")
    return buf[:n].copy()
'''

# which helpers each helper calls (the header holds a helper's dependencies too)
DEPENDS = {"grow": ["rows_into"], "gl_cover": ["rows_into"], "gl_gather": ["rows_into"],
           "gl_put": ["gl_cover", "rows_into"], "gl_set": ["gl_cover", "rows_into"],
           "gl_add": ["gl_cover", "rows_into"], "gl_pop_rows": ["rows_into"],
           "gl_scatter": ["gl_put", "gl_cover", "rows_into"],
           "gl_set_rows": ["gl_cover", "rows_into"], "ta_write": ["grow", "rows_into"],
           "ta_unstack": ["grow", "rows_into"]}


def closure(used):
    """The helpers in `used` and those they call."""
    names = set(used)
    for name in list(names):
        names.update(DEPENDS.get(name, ()))
    return names
