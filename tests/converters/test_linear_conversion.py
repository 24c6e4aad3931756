"""Conversion does work linear in program length and in nesting depth: counted (Python
calls made while converting, and names probed by the Namer), never timed."""

import linecache

import autograph as ag
from autograph.analysis import cfg
from autograph.source import naming
from tests.analysis import helpers
from tests.work import calls


def _compile(lines, name):
    src = "\n".join(lines) + "\n"
    linecache.cache[name] = (len(src), None, src.splitlines(True), name)
    ns = {}
    exec(compile(src, name, "exec"), ns)
    return ns["f"]


def plain_ifs(n):
    lines = ["def f(x):", "    y = 0"]
    for i in range(n):
        lines += [f"    if x > {i}:", f"        y = y + {i}"]
    lines.append("    return y")
    return _compile(lines, f"<plain_ifs_{n}>")


def nested_ifs(depth):
    lines, ind = ["def f(x):", "    y = x"], "    "
    for d in range(depth):
        lines += [f"{ind}if x > {d}:", f"{ind}    y = y * 2"]
        ind += "    "
    lines += [f"{ind}y = y + 1", "    return y"]
    return _compile(lines, f"<nested_ifs_conv_{depth}>")


def conversion_calls(f):
    g, n = calls(lambda: ag.to_graph(f))
    return g, n


def test_long_runs_of_ifs_convert_in_linear_work():
    counts = {}
    for n in (100, 200, 400):
        f = plain_ifs(n)
        g, counts[n] = conversion_calls(f)
        assert [g(x) for x in (-1, 5, 10**6)] == [f(x) for x in (-1, 5, 10**6)]
    # doubling the program doubles the work (the namer probed n**2/2 names before)
    assert counts[400] - counts[200] <= 2.1 * (counts[200] - counts[100]), counts


def test_nesting_depth_converts_in_linear_work():
    counts = {}
    for d in (10, 20, 40):
        f = nested_ifs(d)
        g, counts[d] = conversion_calls(f)
        assert [g(x) for x in (-1, 5, 100)] == [f(x) for x in (-1, 5, 100)]
    assert counts[40] - counts[20] <= 2.1 * (counts[20] - counts[10]), counts


def test_new_symbol_probes_each_name_once():
    namer = naming.Namer(reserved_names={"if_true", "if_true_2"})
    probes = []
    original = namer.is_used
    namer.is_used = lambda name: probes.append(name) or original(name)
    names = [namer.new_symbol("if_true") for _ in range(500)]
    assert names[:3] == ["if_true_1", "if_true_3", "if_true_4"]
    assert len(set(names)) == 500 and not {"if_true", "if_true_2"} & set(names)
    assert len(probes) <= 502


def test_new_symbol_reserved_locals_do_not_use_up_a_name():
    namer = naming.Namer()
    assert namer.new_symbol("a", reserved_locals=("a",)) == "a_1"
    assert namer.new_symbol("a") == "a"          # 'a' was only excluded for that call
    assert namer.new_symbol("a") == "a_2"


def _brute_force(graph, stmt):
    inside = graph.stmt_nodes[stmt]
    return (frozenset(s for n in inside for s in n.next if s not in inside),
            frozenset(p for n in inside for p in n.prev if p not in inside))


def test_statement_edges_equal_the_edges_of_their_node_sets():
    fn, graphs = helpers.analyzed("""
        def f(x, n):
            for i in range(n):
                if i > 2:
                    try:
                        x = x + 1
                        if x > 5:
                            break
                    except ValueError as e:
                        x = e
                    finally:
                        x = x - 1
                elif i < 0:
                    continue
                else:
                    while x < 3:
                        x = x + 2
                        if x == 4:
                            return x
            with open("f") as fh:
                x = fh
            return x
    """)
    graph = graphs[fn]
    assert len(graph.stmt_span) >= 15
    for stmt in graph.stmt_span:
        assert (graph.stmt_next[stmt], graph.stmt_prev[stmt]) == _brute_force(graph, stmt)
        first, end = graph.stmt_span[stmt]
        if first < end:
            assert graph.stmt_entry(stmt) is min(graph.stmt_nodes[stmt], key=lambda n: n.index)
