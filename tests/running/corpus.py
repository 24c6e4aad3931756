"""The matrix's corpus as one module's text, and that text cut the ways contexts need it.

`corpus_text()` is the shared samples (tests/converters/samples.py), the matrix's own
programs (tests/running/programs.py: long bodies, deep nesting, methods, closures, lambdas,
wrappers) and a few programs of the differential generator, concatenated into one
self-contained module. `statements(text)` cuts it at its top-level statements (doctest
examples, notebook cells), each with its decorators.
"""

import ast
import os
import random

from benchmarks.differential.generator import generate

HERE = os.path.dirname(os.path.abspath(__file__))
SAMPLES = os.path.join(os.path.dirname(HERE), "converters", "samples.py")
PROGRAMS = os.path.join(HERE, "programs.py")
GENERATED = 6


def _read(path):
    with open(path) as f:
        return f.read()


def generated_programs(count=GENERATED, seed="matrix"):
    """(source, entry name, inputs) of `count` generated programs, entry points renamed."""
    out = []
    for i in range(count):
        program = generate(random.Random(f"{seed}:{i}"))
        name = f"generated_{i}"
        out.append((program.source.replace("def generated(", f"def {name}(", 1), name,
                    program.inputs))
    return out


def corpus_text():
    parts = [_read(SAMPLES), _read(PROGRAMS)]
    entries = []
    for source, name, inputs in generated_programs():
        parts.append(source)
        entries.append(f"    ({name!r}, {name}, {inputs!r}, (), False),\n")
    parts.append("GENERATED = [\n" + "".join(entries) + "]\n")
    return "\n\n".join(parts)


def statements(text):
    """The top-level statements of `text` as source texts (decorators included, the
    module docstrings left out), in order."""
    lines = text.splitlines(True)
    out = []
    for node in ast.parse(text).body:
        if isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant):
            continue
        first = min([node.lineno] + [d.lineno for d in getattr(node, "decorator_list", ())])
        out.append("".join(lines[first - 1:node.end_lineno]))
    return out


def cells(text, count=5):
    """`text` cut into about `count` cells at statement boundaries."""
    stmts = statements(text)
    size = -(-len(stmts) // count)
    return ["".join(stmts[i:i + size]) for i in range(0, len(stmts), size)]


# A function defined in one cell and redefined in a later one (a notebook's usual edit):
# both definitions must convert from their own cell's text.
REDEFINE_FIRST = '''
def redefined(x, n):
    while n > 0:
        x = x + 1 if x < 5 else x - 2
        n -= 1
    return x

first_redefined = redefined
CELL_CASES = [("redefined, first cell", first_redefined, [(1, 4), (7, 2)], (), True)]
'''

REDEFINE_LATER = '''
def redefined(x, n):
    for i in range(n):
        if x > 3:
            x = x * 2 - i
        else:
            x = x + i
    return x

CELL_CASES.append(("redefined, later cell", redefined, [(1, 4), (7, 2)], (), True))
'''

REPORT = '''
import tests.running.harness as _harness
_harness.report(globals())
'''
