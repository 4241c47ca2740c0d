"""The pure helpers of ``scripts/npu_benchmark.py`` (no Vela run, no official converter needed).

Which samples it benchmarks (the integer ones, minus int8_float_io), and the markdown table: ratios,
medians, and a missing measurement shown as '-' rather than counted.
"""
from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

_PATH = Path(__file__).resolve().parents[1] / "scripts" / "npu_benchmark.py"
_SPEC = importlib.util.spec_from_file_location("npu_benchmark", _PATH)
bench = sys.modules["npu_benchmark"] = importlib.util.module_from_spec(_SPEC)
_SPEC.loader.exec_module(bench)


def test_integer_samples_are_the_int8_and_int16_ones():
    names = sorted(p.stem for p in bench.integer_samples())
    assert names == ["int16x8", "int8_cnn", "int8_dynamic_batch", "uint8_io"]


def _row(model, ours, fast, peer, direct, notes=()):
    return {"model": model, "ours": ours, "fast": fast, "peer": peer, "direct": direct, "notes": list(notes)}


def test_table_ratios_and_medians():
    rows = [_row("a", 100, 50, 200, 25), _row("b", 300, 100, 200, 100), _row("c", 90, 30, None, 30, ["peer: x"])]
    lines = bench.markdown(rows).splitlines()
    assert lines[2] == "| a | 100 | 50 | 200 | 25 | 0.50x | 4.00x | 0.25x | 2.00x |  |"
    assert lines[4] == "| c | 90 | 30 | - | 30 | - | 3.00x | - | 1.00x | peer: x |"
    # medians over the rows that have both numbers: ours/peer of a and b only
    assert lines[5] == "| **median** |  |  |  |  | 1.00x | 3.00x | 0.38x | 1.00x |  |"


_STATEFUL_MLIR = """module {
  tosa.variable @"a" = dense<-128> : tensor<1x2xi8>
  tosa.variable @"b" = dense<0> : tensor<3xi8>
  func.func @main(%arg0: tensor<1x2xi8> {x = ["in"]}) -> (tensor<1x2xi8> {x = ["out"]}) attributes {y = 1} {
    %0 = tosa.variable_read @"a" : tensor<1x2xi8>
    %1 = builtin.unrealized_conversion_cast %0 : tensor<1x2xi8> to tensor<1x2xi8>
    %10 = tosa.add %1, %arg0 : (tensor<1x2xi8>, tensor<1x2xi8>) -> tensor<1x2xi8>
    %2 = tosa.variable_read @"b" : tensor<3xi8>
    tosa.variable_write @"a", %10 : tensor<1x2xi8>
    return %10 : tensor<1x2xi8>
  }
}"""


def test_peer_mlir_variables_become_arguments_and_results_in_declaration_order():
    text = bench.fold_identity_casts(bench.variables_as_io(_STATEFUL_MLIR))
    assert "variable" not in text and "unrealized_conversion_cast" not in text
    head = next(line for line in text.splitlines() if "func.func @main" in line)
    assert head.strip() == ('func.func @main(%arg0: tensor<1x2xi8> {x = ["in"]}, %0: tensor<1x2xi8>, %2: tensor<3xi8>)'
                            ' -> (tensor<1x2xi8> {x = ["out"]}, tensor<1x2xi8>, tensor<3xi8>) attributes {y = 1} {')
    assert "%10 = tosa.add %0, %arg0" in text   # the cast's uses read its operand; %10 is not renamed
    # 'a' returns its last write, 'b' (never written) its read value
    assert "return %10, %10, %2 : tensor<1x2xi8>, tensor<1x2xi8>, tensor<3xi8>" in text
