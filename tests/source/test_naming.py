from autograph.source import naming, parser


def test_new_symbols_avoid_user_globals_builtins_and_each_other():
    tree = parser.parse_str("def f(loop_body, x):\n    loop_body_1 = x\n    return len(x)").body[0]
    namer = naming.Namer.for_function(tree, {"state": 1})
    assert namer.new_symbol("loop_body") == "loop_body_2"
    assert namer.new_symbol("loop_body") == "loop_body_3"
    assert namer.new_symbol("state") == "state_1"  # a global the function could read
    assert namer.new_symbol("len") == "len_1"      # a builtin
    assert namer.new_symbol("f") == "f_1"          # the function's own name
    assert namer.new_symbol("fresh") == "fresh"
    assert namer.new_symbol("tmp", reserved_locals={"tmp"}) == "tmp_1"
