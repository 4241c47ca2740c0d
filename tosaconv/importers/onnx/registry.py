"""The ONNX converter registry: ``@converter("Conv", since=11)``.

A converter is registered next to its function with the first op version it
handles; it covers later versions until another converter for the same op
takes over. The op version in effect for a model comes from ``onnx.defs``
(the schema's ``since_version`` at the model's opset), so resolution follows
ONNX's own versioning rather than a hand-kept table.
"""
from __future__ import annotations

from typing import Callable, Optional

import onnx.defs

_REGISTRY: dict = {}   # (domain, op_type) -> sorted list of (since, fn)


def converter(op_type: str, since: int = 1, domain: str = "") -> Callable:
    def register(fn: Callable) -> Callable:
        entries = _REGISTRY.setdefault((domain, op_type), [])
        if any(s == since for s, _ in entries):
            raise ValueError(f"two converters for {op_type} since version {since}")
        entries.append((since, fn))
        entries.sort(key=lambda e: e[0])
        return fn
    return register


def op_version(op_type: str, opset: int, domain: str = "") -> Optional[int]:
    """The version of ``op_type`` in effect at ``opset``, or None if ONNX has no such op."""
    try:
        return onnx.defs.get_schema(op_type, opset, domain).since_version
    except onnx.defs.SchemaError:
        return None


def resolve(op_type: str, opset: int, domain: str = "") -> Optional[Callable]:
    """The converter for ``op_type`` at ``opset``, or None when unsupported."""
    entries = _REGISTRY.get((domain, op_type))
    version = op_version(op_type, opset, domain)
    if not entries or version is None:
        return None
    usable = [fn for since, fn in entries if since <= version]
    return usable[-1] if usable else None


def supported_ops() -> list:
    """``(domain, op_type, first version)`` for every registered converter."""
    return sorted((d, op, entries[0][0]) for (d, op), entries in _REGISTRY.items())


def support_table(min_opset: int, max_opset: int) -> list:
    """One row per registered op: the model opsets in ``[min_opset, max_opset]`` it converts at,
    and the op's schema versions those opsets select (from ``onnx.defs``)."""
    rows = []
    for (domain, op_type), entries in sorted(_REGISTRY.items()):
        opsets = [o for o in range(min_opset, max_opset + 1) if resolve(op_type, o, domain)]
        if not opsets:
            continue
        versions = sorted({op_version(op_type, o, domain) for o in opsets})
        rows.append({"op_type": op_type, "domain": domain or "ai.onnx", "since": entries[0][0],
                     "opsets": [opsets[0], opsets[-1]], "versions": versions})
    return rows
