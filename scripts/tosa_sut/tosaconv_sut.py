"""tosaconv's numpy interpreter as a system under test of ``tosa_verif_run_tests``.

The official runner runs the reference model (in compliance mode where a test
asks for it), then this runner, then ``tosa_verify`` on each output: integer
results must be bit exact and float results within the specification's error
bounds. This runner reads ``test.tosa`` with :func:`tosaconv.api.load` (which
verifies the program against the ERROR_IF rules), runs it on the test's input
files and writes every output as a C-order ``.npy`` where the test expects it.
A program tosaconv refuses is reported as a TOSA ERROR, so a refused positive
test counts as a failure and an accepted negative one as an unexpected pass.
"""
from __future__ import annotations

import numpy as np
from runner.tosa_test_runner import TosaTestRunner

from tosaconv import api
from tosaconv.diagnostics import TosaconvError


class TosaSUTRunner(TosaTestRunner):
    """Run one test directory with tosaconv's interpreter."""

    def runTestGraph(self):
        desc = self.testDesc
        try:
            graph = api.load(str(self.testDirPath / desc["tosa_file"]))
            inputs = {n: np.load(self.testDirPath / f) for n, f in zip(desc["ifm_name"], desc["ifm_file"])}
            outputs = api.run(graph, inputs)
        except TosaconvError as e:
            return TosaTestRunner.TosaGraphResult.TOSA_ERROR, str(e)
        except Exception as e:   # an internal error of ours: not a verdict on the program
            return TosaTestRunner.TosaGraphResult.OTHER_ERROR, f"{type(e).__name__}: {e}"
        for name, path in zip(desc["ofm_name"], desc["ofm_file"]):
            np.save(self.testDirPath / path, np.asarray(outputs[name], order="C"))
        return TosaTestRunner.TosaGraphResult.TOSA_VALID, None
