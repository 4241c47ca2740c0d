"""The lexical layer of the ``.tosair`` parser: a cursor over the text.

:class:`Cursor` knows the line and column of every position and reads the
pieces of the format (words, quoted strings, numbers, dims, balanced spans);
anything malformed becomes a :class:`ParseError` that says where and what was
expected. The grammar lives in :mod:`.parser`.
"""
from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import TypeVar, cast

from ..symbolic.expr import Dim
from ..symbolic.parse import DimSyntaxError, parse_dim

_T = TypeVar("_T")

STRING = re.compile(r'"(?:[^"\\]|\\.)*"', re.DOTALL)
IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_.]*")
BARE_VALUE = re.compile(r"[A-Za-z0-9_.]+")
OP_NAME = re.compile(r"[A-Z][A-Z0-9_]*\b")
INT = re.compile(r"-?\d+(?![\w.])")
DIGITS = re.compile(r"-?\d+")  # a static dim in a tensor type, directly followed by 'x'
FLOAT = re.compile(r"-?(?:inf|nan|\d+(?:\.\d+)?(?:[eE][-+]?\d+)?)(?![\w.])")
BOOL = re.compile(r"(?:true|false)(?![\w.])")
ARRAY_DTYPE = re.compile(r"bool|([iuf])(8|16|32|64)")
SPACE = re.compile(r"(?:\s+|//[^\n]*)*")
MAX_NUMBER_CHARS = 64   # int64 needs 20 characters and a float 25: longer numbers are damage, refused unparsed
LONG_NUMBER = re.compile(r"\d{%d,}" % (MAX_NUMBER_CHARS + 1))
_NUMBERS = (INT, DIGITS, FLOAT)
JSON = json.JSONDecoder(strict=False)  # strings are JSON literals; raw control characters are allowed


class ParseError(ValueError):
    """Malformed ``.tosair`` text; ``line`` and ``column`` are 1-based."""

    def __init__(self, message: str, line: int, column: int) -> None:
        self.message, self.line, self.column = message, line, column
        super().__init__(f"line {line}, column {column}: {message}")


class Cursor:
    """Position in the text plus the lexical pieces: words, strings, numbers, dims."""

    def __init__(self, text: str) -> None:
        self.text, self.pos = text, 0

    def error(self, message: str, pos: int | None = None) -> ParseError:
        pos = self.pos if pos is None else pos
        line = self.text.count("\n", 0, pos) + 1
        return ParseError(message, line, pos - self.text.rfind("\n", 0, pos))

    def found(self) -> str:
        m = re.compile(r"\S{1,24}").match(self.text, self.pos)
        return f"found {m.group()!r}" if m else "found the end of the text"

    def skip(self) -> None:
        m = SPACE.match(self.text, self.pos)
        assert m is not None   # SPACE matches the empty string, so it matches everywhere
        self.pos = m.end()

    def peek(self, s: str) -> bool:
        self.skip()
        return self.text.startswith(s, self.pos)

    def eat(self, s: str) -> bool:
        if self.peek(s):
            self.pos += len(s)
            return True
        return False

    def expect(self, s: str, where: str = "") -> None:
        if not self.eat(s):
            raise self.error(f"expected '{s}'{' ' + where if where else ''}, {self.found()}")

    def keyword(self, word: str) -> bool:
        self.skip()
        if re.compile(re.escape(word) + r"(?![\w.])").match(self.text, self.pos):
            self.pos += len(word)
            return True
        return False

    def expect_keyword(self, word: str, where: str = "") -> None:
        if not self.keyword(word):
            raise self.error(f"expected '{word}'{' ' + where if where else ''}, {self.found()}")

    def match(self, pattern: re.Pattern[str], what: str, skip: bool = True) -> str:
        if skip:
            self.skip()
        m = pattern.match(self.text, self.pos)
        if not m:
            raise self.error(f"expected {what}, {self.found()}")
        if pattern in _NUMBERS and len(m.group()) > MAX_NUMBER_CHARS:
            raise self.error(f"a number of {len(m.group())} characters; no TOSA value needs more than "
                             f"{MAX_NUMBER_CHARS}")
        self.pos = m.end()
        return m.group()

    def string(self, what: str = "a quoted string", skip: bool = True) -> str:
        if skip:
            self.skip()
        start, m = self.pos, STRING.match(self.text, self.pos)
        if not m:
            quote = self.text.startswith('"', start)
            raise self.error("unterminated string" if quote else f"expected {what}, {self.found()}")
        self.pos = m.end()
        try:
            return cast(str, JSON.decode(m.group()))   # STRING matched a JSON string literal
        except json.JSONDecodeError as e:
            raise self.error(f"invalid escape in string: {e.msg}", start) from None

    def listing(self, item: Callable[[], _T], close: str, what: str) -> list[_T]:
        """``item()`` repeated, separated by commas, up to the ``close`` token."""
        out: list[_T] = []
        while not self.eat(close):
            if out:
                self.expect(",", f"between {what}")
            out.append(item())
        return out

    def word(self, what: str) -> str:
        return self.string(what) if self.peek('"') else self.match(IDENT, what)

    def integer(self, what: str) -> int:
        return int(self.match(INT, what))

    def value_name(self) -> tuple[str, int]:
        """``(name, position)`` of a ``%name`` or ``%"quoted name"``."""
        self.skip()
        start = self.pos
        if not self.text.startswith("%", start):
            raise self.error(f"expected a value name such as %x, {self.found()}")
        self.pos += 1
        if self.text.startswith('"', self.pos):
            return self.string(skip=False), start
        return self.match(BARE_VALUE, "a value name after '%'", skip=False), start

    def dim(self, stops: str, what: str) -> Dim:
        """A dim expression running up to the first of ``stops`` outside parentheses and quotes."""
        self.skip()
        start, end = self.pos, self._dim_end(stops)
        source, self.pos = self.text[start:end], end
        if not source.strip():
            raise self.error(f"expected {what}, {self.found()}")
        long = LONG_NUMBER.search(source)
        if long:
            raise self.error(f"a number of {len(long.group())} digits in {what}; no TOSA dim needs more than "
                             f"{MAX_NUMBER_CHARS}", start + long.start())
        try:
            return parse_dim(source)
        except (DimSyntaxError, ZeroDivisionError, RecursionError) as e:
            shown = source.strip() if len(source) < 60 else source.strip()[:57] + "..."
            raise self.error(f"invalid {what} {shown!r}: {e}", start) from None

    def _dim_end(self, stops: str) -> int:
        i, depth = self.pos, 0
        while i < len(self.text) and self.text[i] != "\n":
            c = self.text[i]
            if c == '"':
                m = STRING.match(self.text, i)
                if not m:
                    raise self.error("unterminated string", i)
                i = m.end()
                continue
            if depth <= 0 and c in stops:
                break
            depth += (c == "(") - (c == ")")
            i += 1
        return i
