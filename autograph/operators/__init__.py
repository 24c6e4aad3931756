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
    and_(a, *fns), or_(a, *fns), not_(a), in_(x, c)     logical operators
    python_operand(a, op)                                an operand Python's own and/or keeps
    assert_stmt(cond, message_fn)                        assert
    converted_call(f, *args, **kwargs)                   calls of user code
    del_item(target, key)                                `del target[key]`
    list_append(l, v), list_extend(l, vs)                `l.append(v)`, `l.extend(vs)`,
    list_insert(l, i, v), list_iadd(l, [v, w])          `l.insert(i, v)`, `l += [v, w]` in a
    list_pop(l, i)                                       loop or `if`: the list;
                                                         `v = l.pop(i)`: (l, v)
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
    known_dim(x.shape[k])                                a static length used as an index,
                                                         slice bound or NumPy argument
"""

import importlib

from autograph.runtime.ir import tensor as _tensor


def _where(prefix=" at "):
    """autograph.operators.location.where, imported when an error first asks (its callers
    are about to raise): ' at file.py:12 (`source`)' for the user's innermost line."""
    from autograph.operators.location import where
    return where(prefix)


def _context_note(_prefix=""):
    """autograph.operators.unconverted.note, imported only when a function runs unconverted."""
    import sys
    module = sys.modules.get("autograph.operators.unconverted")
    return module.note() if module is not None else ""


def _inplace_check(target, frame, symbol):
    """autograph.operators.aliases.check_augmented, imported when user code first runs
    `x op= y` on a tensor with axes: warns when another name would see NumPy's in-place
    write (a 0-d tensor stands for an immutable scalar: `steps += 1` loads nothing)."""
    if target.shape == ():
        return
    from autograph.operators.aliases import check_augmented
    check_augmented(target, frame, symbol)


_tensor.set_locator(_where)   # errors the runtime raises about tensors name the user's line too
_tensor.set_context_note(_context_note)   # and say when that code could not be converted
_tensor.set_user_inplace_check(_inplace_check)   # `y = x; y += 1`: x would change in NumPy

# name -> (module, attribute): imported on first use, so a trace loads only the operators
# its generated code calls (collatz needs control_flow, a `for` for_loops; asserts, f-strings, item updates
# and the logical operators load when some code uses them)
_FROM = {
    "assert_stmt": ("asserts", "assert_stmt"),
    "converted_call": ("calls", "converted_call"), "del_item": ("calls", "del_item"),
    "for_stmt": ("for_loops", "for_stmt"), "if_exp": ("control_flow", "if_exp"),
    "if_stmt": ("control_flow", "if_stmt"), "while_stmt": ("control_flow", "while_stmt"),
    "any_format": ("formatting", "any_format"), "py_print": ("formatting", "py_print"),
    "str_format": ("formatting", "str_format"), "str_mod": ("formatting", "str_mod"),
    "and_": ("logical", "and_"), "not_": ("logical", "not_"), "or_": ("logical", "or_"),
    "in_": ("logical", "in_"),
    "python_operand": ("logical", "python_operand"),
    "abs": ("py_builtins", "abs_"), "bool": ("py_builtins", "bool_"),
    "enumerate": ("py_builtins", "enumerate_"), "float": ("py_builtins", "float_"),
    "int": ("py_builtins", "int_"), "len": ("py_builtins", "len_"), "max": ("py_builtins", "max_"),
    "min": ("py_builtins", "min_"), "range": ("py_builtins", "range_"), "zip": ("py_builtins", "zip_"),
    "attr": ("variables", "attr"), "item": ("variables", "item"), "variable": ("variables", "variable"),
    "list_append": ("lists", "list_append"), "list_extend": ("lists", "list_extend"),
    "list_insert": ("lists", "list_insert"), "list_pop": ("lists", "list_pop"),
    "list_iadd": ("lists", "list_iadd"),
    "inplace_call": ("updates", "inplace_call"), "setitem": ("updates", "setitem"),
    "setitem_attr": ("updates", "setitem_attr"), "ufunc_at": ("updates", "ufunc_at"),
    "Undefined": ("variables", "Undefined"),
    "UndefinedReturnValue": ("variables", "UndefinedReturnValue"),
    "is_undefined": ("variables", "is_undefined"), "ld": ("variables", "ld"),
    "ldu": ("variables", "ldu"), "retval": ("variables", "retval"),
    "user_locals": ("variables", "user_locals"),
    "known_dim": ("static_dims", "known_dim"),
}


def __getattr__(name):
    try:
        module, attr = _FROM[name]
    except KeyError:
        raise AttributeError(f"module 'autograph.operators' has no attribute {name!r}") from None
    value = getattr(importlib.import_module("autograph.operators." + module), attr)
    globals()[name] = value   # later lookups (generated code's ag__.name) find it directly
    return value


def __dir__():
    return sorted(set(globals()) | set(_FROM))


__all__ = [
    "if_stmt", "while_stmt", "for_stmt", "if_exp", "and_", "or_", "not_", "in_", "python_operand",
    "assert_stmt",
    "converted_call", "del_item", "Undefined", "UndefinedReturnValue", "ld", "ldu",
    "is_undefined", "retval", "user_locals", "attr", "item", "variable", "setitem", "ufunc_at",
    "inplace_call", "setitem_attr", "list_append", "list_extend", "list_insert", "list_pop",
    "list_iadd",
    "range", "len", "enumerate", "zip", "abs", "int", "float", "bool", "min", "max",
    "str_format", "any_format", "str_mod", "py_print", "known_dim",
]
