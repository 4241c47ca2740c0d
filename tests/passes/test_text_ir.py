"""Each pass and decay rule on hand-written ``.tosair`` programs (format: :mod:`.text_cases`).

Two checks per case: the printed result equals the hand-written expected
program, and (an independent check of the rewrite) the program before and
after computes the same outputs on seeded random inputs at the case's
bindings, through the numpy interpreter.
"""
from __future__ import annotations

import numpy as np
import pytest

from tosaconv import api
from tosaconv.ir.parser import parse_graph
from tosaconv.ir.printer import print_graph

from .text_cases import all_cases, apply, canonical, load

CASE_FILES = all_cases()


def test_there_is_a_case_for_every_pipeline_pass_and_for_specialize():
    covered = {step for path in CASE_FILES for step in load(path).steps}
    assert covered >= {"rank-equalization", "broadcast-check", "constant-fold", "transpose-cancel",
                       "dead-code", "specialize"}


@pytest.mark.parametrize("path", CASE_FILES, ids=[p.stem for p in CASE_FILES])
def test_pass_output_matches_the_expected_program(path):
    case = load(path)
    assert canonical(print_graph(apply(case))) == canonical(case.expected)


@pytest.mark.parametrize("path", CASE_FILES, ids=[p.stem for p in CASE_FILES])
def test_pass_keeps_what_the_program_computes(path):
    case = load(path)
    before = parse_graph(case.source)
    inputs = api.random_inputs(before, case.bindings, seed=3)
    want = api.run(before, inputs, case.bindings or None)
    got = api.run(apply(case), inputs, case.bindings or None)
    assert list(got) == list(want)
    for name in want:
        np.testing.assert_array_equal(got[name], want[name], err_msg=name)
