"""Start-up: ``--help`` and ``--version`` import no command, and the lazy command table stays true.

The CLI imports a command's module only when that command is looked up
(:data:`tosaconv.cli.COMMANDS`), so ``tosaconv --version`` does not pay for
numpy, rich or the converter. These tests check what gets imported (in a
fresh interpreter), not how long it takes; the time is measured by
``scripts/benchmark.py --startup``.
"""
from __future__ import annotations

import click
import pytest

from tests.startup_probe import REPO, loaded_modules
from tosaconv.cli import COMMANDS, cli

HEAVY = ["numpy", "rich", "onnx", "tosaconv.api", "tosaconv.report", "tosaconv.interpreter", "ctypes.util",
         "importlib.metadata"]

@pytest.mark.parametrize("args", [["--version"], ["--help"]])
def test_version_and_help_import_no_command(args):
    modules = loaded_modules(args)
    assert not [m for m in HEAVY if m in modules]
    assert not [m for m in modules if m.startswith("tosaconv.cli.") and m != "tosaconv.cli"]


def test_a_command_is_imported_when_it_runs():
    assert "tosaconv.api" in loaded_modules(["convert", "--help"])


def test_the_command_list_is_what_the_commands_say():
    """--help lists each command with the short help click would take from its own docstring."""
    lazy = cli.get_help(cli.make_context("tosaconv", [], resilient_parsing=True))
    eager_group = click.Group("tosaconv", params=cli.params, help=cli.help,
                              context_settings=cli.context_settings)
    for name in COMMANDS:
        eager_group.add_command(cli.get_command(None, name), name)
    eager = eager_group.get_help(eager_group.make_context("tosaconv", [], resilient_parsing=True))
    assert lazy == eager
    for name, (_, _, short) in COMMANDS.items():
        assert " ".join(cli.get_command(None, name).help.split()).startswith(short[:-1])


def test_unknown_command_is_a_usage_error():
    assert cli.main(["no-such-command"], standalone_mode=False) == 2
    assert cli.get_command(None, "no-such-command") is None


# What a plain convert must not import, each needed only in a rarer case (start-up, issue 13).
NOT_ON_CONVERT = ["rich", "tosaconv.importers.onnx.legacy", "tosaconv.importers.onnx.scan8",
                  "tosaconv.importers.onnx.int_io_moves",   # a summary line; opset < MIN_OPSET; --int-io
                  "tosaconv.depfile",   # no --depfile
                  "tosaconv.ir.printer",   # no program printed as text (the verifier takes field_types from ir.attrs)
                  "tosaconv.interpreter.interpolation", "tosaconv.ir.count_rescale",   # no INTERP_MATRIX, COUNT_RESCALE
                  "tosaconv.diagnostics.assumption",   # no --bind that contradicts the data
                  "tosaconv.lowering.const_eval"]   # no shape computed from constants
NOT_ON_TFLITE_CONVERT = ["tempfile", "zipfile",   # (onnx itself imports both) no .npz is read or written
                         "tosaconv.importers.tflite.ops.custom", "tosaconv.importers.tflite.ops.variables",
                         "tosaconv.importers.tflite.captures", "tosaconv.lowering.control",   # no subgraph
                         "tosaconv.importers.tflite.qmath", "tosaconv.importers.int_io",   # no --int-io
                         "json", "base64",   # no JSON printed, no constant printed as text
                         "tosaconv.lowering.dft", "tosaconv.importers.tflite.ops.fft",   # no RFFT2D
                         "tosaconv.importers.tflite.sparse",   # no sparse constant
                         "tosaconv.lowering.lrn", "tosaconv.lowering.strided", "tosaconv.lowering.pad",
                         "tosaconv.lowering.index_elements"]   # no LRN, STRIDED_SLICE, PAD, paddings from shapes


@pytest.mark.parametrize("model, extra, driver", [
    ("sample_models/tflite/small_cnn.tflite", [], "tosaconv.importers.tflite.driver"),
    ("sample_models/tiny_transformer.onnx", ["--bind", "batch=2", "--bind", "seq=16"], "tosaconv.importers.onnx.driver")])
def test_a_plain_convert_leaves_the_rarer_modules_unloaded(model, extra, driver, tmp_path):
    out = tmp_path / "m.tosa"
    modules = loaded_modules(["convert", str(REPO / model), *extra, "-o", str(out)])
    assert out.stat().st_size > 0 and driver in modules   # the conversion ran
    lazy = NOT_ON_CONVERT + (NOT_ON_TFLITE_CONVERT if model.endswith(".tflite") else [])
    at_start = loaded_modules([]) - {m for m in modules if m.startswith("tosaconv")}   # a site .pth may load some
    assert [m for m in lazy if m in modules and m not in at_start] == []


def test_the_command_process_runs_with_fewer_collections_and_a_library_keeps_its_own():
    """``python -m tosaconv`` (and the console script, which imports the same module) raises the collector's
    thresholds before its first import, and its first stage freezes what start-up made; a program that
    imports tosaconv as a library keeps its settings and its collector's generations."""
    import subprocess
    import sys

    from tosaconv.gc_tuning import _THRESHOLDS
    code = ("import gc, json, sys; before = gc.get_threshold(); import {module}; "
            "from tosaconv.gc_tuning import fewer_collections; after = gc.get_threshold(); "
            "count = fewer_collections(gc.get_freeze_count); frozen = [count()]; kept = [[] for _ in range(5000)]; "
            "frozen.append(count()); "
            "print(json.dumps([before, after, 'numpy' in sys.modules, frozen]))")
    got = {}
    for module in ("tosaconv.__main__", "tosaconv.cli, tosaconv.api"):
        proc = subprocess.run([sys.executable, "-c", code.format(module=module)], capture_output=True, text=True,
                              cwd=REPO, env={"PYTHONPATH": str(REPO), "PATH": "/usr/bin:/bin"}, timeout=300)
        got[module] = proc.stdout.strip()
    import json
    before, after, numpy_loaded, frozen = json.loads(got["tosaconv.__main__"])
    assert tuple(after) == _THRESHOLDS != tuple(before) and not numpy_loaded
    assert frozen[0] > 1000 and frozen[1] <= frozen[0]   # start-up's objects, frozen by the first stage only
    before, after, numpy_loaded, frozen = json.loads(got["tosaconv.cli, tosaconv.api"])
    assert after == before and numpy_loaded and frozen == [0, 0]


def test_the_served_command_path_imports_no_numpy_click_or_typing():
    """With TOSACONV_SERVER=1 the command is a client of the conversion server: it must cost little more than the
    interpreter itself, so it imports only built-in modules and ours (tosaconv.serve.wire's docstring)."""
    import subprocess
    import sys
    code = "import sys, tosaconv.__main__, tosaconv.serve.client; print(' '.join(sorted(sys.modules)))"
    proc = subprocess.run([sys.executable, "-S", "-c", code], capture_output=True, text=True, cwd=REPO,
                          env={"PYTHONPATH": str(REPO), "PATH": "/usr/bin:/bin"}, timeout=300)
    loaded = set(proc.stdout.split())
    assert "tosaconv.serve.client" in loaded, proc.stderr
    assert not loaded & {"numpy", "click", "typing", "enum", "re", "socket", "signal", "functools", "json"}
