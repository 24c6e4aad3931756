"""formatting decides whether `print` in a function is Python's from the function's code
object (what Python's compiler bound); the tree walk it replaced is the reference."""

import types

import pytest

from autograph.converters import formatting
from autograph.source import parser


def plain(x):
    print(x)


def local_print(x):
    print = str
    return print(x)


def param_print(x, print=None):
    return x


def nested_def(x):
    def inner(print):
        return print
    return inner(x)


def nested_lambda(x):
    return (lambda print: print)(x)


def global_print(x):
    global print
    print = repr   # noqa: F841
    return x


def class_method(x):
    class K:
        def m(self, print):
            return print
    return K


def import_as(x):
    from builtins import repr as print
    return print(x)


def cell_print(x):
    print = repr

    def inner():
        return print(x)
    return inner()


@pytest.mark.parametrize("fn", [plain, local_print, param_print, nested_def, nested_lambda,
                                global_print, class_method, import_as, cell_print])
def test_print_binding_matches_the_tree(fn):
    node, _, _ = parser.parse_entity(fn)
    with_code = types.SimpleNamespace(fn=fn, namespace={}, closure={})
    tree_only = types.SimpleNamespace(fn=None, namespace={}, closure={})
    assert formatting._print_is_builtin(node, with_code) == \
        formatting._print_is_builtin(node, tree_only)
    assert formatting._print_is_builtin(node, with_code) == (fn is plain)
