"""Run one fuzz case through the command line in-process and judge the outcome.

A case is a set of files (written to a fresh directory) and the command's
arguments, in which ``{dir}`` stands for that directory. The run passes when
the exit code is one of the contract's (0, 2, 3, 4), nothing on stdout or
stderr looks like a traceback, no numpy RuntimeWarning was raised, the run
ended within the time limit, and a failed run left no output (nor a
temporary file) behind. A timeout is raised from a SIGALRM handler as a
``BaseException`` so that the command's own error boundary cannot swallow it.
"""
from __future__ import annotations

import os
import signal
import warnings
from dataclasses import dataclass, field

from click.testing import CliRunner

from tosaconv.cli import cli

CONTRACT_CODES = (0, 2, 3, 4)


class CaseTimeout(BaseException):
    """Raised by the alarm when a case runs too long."""


@dataclass
class Case:
    kind: str
    files: dict            # file name -> bytes
    args: list             # command arguments; '{dir}' is replaced by the case directory
    note: str = ""         # which mutation made it


@dataclass
class Verdict:
    ok: bool
    exit_code: int
    problem: str = ""
    stdout: str = ""
    stderr: str = ""
    left_behind: list = field(default_factory=list)


def materialize(case: Case, directory: str) -> list:
    """Write the case's files into ``directory``; the arguments with the directory filled in."""
    for name, data in case.files.items():
        with open(os.path.join(directory, name), "wb") as f:
            f.write(data)
    return [a.replace("{dir}", directory) for a in case.args]


def run_case(case: Case, directory: str, timeout: float = 20.0) -> Verdict:
    """Run ``case`` in the empty ``directory`` and judge it."""
    args = materialize(case, directory)
    before = set(os.listdir(directory))
    result, caught, timed_out = _invoke(args, timeout)
    code = result.exit_code if result is not None else -1
    out = result.stdout if result is not None else ""
    err = result.stderr if result is not None else ""
    left = sorted(set(os.listdir(directory)) - before) if code != 0 else []
    problem = _problem(code, out, err, caught, timed_out, left, result)
    return Verdict(not problem, code, problem, out, err, left)


def _invoke(args: list, timeout: float):
    previous = signal.signal(signal.SIGALRM, _alarm)
    signal.setitimer(signal.ITIMER_REAL, timeout)
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            result = CliRunner().invoke(cli, args, catch_exceptions=True)
        return result, [w for w in caught if issubclass(w.category, RuntimeWarning)], False
    except CaseTimeout:
        return None, [], True
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def _alarm(signum, frame):
    raise CaseTimeout()


def _problem(code, out, err, caught, timed_out, left, result) -> str:
    if timed_out:
        return "hang: no result within the time limit"
    if result is not None and isinstance(result.exception, CaseTimeout):
        return "hang: no result within the time limit"
    if code not in CONTRACT_CODES:
        first = (err or out).strip().splitlines()
        return f"exit {code}: {first[0] if first else repr(result.exception)}"
    if "Traceback (most recent call last)" in out + err:
        return "traceback printed"
    if caught:
        w = caught[0]
        return f"RuntimeWarning leaked: {w.message} ({os.path.basename(w.filename)}:{w.lineno})"
    if left:
        return f"failed run left files behind: {left}"
    return ""
