"""The users' programs, as source text, and a way to make never-seen copies of them.

First-call latency must not hit any cache (autograph's conversion cache, TensorFlow's
AutoGraph cache, JAX's jit cache), so each timed first call gets a function compiled anew
from its source text, in a new file with a new name. The file is real because converters
read a function's source with `inspect.getsource`, as they would for a user's module.
"""

import atexit
import itertools
import shutil
import tempfile
import textwrap
from pathlib import Path

_dir = None
_counter = itertools.count()


def _tmpdir():
    global _dir
    if _dir is None:
        _dir = Path(tempfile.mkdtemp(prefix="autograph-bench-"))
        atexit.register(shutil.rmtree, _dir, True)
    return _dir


def fresh_function(source, name, namespace):
    """Compile `source` (which defines `name`) into a new module-like namespace and return
    the new function object: new code object, new file name, so nothing is cached for it.

    Code objects compare equal when their contents do, whatever their file, and caches keyed
    by code (autograph's, TensorFlow's) would answer a copy; so each copy gets its own
    docstring ("copy k"), which makes its code object unequal to the others while every
    copy's file stays the same size (a copy that started k lines down would make the k-th
    first call read and parse a k-line file: a cost that grows with the run, not the program)."""
    k = next(_counter)
    path = _tmpdir() / f"bench_{name}_{k}.py"
    text = _with_docstring(textwrap.dedent(source), name, f"copy {k}")
    path.write_text(text)
    ns = dict(namespace)
    ns["__name__"] = f"bench_{name}_{k}"
    ns["__file__"] = str(path)
    exec(compile(text, str(path), "exec"), ns)
    return ns[name]


def _with_docstring(text, name, doc):
    """`text` with `doc` as the docstring of its function `name` (a one-line `def`)."""
    lines = text.splitlines(keepends=True)
    at = next(i for i, line in enumerate(lines) if line.lstrip().startswith(f"def {name}("))
    body = next(line for line in lines[at + 1:] if line.strip())
    indent = body[:len(body) - len(body.lstrip())]
    return "".join(lines[:at + 1] + [f'{indent}"""{doc}"""\n'] + lines[at + 1:])


# -- collatz: a scalar while loop with a conditional expression inside (111 steps for 27) ----

COLLATZ = """
def collatz(n):
    steps = 0
    while n != 1:
        n = n // 2 if n % 2 == 0 else 3 * n + 1
        steps += 1
    return steps
"""

# TensorFlow's AutoGraph converts the same text
COLLATZ_TF = COLLATZ

COLLATZ_JAX = """
def collatz(n):
    def cond(state):
        return state[0] != 1
    def body(state):
        n, steps = state
        n = lax.cond(n % 2 == 0, lambda m: m // 2, lambda m: 3 * m + 1, n)
        return n, steps + 1
    return lax.while_loop(cond, body, (n, jnp.zeros((), n.dtype)))[1]
"""


def collatz_hand(n):
    """The floor in Python: plain ints, no arrays at all."""
    n, steps = int(n), 0
    while n != 1:
        n = n // 2 if n % 2 == 0 else 3 * n + 1
        steps += 1
    return steps


# -- fizzbuzz: the seed's loop with an if/elif chain that prints every step -----------------

FIZZBUZZ = """
def fizzbuzz(n):
    for i in ag.range(1, n + 1):
        if i % 15 == 0:
            ag.print('fizzbuzz')
        elif i % 3 == 0:
            ag.print('fizz')
        elif i % 5 == 0:
            ag.print('buzz')
        else:
            ag.print(i)
    return n
"""

FIZZBUZZ_TF = """
def fizzbuzz(n):
    for i in tf.range(1, n + 1):
        if i % 15 == 0:
            tf.print('fizzbuzz', output_stream=sys.stdout)
        elif i % 3 == 0:
            tf.print('fizz', output_stream=sys.stdout)
        elif i % 5 == 0:
            tf.print('buzz', output_stream=sys.stdout)
        else:
            tf.print(i, output_stream=sys.stdout)
    return n
"""

FIZZBUZZ_JAX = """
def fizzbuzz(n):
    def body(i, carry):
        branch = jnp.where(i % 15 == 0, 0, jnp.where(i % 3 == 0, 1, jnp.where(i % 5 == 0, 2, 3)))
        lax.switch(branch, [lambda i: jax.debug.print('fizzbuzz'),
                            lambda i: jax.debug.print('fizz'),
                            lambda i: jax.debug.print('buzz'),
                            lambda i: jax.debug.print('{}', i)], i)
        return carry
    return lax.fori_loop(1, n + 1, body, n)
"""


def fizzbuzz_hand(n):
    for i in range(1, int(n) + 1):
        if i % 15 == 0:
            print('fizzbuzz')
        elif i % 3 == 0:
            print('fizz')
        elif i % 5 == 0:
            print('buzz')
        else:
            print(i)
    return n


# the vectorised Mandelbrot over a plain range(100) (issue 30, goal 6: a long static range
# staged, not unrolled, under jit_compile=True); `{k}` makes each copy a new function
MANDELBROT = """
def mandelbrot_{k}(c):
    z = np.zeros_like(c)
    count = np.zeros(c.shape, np.int64)
    for i in range(100):
        z = np.where(np.abs(z) <= 2.0, z * z + c, z)
        count = count + (np.abs(z) <= 2.0)
    return count
"""
