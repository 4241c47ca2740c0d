"""The ``tosaconv`` command line: a click group over :mod:`tosaconv.api`.

Commands parse their options, call the library, render the result and
return an exit code; none holds conversion logic. Exit codes are a contract:
0 ok, 1 internal error, 2 usage, 3 the model cannot be read or converted,
4 a shape problem. :class:`TosaconvGroup` makes click's own usage errors
follow ``--json`` too, so a script that asked for JSON always gets exactly
one JSON document on stdout.
"""
from __future__ import annotations

import sys

import click

from ..diagnostics import EXIT_USAGE, Diagnostic
from ..diagnostics.render import Renderer
from ..report import tool_version
from .commands import import_, run, specialize
from .common import EXIT_INTERRUPTED
from .convert import convert
from .info import inspect, ops


class TosaconvGroup(click.Group):
    """A group whose ``main`` returns (or exits with) the command's exit code."""

    def main(self, args=None, prog_name=None, complete_var=None, standalone_mode=True, **extra):
        argv = list(sys.argv[1:] if args is None else args)
        try:
            code = super().main(argv, prog_name, complete_var, standalone_mode=False, **extra)
        except click.ClickException as e:
            code = _usage_failure(e, json_mode="--json" in argv)
        except click.Abort:
            code = EXIT_INTERRUPTED
        code = code or 0
        if standalone_mode:
            sys.exit(code)
        return code


def _usage_failure(e: click.ClickException, json_mode: bool) -> int:
    if json_mode:
        Renderer(json_mode=True).diagnostics([Diagnostic("E-USAGE", e.format_message())], EXIT_USAGE)
    else:
        e.show()
    return EXIT_USAGE


@click.group(cls=TosaconvGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.option("--debug", is_flag=True, envvar="TOSACONV_DEBUG", help="Show tracebacks of internal errors.")
@click.version_option(tool_version(), "--version", prog_name="tosaconv")
def cli(debug):
    """Convert ONNX models with dynamic dims to static TOSA 1.0, and run them.

    Exit codes: 0 ok, 1 internal error, 2 usage, 3 model cannot be read or
    converted, 4 shape problem (unbound symbol, violated constraint,
    data-dependent dim, inputs that do not fit).
    """


for _command in (convert, import_, specialize, run, inspect, ops):
    cli.add_command(_command)


def main(args=None) -> int:
    """The console script ``tosaconv``."""
    return cli.main(args, prog_name="tosaconv")
