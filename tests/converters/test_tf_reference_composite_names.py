"""TensorFlow AutoGraph's `composite_names_in_control_flow_test`, ported to NumPy (issue 31).

Items of dicts (and lists) read and written in `if`s and loops are names like any other.
Every case is checked against the same function run as plain Python: converted on Python
values, and traced by ag.function with NumPy arguments (its `if`s and loops staged). The list
cases live in test_tf_list_reference.py.

Where TF refuses a case, we say what we do instead:
- an item bound on one branch only (`if_imbalanced` & co.): TF raises "'x['b']' must also be
  initialized in the else branch"; here a dict item written on one branch of a tensor `if`
  refuses the same way (StagingError naming the item, the branch and the `if`'s file:line:
  Python's answer depends on the run-time value, which a dict of fixed keys cannot hold) -- and
  gives Python's answer where the condition is a Python value.
- a loop that creates an item (`while_imbalanced`, `for_imbalanced`): Python's answer where
  the loop runs (as TF); where a staged loop runs zero times Python leaves the item missing,
  which a graph cannot do only sometimes, so we raise UnboundLocalError naming the item and the
  loop's file:line (TF: "loop must iterate at least once to initialize y['a']"). A body that
  asks whether the item exists (`in`) is refused when traced (its first iteration differs).
- the buggy programs (`x['b']['a'] = ...` with no `x['b']`) raise KeyError 'b', as Python does.
"""

import itertools

import numpy as np
import pytest

import autograph as ag
from autograph import api
from autograph.errors import StagingError
from tests.converters.test_list_corpus import same


def _agree(fn, *args):
    """fn's Python answer, converted on the same values and traced by ag.function."""
    want = fn(*args)
    same(api.to_graph(fn)(*args), want)
    same(ag.function(fn)(*args), want)
    return want


def if_basic_dict(a):
    x = {"a": a}
    if x["a"] > 0:
        x["b"] = 1
    else:
        x["b"] = -1
    return x


def if_imbalanced(a):
    x = {"a": a}
    if x["a"] > 0:
        x["b"] = 1
    return x


def else_imbalanced(a):
    x = {"a": a}
    if x["a"] > 0:
        pass
    else:
        x["b"] = 1
    return x


def if_imbalanced_nested(a):
    x = {"a": {"a": a}}
    if x["a"]["a"] > 0:
        x["a"]["b"] = 1
    return x


def else_imbalanced_nested(a):
    x = {"a": {"a": a}}
    if x["a"]["a"] > 0:
        pass
    else:
        x["a"]["b"] = 1
    return x


def if_buggy(a):
    x = {"a": {"a": a}}
    if x["a"]["a"] > 0:
        x["b"]["a"] = 1
    else:
        x["b"]["a"] = -1
    return x


def if_imbalanced_buggy(a):
    x = {"a": {"a": a}}
    if x["a"]["a"] > 0:
        x["b"]["a"] = 1
    return x


def while_basic_dict(x, a, b):
    y = {"a": a, "b": b}
    while x > 0:
        x -= 1
        y["a"] += 1
    return y


def while_state_only_dict(a, b):
    y = {"a": a, "b": b}
    while y["b"] <= 10:
        y["a"] += 1
        y["b"] *= 2
    return y


def while_imbalanced(b):
    y = {"b": b}
    while y["b"] <= 10:
        y["a"] = y["b"] + 1
        y["b"] *= 2
    return y


def for_basic_dict(n, x, a, b):
    y = {"a": a, "b": b}
    for i in range(n):
        x -= 1
        y["a"] += i
    return y


def for_state_only_dict(n, a, b):
    y = {"a": a, "b": b}
    for _ in range(n):
        y["a"] += 1
    return y


def for_imbalanced(n, x):
    y = {}
    for i in range(n):
        x -= i
        y["a"] = x
    return y


_KINDS = (bool, np.int64)


@pytest.mark.parametrize("a,kind", list(itertools.product((0, 1), _KINDS)))
def test_if_basic(a, kind):
    _agree(if_basic_dict, kind(a))


# (TF names the branch that lacks the item "else" or "main"; we say "else" or "if")
IMBALANCED = [(if_imbalanced, "x['b']", "else"), (else_imbalanced, "x['b']", "if"),
              (if_imbalanced_nested, "x['a']['b']", "else"),
              (else_imbalanced_nested, "x['a']['b']", "if")]


@pytest.mark.parametrize("fn", [c[0] for c in IMBALANCED])
@pytest.mark.parametrize("a", (0, 1))
def test_if_imbalanced_legal(fn, a):
    # a Python condition: the `if` runs as Python's
    _agree(fn, a)


@pytest.mark.parametrize("fn,item,branch", IMBALANCED)
@pytest.mark.parametrize("a", (0, 1))
def test_if_imbalanced_on_a_tensor_refuses_naming_the_item(fn, item, branch, a):
    # TF: "'x['b']' must also be initialized in the else branch"; so do we
    with pytest.raises(StagingError) as info:
        ag.function(fn)(np.int64(a))
    message = str(info.value)
    assert f"'{item}'" in message, message
    assert f"not after its {branch}" in message, message
    assert f"{__file__}:{fn.__code__.co_firstlineno + 2}" in message, message   # the `if`


@pytest.mark.parametrize("fn", [if_buggy, if_imbalanced_buggy])
@pytest.mark.parametrize("a,kind", [(1, int), (1, np.int64), (0, np.int64)])
def test_if_buggy_raises_key_error(fn, a, kind):
    # as in TF, a tensor condition traces the branch that reads the missing key: KeyError
    # even where Python skips it (if_imbalanced_buggy(0) is {'a': {'a': 0}} in Python)
    if fn is if_buggy or a == 1:
        with pytest.raises(KeyError, match="'b'"):
            fn(kind(a))
    with pytest.raises(KeyError, match="'b'"):
        ag.function(fn)(kind(a))


@pytest.mark.parametrize("x,kind,a", list(itertools.product((0, 1, 2), _KINDS, (3, 7))))
def test_while_basic(x, kind, a):
    _agree(while_basic_dict, kind(x), a, 0)


@pytest.mark.parametrize("kind,b", list(itertools.product(_KINDS, (3, 4, 5, 6))))
def test_while_state_only(kind, b):
    _agree(while_state_only_dict, 0, kind(b))


def _refuses_a_missing_item(fn, *args):
    # TF: InvalidArgumentError "loop must iterate at least once to initialize y['a']"
    with pytest.raises(UnboundLocalError) as info:
        ag.function(fn)(*args)
    assert "'y['a']' is first created inside the" in str(info.value)
    assert f"{__file__}:" in str(info.value)


@pytest.mark.parametrize("b,kind", list(itertools.product((5, 10, 11), (int, np.int64))))
def test_while_imbalanced(b, kind):
    if b == 11 and kind is np.int64:   # the loop never runs: Python leaves y['a'] missing
        assert while_imbalanced(b) == {"b": 11}
        _refuses_a_missing_item(while_imbalanced, kind(b))
        return
    _agree(while_imbalanced, kind(b))


@pytest.mark.parametrize("n,kind", list(itertools.product((0, 1, 2), _KINDS)))
def test_for_basic(n, kind):
    _agree(for_basic_dict, kind(n), 1, 1, 1)


@pytest.mark.parametrize("n,kind", list(itertools.product((0, 1, 2), _KINDS)))
def test_for_state_only(n, kind):
    _agree(for_state_only_dict, kind(n), 1, 1)


@pytest.mark.parametrize("n,kind", list(itertools.product((0, 1, 2), (int, np.int64))))
def test_for_imbalanced(n, kind):
    if n == 0 and kind is np.int64:   # the loop never runs: Python gives {}
        assert for_imbalanced(0, 0) == {}
        _refuses_a_missing_item(for_imbalanced, kind(n), 0)
        return
    _agree(for_imbalanced, kind(n), 0)


# -- the class: items and attributes a staged loop creates --------------------------------

class _Box:
    pass


def attribute_made_in_loop(n):
    box = _Box()
    for i in range(n):
        box.last = i * 2
    return box.last


def item_made_in_while(n):
    d = {"k": n}
    while d["k"] > 0:
        d["k"] -= 1
        d["seen"] = d["k"] * 10
    return d


def item_counted_with_in(n):
    d = {}
    for i in range(n):
        if "c" in d:
            d["c"] = d["c"] + i
        else:
            d["c"] = i
    return d


def item_scaled_by_presence(n, x):
    y = {}
    for _ in range(n):
        y["a"] = x * (2 if "a" in y else 3)   # the same operations, another constant
    return y


def item_from_itself_or_x(n, x):
    y = {}
    for _ in range(n):
        y["a"] = (y["a"] if "a" in y else x) + 1   # the same operations, another input
    return y


def item_got_or_x(n, x):
    y = {}
    for _ in range(n):
        y["a"] = y.get("a", x)   # no operation at all, another value
    return y


def two_items_made(n, x):
    y = {}
    for i in range(n):
        y["a"] = x + i
        y["b"] = y["a"] * 2
    return y


@pytest.mark.parametrize("fn", [item_scaled_by_presence, item_from_itself_or_x, item_got_or_x])
def test_a_body_whose_values_depend_on_whether_the_item_exists_is_refused(fn):
    with pytest.raises(StagingError, match=r"'y\['a'\]' is first created inside the `for` loop"):
        ag.function(fn)(np.int64(3), np.float64(1.5))


@pytest.mark.parametrize("n", (1, 3))
def test_two_items_made_in_a_loop(n):
    same(ag.function(two_items_made)(np.int64(n), np.float64(1.5)), two_items_made(n, 1.5))


def test_an_attribute_made_in_a_loop():
    fn = ag.function(attribute_made_in_loop)
    assert fn(np.int64(3)) == attribute_made_in_loop(3)
    with pytest.raises(UnboundLocalError, match=r"'box.last' is first created inside the `for`"):
        fn(np.int64(0))


@pytest.mark.parametrize("n", (1, 2, 4))
def test_an_item_made_in_a_while(n):
    same(ag.function(item_made_in_while)(np.int64(n)), item_made_in_while(n))


def test_a_body_that_asks_whether_the_item_exists_is_refused():
    # its first iteration differs from the rest: refused, naming the item and the loop
    assert item_counted_with_in(3) == {"c": 3}
    with pytest.raises(StagingError, match=r"'d\['c'\]' is first created inside the `for` loop"):
        ag.function(item_counted_with_in)(np.int64(3))


def item_made_squared(x, n):
    y = {}
    for i in range(n):
        y["a"] = x * x + i
    return y["a"]


def test_the_gradient_flows_through_an_item_made_in_a_loop():
    x, eps = 1.5, 1e-6
    want = (item_made_squared(x + eps, 3) - item_made_squared(x - eps, 3)) / (2 * eps)
    np.testing.assert_allclose(ag.grad(item_made_squared)(np.float64(x), np.int64(3)), want,
                               rtol=1e-6)
    with pytest.raises(UnboundLocalError, match=r"'y\['a'\]' is first created inside the `for`"):
        ag.grad(item_made_squared)(np.float64(x), np.int64(0))
