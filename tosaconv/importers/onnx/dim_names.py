"""Which ONNX ``dim_param`` strings name a dimension, and which only mean "unknown".

A real name (``batch``, ``seq``, ``N``, ``s0``) is one symbol wherever it
appears, so two axes that share it are tied. Exporters also write
placeholders that carry no identity: Paddle2ONNX writes ``?`` on every
dynamic axis, others write ``-1``, ``None``, an empty string, or tf2onnx's
counter names ``unk__123``. Tying those would claim that a 48x192 image is
square. The rule: a ``dim_param`` is a placeholder when, ignoring case and
surrounding spaces, it is empty, has no letter or digit (``?``, ``*``), is an
integer literal (``-1``, ``0``), is one of the words ``none``, ``null``,
``nil``, ``unk``, ``unknown``, ``undefined``, ``dynamic`` or ``dyn``, or has
the form ``unk__<digits>``. Each placeholder becomes one fresh symbol per
axis, named like an unnamed dim: ``<input>.<axis>``.
"""
from __future__ import annotations

import re

_WORDS = frozenset({"none", "null", "nil", "unk", "unknown", "undefined", "dynamic", "dyn"})
_PATTERNS = (re.compile(r"[^A-Za-z0-9]*"), re.compile(r"[+-]?[0-9]+"), re.compile(r"unk__[0-9]+"))


def is_placeholder(dim_param: str) -> bool:
    """Whether ``dim_param`` means only "unknown" (see the module docstring for the rule)."""
    text = dim_param.strip().lower()
    return text in _WORDS or any(p.fullmatch(text) for p in _PATTERNS)


def symbol_name(input_name: str, axis: int, dim_param: str) -> str:
    """The symbol for ``input_name``'s axis: the dim_param when it is a real name, else ``<input>.<axis>``."""
    return f"{input_name}.{axis}" if is_placeholder(dim_param) else dim_param
