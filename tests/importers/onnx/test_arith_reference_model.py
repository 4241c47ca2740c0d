"""The official TOSA reference model runs what these converters emit, and
agrees with our numpy run of the same static program.

The reference model refuses operand types an op does not support (EQUAL on
int8, CLAMP on int32, ARGMAX on int32...), which our interpreter would
happily compute; so each case here picks data types that exercise the
workarounds: int8/int16 widened to int32 for comparisons, MAXIMUM/MINIMUM,
ADD and INTDIV; int32 clamps as MAXIMUM/MINIMUM; ArgMax/ArgMin of int32 as
an int8 mask; fp16 activations; and symbolic dims bound at specialization.
"""
from __future__ import annotations

import numpy as np
import pytest
from onnx import TensorProto

from tosaconv.emit import read_tosa

from .harness import (BOOL, F16, F32, I32, I64, check_reference_model, const, convert, info, one_node, rand,
                      run_graph, specialize_and_emit)

I8, I16 = TensorProto.INT8, TensorProto.INT16
RNG = np.random.default_rng(0)
INTS = {I8: np.int8, I16: np.int16, I32: np.int32}


def _unary(op, elem, out=None, opset=13, **attrs):
    return one_node(op, [info("x", elem, ["N", "W"])], [info("y", elem if out is None else out, None)],
                    opset=opset, **attrs)


def _binary(op, elem, out=None, opset=13, **attrs):
    return one_node(op, [info("a", elem, ["N", "W"]), info("b", elem, [1, "W"])],
                    [info("y", elem if out is None else out, None)], opset=opset, **attrs)


def _ints(dtype, shape=(3, 4), low=-50, high=50):
    return RNG.integers(low, high, shape).astype(dtype)


def _cases():
    for elem, dtype in INTS.items():
        name = np.dtype(dtype).name
        pair = {"a": _ints(dtype), "b": np.array([[3, -4, 5, 0]], dtype)}
        yield f"sign_{name}", _unary("Sign", elem), {"x": _ints(dtype)}
        yield f"mod_{name}", _binary("Mod", elem, fmod=0), pair
        yield f"fmod_{name}", _binary("Mod", elem, fmod=1), pair
        yield f"greater_or_equal_{name}", _binary("GreaterOrEqual", elem, BOOL, opset=16), pair
        yield f"equal_{name}", _binary("Equal", elem, BOOL), pair
        yield f"max_{name}", _binary("Max", elem, opset=13), pair
        for op in ("ArgMax", "ArgMin"):
            model = one_node(op, [info("x", elem, ["N", "W"])], [info("y", I64, None)], opset=13, axis=1,
                             select_last_index=1)
            yield f"{op.lower()}_{name}", model, {"x": _ints(dtype, low=-3, high=3)}
    yield "relu_int32", _unary("Relu", I32, opset=14), {"x": _ints(np.int32)}
    clip = one_node("Clip", [info("x", I32, ["N", "W"])], [info("y", I32, None)],
                    [const("lo", np.array(-2, np.int32)), const("hi", np.array(3, np.int32))], opset=13)
    yield "clip_int32", clip, {"x": _ints(np.int32)}
    yield "reduce_l2_int32", _unary("ReduceL2", I32, opset=18, keepdims=0), {"x": _ints(np.int32)}
    yield "round", _unary("Round", F32), {"x": np.array([[0.5, 1.5, -2.5, 3.7], [np.inf, np.nan, -0.5, 2.5]],
                                                        np.float32)}
    yield "hardmax_opset11", _unary("Hardmax", F32, opset=11, axis=0), {"x": _ints(np.float32, low=-2, high=2)}
    yield "log_sum_exp", _unary("ReduceLogSumExp", F32, opset=18), {"x": rand(3, 4, low=-200, high=200)}
    for op, attrs in (("Gelu", {"approximate": "tanh"}), ("Mish", {}), ("HardSwish", {}), ("Selu", {}),
                      ("Softplus", {}), ("Round", {})):
        yield f"{op.lower()}_fp16", _unary(op, F16, opset=20, **attrs), {"x": rand(3, 4).astype(np.float16)}
    dropout = one_node("Dropout", [info("x", F32, ["N", "W"])], [info("y", F32, None), info("m", BOOL, None)],
                       opset=13)
    yield "dropout_mask", dropout, {"x": rand(3, 4)}
    group = one_node("GroupNormalization", [info("x", F16, ["N", 4, "L"])], [info("y", F16, None)],
                     [const("s", rand(4).astype(np.float16)), const("b", rand(4, seed=1).astype(np.float16))],
                     opset=21, num_groups=2)
    yield "group_norm_fp16", group, {"x": rand(2, 4, 5).astype(np.float16)}


CASES = list(_cases())


@pytest.mark.parametrize("name,model,feeds", CASES, ids=[c[0] for c in CASES])
def test_reference_model_agrees(name, model, feeds, tmp_path):
    static, tosa = specialize_and_emit(convert(model), {k: v.shape for k, v in feeds.items()})
    check_reference_model(tosa, static, feeds, run_graph(read_tosa(tosa), feeds), str(tmp_path))
