"""Issue 10's "Done when" for quantized real ONNX models: all-integer TOSA that Ethos-U runs.

A case converts with ``--profile int --int-io`` through the command line, the
``.tosa`` holds no op that touches a float value, the official reference model
runs it bit-exactly like our numpy interpreter, and Vela compiles it for the
Ethos-U85 with 100 % of the operators on the NPU. ``TARGET_CASES`` are the
(model, recipe) cases of test_quantized_models.CASES that meet it; every other
case is listed in ``NOT_YET`` with the reason it does not, which is what
``--profile int`` prints for it (the README's table says the same).
"""
from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
import pytest

from tests.tosa_tools import run_reference_model
from tosaconv import api

from .quantized import entry_named, quantized_path, recipe_named
from .quantized_check import float_ops
from .test_quantized_models import CASES, _ids
from .vela_run import run_vela

NOT_YET: dict = {}


def _meets_target(model: str, recipe: str) -> bool:
    return f"{model}/{recipe}" not in NOT_YET and f"{model}/*" not in NOT_YET


TARGET_CASES = [(m, r) for m, r in CASES if _meets_target(m, r)]


@pytest.fixture(scope="module")
def converted(tmp_path_factory):
    cache = {}

    def get(model: str, recipe: str):
        if (model, recipe) not in cache:
            cache[model, recipe] = _convert(model, recipe, tmp_path_factory.mktemp("target"))
        return cache[model, recipe]
    return get


def _convert(model: str, recipe: str, work) -> tuple:
    """(the CLI's completed process, the .tosa path) for ``convert --profile int --int-io``."""
    entry = entry_named(model)
    out = work / "model.tosa"
    shapes = [f"--input-shape={k}={','.join(map(str, v))}" for k, v in entry.shapes[0].items()]
    model_file = quantized_path(entry, recipe_named(recipe))
    done = subprocess.run([sys.executable, "-m", "tosaconv", "convert", str(model_file), "-o", str(out), *shapes,
                           "--profile", "int", "--int-io", "--json"], capture_output=True, text=True, timeout=3600)
    return done, out


def _program(model: str, recipe: str, converted):
    done, out = converted(model, recipe)
    assert done.returncode == 0, _why(done)
    return api.load(str(out)), out


def _why(done) -> str:
    try:
        diags = json.loads(done.stdout)["diagnostics"]
        return f"exit {done.returncode}: " + "; ".join(d["message"] for d in diags)
    except (ValueError, KeyError):
        return f"exit {done.returncode}: {(done.stdout + done.stderr).strip()[-2000:]}"


@pytest.mark.slow
@pytest.mark.parametrize("model, recipe", TARGET_CASES, ids=_ids(TARGET_CASES))
def test_converts_with_profile_int_and_int_io(model, recipe, converted):
    done, _ = converted(model, recipe)
    assert done.returncode == 0, _why(done)


@pytest.mark.slow
@pytest.mark.parametrize("model, recipe", TARGET_CASES, ids=_ids(TARGET_CASES))
def test_no_float_ops(model, recipe, converted):
    program, _ = _program(model, recipe, converted)
    counted = float_ops(program, edges=set())
    assert counted["float_ops"] == 0, f"float ops: {counted['tosa_kinds']} from {counted['source_kinds']}"


@pytest.mark.slow
@pytest.mark.parametrize("model, recipe", TARGET_CASES, ids=_ids(TARGET_CASES))
def test_reference_model_bit_exact(model, recipe, converted, tmp_path):
    program, out = _program(model, recipe, converted)
    feeds = api.random_inputs(program, {}, seed=0)
    ours = api.run(program, feeds)
    ref = run_reference_model(out, feeds, program.output_names, tmp_path, timeout=3600)
    for name in program.output_names:
        want = np.ascontiguousarray(ours[name])
        assert ref[name].dtype == want.dtype and ref[name].tobytes() == want.tobytes(), f"output {name} differs"


@pytest.mark.slow
@pytest.mark.parametrize("model, recipe", TARGET_CASES, ids=_ids(TARGET_CASES))
def test_vela_puts_every_operator_on_the_npu(model, recipe, converted, tmp_path):
    _, out = _program(model, recipe, converted)
    verdict = run_vela(out, tmp_path / "vela")
    assert verdict["ok"] and verdict["npu_percent"] == 100.0, verdict


def test_every_case_is_a_target_or_says_why_not():
    """No case drops out of the targets silently: each one meets them or has its reason in NOT_YET."""
    names = {m for m, _ in CASES}
    for key in NOT_YET:
        assert key.split("/")[0] in names, f"NOT_YET names an unknown model: {key}"
    assert len(TARGET_CASES) >= 28
