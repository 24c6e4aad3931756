"""Running a control-flow node of the eager live graph again, with its effects replayed.

The eager GradientTape's live graph runs a `cond` or `while_loop` node when it is staged.
Differentiating it later *augments* that node (autodiff/loops.py, conds.py): a loop gets a
trip counter and stacks, a `cond` exports values of its branches, as new outputs. Those
outputs have no value yet, so the node must run again. Running it again must give the same
values as the first run and must not do its effects twice: a Variable read inside the body
must see the value it saw then (the Variable may have been assigned since), an assignment
or an `ag.print` must not happen again.

So the first run of such a node keeps a *journal*: the outputs of every effectful node run
inside its branches or body, in order. A replay walks the same graphs, and an effectful node
with a journal entry gives the recorded outputs instead of running; the nodes the
augmentation added (stack pushes) are not in the journal and run. With the same inputs and
the same effect results, the replay follows the same path, so the original outputs come out
equal and the new ones are those the first run would have made.
"""

from autograph import errors
from autograph.runtime.control_flow import CONTROL_FLOW_OPS
from autograph.runtime.exec import interpreter
from autograph.runtime.ir import primitives


class Journal:
    """node id -> the outputs of each run of an effectful node inside a control-flow node;
    `cursor` (a replay's position in each list) is reset by `replaying`."""

    __slots__ = ("entries", "cursor", "replay")

    def __init__(self):
        self.entries, self.cursor, self.replay = {}, {}, False

    def replaying(self):
        self.cursor, self.replay = {}, True
        return self


def run(node, values, device, journal):
    """The outputs of control-flow `node` on `values`, recording into (or, when
    `journal.replay`, replaying from) `journal`."""
    return _eval(node, values, device, journal)


def _run(graph, args, device, journal):
    env = {id(t): a for t, a in zip(graph.inputs, args)}
    node = None
    try:
        for node in graph.nodes:
            if node.op == "Placeholder":
                continue
            outs = _eval(node, [env[id(t)] for t in node.inputs], device, journal)
            for t, v in zip(node.outputs, outs):
                env[id(t)] = v
    except Exception as exc:     # (the innermost node that raised names the user's line)
        if node is not None:
            errors.locate_run_error(exc, interpreter._root(graph).name, node.name, node.op,
                                    node.origin)
        raise
    return [env[id(t)] for t in graph.outputs]


def _eval(node, values, device, journal):
    op, attrs = node.op, node.attrs
    if op == "cond":
        branch = attrs["true_graph"] if interpreter.truth(values[0], device) \
            else attrs["false_graph"]
        return _run(branch, values[1:], device, journal)
    if op == "while_loop":
        n = len(node.outputs)
        limit = attrs["maximum_iterations"]
        if limit == "input":
            limit, values = int(device.to_host(values[-1])), values[:-1]
        loop_vars, captured = values[:n], values[n:]
        count = 0
        while (limit is None or count < limit) and interpreter.truth(
                _run(attrs["cond_graph"], loop_vars + captured, device, journal)[0], device):
            loop_vars = _run(attrs["body_graph"], loop_vars + captured, device, journal)
            count += 1
        return loop_vars
    if op in CONTROL_FLOW_OPS or not primitives.lookup(op).effectful:
        return interpreter._eval(node, values, device)
    runs = journal.entries.get(id(node))
    if journal.replay and runs is not None:
        k = journal.cursor.get(id(node), 0)
        if k >= len(runs):
            raise RuntimeError(
                f"replaying node {node.name!r} ({node.op}) of the eager tape ran it more often "
                "than the first run did: the replay took another path")
        journal.cursor[id(node)] = k + 1
        return runs[k]
    outs = interpreter._eval(node, values, device)
    if not journal.replay:
        journal.entries.setdefault(id(node), []).append(outs)
    return outs
