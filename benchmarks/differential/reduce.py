"""Shrink a failing program while it keeps failing the same way (line-level delta debugging).

A candidate removes one statement with its body, or replaces a compound statement's header
by its body (dedented); it is kept when it still compiles, the plain Python run still ends
the same way (a value, or the same exception type), and the finding's class is unchanged.
Unused helpers and the State class disappear the same way.
"""

import dataclasses

from benchmarks.differential import check as checking


def _indent(line):
    return len(line) - len(line.lstrip(" "))


def _chunk_end(lines, i):
    """The index after the statement at line i and its indented body (and else/elif arms)."""
    base = _indent(lines[i])
    j = i + 1
    while j < len(lines) and (not lines[j].strip() or _indent(lines[j]) > base or (
            _indent(lines[j]) == base and lines[j].strip().split(" ")[0].rstrip(":")
            in ("else", "elif", "finally", "except"))):
        j += 1
    return j


def _candidates(lines):
    for i in range(len(lines)):
        stripped = lines[i].strip()
        if not stripped or stripped.startswith("def generated") or (
                _indent(lines[i]) == 4 and stripped.startswith("return ")
                and lines[i - 1].startswith("    ") and i == len(lines) - 1):
            continue                  # keep the entry point and its final return
        end = _chunk_end(lines, i)
        yield lines[:i] + lines[end:]
        if stripped.endswith(":") and end > i + 1 and not stripped.startswith(("def ", "class ")):
            # keep the body of the first arm only, dedented into the header's place
            base = _indent(lines[i])
            body, j = [], i + 1
            while j < end and (not lines[j].strip() or _indent(lines[j]) > base):
                body.append(lines[j][4:])
                j += 1
            yield lines[:i] + body + lines[end:]


def _valid(source):
    try:
        compile(source, "<candidate>", "exec")
    except SyntaxError:
        return False
    return True


def _python_outcome(program, index):
    try:
        fn, _ = checking.load(program.source)
    except Exception:  # noqa: BLE001 - not a valid program
        return "invalid"
    x, n, xs = program.inputs[index]
    kind, value = checking.guarded(5.0, fn, x, n, list(xs))
    return kind if kind != "raise" else type(value).__name__


def reduce(program, finding, budget=300):
    """A smaller `Program` with the same finding (category, mode, key) on the same input."""
    category, mode, key, detail = finding
    index = detail["input"]
    target = (category, mode, key)
    program = dataclasses.replace(program, inputs=[program.inputs[index]])
    outcome = _python_outcome(program, 0)
    modes = ("converted",) if mode in ("converted", "to_graph") else ("traced",)

    def still_fails(candidate):
        if not _valid(candidate.source):
            return False
        if _python_outcome(candidate, 0) in ("invalid", "timeout"):
            return False
        if _python_outcome(candidate, 0) != outcome:
            return False
        found = checking.check(candidate, timeout=5.0, modes=modes)
        return any((c, m, k) == target for c, m, k, _ in found)

    lines = program.source.splitlines()
    tries = 0
    progress = True
    while progress and tries < budget:
        progress = False
        for cand in _candidates(lines):
            tries += 1
            if tries >= budget:
                break
            text = "\n".join(cand) + "\n"
            candidate = dataclasses.replace(program, source=text)
            if still_fails(candidate):
                lines = cand
                progress = True
                break
    return dataclasses.replace(program, source="\n".join(lines) + "\n")
