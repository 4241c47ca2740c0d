"""Property-based fuzzing of the command line, one test per input kind, with hypothesis.

Each test draws mutated inputs (``tests/fuzz/mutators.py``, driven by a
hypothesis-controlled ``random.Random``, plus structured strategies for
bindings documents and ``--bind`` texts) and asserts the contract of
:func:`~tests.fuzz.harness.run_case`: an exit code of 0, 2, 3 or 4 (never 1),
no traceback, no numpy RuntimeWarning, no hang, and no output left behind by a
failed run. The CI profile is fixed and derandomized so runs are
reproducible and take a few seconds per kind; ``scripts/fuzz.py`` runs the
long campaigns (README, "Fuzzing").
"""
from __future__ import annotations

import json
import os
import tempfile

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from .harness import Case, run_case
from .mutators import KINDS
from . import seeds

settings.register_profile("ci", max_examples=25, derandomize=True, deadline=None, database=None,
                          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
settings.register_profile("long", max_examples=1000, deadline=None,
                          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
settings.load_profile(os.environ.get("TOSACONV_FUZZ_PROFILE", "ci"))


def _check(case: Case) -> None:
    with tempfile.TemporaryDirectory(prefix="tosaconv-fuzz-") as directory:
        verdict = run_case(case, directory, timeout=60)
    assert verdict.ok, f"{case.note}: {verdict.problem}\nargs: {case.args}\nstderr: {verdict.stderr[-1500:]}"


@pytest.mark.parametrize("kind", sorted(KINDS))
def test_mutated_inputs_keep_the_exit_code_contract(kind):
    @given(rnd=st.randoms(use_true_random=False))
    def check(rnd):
        _check(KINDS[kind](rnd))
    check()


# structure-aware: any JSON document a user might write as a bindings file, and any --bind text
_json = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=True, allow_infinity=True) | st.text(max_size=8),
    lambda children: st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=6), children, max_size=4),
    max_leaves=12)
_bindings_doc = st.dictionaries(st.sampled_from(["batch", "seq", "other", ""]),
                                st.integers(-3, 2**64) | st.floats() | _json, max_size=3) | _json
_bind_text = st.builds(lambda name, value: f"{name}={value}", st.sampled_from(["batch", "seq", "nope", ""]),
                       st.integers(-5, 2**70).map(str) | st.text(max_size=12))


@given(doc=_bindings_doc, binds=st.lists(_bind_text, max_size=3))
def test_any_bindings_document_is_accepted_or_refused_cleanly(doc, binds):
    text = json.dumps(doc, allow_nan=True)
    args = ["run", "{dir}/model.onnx", "-o", "{dir}/out.npz", "--bindings", "{dir}/b.json"]
    for b in binds:
        args += ["--bind", b]
    _check(Case("bindings", {"model.onnx": seeds.SYMBOLIC_MODEL, "b.json": text.encode()}, args, "hypothesis"))
