"""The Numba helper functions that native handles call (source text, see grad.py).

They are written once into the header of a generated module that uses them, as generic
`@njit` functions: Numba compiles one version per element type actually used. Each keeps
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

HELPERS["grow"] = '''
@njit(cache=True)
def grow(a, i):
    b = np.empty((max(2 * a.shape[0], i + 1, 8),) + a.shape[1:], a.dtype)
    b[:a.shape[0]] = a
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
    b[base - new_lo:base - new_lo + n] = buf
    return b, new_lo
'''

HELPERS["gl_put"] = '''
@njit(cache=True)
def gl_put(gl, i, v):
    gl = gl_cover(gl, i, i + 1)
    gl[0][i - gl[1]] += v
    return gl
'''

HELPERS["gl_set"] = '''
@njit(cache=True)
def gl_set(gl, i, v):
    gl = gl_cover(gl, i, i + 1)
    gl[0][i - gl[1]] = v
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
    a[0][k:k + nb] += b[0]
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
            out[k] = buf[j]
    return out, gl
'''

HELPERS["gl_pop_rows"] = '''
@njit(cache=True)
def gl_pop_rows(gl, out):
    buf, base = gl
    lo = max(base, 0)
    hi = min(base + buf.shape[0], out.shape[0])
    if lo < hi:
        out[lo:hi] = buf[lo - base:hi - base]
        buf[lo - base:hi - base] = 0
    return out, gl
'''

HELPERS["gl_set_rows"] = '''
@njit(cache=True)
def gl_set_rows(gl, rows):
    gl = gl_cover(gl, 0, rows.shape[0])
    gl[0][-gl[1]:rows.shape[0] - gl[1]] = rows
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
        w[:written.shape[0]] = written
        written = w
    buf[i] = v
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
        w[:written.shape[0]] = written
        written = w
    buf[:m] = value
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
DEPENDS = {"gl_put": ["gl_cover"], "gl_set": ["gl_cover"], "gl_add": ["gl_cover"],
           "gl_scatter": ["gl_put", "gl_cover"], "gl_set_rows": ["gl_cover"],
           "ta_write": ["grow"], "ta_unstack": ["grow"]}


def header(used):
    """The source of the helpers in `used` and of those they call, in a fixed order."""
    names = set(used)
    for name in list(names):
        names.update(DEPENDS.get(name, ()))
    return "".join(HELPERS[n] for n in HELPERS if n in names).split("\n")
