"""The family tables of ``tosaconv.importers.onnx.ops`` say exactly which module registers which converter.

The registry imports an op's family modules when the op is first resolved (start-up, issue 13),
so a converter whose module the tables do not name for its op would never be found, and an op
with converters in two modules (versions) must have both named. With every family imported,
each registered converter is compared with the tables, in both directions; and a fresh
interpreter that converts a model is seen to import only the families of its ops.
"""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from tests.startup_probe import loaded_modules
from tosaconv.importers.onnx import ops, registry

REPO = Path(__file__).resolve().parents[3]


def registered() -> set:
    """``(domain, module, op)`` of every registered converter."""
    registry.supported_ops()   # imports every family
    return {(domain, fn.__module__.rsplit(".", 1)[1], op)
            for (domain, op), entries in registry._REGISTRY.items() for _, fn in entries}


def test_the_tables_name_every_converter_and_nothing_else():
    tables = {("", m, op) for m, names in ops.DEFAULT_FAMILIES.items() for op in names} | \
        {(ops.MS, m, op) for m, names in ops.MS_FAMILIES.items() for op in names}
    assert tables == registered()


def test_the_converters_module_registers_every_family():
    """In a fresh interpreter: importing ``converters`` (as ``tosaconv ops`` and the scoreboard do) registers all."""
    probe = ("import json, sys\nfrom tosaconv.importers.onnx import converters, registry\n"
             "print(json.dumps([sorted(sys.modules), len(registry._REGISTRY)]))")
    proc = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, cwd=REPO,
                          env={"PYTHONPATH": str(REPO), "PATH": "/usr/bin:/bin"}, timeout=300)
    modules, count = json.loads(proc.stdout)
    assert {f"tosaconv.importers.onnx.ops.{m}" for m in [*ops.DEFAULT_FAMILIES, *ops.MS_FAMILIES]} <= set(modules)
    assert count == len({(d, op) for d, _, op in registered()})


def test_a_model_imports_only_its_families(tmp_path):
    out = tmp_path / "m.tosa"
    modules = loaded_modules(["convert", "sample_models/tiny_transformer.onnx", "--bind", "batch=2", "--bind", "seq=16",
                              "-o", str(out), "-q"])
    assert out.exists()
    families = {m.rsplit(".", 1)[1] for m in modules if m.startswith("tosaconv.importers.onnx.ops.")} & \
        (set(ops.DEFAULT_FAMILIES) | set(ops.MS_FAMILIES))
    assert families, "the model's converters were not imported"
    assert not families & set(ops.MS_FAMILIES) - set(ops.DEFAULT_FAMILIES), families
    assert len(families) < len(ops.DEFAULT_FAMILIES) / 2, families
