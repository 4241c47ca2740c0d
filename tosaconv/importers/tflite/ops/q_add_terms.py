"""The input terms of quantized ADD and SUB as few RESCALEs as exactness allows (an NPU pays per RESCALE).

TFLite scales each input as ``MultiplyByQuantizedMultiplierSmallerThanOneExp((q - zp) << left_shift, m)``:
two roundings, which tosaconv's general form spells as two RESCALEs (``(q - zp) << left_shift``, then a
DOUBLE_ROUND one). A *form* here is one RESCALE of the stored input, ``(q - zp) * multiplier >> shift``,
and every form is accepted only after checking it on every value the input type holds:

* :func:`exact_form`: a form equal to TFLite's term on every stored value. The intervals of multipliers
  that round each value correctly are intersected exactly; it always exists for the larger-scale input
  (``m = 1/2``: ``(q - zp) << (left_shift - 1)``) and rarely for the other, whose two roundings no single
  rounding reproduces.
* :func:`pair_forms` (8-bit inputs): forms for both inputs whose *sum* gives TFLite's output on every
  pair of stored values (65,536 pairs). A form may be off by one in the term (``2**-20`` of an input
  unit) on a few values as long as no such sum crosses a rounding boundary of the output, which is how
  the smaller-scale input usually gets one RESCALE exactly.
* :func:`nearest_form` (``--npu-fast``): the single rounding of the same product, within 1 of the term.

With one RESCALE per input Vela fuses the whole ADD (input and output scaling) into one NPU elementwise op.
"""
from __future__ import annotations

from ....records import dataclass   # dataclasses' classes, built faster (issue 13)
from typing import TYPE_CHECKING, Optional, Sequence

import numpy as np

from ....interpreter.fixed_point import apply_scale_32
from ....ir import attrs as A
from ....ir.dtypes import DType
from ....ir.ops import Op
from ..qmath import F32, signed_input
from ..quant import scale, tosa_multiplier, value_range, zero_point

if TYPE_CHECKING:
    from ....ir.graph import Value
    from ..context import TfliteContext
    from ..reader import TensorInfo

EIGHT_BIT = ("INT8", "UINT8")


@dataclass(frozen=True)
class Form:
    """One RESCALE of the stored input: ``apply_scale_32(q - zp, multiplier, shift, double)``."""
    multiplier: int
    shift: int
    double: bool = False

    def apply(self, d: np.ndarray) -> np.ndarray:
        return apply_scale_32(d, self.multiplier, self.shift, double_round=self.double)


def emit_form(ctx: TfliteContext, x: Value, info: TensorInfo, form: Form) -> Value:
    """The RESCALE of ``form`` on the stored input ``x`` (uint8 through its signed storage)."""
    x, zp = signed_input(ctx, x, info)
    attrs = A.RescaleAttrs((form.multiplier,), (form.shift,), zp, 0, scale32=True,
                           rounding_mode="DOUBLE_ROUND" if form.double else "SINGLE_ROUND", output_dtype=DType.INT32)
    return ctx.b.emit(Op.RESCALE, x, attrs=attrs)


def offsets(info: TensorInfo) -> np.ndarray:
    """Every ``q - zp`` the input can hold, largest magnitudes first (they narrow an interval fastest)."""
    lo, hi = value_range(info)
    d = np.arange(lo - zero_point(info), hi - zero_point(info) + 1, dtype=np.int64)
    return d[np.argsort(-np.abs(d), kind="stable")]


def term(d: np.ndarray, left_shift: int, real: float) -> np.ndarray:
    """TFLite's input term (what the general two-RESCALE form computes, tested against LiteRT)."""
    m, shift = tosa_multiplier(real)
    return apply_scale_32(d << left_shift, m, shift, double_round=True)


def exact_form(info: TensorInfo, left_shift: int, real: float) -> Optional[Form]:
    """A Form equal to the term on every stored value, or None."""
    d = offsets(info)
    want = term(d, left_shift, real)
    m0, s0 = tosa_multiplier(real)
    if m0 == 0:   # a real multiplier that rounds to 0 (a denormal scale ratio): no exact form to search
        return None
    top = min(62, (((1 << 31) - 1) * (1 << s0) // (m0 << left_shift)).bit_length() - 1)
    for shift in (top, top - 1):
        for double in (False, True) if shift > 31 else (False,):     # DOUBLE_ROUND differs only above 31
            m = _fitting_multiplier(d, want, shift, double) if shift >= 2 else None
            if m is not None:
                return Form(m, shift, double)
    return None


def nearest_form(left_shift: int, real: float) -> Form:
    """``(q - zp) * m / 2**(shift - left_shift)`` rounded once: TFLite rounds the same product twice (at bit
    31, then by the exponent), and two roundings of one value land at most 1 apart."""
    m, shift = tosa_multiplier(real)
    return Form(m, shift - left_shift)


def pair_forms(infos: Sequence[TensorInfo], left_shift: int, sign: int, real_out: float, reals: list) -> Optional[tuple[Form, Form]]:
    """Forms for both 8-bit inputs whose sum (``sign`` -1: difference) gives TFLite's output RESCALE result on
    every pair of stored values, or None (16-bit inputs: 2**32 pairs, not checked)."""
    if any(info.type_name not in EIGHT_BIT for info in infos):
        return None
    ds = [offsets(info) for info in infos]
    terms = [term(d, left_shift, r) for d, r in zip(ds, reals)]
    options = []
    for info, r in zip(infos, reals):
        exact = exact_form(info, left_shift, r)
        options.append([exact] if exact is not None else _near_forms(left_shift, r))
    m_out, s_out = tosa_multiplier(real_out)
    try:
        _check_sums(terms[0], terms[1], sign, m_out, s_out)
        for f0 in options[0]:
            for f1 in options[1]:
                if _same_sums((f0.apply(ds[0]), f1.apply(ds[1])), terms, sign, m_out, s_out):
                    return f0, f1
    except ValueError:      # a sum outside apply_scale_32's range: leave it to the general form
        return None
    return None


def _scaled_sums(a: np.ndarray, b: np.ndarray, sign: int, m: int, shift: int) -> np.ndarray:
    return apply_scale_32(a[:, None] + sign * b[None, :], m, shift, double_round=True)


def _check_sums(a: np.ndarray, b: np.ndarray, sign: int, m: int, shift: int) -> None:
    """The ValueError ``_scaled_sums(a, b, ...)`` raises (a multiplier or shift out of range, a sum outside
    apply_scale_32's range), decided without making the 65,536 sums: from one of them and the extremes."""
    _scaled_sums(a[:1], b[:1], sign, m, shift)
    signed = sign * b
    bound = 1 << (shift - 1)
    if int(a.min()) + int(signed.min()) < -bound or int(a.max()) + int(signed.max()) >= bound:
        raise ValueError("a sum of the terms lies outside apply_scale_32's range")


def _same_sums(got: tuple, terms: Sequence[np.ndarray], sign: int, m: int, shift: int) -> bool:
    """Whether the candidate terms ``got`` give TFLite's output (the terms ``terms``) on every pair of stored
    values, i.e. ``_scaled_sums(*got) == _scaled_sums(*terms)`` (and its ValueError). A sum can differ only
    in a row or column where a candidate term differs from TFLite's (a few: a form is off by one on a few
    values, if any), so only those rows and columns are computed."""
    (a, b), (ta, tb) = got, terms
    _check_sums(a, b, sign, m, shift)
    rows, cols = a != ta, b != tb
    return (np.array_equal(_scaled_sums(a[rows], b, sign, m, shift), _scaled_sums(ta[rows], tb, sign, m, shift))
            and np.array_equal(_scaled_sums(a, b[cols], sign, m, shift), _scaled_sums(ta, tb[cols], sign, m, shift)))


def _near_forms(left_shift: int, real: float) -> list:
    base = nearest_form(left_shift, real)
    forms = [base, Form(base.multiplier + 1, base.shift), Form(base.multiplier - 1, base.shift)]
    return forms + ([Form(base.multiplier, base.shift, True)] if base.shift > 31 else [])


def _fitting_multiplier(d: np.ndarray, want: np.ndarray, shift: int, double: bool) -> Optional[int]:
    """A multiplier that takes every ``d`` to ``want``: the interval the largest values allow (exact
    integer bounds), its ends and middle then checked on all values at once."""
    bounds = _multiplier_range(d[:256].tolist(), want[:256].tolist(), shift, double)
    if bounds is None:
        return None
    for m in sorted({bounds[0], bounds[1], (bounds[0] + bounds[1]) // 2}):
        if np.array_equal(apply_scale_32(d, m, shift, double_round=double), want):
            return m
    return None


def _multiplier_range(d: list, want: list, shift: int, double: bool) -> Optional[tuple[int, int]]:
    """The interval ``(lo, hi)`` of multipliers M in [0, 2**31) with ``(d * M + round(d)) >> shift == want``
    for every d (``round`` is apply_scale_32's, with the +-2**30 of DOUBLE_ROUND), or None."""
    lo, hi = 0, (1 << 31) - 1
    for di, c in zip(d, want):
        if di == 0:
            if c != 0:
                return None
            continue
        r = (1 << (shift - 1)) + (((1 << 30) if di > 0 else -(1 << 30)) if double else 0)
        a, b = (c << shift) - r, ((c + 1) << shift) - r - 1        # a <= di * M <= b
        if di > 0:
            lo, hi = max(lo, -(-a // di)), min(hi, b // di)
        else:
            lo, hi = max(lo, -(-b // di)), min(hi, a // di)
        if lo > hi:
            return None
    return lo, hi


def twice_max(infos: Sequence[TensorInfo]) -> float:
    """add.cc's ``2 * max(s1, s2)`` (float32 scales, doubled in double)."""
    return 2.0 * float(max(F32(scale(infos[0])), F32(scale(infos[1]))))
