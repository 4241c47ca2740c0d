"""TFLite STRIDED_SLICE on a symbolic axis (shape_signature -1) with strides 2, 3, -1, -2, negative and
clamped bounds and masks, against LiteRT at two sizes of that axis. The extent is a dim expression
(``lowering.strided``, shared with ONNX Slice) and the emitted ``.tosa`` is checked too."""
from __future__ import annotations

import numpy as np
import pytest

from tests.importers.tflite.harness import ModelBuilder, check_with_litert, rand

I32 = np.int32

CASES = [  # begin, end, strides of the time axis (axis 1 of [2, t, 3]), masks
    (0, 0, 2, dict(EndMask=2)),
    (1, 100, 3, {}),
    (-5, -1, 2, {}),
    (0, 0, -1, dict(BeginMask=2, EndMask=2)),       # full reversal
    (-2, 0, -1, dict(EndMask=2)),                   # reflect-pad tail x[:, -2::-1]
    (4, 0, -1, {}),                                 # reflect-pad head x[:, 4:0:-1]
    (-1, -1000, -2, {}),
    (2, 0, 1, dict(EndMask=2)),                     # stride 1 (the old path)
]


def _model(begin, end, stride, masks) -> bytes:
    m = ModelBuilder()
    x = m.input("x", [2, 9, 3], signature=[2, -1, 3])
    consts = [m.const(n, np.array(v, I32)) for n, v in
              (("b", [0, begin, 0]), ("e", [2, end, 3]), ("s", [1, stride, 1]))]
    y = m.tensor("y", [2, 1, 3], signature=[2, -1, 3])
    m.op("STRIDED_SLICE", [x, *consts], [y], "StridedSliceOptions", **masks)
    m.output(y)
    return m.finish()


@pytest.mark.parametrize("begin, end, stride, masks", CASES, ids=[str(i) for i in range(len(CASES))])
def test_strided_slice_on_symbolic_axis(begin, end, stride, masks):
    check_with_litert(_model(begin, end, stride, masks), [{"x": rand(2, 9, 3)}, {"x": rand(2, 20, 3, seed=1)}])


def test_negative_shrink_index_on_symbolic_axis_is_refused_with_the_reason():
    from tests.importers.tflite.harness import convert
    from tosaconv.diagnostics import ConversionError
    with pytest.raises(ConversionError, match=r"STRIDED_SLICE shrinks symbolic axis 1 \(size x\.1\) at index -1"):
        convert(_model(-1, 0, 1, dict(ShrinkAxisMask=2)))
