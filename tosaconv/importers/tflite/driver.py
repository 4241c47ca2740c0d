"""The TFLite import driver: .tflite file in, symbolic IR graph out.

It reads the model (a clear error for truncated or foreign files), lists
*every* unsupported op of the main subgraph and of the subgraphs it reaches
through IF, WHILE and CALL_ONCE (builtin and custom, with counts and the
first op's location) before converting anything, declares one symbol per
dynamic input dim (``shape_signature`` -1 dims become ``<input>.<axis>``),
names inputs and outputs after the signature def when the model has one,
then runs each op's converter at that op's location (:func:`convert_ops`,
which the IF and WHILE converters call again for their subgraphs). Resource
variables become VARIABLE declarations at the top of the graph once every
op is converted (:mod:`.ops.variables`).
"""
from __future__ import annotations

import os
from collections import OrderedDict
from typing import TYPE_CHECKING, Sequence, Union

from ...diagnostics import ConversionError, Diagnostic
from ...gc_tuning import fewer_collections
from ...ir.dtypes import DType
from ...ir.graph import Graph
from ...ir.location import Location
from ...ir.ops import Op
from ...ir.types import TensorType
from ...symbolic.scope import SymbolInfo
from ..errors import Refusals, converting
from .context import ShapeTensor, TfliteContext
from .quant import is_quantized
from .node import OpReader
from .reader import NUMPY_TYPES, ConvertError, ModelReadError, TfliteModel, read_model
from .registry import NO_QUANTIZED_KERNEL, resolve, resolve_custom, supported_custom_ops
from .subgraph import reachable_subgraphs
from .int_io import declare_input, output_value
from .int_io import plan as int_io_plan

if TYPE_CHECKING:
    from ...symbolic.expr import Dim
    from .reader import OpInfo, Subgraph

INPUT_TYPES = {"FLOAT32": DType.FP32, "FLOAT16": DType.FP16, "INT32": DType.INT32, "INT64": DType.INT32,
               "INT16": DType.INT16, "INT8": DType.INT8, "BOOL": DType.BOOL,
               "UINT8": DType.INT8}   # uint8 bits in int8 storage (see quant.py)


@fewer_collections
def import_tflite(path: str, npu_fast: bool = False, int_io: bool = False) -> Graph:
    """The symbolic program of the model at ``path``. ``npu_fast``: the cheaper lowerings that may differ from
    LiteRT by 1 LSB (README, ``--npu-fast``); ``int_io``: integer inputs and outputs (see .int_io)."""
    model = _load(path)
    model.npu_fast = npu_fast
    _check_supported(model)
    graph = Graph(source=f"{os.path.basename(path)} (TFLite schema {model.version})", int_io=int_io)
    ctx = TfliteContext(graph, model)
    ctx.int_io = int_io_plan(model, _edge_names(ctx, model)) if int_io else None
    ctx.custom_options = _custom_options(model) if any(op.custom for op in model.ops) else {}
    _declare_inputs(ctx, model)
    convert_ops(ctx, model.ops)
    _set_outputs(ctx, model)
    if ctx.variables:   # filled by the VAR_HANDLE converters of ops/variables.py
        from .ops.variables import declare_variables   # here: most models hold no variable (start-up, issue 13)
        declare_variables(ctx)
    return graph


def _custom_options(model: TfliteModel) -> dict:
    """The options of the model's custom ops (ops/custom.py, imported only for a model that has one)."""
    from .ops.custom import read_custom_options
    return read_custom_options(model.data, [op.index for op in model.ops if op.custom])


def convert_ops(ctx: TfliteContext, ops: Sequence[OpInfo]) -> None:
    """Convert ``ops`` in order in ``ctx`` (the main subgraph, or an IF/WHILE body's context); the edge
    QUANTIZEs that --int-io removes are skipped."""
    skip = ctx.int_io.bypass if ctx.int_io is not None else ()
    refusals = Refusals()     # a refused op does not stop the walk: one run lists every refusal
    for op in ops:
        if op.index in skip or refusals.missing and refusals.blocks(op.inputs, op.outputs, op.op_type in _CALLS):
            continue
        try:
            _convert_op(ctx, op)
        except ConversionError as e:
            refusals.add(e, op.outputs)
    refusals.raise_any()


_CALLS = frozenset(("IF", "WHILE", "CALL", "CALL_ONCE"))   # their subgraphs may read any earlier tensor


def _edge_names(ctx: TfliteContext, model: TfliteModel) -> dict:
    """Tensor index -> the program's name for each graph input and output."""
    names = {i: model.input_names.get(i, ctx.keys[i]) for i in model.inputs}
    return {**names, **{i: model.output_names.get(i, ctx.keys[i]) for i in model.outputs}}


def _load(path: str) -> TfliteModel:
    try:
        with open(path, "rb") as f:
            data = f.read()
        model = read_model(data)
        model.data = data   # the file's bytes, for custom ops' options (ops/custom.py)
        return model
    except (OSError, ModelReadError) as e:
        raise ConversionError.one(
            "E-MODEL-READ", f"cannot read '{path}' as a TFLite model: {e}",
            hint="check that the file is a complete .tflite flatbuffer (a truncated download fails like this)") from None


def _check_supported(model: TfliteModel) -> None:
    missing: "OrderedDict[tuple, list]" = OrderedDict()
    for sub in _reachable(model):
        for op in sub.ops:
            quantized = quantized_op(sub, op)
            if resolve_custom(op.op_type) is None if op.custom else resolve(op.op_type, quantized) is None:
                name = sub.tensors[op.outputs[0]].name if op.outputs else f"op_{op.index}"
                form = "quantized " if quantized and not op.custom and resolve(op.op_type) is not None else ""
                missing.setdefault((op.custom, form, op.op_type), []).append(name)
    if not missing:
        return
    raise ConversionError([_unsupported(custom, form, op_type, names)
                           for (custom, form, op_type), names in missing.items()])


def _unsupported(custom: bool, form: str, op_type: str, names: list) -> Diagnostic:
    """One diagnostic for every op of one unsupported kind (``names``: their first outputs)."""
    what = f"custom op '{op_type}'" if custom else f"unsupported op {form}{op_type}"
    loc = Location("CUSTOM" if custom else op_type, names[0], source="tflite")
    if custom:
        hint = (f"tosaconv converts only the custom ops whose semantics are public ({', '.join(supported_custom_ops())}); "
                "re-export the model with builtin ops, or cut it before this op")
    elif form and op_type in NO_QUANTIZED_KERNEL:
        hint = (f"TFLite itself has no quantized {op_type} kernel ({NO_QUANTIZED_KERNEL[op_type]}), so LiteRT cannot "
                "run this model either; keep this op in float when you quantize the model")
    elif form:
        hint = (f"tosaconv converts the float form of {op_type} but not its quantized form yet; keep this op in "
                "float when you quantize the model, or run 'tosaconv ops' for the supported list")
    else:
        hint = "run 'tosaconv ops' for the supported list"
    return Diagnostic("E-UNSUPPORTED-OP", f"{what} (TFLite): {len(names)} op(s)", loc,
                      notes=(f"first op: '{names[0]}'",), hint=hint)


def _reachable(model: TfliteModel) -> list:
    """The main subgraph and those its IF, WHILE and CALL_ONCE ops reach."""
    try:
        return reachable_subgraphs(model)
    except ConvertError as e:
        raise ConversionError.one("E-MODEL-READ", str(e)) from None


def quantized_op(model: Union[TfliteModel, Subgraph], op: OpInfo) -> bool:
    """Whether ``op`` reads or writes quantized (int8/uint8/int16 with a scale) tensors (``model``: a
    TfliteModel for its main subgraph, or the Subgraph holding ``op``)."""
    known = op.quantized
    if known is None:   # (asked twice per op: when the model's ops are checked and when the op converts)
        tensors = model.tensors
        known = op.quantized = any(i >= 0 and is_quantized(tensors[i]) for i in (*op.inputs, *op.outputs))
    return known


def _declare_inputs(ctx: TfliteContext, model: TfliteModel) -> None:
    for index in model.inputs:
        t = model.tensors[index]
        key = ctx.keys[index]
        if t.type_name not in INPUT_TYPES:
            raise ConversionError.one("E-INPUT-TYPE", f"input '{t.name}' has type {t.type_name}, which TOSA has "
                                      "no tensors for")
        name = model.input_names.get(index, key)
        dims = t.signature if t.signature is not None and len(t.signature) == len(t.shape) else t.shape
        shape = tuple(_input_dim(ctx, name, axis, d) for axis, d in enumerate(dims))
        ctx.values[key] = ctx.graph.add_input(name, TensorType(INPUT_TYPES[t.type_name], shape))
        declare_input(ctx, index, name)


def _input_dim(ctx: TfliteContext, input_name: str, axis: int, d: int) -> Dim:
    if d > 0:
        return d
    if d == 0:
        raise ConversionError.one(
            "E-INPUT-SHAPE", f"input '{input_name}' axis {axis} has size 0; TOSA requires every dim to be >= 1")
    origin = f"input '{input_name}' axis {axis}"
    return ctx.graph.scope.declare(SymbolInfo(f"{input_name}.{axis}", origin, input_name=input_name, axis=axis))


def _convert_op(ctx: TfliteContext, op: OpInfo) -> None:
    entry = resolve_custom(op.op_type) if op.custom else resolve(op.op_type, quantized_op(ctx.sub, op))
    try:
        node = OpReader(op, ctx.keys, ctx.sub.tensors, entry.options)
    except Exception:    # (its location made only here: reading an op rarely fails)
        with converting(Location(op.op_type, "?", source="tflite"), ConvertError):
            raise
    loc = node.location
    b = ctx.b
    saved, b.location = b.location, loc     # what ``with b.at(loc), converting(loc, ...)`` does, in fewer calls
    try:
        if node.op_type in _INPUT_RANKS:
            _check_ranks(ctx, node)
        results = entry.fn(ctx, node)
    except Exception:
        with converting(loc, ConvertError):
            raise
    finally:
        b.location = saved
    if not isinstance(results, (list, tuple)):
        results = [results]
    for key, value in zip(node.outputs, results):
        if value is not None:
            ctx.values[key] = value


# the exact rank of each leading input (by position) the TFLite kernels of these ops accept
_INPUT_RANKS = {"CONV_2D": (4, 4), "DEPTHWISE_CONV_2D": (4, 4), "TRANSPOSE_CONV": (1, 4, 4), "CONV_3D": (5, 5),
                "AVERAGE_POOL_2D": (4,), "MAX_POOL_2D": (4,), "L2_POOL_2D": (4,), "FULLY_CONNECTED": (None, 2),
                "RESIZE_BILINEAR": (4,), "RESIZE_NEAREST_NEIGHBOR": (4,), "SPACE_TO_DEPTH": (4,),
                "DEPTH_TO_SPACE": (4,)}


def _check_ranks(ctx: TfliteContext, node: OpReader) -> None:
    """Operands of the wrong rank for their op are a model error, before a converter indexes their dims.
    The rank is the IR value's where one exists (a damaged file may declare another than its producer makes)."""
    for i, rank in enumerate(_INPUT_RANKS.get(node.op_type, ())):
        info = node.input_infos[i] if i < len(node.input_infos) else None
        if rank is None or info is None:
            continue
        value = ctx.values.get(node.inputs[i])
        have = len(info.shape) if value is None or not hasattr(value, "type") else value.type.rank
        if isinstance(value, ShapeTensor):
            have = 0 if value.scalar else 1
        if have != rank:
            raise ConvertError(f"{node.op_type} input {i} ('{info.name}') has rank {have}; the op takes rank {rank}")


def _set_outputs(ctx: TfliteContext, model: TfliteModel) -> None:
    values, names = [], []
    with ctx.b.at(Location("output", "graph outputs", source="tflite")):
        for index in model.outputs:
            key = ctx.keys[index]
            if not ctx.has(key):
                raise ConversionError.one("E-MODEL-READ", f"graph output '{key}' is never produced")
            name = model.output_names.get(index, key)
            v = output_value(ctx, index, name, ctx.tensor(key))
            if isinstance(ctx.values.get(key), ShapeTensor) or v.producer is None or v in values \
                    or v.producer.op is Op.CONST:
                v = ctx.b.emit(Op.IDENTITY, v, name=name)
            values.append(v)
            names.append(name)
    ctx.graph.set_outputs(values, names)


__all__ = ["import_tflite", "NUMPY_TYPES"]
