"""How often the changed-source check refuses a file that did not change (goal: never).

    python -m benchmarks.staleness --count 1000 --seed 0 [--json out.json]

Every program of the differential generator (benchmarks/differential/generator.py), and a
long variant of it (a 40-line loop of calls on an imported module at the top of the entry
point, so jumps need EXTENDED_ARG), is written to a file and run as a script would be
(compiled from the file, executed as `__main__`, no .pyc). Then every function and method it defines goes through
autograph.source.freshness: the full check (`check_unchanged`), and its last layer alone
(`compiles_the_same`, the one that compiles the text again: the other layers vouch for a
file older than the process or with a current .pyc, and a script written by this run is
neither). A refusal of either is a false alarm. Then each file is edited (a constant of the
entry point changed) and the last layer must refuse every edited program (`caught`).
"""

import argparse
import json
import os
import random
import sys
import tempfile
import time

from autograph import errors
from autograph.source import freshness, parser
from benchmarks.differential.generator import generate

LONG_LOOP = "    for _k in range(1):\n" + "".join(
    f"        a = (math.floor(a) + {i} * _k) % 1009\n" for i in range(40))


def long_variant(source):
    """The program with a 40-line loop at the top of `generated` (jump offsets > 255)."""
    head = "def generated(x, n, xs):\n    a = x\n"
    return "import math\n" + source.replace(head, head + LONG_LOOP, 1)


def functions_of(namespace, filename):
    out = []
    for value in list(namespace.values()):
        if isinstance(value, type):
            out += [v for v in vars(value).values() if callable(v) and hasattr(v, "__code__")]
        elif hasattr(value, "__code__"):
            out.append(value)
    return [f for f in out if f.__code__.co_filename == filename]


def run_as_script(source, path):
    with open(path, "w") as f:
        f.write(source)
    namespace = {"__name__": "__main__", "__file__": path}
    exec(compile(source, path, "exec"), namespace)
    return functions_of(namespace, path)


def check_file(source, path):
    """(functions checked, full-check refusals, last-layer refusals, edit caught or None)."""
    import linecache
    fns = run_as_script(source, path)
    linecache.checkcache(path)
    refused = recompile_refused = 0
    for fn in fns:
        node = parser._locate(fn, parser._source_lines(fn)[0])
        try:
            freshness.check_unchanged(fn, node, parser._describe)
        except errors.ConversionError:
            refused += 1
        if not freshness.compiles_the_same(fn, node):
            recompile_refused += 1
    entry = next((f for f in fns if f.__name__ == "generated"), None)
    caught = None
    edited = source.replace("    a = x\n", "    a = x + 7\n", 1)
    if entry is not None and edited != source:
        with open(path, "w") as f:
            f.write(edited)
        linecache.checkcache(path)
        node = parser._locate(entry, parser._source_lines(entry)[0])
        caught = not freshness.compiles_the_same(entry, node)
    return len(fns), refused, recompile_refused, caught


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--count", type=int, default=1000)
    ap.add_argument("--seed", default="0")
    ap.add_argument("--json")
    args = ap.parse_args(argv)
    totals = {"programs": 0, "functions": 0, "refused": 0, "refused_by_recompile": 0,
              "edits": 0, "edits_caught": 0}
    failures = []
    start = time.perf_counter()
    with tempfile.TemporaryDirectory() as tmp:
        for i in range(args.count):
            program = generate(random.Random(f"{args.seed}:{i}"))
            for kind, source in (("plain", program.source),
                                 ("long", long_variant(program.source))):
                path = os.path.join(tmp, f"prog_{i}_{kind}.py")
                n, refused, recompiled, caught = check_file(source, path)
                totals["programs"] += 1
                totals["functions"] += n
                totals["refused"] += refused
                totals["refused_by_recompile"] += recompiled
                if caught is not None:
                    totals["edits"] += 1
                    totals["edits_caught"] += caught
                if refused or recompiled or caught is False:
                    failures.append((i, kind, refused, recompiled, caught))
    totals["seconds"] = round(time.perf_counter() - start, 1)
    totals["python"] = sys.version.split()[0]
    print(json.dumps(totals, indent=1))
    for f in failures[:20]:
        print("program %d (%s): refused %d, by recompile %d, edit caught %s" % f)
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"totals": totals, "failures": failures}, f, indent=1)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
