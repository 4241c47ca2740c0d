"""The family tables of ``tosaconv.importers.tflite.ops`` say exactly which module registers which converter.

The registry imports an op's family modules when the op is first resolved (start-up, issue 13),
so a converter whose module the tables do not name for its op would never be found. With every
family imported, each registered converter is compared with the tables, in both directions; and a
fresh interpreter that converts a float model is seen to import only the families of its ops.
"""
from __future__ import annotations

from pathlib import Path

from tests.startup_probe import loaded_modules
from tosaconv.importers.tflite import ops, registry

REPO = Path(__file__).resolve().parents[3]


def registered() -> tuple[set, set, set]:
    """(module, op) pairs of the float-or-any converters, of the quantized ones, and (module, code) of custom ones."""
    registry.supported_ops()   # imports every family
    short = lambda fn: fn.__module__.rsplit(".", 1)[1]   # noqa: E731
    float_ = {(short(e.fn), op) for (op, form), e in registry._REGISTRY.items() if form != "quantized"}
    quantized = {(short(e.fn), op) for (op, form), e in registry._REGISTRY.items() if form == "quantized"}
    custom = {(short(e.fn), code) for code, e in registry._CUSTOM.items()}
    return float_, quantized, custom


def pairs(table: dict) -> set:
    return {(module, op) for module, names in table.items() for op in names}


def test_the_tables_name_every_converter_and_nothing_else():
    float_, quantized, custom = registered()
    assert pairs(ops.FLOAT_FAMILIES) == float_
    assert pairs(ops.QUANTIZED_FAMILIES) == quantized
    assert pairs(ops.CUSTOM_FAMILIES) == custom


def test_every_family_module_is_in_a_table():
    files = {p.stem for p in Path(ops.__file__).parent.glob("*.py") if p.stem != "__init__"}
    listed = set(ops.FLOAT_FAMILIES) | set(ops.QUANTIZED_FAMILIES) | set(ops.CUSTOM_FAMILIES)
    registering = {m for m, _ in set.union(*registered())}
    assert registering <= listed <= files


def test_a_float_model_imports_only_its_families(tmp_path):
    out = tmp_path / "m.tosa"
    modules = loaded_modules(["convert", "sample_models/tflite/small_cnn.tflite", "-o", str(out), "-q"])
    assert out.exists()
    families = {m.rsplit(".", 1)[1] for m in modules if m.startswith("tosaconv.importers.tflite.ops.")}
    assert families, "the model's converters were not imported"
    assert not {f for f in families if f in ops.QUANTIZED_FAMILIES}, "a float model imported quantized families"
    assert len(families) < len(ops.FLOAT_FAMILIES) / 2, families


def test_an_int8_model_imports_only_the_quantized_families_of_its_ops(tmp_path):
    """Every op of int8_cnn has a quantized converter, so none of the float families that convert the
    same ops (activation, elementwise, slicing) is imported: their converters could not be chosen."""
    out = tmp_path / "m.tosa"
    modules = loaded_modules(["convert", "sample_models/tflite/int8_cnn.tflite", "-o", str(out), "-q"])
    assert out.exists()
    families = {m.rsplit(".", 1)[1] for m in modules if m.startswith("tosaconv.importers.tflite.ops.")}
    assert {"q_conv", "q_matmul", "q_softmax", "q_pool", "q_reduce", "q_arith"} <= families
    assert not families & {"activation", "elementwise", "slicing", "q_softmax16", "conv_transpose"}, families
