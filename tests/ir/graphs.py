"""Hand-built graphs for the text-form and verifier tests, and a structural equivalence check.

Each ``build_*`` function returns a small graph that exercises one corner of
the IR (every attribute field type, weird names, each extent kind, each
constraint kind, fused locations, 0-d tensors and odd constant dtypes).
:func:`assert_equivalent` compares two graphs field by field, with dims
compared by normal form (``==`` on symbolic dims may raise by design).
"""
from __future__ import annotations

import math

import numpy as np

from tosaconv.ir import attrs as A
from tosaconv.ir.builder import Builder
from tosaconv.ir.dtypes import DType
from tosaconv.ir.graph import Graph
from tosaconv.ir.location import UNKNOWN_LOCATION, Location
from tosaconv.ir.ops import Op
from tosaconv.ir.printer import field_types
from tosaconv.ir.types import IndexType, TensorType
from tosaconv.ir.verifier import same_type
from tosaconv.symbolic.constraints import Constraint, Kind, Provenance
from tosaconv.symbolic.expr import floordiv, same, sym
from tosaconv.symbolic.scope import ExtentKind, SymbolInfo

F32, I8, I32 = DType.FP32, DType.INT8, DType.INT32


def tensor(dtype, *shape) -> TensorType:
    return TensorType(dtype, tuple(shape))


def at(op_type: str, name: str, source: str = "onnx") -> Location:
    return Location(op_type, name, source)


def build_tiny() -> Graph:
    """The example from the design brief: symbols, a constraint, GET_DIM feeding RESHAPE."""
    g = Graph(source="tiny.onnx (opset 17)")
    batch = g.scope.declare(SymbolInfo("batch", "input 'x' axis 0", input_name="x", axis=0))
    seq = g.scope.declare(SymbolInfo("seq", "input 'x' axis 1", input_name="x", axis=1))
    g.ledger.entries.append(Constraint(Kind.BROADCASTABLE, batch, seq,
                                       Provenance("Add", "add_1", "Add operands broadcast")))
    x = g.add_input("x", tensor(F32, batch, seq, 64))
    b = Builder(g)
    with b.at(at("Reshape", "r")):
        d0 = b.get_dim(x, 0)
        y = b.emit(Op.RESHAPE, x, d0, attrs=A.ReshapeAttrs((-1, seq, 16, 4)))
    g.set_outputs([y], ["logits"])
    return g


def build_every_field_type() -> Graph:
    """One op per attribute field type: float, str, DType, int, bool, tuple (with dims), ndarray."""
    g = Graph(source="fields.onnx")
    n = g.scope.declare(SymbolInfo("n", "input 'x' axis 0", input_name="x", axis=0))
    x = g.add_input("x", tensor(I8, n, 8, 8, 3))
    b = Builder(g, at("Conv", "conv"))
    w = b.const(np.arange(2 * 3 * 3 * 3, dtype=np.int8).reshape(2, 3, 3, 3))
    bias = b.const(np.zeros(2, np.int32))
    conv = A.Conv2dAttrs((1, 0, 0, 2), (2, 1), (1, 1), DType.INT32, input_zp=-3, weight_zp=0, local_bound=True)
    y = b.emit(Op.CONV2D, x, w, bias, attrs=conv)
    y = b.emit(Op.CLAMP, y, attrs=A.ClampAttrs(-0.0, 6.5e-300, "IGNORE"))
    y = b.emit(Op.RESCALE, y, attrs=A.RescaleAttrs((1 << 30, 1 << 29), (31, 30), 0, -128, True,
                                                   "DOUBLE_ROUND", True, False, False))
    y = b.emit(Op.CAST, y, attrs=A.CastAttrs(DType.FP16))
    y = b.emit(Op.PAD, y, attrs=A.PadAttrs((0, 0, 1, 1, 2, 2, 0, 0), float("-inf")))
    y = b.emit(Op.SLICE, y, attrs=A.SliceAttrs((0, 0, 0, 0), (floordiv(n + 1, 2), 3, 2, 1)))
    t = b.emit(Op.TABLE, b.const(np.array([[1, -2]], np.int8)), attrs=A.TableAttrs(np.arange(-128, 128, dtype=np.int8)))
    m = b.emit(Op.ARITHMETIC_RIGHT_SHIFT, t, t, attrs=A.ArithmeticRightShiftAttrs(round=True))
    m = b.emit(Op.MUL, m, m, attrs=A.MulAttrs(shift=0))
    mx = b.emit(Op.MAXIMUM, y, y, attrs=A.NanModeAttrs("IGNORE"))
    g.set_outputs([mx, m], ["y", "m"])
    return g


def build_floats() -> Graph:
    """Float attributes that must survive exactly: nan, +-inf, -0.0, subnormals, ints in float fields."""
    g = Graph()
    x = g.add_input("x", tensor(F32, 4))
    b = Builder(g, at("Clip", "c"))
    y = x
    for lo, hi in ((float("nan"), float("inf")), (-0.0, 0.1), (5e-324, 1.7976931348623157e308),
                   (-128, 127), (2.5e-8, 1 / 3)):   # TOSA requires min_val <= max_val
        y = b.emit(Op.CLAMP, y, attrs=A.ClampAttrs(lo, hi))
    g.set_outputs([y], ["y"])
    return g


WEIRD = ["onnx::MatMul_12", "/model/layer.0/Add_output_0", "a b", 'quote"d', "back\\slash",
         "ünï:cödé", "line\nbreak", "", "123", "min", "tab\there"]


def build_weird_names() -> Graph:
    """Value, output, op-type, node, graph and symbol names that need quoting."""
    g = Graph(name="my graph/1", source='weird "source"\n(opset 9)')
    s = g.scope.declare(SymbolInfo("x.0#2", "input 'a b' axis 0", input_name="a b", axis=0))
    g.scope.declare(SymbolInfo("min", "a reserved word as a symbol"))
    g.scope.declare(SymbolInfo('s "q"', "quotes in a symbol"))
    x = g.add_input("a b", tensor(F32, s))
    b, values = Builder(g), []
    for i, name in enumerate(WEIRD):
        with b.at(Location("com.ms:Op" if i % 2 else "Abs", name, source="tf lite" if i % 3 == 0 else "onnx")):
            values.append(b.emit(Op.ABS, values[-1] if values else x, name=name))
    g.set_outputs(values, [n + "!" for n in WEIRD])
    return g


def build_symbols_and_ledger() -> Graph:
    """Every extent kind (with and without bound, input, axis) and every constraint kind."""
    g = Graph(source="dyn.tflite")
    seq = g.scope.declare(SymbolInfo("seq", "input 'ids' axis 1", ExtentKind.EXACT, None, "ids", 1))
    g.scope.declare(SymbolInfo("nz.0", "NonZero 'nz' output axis 0", ExtentKind.UPPER_BOUND, floordiv(seq, 2) + 1))
    g.scope.declare(SymbolInfo("topk.k", "TopK 'tk' k value", ExtentKind.UNKNOWN))
    g.scope.declare(SymbolInfo("only_input", "no axis", input_name="ids"))
    g.scope.declare(SymbolInfo("only_axis", "no input", axis=3))
    k = sym("topk.k")
    for kind, lhs, rhs in ((Kind.EQ, seq, k), (Kind.BROADCASTABLE, seq, 4), (Kind.DIVISIBLE, 3 * seq, 4),
                           (Kind.GE, seq, k + 1)):
        g.ledger.entries.append(Constraint(kind, lhs, rhs, Provenance("MatMul", f"n_{kind.value}",
                                                                      f"'{kind.value}' because \"why\"")))
    x = g.add_input("ids", tensor(I32, 1, seq))
    g.set_outputs([x], ["ids"])
    return g


def build_locations() -> Graph:
    """Plain, fused, nested-fused, fused-with-own-head and internal locations."""
    g = Graph()
    x = g.add_input("x", tensor(F32, 2))
    conv, relu, add = at("Conv", "c"), at("Relu", "r", "tflite"), at("Add", "a b")
    locs = [conv, Location.fuse([conv, relu]), Location.fuse([conv, relu, add]),
            Location("Gemm", "head", "onnx", (conv, relu)), Location("X", "y", "onnx", (Location.fuse([conv, relu]), add)),
            UNKNOWN_LOCATION]
    b, y = Builder(g), x
    for loc in locs:
        with b.at(loc):
            y = b.emit(Op.EXP, y)
    g.set_outputs([y], ["y"])
    return g


def build_constants() -> Graph:
    """0-d tensors and constants of bool, int8, uint8, int64, fp16, float64 and empty shapes."""
    g = Graph()
    x = g.add_input("scalar", tensor(F32))
    q = g.add_input("q", tensor(I8))   # zero points other than 0 need int8 data (an ERROR_IF)
    b = Builder(g, at("Constant", "k"))
    arrays = [np.array(True), np.array([True, False, True]), np.array([-128, 0, 127], np.int8),
              np.array([[0, 255]], np.uint8), np.array(7, np.int64), np.array([1.5, -0.0, np.inf], np.float16),
              np.array([np.pi], np.float64), np.zeros((0, 3), np.float32), np.arange(24, dtype=np.int32).reshape(2, 3, 4),
              np.array([1.0, float("nan")], np.float32)]
    outs = [b.const(a) for a in arrays] + [b.emit(Op.NEGATE, q, attrs=A.NegateAttrs(1, -1)),
                                           b.emit(Op.NEGATE, x)]
    g.set_outputs(outs, [f"o{i}" for i in range(len(outs))])
    return g


def build_helpers() -> Graph:
    """Seed 001 helper and data-dependent ops on Index values."""
    g = Graph()
    s = g.scope.declare(SymbolInfo("s", "input 'x' axis 0", input_name="x", axis=0))
    x = g.add_input("x", tensor(F32, s, 6))
    b = Builder(g, at("Shape", "shape"))
    d0, d1, two = b.get_dim(x, 0), b.get_dim(x, 1), b.index(2)
    half = b.emit(Op.INDEX_FLOORDIV, d0, two)
    prod = b.emit(Op.INDEX_MUL, b.emit(Op.INDEX_ADD, half, d1), b.emit(Op.INDEX_MIN, d0, d1))
    e = b.extract_dim(b.dims_to_tensor([d0, prod]), 1)
    sl = b.emit(Op.DYN_SLICE, x, b.index(0), b.index(0), half, d1)
    ex = b.emit(Op.EXPAND_DIMS, sl, attrs=A.IndicesAttrs((0, 2)))
    io = b.emit(Op.IOTA, e, attrs=A.IotaAttrs(DType.INT32))
    g.set_outputs([ex, io, prod], ["slice", "iota", "prod"])
    return g


def build_empty() -> Graph:
    return Graph()


def build_regions() -> Graph:
    """Control flow: a COND_IF whose branches keep their own ledgers, one of them holding an IF on
    a captured Index value, next to a LOOP whose body has an iteration symbol."""
    g = Graph()
    n = g.scope.declare(SymbolInfo("n", "input 'x' axis 0", input_name="x", axis=0))
    it = g.scope.declare(SymbolInfo("loop.iteration", "iteration", ExtentKind.UPPER_BOUND, n))
    x, c = g.add_input("x", tensor(F32, n, 3)), g.add_input("c", tensor(DType.BOOL))
    b = Builder(g, at("If", "if"))
    d = b.get_dim(x, 0)
    then_g, else_g = _branch(g, "then", Op.ADD, n, d), _branch(g, "else", Op.SUB, n, None)
    y = b.create(Op.COND_IF, [c, x, d], A.CondIfAttrs(then_g, else_g)).result
    body = g.region_shell("body")
    body.add_input("loop.iteration", IndexType(it))
    acc = body.add_input("acc", tensor(F32, n, 3))
    body.set_outputs([acc, acc], ["acc", "slice"])
    attrs = A.LoopAttrs(body, 1, (), (), (1,), (1,), (n,))
    z = b.create(Op.LOOP, [d, y], attrs, name="loop").results
    g.set_outputs([y] + z, ["y", "acc", "stack"])
    return g


def _branch(g, name, op, n, d):
    r = g.region_shell(name)
    a, k = r.add_input("a", tensor(F32, n, 3)), r.add_input("k", IndexType(n))
    r.ledger.entries.append(Constraint(Kind.GE, n, 2, Provenance("If", "if", f"{name} branch")))
    b = Builder(r, at("If", name))
    y = b.emit(op, a, a)
    if d is not None:
        inner = [r.region_shell(f"inner_{s}") for s in ("then", "else")]
        for region, value in zip(inner, (1.0, 2.0)):
            v, rb = region.add_input("y", tensor(F32, n, 3)), Builder(region, at("If", "inner"))
            region.set_outputs([rb.emit(Op.ADD, v, rb.const(np.full((1, 3), value, np.float32)))], ["v"])
        y = b.create(Op.IF, [b.emit(Op.INDEX_MOD, k, b.index(2)), y], A.CondIfAttrs(*inner)).result
    r.set_outputs([y], ["out"])
    return r


ALL = [build_tiny, build_every_field_type, build_floats, build_weird_names, build_symbols_and_ledger,
       build_locations, build_constants, build_helpers, build_empty, build_regions]


# -- structural equivalence -------------------------------------------------------------

def _same_value(field_type, a, b) -> bool:
    if field_type is Graph:
        assert_equivalent(a, b)
        return True
    if field_type is np.ndarray:
        return a.dtype == b.dtype and a.shape == b.shape and a.tobytes() == b.tobytes()
    if field_type is tuple:
        return type(b) is tuple and len(a) == len(b) and all(same(x, y) for x, y in zip(a, b))
    if field_type is float and isinstance(a, float) and math.isnan(a):
        return isinstance(b, float) and math.isnan(b)
    return type(a) is type(b) and a == b and str(a) == str(b)  # str tells -0.0 from 0.0


def assert_same_attrs(a, b):
    assert type(a) is type(b)
    for name, t in field_types(type(a)):
        assert _same_value(t, getattr(a, name), getattr(b, name)), f"attribute {name} differs"


def _same_dim_or_none(a, b) -> bool:
    return (a is None and b is None) or (a is not None and b is not None and same(a, b))


def assert_same_symbols(a: Graph, b: Graph):
    assert list(a.scope.symbols) == list(b.scope.symbols)
    for name, x in a.scope.symbols.items():
        y = b.scope.symbols[name]
        assert (x.name, x.origin, x.kind, x.input_name, x.axis) == (y.name, y.origin, y.kind, y.input_name, y.axis)
        assert _same_dim_or_none(x.bound, y.bound)
    assert len(a.ledger.entries) == len(b.ledger.entries)
    for x, y in zip(a.ledger.entries, b.ledger.entries):
        assert x.kind is y.kind and same(x.lhs, y.lhs) and same(x.rhs, y.rhs) and x.provenance == y.provenance


def assert_equivalent(a: Graph, b: Graph):
    """Same name, source, inputs, ops (attrs, types, locations), outputs, symbols and ledger."""
    assert (a.name, a.source, a.output_names) == (b.name, b.source, b.output_names)
    assert [v.name for v in a.inputs] == [v.name for v in b.inputs]
    assert all(same_type(x.type, y.type) for x, y in zip(a.inputs, b.inputs))
    assert len(a.ops) == len(b.ops)
    for x, y in zip(a.ops, b.ops):
        assert x.op is y.op and x.location == y.location
        assert [v.name for v in x.operands] == [v.name for v in y.operands]
        assert [v.name for v in x.results] == [v.name for v in y.results]
        assert all(same_type(p.type, q.type) and q.producer is y for p, q in zip(x.results, y.results))
        assert_same_attrs(x.attrs, y.attrs)
    assert [v.name for v in a.outputs] == [v.name for v in b.outputs]
    assert_same_symbols(a, b)

