"""A Variable that a loop reads and nothing in it writes: its backward loop reads it once.

A loop body that reads a Variable (`h @ W` with `W = ag.Variable(...)`, the tf.function
idiom) stages a `read_variable` node in the body: reads are effects, kept in order with
assignments, so the optimiser never moves one out of a loop. The gradient of that loop
then treats the read's value as a per-iteration value: the forward loop pushes W onto a
stack every step and the backward loop reads it back and transposes it every step
(`ct @ W.T`), where a plain array argument is a capture whose transpose is hoisted.

When nothing in the loop can write a Variable (its body and condition, nested graphs
included, hold no effect but reads, prints, progress marks and the gradient's own stack
pushes), every read in it gives the value the Variable had when the loop started. The
backward pass then uses one read staged just before the forward loop (`read_before`),
captured like any outer value: no stack, and the transposes and C-ordered copies of
exec/loop_layout.py move out of the backward loop. The reads inside the body stay (the
forward loop's values are unchanged), and so do their VJP rules: the Variable's
cotangent still accumulates per step.

Only a loop in a traced function's graph (not inside another loop's body, whose gradient
would have to store the new read per outer step, nor in an eager tape's live graph, whose
nodes ran when they were made: a read added there at gradient time would see the
Variable's value then) is handled.
"""

_READ_ONLY_EFFECTS = frozenset({"read_variable", "print", "progress", "ad_stack_new",
                                "ad_stack_push", "while_loop", "cond"})


def writes_nothing(loop):
    """True when no node of `loop` (a while_loop node), in its condition, body or their
    nested graphs, is an effect other than reads, prints, progress and stack pushes."""
    from autograph.runtime.control_flow import is_effectful
    for key in ("cond_graph", "body_graph"):
        for nd in loop.attrs[key].walk():
            if nd.op not in _READ_ONLY_EFFECTS and is_effectful(nd):
                return False
    return True


def _live(graph):
    """An eager tape's live graph (autodiff/eager.py): its nodes ran when they were
    made, and one added now would read the Variable's value now, not the loop's."""
    from autograph.autodiff.eager import LiveGraph
    return isinstance(graph, LiveGraph)


def read_before(loop, read, cache):
    """A `read_variable` node like `read` (a read in `loop`'s body), staged in the loop's
    graph just before the loop (one per Variable: `cache`); None when the loop may write
    a Variable or is nested in another loop's body."""
    graph = loop.graph
    if graph.parent is not None or _live(graph) or not writes_nothing(loop):
        return None
    variable = read.attrs["variable"]()
    if variable is None:
        return None
    hit = cache.get(id(variable))
    if hit is None:
        node = graph._append("read_variable", [], dict(read.attrs),
                             [(t.dtype, t.shape, t.weak) for t in read.outputs],
                             f"{read.name}_before_loop", read.origin)
        graph.nodes.remove(node)
        graph.nodes.insert(graph.nodes.index(loop), node)
        hit = cache[id(variable)] = node.outputs[0]
    return hit
