"""Scoreboard of quantized real ONNX models: does each become an all-integer TOSA program Vela takes?

For each model of tests/real_models/quantized.py and each quantization recipe
(onnxruntime's ``quantize_static``; the quantized model is cached): convert
with tosaconv at the first catalog shape, catching every error (a refusal
with its exit code, or an internal error with its traceback's last frames);
count the float TOSA ops (the graph's own input-quantize/output-dequantize
edges apart), with histograms by TOSA op and by source op; the largest
difference from onnxruntime in LSB of each output's DequantizeLinear scale,
against onnxruntime as users run it (graph optimizations fuse Q/DQ into
integer kernels) and with its optimizations off (every Q/DQ as written);
whether the official reference model agrees bit-exactly with our numpy
run; and Vela's verdict for the Ethos-U85 (NPU operator share, or the ops it
rejects). Every step is timed.

    python scripts/quantized_models.py [--models rapid,common] [--recipes qdq_s8_pc]
                                       [--markdown OUT.md] [--json] [--no-reference] [--no-vela]
    python scripts/quantized_models.py --from-json RESULTS.json > OUT.md
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
from collections import Counter

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))

from tests.real_models.quantized import MODEL_NAMES, RECIPES, entry_named  # noqa: E402
from tests.real_models.quantized_measure import measure, public  # noqa: E402

HEADER = ("| model | recipe | result | TOSA ops | float ops | I/O edge float ops "
          "| max LSB vs onnxruntime: optimized / unoptimized | reference model vs numpy | Vela (ethos-u85-256) "
          "| seconds: quantize / convert / numpy / reference / vela |")


def main(argv=None) -> int:
    args = _parser().parse_args(argv)
    if args.from_json:
        with open(args.from_json) as f:
            results = json.load(f)
        print(markdown(results), end="")
        return 0
    names = [n for n in MODEL_NAMES if _picked(n, args.models)]
    recipes = [r for r in RECIPES if _picked(r.name, args.recipes)]
    results = []
    if not args.json:
        print(HEADER + "\n" + "|---" * HEADER.count(" | ") + "|---|", flush=True)
    for name in names:
        for recipe in recipes:
            with tempfile.TemporaryDirectory() as work:
                r = public(measure(entry_named(name), recipe, work, not args.no_reference, not args.no_vela))
            results.append(r)
            if not args.json:
                print(row(r), flush=True)
            if args.markdown:   # rewritten after every case, so a long run shows its progress
                with open(args.markdown, "w") as f:
                    f.write(markdown(results))
    if args.json:
        print(json.dumps(results, indent=1))
    else:
        print(details(results))
    return 0


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--models", default="", help="comma-separated substrings of model names (default: all)")
    p.add_argument("--recipes", default="", help="comma-separated recipe names (default: all)")
    p.add_argument("--markdown", metavar="OUT.md", help="write the table and the details as Markdown")
    p.add_argument("--json", action="store_true", help="print the measurements as one JSON document instead")
    p.add_argument("--no-reference", action="store_true", help="skip the official reference model run")
    p.add_argument("--no-vela", action="store_true", help="skip Vela")
    p.add_argument("--from-json", metavar="RESULTS.json", help="print the Markdown of an earlier --json run")
    return p


def _picked(name: str, wanted: str) -> bool:
    return not wanted or any(w and w in name for w in wanted.split(","))


def row(r: dict) -> str:
    s = dict(r["seconds"], quantize=sum(r["quantize_seconds"].values()))   # when it was made, not the cache hit
    times = " / ".join(f"{s[k]:.1f}" if k in s else "-" for k in ("quantize", "convert", "numpy_run", "reference",
                                                                    "vela"))
    cells = [r["model"], r["recipe"], _result(r), r.get("ops", ""), r.get("float_ops", ""),
             r.get("io_edge_float_ops", ""), _lsb(r), _reference(r), _vela(r), times]
    return "| " + " | ".join(str(c) for c in cells) + " |"


def _result(r: dict) -> str:
    if r["status"] == "quantize-failed":
        return f"onnxruntime's quantizer fails: {_cell(r['message'])}"
    if r["status"] == "ok":
        return "ok" if "run_error" not in r else f"converts; run fails: {_cell(r['run_error'])}"
    return f"**exit {r['exit_code']}** {r['status']}: {_cell(r['message'])}"


def _lsb(r: dict) -> str:
    if "lsb" not in r:
        return ""
    return " / ".join(", ".join(f"{v['max']:.3g}{'' if v['unit'] == 'LSB' else ' (abs)'}" for v in r[k].values())
                      for k in ("lsb", "lsb_unoptimized"))


def _reference(r: dict) -> str:
    ref = r.get("reference")
    if ref is None:
        return ""
    if "error" in ref:
        return f"fails: {_cell(ref['error'])}"
    return "bit-exact" if ref["exact"] else f"differs (max {ref['max_abs']:.3g})"


def _vela(r: dict) -> str:
    v = r.get("vela")
    if v is None:
        return ""
    if v["ok"]:
        return f"{v['npu_percent']:g} % NPU ({v['npu_ops']} ops, {v['cycles_total']:.0f} cycles)"
    kinds = ", ".join(f"{k} {n}" for k, n in list(v["rejected"].items())[:4])
    return f"rejects {sum(v['rejected'].values())} ops ({kinds}); first: {_cell(v['first_error'], 90)}"


def _cell(text: str, width: int = 160) -> str:
    text = " ".join(str(text).split()).replace("|", "\\|")
    return text if len(text) <= width else text[:width - 1] + "…"


def details(results: list) -> str:
    """Internal errors with their frames, then the float-op histograms (per case and over all cases)."""
    lines = ["", "### Internal errors (exit 1), by error and innermost frames", ""]
    for (message, where), cases in _grouped(results, "internal").items():
        lines.append(f"- `{_cell(message, 300)}` in {', '.join(cases)}")
        lines.extend(f"  - `{frame}`" for frame in where)
    lines += ["", "### Refusals (exit 3/4) and quantizer failures", ""]
    for (message, _), cases in {**_grouped(results, "refused"), **_grouped(results, "quantize-failed")}.items():
        lines.append(f"- {', '.join(cases)}: {_cell(message, 2000)}")
    lines += ["", "### Float ops left in the program (I/O edges excluded)", "",
              "| model | recipe | float TOSA ops by kind | by source op type: nodes (TOSA ops) |", "|---|---|---|---|"]
    total_tosa, total_source, total_nodes = Counter(), Counter(), Counter()
    for r in results:
        if r.get("float_ops"):
            total_tosa.update(r["tosa_kinds"])
            total_source.update(r["source_kinds"])
            total_nodes.update(r["source_nodes"])
            lines.append(f"| {r['model']} | {r['recipe']} | {_hist(r['tosa_kinds'])} "
                         f"| {_nodes(r['source_nodes'], r['source_kinds'])} |")
    lines.append(f"| **all** | | {_hist(total_tosa)} | {_nodes(total_nodes, total_source)} |")
    return "\n".join(lines) + "\n"


def _grouped(results: list, status: str) -> dict:
    """{(message, frames): ["model / recipe", ...]} of the cases with ``status``."""
    groups: dict = {}
    for r in results:
        if r["status"] == status:
            groups.setdefault((r["message"], tuple(r["where"])), []).append(f"{r['model']} / {r['recipe']}")
    return groups


def _hist(counts) -> str:
    return ", ".join(f"{k} {n}" for k, n in Counter(counts).most_common())


def _nodes(nodes, ops) -> str:
    return ", ".join(f"{k} {n} ({ops[k]})" for k, n in Counter(nodes).most_common())


def markdown(results: list) -> str:
    table = [HEADER, "|---" * HEADER.count(" | ") + "|---|", *(row(r) for r in results)]
    return "\n".join(table) + "\n" + details(results)


if __name__ == "__main__":
    sys.exit(main())
