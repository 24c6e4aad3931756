"""A corpus of plain-Python programs that change lists in loops (issue 31): each entry of
CORPUS is (name, function, args), run by test_list_corpus.py as plain Python (the
reference), converted on Python values, and converted + traced by ag.function with the
arguments as NumPy values (the loops over them staged). All must agree.

The first argument is a float array `x` or scalar, the second a count `n`; functions named
in DIFFERENTIABLE return a value whose sum is a smooth function of `x` (their gradients are
checked against central differences). Other corpora of the issue (growing shapes,
data-dependent shapes) add their programs to CORPUS the same way.
"""

import collections

import numpy as np


# -- append / extend ---------------------------------------------------------------------------

def append_for(x, n):
    out = []
    for i in range(n):
        out.append(x * i)
    return np.stack(out)


def append_while(x, n):
    out = [x]
    i = 0
    while i < n:
        out.append(out[-1] * 0.5 + i)
        i += 1
    return np.stack(out)


def append_returned(x, n):
    out = []
    for i in range(n):
        out.append(np.sin(x) + i)
    return out


def extend_pairs(x, n):
    out = [x]
    for i in range(n):
        out.extend([x * i, x - i])
    return np.stack(out)


def iadd_display(x, n):
    out = [x]
    for i in range(n):
        out += [x * i]
    return np.stack(out)


def concat_rebind(x, n):
    out = [x]
    for i in range(n):
        out = out + [x + i, x * x]
    return np.stack(out)


def append_len_in_loop(x, n):
    out = []
    for i in range(n):
        out.append(x * len(out))
    return np.stack(out)


def while_on_len(x, n):
    out = [x]
    while len(out) < n:
        out.append(out[-1] * 1.5)
    return np.stack(out)


def fibonacci(x, n):
    out = [x, x]
    for i in range(2, n):
        out.append(out[i - 1] + out[i - 2])
    return np.stack(out)


def nested_append(x, n):
    cells = []
    for i in range(n):
        for j in range(i):
            cells.append(x * (i + j))
    return np.stack(cells) if cells else x[None] * 0


def rows_of_python_lists(x, n):
    rows = []
    for i in range(n):
        row = []
        for j in range(3):
            row.append(x * i + j)
        rows.append(np.stack(row))
    return np.stack(rows)


def two_lists(x, n):
    evens, odds = [x], [x]
    for i in range(n):
        if i % 2 == 0:
            evens.append(x * i)
        else:
            odds.append(x * i)
    return np.stack(evens).sum(0) - np.stack(odds).sum(0)


def stack_axis(x, n):
    out = []
    for i in range(n):
        out.append(x + i)
    return np.stack(out, axis=1)


def as_array(x, n):
    out = [x]
    for i in range(n):
        out.append(x * i)
    return np.array(out)


def concatenated(x, n):
    out = [x]
    for i in range(n):
        out.append(x[:1] * i)
    return np.concatenate(out)


def iterate_after(x, n):
    out = []
    for i in range(n):
        out.append(x * i)
    total = x * 0
    for v in out:
        total = total + v * v
    return total


def index_after(x, n):
    out = [x]
    for i in range(n):
        out.append(x + i)
    return out[0] + out[-1] + out[len(out) // 2]


def truth_after(x, n):
    out = []
    for i in range(n):
        out.append(x * i)
    return np.stack(out).sum(0) if out else x


def len_after(x, n):
    out = []
    for i in range(n):
        if i % 3 != 0:
            out.append(x)
    return len(out)


def slice_after(x, n):
    out = [x]
    for i in range(n):
        out.append(x * i)
    return out[1:]


def helper_builds(x, n):
    return np.stack(_collect(x, n)).sum(0) + len(_collect(x, n))


def _collect(x, n):
    got = [x]
    for k in range(n):
        got.append(x - k)
    return got


# -- pop / insert / item writes ----------------------------------------------------------------

def pop_last(x, n):
    out = [x, x * 2]
    acc = x * 0
    for i in range(n):
        out.append(x * i)
        v = out.pop()
        acc = acc + v
    return np.stack(out), acc


def pop_front(x, n):
    queue = [x, x + 1]
    acc = x * 0
    for i in range(n):
        queue.append(x * i)
        acc = acc + queue.pop(0)
    return acc, np.stack(queue)


def pop_statement(x, n):
    out = [x, x, x]
    for i in range(n):
        out.append(x * i)
        out.pop(1)
    return np.stack(out)


def pop_negative(x, n):
    out = [x, x * 2]
    for i in range(n):
        out.append(x + i)
        v = out.pop(-2)
        out[0] = out[0] + v
    return np.stack(out)


def pop_tensor_index(x, n):
    out = [x, x * 2, x * 3]
    for i in range(n):
        out.append(x + i)
        v = out.pop(i % 2)
        out.append(v * 0.5)
    return np.stack(out)


def stack_machine(x, n):
    stack = [x]
    for i in range(n):
        if i % 3 == 2:
            a = stack.pop()
            b = stack.pop()
            stack.append(a * b)
        else:
            stack.append(x + i)
    return np.stack(stack)


def insert_front(x, n):
    out = []
    for i in range(n):
        out.insert(0, x * i)
    return np.stack(out) if out else x[None]


def insert_middle(x, n):
    out = [x, x]
    for i in range(n):
        out.insert(1, x + i)
    return np.stack(out)


def insert_clamped(x, n):
    out = [x]
    for i in range(n):
        out.insert(100, x * i)
        out.insert(-100, x - i)
    return np.stack(out)


def setitem_in_loop(x, n):
    out = [x, x]
    for i in range(n):
        out.append(x * i)
        out[0] = out[0] + out[-1]
    return np.stack(out)


def read_write_loop(x, n):
    out = [x, x]
    for i in range(2, n):
        out.append(out[i - 1] + out[i - 2])
        out[i - 2] = -out[i - 2]
    return np.stack(out)


def augmented_item(x, n):
    out = [x, x * 2]
    for i in range(n):
        out.append(x * 1.0)   # (a new array: `+=` below changes it in place, not x)
        out[1] *= 1.5
        out[-1] += i
    return np.stack(out)


def running_max(x, n):
    best = [x]
    for i in range(n):
        cand = np.sin(x * i)
        if np.sum(cand) > np.sum(best[-1]):
            best.append(cand)
    return np.stack(best)


def reverse_by_pops(x, n):
    src = []
    for i in range(n):
        src.append(x * i)
    out = [x]
    while len(src) > 0:
        out.append(src.pop())
    return np.stack(out)


# -- branches ----------------------------------------------------------------------------------

def append_under_if(x, n):
    out = []
    if np.sum(x) > n:
        out.append(x)
    return out


def append_in_else(x, n):
    out = [x]
    if np.sum(x) > n:
        y = x * 2
    else:
        out.append(x * 3)
        y = x
    return np.stack(out).sum(0) + y


def pop_under_if(x, n):
    out = [x, x * 2, x * 3]
    if np.sum(x) > n:
        out.pop()
    return np.stack(out)


def branch_in_loop(x, n):
    out = [x]
    for i in range(n):
        if i % 2 == 0:
            out.append(x * i)
        else:
            out.extend([x, x * i])
    return np.stack(out)


def both_branches(x, n):
    out = []
    for i in range(n):
        if np.sum(x) * i > 3:
            out.append(x)
        else:
            out.append(-x)
    return out


# -- jumps ---------------------------------------------------------------------------------------

def break_after_append(x, n):
    out = []
    for i in range(n):
        out.append(x * i)
        if i >= 3:
            break
    return np.stack(out) if out else x[None]


def break_before_append(x, n):
    out = [x]
    for i in range(n):
        if np.sum(out[-1]) > 10:
            break
        out.append(out[-1] * 2)
    return np.stack(out)


def continue_skip(x, n):
    out = [x]
    for i in range(n):
        if i % 3 == 0:
            continue
        out.append(x + i)
    return np.stack(out)


def while_break_pop(x, n):
    out = [x, x, x]
    i = 0
    while i < n:
        i += 1
        if len(out) == 1:
            break
        out.pop()
    return np.stack(out), i


def return_inside(x, n):
    seen = []
    for i in range(n):
        seen.append(x * i)
        if i == 3:
            return np.stack(seen).sum(0)
    return -np.stack(seen).sum(0) if seen else x


def return_list_inside(x, n):
    seen = [x]
    for i in range(n):
        seen.append(x + i)
        if i == 2:
            return seen
    return seen


def for_else_list(x, n):
    out = [x]
    for i in range(n):
        out.append(x * i)
        if i > 4:
            break
    else:
        out.append(-x)
    return np.stack(out)


# -- lists of tuples and dicts -------------------------------------------------------------------

def tuples_returned(x, n):
    out = []
    for i in range(n):
        out.append((x * i, i))
    return out


def tuples_indexed(x, n):
    out = [(x, 0)]
    for i in range(n):
        prev, k = out[-1]
        out.append((prev * 0.5 + x, k + i))
    a, b = out[-1]
    return a, b, len(out)


def tuples_iterated(x, n):
    out = []
    for i in range(n):
        out.append((x, x * i))
    total = x * 0
    for a, b in out:
        total = total + a * b
    return total


def tuples_stacked(x, n):
    out = [(x, x)]
    for i in range(n):
        out.append((x * i, x + i))
    return np.stack(out)


def tuples_popped(x, n):
    out = [(x, x * 2)]
    acc = x * 0
    for i in range(n):
        out.append((x + i, x - i))
        a, b = out.pop(0)
        acc = acc + a * b
    return acc, out[-1], len(out)


def dicts_returned(x, n):
    out = []
    for i in range(n):
        out.append({"value": x * i, "step": i})
    return out


def dicts_read(x, n):
    out = [{"value": x, "step": 0}]
    for i in range(n):
        last = out[-1]
        out.append({"value": last["value"] * 0.9 + x, "step": last["step"] + 1})
    return out[-1]["value"], out[-1]["step"]


def namedtuples(x, n):
    out = []
    for i in range(n):
        out.append(Pair(x * i, x + i))
    return out


Pair = collections.namedtuple("Pair", "a b")


# -- builtins over a list, prepending, sorting by inserts -----------------------------------------

def enumerated(x, n):
    out = []
    for i in range(n):
        out.append(x * i)
    total = x * 0
    for k, v in enumerate(out):
        total = total + k * v
    return total


def zipped(x, n):
    a, b = [], []
    for i in range(n):
        a.append(x * i)
        b.append(x + i)
    total = x * 0
    for u, v in zip(a, b):
        total = total + u * v
    return total


def maximum(x, n):
    out = [np.sum(x)]
    for i in range(n):
        out.append(np.sum(np.sin(x * i)))
    return max(out), min(out)


def prepend(x, n):
    out = [x]
    for i in range(n):
        out = [x * i, x] + out
    return np.stack(out)


def two_pops_in_one_expression(x, n):
    out = [x, x * 3]
    for i in range(n):
        out.append(x * i)
        out.append(out.pop() - 2 * out.pop())
    return np.stack(out)


def insertion_sort(x, n):
    out = []
    for i in range(n):
        v = np.sin(np.sum(x) * i)
        pos = 0
        while pos < len(out) and out[pos] < v:
            pos += 1
        out.insert(pos, v)
    return np.stack(out)


def list_elements(x, n):
    out = []
    for i in range(n):
        out.append([x, x * i])
    return out


# -- ints and bools ------------------------------------------------------------------------------

def int_list(x, n):
    ks = [0]
    for i in range(n):
        ks.append(ks[-1] + i * i)
    return np.stack(ks)


def bool_list(x, n):
    flags = []
    for i in range(n):
        flags.append(np.sum(x) > i)
    return np.array(flags)


def collatz(x, n):
    seq = [n]
    while seq[-1] > 1:
        k = seq[-1]
        seq.append(k // 2 if k % 2 == 0 else 3 * k + 1)
    return len(seq), np.stack(seq).max()


def primes(x, n):
    found = []
    for k in range(2, n):
        for p in found:
            if k % p == 0:
                break
        else:
            found.append(k)
    return np.array(found)


CORPUS = [
    ("append_for", append_for, (np.array([0.3, 1.2]), 4)),
    ("append_while", append_while, (np.array([0.3, 1.2]), 5)),
    ("append_returned", append_returned, (np.array([0.3, 1.2]), 3)),
    ("append_returned_empty", append_returned, (np.array([0.3, 1.2]), 0)),
    ("extend_pairs", extend_pairs, (np.array([0.5, -1.0]), 3)),
    ("iadd_display", iadd_display, (np.array([0.5, -1.0]), 3)),
    ("concat_rebind", concat_rebind, (np.array([0.5, -1.0]), 3)),
    ("append_len_in_loop", append_len_in_loop, (np.array([0.5, 2.0]), 4)),
    ("while_on_len", while_on_len, (np.array([0.5, 2.0]), 5)),
    ("fibonacci", fibonacci, (np.array([0.5, 1.0]), 8)),
    ("nested_append", nested_append, (np.array([0.5, 1.0]), 4)),
    ("rows_of_python_lists", rows_of_python_lists, (np.array([1.0, -1.0]), 3)),
    ("two_lists", two_lists, (np.array([1.25]), 6)),
    ("stack_axis", stack_axis, (np.array([1.0, 2.0, 3.0]), 4)),
    ("as_array", as_array, (np.array([1.0, 2.0]), 3)),
    ("concatenated", concatenated, (np.array([1.0, 2.0]), 3)),
    ("iterate_after", iterate_after, (np.array([0.5, 2.0]), 4)),
    ("iterate_after_empty", iterate_after, (np.array([0.5, 2.0]), 0)),
    ("index_after", index_after, (np.array([0.5, 2.0]), 5)),
    ("truth_after", truth_after, (np.array([0.5, 2.0]), 3)),
    ("truth_after_empty", truth_after, (np.array([0.5, 2.0]), 0)),
    ("len_after", len_after, (np.array([0.5]), 7)),
    ("slice_after", slice_after, (np.array([0.5, 2.0]), 3)),
    ("helper_builds", helper_builds, (np.array([0.5, 2.0]), 3)),
    ("pop_last", pop_last, (np.array([0.5, 2.0]), 3)),
    ("pop_front", pop_front, (np.array([0.5, 2.0]), 4)),
    ("pop_statement", pop_statement, (np.array([0.5, 2.0]), 3)),
    ("pop_negative", pop_negative, (np.array([0.5, 2.0]), 3)),
    ("pop_tensor_index", pop_tensor_index, (np.array([0.5, 2.0]), 4)),
    ("stack_machine", stack_machine, (np.array([0.5, 1.5]), 7)),
    ("insert_front", insert_front, (np.array([0.5, 2.0]), 4)),
    ("insert_middle", insert_middle, (np.array([0.5, 2.0]), 3)),
    ("insert_clamped", insert_clamped, (np.array([0.5, 2.0]), 3)),
    ("setitem_in_loop", setitem_in_loop, (np.array([0.5, 2.0]), 3)),
    ("read_write_loop", read_write_loop, (np.array([1.0]), 6)),
    ("augmented_item", augmented_item, (np.array([0.5, 2.0]), 3)),
    ("running_max", running_max, (np.array([0.5, 2.0]), 6)),
    ("reverse_by_pops", reverse_by_pops, (np.array([0.5, 2.0]), 4)),
    ("append_under_if_true", append_under_if, (np.array([0.5, 2.0]), 1)),
    ("append_under_if_false", append_under_if, (np.array([0.5, 2.0]), 5)),
    ("append_in_else", append_in_else, (np.array([0.5, 2.0]), 5)),
    ("pop_under_if", pop_under_if, (np.array([0.5, 2.0]), 1)),
    ("branch_in_loop", branch_in_loop, (np.array([0.5, 2.0]), 5)),
    ("both_branches", both_branches, (np.array([0.5, 2.0]), 4)),
    ("break_after_append", break_after_append, (np.array([0.5, 2.0]), 7)),
    ("break_after_append_short", break_after_append, (np.array([0.5, 2.0]), 2)),
    ("break_before_append", break_before_append, (np.array([0.5, 2.0]), 9)),
    ("continue_skip", continue_skip, (np.array([0.5, 2.0]), 7)),
    ("while_break_pop", while_break_pop, (np.array([0.5, 2.0]), 5)),
    ("return_inside", return_inside, (np.array([2.0]), 6)),
    ("return_inside_short", return_inside, (np.array([2.0]), 2)),
    ("return_list_inside", return_list_inside, (np.array([2.0]), 5)),
    ("return_list_inside_short", return_list_inside, (np.array([2.0]), 1)),
    ("for_else_list", for_else_list, (np.array([2.0]), 3)),
    ("for_else_list_break", for_else_list, (np.array([2.0]), 8)),
    ("tuples_returned", tuples_returned, (np.array([0.5, 2.0]), 3)),
    ("tuples_indexed", tuples_indexed, (np.array([0.5, 2.0]), 4)),
    ("tuples_iterated", tuples_iterated, (np.array([0.5, 2.0]), 4)),
    ("tuples_stacked", tuples_stacked, (np.array([0.5, 2.0]), 3)),
    ("tuples_popped", tuples_popped, (np.array([0.5, 2.0]), 3)),
    ("dicts_returned", dicts_returned, (np.array([0.5, 2.0]), 3)),
    ("dicts_read", dicts_read, (np.array([0.5, 2.0]), 4)),
    ("namedtuples", namedtuples, (np.array([0.5, 2.0]), 3)),
    ("enumerated", enumerated, (np.array([0.5, 2.0]), 4)),
    ("zipped", zipped, (np.array([0.5, 2.0]), 4)),
    ("maximum", maximum, (np.array([0.5, 2.0]), 5)),
    ("prepend", prepend, (np.array([0.5, 2.0]), 3)),
    ("two_pops_in_one_expression", two_pops_in_one_expression, (np.array([0.5, 2.0]), 3)),
    ("insertion_sort", insertion_sort, (np.array([0.5, 2.0]), 6)),
    ("list_elements", list_elements, (np.array([0.5, 2.0]), 3)),
    ("int_list", int_list, (np.array([0.5]), 5)),
    ("bool_list", bool_list, (np.array([0.5, 2.0]), 4)),
    ("collatz", collatz, (np.array([0.5]), 27)),
    ("primes", primes, (np.array([0.5]), 30)),
]

# programs whose result's sum is smooth in x: gradients checked against central differences
DIFFERENTIABLE = ["append_for", "append_while", "extend_pairs", "iadd_display", "fibonacci",
                  "pop_last", "pop_front", "pop_negative", "pop_tensor_index", "stack_machine",
                  "insert_middle", "insert_clamped", "read_write_loop", "augmented_item",
                  "reverse_by_pops", "branch_in_loop", "tuples_iterated", "tuples_popped",
                  "dicts_read", "continue_skip", "iterate_after", "return_inside",
                  "enumerated", "zipped", "prepend", "two_pops_in_one_expression"]
