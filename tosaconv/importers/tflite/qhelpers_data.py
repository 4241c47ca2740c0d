"""Quantization checks shared by TFLite's data-movement converters (``form="any"`` and their twins).

Data movement (RESHAPE, TRANSPOSE, GATHER, ...) copies stored values, so one
converter serves float and quantized models alike. What TFLite does when an
input and the output carry *different* scales or zero points varies by kernel
(checked against LiteRT 2.3 with BUILTIN_REF):

* most kernels copy the stored bits and never look at the parameters
  (reshape.cc, squeeze.cc, transpose.cc, slice.cc, strided_slice.cc,
  split.cc, split_v.cc, tile.cc, gather.cc, gather_nd.cc, depth_to_space.cc,
  space_to_depth.cc, resize_nearest_neighbor.cc): tosaconv copies them too,
  which is bit-exact;
* some refuse the model in Prepare (expand_dims.cc, unpack.cc, pack.cc,
  mirror_pad.cc, batch_to_space_nd.cc, space_to_batch_nd.cc, int8
  concatenation.cc, reduce.cc's REDUCE_MAX/REDUCE_MIN): their converters are
  wrapped with :func:`keeps_quant`, which refuses the same models with a
  ConvertError that says what to change.
"""
from __future__ import annotations

import functools
from typing import TYPE_CHECKING, Callable, Optional, Sequence

import numpy as np

from .quant import is_quantized
from .reader import ConvertError

if TYPE_CHECKING:
    from ...ir.graph import Value
    from ...lowering.context import Converted
    from .context import TfliteContext
    from .node import OpReader
    from .reader import TensorInfo


def _params(info: TensorInfo) -> tuple:
    p = info.quant
    return (tuple(np.asarray(p.scale, np.float32).reshape(-1).tolist()),
            tuple(np.asarray(p.zero_point, np.int64).reshape(-1).tolist()))


def same_quant(node: OpReader, inputs: Optional[Sequence[int]] = (0,)) -> None:
    """Refuse ``node`` unless its quantized ``inputs`` (indices; None: every input) and outputs share one
    scale and zero point, as the TFLite kernels listed in the module docstring require."""
    picked = range(len(node.inputs)) if inputs is None else inputs
    infos = [node.input_infos[i] for i in picked if i < len(node.input_infos)] + list(node.output_infos)
    infos = [i for i in infos if i is not None and is_quantized(i)]
    if not infos:
        return
    want = _params(infos[-1])
    for info in infos[:-1]:
        got = _params(info)
        if got != want:
            raise ConvertError(
                f"quantized {node.op_type} '{node.name}': input '{info.name}' has scale {list(got[0])} and zero "
                f"point {list(got[1])} but output '{infos[-1].name}' has scale {list(want[0])} and zero point "
                f"{list(want[1])}; TFLite's {node.op_type} kernel requires them equal (LiteRT refuses this "
                "model too); give both the same quantization or requantize with QUANTIZE first")


def keeps_quant(fn: Optional[Callable] = None, *, inputs: Optional[Sequence[int]] = (0,)) -> Callable:
    """Decorate a converter so that it first checks :func:`same_quant` (a no-op for float models)."""
    def wrap(convert: Callable[[TfliteContext, OpReader], Converted]) -> Callable[[TfliteContext, OpReader], Value]:
        @functools.wraps(convert)
        def checked(ctx: TfliteContext, node: OpReader) -> Value:
            same_quant(node, inputs)
            return convert(ctx, node)
        return checked
    return wrap(fn) if fn is not None else wrap
