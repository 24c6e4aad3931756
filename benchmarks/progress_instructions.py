"""What a progress bar costs, in instructions: a measure the machine's load does not move.

    python -m benchmarks.progress_instructions [--calls 4] [--only rnn_add ...]

Runs benchmarks.progress's loops under valgrind's callgrind (valgrind must be installed)
and counts the instructions of `--calls` calls of each loop without a bar, with its bar
(~100 updates a run) and with a bar updated once a run (`UPDATES = 1`): the difference of
the last two is 99 updates, the rest (bar - plain - 99 updates) the open, the close and the
test on every iteration. The phases are cut by `callgrind_control --dump` from inside the
process (`--child`), after every function was traced and compiled.

Instructions are not time: a NumPy add of 8,192 floats is few instructions and many
nanoseconds (memory), Python's interpreter many instructions at a high rate, so the
percentages here are an upper bound for loops whose steps are NumPy work. On a loaded
machine they are the reproducible part of benchmarks.progress's CPU-time figures.
"""

import argparse
import contextlib
import glob
import io
import os
import subprocess
import sys
import tempfile

PHASES = ("plain", "bar", "bar-1-update")


def child(calls, only):
    """Inside valgrind: warm every loop up, then one dump per phase."""
    sys.modules["tqdm"] = None              # (the plain line, into a stream thrown away)
    from autograph.runtime import progress
    from benchmarks import progress as timed

    def dump(label):
        subprocess.run(["callgrind_control", "--dump=" + label, str(os.getpid())],
                       capture_output=True)

    with contextlib.redirect_stderr(io.StringIO()):
        cases = [c for c in timed.cases(False) if not only or c[0] in only]
        for name, steps, without, with_bar, args, bar_args in cases:
            bar_args = bar_args or args
            for _ in range(2):
                without(*args)
                with_bar(*bar_args)
        for name, steps, without, with_bar, args, bar_args in cases:
            bar_args = bar_args or args
            dump(f"before {name}")
            for _ in range(calls):
                without(*args)
            dump(f"{name} plain")
            for _ in range(calls):
                with_bar(*bar_args)
            dump(f"{name} bar")
            progress.UPDATES = 1
            for _ in range(calls):
                with_bar(*bar_args)
            progress.UPDATES = 100
            dump(f"{name} bar-1-update")


def counts(directory):
    """{(loop, phase): instructions} from the dumps in `directory`."""
    found = {}
    for path in glob.glob(os.path.join(directory, "cg.*")):
        label = total = None
        with open(path) as f:
            for line in f:
                if line.startswith("desc: Trigger: ") and "dump " in line:
                    label = line.split("dump ", 1)[1].strip()      # (ours: a phase)
                elif line.startswith("totals:"):
                    total = int(line.split()[1])
        if label and total is not None and not label.startswith("before"):
            loop, phase = label.split(" ", 1)
            found[(loop, phase)] = total
    return found


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=4)
    parser.add_argument("--only", nargs="*", default=[])
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    options = parser.parse_args(argv)
    if options.child:
        child(options.calls, options.only)
        return
    with tempfile.TemporaryDirectory() as directory:
        subprocess.run(["valgrind", "--tool=callgrind", "--cache-sim=no",
                        f"--callgrind-out-file={directory}/cg.%p", sys.executable, "-m",
                        "benchmarks.progress_instructions", "--child", "--calls",
                        str(options.calls), "--only", *options.only],
                       check=True, capture_output=True)
        found = counts(directory)
    table(found, options.calls)


def table(found, calls):
    print(f"{'loop':<10} {'plain (M/call)':>15} {'bar':>9} {'overhead':>9} "
          f"{'per update':>11} {'open+close+tests':>17}")
    for loop in dict.fromkeys(k[0] for k in found):
        plain, bar, one = (found[(loop, p)] / calls for p in PHASES)
        update = (bar - one) / 99
        print(f"{loop:<10} {plain / 1e6:>15.2f} {bar / 1e6:>9.2f} "
              f"{100 * (bar / plain - 1):>8.2f}% {update:>11.0f} {one - update - plain:>17.0f}")


if __name__ == "__main__":
    main()
