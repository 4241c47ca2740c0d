"""Shared helpers for the TFLite importer tests: build one-op models with
:class:`tosaconv.importers.tflite.builder.ModelBuilder`, convert them with
tosaconv, and compare with LiteRT's reference kernels (``BUILTIN_REF``).

``check_with_litert`` runs both the symbolic program (symbols bound from the
feeds) and the program specialized at the feeds' shapes, emitted as TOSA 1.0
and read back, the way the ONNX harness checks against onnxruntime.
``check_exact_with_litert`` is its integer form: the symbolic run, the
emitted run and the official reference model running the emitted ``.tosa``
must all equal LiteRT's reference kernels bit for bit (uint8 data travels as
int8 bits, the way tosaconv stores it).
"""
from __future__ import annotations

import os
import tempfile

import numpy as np
from ai_edge_litert.interpreter import Interpreter, OpResolverType

from tosaconv import api
from tosaconv.importers.tflite.builder import ModelBuilder  # noqa: F401  (re-exported for the tests)
from tests.importers.onnx.harness import (check_reference_model, compare_both_paths, rand,  # noqa: F401
                                          run_graph, specialize_and_emit)

RTOL, ATOL = 1e-4, 1e-5


def convert(data: bytes):
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "model.tflite")
        with open(path, "wb") as f:
            f.write(data)
        return api.load(path)


def run_litert(data: bytes, feeds: dict) -> list:
    """LiteRT's reference kernels on ``feeds`` (keyed by input tensor name, in model input order)."""
    interp = _interpreter(data)
    details = interp.get_input_details()
    for d in details:
        shape = np.shape(feeds[d["name"]])
        if tuple(d["shape"]) != shape:
            interp.resize_tensor_input(d["index"], list(shape), strict=False)
    interp.allocate_tensors()
    for d in details:
        interp.set_tensor(d["index"], np.asarray(feeds[d["name"]], d["dtype"]))
    interp.invoke()
    return [interp.get_tensor(d["index"]) for d in interp.get_output_details()]


def _interpreter(data: bytes) -> Interpreter:
    """Reference kernels; ops BUILTIN_REF lacks (CEIL, ROUND, ELU) use the builtin kernels without XNNPACK."""
    try:
        return Interpreter(model_content=data, experimental_op_resolver_type=OpResolverType.BUILTIN_REF)
    except ValueError as e:
        if "Didn't find op" not in str(e):
            raise
        return Interpreter(model_content=data,
                           experimental_op_resolver_type=OpResolverType.BUILTIN_WITHOUT_DEFAULT_DELEGATES)


def check_with_litert(data: bytes, feed_sets, rtol: float = RTOL, atol: float = ATOL, names=None):
    """Convert once, then compare with LiteRT on every feed dict (e.g. several bindings).

    ``names`` maps LiteRT's input tensor names to tosaconv's input names when a signature renames them.
    """
    graph = convert(data)
    names = names or {}
    for feeds in feed_sets:
        want = run_litert(data, feeds)
        compare_both_paths(graph, {names.get(k, k): v for k, v in feeds.items()}, want, rtol, atol)
    return graph


def check_exact_with_litert(data: bytes, feed_sets, workdir, names=None, reference: bool = True):
    """Convert once; on every feed dict, LiteRT's reference kernels, tosaconv's symbolic and emitted runs
    and (when ``reference``) the official reference model must agree exactly. Returns the graph."""
    graph = convert(data)
    names = names or {}
    for n, feeds in enumerate(feed_sets):
        want = run_litert(data, feeds)
        ours = {names.get(k, k): as_stored(v) for k, v in feeds.items()}
        compare_both_paths(graph, ours, want, 0.0, 0.0)
        if reference:
            static, tosa = specialize_and_emit(graph, {k: np.shape(v) for k, v in ours.items()})
            check_reference_model(tosa, static, ours, run_graph(static, ours), os.path.join(str(workdir), str(n)))
    return graph


def as_stored(array) -> np.ndarray:
    """uint8 data as the int8 bits tosaconv stores it in; anything else unchanged."""
    array = np.asarray(array)
    return array.view(np.int8) if array.dtype == np.uint8 else array


def unary_model(op: str, shape, signature=None, options=None, dtype="FLOAT32", out_dtype=None, **fields) -> bytes:
    m = ModelBuilder()
    x = m.input("x", shape, dtype, signature)
    y = m.tensor("y", shape, out_dtype or dtype, signature)
    m.op(op, [x], [y], options, **fields)
    m.output(y)
    return m.finish()


def binary_model(op: str, a_shape, b_shape, out_shape, signature=None, options=None, dtype="FLOAT32",
                 out_dtype=None, **fields) -> bytes:
    m = ModelBuilder()
    a = m.input("a", a_shape, dtype, signature)
    b = m.input("b", b_shape, dtype)
    y = m.tensor("y", out_shape, out_dtype or dtype, signature)
    m.op(op, [a, b], [y], options, **fields)
    m.output(y)
    return m.finish()
