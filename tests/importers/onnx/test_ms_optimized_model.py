"""A whole model as onnxruntime's optimizers leave it: the BERT-like encoder of :mod:`.bert_like`
through ``onnxruntime.transformers.optimizer.optimize_model`` (EmbedLayerNormalization, Attention
reading its mask index, SkipLayerNormalization, BiasGelu) and then a session at
ORT_ENABLE_EXTENDED saved with ``optimized_model_filepath`` (FusedConv, FusedGemm, FusedMatMul).
tosaconv converts the optimized model, and at two bindings of batch and seq its outputs match
onnxruntime running the *unoptimized* model node by node; the official reference model running
the emitted .tosa agrees with the numpy interpreter."""
from __future__ import annotations

import collections

import numpy as np
import onnx
import onnxruntime as ort
import pytest

from tosaconv.emit import read_tosa

from .bert_like import HEADS, HIDDEN, bert_like, feeds
from .harness import check_reference_model, compare_both_paths, convert, run_graph, run_onnxruntime, \
    specialize_and_emit

FUSED = {("com.microsoft", op) for op in ("EmbedLayerNormalization", "Attention", "SkipLayerNormalization", "BiasGelu",
                                          "FusedConv", "FusedGemm", "FusedMatMul")}


@pytest.fixture(scope="module")
def models(tmp_path_factory):
    from onnxruntime.transformers.optimizer import optimize_model
    work = tmp_path_factory.mktemp("optimized")
    original = bert_like()
    onnx.save(original, str(work / "bert.onnx"))
    fused = optimize_model(str(work / "bert.onnx"), model_type="bert", num_heads=HEADS, hidden_size=HIDDEN,
                           opt_level=0)
    fused.save_model_to_file(str(work / "fused.onnx"))
    options = ort.SessionOptions()
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_EXTENDED
    options.optimized_model_filepath = str(work / "optimized.onnx")
    ort.InferenceSession(str(work / "fused.onnx"), options, providers=["CPUExecutionProvider"])
    return original, onnx.load(str(work / "optimized.onnx"))


def test_the_optimizers_wrote_the_fused_ops(models):
    ops = collections.Counter((n.domain, n.op_type) for n in models[1].graph.node)
    assert FUSED <= set(ops), ops
    assert ops[("com.microsoft", "Attention")] == 2 and ops[("com.microsoft", "SkipLayerNormalization")] == 4


def test_optimized_model_matches_onnxruntime_at_two_bindings(models, tmp_path):
    original, optimized = models
    graph = convert(optimized)
    for i, (batch, seq) in enumerate([(2, 6), (1, 9)]):
        f = feeds(batch, seq, seed=i)
        want = run_onnxruntime(original, f, optimize=False)
        compare_both_paths(graph, f, want, rtol=1e-4, atol=1e-4)
    f = feeds(2, 7, seed=5)
    static, tosa = specialize_and_emit(graph, {k: np.shape(v) for k, v in f.items()})
    got = run_graph(read_tosa(tosa), f)
    check_reference_model(tosa, static, f, got, tmp_path)
