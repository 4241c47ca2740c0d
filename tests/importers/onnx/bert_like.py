"""A small BERT-like encoder built with ``onnx.helper`` the way PyTorch exports one (opset 14):
word, token-type and position embeddings (position ids sliced from a constant by the input's
length), then layers of self-attention with the usual additive key mask, residual adds,
decomposed LayerNorms (ReduceMean/Sub/Pow/Sqrt/Div) and an erf Gelu feed-forward, and a
Conv/Gemm/Transpose-MatMul head. onnxruntime's optimizers fuse these patterns into the
com.microsoft ops (EmbedLayerNormalization, Attention, SkipLayerNormalization, BiasGelu, FusedConv,
FusedGemm, FusedMatMul),
which is what the whole-model test converts. Symbolic ``batch`` and ``seq``."""
from __future__ import annotations

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

HIDDEN, HEADS, FFN, VOCAB, MAX_POSITIONS = 16, 2, 32, 30, 12


class _Builder:
    def __init__(self, seed: int):
        self.nodes, self.inits, self.rng, self.count = [], [], np.random.default_rng(seed), 0

    def name(self, base: str) -> str:
        self.count += 1
        return f"{base}_{self.count}"

    def const(self, array, base: str = "c") -> str:
        n = self.name(base)
        self.inits.append(numpy_helper.from_array(np.asarray(array), n))
        return n

    def weight(self, *shape, scale: float = 0.3) -> str:
        return self.const((self.rng.standard_normal(shape) * scale).astype(np.float32), "w")

    def op(self, op_type: str, inputs, **attrs) -> str:
        out = self.name(op_type.lower())
        self.nodes.append(helper.make_node(op_type, list(inputs), [out], name=out, **attrs))
        return out

    def linear(self, x: str, n_in: int, n_out: int) -> str:
        return self.op("Add", [self.weight(n_out, scale=0.1), self.op("MatMul", [x, self.weight(n_in, n_out)])])

    def layer_norm(self, x: str) -> str:
        mean = self.op("ReduceMean", [x], axes=[-1])
        centered = self.op("Sub", [x, mean])
        var = self.op("ReduceMean", [self.op("Pow", [centered, self.const(np.float32(2.0))])], axes=[-1])
        std = self.op("Sqrt", [self.op("Add", [var, self.const(np.float32(1e-12))])])
        normed = self.op("Div", [centered, std])
        return self.op("Add", [self.op("Mul", [normed, self.weight(HIDDEN)]), self.weight(HIDDEN, scale=0.1)])

    def gelu(self, x: str) -> str:
        erf = self.op("Erf", [self.op("Div", [x, self.const(np.float32(1.4142135381698608))])])
        return self.op("Mul", [self.op("Mul", [x, self.op("Add", [erf, self.const(np.float32(1.0))])]),
                               self.const(np.float32(0.5))])


def _heads(b: _Builder, x: str, perm) -> str:
    shaped = b.op("Reshape", [x, b.const(np.array([0, 0, HEADS, HIDDEN // HEADS], np.int64))])
    return b.op("Transpose", [shaped], perm=perm)


def _attention(b: _Builder, x: str, mask_term: str) -> str:
    q = _heads(b, b.linear(x, HIDDEN, HIDDEN), [0, 2, 1, 3])
    k = _heads(b, b.linear(x, HIDDEN, HIDDEN), [0, 2, 3, 1])
    v = _heads(b, b.linear(x, HIDDEN, HIDDEN), [0, 2, 1, 3])
    scores = b.op("Div", [b.op("MatMul", [q, k]), b.const(np.float32(np.sqrt(HIDDEN // HEADS)))])
    probs = b.op("Softmax", [b.op("Add", [scores, mask_term])], axis=-1)
    merged = b.op("Transpose", [b.op("MatMul", [probs, v])], perm=[0, 2, 1, 3])
    merged = b.op("Reshape", [merged, b.const(np.array([0, 0, HIDDEN], np.int64))])
    return b.linear(merged, HIDDEN, HIDDEN)


def _layer(b: _Builder, x: str, mask_term: str) -> str:
    x = b.layer_norm(b.op("Add", [_attention(b, x, mask_term), x]))
    ffn = b.linear(b.gelu(b.linear(x, HIDDEN, FFN)), FFN, HIDDEN)
    return b.layer_norm(b.op("Add", [ffn, x]))


def _mask_term(b: _Builder) -> str:
    m = b.op("Unsqueeze", [b.op("Unsqueeze", ["attention_mask", b.const(np.array([1], np.int64))]),
                           b.const(np.array([2], np.int64))])
    m = b.op("Cast", [m], to=TensorProto.FLOAT)
    return b.op("Mul", [b.op("Sub", [b.const(np.float32(1.0)), m]), b.const(np.float32(-10000.0))])


def _head(b: _Builder, x: str):
    """A conv over the sequence (FusedConv), a pooled Gemm (FusedGemm), a transposed MatMul (FusedMatMul)."""
    channels = b.op("Transpose", [x], perm=[0, 2, 1])                        # [B, H, S]
    conv = b.op("Relu", [b.op("Conv", [channels, b.weight(HIDDEN, HIDDEN, 3), b.weight(HIDDEN)], pads=[1, 1])])
    pooled = b.op("Flatten", [b.op("GlobalAveragePool", [conv])])           # [B, H]
    logits = b.op("Relu", [b.op("Gemm", [pooled, b.weight(4, HIDDEN), b.weight(4)], transB=1)])
    sim = b.op("Mul", [b.op("MatMul", [x, b.op("Transpose", [x], perm=[0, 2, 1])]), b.const(np.float32(0.25))])
    return logits, sim


def _embeddings(b: _Builder) -> str:
    """Words + token types + positions (ids 0..seq-1 sliced from a constant, as PyTorch exports them)."""
    words = b.op("Gather", [b.weight(VOCAB, HIDDEN, scale=1.0), "input_ids"])
    types = b.op("Gather", [b.weight(2, HIDDEN, scale=1.0), "token_type_ids"])
    seq = b.op("Gather", [b.op("Shape", ["input_ids"]), b.const(np.array(1, np.int64))], axis=0)
    seq = b.op("Unsqueeze", [seq, b.const(np.array([0], np.int64))])
    ids = b.op("Slice", [b.const(np.arange(MAX_POSITIONS, dtype=np.int64).reshape(1, -1)),
                         b.const(np.array([0], np.int64)), seq, b.const(np.array([1], np.int64))])
    positions = b.op("Gather", [b.weight(MAX_POSITIONS, HIDDEN, scale=1.0), ids])
    return b.layer_norm(b.op("Add", [b.op("Add", [words, types]), positions]))


def bert_like(layers: int = 2, seed: int = 0) -> onnx.ModelProto:
    b = _Builder(seed)
    x = _embeddings(b)
    mask_term = _mask_term(b)
    for _ in range(layers):
        x = _layer(b, x, mask_term)
    logits, sim = _head(b, x)
    b.nodes.append(helper.make_node("Identity", [x], ["last_hidden_state"], name="out0"))
    b.nodes.append(helper.make_node("Identity", [logits], ["logits"], name="out1"))
    b.nodes.append(helper.make_node("Identity", [sim], ["similarity"], name="out2"))
    inputs = [helper.make_tensor_value_info(n, TensorProto.INT64, ["batch", "seq"])
              for n in ("input_ids", "attention_mask", "token_type_ids")]
    outputs = [helper.make_tensor_value_info("last_hidden_state", TensorProto.FLOAT, ["batch", "seq", HIDDEN]),
               helper.make_tensor_value_info("logits", TensorProto.FLOAT, ["batch", 4]),
               helper.make_tensor_value_info("similarity", TensorProto.FLOAT, ["batch", "seq", "seq"])]
    graph = helper.make_graph(b.nodes, "bert_like", inputs, outputs, b.inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 14)])
    model.ir_version = 8
    return model


def feeds(batch: int, seq: int, seed: int = 0) -> dict:
    r = np.random.default_rng(seed)
    mask = np.ones((batch, seq), np.int64)
    mask[0, seq // 2 + 1:] = 0          # right padding on the first sequence
    return {"input_ids": r.integers(0, VOCAB, (batch, seq)).astype(np.int64), "attention_mask": mask,
            "token_type_ids": (np.arange(seq) >= seq // 2).astype(np.int64)[None].repeat(batch, 0)}
