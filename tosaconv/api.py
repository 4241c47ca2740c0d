"""The Python API: what the command line and Python users call.

``load`` reads a model (.onnx and .tflite import and runs the pass pipeline; .tosair
parses the text IR; .tosa reads a flatbuffer), ``specialize`` binds symbols
and returns a static program, ``emit`` writes TOSA 1.0 bytes, ``run``
executes a program with the numpy interpreter, ``describe`` gathers what
``tosaconv inspect`` shows, ``tosa_summary`` states the TOSA profiles, extensions and level a
program needs, ``check_profile`` / ``check_level`` refuse a program that needs more than
allowed (``--profile int``, ``--level 8k``), and ``state_as_io`` turns a program's variables
into inputs and outputs the caller carries. Every failure is a
:class:`~tosaconv.diagnostics.TosaconvError` with diagnostics.
"""
from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any, Literal, Mapping, Optional, overload

import numpy as np

from .diagnostics import ConversionError, ShapeError, TosaconvError, UsageError
from .io_dtypes import fit_random
from .ir.graph import Graph, walk_graphs
from .ir.types import TensorType, ValueType
from .limits import check_tensor
from .passes.manager import run_pipeline
from .passes.specialize import needed_symbols
from .passes.specialize import specialize as _specialize
from .symbolic.expr import dim_str, free_symbols, subs

if TYPE_CHECKING:
    from .emit.fbwrite import FlatPieces
    from .emit.symbolic import SymbolicTosa
    from .ir.io_quant import EdgeQuant
    from .symbolic.constraints import Constraint
    from .symbolic.scope import SymbolInfo


def load(path: str, npu_fast: bool = False, int_io: bool = False, dft: "str | None" = None,
         quantize_weights: bool = False) -> Graph:
    """``load`` with ``dft`` (``--dft``: auto, fft or matmul) choosing how Fourier transforms lower."""
    if dft is None:
        return _load(path, npu_fast, int_io, quantize_weights)
    from .lowering.dft import dft_mode
    with dft_mode(dft):
        return _load(path, npu_fast, int_io, quantize_weights)


def _load(path: str, npu_fast: bool = False, int_io: bool = False, quantize_weights: bool = False) -> Graph:
    """Read a model or program file into an IR graph (symbolic for models).

    ``npu_fast`` (TFLite models): lowerings that cost an NPU less but may differ from LiteRT's reference
    kernels by one unit of the output (see the README's ``--npu-fast``); exact ones by default. (ONNX: the
    integer LSTM with 8-bit instead of 16-bit weights, docs/integer-lstm.md.)
    ``int_io`` (``--int-io``): the float quantize at each input and dequantize at each output are
    removed, so the program takes and returns the integer tensors; ``graph.input_quant`` and
    ``graph.output_quant`` hold their scales and zero points (see tosaconv.importers.int_io).
    ``quantize_weights`` (ONNX; ``--profile int``): float weights of a Conv, ConvTranspose, MatMul or Gemm
    between DequantizeLinear and QuantizeLinear are quantized to int8, with a warning."""
    kind = _kind(path)
    if kind == "onnx":
        from .importers.onnx.driver import import_onnx
        return run_pipeline(import_onnx(path, int_io=int_io, quantize_weights=quantize_weights, npu_fast=npu_fast))
    if kind == "tflite":
        from .importers.tflite.driver import import_tflite
        return run_pipeline(import_tflite(path, npu_fast=npu_fast, int_io=int_io))
    graph = _parse_tosair(path) if kind == "tosair" else _read_tosa(path)
    if int_io and not graph.int_io:
        raise UsageError.one("E-INT-IO", f"--int-io applies when a model is imported; '{path}' is a "
                             f".{kind} program that was not imported with it",
                             hint="import the .onnx or .tflite model with --int-io (tosaconv import MODEL "
                                  "--int-io -o OUT.tosair, or convert it directly)")
    return graph


def _kind(path: str) -> str:
    ext = os.path.splitext(path)[1].lower()
    if ext in (".onnx", ".tflite", ".tosair", ".tosa"):
        return ext[1:]
    raise ConversionError.one("E-FORMAT", f"'{path}': unknown file type '{ext or '(none)'}'",
                              hint="tosaconv reads .onnx and .tflite models, .tosair programs and .tosa flatbuffers")


def _parse_tosair(path: str) -> Graph:
    from .ir.lexer import ParseError
    from .ir.parser import parse_graph
    try:
        with open(path, encoding="utf-8") as f:
            graph = parse_graph(f.read())
    except (ParseError, UnicodeDecodeError) as e:
        raise ConversionError.one("E-TOSAIR", f"cannot parse '{path}': {e}") from None
    _check_tensor_outputs(graph, path)
    return graph


def _check_tensor_outputs(graph: Graph, path: str) -> None:
    """A program to run or convert takes and returns tensors; an index value has no TOSA form to pass in or
    hand back (a shape the program needs comes from a tensor input's dims, GET_DIM)."""
    for v in graph.inputs:
        if not isinstance(v.type, TensorType):
            raise ConversionError.one("E-TOSAIR", f"'{path}' takes '{v.name}', an index value ({v.type}); "
                                      "program inputs must be tensors",
                                      hint="take a tensor and read the size with GET_DIM")
    for name, v in zip(graph.output_names, graph.outputs):
        if not isinstance(v.type, TensorType):
            raise ConversionError.one("E-TOSAIR", f"'{path}' returns '{name}', an index value ({v.type}); "
                                      "program outputs must be tensors", hint="return DIMS_TO_TENSOR of it")


def _read_tosa(path: str) -> Graph:
    from .emit import ReadError
    from .emit.reader import read_tosa
    try:
        with open(path, "rb") as f:
            graph = read_tosa(f.read())
    except ReadError as e:
        raise ConversionError.one("E-TOSA-READ", f"cannot read '{path}': {e}") from None
    # A 1.1-draft file with -1 dims is symbolic: the pipeline records its broadcast constraints, drops dead helpers.
    return run_pipeline(graph) if graph.scope.symbols else graph


def specialize(graph: Graph, bindings: Mapping[str, int]) -> Graph:
    """Bind every symbol and return the static program (raises ShapeError)."""
    return _specialize(graph, bindings)


@overload
def emit(graph: Graph, stream: Literal[False] = False) -> bytes: ...
@overload
def emit(graph: Graph, stream: bool) -> bytes | FlatPieces: ...


def emit(graph: Graph, stream: bool = False) -> bytes | FlatPieces:
    """The TOSA 1.0 flatbuffer of a static program (``stream``: see :func:`tosaconv.emit.write_tosa`)."""
    from .emit import EmitError, write_tosa
    try:
        return write_tosa(graph, stream=stream)
    except EmitError as e:
        raise ConversionError.one("E-EMIT", str(e), getattr(e, "location", None)) from None


def keep_symbols(graph: Graph, bindings: Mapping[str, int]) -> Graph:
    """Bind the symbols of ``bindings`` and keep every other one (``convert --keep-symbols``)."""
    from .passes.keep_symbols import keep_symbols as partial
    return partial(graph, bindings)


def emit_symbolic(graph: Graph, bindings: Mapping[str, int], kind: str = "tosa") -> SymbolicTosa:
    """A :class:`~tosaconv.emit.symbolic.SymbolicTosa`: the TOSA 1.1-draft bytes of a program that keeps
    symbols (EXT-SHAPE operators, -1 dims), and the constraints its asserts check or leave unchecked.
    ``kind`` "mlir" gives the same program as TOSA MLIR text (``?`` dims, ``!tosa.shape`` values)."""
    from .emit import EmitError
    from .emit.symbolic import write_symbolic_mlir, write_symbolic_tosa
    try:
        return (write_symbolic_mlir if kind == "mlir" else write_symbolic_tosa)(graph, dict(bindings))
    except EmitError as e:
        raise ConversionError.one("E-EMIT", str(e), getattr(e, "location", None)) from None


def emit_mlir(graph: Graph) -> bytes:
    """The static program as TOSA-dialect MLIR text (UTF-8), in MLIR's generic op form."""
    from .emit import EmitError
    from .emit.mlir import write_mlir
    try:
        return write_mlir(graph)
    except EmitError as e:
        raise ConversionError.one("E-EMIT", str(e), getattr(e, "location", None)) from None


def state_as_io(graph: Graph) -> dict[str, np.ndarray[Any, Any]]:
    """Turn each TOSA variable of ``graph`` (in place) into the input ``state_in:NAME`` and the output
    ``state_out:NAME``; returns the initial state ``{NAME: array}``, to pass to :func:`run` as ``state``.

    The program then needs no ``variable`` extension: the caller carries the state from one step to the
    next (see :mod:`tosaconv.passes.state_as_io`)."""
    from .ir.verifier import verify
    from .passes.manager import PassError
    from .passes.state_as_io import state_as_io as rewrite
    initial = rewrite(graph)
    problems = verify(graph)
    if problems:
        raise PassError("IR invalid after pass 'state-as-io': " + "; ".join(problems[:5]))
    return initial


def print_ir(graph: Graph) -> str:
    """The ``.tosair`` text of ``graph``; an op whose attributes have no text form is a conversion error."""
    from .ir.printer import NoTextForm, print_graph
    try:
        return print_graph(graph)
    except NoTextForm as e:
        where = f"{e.op.op.name} at {e.op.location}" if e.op is not None else "an op"
        raise ConversionError.one("E-NO-TEXT-FORM", f"the program cannot be written as .tosair text: {where}: {e}",
                                  hint="drop --ir (the integer LSTM that --profile int makes has no .tosair text form "
                                       "yet; the .tosa is complete without it)") from None


def run(graph: Graph, inputs: Mapping[str, Any], bindings: Optional[Mapping[str, int]] = None,
        state: Optional[dict[str, Any]] = None) -> dict[str, np.ndarray[Any, Any]]:
    """Run the numpy reference interpreter; symbols bind from the inputs' shapes.

    ``state`` (a dict, updated in place) carries a stateful program's variables from one call to the
    next: pass the same dict to run the steps of a streaming model; leave it out for a fresh start.
    A program whose state is I/O (:func:`state_as_io`) takes each state input it is not given from
    ``state`` (by variable name) and puts its state outputs back there."""
    from .interpreter import InputError, KernelError, evaluate
    from .passes.state_as_io import carry_in, carry_out
    try:
        known = None if bindings is None else dict(bindings)
        if state is None:
            return evaluate(graph, dict(inputs), known, state)
        outputs = evaluate(graph, carry_in(graph, inputs, state), known, state)
        carry_out(graph, outputs, state)
        return outputs
    except InputError as e:
        raise ShapeError.one("E-INPUT", str(e), hint="check the arrays given with --inputs") from None
    except KernelError as e:
        raise ConversionError.one("E-RUN", str(e), getattr(e, "location", None)) from None


def solve_bindings(graph: Graph, shapes: Mapping[str, Any]) -> dict[str, int]:
    """Symbol values from whole input shapes (``{"x": (2, 16)}``; any subset of the inputs)."""
    from .interpreter import InputError, bind_from_shapes
    unknown = [n for n in shapes if n not in {v.name for v in graph.inputs}]
    if unknown:
        names = ", ".join(v.name for v in graph.inputs)
        raise ShapeError.one("E-INPUT", f"the model has no input named {', '.join(map(repr, unknown))}",
                             hint=f"its inputs are: {names}")
    try:
        return bind_from_shapes(graph, {k: tuple(v) for k, v in shapes.items()}, require_all=False)
    except InputError as e:
        raise ShapeError.one("E-INPUT-SHAPE", str(e)) from None


def random_inputs(graph: Graph, bindings: Mapping[str, int], seed: int = 0) -> dict[str, np.ndarray[Any, Any]]:
    """Deterministic random inputs for every graph input at the bound shapes."""
    rng = np.random.default_rng(seed)
    out = {}
    missing = [s for s in needed_symbols(graph) if s not in bindings]
    if missing:
        raise ShapeError.one("E-UNBOUND-SYMBOL", f"random inputs need every symbol bound; unbound: {', '.join(missing)}",
                             hint=" ".join(f"--bind {s}=N" for s in missing))
    for v in graph.inputs:
        t = _tensor_type(v.type)
        shape = tuple(int(subs(d, bindings)) for d in t.shape)
        behind = ", ".join(f"{s}={bindings[s]}" for s in sorted(t.symbols()) if s in bindings)
        check_tensor(f"random input '{v.name}'", shape, t.dtype.numpy, behind)
        out[v.name] = _random_array(rng, t, shape)
    return fit_random(graph, out)   # valid data of the model's type (uint8 values, int4...)


def _tensor_type(t: ValueType) -> TensorType:
    """A graph input's or output's type: a tensor (an index value is never one, see _check_tensor_outputs)."""
    if not isinstance(t, TensorType):
        raise TypeError(f"a program's inputs and outputs are tensors, not {t}")
    return t


def _random_array(rng: np.random.Generator, t: TensorType, shape: tuple[int, ...]) -> np.ndarray[Any, Any]:
    if t.dtype.is_float:
        return rng.standard_normal(shape).astype(t.dtype.numpy)
    if t.dtype.name == "BOOL":
        return rng.integers(0, 2, shape).astype(np.bool_)
    info = np.iinfo(t.dtype.numpy)
    return rng.integers(max(info.min, -128), min(info.max, 127) + 1, shape).astype(t.dtype.numpy)


def describe(graph: Graph) -> dict[str, Any]:
    """Everything ``tosaconv inspect`` shows, as plain data."""
    return {
        "source": graph.source,
        "inputs": [_value_info(v.name, _tensor_type(v.type), graph.input_quant.get(v.name), graph.input_dtypes.get(v.name))
                   for v in graph.inputs],
        "outputs": [_value_info(n, _tensor_type(v.type), graph.output_quant.get(n), graph.output_dtypes.get(n))
                    for n, v in zip(graph.output_names, graph.outputs)],
        "int_io": graph.int_io,
        "symbols": [_symbol_info(i) for i in graph.scope.symbols.values()],
        "needed_symbols": needed_symbols(graph),
        "constraints": [_constraint_info(c) for c in graph.ledger.entries],
        "histogram": _histogram(graph),
        "op_count": len(graph.ops),
    }


def tosa_summary(graph: Graph, level: str = "8K") -> dict[str, Any]:
    """The profiles and extensions ``graph`` needs, its float islands, and whether it fits ``level``."""
    from .analysis import summary
    return summary(graph, level)


def check_profile(graph: Graph, profile: str | None) -> None:
    """Raise ConversionError (exit 3) listing every op outside ``profile`` ("int", "fp"; None: any)."""
    from .analysis import check_profile as check
    check(graph, profile)


def check_level(graph: Graph, level: str | None) -> None:
    """Raise ConversionError (exit 3) listing every op that breaks a limit of ``level`` ("8k"; None: no check)."""
    from .analysis import check_level as check
    check(graph, level)


def exact_program(graph: Graph) -> Graph:
    """The static program when ``graph`` needs no bindings and specializes, else ``graph`` itself:
    what ``inspect`` analyses, so that a model with static inputs gets the exact TOSA requirements."""
    if needed_symbols(graph) or _is_static(graph):
        return graph
    try:
        return specialize(graph, {})
    except TosaconvError:
        return graph


def _is_static(graph: Graph) -> bool:
    """Every op a TOSA op and every value static (a .tosa file, or an already specialized program)."""
    return all(op.op.tosa is not None and all(getattr(r.type, "is_static", False) for r in op.results)
               for g in walk_graphs(graph) for op in g.ops)


def _value_info(name: str, t: TensorType, quant: EdgeQuant | None = None, own: str | None = None) -> dict[str, Any]:
    """One input or output; a quantized one also has its scale, zero point and the model's own dtype, and
    one the program stores in another type (``own``: uint8, int64...) the model's dtype."""
    info: dict[str, Any] = {"name": name, "dtype": t.dtype.value, "shape": [d if isinstance(d, int) else dim_str(d) for d in t.shape],
            "symbols": sorted(t.symbols())}
    if quant is not None:
        info.update({"scale": quant.scale, "zero_point": quant.zero_point, "source_dtype": quant.source_dtype,
                     "unsigned": quant.unsigned})
    elif own is not None:
        info.update({"source_dtype": own, "unsigned": own.startswith("uint")})
    return info


def _symbol_info(info: SymbolInfo) -> dict[str, Any]:
    # "kind" is the report's name for the extent; "extent" is kept for existing consumers
    return {"name": info.name, "origin": info.origin, "kind": info.kind.value, "extent": info.kind.value,
            "bound": None if info.bound is None else dim_str(info.bound), "data_dependent": info.data_dependent}


def _constraint_info(c: Constraint) -> dict[str, Any]:
    # "text" is the report's name; "constraint" is kept for existing consumers
    p = c.provenance
    return {"text": c.text(), "constraint": c.text(), "kind": c.kind.value, "status": c.status.value,
            "op_type": p.op_type, "node": p.node, "location": p.where(), "reason": p.reason,
            "symbols": sorted(free_symbols(c.lhs) | free_symbols(c.rhs))}


def _histogram(graph: Graph) -> dict[str, dict[str, int]]:
    """source op type -> {TOSA op -> count}."""
    out: dict[str, dict[str, int]] = {}
    for op in graph.ops:
        for loc in op.location.parts():
            row = out.setdefault(loc.op_type, {})
            row[op.op.name] = row.get(op.op.name, 0) + 1
    return out
