"""The benchmark cases of issue 6, in the order the table shows them.

Each module defines `CASES` (or `cases(quick)` when the sizes depend on the mode): a list
of `harness.Case`s. A case imports the heavy frameworks only when it is built."""

from benchmarks.cases import (cliffs, collatz, datasets, dynamic_rnn, first_call,
                              fresh_process, jit_first_call, no_cliffs, onnx_export, per_call,
                              python_heavy, range_loop, rnn_grad, rnn_hvp, saved_model_process,
                              scaling, training_step)


def all_cases(quick=False):
    return (per_call.CASES + first_call.CASES + fresh_process.CASES + collatz.CASES
            + range_loop.CASES + dynamic_rnn.CASES + python_heavy.CASES + scaling.cases(quick)
            + datasets.CASES + onnx_export.CASES + rnn_grad.CASES + rnn_hvp.CASES + cliffs.CASES
            + no_cliffs.CASES + jit_first_call.CASES + training_step.CASES
            + saved_model_process.CASES)
