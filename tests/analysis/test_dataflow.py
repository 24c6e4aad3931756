"""Liveness and reaching definitions, exact sets on small functions."""

from autograph.source import anno

from tests.analysis.helpers import analyzed, names, stmt

S = anno.Static


def live(fn, line, nth=0):
    node = stmt(fn, line, nth)
    return names(node, S.LIVE_VARS_IN), names(node, S.LIVE_VARS_OUT)


def defined(fn, line, nth=0):
    node = stmt(fn, line, nth)
    return names(node, S.DEFINED_VARS_IN), names(node, S.MAYBE_DEFINED_VARS_IN)


COLLATZ = """
    def collatz(n):
        steps = 0
        while n != 1:
            n = n // 2 if n % 2 == 0 else 3 * n + 1
            steps += 1
        return steps
    """


def test_collatz_liveness():
    fn, _ = analyzed(COLLATZ)
    assert live(fn, "steps = 0") == ({"n"}, {"n", "steps"})
    assert live(fn, "while n != 1:") == ({"n", "steps"}, {"steps"})
    assert live(fn, "n = n // 2 if n % 2 == 0 else 3 * n + 1") == ({"n", "steps"}, {"n", "steps"})
    assert live(fn, "steps += 1") == ({"n", "steps"}, {"n", "steps"})
    assert live(fn, "return steps") == ({"steps"}, set())


def test_collatz_reaching_definitions():
    fn, _ = analyzed(COLLATZ)
    assert defined(fn, "steps = 0") == ({"n"}, {"n"})
    assert defined(fn, "while n != 1:") == ({"n", "steps"}, {"n", "steps"})
    assert defined(fn, "return steps") == ({"n", "steps"}, {"n", "steps"})


def test_if_defines_on_one_branch_only():
    fn, _ = analyzed("""
        def f(x):
            if x > 0:
                y = x
                z = 1
            else:
                z = 2
            return y + z
        """)
    assert defined(fn, "return y + z") == ({"x", "z"}, {"x", "y", "z"})
    assert live(fn, "if x > 0:") == ({"x", "y"}, {"y", "z"})
    assert live(fn, "z = 2") == ({"y"}, {"y", "z"})


def test_break_continue_liveness_and_definitions():
    fn, _ = analyzed("""
        def f(i, n):
            acc = 0
            while i < n:
                i += 1
                if i % 3 == 0:
                    continue
                if acc > 100:
                    last = i
                    break
                acc += i
            return acc
        """)
    assert live(fn, "while i < n:") == ({"i", "n", "acc"}, {"acc"})
    assert live(fn, "continue") == ({"i", "n", "acc"}, {"i", "n", "acc"})
    assert live(fn, "break") == ({"acc"}, {"acc"})
    assert live(fn, "last = i") == ({"acc", "i"}, {"acc"})
    assert live(fn, "if acc > 100:") == ({"acc", "i", "n"}, {"acc", "i", "n"})
    assert defined(fn, "return acc") == ({"i", "n", "acc"}, {"i", "n", "acc", "last"})
    assert defined(fn, "break") == ({"i", "n", "acc", "last"}, {"i", "n", "acc", "last"})


def test_return_in_branch():
    fn, _ = analyzed("""
        def f(x):
            if x:
                y = 1
                return y
            w = 2
            return x + w
        """)
    assert live(fn, "if x:") == ({"x"}, {"x"})
    assert live(fn, "return y") == ({"y"}, set())
    assert defined(fn, "w = 2") == ({"x"}, {"x"})


def test_try_finally():
    fn, _ = analyzed("""
        def f(x):
            try:
                y = g(x)
            finally:
                z = 1
            return y + z
        """)
    # the finally runs on the normal path and when g raises: y is defined on only one
    assert defined(fn, "z = 1") == ({"x"}, {"x", "y"})
    assert defined(fn, "return y + z") == ({"x", "z"}, {"x", "y", "z"})
    # y is live on entry: if g raises, the finally runs with y unbound, and the model (one
    # copy of the finally block for every way in) lets it continue to `return y + z`
    assert live(fn, "try:") == ({"g", "x", "y"}, {"y", "z"})
    assert live(fn, "z = 1") == ({"y"}, {"y", "z"})


def test_nested_function_sees_outer_definitions():
    fn, _ = analyzed("""
        def f(x):
            a = 1
            def inner(y):
                b = y + a
                return inner
            if x:
                c = 3
            return inner(a)
        """)
    assert defined(fn, "b = y + a") == ({"a", "x", "y", "inner"}, {"a", "x", "y", "inner"})
    assert live(fn, "def inner(y):") == ({"a", "x"}, {"a", "inner", "x"})
    assert live(fn, "b = y + a") == ({"a", "y", "inner"}, {"inner"})
    assert defined(fn, "return inner(a)") == ({"a", "x", "inner"}, {"a", "x", "inner", "c"})


def test_attribute_writes_and_del():
    fn, _ = analyzed("""
        def f(o):
            o.v = 1
            t = o.v
            del o
            return t
        """)
    assert live(fn, "o.v = 1") == ({"o"}, {"o", "o.v"})
    assert live(fn, "t = o.v") == ({"o", "o.v"}, {"o", "t"})  # `del o` needs o bound
    assert defined(fn, "t = o.v") == ({"o", "o.v"}, {"o", "o.v"})
    assert defined(fn, "return t") == ({"t"}, {"t"})


def test_match_capture_names_are_defined_in_the_case_body():
    fn, _ = analyzed("""
        def f(cmd):
            match cmd:
                case ("go", where):
                    out = where
                case _:
                    out = None
            return out
        """)
    assert defined(fn, "out = where") == ({"cmd", "where"}, {"cmd", "where"})
    assert defined(fn, "return out") == ({"cmd"}, {"cmd", "out", "where"})
    assert live(fn, "out = where") == ({"where"}, {"out"})


def test_for_target_is_not_defined_after_an_empty_loop():
    fn, _ = analyzed("""
        def f(xs):
            for x in xs:
                pass
            return x
        """)
    assert defined(fn, "pass") == ({"xs", "x"}, {"xs", "x"})
    assert defined(fn, "return x") == ({"xs"}, {"xs", "x"})
    assert live(fn, "for x in xs:") == ({"x", "xs"}, {"x"})


def test_except_as_name_is_unbound_after_the_handler():
    fn, _ = analyzed("""
        def f(x):
            try:
                x = 1 // x
            except ZeroDivisionError as err:
                msg = err
            return x
        """)
    assert defined(fn, "msg = err") == ({"err", "x"}, {"err", "x"})
    assert defined(fn, "return x") == ({"x"}, {"msg", "x"})


def test_annotation_without_value_defines_nothing():
    fn, _ = analyzed("""
        def f(flag):
            total: int
            if flag:
                total: int = 1
            return total
        """)
    assert defined(fn, "return total") == ({"flag"}, {"flag", "total"})
    assert live(fn, "total: int") == ({"flag", "total"}, {"flag", "total"})


def test_variables_read_by_closures_stay_live():
    fn, _ = analyzed("""
        def f(x):
            g = lambda: a
            if x > 0:
                a = 1
            else:
                a = 2
            return g()
        """)
    # g is called after the if, and calling g reads a
    assert live(fn, "if x > 0:") == ({"a", "g", "x"}, {"a", "g"})
    assert live(fn, "return g()") == ({"a", "g"}, set())


def test_a_lambda_used_on_the_spot_does_not_keep_its_variables_live():
    fn, _ = analyzed("""
        def f(xs, n):
            i = 0
            while i < n:
                v = xs[i]
                check(v >= 0, lambda: v)
                i += 1
            return i
        """)
    assert live(fn, "while i < n:") == ({"check", "i", "n", "xs", "xs[i]"}, {"i"})


def test_what_a_handler_reads_is_live_before_a_statement_that_may_raise():
    fn, _ = analyzed("""
        def f(x):
            a = 0
            try:
                a = 1 // x
            except ZeroDivisionError:
                return a
            return -a
        """)
    # `a = 1 // x` raises before writing a: the handler reads the old a
    assert live(fn, "a = 1 // x") == ({"a", "x", "ZeroDivisionError"}, {"a", "ZeroDivisionError"})
