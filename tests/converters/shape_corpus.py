"""A corpus of programs whose arrays change shape inside tensor loops (issue 31, items 2, 3
and 5): growing matrices, vectors that double or shrink, loop-created variables, and
data-dependent shapes (`x[mask]`, `np.nonzero`, `np.unique`, `np.compress`, `np.repeat` with
a tensor count, boolean-mask assignment), mixed with break/continue/return.

Every program takes `(x, n)`: a float64 vector and an int64 scalar, so that its loops are
staged when traced (`while i < n`, `for i in range(n)`). test_shape_corpus.py runs each one
as plain Python, converted on NumPy values (eager) and traced by `ag.function`, and checks
that all three agree (values, shapes and dtypes). GRADIENTS names the programs whose scalar
result is differentiable in `x`; they are checked against central differences in every mode.
"""

import numpy as np

import autograph as ag

_TRACED = {}


def traced(program):
    """One ag.function per program for every test file (a trace is the costly part)."""
    if program not in _TRACED:
        _TRACED[program] = ag.function(program)
    return _TRACED[program]


# -- growing: a matrix gains rows, a vector gains elements ---------------------------------


def grow_rows_concat(x, n):
    m = x[None]
    i = 0
    while i < n:
        m = np.concatenate([m, (x * i)[None]])
        i += 1
    return m


def grow_rows_vstack(x, n):
    m = x[None] * 0.0
    for i in range(n):
        m = np.vstack([m, np.sin(x + i)])
    return m


def grow_vector_append(x, n):
    v = np.zeros(0)
    for i in range(n):
        v = np.append(v, x[i % 5] * i)
    return v


def grow_vector_hstack(x, n):
    v = x[:1]
    i = 0
    while i < n:
        v = np.hstack([v, v[-1:] + 1.0])
        i += 1
    return v


def grow_columns(x, n):
    m = x[:, None]
    for i in range(n):
        m = np.concatenate([m, m[:, -1:] * 0.5], axis=1)
    return m


def grow_both_axes_pad(x, n):
    m = np.outer(x[:2], x[:2])
    for i in range(n):
        m = np.pad(m, 1)
    return m


def grow_with_break(x, n):
    v = x[:1]
    for i in range(n):
        if np.sum(v) > 6.0:
            break
        v = np.concatenate([v, x[i % 5:i % 5 + 1] + i])
    return v


def grow_with_continue(x, n):
    v = np.zeros(0)
    for i in range(n):
        if i % 2 == 1:
            continue
        v = np.concatenate([v, x[:2] * i])
    return v


def grow_with_return(x, n):
    m = x[None]
    i = 0
    while i < n:
        if np.max(m) > 10.0:
            return m[:, :2]
        m = np.concatenate([m, m[-1:] * 2.0])
        i += 1
    return m[:, 2:]


def grow_conditionally(x, n):
    v = x[:1]
    for i in range(n):
        if x[i % 5] > 1.0:
            v = np.concatenate([v, x[i % 5:i % 5 + 1]])
    return v


def grow_two_vectors(x, n):
    small = np.zeros(0)
    big = np.zeros(0)
    for i in range(n):
        e = x[i % 5]
        if e > 1.0:
            big = np.append(big, e)
        else:
            small = np.append(small, e)
    return small, big


def grow_then_reduce(x, n):
    m = x[None]
    for i in range(n):
        m = np.concatenate([m, np.tanh(m[-1:] + 0.1)])
    return np.sum(m, axis=0)


def grow_reading_length(x, n):
    v = x[:1]
    while len(v) < n:
        v = np.concatenate([v, v * 0.5])
    return v, len(v)


def grow_stack_rows(x, n):
    rows = x[None, :2]
    for i in range(n):
        rows = np.concatenate([rows, np.stack([x[0] * i, x[1] - i])[None]])
    return rows


def grow_nested_loops(x, n):
    v = np.zeros(0)
    for i in range(n):
        j = 0
        while j < i:
            v = np.append(v, x[j % 5] + i)
            j += 1
    return v


def grow_in_while_condition_on_size(x, n):
    v = x[:2]
    while np.size(v) < 3 * n:
        v = np.concatenate([v, v[:1] + 1.0])
    return v


def grow_prepend(x, n):
    v = x[:1]
    for i in range(n):
        v = np.concatenate([v[:1] - 1.0, v])
    return v


def grow_matrix_and_count(x, n):
    m = np.zeros((0, 2))
    count = 0
    for i in range(n):
        if i % 3 == 0:
            continue
        m = np.concatenate([m, np.array([[x[0] * i, x[1]]])])
        count += 1
    return m, count


def grow_created_in_loop(x, n):
    i = 0
    while i < n:
        v = np.zeros((1, i + 1, 2)) + x[0]
        i += 1
    return v


def grow_created_range(x, n):
    i = 0
    while i < n:
        v = np.arange(i) * x[1]
        i += 1
    return v


def created_dynamic_rank(x, n):
    i = 0
    while i < n:
        v = np.zeros(np.arange(i) % 2 + 1) + x[0]
        i += 1
    return v


def grow_rank(x, n):
    v = x
    i = 0
    while i < n:
        v = v[None]
        i += 1
    return v


def grow_rank_expand(x, n):
    v = x[:2]
    for i in range(n):
        v = np.expand_dims(v, 0) * 2.0
    return v


def created_nested(x, n):
    i = 0
    while i < n:
        v = {"a": np.zeros((1, i + 1)) + x[0], "b": np.ones((i + 1, 2))}
        i += 1
    return v["a"], v["b"]


def grow_in_one_branch(x, n):
    v = np.array([0.0, 0.0])
    i = 0
    if n > 1:
        while i < n:
            v = np.concatenate([v, x[i % 5:i % 5 + 1]])
            i += 1
    else:
        v = np.array([1.0, 2.0, 3.0])
    return v


def grow_pad_counter(x, n):
    m = np.outer(x[:2], x[:2])
    i = 0
    while i < n:
        m = np.pad(m, 1, constant_values=i)
        i += 1
    return m


def grow_until_sum(x, n):
    v = x[:1]
    while np.sum(v) < 5.0 * (n + 1):
        v = np.append(v, v[-1] + x[1])
    return v


# -- shrinking ---------------------------------------------------------------------------------

def shrink_front(x, n):
    v = x
    while len(v) > n:
        v = v[1:]
    return v


def shrink_by_sum(x, n):
    v = x
    while np.sum(v) > n:
        v = v[1:] * 1.1
    return v


def shrink_both_ends(x, n):
    v = np.concatenate([x, x])
    i = 0
    while i < n and len(v) > 2:
        v = v[1:-1]
        i += 1
    return v


def shrink_with_break(x, n):
    v = np.concatenate([x, x, x])
    for i in range(n * 3):
        if len(v) <= 4:
            break
        v = v[::2] if i % 2 == 0 else v[1:]
    return v


def shrink_matrix_rows(x, n):
    m = np.outer(x, x)
    for i in range(n):
        m = m[1:, :]
    return m


def shrink_then_grow(x, n):
    v = x
    for i in range(n):
        if i % 2 == 0:
            v = v[1:]
        else:
            v = np.concatenate([v, v[:2]])
    return v


def halve_until_small(x, n):
    v = np.concatenate([x, x, x, x])
    while len(v) > n:
        v = v[: len(v) // 2] + v[len(v) // 2: 2 * (len(v) // 2)]
    return v


def shrink_with_return(x, n):
    v = x
    i = 0
    while i < n:
        if len(v) == 2:
            return v * 10.0
        v = v[1:]
        i += 1
    return v


# -- doubling ----------------------------------------------------------------------------------

def double_vector(x, n):
    v = x[:2]
    for i in range(n):
        v = np.concatenate([v, v])
    return v


def double_tile(x, n):
    v = x[:1]
    i = 0
    while i < n:
        v = np.tile(v, 2) * 0.5
        i += 1
    return v


def double_matrix(x, n):
    m = np.outer(x[:2], x[:2])
    for i in range(n):
        m = np.block([[m, m], [m, -m]])
    return m


def double_kron(x, n):
    m = np.eye(1)
    for i in range(n):
        m = np.kron(m, np.array([[1.0, x[0]], [x[1], 1.0]]))
    return m


# -- masks and data-dependent shapes in loops --------------------------------------------------

def mask_sum(x, n):
    s = 0.0
    for i in range(n):
        s = s + np.sum(x[x > i * 0.5])
    return s


def mask_count(x, n):
    c = 0
    for i in range(n):
        c = c + len(x[x > i])
    return c


def mask_loop_variable(x, n):
    v = x
    i = 0
    while i < n:
        v = v[v > np.mean(v) * 0.5]
        i += 1
    return v


def mask_filter_until_empty(x, n):
    v = x
    steps = 0
    while np.size(v) > 0:
        v = v[v > 1.0] - 1.0
        steps += 1
    return steps, v


def mask_with_break(x, n):
    v = x
    for i in range(n):
        w = v[v < 2.0 + i]
        if np.size(w) == 0:
            break
        v = np.concatenate([w, w[:1] * 0.5])
    return v


def mask_with_continue(x, n):
    s = 0.0
    for i in range(n):
        w = x[x > i]
        if np.size(w) == 0:
            continue
        s = s + np.max(w)
    return s


def mask_with_return(x, n):
    i = 0
    while i < n:
        w = x[x > i]
        if len(w) < 2:
            return w * 2.0
        i += 1
    return x[:1]


def mask_matrix_rows(x, n):
    m = np.outer(x, x)
    for i in range(n):
        m = m[np.sum(m, axis=1) > i]
    return m


def mask_concat_grow(x, n):
    v = np.zeros(0)
    for i in range(n):
        v = np.concatenate([v, x[x > i] * i])
    return v


def nonzero_loop(x, n):
    acc = x
    i = 0
    while i < n:
        idx = np.nonzero(acc > 0.5)[0]
        acc = np.concatenate([acc[idx], acc[idx] * 0.5])
        i += 1
    return acc


def nonzero_indices_grow(x, n):
    out = np.zeros(0, np.int64)
    for i in range(n):
        out = np.concatenate([out, np.nonzero(x > i)[0]])
    return out


def flatnonzero_sum(x, n):
    s = 0
    for i in range(n):
        s = s + np.sum(np.flatnonzero(x < i + 0.5))
    return s


def argwhere_rows(x, n):
    m = np.zeros((0, 1), np.int64)
    for i in range(n):
        m = np.concatenate([m, np.argwhere(x > i)])
    return m


def unique_sum(x, n):
    t = 0.0
    for i in range(n):
        u = np.unique(np.floor(x * i))
        t = t + np.sum(u)
    return t


def unique_loop_variable(x, n):
    v = np.floor(x * 2.0)
    for i in range(n):
        v = np.unique(np.concatenate([v, v + 1.0]))
    return v


def unique_counts_loop(x, n):
    total = 0
    for i in range(n):
        u, c = np.unique(np.floor(x + i * 0.5), return_counts=True)
        total = total + np.max(c) * len(u)
    return total


def compress_sum(x, n):
    t = 0.0
    for i in range(n):
        t = t + np.sum(np.compress(x > i, x))
    return t


def compress_loop_variable(x, n):
    v = x
    for i in range(n):
        v = np.compress(v > np.min(v), v)
    return v


def where_one_arg(x, n):
    s = 0
    i = 0
    while i < n:
        s = s + len(np.where(x > i)[0])
        i += 1
    return s


def extract_sum(x, n):
    s = 0.0
    for i in range(n):
        s = s + np.sum(np.extract(x > i, x))
    return s


def repeat_tensor_count(x, n):
    t = 0.0
    for i in range(n):
        t = t + np.sum(np.repeat(x, i))
    return t


def repeat_grow(x, n):
    v = x[:2]
    for i in range(n):
        v = np.repeat(v, 2) * 0.5
    return v


def repeat_per_element(x, n):
    counts = np.arange(5)
    out = x[:0]
    for i in range(n):
        out = np.concatenate([out, np.repeat(x, (counts + i) % 3)])
    return out


def repeat_loop_count(x, n):
    return np.repeat(x[:2], n)


def mask_assign_scalar(x, n):
    y = x * 1.0
    for i in range(n):
        y[y > i] = 0.0
    return y


def mask_assign_values(x, n):
    y = x * 1.0
    for i in range(n):
        y[y > i * 0.7] = y[y > i * 0.7] * 0.5
    return y


def mask_assign_in_while_break(x, n):
    y = x * 1.0
    i = 0
    while i < n:
        if np.all(y < 1.0):
            break
        y[y >= 1.0] = y[y >= 1.0] - 1.0
        i += 1
    return y, i


def mask_assign_continue(x, n):
    y = x * 1.0
    for i in range(n):
        if i == 1:
            continue
        y[y < i] = -1.0
    return y


def mask_assign_growing(x, n):
    v = x
    for i in range(n):
        v = np.concatenate([v, v[:1]])
        v[v > 2.0] = v[v > 2.0] - 2.0
    return v


PROGRAMS = [
    grow_rows_concat, grow_rows_vstack, grow_vector_append, grow_vector_hstack, grow_columns,
    grow_both_axes_pad, grow_with_break, grow_with_continue, grow_with_return,
    grow_conditionally, grow_two_vectors, grow_then_reduce, grow_reading_length,
    grow_stack_rows, grow_nested_loops, grow_in_while_condition_on_size, grow_prepend,
    grow_matrix_and_count, grow_created_in_loop, grow_created_range, created_dynamic_rank,
    grow_rank, grow_rank_expand, created_nested, grow_in_one_branch, grow_pad_counter,
    grow_until_sum,
    shrink_front, shrink_by_sum, shrink_both_ends, shrink_with_break, shrink_matrix_rows,
    shrink_then_grow, halve_until_small, shrink_with_return,
    double_vector, double_tile, double_matrix, double_kron,
    mask_sum, mask_count, mask_loop_variable, mask_filter_until_empty, mask_with_break,
    mask_with_continue, mask_with_return, mask_matrix_rows, mask_concat_grow, nonzero_loop,
    nonzero_indices_grow, flatnonzero_sum, argwhere_rows, unique_sum, unique_loop_variable,
    unique_counts_loop, compress_sum, compress_loop_variable, where_one_arg, extract_sum,
    repeat_tensor_count, repeat_grow, repeat_per_element, repeat_loop_count,
    mask_assign_scalar, mask_assign_values, mask_assign_in_while_break, mask_assign_continue,
    mask_assign_growing,
]

# inputs: the same vector with counts that make the loops run zero, one and several times
X = np.array([0.3, 1.2, 2.5, 3.1, 0.7])
NS = (0, 1, 3)


# -- gradients: scalar functions of x, through growing arrays and masked selections ------------

def g_grow_rows(x, n):
    m = x[None]
    i = 0
    while i < n:
        m = np.concatenate([m, np.sin(m[-1:] * 1.5)])
        i += 1
    return np.sum(m * m)


def g_double(x, n):
    v = x
    for i in range(n):
        v = np.concatenate([v, v * 0.5])
    return np.sum(np.tanh(v))


def g_grow_with_break(x, n):
    v = x[:1]
    for i in range(n):
        if np.sum(v) > 4.0:
            break
        v = np.append(v, np.cos(v[-1]) + x[i % 5])
    return np.sum(v ** 2)


def g_shrink(x, n):
    v = x
    while np.sum(v) > n:
        v = v[1:] * 1.1
    return np.sum(v ** 2)


def g_mask_sum(x, n):
    s = 0.0
    for i in range(n):
        s = s + np.sum(x[x > i * 0.5] ** 2)
    return s


def g_mask_loop_variable(x, n):
    v = x
    i = 0
    while i < n:
        v = np.sin(v[v > 0.4]) + 0.9
        i += 1
    return np.sum(v)


def g_compress(x, n):
    s = 0.0
    for i in range(n):
        s = s + np.sum(np.compress(x > i * 0.5, x) ** 3)
    return s


def g_nonzero(x, n):
    s = 0.0
    i = 0
    while i < n:
        idx = np.nonzero(x > i * 0.5)[0]
        s = s + np.sum(np.sin(x[idx]))
        i += 1
    return s


def g_unique(x, n):
    s = 0.0
    for i in range(n):
        s = s + np.sum(np.unique(x * (i + 1)) ** 2)
    return s


def g_mask_assign(x, n):
    y = x * 1.0
    for i in range(n):
        y[y > i * 0.7] = y[y > i * 0.7] * 0.5
    return np.sum(y ** 2)


def g_mask_assign_scalar(x, n):
    y = x * 1.0
    for i in range(n):
        y[y > 1.0 + i * 0.7] = 0.0
    return np.sum(y ** 3)


def g_repeat(x, n):
    s = 0.0
    for i in range(n):
        s = s + np.sum(np.repeat(x, i + 1) ** 2)
    return s


GRADIENTS = [g_grow_rows, g_double, g_grow_with_break, g_shrink, g_mask_sum,
             g_mask_loop_variable, g_compress, g_nonzero, g_unique, g_mask_assign,
             g_mask_assign_scalar, g_repeat]
