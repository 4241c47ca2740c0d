"""FFT2D and RFFT2D (EXT-FFT): our kernels against numpy's FFT and the official reference model.

numpy's ``fft2``/``rfft2`` in float64 is independent truth (the spec's
transform is unnormalized, so an inverse is ``ifft2 * H * W``). Each graph is
also emitted to ``.tosa``, read back, and run on ``tosa_reference_model``.
Tolerances come from float32: the DFT of n terms of size ~1 is within about
``n * eps32 * max|x| * sqrt(n)``; 1e-4 relative to the sum of magnitudes covers it.
"""
from __future__ import annotations

import numpy as np
import pytest

from tests.tosa_tools import run_reference_model
from tosaconv.emit import write_tosa
from tosaconv.emit.reader import read_tosa
from tosaconv.interpreter import KernelError, evaluate
from tosaconv.ir import attrs as A
from tosaconv.ir.builder import Builder
from tosaconv.ir.dtypes import DType
from tosaconv.ir.graph import Graph
from tosaconv.ir.location import Location
from tosaconv.ir.ops import Op
from tosaconv.ir.shape_rules import ShapeRuleError
from tosaconv.ir.types import TensorType

RNG = np.random.default_rng(77)


def _graph(op, shapes, attrs):
    g = Graph()
    b = Builder(g, Location("TestOp", "fft", "test"))
    ins = [g.add_input(f"x{i}", TensorType(DType.FP32, s)) for i, s in enumerate(shapes)]
    re, im = b.create(op, ins, attrs).results
    g.set_outputs([re, im], ["re", "im"])
    return g


def _atol(x: np.ndarray) -> float:
    return 1e-5 * float(np.abs(x).sum(axis=(1, 2)).max()) + 1e-6


def _check(g, feed, want, tmp_path):
    ours = evaluate(g, feed)
    tol = _atol(np.abs(want))
    np.testing.assert_allclose(ours["re"], want.real, atol=tol)
    np.testing.assert_allclose(ours["im"], want.imag, atol=tol)
    data = write_tosa(g)
    back = evaluate(read_tosa(data), feed)
    np.testing.assert_array_equal(back["re"], ours["re"])
    theirs = run_reference_model(data, feed, ["re", "im"], tmp_path)
    np.testing.assert_allclose(theirs["re"], want.real, atol=tol)
    np.testing.assert_allclose(theirs["im"], want.imag, atol=tol)


@pytest.mark.parametrize("shape", [(2, 4, 8), (1, 1, 16), (3, 8, 1)])
@pytest.mark.parametrize("inverse", [False, True])
def test_fft2d_matches_numpy_and_reference(shape, inverse, tmp_path):
    re, im = RNG.standard_normal(shape).astype(np.float32), RNG.standard_normal(shape).astype(np.float32)
    z = re.astype(np.float64) + 1j * im
    want = np.fft.ifft2(z, axes=(1, 2)) * shape[1] * shape[2] if inverse else np.fft.fft2(z, axes=(1, 2))
    g = _graph(Op.FFT2D, [shape, shape], A.Fft2dAttrs(inverse=inverse))
    _check(g, {"x0": re, "x1": im}, want, tmp_path)


@pytest.mark.parametrize("shape", [(2, 4, 8), (1, 1, 16), (1, 2, 2), (2, 8, 1)])
def test_rfft2d_matches_numpy_and_reference(shape, tmp_path):
    x = RNG.standard_normal(shape).astype(np.float32)
    g = _graph(Op.RFFT2D, [shape], A.Rfft2dAttrs())
    assert g.outputs[0].type.shape == (shape[0], shape[1], shape[2] // 2 + 1)
    want = np.fft.rfft2(x.astype(np.float64), axes=(1, 2))
    _check(g, {"x0": x}, want, tmp_path)


def test_rfft2d_imaginary_part_is_exactly_zero_where_the_spec_skips_the_sine():
    x = RNG.standard_normal((1, 4, 8)).astype(np.float32)
    im = evaluate(_graph(Op.RFFT2D, [(1, 4, 8)], A.Rfft2dAttrs()), {"x0": x})["im"]
    assert (im[:, [0, 2]][:, :, [0, 4]] == 0).all()


def test_static_dims_that_are_not_powers_of_two_are_refused():
    with pytest.raises(ShapeRuleError, match=r"RFFT2D needs W to be a power of two, got 6"):
        _graph(Op.RFFT2D, [(1, 4, 6)], A.Rfft2dAttrs())
    with pytest.raises(ShapeRuleError, match=r"FFT2D needs H to be a power of two, got 3"):
        _graph(Op.FFT2D, [(1, 3, 4), (1, 3, 4)], A.Fft2dAttrs())


def test_kernel_checks_the_power_of_two_rule_once_bound():
    from tosaconv.symbolic.expr import sym
    g = Graph()
    b = Builder(g, Location("TestOp", "fft", "test"))
    x = g.add_input("x0", TensorType(DType.FP32, (1, 1, sym("n"))))
    re, im = b.create(Op.RFFT2D, [x], A.Rfft2dAttrs()).results
    g.set_outputs([re, im], ["re", "im"])
    with pytest.raises(KernelError, match=r"RFFT2D needs W to be a power of two .*got 6"):
        evaluate(g, {"x0": np.zeros((1, 1, 6), np.float32)})


def test_text_ir_round_trip_keeps_both_results_and_the_attributes():
    from tosaconv.ir.parser import parse_graph
    from tosaconv.ir.printer import print_graph
    g = _graph(Op.FFT2D, [(1, 2, 4), (1, 2, 4)], A.Fft2dAttrs(inverse=True))
    back = parse_graph(print_graph(g))
    op = next(o for o in back.ops if o.op is Op.FFT2D)
    assert op.attrs == A.Fft2dAttrs(inverse=True) and len(op.results) == 2
    feed = {"x0": RNG.standard_normal((1, 2, 4)).astype(np.float32),
            "x1": RNG.standard_normal((1, 2, 4)).astype(np.float32)}
    np.testing.assert_array_equal(evaluate(back, feed)["im"], evaluate(g, feed)["im"])
