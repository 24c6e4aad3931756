"""python -m benchmarks.proposals [benchmark options]: the suite with a proposed codegen change.

The profiles of cases 3 and 4 (README) put nearly all of autograph's steady-state time in
one NumPy ufunc dispatch per node per loop iteration. The proposal, for
`autograph/runtime/codegen.py`:

1. `_Compiler.call`: for a primitive that has a Python operator and no attrs, emit the
   operator (`add = n_1 + Const_2`) instead of the kernel call (`add = k_add(n_1, Const_2)`).
   The array API defines these operators for every array namespace, and on NumPy arrays
   they call the same ufuncs; on two NumPy *scalars* they take NumPy's scalar fast path,
   ~20x cheaper than a ufunc call.
2. `_Compiler.bind` (the `Const` branch of `graph_body`): on the cpu device bind a 0-d
   constant as a NumPy scalar (`value[()]`), so loop values stay scalars: a 0-d array operand
   sends even an operator back through the slow ufunc path.

This module applies both to the loaded codegen (a monkeypatch of this process only; nothing
in the library changes) and then runs the benchmark suite with the given options, so the
effect is measured with the same harness, contenders and checks (every contender's result
is still compared with eager NumPy). Compare with a plain run: `--baseline` takes its JSON.
"""

import sys

import numpy as np

BINARY = {"add": "+", "subtract": "-", "multiply": "*", "divide": "/", "floor_divide": "//",
          "remainder": "%", "pow": "**", "equal": "==", "not_equal": "!=", "less": "<",
          "less_equal": "<=", "greater": ">", "greater_equal": ">=", "bitwise_and": "&",
          "bitwise_or": "|", "bitwise_xor": "^", "matmul": "@"}
UNARY = {"negative": "-", "positive": "+", "bitwise_invert": "~"}


def apply():
    """Patch autograph.runtime.codegen in this process (see the module docstring)."""
    from autograph.runtime import codegen

    compiler = codegen._Compiler
    original_call, original_bind = compiler.call, compiler.bind

    def call(self, node, ins, env, depth):
        op = node.op
        if not node.attrs and len(node.outputs) == 1 and op not in self.device.kernels:
            if op in BINARY and len(ins) == 2:
                out, = self.outputs(node, env)
                self.emit(depth, f"{out} = {ins[0]} {BINARY[op]} {ins[1]}")
                return
            if op in UNARY and len(ins) == 1:
                out, = self.outputs(node, env)
                self.emit(depth, f"{out} = {UNARY[op]}{ins[0]}")
                return
        return original_call(self, node, ins, env, depth)

    def bind(self, base, value):
        if self.device.name == "cpu" and isinstance(value, np.ndarray) and value.ndim == 0:
            value = value[()]
        return original_bind(self, base, value)

    compiler.call, compiler.bind = call, bind
    codegen._cache.clear()


def main(argv=None):
    apply()
    from benchmarks.__main__ import main as run
    args = list(sys.argv[1:] if argv is None else argv)
    if "--json" not in args:   # never overwrite a plain run's results
        import datetime
        stamp = datetime.datetime.now(datetime.timezone.utc).strftime("%Y%m%d-%H%M")
        args += ["--json", f"benchmarks/results/{stamp}-proposal-codegen-operators.json"]
    return run(args)


if __name__ == "__main__":
    sys.exit(main())
