"""``python -m tosaconv`` and the ``tosaconv`` console script: the command line, then a fast exit.

When the command is done (its outputs committed, its report printed), :func:`run`
flushes stdout and stderr and ends the process with ``os._exit``: an orderly
interpreter shutdown would first free every object of the conversion one by one
(the IR graph, the imported model, a thousand modules), which costs about 8 % of
a real model's conversion and serves no one. Code that calls
:func:`tosaconv.cli.main` in-process still gets a normal ``SystemExit``.
"""
import os
import sys

from tosaconv.cli import cli


def run() -> None:
    """Run the command line on ``sys.argv`` and exit with its code, skipping the interpreter's teardown."""
    code = cli.main(sys.argv[1:], prog_name="tosaconv", standalone_mode=False) or 0
    try:
        sys.stdout.flush()
        sys.stderr.flush()
    except BrokenPipeError:   # a reader that went away (``tosaconv ... | head``): nothing left to tell it
        pass
    os._exit(code)


if __name__ == "__main__":
    run()
