"""Benchmark tosaconv against the official TFLite -> TOSA converter on the same models.

Models: the committed ``sample_models/tflite/*.tflite``, the paths given, and with ``--real`` every ``.tflite``
in the real-model cache (``$TOSACONV_MODEL_CACHE`` or ``~/.cache/tosaconv-models``). For each:

- tosaconv: ``api.load -> solve_bindings -> specialize -> emit`` (what ``tosaconv convert`` calls), timed
  in-process;
- official: ``tosa-converter-for-tflite`` (MLIR bytecode), then ``tosa-opt --tosa-convert-integer-type-to-signless
  --tosa-serialize`` (tosa-opt asks for that pass on uint8 models), timed as two subprocesses (start-up included;
  the footer measures it). A ``.tosa`` that keeps ``-1`` dims goes through ``infer_shapes`` first (not timed).
- A model with dynamic inputs gets a second row, "inputs fixed": each input's ``shape`` and ``shape_signature``
  patched to the bound shape before either tool sees it.

Dynamic dims are bound to ``--batch`` (default 1) on axis 0 and to the model's own ``shape`` elsewhere. Both
``.tosa`` files run on the official reference model with the same random inputs (float uniform in [-1, 1);
int8/uint8/int16 over the full range, extremes and zero point included) and are compared with LiteRT's
reference kernels (BUILTIN_REF): a float output passes when its max abs error is at most 1e-5 + 1e-4 times its
largest magnitude (max abs and relative error shown), integers must be exact (differing elements counted).

The converter's wheel also installs a top-level ``tests`` package, which shadows this repository's; the script
copes, but a separate venv keeps the test suite working:

    python -m venv /tmp/tcft && /tmp/tcft/bin/pip install tosa-converter-for-tflite
    python scripts/tflite_benchmark.py [MODEL.tflite ...] [--real] [--batch N] [--markdown FILE] \\
        [--converter /tmp/tcft/bin/tosa-converter-for-tflite]
"""
from __future__ import annotations

import argparse
import os
import re
import shutil
import struct
import subprocess
import sys
import tempfile
import time
import types
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import tflite

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.modules["tests"] = types.ModuleType("tests")   # this repository's tests/, not the converter wheel's
sys.modules["tests"].__path__ = [str(ROOT / "tests")]

from tests.importers.tflite.harness import ATOL, RTOL, as_stored, run_litert  # noqa: E402
from tests.tosa_tools import run_reference_model, run_tool  # noqa: E402
from tosaconv import api  # noqa: E402
from tosaconv import emit as _emit  # noqa: E402,F401  (imported up front: the times exclude module imports)
from tosaconv.diagnostics import TosaconvError  # noqa: E402
from tosaconv.emit.deserialize import deserialize  # noqa: E402
from tosaconv.importers.tflite import driver as _driver  # noqa: E402,F401
from tosaconv.importers.tflite.reader import NUMPY_TYPES  # noqa: E402

TIMEOUT = 900
SHAPE_SLOTS = (4, 18)   # vtable offsets of Tensor.shape and Tensor.shape_signature in the TFLite schema


@dataclass
class Input:
    name: str
    shape: tuple            # the bound shape
    dynamic: bool
    dtype: np.dtype
    zero_point: int
    tensor: object          # the tflite.Tensor, to patch its shape


@dataclass
class Side:
    """One tool's result on one model: time, the table cell, and a note."""
    seconds: float | None = None
    cell: str = "not converted"
    note: str = ""


def model_inputs(data: bytes, batch: int) -> list:
    graph = tflite.Model.GetRootAs(data, 0).Subgraphs(0)
    return [_input(graph.Tensors(graph.Inputs(i)), batch) for i in range(graph.InputsLength())]


def _input(t, batch: int) -> Input:
    shape = [int(d) for d in t.ShapeAsNumpy()] if t.ShapeLength() else []
    sig = [int(d) for d in t.ShapeSignatureAsNumpy()] if t.ShapeSignatureLength() == len(shape) else shape
    bound = tuple((batch if axis == 0 else max(d, 1)) if s < 0 else s for axis, (s, d) in enumerate(zip(sig, shape)))
    q = t.Quantization()
    zp = int(q.ZeroPoint(0)) if q is not None and q.ZeroPointLength() else 0
    return Input(t.Name().decode(), bound, any(s < 0 for s in sig), np.dtype(NUMPY_TYPES[t.Type()]), zp, t)


def make_feeds(inputs: list, seed: int = 0) -> dict:
    """Random inputs keyed by tensor name; int8/uint8/int16 cover their whole range."""
    rng = np.random.default_rng(seed)
    feeds = {}
    for x in inputs:
        if x.dtype.kind == "f":
            a = rng.uniform(-1, 1, x.shape)
        elif x.dtype.kind == "b" or x.dtype.itemsize > 2:   # bool; int32/int64 are usually indices or sizes
            a = rng.integers(0, 2 if x.dtype.kind == "b" else 8, x.shape)
        else:
            info = np.iinfo(x.dtype)
            a = rng.integers(info.min, int(info.max) + 1, x.shape)
            n = min(3, a.size)
            a.reshape(-1)[:n] = [info.min, info.max, x.zero_point][:n]
        feeds[x.name] = a.astype(x.dtype)
    return feeds


def fix_inputs(data: bytes, inputs: list) -> bytes:
    """``data`` with every input's ``shape`` and ``shape_signature`` set to its bound shape."""
    buf = bytearray(data)
    for x in inputs:
        tab = x.tensor._tab
        for slot in SHAPE_SLOTS:
            o = tab.Offset(slot)
            if o and tab.VectorLen(o) == len(x.shape):
                struct.pack_into(f"<{len(x.shape)}i", buf, tab.Vector(o), *x.shape)
    return bytes(buf)


def convert_tosaconv(path: Path, inputs: list, work: Path) -> tuple:
    t0 = time.perf_counter()
    graph = api.load(str(path))
    static = api.specialize(graph, api.solve_bindings(graph, {v.name: x.shape for v, x in zip(graph.inputs, inputs)}))
    data = api.emit(static)
    seconds = time.perf_counter() - t0
    (work / "tosaconv.tosa").write_bytes(data)
    return seconds, work / "tosaconv.tosa", [v.name for v in static.inputs], list(static.output_names)


def convert_official(converter: str, path: Path, work: Path) -> tuple:
    mlir, out = work / "official.mlirbc", work / "official.tosa"
    t0 = time.perf_counter()
    _require(subprocess.run([converter, str(path), "--bytecode", "-o", str(mlir)], capture_output=True, text=True,
                            timeout=TIMEOUT), mlir)
    serialize = ["--tosa-convert-integer-type-to-signless", f"--tosa-serialize=tosa-flatbuffer-filename={out}"]
    try:
        _require(run_tool("tosa-opt", [*serialize, mlir, "-o", "/dev/null"], timeout=TIMEOUT), out)
    except RuntimeError as e:
        if "dialect 'tfl'" not in str(e):
            raise
        raise RuntimeError(f"left TFLite ops unconverted: {_leftover_tfl_ops(converter, path, work)}") from None
    seconds = time.perf_counter() - t0
    block = deserialize(out.read_bytes())
    return seconds, out, list(block.inputs), list(block.outputs)


def _leftover_tfl_ops(converter: str, path: Path, work: Path) -> str:
    """The ``tfl.*`` ops the official converter did not legalize (tosa-opt only says 'dialect tfl is unknown')."""
    text = work / "official.mlir"
    subprocess.run([converter, str(path), "--text", "-o", str(text)], capture_output=True, timeout=TIMEOUT)
    ops = sorted(set(re.findall(r'= "?tfl\.(\w+)', text.read_text()))) if text.exists() else []
    return ", ".join(ops) or "(none found in the text form)"


def _require(done: subprocess.CompletedProcess, product: Path):
    if done.returncode != 0 or not product.exists():
        raise RuntimeError(f"{Path(done.args[0]).name} exited {done.returncode}: "
                           f"{done.stderr.strip() or done.stdout.strip()}")


def static_tosa(tosa: Path, names: list, inputs: list) -> tuple:
    """(a ``.tosa`` with every dim static, note): ``infer_shapes`` resolves ``-1`` dims at the bound shapes."""
    if not any(-1 in tuple(t.shape) for t in deserialize(tosa.read_bytes()).tensors):
        return tosa, ""
    shapes = ", ".join(f'"{n}": {list(x.shape)}' for n, x in zip(names, inputs))
    cfg = tosa.with_suffix(".shapes.json")
    cfg.write_text(f'{{"tosa_file": "{tosa.resolve()}", "shapes": {{{shapes}}}}}')
    done = run_tool("infer_shapes", [cfg], timeout=TIMEOUT)
    saved = re.search(r'new file saved as "([^"]+)"', done.stdout + done.stderr)
    resolved = Path(saved.group(1)) if saved else tosa.with_suffix(".unresolved")
    _require(done, resolved)
    return resolved, "-1 dims resolved by infer_shapes"


def compare(got: list, want: list) -> str:
    """'exact', 'max err E (rel R)' or a MISMATCH summary against LiteRT. A float output passes when its max
    abs error is at most ATOL + RTOL * its largest LiteRT magnitude (deep nets cancel near zero)."""
    worst, rel, differ, total, ok = 0.0, 0.0, 0, 0, True
    for g, w in zip(got, want):
        g, w = np.ascontiguousarray(g), np.asarray(w)
        if g.shape != w.shape:
            return f"MISMATCH shape {g.shape} vs LiteRT {w.shape}"
        if w.dtype.kind == "f":
            err = np.abs(g.astype(np.float64) - w)
            err[np.isnan(g) & np.isnan(w)] = 0.0
            top, scale = float(np.max(err, initial=0.0)), float(np.max(np.abs(w), initial=0.0))
            worst, rel = max(worst, top), max(rel, top / scale if scale else top)
            ok &= bool(top <= ATOL + RTOL * scale)   # NaN fails too
        else:   # uint8 comes back as the int8 bits TOSA stores it in
            g = g.view(w.dtype) if g.dtype.itemsize == w.dtype.itemsize else g.astype(w.dtype)
            differ, total = differ + int(np.count_nonzero(g != w)), total + w.size
    if differ:
        return f"MISMATCH {differ} of {total} differ"
    if not ok:
        return f"MISMATCH max err {worst:.1e}"
    return "exact" if worst == 0 else f"max err {worst:.1e} (rel {rel:.0e})"


def one_line(e: Exception) -> str:
    """The most telling line of an error, for a table cell (the reference model's reason follows its ERROR_IF)."""
    if isinstance(e, TosaconvError):
        return e.diagnostics[0].message[:200]
    lines = [ln.strip() for ln in str(e).splitlines() if ln.strip() and not ln.startswith("---")]
    if not lines:
        return type(e).__name__
    telling = [b for a, b in zip(lines, lines[1:]) if "fails AT" in a]
    telling = telling or [ln for ln in lines[1:] if re.search(r"error|fail|unsupported|invalid", ln, re.I)]
    text = lines[0].split(";")[0] + (f": {telling[0]}" if telling else "")
    return re.sub(r"(?<!\S)/\S*/", "", text).replace("|", "/")[:200]   # drop a source file's directories


def run_side(convert, inputs: list, feeds: dict, want, work: Path) -> Side:
    """Convert, run on the reference model, compare; every failure becomes a note."""
    work.mkdir(parents=True, exist_ok=True)
    side = Side()
    try:
        side.seconds, tosa, names, outs = convert(work)
    except Exception as e:  # noqa: BLE001  (a failure is a result, not a script error)
        side.note = f"conversion: {one_line(e)}"
        return side
    try:
        tosa, side.note = static_tosa(tosa, names, inputs)
        got = run_reference_model(tosa, {n: as_stored(feeds[x.name]) for n, x in zip(names, inputs)}, outs,
                                  work / "ref")
    except Exception as e:  # noqa: BLE001
        side.cell, side.note = "no", "; ".join(filter(None, [side.note, f"reference model: {one_line(e)}"]))
        return side
    side.cell = "yes / " + (compare([got[n] for n in outs], want) if want is not None else "no LiteRT result")
    return side


def litert_reference(data: bytes, feeds: dict) -> tuple:
    """LiteRT's outputs and notes; a model with MediaPipe's Convolution2DTransposeBias (no LiteRT kernel) runs
    with that op rewritten into builtin TRANSPOSE_CONV, as the real-model tests do."""
    try:
        return run_litert(data, feeds), []
    except Exception as e:  # noqa: BLE001
        if "Convolution2DTransposeBias" not in str(e):
            return None, [f"LiteRT: {one_line(e)}"]
    from tests.real_models.tflite_rewrite import to_builtin
    return run_litert(to_builtin(data), feeds), ["LiteRT ran the model with Convolution2DTransposeBias as "
                                                 "builtin TRANSPOSE_CONV"]


def bench(label: str, path: Path, inputs: list, converter: str | None, work: Path) -> list:
    """One table row: both tools on the model at ``path``."""
    feeds, notes = make_feeds(inputs), []
    want, notes = litert_reference(path.read_bytes(), feeds)
    ours = run_side(lambda w: convert_tosaconv(path, inputs, w), inputs, feeds, want, work / "tosaconv")
    theirs = (run_side(lambda w: convert_official(converter, path, w), inputs, feeds, want, work / "official")
              if converter else Side(cell="not installed"))
    notes += [f"{tool} {side.note}" for tool, side in (("tosaconv", ours), ("official", theirs)) if side.note]
    shapes = "; ".join(f"{x.name} {'x'.join(map(str, x.shape))}" for x in inputs)
    return [label, shapes, _secs(ours.seconds), _secs(theirs.seconds), ours.cell, theirs.cell, "; ".join(notes)]


def _secs(seconds) -> str:
    return "-" if seconds is None else f"{seconds:.3f}"


def rows_for(label: str, path: Path, batch: int, converter: str | None, work: Path) -> list:
    inputs = model_inputs(path.read_bytes(), batch)
    rows = [bench(label, path, inputs, converter, work / "as_is")]
    if any(x.dynamic for x in inputs):
        fixed = work / "fixed.tflite"
        fixed.write_bytes(fix_inputs(path.read_bytes(), inputs))
        rows.append(bench(f"{label} (inputs fixed)", fixed, model_inputs(fixed.read_bytes(), batch), converter,
                          work / "fixed"))
    return rows


def model_paths(paths: list, real: bool) -> list:
    found = sorted((ROOT / "sample_models" / "tflite").glob("*.tflite")) + [Path(p) for p in paths]
    if real:
        cache = Path(os.environ.get("TOSACONV_MODEL_CACHE", Path.home() / ".cache" / "tosaconv-models"))
        found += sorted(p for p in cache.rglob("*.tflite") if "wheels" not in p.parts)
    return found


def labels(paths: list) -> list:
    """File stems, prefixed by the folder's first word (the cache's wheel name) where stems repeat."""
    repeated = Counter(p.stem for p in paths)
    return [f"{p.parent.name.split('-')[0]}/{p.stem}" if repeated[p.stem] > 1 else p.stem for p in paths]


def markdown(rows: list) -> str:
    head = ["model", "inputs", "tosaconv s", "official s", "tosaconv ref-model runs / vs LiteRT",
            "official ref-model runs / vs LiteRT", "notes"]
    return "\n".join(["| " + " | ".join(r) + " |" for r in [head, ["---"] * len(head), *rows]])


def footer(converter: str | None) -> str:
    if not converter:
        return "official converter not found: pip install tosa-converter-for-tflite, or pass --converter"
    t0 = time.perf_counter()
    version = subprocess.run([converter, "--version"], capture_output=True, text=True).stdout.splitlines()[0]
    run_tool("tosa-opt", ["--version"])
    return f"{version}; official s includes two process start-ups (~{time.perf_counter() - t0:.2f} s with --version)"


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("models", nargs="*", help="more .tflite files")
    p.add_argument("--real", action="store_true", help="also every .tflite in the real-model cache")
    p.add_argument("--batch", type=int, default=1, help="size bound to dynamic axis-0 dims (default 1)")
    p.add_argument("--converter", default=shutil.which("tosa-converter-for-tflite"),
                   help="the tosa-converter-for-tflite executable (default: from PATH)")
    p.add_argument("--markdown", help="also write the table to this file")
    args = p.parse_args(argv)
    paths, rows = model_paths(args.models, args.real), []
    with tempfile.TemporaryDirectory() as work:
        for i, (label, path) in enumerate(zip(labels(paths), paths)):
            rows += rows_for(label, path, args.batch, args.converter, Path(work) / str(i))
            print(f"done: {label}", file=sys.stderr, flush=True)
    text = markdown(rows) + "\n\n" + footer(args.converter) + "\n"
    print(text)
    if args.markdown:
        Path(args.markdown).write_text(text)


if __name__ == "__main__":
    main()
