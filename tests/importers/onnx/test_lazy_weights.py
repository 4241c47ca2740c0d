"""Large ONNX weights are read as views of the file's bytes, equal to what onnx itself reads.

Truth is ``onnx.load`` + ``numpy_helper.to_array`` on the same file. The
views must be views (sharing one buffer, the file's bytes), small tensors
must stay in the message, and a weight whose data length disagrees with its
dims is still refused by name.
"""
from __future__ import annotations

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

from tosaconv import api
from tosaconv.diagnostics import TosaconvError
from tosaconv.importers.onnx.lazy_weights import MIN_BYTES, initializer_array, read_model

_ARRAYS = {
    "w_f32": np.random.default_rng(0).standard_normal((64, 32)).astype(np.float32),
    "w_f16": np.random.default_rng(1).standard_normal((40, 40)).astype(np.float16),
    "w_i8": np.random.default_rng(2).integers(-128, 128, (33, 65)).astype(np.int8),
    "w_i64": np.arange(300, dtype=np.int64),
    "w_bool": np.random.default_rng(3).integers(0, 2, 2000).astype(bool),
    "w_f64": np.linspace(-1, 1, 200),
    "small": np.ones(4, np.float32),
}


def _model_file(tmp_path, arrays: dict) -> str:
    nodes = [helper.make_node("Identity", [name], [f"{name}_out"]) for name in arrays]
    outputs = [helper.make_tensor_value_info(f"{name}_out", helper.np_dtype_to_tensor_dtype(a.dtype), a.shape)
               for name, a in arrays.items()]
    graph = helper.make_graph(nodes, "g", [], outputs, [numpy_helper.from_array(a, n) for n, a in arrays.items()])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    path = str(tmp_path / "m.onnx")
    onnx.save(model, path)
    return path


def test_weights_equal_onnx_reads_and_are_views_of_one_buffer(tmp_path):
    path = _model_file(tmp_path, _ARRAYS)
    model, raw = read_model(path)
    full = {t.name: numpy_helper.to_array(t) for t in onnx.load(path).graph.initializer}
    assert sorted(raw) == sorted(n for n, a in _ARRAYS.items() if a.nbytes >= MIN_BYTES)
    bases = set()
    for t in model.graph.initializer:
        if t.name in raw:
            assert not t.HasField("raw_data")
            got = initializer_array(t, raw[t.name])
            bases.add(id(raw[t.name].base))
        else:
            got = numpy_helper.to_array(t)
        want = full[t.name]
        assert got.dtype == want.dtype and got.shape == want.shape
        np.testing.assert_array_equal(got, want)
    assert len(bases) == 1 and isinstance(raw["w_f32"].base, bytes)


def test_nodes_and_metadata_survive_the_walk(tmp_path):
    path = _model_file(tmp_path, _ARRAYS)
    model, _ = read_model(path)
    full = onnx.load(path)
    assert [n.SerializeToString() for n in model.graph.node] == [n.SerializeToString() for n in full.graph.node]
    assert model.opset_import == full.opset_import and model.graph.output == full.graph.output


def test_a_wrong_data_length_is_still_refused_by_name(tmp_path):
    model = onnx.load(_model_file(tmp_path, {"w_f32": _ARRAYS["w_f32"]}))
    t = model.graph.initializer[0]
    t.raw_data = t.raw_data[:-4]
    path = str(tmp_path / "short.onnx")
    onnx.save(model, path)
    with pytest.raises(TosaconvError) as e:
        api.load(path)
    assert "initializer 'w_f32'" in str(e.value) and "holds 8188 bytes, not 8192" in str(e.value)


def test_converted_weights_match_onnx(tmp_path):
    path = _model_file(tmp_path, {"w_f32": _ARRAYS["w_f32"], "w_i8": _ARRAYS["w_i8"]})
    out = api.run(api.load(path), {})
    np.testing.assert_array_equal(out["w_f32_out"], _ARRAYS["w_f32"])
    np.testing.assert_array_equal(out["w_i8_out"], _ARRAYS["w_i8"])


def test_a_file_that_is_not_protobuf_gets_onnx_own_error(tmp_path):
    path = tmp_path / "bad.onnx"
    path.write_bytes(b"\xff" * 100)
    with pytest.raises(TosaconvError) as e:
        api.load(str(path))
    assert "cannot read" in str(e.value) and "as an ONNX model" in str(e.value)


def test_initializer_types_it_leaves_alone(tmp_path):
    bf16 = helper.make_tensor("w_bf16", TensorProto.BFLOAT16, [1024], np.zeros(1024, np.uint16).tobytes(), raw=True)
    graph = helper.make_graph([], "g", [], [], [bf16])
    path = str(tmp_path / "bf.onnx")
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), path)
    model, raw = read_model(path)
    assert raw == {} and model.graph.initializer[0].HasField("raw_data")


def _constant_model_file(tmp_path, arrays: dict, name: str = "c.onnx") -> str:
    """Each array as a Constant node's ``value`` (the way some exporters store every weight), then Add 0."""
    nodes, outputs = [], []
    for key, a in arrays.items():
        nodes.append(helper.make_node("Constant", [], [key], value=numpy_helper.from_array(a, f"t_{key}")))
        nodes.append(helper.make_node("Identity", [key], [f"{key}_out"]))
        outputs.append(helper.make_tensor_value_info(f"{key}_out", helper.np_dtype_to_tensor_dtype(a.dtype), a.shape))
    graph = helper.make_graph(nodes, "g", [], outputs)
    path = str(tmp_path / name)
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), path)
    return path


def test_constant_node_values_are_views_equal_to_onnx_reads(tmp_path):
    from tosaconv.importers.onnx.lazy_weights import constant_array
    from tosaconv.importers.onnx.reader import NodeReader
    path = _constant_model_file(tmp_path, _ARRAYS)
    model, raw = read_model(path)
    assert sorted(raw) == sorted(n for n, a in _ARRAYS.items() if a.nbytes >= MIN_BYTES)
    for node in model.graph.node:
        if node.op_type != "Constant":
            continue
        key = node.output[0]
        got = constant_array(NodeReader(node, 17), raw)
        if _ARRAYS[key].nbytes < MIN_BYTES:
            assert got is None and node.attribute[0].t.HasField("raw_data")
            continue
        want = numpy_helper.to_array(onnx.load(path).graph.node[[n.output[0] for n in onnx.load(path).graph.node]
                                                                .index(key)].attribute[0].t)
        assert got.dtype == want.dtype and got.shape == want.shape and isinstance(got.base.base, bytes)
        np.testing.assert_array_equal(got, want)
    out = api.run(api.load(path), {})
    for key, a in _ARRAYS.items():
        np.testing.assert_array_equal(out[f"{key}_out"], a.astype(np.float32) if a.dtype == np.float64 else a)


def test_a_constant_with_a_wrong_data_length_is_still_refused_by_name(tmp_path):
    model = onnx.load(_constant_model_file(tmp_path, {"w_f32": _ARRAYS["w_f32"]}))
    t = model.graph.node[0].attribute[0].t
    t.raw_data = t.raw_data[:-4]
    path = str(tmp_path / "short.onnx")
    onnx.save(model, path)
    assert "w_f32" in read_model(path)[1]   # taken out, so the length check sees the size lazy_weights found
    with pytest.raises(TosaconvError) as e:
        api.load(path)
    assert "attribute 'value' of node" in str(e.value) and "holds 8188 bytes, not 8192" in str(e.value)
