from autograph.source import anno
from autograph.source.qual_names import QN

from tests.analysis.helpers import analyzed, stmt

S = anno.Static


def scope(node, key=S.SCOPE):
    return anno.getanno(node, key)


def sets(sc):
    return ({str(q) for q in sc.read}, {str(q) for q in sc.modified}, {str(q) for q in sc.bound})


def test_simple_assignments_attributes_subscripts():
    fn, _ = analyzed("""
        def f(a, i):
            b = a + 1
            a.x = b
            a[i] = 2
            c[i + 1] = 3
            b += a.y
            del b
        """)
    assert sets(scope(stmt(fn, "b = a + 1"))) == ({"a"}, {"b"}, {"b"})
    assert sets(scope(stmt(fn, "a.x = b"))) == ({"a", "b"}, {"a.x"}, set())
    assert sets(scope(stmt(fn, "a[i] = 2"))) == ({"a", "i"}, {"a[i]"}, set())
    assert sets(scope(stmt(fn, "c[i + 1] = 3"))) == ({"c", "i"}, {"c"}, set())
    assert sets(scope(stmt(fn, "b += a.y"))) == ({"a", "a.y", "b"}, {"b"}, {"b"})
    d = scope(stmt(fn, "del b"))
    assert {str(q) for q in d.deleted} == {"b"} and {str(q) for q in d.modified} == {"b"}


def test_compound_statement_scopes():
    fn, _ = analyzed("""
        def f(x, n):
            while x < n:
                if x % 2:
                    y = x
                else:
                    z = -x
                for i, j in pairs(x):
                    t = i * j
                x += 1
        """)
    loop = stmt(fn, "while x < n:")
    assert sets(scope(loop, S.COND_SCOPE)) == ({"x", "n"}, set(), set())
    assert sets(scope(loop, S.BODY_SCOPE)) == (
        {"x", "i", "j", "pairs"}, {"y", "z", "i", "j", "t", "x"}, {"y", "z", "i", "j", "t", "x"})
    assert sets(scope(loop)) == ({"x", "n", "i", "j", "pairs"}, {"y", "z", "i", "j", "t", "x"},
                                 {"y", "z", "i", "j", "t", "x"})
    branch = stmt(fn, "if x % 2:")
    assert sets(scope(branch, S.BODY_SCOPE)) == ({"x"}, {"y"}, {"y"})
    assert sets(scope(branch, S.ORELSE_SCOPE)) == ({"x"}, {"z"}, {"z"})
    loop2 = stmt(fn, "for i, j in pairs(x):")
    assert sets(scope(loop2, S.ITERATE_SCOPE)) == (set(), {"i", "j"}, {"i", "j"})
    assert sets(scope(loop2, S.NODE_SCOPE)) == ({"pairs", "x"}, set(), set())
    assert sets(scope(loop2.target, S.NODE_SCOPE)) == (set(), {"i", "j"}, {"i", "j"})
    assert sets(scope(loop2, S.BODY_SCOPE)) == ({"i", "j"}, {"t"}, {"t"})


def test_function_args_and_free_variables():
    fn, _ = analyzed("""
        def f(x, *rest, k=dflt, **kw):
            def inner(y):
                nonlocal total
                global counter
                total = y + x + scale
                counter = 1
            g = lambda z: z * w
            return [v * x for v in rest if v > lim]
        """)
    args = scope(fn, S.ARGS_SCOPE)
    assert set(args.params) == {QN("x"), QN("rest"), QN("k"), QN("kw")}
    inner = stmt(fn, "def inner(y):")
    body = scope(inner, S.BODY_SCOPE)
    assert body.nonlocals == {QN("total")} and body.globals == {QN("counter")}
    assert {str(q) for q in body.free} == {"x", "scale"}
    assert {str(q) for q in body.local_names} == {"y"}
    # defining inner binds its name and reads its free variables, nothing else leaks out
    assert sets(scope(inner)) == ({"x", "scale"}, {"inner"}, {"inner"})
    assert sets(scope(stmt(fn, "g = lambda z: z * w"))) == ({"w"}, {"g"}, {"g"})
    ret = stmt(fn, "return [v * x for v in rest if v > lim]")
    assert sets(scope(ret)) == ({"x", "rest", "lim"}, set(), set())
    # defaults are read where the function is defined
    assert {"dflt"} <= {str(q) for q in scope(fn).read}


def test_try_with_and_handlers():
    fn, _ = analyzed("""
        def f(path):
            try:
                with open(path) as fh:
                    data = fh.read()
            except OSError as err:
                data = str(err)
            finally:
                done = True
        """)
    t = stmt(fn, "try:")
    assert sets(scope(t, S.BODY_SCOPE))[1] == {"fh", "data"}
    assert sets(scope(t, S.HANDLERS_SCOPE)) == ({"OSError", "err", "str"}, {"err", "data"},
                                                 {"err", "data"})
    assert sets(scope(t, S.FINALBODY_SCOPE)) == (set(), {"done"}, {"done"})
    w = stmt(fn, "with open(path) as fh:")
    assert sets(scope(w, S.NODE_SCOPE)) == ({"open", "path"}, {"fh"}, {"fh"})


def test_conditional_expression_scopes():
    fn, _ = analyzed("""
        def f(n):
            n = n // 2 if n % 2 == 0 else 3 * n + 1
        """)
    ifexp = stmt(fn, "n = n // 2 if n % 2 == 0 else 3 * n + 1").value
    assert sets(scope(ifexp, S.COND_SCOPE)) == ({"n"}, set(), set())
    assert sets(scope(ifexp, S.BODY_SCOPE)) == ({"n"}, set(), set())


def test_walrus_in_comprehension_binds_in_the_function():
    fn, _ = analyzed("""
        def f(xs):
            ys = [(last := x) for x in xs]
            return last
        """)
    assert sets(scope(stmt(fn, "ys = [(last := x) for x in xs]"))) == (
        {"xs"}, {"ys", "last"}, {"ys", "last"})
