"""The node-case scoreboard: run every claimed op's onnx node cases and classify each.

A case ends as ``pass``; ``no TOSA type`` (its data has no TOSA 1.0 tensor
type, and the refusal names a published limit, of the op or of every op:
outside the score's denominator);
``limit`` (refused from one of the op's published limits, ``tosaconv ops``:
the refusal's diagnostic names a limit key that op publishes; also outside
the denominator); ``refused`` (refused with a clear error although TOSA has
its types and no published limit of the op excludes it: counts against the
score); or ``FAIL`` (a wrong answer or an unexpected exception: a bug).

The cases feed shape operands (axes, shapes, slice bounds) as graph inputs;
the harness freezes those the op's published limits require at import
(``harness.SHAPE_OPERANDS``) into constants. Every case with such an input is
also run *as written*, the way the onnx backend runner feeds it, and counted
separately, so both readings of the score are on the page. ``scripts/node_case_score.py``
writes the result to docs/onnx-support.md and ``tests/test_support_doc.py``
checks that the committed page matches a fresh run.
"""
from __future__ import annotations

import collections
import tempfile

from tosaconv.diagnostics import TosaconvError
from tosaconv.importers.onnx import converters as _converters  # noqa: F401  (registers every converter)
from tosaconv.importers.onnx.driver import MAX_OPSET, MIN_OPSET
from tosaconv.importers.onnx.registry import importer_limits, published_limits, support_table
from tosaconv.interpreter import InputError
from tosaconv.lowering.limits import limit_note

from .harness import SPEC_CONTRADICTED, frozen_inputs, no_tosa_equivalent, node_cases, run_node_case

OUTCOMES = ("pass", "no TOSA type", "limit", "refused", "FAIL")


def run_case(case, reference_dir=None, freeze: bool = True) -> tuple:
    """(outcome, reason) for one case."""
    try:
        run_node_case(case, reference_dir, freeze)
        return "pass", ""
    except (TosaconvError, InputError) as e:
        why, key = no_tosa_equivalent(case, freeze), matching_limit(case.model.graph.node[0].op_type, e)
        if why and key:
            return "no TOSA type", why
        return ("limit", f"limit {key}: {_first_line(e)}") if key else ("refused", _first_line(e))
    except Exception as e:  # a wrong answer (AssertionError) or a crash: both are bugs
        return "FAIL", f"{type(e).__name__}: {_first_line(e)}"


def matching_limit(op_type: str, error) -> str:
    """The key of the published limit of ``op_type`` (or of every op) that ``error``'s diagnostics name, or ""."""
    notes = {n for d in getattr(error, "diagnostics", ()) for n in d.notes}
    limits = published_limits(op_type) + importer_limits()
    return next((limit.key for limit in limits if limit_note(limit.key) in notes), "")


def _first_line(e) -> str:
    text = str(e).strip().splitlines()
    return text[0][:160] if text else type(e).__name__


def score_op(op: str, reference: int) -> dict:
    counts, written, reasons = collections.Counter(), collections.Counter(), []
    ref_ok = ref_runs = 0
    for case in node_cases(op):
        use_ref = reference and counts["pass"] < reference
        with tempfile.TemporaryDirectory() as d:
            outcome, why = run_case(case, d if use_ref else None)
        counts[outcome] += 1
        written[run_case(case, freeze=False)[0] if frozen_inputs(case.model) else outcome] += 1
        if use_ref and outcome in ("pass", "FAIL"):
            ref_runs += 1
            ref_ok += outcome == "pass"
        if outcome in ("limit", "refused", "FAIL"):
            reasons.append(f"`{case.name}` ({outcome}): {why}")
    return {"counts": counts, "as_written": written, "reasons": reasons, "ref": (ref_ok, ref_runs)}


def scored(c) -> int:
    """The cases a score counts: those whose data TOSA can hold and that no published limit excludes."""
    return c["pass"] + c["refused"] + c["FAIL"]


def render(rows: list, reference: int, seconds: float) -> str:
    total, written = collections.Counter(), collections.Counter()
    for r in rows:
        total.update(r["counts"])
        written.update(r["as_written"])
    lines = _header(reference, seconds) + _score_lines(total, written)
    if reference:
        ok = sum(r["ref"][0] for r in rows)
        runs = sum(r["ref"][1] for r in rows)
        lines += ["", f"The official TOSA reference model ran the emitted `.tosa` of {runs} cases (the first "
                      f"{reference} passing case(s) of every op) and agreed with the numpy run on {ok}."]
    lines += ["", f"Model opsets {MIN_OPSET} to {MAX_OPSET} are converted natively; older models are upgraded "
                  "with `onnx.version_converter` first. Run time: "
                  f"{seconds:.0f} s.", ""] + _table(rows, total)
    lines += ["", "Compared with onnxruntime instead of their expected data, because that data contradicts "
                  "the operator's definition:", ""]
    lines += [f"- `{name}`: {why}" for name, why in sorted(SPEC_CONTRADICTED.items())]
    lines += _limits_section(rows)
    reasons = [(r["op_type"], x) for r in rows for x in r["reasons"]]
    if reasons:
        lines += ["", "## Cases refused or failing although TOSA has their types", ""]
        lines += [f"- {op}: {x}" for op, x in reasons]
    return "\n".join(lines) + "\n"


def _header(reference: int, seconds: float) -> list:
    return [
        "# ONNX support",
        "",
        "Generated by `python scripts/node_case_score.py"
        + (f" --reference {reference}" if reference else "") + "`; do not edit by hand.",
        "",
        "Every node test case of the onnx package whose op tosaconv claims is imported, specialized "
        "(bindings from its input shapes), emitted as TOSA 1.0, read back and run with the numpy "
        "interpreter, then compared with the case's expected outputs at the case's tolerances "
        "(at least rtol 1e-3, atol 1e-5). Inputs that an op's published limits require at import (axes, "
        "shapes, slice bounds, counts) are given as constants, with the case's own values.",
        "",
    ]


def _score_lines(total, written) -> list:
    n, w = scored(total), scored(written)
    return [
        f"**Score: {total['pass']} of {n} cases whose data TOSA can hold pass "
        f"({100.0 * total['pass'] / max(n, 1):.1f} %).** "
        f"{total['limit']} more cases are excluded by a published limit of their op (the refusal names it; "
        f"see the limits below and `tosaconv ops`); counted as failures, the score would be {total['pass']} of "
        f"{n + total['limit']} ({100.0 * total['pass'] / max(n + total['limit'], 1):.1f} %). "
        f"{total['no TOSA type']} more cases use types TOSA 1.0 has no tensors for (unsigned, fp8/fp4, "
        f"int2/int4, bf16, strings, sequences, zero-size dims) and are refused with a clear error that names "
        f"a published limit (of the op, or of every op: `*` below). "
        f"{total['FAIL']} cases give a wrong answer or crash.",
        "",
        f"Run as written (every input fed at run time, as the onnx backend runner feeds it): {written['pass']} of "
        f"{w} cases pass ({100.0 * written['pass'] / max(w, 1):.1f} %); {written['limit']} are excluded by a "
        f"published limit ({written['pass']} of {w + written['limit']}, "
        f"{100.0 * written['pass'] / max(w + written['limit'], 1):.1f} %, counting them as failures), {written['no TOSA type']} have no TOSA type, {written['refused']} are refused "
        f"otherwise and {written['FAIL']} give a wrong answer or crash.",
    ]


def _table(rows: list, total) -> list:
    lines = ["| op | model opsets | op versions | cases | pass | no TOSA type | limit | refused | FAIL | score |",
             "|---|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        c = r["counts"]
        pct = f"{100.0 * c['pass'] / scored(c):.0f} %" if scored(c) else "-"
        lines.append(f"| {r['op_type']} | {r['opsets'][0]}-{r['opsets'][1]} | "
                     f"{', '.join(map(str, r['versions']))} | {sum(c.values())} | {c['pass']} | "
                     f"{c['no TOSA type']} | {c['limit']} | {c['refused']} | {c['FAIL']} | {pct} |")
    lines.append(f"| **all** | | | {sum(total.values())} | {total['pass']} | {total['no TOSA type']} | "
                 f"{total['limit']} | {total['refused']} | {total['FAIL']} | "
                 f"{100.0 * total['pass'] / max(scored(total), 1):.1f} % |")
    return lines


def _limits_section(rows: list) -> list:
    """The published limits of every claimed op (``tosaconv ops --json`` gives the same records)."""
    lines = ["", "## Published limits", "",
             "What a claimed op does not handle, as `tosaconv ops` publishes it; a refusal from one of these "
             "names its key in a note (`published limit: KEY`).", "",
             "| op | limit | not handled | why |", "|---|---|---|---|"]
    for limit in importer_limits():
        lines.append(f"| * | `{limit.key}` | {limit.summary()} | {limit.reason} |")
    for r in rows:
        for limit in r["limits"]:
            lines.append(f"| {r['op_type']} | `{limit['key']}` | {limit['text']} | {limit['reason']} |")
    return lines


def score_all(reference: int = 0) -> list:
    """One row per claimed ai.onnx op: its support-table entry plus counts, reasons and reference results."""
    return [{**e, **score_op(e["op_type"], reference)}
            for e in support_table(MIN_OPSET, MAX_OPSET) if e["domain"] == "ai.onnx"]
