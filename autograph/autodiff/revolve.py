"""Where a checkpointed loop keeps its snapshots: binomial (Revolve) and online schedules.

Reversing `l` loop steps needs the state entering each step, last step first. Keeping all
`l` states costs `l` states of memory; keeping `c` snapshots and re-running the body from
the nearest one costs time instead. Griewank & Walther ("Algorithm 799: Revolve", 2000)
showed the fewest body runs ("advances") for `l` steps and `c` snapshots (the one holding
the first state included) is

    t(l, c) = r * l - beta(c + 1, r - 1),   beta(c, r) = (c + r)! / (c! r!),

with `r` the smallest integer for which beta(c, r) >= l: every step is re-run at most `r`
times. A schedule reaches it by splitting the interval at an optimal `m`, storing the state
there, reversing the right part with one snapshot fewer, then the left part (t is convex
and piecewise linear in l, so the best split is found by bisection on its slope).

`Checkpoints` is the run-time object a checkpointed loop fills and its backward loop
reads (autodiff/checkpointed.py); all decisions are here, on step indices only:
- forward, trip count known before the loop: Revolve's first sweep (the split points of
  the rightmost path of the recursion);
- forward, trip count unknown (a data-dependent `while`): online thinning, every
  `stride`-th state, the stride doubling whenever the `c` slots are full (always between
  c/2 and c snapshots, evenly spread, whatever the length turns out to be);
- backward: once the forward has stopped the length *is* known, so each restore plans
  Revolve for the interval between the nearest snapshot and the step to reverse, with the
  slots freed so far. After a Revolve forward this replays Revolve's recursion exactly.
"""


def beta(c, r):
    """C(c + r, c): the most steps `c` snapshots reverse with each step run <= r times."""
    if r < 0:
        return 0
    out = 1
    for k in range(1, r + 1):
        out = out * (c + k) // k
    return out


def repetitions(l, c):
    """The smallest r with beta(c, r) >= l (l >= 1, c >= 1)."""
    if c == 1:
        return l - 1
    r, b = 0, 1
    while b < l:
        r += 1
        b = b * (c + r) // r
    return r


def optimal_advances(l, c):
    """t(l, c): the fewest body runs (besides one taping run per step) that reverse `l`
    steps with `c` snapshots, counting the forward sweep's l - 1."""
    if l <= 1:
        return 0
    if c == 1:
        return l * (l - 1) // 2
    r = repetitions(l, c)
    return r * l - beta(c + 1, r - 1)


def split(l, c):
    """An optimal first snapshot offset m (1 <= m < l) for `l` steps, `c` >= 2 snapshots:
    minimises m + t(l - m, c - 1) + t(m, c), a convex function of m."""
    def cost(m):
        return m + optimal_advances(l - m, c - 1) + optimal_advances(m, c)
    lo, hi = 1, l - 1
    while lo < hi:                      # the first m whose right slope is >= 0
        mid = (lo + hi) // 2
        if cost(mid + 1) - cost(mid) >= 0:
            hi = mid
        else:
            lo = mid + 1
    return lo


def sweep(start, l, c):
    """The positions Revolve stores while advancing from snapshot `start` to reverse
    steps start .. start + l - 1 with `c` snapshots (the one at `start` included)."""
    out = []
    while c > 1 and l > 1:
        m = split(l, c)
        start, l, c = start + m, l - m, c - 1
        out.append(start)
    return out


class Checkpoints:
    """Up to `capacity` snapshots of a loop's state, by step index. `length`: the trip
    count when known before the loop (None: online). `offers`/`restores` count calls (the
    forward's steps plus the backward's advances, and the steps reversed). Besides the
    snapshots, the state entering the forward's last step is held until the first
    restore, as Revolve holds the state its forward sweep ends on."""

    __slots__ = ("capacity", "slots", "plan", "stride", "offers", "restores", "last")

    def __init__(self, capacity, length=None):
        if capacity < 1:
            raise ValueError(f"checkpoints must be at least 1, got {capacity}")
        self.capacity, self.slots, self.stride = capacity, {}, 1
        self.plan = None if length is None else set(sweep(0, max(length, 1), capacity))
        self.offers = self.restores = 0
        self.last = None     # the forward's latest state: Revolve's working state (see below)

    def __repr__(self):
        return f"<checkpoints: {sorted(self.slots)} of {self.capacity}>"

    def offer(self, p, state):
        """The state entering step p: kept if the schedule says so."""
        self.offers += 1
        if not self.restores:
            self.last = (p, state)
        if p in self.slots:                  # (an advance starts from a snapshot)
            return
        if p == 0 or self.plan is not None:
            if p == 0 or p in self.plan:
                self.slots[p] = state
            return
        if p % self.stride:
            return
        if len(self.slots) >= self.capacity:          # full: keep every other one
            self.stride *= 2
            self.slots = {k: v for k, v in self.slots.items() if k % self.stride == 0}
            if p % self.stride:
                return
        self.slots[p] = state

    def restore(self, i):
        """(s, state entering step s) for the nearest snapshot s <= i; frees the ones past
        i (never needed again) and plans which states the advance to i keeps."""
        self.restores += 1
        last, self.last = self.last, None
        if last is not None and last[0] == i:
            # Revolve tapes the last step with the state its forward sweep ended on: the
            # loop's own last state, held by the loop anyway (not one of the c snapshots)
            self.plan = set()
            return last
        for k in [k for k in self.slots if k > i]:
            del self.slots[k]
        if not self.slots:
            raise RuntimeError("a checkpointed loop's backward pass found no snapshot: the "
                               "forward loop did not run before its gradient")
        s = max(self.slots)
        free = self.capacity - len(self.slots)
        self.plan = set(sweep(s, i + 1 - s, free + 1))
        return s, self.slots[s]
