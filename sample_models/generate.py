"""Generate the sample models shipped in ``sample_models/`` with ``onnx.helper``.

Run ``python sample_models/generate.py`` to rebuild them; the output is
deterministic (fixed seeds), so the committed files match a fresh run.

- ``tiny_transformer.onnx``: one encoder layer with symbolic ``batch`` and
  ``seq``: LayerNormalization, attention heads split with the exporter idiom
  ``Shape -> Gather -> Unsqueeze -> Concat -> Reshape``, Softmax, Gelu built
  from Erf, and a feed-forward block.
- ``small_cnn.onnx``: dynamic N, H and W: Conv, BatchNormalization, Relu,
  MaxPool, a residual Add, GlobalAveragePool, Flatten and Gemm.
- ``broadcast/*.onnx``: the broadcast cases of seed 002, one model each.
"""
from __future__ import annotations

import os

import numpy as np
import onnx
from onnx import TensorProto as T
from onnx import helper as h
from onnx import numpy_helper

HERE = os.path.dirname(os.path.abspath(__file__))
OPSET = 17
D_MODEL, HEADS, D_FF = 32, 4, 64


def _model(nodes, inputs, outputs, inits, name):
    graph = h.make_graph(nodes, name, inputs, outputs, inits)
    model = h.make_model(graph, opset_imports=[h.make_opsetid("", OPSET)], producer_name="tosaconv-samples")
    model.ir_version = 10
    onnx.checker.check_model(model)
    return model


def _init(rng, name, shape, scale=0.2):
    return numpy_helper.from_array((rng.standard_normal(shape) * scale).astype(np.float32), name)


def _ints(name, values):
    return numpy_helper.from_array(np.array(values, dtype=np.int64), name)


def _linear(prefix, x, w, b, out):
    return [h.make_node("MatMul", [x, w], [f"{prefix}_mm"], name=f"{prefix}/MatMul"),
            h.make_node("Add", [f"{prefix}_mm", b], [out], name=f"{prefix}/Add")]


def _heads_shape(prefix):
    """The exporter idiom: [batch, seq, HEADS, D_MODEL // HEADS] built from Shape(x)."""
    return [
        h.make_node("Shape", ["x"], [f"{prefix}_shape"], name=f"{prefix}/Shape"),
        h.make_node("Gather", [f"{prefix}_shape", "idx0"], [f"{prefix}_b"], axis=0, name=f"{prefix}/Gather_b"),
        h.make_node("Gather", [f"{prefix}_shape", "idx1"], [f"{prefix}_s"], axis=0, name=f"{prefix}/Gather_s"),
        h.make_node("Unsqueeze", [f"{prefix}_b", "axes0"], [f"{prefix}_bu"], name=f"{prefix}/Unsqueeze_b"),
        h.make_node("Unsqueeze", [f"{prefix}_s", "axes0"], [f"{prefix}_su"], name=f"{prefix}/Unsqueeze_s"),
    ]


def _attention(rng, inits):
    nodes = _heads_shape("heads")
    nodes.append(h.make_node("Concat", ["heads_bu", "heads_su", "n_heads", "d_head"], ["heads_target"],
                             axis=0, name="heads/Concat"))
    for t in ("q", "k", "v"):
        inits += [_init(rng, f"W{t}", (D_MODEL, D_MODEL)), _init(rng, f"b{t}", (D_MODEL,))]
        nodes += _linear(f"attn/{t}", "ln1", f"W{t}", f"b{t}", f"{t}_lin")
        nodes.append(h.make_node("Reshape", [f"{t}_lin", "heads_target"], [f"{t}_heads"], name=f"attn/{t}/Reshape"))
    nodes += [
        h.make_node("Transpose", ["q_heads"], ["qh"], perm=[0, 2, 1, 3], name="attn/q/Transpose"),
        h.make_node("Transpose", ["k_heads"], ["kh"], perm=[0, 2, 3, 1], name="attn/k/Transpose"),
        h.make_node("Transpose", ["v_heads"], ["vh"], perm=[0, 2, 1, 3], name="attn/v/Transpose"),
        h.make_node("MatMul", ["qh", "kh"], ["scores"], name="attn/scores"),
        h.make_node("Div", ["scores", "sqrt_d"], ["scaled"], name="attn/scale"),
        h.make_node("Softmax", ["scaled"], ["probs"], axis=-1, name="attn/Softmax"),
        h.make_node("MatMul", ["probs", "vh"], ["ctx"], name="attn/context"),
        h.make_node("Transpose", ["ctx"], ["ctx_t"], perm=[0, 2, 1, 3], name="attn/merge/Transpose"),
        h.make_node("Concat", ["heads_bu", "heads_su", "d_model"], ["merge_target"], axis=0, name="attn/merge/Concat"),
        h.make_node("Reshape", ["ctx_t", "merge_target"], ["ctx_m"], name="attn/merge/Reshape"),
    ]
    inits += [_init(rng, "Wo", (D_MODEL, D_MODEL)), _init(rng, "bo", (D_MODEL,)),
              numpy_helper.from_array(np.array(np.sqrt(D_MODEL // HEADS), np.float32), "sqrt_d"),
              _ints("idx0", 0), _ints("idx1", 1), _ints("axes0", [0]), _ints("n_heads", [HEADS]),
              _ints("d_head", [D_MODEL // HEADS]), _ints("d_model", [D_MODEL])]
    nodes += _linear("attn/out", "ctx_m", "Wo", "bo", "attn_out")
    return nodes


def _gelu(x, out, prefix):
    """Gelu as exporters write it before opset 20: 0.5 * x * (1 + erf(x / sqrt(2)))."""
    return [h.make_node("Div", [x, "sqrt2"], [f"{prefix}_div"], name=f"{prefix}/Div"),
            h.make_node("Erf", [f"{prefix}_div"], [f"{prefix}_erf"], name=f"{prefix}/Erf"),
            h.make_node("Add", [f"{prefix}_erf", "one"], [f"{prefix}_add"], name=f"{prefix}/Add"),
            h.make_node("Mul", [x, f"{prefix}_add"], [f"{prefix}_mul"], name=f"{prefix}/Mul"),
            h.make_node("Mul", [f"{prefix}_mul", "half"], [out], name=f"{prefix}/Mul_half")]


def tiny_transformer() -> onnx.ModelProto:
    rng = np.random.default_rng(1)
    inits = [numpy_helper.from_array(np.ones(D_MODEL, np.float32), "ln_scale"),
             numpy_helper.from_array(np.zeros(D_MODEL, np.float32), "ln_bias"),
             numpy_helper.from_array(np.array(np.sqrt(2.0), np.float32), "sqrt2"),
             numpy_helper.from_array(np.array(1.0, np.float32), "one"),
             numpy_helper.from_array(np.array(0.5, np.float32), "half"),
             _init(rng, "W1", (D_MODEL, D_FF)), _init(rng, "b1", (D_FF,)),
             _init(rng, "W2", (D_FF, D_MODEL)), _init(rng, "b2", (D_MODEL,))]
    nodes = [h.make_node("LayerNormalization", ["x", "ln_scale", "ln_bias"], ["ln1"], axis=-1,
                         epsilon=1e-5, name="ln1")]
    nodes += _attention(rng, inits)
    nodes += [h.make_node("Add", ["x", "attn_out"], ["res1"], name="residual1"),
              h.make_node("LayerNormalization", ["res1", "ln_scale", "ln_bias"], ["ln2"], axis=-1,
                          epsilon=1e-5, name="ln2")]
    nodes += _linear("ffn/up", "ln2", "W1", "b1", "ff1")
    nodes += _gelu("ff1", "ff_act", "ffn/gelu")
    nodes += _linear("ffn/down", "ff_act", "W2", "b2", "ff2")
    nodes.append(h.make_node("Add", ["res1", "ff2"], ["y"], name="residual2"))
    x = h.make_tensor_value_info("x", T.FLOAT, ["batch", "seq", D_MODEL])
    y = h.make_tensor_value_info("y", T.FLOAT, ["batch", "seq", D_MODEL])
    return _model(nodes, [x], [y], inits, "tiny_transformer")


def _conv_bn_relu(rng, inits, prefix, x, cin, cout, stride=1, relu=True):
    inits += [_init(rng, f"{prefix}_w", (cout, cin, 3, 3), 0.3), _init(rng, f"{prefix}_b", (cout,), 0.1),
              numpy_helper.from_array((1 + 0.1 * rng.standard_normal(cout)).astype(np.float32), f"{prefix}_gamma"),
              _init(rng, f"{prefix}_beta", (cout,), 0.1), _init(rng, f"{prefix}_mean", (cout,), 0.1),
              numpy_helper.from_array((1 + 0.2 * rng.random(cout)).astype(np.float32), f"{prefix}_var")]
    nodes = [h.make_node("Conv", [x, f"{prefix}_w", f"{prefix}_b"], [f"{prefix}_conv"], kernel_shape=[3, 3],
                         pads=[1, 1, 1, 1], strides=[stride, stride], name=f"{prefix}/Conv"),
             h.make_node("BatchNormalization", [f"{prefix}_conv", f"{prefix}_gamma", f"{prefix}_beta",
                                                f"{prefix}_mean", f"{prefix}_var"], [f"{prefix}_bn"],
                         epsilon=1e-5, name=f"{prefix}/BatchNormalization")]
    if relu:
        nodes.append(h.make_node("Relu", [f"{prefix}_bn"], [f"{prefix}_out"], name=f"{prefix}/Relu"))
    return nodes, f"{prefix}_out" if relu else f"{prefix}_bn"


def small_cnn() -> onnx.ModelProto:
    rng = np.random.default_rng(2)
    inits: list = []
    nodes, a = _conv_bn_relu(rng, inits, "stem", "image", 3, 8)
    nodes.append(h.make_node("MaxPool", [a], ["pool"], kernel_shape=[2, 2], strides=[2, 2], name="stem/MaxPool"))
    n2, b = _conv_bn_relu(rng, inits, "block", "pool", 8, 8, relu=False)
    nodes += n2
    nodes += [h.make_node("Add", [b, "pool"], ["res"], name="block/residual"),
              h.make_node("Relu", ["res"], ["res_relu"], name="block/Relu")]
    n3, c = _conv_bn_relu(rng, inits, "down", "res_relu", 8, 16, stride=2)
    nodes += n3
    inits += [_init(rng, "fc_w", (10, 16), 0.3), _init(rng, "fc_b", (10,), 0.1)]
    nodes += [h.make_node("GlobalAveragePool", [c], ["gap"], name="head/GlobalAveragePool"),
              h.make_node("Flatten", ["gap"], ["flat"], axis=1, name="head/Flatten"),
              h.make_node("Gemm", ["flat", "fc_w", "fc_b"], ["logits"], transB=1, name="head/Gemm")]
    x = h.make_tensor_value_info("image", T.FLOAT, ["N", 3, "H", "W"])
    y = h.make_tensor_value_info("logits", T.FLOAT, ["N", 10])
    return _model(nodes, [x], [y], inits, "small_cnn")


# name -> (shape of a, shape of b[, shape of c for Where]); strings are symbols
BROADCAST_CASES = {
    "dyn_dyn": (["a0", "a1"], ["b0", "b1"]),
    "one_dyn": ([1, "a1"], ["b0", "b1"]),
    "two_dyn": ([2, "a1"], ["b0", "b1"]),
    "dyn2_2dyn": (["a0", 2], [2, "b1"]),
    "static2x2_dyn": ([2, 2], ["b0", "b1"]),
    "static_1x5_3x5": ([1, 5], [3, 5]),
    "five_dyn": ([5], ["b0"]),
    "dyn_dyn_1d": (["a0"], ["b0"]),
    "rank_3x4_2x3x4": ([3, 4], [2, 3, 4]),
    "scalar_0d": ([], []),
    "select_2xdyn": ([2, "c1"], [2, "a1"], [2, "b1"]),
}


def broadcast_model(name: str) -> onnx.ModelProto:
    shapes = BROADCAST_CASES[name]
    if len(shapes) == 3:
        c, a, b = shapes
        inputs = [h.make_tensor_value_info("cond", T.BOOL, c), h.make_tensor_value_info("a", T.FLOAT, a),
                  h.make_tensor_value_info("b", T.FLOAT, b)]
        node = h.make_node("Where", ["cond", "a", "b"], ["y"], name="select")
    else:
        a, b = shapes
        inputs = [h.make_tensor_value_info("a", T.FLOAT, a), h.make_tensor_value_info("b", T.FLOAT, b)]
        node = h.make_node("Add", ["a", "b"], ["y"], name="add")
    rank = max(len(s) for s in shapes)
    y = h.make_tensor_value_info("y", T.FLOAT, [None] * rank)
    return _model([node], inputs, [y], [], f"broadcast_{name}")


def main():
    onnx.save(tiny_transformer(), os.path.join(HERE, "tiny_transformer.onnx"))
    onnx.save(small_cnn(), os.path.join(HERE, "small_cnn.onnx"))
    os.makedirs(os.path.join(HERE, "broadcast"), exist_ok=True)
    for name in BROADCAST_CASES:
        onnx.save(broadcast_model(name), os.path.join(HERE, "broadcast", f"{name}.onnx"))


if __name__ == "__main__":
    main()
