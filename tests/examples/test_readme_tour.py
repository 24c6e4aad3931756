"""The README's tour and the executable docs print exactly the output pasted under each of
their code blocks. When the library's output changes on purpose, refresh them with
`python -m tests.examples.readme_tour --write` and read the diff."""

import os

import pytest

from tests.examples import readme_tour


@pytest.mark.parametrize("path", readme_tour.FILES, ids=os.path.basename)
def test_pasted_output_is_real(path):
    with open(path) as f:
        text = f.read()
    found = readme_tour.blocks(text) + readme_tour.console_blocks(text)
    assert len(found) >= 3                                   # the examples are there
    diffs = readme_tour.check(text, os.path.basename(path))
    assert not diffs, "\n\n".join(f"block {n}: expected\n{e}\ngot\n{g}" for n, e, g in diffs)


def test_write_then_check_roundtrip():
    text = ("intro\n## A tour\n\n```python\nprint(1 + 1)\n```\n\n"
            "```python\nx = 3\n```\n\n```python\nprint(x * 2)\n```\n\n```text\nstale\n```\n"
            "\n## Benchmarks\n")
    written = readme_tour.write(text)
    assert "```python\nprint(1 + 1)\n```\n\n```text\n2\n```\n" in written
    assert "```text\n6\n```" in written and "stale" not in written
    assert readme_tour.check(written) == [] and readme_tour.check(text) != []
    assert written.startswith("intro\n") and written.endswith("## Benchmarks\n")
