"""What converted code calls: this module is bound to the name `ag__` in generated code.

Every operator has a plain-Python meaning first (converted code run on Python values
behaves exactly like the original) and a staged meaning when a condition or iterable is a
symbolic Tensor (it builds `cond` / `while_loop` nodes through autograph.runtime).

    if_stmt(cond, if_true, if_false, state, names)      if/else statements
    while_stmt(test, body, state, names)                 while loops
    for_stmt(iterable, body, state, names, extra_test)   for loops (extra_test: break flags)
        (each takes places=(...) when the statement writes attributes or items)
        (each takes in_try=True when the statement sits in a `try` block: it then refuses
        to stage, since Python's except cannot catch errors raised when the graph runs)
    if_exp(cond, if_true, if_false)                      a if cond else b
    and_(a, *fns), or_(a, *fns), not_(a)                 logical operators
    python_operand(a, op)                                an operand Python's own and/or keeps
    assert_stmt(cond, message_fn)                        assert
    converted_call(f, *args, **kwargs)                   calls of user code
    del_item(target, key)                                `del target[key]`
    setitem(x, key, v, op=None), ufunc_at(uf, x, key, v) `x[key] = v`, `x[key] += v`,
                                                         `np.add.at(x, key, v)`: the updated x
    Undefined(name), UndefinedReturnValue(), ld(x), ldu(lambda: x, name), retval(x)
                                                         undefined variables
    attr(obj, name, label), item(obj, key, label)        places a statement writes
    variable(lambda: x, set_x, name)                     a variable closures share (nonlocal)
    user_locals(readers)                                 locals() as the user's code sees it
    range, len, enumerate, zip, abs, int, float, bool, min, max  builtins with tensor meanings
    str_format(template, *a, **k), str_mod(template, values)   f-strings, .format and % (text
                                                         formatted from tensors is staged)
    py_print(*args, **kwargs)                            Python's print (warns on tensors)
"""

from autograph.operators.asserts import assert_stmt
from autograph.operators.calls import converted_call, del_item
from autograph.operators.control_flow import for_stmt, if_exp, if_stmt, while_stmt
from autograph.operators.formatting import any_format, py_print, str_format, str_mod
from autograph.operators.logical import and_, not_, or_, python_operand
from autograph.operators.py_builtins import (abs_ as abs, bool_ as bool, enumerate_ as enumerate,
                                              float_ as float, int_ as int, len_ as len,
                                              max_ as max, min_ as min, range_ as range,
                                              zip_ as zip)
from autograph.operators.places import attr, item, variable
from autograph.operators.updates import inplace_call, setitem, setitem_attr, ufunc_at
from autograph.operators.variables import (Undefined, UndefinedReturnValue, is_undefined, ld,
                                           ldu, retval, user_locals)

__all__ = [
    "if_stmt", "while_stmt", "for_stmt", "if_exp", "and_", "or_", "not_", "python_operand",
    "assert_stmt",
    "converted_call", "del_item", "Undefined", "UndefinedReturnValue", "ld", "ldu",
    "is_undefined", "retval", "user_locals", "attr", "item", "variable", "setitem", "ufunc_at",
    "inplace_call", "setitem_attr",
    "range", "len", "enumerate", "zip", "abs", "int", "float", "bool", "min", "max",
    "str_format", "any_format", "str_mod", "py_print",
]
