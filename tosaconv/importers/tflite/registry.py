"""The TFLite converter registry: ``@converter("CONV_2D", options="Conv2DOptions")``.

TFLite ops are named by their builtin code (``tflite.BuiltinOperator``); one
converter handles every version of an op (versions add operand types, which
the converter checks itself). ``options`` names the op's builtin options
table in the schema, so :class:`OpReader.opt` can read fields with the
schema's defaults even when the model leaves the table out.

An op is *quantized* when one of its operands or results is an int8, uint8
or int16 tensor with a scale (:func:`tosaconv.importers.tflite.quant.is_quantized`).
Each converter says which form it handles with ``kind``: ``"float"`` (the
default), ``"quantized"``, or ``"any"`` for ops whose arithmetic does not
depend on the encoding (TFLite requires equal scales through RESHAPE,
TRANSPOSE and their kin). An op's form picks its converter, so a float
converter never sees int8 data it would treat as plain integers.
"""
from __future__ import annotations

from ...records import dataclass   # dataclasses' classes, built faster (issue 13)
from typing import Callable, Optional

from . import ops as _families   # the family modules, imported when an op is first resolved

_REGISTRY: dict = {}   # (op name, kind) -> Entry
_LOADED: set = set()   # (op name, quantized) and ("custom", code) whose family modules are imported

# Builtin ops with a float converter whose int8/uint8/int16 form TFLite's own kernels refuse (checked with
# LiteRT 2.3's reference kernels), for the error message: op -> the kernel source that says so. CAST,
# FLOOR_DIV and FLOOR_MOD are absent: TFLite runs them on the stored integers, ignoring scales.
NO_QUANTIZED_KERNEL = {
    "POW": "pow.cc", "FLOOR": "floor.cc", "CEIL": "ceil.cc", "ROUND": "round.cc", "SIN": "elementwise.cc",
    "COS": "elementwise.cc", "SQUARE": "elementwise.cc", "LOGICAL_AND": "logical.cc", "LOGICAL_OR": "logical.cc",
    "LOGICAL_NOT": "elementwise.cc", "ZEROS_LIKE": "zeros_like.cc", "RANGE": "range.cc", "ADD_N": "add_n.cc",
    "CUMSUM": "cumsum.cc",
}
FORMS = ("float", "quantized", "any")   # which form of an op a converter takes: float, quantized, or both


@dataclass(frozen=True)
class Entry:
    fn: Callable
    options: Optional[str]


def converter(*op_types: str, options: Optional[str] = None, form: str = "float") -> Callable:
    if form not in FORMS:
        raise ValueError(f"converter form must be one of {FORMS}, not {form!r}")

    def register(fn: Callable) -> Callable:
        for op_type in op_types:
            taken = [f for f in FORMS if (op_type, f) in _REGISTRY and (f == form or "any" in (f, form))]
            if taken:
                raise ValueError(f"two TFLite converters for {op_type} ({form} and {taken[0]})")
            _REGISTRY[(op_type, form)] = Entry(fn, options)
        return fn
    return register


def resolve(op_type: str, quantized: bool = False) -> Optional[Entry]:
    """The converter for ``op_type`` in its float or quantized form, or None."""
    if (op_type, quantized) not in _LOADED:
        _families.load(op_type, quantized)
        _LOADED.add((op_type, quantized))
    return _REGISTRY.get((op_type, "quantized" if quantized else "float")) or _REGISTRY.get((op_type, "any"))


def support_table() -> list:
    """One row per TFLite builtin op with a converter: ``{"op_type", "forms"}``, forms from ("float", "quantized")."""
    _families.load_all()
    names = sorted({op for op, _ in _REGISTRY})
    return [{"op_type": op, "forms": [f for f, q in (("float", False), ("quantized", True)) if resolve(op, q)]}
            for op in names]


def supported_ops(quantized: bool = False) -> list:
    """The names of the TFLite builtin ops with a converter for the float (or quantized) form, sorted."""
    _families.load_all()
    return sorted({op for op, _ in _REGISTRY if resolve(op, quantized) is not None})


_CUSTOM: dict = {}   # custom code -> Entry (TFLite CUSTOM ops whose semantics are public; see ops/custom.py)


def custom_converter(custom_code: str) -> Callable:
    """Register the converter of the TFLite custom op ``custom_code`` (options: ``ctx.custom_options``)."""
    def register(fn: Callable) -> Callable:
        if custom_code in _CUSTOM:
            raise ValueError(f"two TFLite converters for custom op {custom_code}")
        _CUSTOM[custom_code] = Entry(fn, None)
        return fn
    return register


def resolve_custom(custom_code: str) -> Optional[Entry]:
    """The converter for the custom op ``custom_code``, or None."""
    if ("custom", custom_code) not in _LOADED:
        _families.load_custom(custom_code)
        _LOADED.add(("custom", custom_code))
    return _CUSTOM.get(custom_code)


def supported_custom_ops() -> list:
    """The custom codes with a converter, sorted."""
    _families.load_all()
    return sorted(_CUSTOM)
