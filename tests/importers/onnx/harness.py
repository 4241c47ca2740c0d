"""Shared helpers for the ONNX importer tests: build small models with
``onnx.helper`` (IR version 10 and an explicit opset, which onnxruntime 1.31
needs), convert them with tosaconv, run the IR with the numpy interpreter and
compare with onnxruntime; and run the onnx package's own node test cases. The
node cases feed shape operands (axes, shapes, slice bounds) as graph inputs;
tosaconv needs those as import-time constants, so the harness freezes exactly
the inputs listed in ``SHAPE_OPERANDS`` into initializers, with the case's own
values. Everything else about a case is left as the onnx package wrote it.
"""
from __future__ import annotations

import functools
import os
import tempfile
import warnings

import numpy as np

from tosaconv.diagnostics import TosaconvError
from tosaconv.interpreter import InputError
import onnx
import onnxruntime as ort
from onnx import TensorProto, helper, numpy_helper

from tosaconv import api
from tosaconv.emit import read_tosa
from tosaconv.interpreter import evaluate

RTOL, ATOL = 1e-4, 1e-5              # tosaconv against onnxruntime
CASE_RTOL, CASE_ATOL = 1e-3, 1e-5    # tosaconv against the node cases' expected outputs
F32, F16, I64, I32, BOOL = (TensorProto.FLOAT, TensorProto.FLOAT16, TensorProto.INT64, TensorProto.INT32,
                            TensorProto.BOOL)

# Node-case inputs (by position) that tosaconv requires at import time: each is the subject of a
# published limit of its op (``tosaconv ops``), which test_node_case_limits.py checks.
SHAPE_OPERANDS = {
    "ReduceSum": (1,), "ReduceMean": (1,), "ReduceMax": (1,), "ReduceMin": (1,), "ReduceProd": (1,),
    "ReduceL1": (1,), "ReduceL2": (1,), "ReduceLogSum": (1,), "ReduceLogSumExp": (1,), "ReduceSumSquare": (1,),
    "Reshape": (1,), "Expand": (1,), "ConstantOfShape": (0,), "Range": (0, 1, 2), "Tile": (1,),
    "Squeeze": (1,), "Unsqueeze": (1,), "Split": (1,), "Slice": (1, 2, 3, 4), "Pad": (1, 3),
    "Resize": (1, 2, 3),
    "Upsample": (1,),
    "TopK": (1,), "CumSum": (1,), "OneHot": (1,),
    "DFT": (1, 2), "STFT": (1, 3),   # dft_length and axis; frame_step and frame_length
    "Loop": (0, 1),  # the trip count and initial condition fix the iteration count (the scan outputs' length)
    "Compress": (1,),   # the condition's values are the output size
}


# -- building models -------------------------------------------------------------

def info(name: str, elem: int, dims) -> onnx.ValueInfoProto:
    """A graph input/output; ``dims`` holds ints, dim_param names, or None for unknown."""
    return helper.make_tensor_value_info(name, elem, dims)


def const(name: str, array) -> onnx.TensorProto:
    return numpy_helper.from_array(np.asarray(array), name)


def make_model(nodes, inputs, outputs, initializers=(), opset: int = 17) -> onnx.ModelProto:
    graph = helper.make_graph(list(nodes), "test", list(inputs), list(outputs), list(initializers))
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    model.ir_version = 10
    return model


def one_node(op_type: str, inputs, outputs, initializers=(), opset: int = 17, **attrs) -> onnx.ModelProto:
    """A model with one node; ``inputs``/``outputs`` are ValueInfos, initializers are added as inputs too."""
    names = [v.name for v in inputs] + [t.name for t in initializers]
    outs = [v.name for v in outputs]
    node = helper.make_node(op_type, names, outs, name=f"{op_type.lower()}_node", **attrs)
    return make_model([node], inputs, outputs, initializers, opset)


# -- running ------------------------------------------------------------------------

def convert(model: onnx.ModelProto):
    """The tosaconv IR graph for ``model`` (through a file, as users call it)."""
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "model.onnx")
        onnx.save(model, path)
        return api.load(path)


def run_graph(graph, feeds: dict) -> list:
    """Run a tosaconv graph on ``feeds`` (ONNX dtypes are narrowed as the importer narrows them)."""
    ir_feeds = {v.name: _narrow(feeds[v.name], v.type.dtype.numpy) for v in graph.inputs}
    result = evaluate(graph, ir_feeds)
    return [np.asarray(result[n]) for n in graph.output_names]


def _narrow(arr, dtype: np.dtype) -> np.ndarray:
    arr = np.asarray(arr)
    if arr.dtype.kind == "u" and np.dtype(dtype).kind == "i" and arr.dtype.itemsize == np.dtype(dtype).itemsize:
        return arr.view(dtype)   # uint8/uint16 model data: the program holds the same bits (tosaconv.io_dtypes)
    if arr.dtype.kind in "iu" and np.dtype(dtype).kind == "i" and arr.size:
        info_ = np.iinfo(dtype)
        if arr.max() > info_.max or arr.min() < info_.min:
            raise ValueError(f"input values do not fit in {np.dtype(dtype)}")
    return arr.astype(dtype)


def run_onnxruntime(model: onnx.ModelProto, feeds: dict, optimize: bool = True) -> list:
    """onnxruntime's outputs. ``optimize=False`` runs the graph node by node as written: for QDQ models,
    ONNX's own definition (dequantize, float op, quantize). Its fused u8s8 kernels are not a reference:
    on x86 CPUs without VNNI their int16 intermediate sums saturate (a documented onnxruntime limitation),
    which puts uint8-activation convolutions off by tens of units."""
    options = ort.SessionOptions()
    if not optimize:
        options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    session = ort.InferenceSession(model.SerializeToString(), options, providers=["CPUExecutionProvider"])
    return session.run(None, feeds)


def assert_close(got, want, rtol: float, atol: float, what: str = "output"):
    got, want = np.asarray(got), np.asarray(want)
    assert got.shape == want.shape, f"{what}: shape {got.shape} != expected {want.shape}"
    assert _kind(got) == _kind(want), f"{what}: dtype {got.dtype} does not match expected {want.dtype}"
    if _kind(want) == "f":
        np.testing.assert_allclose(got.astype(np.float64), want.astype(np.float64), rtol=rtol, atol=atol,
                                   equal_nan=True, err_msg=what)
    else:
        np.testing.assert_array_equal(got.astype(want.dtype), want, err_msg=what)


def _kind(a: np.ndarray) -> str:
    if a.dtype.name in ("int4", "uint4", "int2", "uint2"):   # ml_dtypes' narrow integers (kind "V")
        return "i"
    return {"u": "i"}.get(a.dtype.kind, a.dtype.kind)


def check_with_onnxruntime(model: onnx.ModelProto, feed_sets, rtol: float = RTOL, atol: float = ATOL,
                           specialized: bool = True):
    """Convert once, then compare with onnxruntime on every feed dict (e.g. several bindings).

    Both the symbolic program (symbols bound from the feeds) and, unless ``specialized`` is False,
    the static program specialized at the feeds' shapes, emitted as TOSA 1.0 and read back, must
    match. Pass ``specialized=False`` only for programs whose shapes depend on input data.
    """
    graph = convert(model)
    for feeds in feed_sets:
        want = run_onnxruntime(model, feeds)
        compare_both_paths(graph, feeds, want, rtol, atol, specialized)
    return graph


def compare_both_paths(graph, feeds: dict, want: list, rtol: float, atol: float, specialized: bool = True):
    """The symbolic program run on ``feeds`` and (unless not ``specialized``) the program specialized at
    the feeds' shapes, emitted, read back and run, must both match ``want``."""
    shapes = {k: np.shape(v) for k, v in feeds.items()}
    static_run = run_graph(read_tosa(specialize_and_emit(graph, shapes)[1]), feeds) if specialized else None
    for how, got in (("symbolic program", run_graph(graph, feeds)), ("emitted static .tosa", static_run)):
        if got is None:
            continue
        assert len(got) == len(want)
        for i, (g, w) in enumerate(zip(got, want)):
            assert_close(g, w, rtol, atol, f"{how}: output {i} with input shapes {shapes}")


def rand(*shape, low: float = -2.0, high: float = 2.0, seed: int = 0) -> np.ndarray:
    return np.random.default_rng(seed).uniform(low, high, shape).astype(np.float32)


# -- the onnx package's node test cases ------------------------------------------------

@functools.lru_cache(maxsize=None)
def _all_node_cases() -> tuple:
    # collect_testcases fills a module-level list once per process ("" = every op), so every
    # test module must get the cases from here rather than call it with its own op type.
    import onnx.backend.test.case.node as node_cases_module
    if node_cases_module._NodeTestCases and node_cases_module._TargetOpType:
        raise RuntimeError("collect_testcases was already called for one op type; use harness.node_cases")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return tuple(node_cases_module.collect_testcases(""))


def node_cases(op_type: str) -> list:
    """The single-node test cases of ``op_type`` (``*_expanded`` cases test other ops' function bodies)."""
    return [c for c in _all_node_cases()
            if [n.op_type for n in c.model.graph.node] == [op_type] and not c.name.endswith("_expanded")]


def case_arrays(case) -> tuple:
    inputs, outputs = case.data_sets[0]
    return [_as_array(a) for a in inputs], [_as_array(a) for a in outputs]


def _as_array(a) -> np.ndarray:
    if isinstance(a, list):
        return a  # a sequence value (no TOSA form; tosaconv must refuse the model, not crash here)
    return numpy_helper.to_array(a) if isinstance(a, onnx.TensorProto) else np.asarray(a)


# ONNX element types with no TOSA tensor type in the profiles tosaconv targets (PRO-FP, PRO-INT).
_NO_TOSA_TYPE = {
    "UINT": "TOSA has unsigned types only inside RESCALE",
    "STRING": "TOSA has no strings",
    "COMPLEX": "TOSA has no complex numbers",
    "BFLOAT16": "bf16 is the EXT-BF16 extension, outside PRO-FP",
    "FLOAT8": "fp8 types are TOSA extensions (or absent), outside PRO-FP",
    "FLOAT4": "TOSA has no 4-bit floats",
    "INT4": "TOSA has int4 only as convolution weights, not as CAST operands",
    "INT2": "TOSA has no 2-bit integers",
}


def no_tosa_equivalent(case, freeze: bool = True):
    """Why a case's data has no TOSA equivalent (element type, zero-size dims, int64 range), or None;
    with ``freeze``, the inputs :func:`run_node_case` freezes into constants are not data."""
    for vi in list(case.model.graph.input) + list(case.model.graph.output):
        if not vi.type.HasField("tensor_type"):
            return f"{vi.type.WhichOneof('value').replace('_type', '')} values (TOSA has only tensors)"
        name = TensorProto.DataType.Name(vi.type.tensor_type.elem_type)
        for prefix, why in _NO_TOSA_TYPE.items():
            if name.startswith(prefix):
                return f"{name} tensors ({why})"
    inputs, outputs = case_arrays(case)
    frozen = frozen_inputs(case.model) if freeze else set()
    data = [a for vi, a in zip(case.model.graph.input, inputs) if vi.name not in frozen]
    for a in data + outputs:
        if 0 in a.shape:
            return "a zero-size dim (TOSA requires every dim to be >= 1)"
        if a.dtype == np.int64 and a.size and (a.max() > 2**31 - 1 or a.min() < -2**31):
            return "int64 values beyond the int32 range (TOSA has no 64-bit integers)"
    return None


def frozen_inputs(model: onnx.ModelProto) -> set:
    """The names of the node's SHAPE_OPERANDS inputs that the model feeds (the harness freezes them)."""
    node = model.graph.node[0]
    return {node.input[i] for i in SHAPE_OPERANDS.get(node.op_type, ()) if i < len(node.input)}


def freeze_shape_operands(model: onnx.ModelProto, feeds: dict) -> tuple:
    """Move the node's SHAPE_OPERANDS inputs from graph inputs to initializers; returns (model, feeds)."""
    model = onnx.ModelProto.FromString(model.SerializeToString())
    frozen = frozen_inputs(model) & set(feeds)
    keep = [vi for vi in model.graph.input if vi.name not in frozen]
    del model.graph.input[:]
    model.graph.input.extend(keep)
    model.graph.initializer.extend(numpy_helper.from_array(feeds[n], n) for n in sorted(frozen))
    return model, {k: v for k, v in feeds.items() if k not in frozen}


# Cases whose expected data contradicts the operator's definition: they are compared with
# onnxruntime instead (and say why; test_quant_node_cases.py checks the difference exactly).
SPEC_CONTRADICTED = {
    f"test_qlinearmatmul_{d}_int8_{f}": "the expected data wraps out-of-range results (-236 stored as 20); "
                                        "ONNX specifies saturation, which onnxruntime and tosaconv do"
    for d in ("2D", "3D") for f in ("float32", "float16")
}


def run_node_case(case, reference_workdir=None, freeze: bool = True):
    """Run one node case the way a user's model goes, and compare with its expected outputs.

    Import; bind the symbols from the case's input shapes; specialize to static TOSA; emit the
    TOSA 1.0 flatbuffer and read it back; run the read-back program with the numpy interpreter.
    With ``reference_workdir``, the official reference model also runs the emitted ``.tosa`` and
    must agree with the numpy run. Without ``freeze``, the case runs as written (its SHAPE_OPERANDS
    stay graph inputs), as the onnx backend runner feeds it. Returns the static program.
    """
    inputs, outputs = case_arrays(case)
    feeds = {vi.name: a for vi, a in zip(case.model.graph.input, inputs)}
    model, feeds = freeze_shape_operands(case.model, feeds) if freeze else (case.model, feeds)
    graph = convert(model)
    static, tosa = specialize_and_emit(graph, {k: np.shape(v) for k, v in feeds.items()})
    got = run_graph(read_tosa(tosa), feeds)
    if reference_workdir is not None:
        check_reference_model(tosa, static, feeds, got, reference_workdir)
    if case.name in SPEC_CONTRADICTED:
        outputs = run_onnxruntime(model, feeds)
    rtol, atol = max(CASE_RTOL, case.rtol), max(CASE_ATOL, case.atol)
    assert len(got) == len(outputs)
    for i, (g, w) in enumerate(zip(got, outputs)):
        assert_close(g, w, rtol, atol, f"{case.name} output {i}")
    return static


def specialize_and_emit(graph, shapes: dict) -> tuple:
    """(static program, .tosa bytes) for ``graph`` at the bindings the input ``shapes`` imply."""
    static = api.specialize(graph, api.solve_bindings(graph, shapes))
    return static, api.emit(static)


def check_reference_model(tosa: bytes, static, feeds: dict, got: list, workdir):
    """The official reference model, running ``tosa`` on ``feeds``, agrees with our numpy outputs."""
    from tests.tosa_tools import run_reference_model  # noqa: PLC0415 (tests/ is not a package on sys.path for scripts)
    ir_feeds = {v.name: _narrow(feeds[v.name], v.type.dtype.numpy) for v in static.inputs}
    ref = run_reference_model(tosa, ir_feeds, static.output_names, workdir)
    fft_terms = max((op.operands[0].type.shape[1] * op.operands[0].type.shape[2] for op in static.ops
                     if op.op.name in ("FFT2D", "RFFT2D")), default=0)
    for name, g in zip(static.output_names, got):
        r = np.asarray(ref[name])
        if g.dtype.kind == "f":
            # FFT2D/RFFT2D: the spec's dot-product bound, 6 * KS rounding errors of 2^-24 relative to the
            # bound sum (which is at least the largest output); no tighter agreement is required
            atol = max(1e-6, 6 * fft_terms * float(np.nanmax(np.abs(g), initial=0)) * 2.0 ** -24)
            np.testing.assert_allclose(r.astype(np.float64), g.astype(np.float64), rtol=1e-5, atol=atol,
                                       equal_nan=True, err_msg=f"reference model vs numpy: {name}")
        else:
            np.testing.assert_array_equal(r.astype(g.dtype), g, err_msg=f"reference model vs numpy: {name}")


def run_or_refuse(case):
    """Run a case; one whose data TOSA has no type for must instead be refused with a tosaconv error.

    Such a case may also compute correctly (tosaconv narrows some types); what fails the test is a wrong
    answer or an exception that is not one of tosaconv's own, clear errors.
    """
    reason = no_tosa_equivalent(case)
    if reason is None:
        run_node_case(case)
        return
    try:
        run_node_case(case)
    except (TosaconvError, InputError) as e:
        assert str(e), f"{case.name}: refused ({reason}) without a message"
