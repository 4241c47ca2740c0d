"""com.microsoft Attention and MultiHeadAttention against onnxruntime, at two or more bindings of
batch and sequence (and past length): every mask form tosaconv converts (none, dummy, [B] key
lengths, [B, T] and [B, S, T] 0/1 masks), unidirectional, attention_bias, custom scale and
mask_filter_value, unequal Q/V hidden sizes, cross attention, per-head K/V, a key/value cache
(past in, present out, causal over both); and the refusals (shared past/present buffers, rotary,
left-padding masks, packed QKV) with their messages."""
from __future__ import annotations

import numpy as np
import pytest
from onnx import TensorProto, helper

from tosaconv.diagnostics import TosaconvError

from .harness import F32, check_with_onnxruntime, const, convert, info, make_model, rand

MS = "com.microsoft"
I32 = TensorProto.INT32
HIDDEN, HEADS = 8, 2


def _model(op, inputs, node_inputs, outputs, inits=(), **attrs):
    node = helper.make_node(op, node_inputs, [o.name for o in outputs], name="attn", domain=MS, **attrs)
    model = make_model([node], inputs, outputs, inits, 17)
    model.opset_import.append(helper.make_opsetid(MS, 1))
    return model


def _attention(mask=None, bias_input=False, qkv=None, **attrs):
    """Attention on x [B, S, HIDDEN]; ``mask``: (name, dims) of an int32 mask input."""
    sizes = qkv or [HIDDEN] * 3
    inits = [const("w", rand(HIDDEN, sum(sizes), seed=1) * 0.5), const("b", rand(sum(sizes), seed=2))]
    inputs, names = [info("x", F32, ["B", "S", HIDDEN])], ["x", "w", "b", "", "", ""]
    if mask:
        inputs.append(info("mask", I32, mask))
        names[3] = "mask"
    if bias_input:
        inputs.append(info("ab", F32, [1, HEADS, "S", "S"]))
        names[5] = "ab"
    if qkv:
        attrs["qkv_hidden_sizes"] = qkv
    return _model("Attention", inputs, names, [info("y", F32, None)], inits, num_heads=HEADS, **attrs)


def _feeds(b, s, mask_kind=None, seed=0, bias_input=False):
    r = np.random.default_rng(seed)
    feeds = {"x": rand(b, s, HIDDEN, seed=seed)}
    if mask_kind == "lengths":
        feeds["mask"] = r.integers(1, s + 1, b).astype(np.int32)
    elif mask_kind == "2d":
        feeds["mask"] = (r.uniform(size=(b, s)) > 0.3).astype(np.int32)
        feeds["mask"][:, 0] = 1
    elif mask_kind == "3d":
        feeds["mask"] = (r.uniform(size=(b, s, s)) > 0.3).astype(np.int32)
        feeds["mask"][:, :, 0] = 1
    elif mask_kind == "dummy":
        feeds["mask"] = np.ones((b, 1), np.int32)
    if bias_input:
        feeds["ab"] = rand(1, HEADS, s, s, seed=seed + 7)
    return feeds


BINDINGS = [(2, 5), (1, 3)]
MASKS = {None: None, "lengths": ["B"], "2d": ["B", "S"], "3d": ["B", "S", "S"], "dummy": ["B", 1]}


@pytest.mark.parametrize("mask_kind", list(MASKS), ids=str)
@pytest.mark.parametrize("unidirectional", [0, 1])
def test_attention_masks(mask_kind, unidirectional):
    model = _attention(mask=MASKS[mask_kind], unidirectional=unidirectional)
    check_with_onnxruntime(model, [_feeds(b, s, mask_kind, seed=i) for i, (b, s) in enumerate(BINDINGS)])


def test_attention_bias_scale_and_filter_value():
    model = _attention(mask=MASKS["2d"], bias_input=True, scale=0.2, mask_filter_value=-50.0)
    check_with_onnxruntime(model, [_feeds(b, s, "2d", seed=i, bias_input=True) for i, (b, s) in enumerate(BINDINGS)])


def test_attention_unequal_qkv_hidden_sizes():
    model = _attention(qkv=[4, 4, 6])
    check_with_onnxruntime(model, [_feeds(b, s, seed=i) for i, (b, s) in enumerate(BINDINGS)])


@pytest.mark.parametrize("what,change,message", [
    ("shared buffer", lambda m: m.graph.node[0].attribute.append(helper.make_attribute("past_present_share_buffer",
                                                                                         1)),
     "past_present_share_buffer=1"),
    ("past length", lambda m: _with_input(m, 6, "plen", [1], I32), r"input past_sequence_length given \(a shared"),
    ("rotary", lambda m: m.graph.node[0].attribute.append(helper.make_attribute("do_rotary", 1)), "do_rotary=1"),
    ("left padding", lambda m: _with_input(m, 3, "mask", [6], I32), r"mask of shape \[6\]: input mask of shape \[2\*batch\] \(left padding\) or 4-D \(Megatron\) is not supported"),
])
def test_attention_refusals(what, change, message):
    model = _attention()
    model.graph.input[0].type.tensor_type.shape.dim[0].dim_value = 3   # a static batch: [2B] is then 6
    change(model)
    with pytest.raises(TosaconvError, match=message):
        convert(model)


def _with_input(model, index, name, dims, elem=F32):
    model.graph.input.append(info(name, elem, dims))
    node = model.graph.node[0]
    while len(node.input) <= index:
        node.input.append("")
    node.input[index] = name


def _with_output(model, name):
    model.graph.output.append(info(name, F32, None))
    model.graph.node[0].output.append(name)


# -- MultiHeadAttention -----------------------------------------------------------------------

def _mha(key_dims, value_dims, bias=False, mask=None, outputs=1, **attrs):
    inputs = [info("q", F32, ["B", "S", HIDDEN]), info("k", F32, key_dims), info("v", F32, value_dims)]
    names, inits = ["q", "k", "v", "", "", ""], []
    if bias:
        inits.append(const("bias", rand(HIDDEN * 2 + value_dims[-1], seed=3)))
        names[3] = "bias"
    if mask:
        inputs.append(info("mask", I32, mask))
        names[4] = "mask"
    outs = [info(n, F32, None) for n in ("y", "present_k", "present_v")[:outputs]]
    return _model("MultiHeadAttention", inputs, names, outs, inits, num_heads=HEADS, **attrs)


def _mha_feeds(b, s, length, per_head=False, mask=None, seed=0):
    kv = (b, HEADS, length, HIDDEN // HEADS) if per_head else (b, length, HIDDEN)
    feeds = {"q": rand(b, s, HIDDEN, seed=seed), "k": rand(*kv, seed=seed + 1), "v": rand(*kv, seed=seed + 2)}
    if mask == "2d":
        feeds["mask"] = (np.random.default_rng(seed).uniform(size=(b, length)) > 0.3).astype(np.int32)
        feeds["mask"][:, 0] = 1
    elif mask == "lengths":
        feeds["mask"] = np.random.default_rng(seed).integers(1, length + 1, b).astype(np.int32)
    return feeds


MHA_BINDINGS = [(2, 3, 5), (1, 4, 2)]


@pytest.mark.parametrize("bias,mask", [(False, None), (True, None), (True, "2d"), (False, "lengths")], ids=str)
def test_mha_cross_attention(bias, mask):
    mask_dims = {"2d": ["B", "L"], "lengths": ["B"]}.get(mask)
    model = _mha(["B", "L", HIDDEN], ["B", "L", HIDDEN], bias=bias, mask=mask_dims, outputs=3)
    check_with_onnxruntime(model, [_mha_feeds(b, s, ln, mask=mask, seed=i) for i, (b, s, ln) in
                                   enumerate(MHA_BINDINGS)])


def test_mha_self_attention_unidirectional_with_scale():
    model = _mha(["B", "S", HIDDEN], ["B", "S", HIDDEN], bias=True, unidirectional=1, scale=0.3)
    check_with_onnxruntime(model, [_mha_feeds(b, s, s, seed=i) for i, (b, s, _) in enumerate(MHA_BINDINGS)])


def test_mha_per_head_key_and_value():
    dims = ["B", HEADS, "L", HIDDEN // HEADS]
    model = _mha(dims, dims)
    check_with_onnxruntime(model, [_mha_feeds(b, s, ln, per_head=True, seed=i) for i, (b, s, ln) in
                                   enumerate(MHA_BINDINGS)])


def test_mha_past_key_without_past_value_is_refused():
    model = _mha(["B", "L", HIDDEN], ["B", "L", HIDDEN])
    _with_input(model, 6, "past_k", ["B", HEADS, "P", 4])
    with pytest.raises(TosaconvError, match="needs both past_key and past_value, or neither"):
        convert(model)


def test_mha_with_past_key_and_value_unidirectional():
    """A decoder step: past keys and values in front, causal over past + new, present outputs."""
    model = _mha(["B", "S", HIDDEN], ["B", "S", HIDDEN], bias=True, outputs=3, unidirectional=1)
    for i, name in ((6, "past_k"), (7, "past_v")):
        _with_input(model, i, name, ["B", HEADS, "P", HIDDEN // HEADS])
    feeds = []
    for i, (b, s, p) in enumerate([(2, 3, 4), (1, 1, 6)]):
        f = _mha_feeds(b, s, s, seed=i)
        f["past_k"], f["past_v"] = (rand(b, HEADS, p, HIDDEN // HEADS, seed=20 + i + j) for j in (0, 1))
        feeds.append(f)
    check_with_onnxruntime(model, feeds)


# -- Attention with a key/value cache ---------------------------------------------------------

@pytest.mark.parametrize("mask", [None, "2d"])
def test_attention_with_past_and_present(mask):
    """GPT-2 style: past [2, B, N, P, h], unidirectional, a [B, P+S] mask, the present output."""
    model = _attention(mask=["B", "T"] if mask else None, unidirectional=1)
    _with_input(model, 4, "past", [2, "B", HEADS, "P", HIDDEN // HEADS])
    _with_output(model, "present")
    feeds = []
    for i, (b, s, p) in enumerate([(2, 3, 4), (1, 1, 5)]):
        f = {"x": rand(b, s, HIDDEN, seed=i), "past": rand(2, b, HEADS, p, HIDDEN // HEADS, seed=10 + i)}
        if mask:
            f["mask"] = (np.random.default_rng(i).uniform(size=(b, p + s)) > 0.3).astype(np.int32)
            f["mask"][:, 0] = 1
        feeds.append(f)
    check_with_onnxruntime(model, feeds)


def test_mha_packed_qkv_is_refused():
    node = helper.make_node("MultiHeadAttention", ["qkv"], ["y"], name="attn", domain=MS, num_heads=HEADS)
    model = make_model([node], [info("qkv", F32, [1, 3, HEADS, 3, 4])], [info("y", F32, None)], (), 17)
    model.opset_import.append(helper.make_opsetid(MS, 1))
    with pytest.raises(TosaconvError, match="input query with packed Q, K and V \\(no key and value inputs\\) is not supported"):
        convert(model)


def test_attention_with_past_on_the_reference_model(tmp_path):
    from tosaconv.emit import read_tosa

    from .harness import check_reference_model, run_graph, specialize_and_emit
    model = _attention(mask=["B", "T"], unidirectional=1)
    _with_input(model, 4, "past", [2, "B", HEADS, "P", HIDDEN // HEADS])
    _with_output(model, "present")
    feeds = {"x": rand(2, 3, HIDDEN, seed=1), "past": rand(2, 2, HEADS, 4, HIDDEN // HEADS, seed=2),
             "mask": np.ones((2, 7), np.int32)}
    feeds["mask"][1, 5:] = 0
    static, tosa = specialize_and_emit(convert(model), {k: v.shape for k, v in feeds.items()})
    got = run_graph(read_tosa(tosa), feeds)
    check_reference_model(tosa, static, feeds, got, tmp_path)


def test_attention_unnamed_mask_length_is_tied_to_the_batch():
    """A [?] mask is taken as key lengths, with batch == its length in the ledger: binding it to twice
    the batch (the left-padding form) fails with that constraint."""
    from tosaconv import api
    from tosaconv.diagnostics import ShapeError
    model = _attention(mask=[None])
    graph = convert(model)
    f = _feeds(2, 5, "lengths", seed=3)
    check_with_onnxruntime(model, [f])
    # the recorded mask.0 == B makes the mask's type use B (seed 004), so solving the shapes already fails
    with pytest.raises(ShapeError, match=r"must equal 'B' \(mask.0 == B, recorded by Attention") as e:
        api.specialize(graph, api.solve_bindings(graph, {"x": (2, 5, HIDDEN), "mask": (4,)}))
    assert "one key length per batch entry" in str([(d.message, d.notes, d.hint) for d in e.value.diagnostics])
