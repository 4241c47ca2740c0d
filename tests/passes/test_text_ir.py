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
from tosaconv.ir.graph import walk_graphs
from tosaconv.ir.ops import TABLE
from tosaconv.ir.parser import parse_graph
from tosaconv.ir.printer import print_graph

from .text_cases import all_cases, apply, canonical, inputs, load

CASE_FILES = all_cases()


def test_there_is_a_case_for_every_pipeline_pass_and_for_specialize():
    covered = {step for path in CASE_FILES for step in load(path).steps}
    assert covered >= {"rank-equalization", "broadcast-check", "constant-fold", "transpose-cancel",
                       "dead-code", "specialize"}


def test_there_is_a_case_for_every_decay_rule_of_the_op_table():
    """A decay rule is exercised by a case whose input holds the op (in any region) and whose RUN specializes."""
    exercised = set()
    for path in CASE_FILES:
        case = load(path)
        if "specialize" in case.steps:
            exercised |= {op.op.name for g in walk_graphs(parse_graph(case.source)) for op in g.ops}
    with_rule = {d.name for d in TABLE if d.decay}
    assert with_rule, "the op table names no decay rule"
    assert sorted(with_rule - exercised) == []


@pytest.mark.parametrize("path", CASE_FILES, ids=[p.stem for p in CASE_FILES])
def test_assumed_data_is_fixed_by_the_case(path):
    """A bound data-dependent symbol (an assumption) holds only for some data: the case gives that data in
    ``// INPUTS:``, so the run check below compares both programs where the decay is valid, not by luck."""
    case = load(path)
    for assumption in apply(case).assumptions:
        assert assumption.data in case.fixed, f"{path.name}: the assumption {assumption.symbol} reads " \
                                              f"'{assumption.data}'; give its values with // INPUTS:"


@pytest.mark.parametrize("path", CASE_FILES, ids=[p.stem for p in CASE_FILES])
def test_pass_output_matches_the_expected_program(path):
    case = load(path)
    assert canonical(print_graph(apply(case))) == canonical(case.expected)


@pytest.mark.parametrize("path", CASE_FILES, ids=[p.stem for p in CASE_FILES])
def test_pass_keeps_what_the_program_computes(path):
    case = load(path)
    before = parse_graph(case.source)
    values = inputs(case, before)
    want = api.run(before, values, case.bindings or None)
    got = api.run(apply(case), values, case.bindings or None)
    assert list(got) == list(want)
    for name in want:
        np.testing.assert_array_equal(got[name], want[name], err_msg=name)
