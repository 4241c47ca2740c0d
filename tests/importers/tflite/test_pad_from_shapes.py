"""TFLite PAD, PADV2 and MIRROR_PAD whose paddings are computed from a dynamic shape (issue 11, class 3).

TensorFlow's signal front-ends pad the time axis by amounts computed from
the input's shape: ``SHAPE -> STRIDED_SLICE -> FLOOR_DIV/FLOOR_MOD/SUB ->
PACK -> PACK -> PAD`` (here ``T // 4`` before and ``(4 - T % 4) % 4`` after,
so one size pads 0 after). The ``[rank, 2]`` paddings are traced back to
Index values and the pad becomes DYN_PAD, which decays to static TOSA once
``T`` is bound. Compared with LiteRT's reference kernels at two sizes
(symbolic program and emitted ``.tosa``), and the official reference model
runs the emitted ``.tosa``. Paddings read from tensor data are refused with
a message naming the op.
"""
from __future__ import annotations

import numpy as np
import pytest

from tests.importers.onnx.harness import specialize_and_emit
from tests.importers.tflite.harness import (ModelBuilder, check_reference_model, check_with_litert, convert,
                                            rand, run_graph)
from tosaconv.diagnostics import TosaconvError

I32 = np.int32
SIZES = (8, 13)


def _scalar(m, name, op, a, b, options=None):
    out = m.tensor(name, [], "INT32")
    m.op(op, [a, b], [out], options)
    return out


def pad_model(op: str, mode: int = 0) -> bytes:
    """x [2, T] padded on axis 1 by (T // 4, (4 - T % 4) % 4) with ``op`` (PAD, PADV2 or MIRROR_PAD)."""
    m = ModelBuilder()
    x = m.input("x", [2, 8], signature=[2, -1])
    s = m.tensor("s", [2], "INT32")
    m.op("SHAPE", [x], [s], "ShapeOptions", OutType=2)
    t = m.tensor("t", [], "INT32")
    m.op("STRIDED_SLICE", [s, m.const("b", np.array([1], I32)), m.const("e", np.array([2], I32)),
                           m.const("st", np.array([1], I32))], [t], "StridedSliceOptions", ShrinkAxisMask=1)
    four = m.const("four", np.array(4, I32))
    left = _scalar(m, "left", "FLOOR_DIV", t, four)
    r = _scalar(m, "r", "FLOOR_MOD", t, four)
    q = _scalar(m, "q", "SUB", four, r, "SubOptions")
    right = _scalar(m, "right", "FLOOR_MOD", q, four)
    row1 = m.tensor("row1", [2], "INT32")
    m.op("PACK", [left, right], [row1], "PackOptions", ValuesCount=2, Axis=0)
    paddings = m.tensor("paddings", [2, 2], "INT32")
    m.op("PACK", [m.const("row0", np.array([0, 0], I32)), row1], [paddings], "PackOptions", ValuesCount=2, Axis=0)
    y = m.tensor("y", [2, 8], signature=[2, -1])
    if op == "MIRROR_PAD":
        m.op(op, [x, paddings], [y], "MirrorPadOptions", Mode=mode)
    elif op == "PADV2":
        m.op(op, [x, paddings, m.const("v", np.array(-2.5, np.float32))], [y], "PadV2Options")
    else:
        m.op(op, [x, paddings], [y], "PadOptions")
    m.output(y)
    return m.finish()


@pytest.mark.parametrize("op,mode", [("PAD", 0), ("PADV2", 0), ("MIRROR_PAD", 0), ("MIRROR_PAD", 1)],
                         ids=["pad", "padv2", "reflect", "symmetric"])
def test_paddings_from_shape_match_litert_and_the_reference_model(op, mode, tmp_path):
    data = pad_model(op, mode)
    feeds = [{"x": rand(2, n, seed=n)} for n in SIZES]
    graph = check_with_litert(data, feeds, rtol=0, atol=0)
    assert graph.histogram().get("DYN_PAD") == 1
    for f in feeds:
        static, tosa = specialize_and_emit(graph, {"x": f["x"].shape})
        assert "DYN_PAD" not in static.histogram()
        check_reference_model(tosa, static, f, run_graph(static, f), tmp_path / str(f["x"].shape[1]))


def test_paddings_from_tensor_data_are_refused_by_name():
    m = ModelBuilder()
    x, p = m.input("x", [2, 3]), m.input("p", [2, 2], "INT32")
    y = m.tensor("y", [4, 5])
    m.op("PAD", [x, p], [y], "PadOptions")
    m.output(y)
    with pytest.raises(TosaconvError, match="PAD 'y'.*PAD paddings 'p' must be a constant or computed from "
                                            "tensor shapes.*depend on tensor data"):
        convert(m.finish())


def test_negative_paddings_are_refused():
    m = ModelBuilder()
    x = m.input("x", [2, 3])
    y = m.tensor("y", [2, 2])
    m.op("MIRROR_PAD", [x, m.const("p", np.array([[0, 0], [0, -1]], I32))], [y], "MirrorPadOptions", Mode=0)
    m.output(y)
    with pytest.raises(TosaconvError, match="MIRROR_PAD paddings needs non-negative .* got -1 on axis 1"):
        convert(m.finish())
