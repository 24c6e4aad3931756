"""Which results `ag.config.check_numerics(True)` tests, when a run that fails is run again.

Testing every operation's result (numerics.py, "full" mode) reads each result once more:
on a memory-bound loop (one add per step) that is a third of the time. Most tests are not
needed to *notice* a NaN or an infinity, only to *name* the operation that made it. So a
graph whose run can be repeated runs in "watch" mode: it tests only enough results that a
non-finite value anywhere is seen, and when one is seen (or anything raises), the same call
runs again in full mode, which stops at the first operation that made it, with its line
and iteration, exactly as before (numerics.Recheck). The saving is paid for only by a run
that fails.

A result need not be tested when it is *covered*: if it holds a NaN or an infinity, some
tested value later in the same run does too. `plan` proves that from the graph:

- `t` is covered when an operation that propagates non-finite values (PROPAGATES) reads it
  at a position where each of its values reaches the result (the same static shape: no
  broadcast away, no empty result) and that result is covered. Only IEEE facts that hold
  for every input are used: `nan + y`, `inf + y` (inf - inf = nan), `nan * y`, `inf * y`
  (inf * 0 = nan) and `inf / y` (inf / inf = nan) are never finite. `x / inf = 0`,
  `exp(-inf) = 0`, `tanh(inf) = 1`, `maximum`, comparisons, `where`, `x ** 0`, `matmul`
  (an empty contraction) can hide one, so they cover nothing;
- a branch's result is covered when the cond's result is (it is that value);
- in a loop that always ends (a counter loop, one counting down as a gradient's backward
  loop does, or one with a limit), the value a step carries to the next is covered when
  the loop's result is covered and the next step's copy is (by induction on the steps
  left: the last step's value is the loop's result). The loop's results are tested once
  after the loop when nothing covers them. A loop that may not end tests what it carries
  at every step: a NaN in its condition must not make it spin for ever;
- a value that decides how long a loop runs (any value a loop that may not end reads; the
  counter, limit and what the test reads of one that ends) is tested before the loop,
  back through moves and integer results (`settled` below);
- anything else that an operation made (not a move, numerics.untested) is tested where it
  is made, as in full mode.

Replaying is sound only when running the graph twice gives what running it once does: no
print, progress bar, random draw, assignment, dataset, or anything else with an effect
outside the run (`replayable`); TensorArrays and the gradient's tapes live inside the run.
Other graphs are compiled in full mode.
"""

from autograph.runtime.control_flow import is_effectful

ALL = None
# op -> the input positions whose non-finite values always make the result non-finite
PROPAGATES = {"Identity": ALL, "add": ALL, "subtract": ALL, "multiply": ALL, "divide": (0,),
              "true_divide": (0,), "negative": ALL, "positive": ALL, "abs": ALL}

# effectful ops whose effects stay inside one run (their lists are made by it)
_RUN_LOCAL = frozenset({
    "ta_new", "ta_write", "ta_unstack", "ta_pop", "ta_insert", "ta_nonempty",
    "read_variable", "assert", "check_bound", "jvp_zero_handle"})
_RUN_LOCAL_PREFIXES = ("ad_stack_", "ad_gl_", "ad_ckpt_")


def replayable(graph):
    """True when running `graph` again from the same arguments is sound (see above)."""
    if any(t.dtype.kind not in "biufc" for t in graph.inputs):
        return False    # (a list handle passed in would be written again)
    return _replayable_nodes(graph)


def _replayable_nodes(graph):
    for node in graph.nodes:
        op = node.op
        if op in ("cond", "while_loop"):
            if not all(_replayable_nodes(g) for g in _subgraphs(node)):
                return False
        elif is_effectful(node) and op not in _RUN_LOCAL \
                and not op.startswith(_RUN_LOCAL_PREFIXES):
            return False
    return True


def _subgraphs(node):
    from autograph.runtime.ir.graph import Graph
    return [v for v in node.attrs.values() if isinstance(v, Graph)]


class Plan:
    """`untested`: ids of results made by operations that need no test (covered);
    `after`: id(while_loop node) -> the positions of its results tested after it."""

    def __init__(self, graph, needs_no_test, terminates):
        self.needs_no_test, self.terminates = needs_no_test, terminates
        self.untested, self.after = set(), {}
        self.consts = {}      # id(tensor) -> its constant value (terminates reads them)
        self.graph(graph, [False] * len(graph.outputs))

    def graph(self, g, outputs_covered):
        """Plan `g` whose k-th output is covered from outside when outputs_covered[k].
        Returns (covered, settled): the ids of the tensors of `g` that are covered, and of
        those that must be seen finite before a loop reads them (below)."""
        covered = {id(t) for t, c in zip(g.outputs, outputs_covered) if c}
        # A loop reads its inputs at every step: one made non-finite and covered only by a
        # test after the loop could make the loop spin for ever (`while y < x` with x =
        # inf), or count to a garbage limit. So the values a loop reads are *settled*: the
        # operations that made them are tested where they run, back through the moves
        # and the integer or boolean results that carry them.
        settled = set()
        for node in g.nodes:
            if node.op == "Const":
                self.consts[id(node.outputs[0])] = node.attrs["value"]
            for sub in _subgraphs(node):     # a subgraph's inputs: the node's, in order
                for t, o in zip(sub.inputs, _operands(node)):
                    if id(o) in self.consts:
                        self.consts[id(t)] = self.consts[id(o)]
        for node in reversed(g.nodes):
            op = node.op
            if op == "cond":
                flags = [id(o) in covered for o in node.outputs]
                for branch in _subgraphs(node):
                    _, inner = self.graph(branch, flags)
                    settled.update(id(o) for t, o in zip(branch.inputs, _operands(node))
                                   if id(t) in inner)
            elif op == "while_loop":
                ends = self.loop(node, covered)
                settled.update(id(t) for t in (_control_inputs(node) if ends else node.inputs))
                continue
            elif not self.needs_no_test(node):
                for t in node.outputs:
                    if t.dtype.kind in "fc":
                        if id(t) in covered and id(t) not in settled:
                            self.untested.add(id(t))
                        else:
                            covered.add(id(t))      # tested where it is made
                if any(id(t) in settled and t.dtype.kind not in "fc" for t in node.outputs):
                    settled.update(id(t) for t in node.inputs)   # (an index from a NaN)
            elif any(id(t) in settled for t in node.outputs):
                settled.update(id(t) for t in node.inputs)       # a move: its inputs
            if len(node.outputs) == 1 and id(node.outputs[0]) in covered:
                self.propagate(node, covered)
        return covered, settled

    def propagate(self, node, covered):
        positions = PROPAGATES.get(node.op, ())
        if positions == () or node.attrs:
            return
        out = node.outputs[0]
        if out.dtype.kind not in "fc" or not _static(out.shape):
            return
        for p, t in enumerate(node.inputs):
            if (positions is ALL or p in positions) and t.dtype.kind in "fc" \
                    and t.shape == out.shape:
                covered.add(id(t))

    def loop(self, node, covered):
        n = len(node.outputs)
        cond_graph, body = node.attrs["cond_graph"], node.attrs["body_graph"]
        self.graph(cond_graph, [False])
        floats = [t.dtype.kind in "fc" for t in node.outputs]
        ends = self.terminates(node, self.consts)
        carried = list(floats) if ends else [False] * n
        while True:     # the carried values whose next copy is covered too (shrinks)
            saved = (set(self.untested), dict(self.after))
            inner, settled = self.graph(body, carried + [False] * (len(body.outputs) - n))
            kept = [c and id(body.inputs[k]) in inner and id(body.inputs[k]) not in settled
                    for k, c in enumerate(carried)]
            if kept == carried:
                break
            (self.untested, self.after), carried = saved, kept
        after = [k for k in range(n) if carried[k] and id(node.outputs[k]) not in covered]
        if after:
            self.after[id(node)] = after
        covered.update(id(node.outputs[k]) for k in range(n) if carried[k])
        return ends


def _control_inputs(node):
    """The inputs of a while_loop node that ends (Plan.loop) which decide how many times it
    runs: those its test reads (the counter, the limit, what the limit is computed from)
    and a limit input. Its other inputs cannot make it spin."""
    cond_graph = node.attrs["cond_graph"]
    read = {id(t) for nd in cond_graph.nodes for t in nd.inputs}
    read.add(id(cond_graph.outputs[0]))
    return [o for t, o in zip(cond_graph.inputs, node.inputs) if id(t) in read] + \
        list(node.inputs[len(cond_graph.inputs):])


def counts_down(node, consts):
    """True for a while_loop `j > c` (or `>=`) whose body's next j is `j - k`, k > 0 a
    constant and c loop-invariant: a gradient's backward loop. It ends (codegen's
    _counter_loop recognises the loops counting up)."""
    n = len(node.outputs)
    cond_graph, body = node.attrs["cond_graph"], node.attrs["body_graph"]
    test = cond_graph.outputs[0].node
    if test.op not in ("greater", "greater_equal") or test.attrs or len(test.inputs) != 2:
        return False
    counter, limit = test.inputs
    k = next((j for j, t in enumerate(cond_graph.inputs[:n]) if t is counter), None)
    if k is None or counter.dtype.kind not in "iu" or limit is counter:
        return False
    if limit.node.op != "Const":      # else a captured value or a variable left unchanged
        j = next((j for j, t in enumerate(cond_graph.inputs) if t is limit), None)
        if j is None or (j < n and body.outputs[j] is not body.inputs[j]):
            return False
    step = body.outputs[k].node
    if step.op != "subtract" or step.attrs or step.inputs[0] is not body.inputs[k]:
        return False
    by = step.inputs[1]
    value = by.node.attrs["value"] if by.node.op == "Const" else None
    if value is None:
        j = next((j for j, t in enumerate(body.inputs) if t is by), None)
        value = consts.get(id(node.inputs[j])) if j is not None and j >= n else None
    return value is not None and getattr(value, "ndim", 0) == 0 and value > 0


def _operands(node):
    """The outer tensors a cond's branches or a loop's graphs receive, in order."""
    return node.inputs[1:] if node.op == "cond" else node.inputs


def _static(shape):
    return shape is not None and all(isinstance(d, int) for d in shape)
