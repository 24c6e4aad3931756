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

import functools

from autograph.runtime.exec import interpreter


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
    `journal.replay`, replaying from) `journal`: the interpreter walks its graphs, and
    each effectful node inside goes through `_effect`."""
    return interpreter._eval(node, values, device,
                             effects=functools.partial(_effect, device=device, journal=journal))


def _effect(node, values, device, journal):
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
