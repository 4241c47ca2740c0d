"""Rendering and the error boundary: internal errors, --debug, colour, progress and diagnostics text."""
from __future__ import annotations

import io
import json
import time

import pytest
from rich.console import Console

import tosaconv.api
from tosaconv.diagnostics import Diagnostic
from tosaconv.diagnostics.render import DelayedProgress, Renderer, diagnostic_text
from tosaconv.ir.location import Location


def _explode(path, **options):
    raise RuntimeError("kaboom")


def test_internal_error_is_one_line_with_debug_hint(cli, symbolic_model, monkeypatch):
    monkeypatch.setattr(tosaconv.api, "load", _explode)
    r = cli("inspect", symbolic_model)
    assert r.exit_code == 1
    assert r.stderr == "internal error: RuntimeError: kaboom (re-run with --debug for the traceback)\n"
    assert r.stdout == ""


def test_internal_error_in_json_mode(cli, symbolic_model, monkeypatch):
    monkeypatch.setattr(tosaconv.api, "load", _explode)
    r = cli("inspect", symbolic_model, "--json")
    doc = json.loads(r.stdout)
    assert r.exit_code == 1 and doc["exit_code"] == 1 and doc["diagnostics"][0]["code"] == "E-INTERNAL"


@pytest.mark.parametrize("where", ["group", "command"])
def test_debug_shows_the_traceback(cli, symbolic_model, monkeypatch, where):
    monkeypatch.setattr(tosaconv.api, "load", _explode)
    args = ("--debug", "inspect", symbolic_model) if where == "group" else ("inspect", symbolic_model, "--debug")
    r = cli(*args)
    assert isinstance(r.exception, RuntimeError)     # propagates: Python prints the traceback


def test_debug_traceback_in_a_real_process(run_module, tmp_path):
    (tmp_path / "bad.onnx").write_bytes(b"junk")
    r = run_module("--debug", "convert", "bad.onnx", "-o", "m.tosa")
    assert r.exit_code == 3 and "Traceback" in r.stderr and "E-MODEL-READ" in r.stderr


def test_no_color_is_honoured(cli, symbolic_model):
    colored = cli("convert", symbolic_model, "-o", "m.tosa", env={"FORCE_COLOR": "1", "NO_COLOR": None})
    plain = cli("convert", symbolic_model, "-o", "m.tosa", env={"FORCE_COLOR": "1", "NO_COLOR": "1"})
    assert colored.exit_code == plain.exit_code == 4
    assert "\x1b[" in colored.stderr
    assert "\x1b[" not in plain.stderr and "error[E-UNBOUND-SYMBOL]" in plain.stderr


def test_quiet_suppresses_the_summary(cli, symbolic_model):
    r = cli("convert", symbolic_model, "--bind", "batch=1", "--bind", "seq=1", "-o", "m.tosa", "-q")
    assert r.exit_code == 0 and r.stdout == "" and r.stderr == ""


def test_diagnostic_text_keeps_brackets_and_lists_everything():
    d = Diagnostic("E-SHAPE", "bad tensor<[batch]x3xf32>", Location("Add", "add0", "onnx"), ("why [1]",), "do [this]")
    text = diagnostic_text(d).plain
    assert text.splitlines() == ["error[E-SHAPE]: bad tensor<[batch]x3xf32>", "  at: Add 'add0'",
                                 "  note: why [1]", "  hint: do [this]"]


def test_progress_only_on_a_terminal(cli, symbolic_model):
    assert not Renderer().progress()._enabled     # the test runner's stderr is not a terminal


def _terminal():
    out = io.StringIO()
    return out, Console(file=out, force_terminal=True, width=80)


def test_progress_appears_after_the_delay():
    out, console = _terminal()
    with DelayedProgress(console, enabled=True, delay=0.05) as progress:
        progress.update("specializing")
        time.sleep(0.5)
    assert "specializing" in out.getvalue()


def test_progress_stays_hidden_for_quick_work():
    out, console = _terminal()
    with DelayedProgress(console, enabled=True, delay=1.0) as progress:
        progress.update("loading")
    assert out.getvalue() == ""


SUMMARY_LINES = ["converted m.onnx → /tmp/out dir/m.tosa: 23 ops, no symbols bound, 1 file written in 0.04 s",
                 "[bold]not markup[/bold] :smile: ends in spaces   ", "wide 漢字 and é " + "x" * 300, ""]


@pytest.mark.parametrize("terminal", [False, True])
@pytest.mark.parametrize("line", SUMMARY_LINES)
def test_summary_without_rich_is_what_rich_prints(line, terminal, capsys):
    """The summary's rich-free path writes exactly what rich's Console would, on a terminal or not."""
    from rich.text import Text
    buffer = io.StringIO()
    Console(file=buffer, force_terminal=terminal, width=40, highlight=False).print(Text(line), soft_wrap=True)
    Renderer().summary(line)
    assert capsys.readouterr().out == buffer.getvalue()


def test_summary_with_control_characters_still_goes_through_rich(capsys):
    """A tab or a carriage return is not printable: rich expands or drops it, as before."""
    from rich.text import Text
    line = "a\tb\rc"
    buffer = io.StringIO()
    Console(file=buffer, highlight=False).print(Text(line), soft_wrap=True)
    Renderer().summary(line)
    assert capsys.readouterr().out == buffer.getvalue() != line + "\n"


@pytest.mark.parametrize("env, isatty, expected", [
    ({}, False, False), ({}, True, True), ({"FORCE_COLOR": "1"}, False, True), ({"FORCE_COLOR": ""}, False, False),
    ({"TTY_COMPATIBLE": "1"}, False, True), ({"TTY_COMPATIBLE": "0"}, True, False)])
def test_terminal_precheck_never_overrules_rich(env, isatty, expected, monkeypatch):
    """The progress display's rich-free pre-check says "no terminal" only where rich says so too."""
    from tosaconv.diagnostics.render import _may_be_terminal
    for name in ("FORCE_COLOR", "TTY_COMPATIBLE", "NO_COLOR"):
        monkeypatch.delenv(name, raising=False)
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    stream = io.StringIO()
    stream.isatty = lambda: isatty
    assert Console(file=stream).is_terminal == expected
    assert _may_be_terminal(stream) or not expected
