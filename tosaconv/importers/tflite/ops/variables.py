"""TFLite resource variables: VAR_HANDLE, READ_VARIABLE, ASSIGN_VARIABLE and CALL_ONCE.

VAR_HANDLE gives a resource tensor naming a variable by (container,
shared_name); every handle with the same pair, in any subgraph, is the same
variable (LiteRT's resource table). READ_VARIABLE becomes VARIABLE_READ and
ASSIGN_VARIABLE VARIABLE_WRITE, so the state persists from one run of the
program to the next. CALL_ONCE runs its init subgraph on the first run only;
tosaconv converts that subgraph at import into a scratch graph in *init mode*,
where ASSIGN_VARIABLE records a constant as the variable's initial value
(an initial value computed by ops is refused). When every op is converted,
:func:`declare_variables` puts one VARIABLE declaration per variable the
program uses at the top of the graph; a variable only written starts at
zeros, and one read before any assignment is refused (LiteRT fails such a
read). Variables inside IF/WHILE bodies are refused: TOSA regions cannot
declare them and tosaconv does not thread them through.
"""
from __future__ import annotations

from ....records import dataclass   # dataclasses' classes, built faster (issue 13)
from typing import TYPE_CHECKING, Optional, Union

import numpy as np

from ....ir import attrs as A
from ....ir.graph import Graph
from ....ir.location import Location
from ....ir.ops import Op
from ....ir.region_rules import same_type
from ....ir.types import TensorType
from ...errors import converting
from ..context import TfliteContext
from ..reader import ConvertError
from ..registry import converter
from ..subgraph import called_subgraphs

if TYPE_CHECKING:
    from ....lowering.context import Converted
    from ..node import OpReader
    from ..reader import TensorInfo


@dataclass(eq=False)
class Variable:
    name: str                               # the IR variable's name (the shared_name, made unique)
    type: Optional[TensorType] = None       # from the first access in the program
    initial: Optional[np.ndarray] = None    # from CALL_ONCE's init subgraph
    first: Optional[str] = None             # "read" or "write": the program's first access


def _string(value: Union[bytes, str, None]) -> str:
    return value.decode("utf-8", errors="replace") if isinstance(value, bytes) else (value or "")


@converter("VAR_HANDLE", options="VarHandleOptions", form="any")
def convert_var_handle(ctx: TfliteContext, node: OpReader) -> Converted:
    if ctx.in_region:
        raise ConvertError("resource variables inside IF/WHILE bodies are not supported; TOSA declares variables "
                           "in the main graph only (move the variable access out of the control flow)")
    key = (_string(node.opt("Container")), _string(node.opt("SharedName")))
    var = ctx.variables.get(key)
    if var is None:
        taken = {v.name for v in ctx.variables.values()}
        base = key[1] or node.name
        name, n = base, 1
        while name in taken:
            n += 1
            name = f"{base}_{n}"
        var = ctx.variables[key] = Variable(name)
    ctx.resources[node.outputs[0]] = var
    return None


def _variable(ctx: TfliteContext, node: OpReader) -> Variable:
    var = ctx.resources.get(node.inputs[0])
    if var is None:
        raise ConvertError(f"'{node.inputs[0]}' is not a resource tensor made by VAR_HANDLE in this subgraph")
    return var


@converter("READ_VARIABLE", form="any")
def convert_read_variable(ctx: TfliteContext, node: OpReader) -> Converted:
    var = _variable(ctx, node)
    if ctx.init_mode:
        raise ConvertError(f"the CALL_ONCE init subgraph reads variable '{var.name}'; tosaconv folds only init "
                           "subgraphs that assign constants")
    if var.type is None:
        var.type = _declared_type(node.output_infos[0], var)
    var.first = var.first or "read"
    return ctx.b.emit(Op.VARIABLE_READ, attrs=_ref(var))


@converter("ASSIGN_VARIABLE", form="any")
def convert_assign_variable(ctx: TfliteContext, node: OpReader) -> Converted:
    var = _variable(ctx, node)
    if ctx.init_mode:
        return _assign_initial(ctx, node, var)
    value = ctx.tensor(node.inputs[1])
    if var.type is None:
        var.type = _static(value.type, var)
    elif not same_type(var.type, value.type):
        raise ConvertError(f"variable '{var.name}' holds {var.type}, but this assigns {value.type}; TOSA variables "
                           "keep one type")
    var.first = var.first or "write"
    ctx.b.create(Op.VARIABLE_WRITE, [value], _ref(var))
    return []


@converter("CALL_ONCE", options="CallOnceOptions", form="any")
def convert_call_once(ctx: TfliteContext, node: OpReader) -> Converted:
    (init,) = called_subgraphs(ctx.model, ctx.sub, node.info)
    if ctx.in_region or ctx.init_mode:
        raise ConvertError("CALL_ONCE is supported only in the main subgraph")
    if init.index in ctx.once:
        return []
    ctx.once.add(init.index)
    from ..driver import convert_ops   # the driver imports the converters
    child = TfliteContext(Graph(name="init"), ctx.model, init)
    child.variables, child.once, child.init_mode = ctx.variables, ctx.once, True
    child.custom_options = getattr(ctx, "custom_options", {})
    convert_ops(child, init.ops)
    return []


def _assign_initial(ctx: TfliteContext, node: OpReader, var: Variable) -> list:
    held = ctx.lookup(node.inputs[1])
    p = getattr(held, "producer", None)
    if p is not None and p.op is Op.CONST:
        held = p.attrs.values
    if not isinstance(held, np.ndarray):
        raise ConvertError(f"the CALL_ONCE init subgraph assigns variable '{var.name}' a value computed by ops; "
                           "tosaconv folds only constant initial values (assign a constant tensor instead)")
    var.initial = held
    return []


def _declared_type(info: TensorInfo, var: Variable) -> TensorType:
    from ..driver import INPUT_TYPES
    dims = info.signature if info.signature is not None and len(info.signature) == len(info.shape) else info.shape
    if info.type_name not in INPUT_TYPES:
        raise ConvertError(f"variable '{var.name}' holds {info.type_name} values, which TOSA has no tensors for")
    return _static(TensorType(INPUT_TYPES[info.type_name], tuple(int(d) for d in dims)), var)


def _static(t: TensorType, var: Variable) -> TensorType:
    if not all(isinstance(d, int) and d >= 1 for d in t.shape):
        raise ConvertError(f"variable '{var.name}' has type {t}; TOSA variables need a static shape")
    return t


def _ref(var: Variable) -> A.VariableRefAttrs:
    return A.VariableRefAttrs(var.name, var.type.dtype, tuple(var.type.shape))


def declare_variables(ctx: TfliteContext) -> None:
    """One VARIABLE op per variable the program accesses, at the top of the main graph."""
    decls = []
    for var in ctx.variables.values():
        if var.type is None:
            continue   # only the init subgraph touches it
        with ctx.b.at(Location("VAR_HANDLE", var.name, source="tflite")), \
                converting(ctx.b.location, ConvertError):
            initial = _initial(var)
            attrs = A.VariableAttrs(var.name, var.type.dtype, tuple(var.type.shape), initial)
            decls.append(ctx.b.create(Op.VARIABLE, [], attrs))
    for op in decls:
        ctx.graph.ops.remove(op)
    ctx.graph.ops[:0] = decls


def _initial(var: Variable) -> np.ndarray:
    t = var.type
    if var.initial is None:
        if var.first == "read":
            raise ConvertError(f"variable '{var.name}' is read before anything assigns it (no CALL_ONCE init "
                               "assigns it a constant); LiteRT fails on such a read")
        return np.zeros(t.shape, t.dtype.numpy)
    arr = np.asarray(var.initial)
    if tuple(arr.shape) != tuple(t.shape):
        raise ConvertError(f"variable '{var.name}' is initialized with shape {list(arr.shape)} but used as {t}")
    if arr.dtype == np.uint8 and t.dtype.numpy == np.int8:
        return arr.view(np.int8)   # uint8 bits in int8 storage (see quant.py)
    out = arr.astype(t.dtype.numpy)
    if not np.array_equal(out.astype(arr.dtype), arr):
        raise ConvertError(f"variable '{var.name}' has initial values that {t.dtype.name} cannot hold")
    return out


