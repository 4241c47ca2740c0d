"""The ONNX converter registry: ``@converter("Conv", since=11)``, ``@converter("QGemm", domain=MS)``.

A converter is registered next to its function with the first op version it
handles; it covers later versions until another converter for the same op
takes over. For the default domain the op version in effect for a model
comes from ``onnx.defs`` (the schema's ``since_version`` at the model's
opset, read through :mod:`.schema_facts`, a table generated from it), so
resolution follows ONNX's own versioning rather than a hand-kept table.
``onnx.defs`` knows no other domain, so an op of another domain (the
``com.microsoft`` ops onnxruntime's quantizer writes) is first *declared*
with :func:`declare` (its versions and attribute defaults, from that
domain's documentation) and is then resolved the same way against the
model's import of that domain. A converter for an undeclared domain op is a
programming error, caught when the module registers it.

What a claimed op does not handle is published next to its converter with
:func:`publish` (:class:`~tosaconv.lowering.limits.Limit` records: attribute
values, types, input forms, outputs); ``tosaconv ops`` lists them with the
op, and the converter raises its refusals from the same records. Limits of
every op (the model's input types and dims) are published under ``EVERY_OP``.
"""
from __future__ import annotations

import functools
from ...records import dataclass   # dataclasses' classes, built faster (issue 13)
from typing import Callable, Mapping, Optional, Union

import onnx
import onnx.defs

from ...lowering.limits import Limit
from . import ops as _families   # the family modules, imported when an op is first resolved
from .schema_facts import SchemaFacts, lookup


DEFAULT_DOMAINS = ("", "ai.onnx")

_REGISTRY: dict = {}   # (domain, op_type) -> sorted list of (since, fn)
_DECLARED: dict = {}   # (domain, op_type) -> sorted list of DomainSchema
# What resolve() and schema() answered, by (op_type, opset, domain): a model asks the same few questions for
# every node. Registering a converter or declaring a schema empties both.
_RESOLVED: dict = {}
_SCHEMAS: dict = {}
_LIMITS: dict = {}     # (domain, op_type) -> {key: Limit}, in publication order
_LOADED: set = set()   # (domain, op_type) whose family modules are imported (see .ops)


def _load(op_type: str, domain: str) -> None:
    """Import the family modules of ``op_type`` (and the com.microsoft declarations) the first time it is asked for."""
    key = (_key(domain), op_type)
    if key not in _LOADED:
        _families.load(op_type, key[0])
        _LOADED.add(key)


@dataclass(frozen=True)
class DomainAttribute:
    """What :class:`~.reader.NodeReader` reads of an attribute's schema: its default and whether it is required."""

    default_value: onnx.AttributeProto
    required: bool


@dataclass(frozen=True)
class DomainSchema:
    """The part of an op schema tosaconv uses, for an op ``onnx.defs`` does not define."""

    domain: str
    name: str
    since_version: int
    attributes: Mapping[str, DomainAttribute]


REQUIRED = object()    # an attribute without default that must be set


def declare(domain: str, op_type: str, since: int, attributes: Optional[dict] = None) -> None:
    """Declare version ``since`` of ``domain``'s ``op_type`` with ``{attribute: default}``
    (``REQUIRED``, or None for an optional attribute without default)."""
    attrs = {name: _attribute(name, default) for name, default in (attributes or {}).items()}
    entries = _DECLARED.setdefault((domain, op_type), [])
    if any(s.since_version == since for s in entries):
        raise ValueError(f"{domain}.{op_type} version {since} is declared twice")
    entries.append(DomainSchema(domain, op_type, since, attrs))
    entries.sort(key=lambda s: s.since_version)
    _forget_answers()


def _forget_answers() -> None:
    _RESOLVED.clear()
    _SCHEMAS.clear()


def _attribute(name: str, default: object) -> DomainAttribute:
    if default is REQUIRED or default is None:
        return DomainAttribute(onnx.AttributeProto(), default is REQUIRED)
    return DomainAttribute(onnx.helper.make_attribute(name, default), False)


def converter(op_type: str, since: int = 1, domain: str = "") -> Callable:
    if domain not in DEFAULT_DOMAINS and (domain, op_type) not in _DECLARED:
        raise ValueError(f"{domain}.{op_type} has a converter but no declared schema (see registry.declare)")

    def register(fn: Callable) -> Callable:
        entries = _REGISTRY.setdefault((_key(domain), op_type), [])
        if any(s == since for s, _ in entries):
            raise ValueError(f"two converters for {op_type} since version {since}")
        entries.append((since, fn))
        entries.sort(key=lambda e: e[0])
        _forget_answers()
        return fn
    return register


def publish(op_type: str, *limits: Limit, domain: str = "") -> Union[Limit, tuple[Limit, ...]]:
    """Publish ``limits`` of ``op_type`` (shown by ``tosaconv ops``); returns them, for the converter to
    ``raise limit.refuse(...)``. A key published twice for one op is a programming error."""
    table = _LIMITS.setdefault((_key(domain), op_type), {})
    for limit in limits:
        if limit.key in table:
            raise ValueError(f"{op_type} publishes limit '{limit.key}' twice")
        table[limit.key] = limit
    return limits[0] if len(limits) == 1 else limits


def published_limits(op_type: str, domain: str = "") -> list:
    """The published limits of ``op_type``, in publication order."""
    if op_type == EVERY_OP:
        _families.load_all()
    else:
        _load(op_type, domain)
    return list(_LIMITS.get((_key(domain), op_type), {}).values())


EVERY_OP = "*"   # limits published under this name apply to every op: the model's inputs, as the driver reads them


def importer_limits() -> list:
    """The limits of every ONNX op (element types and dims of the model's inputs), in publication order."""
    return published_limits(EVERY_OP)


def _key(domain: str) -> str:
    return "" if domain in DEFAULT_DOMAINS else domain


def schema(op_type: str, opset: int, domain: str = "") -> Union[SchemaFacts, DomainSchema, None]:
    """The ONNX schema (or declared :class:`DomainSchema`) of ``op_type`` at ``opset`` of its
    domain, or None if there is no such op."""
    key = (op_type, opset, domain)
    if key not in _SCHEMAS:
        _load(op_type, domain)
        _SCHEMAS[key] = _find_schema(op_type, opset, domain)
    return _SCHEMAS[key]


def _find_schema(op_type: str, opset: int, domain: str) -> Union[SchemaFacts, DomainSchema, None]:
    if _key(domain) == "":
        found = _onnx_schema(op_type, opset)
        if found is not None:
            return found   # else perhaps one of onnxruntime's own ops of the default domain, declared with domain ""
    usable = [s for s in _DECLARED.get((domain, op_type), []) if s.since_version <= opset]
    return usable[-1] if usable else None


@functools.lru_cache(maxsize=4096)
def _onnx_schema(op_type: str, opset: int) -> Optional[SchemaFacts]:
    """onnx's own schema, as :mod:`.schema_facts` gives it (a model asks for each op many times)."""
    return lookup(op_type, opset)


def op_version(op_type: str, opset: int, domain: str = "") -> Optional[int]:
    """The version of ``op_type`` in effect at ``opset`` (of its domain), or None if there is no such op."""
    found = schema(op_type, opset, domain)
    return found.since_version if found is not None else None


def resolve(op_type: str, opset: int, domain: str = "") -> Optional[Callable]:
    """The converter for ``op_type`` at ``opset`` (of its domain), or None when unsupported."""
    key = (op_type, opset, domain)
    if key not in _RESOLVED:
        _load(op_type, domain)
        _RESOLVED[key] = _find_converter(op_type, opset, domain)
    return _RESOLVED[key]


def _find_converter(op_type: str, opset: int, domain: str) -> Optional[Callable]:
    entries = _REGISTRY.get((_key(domain), op_type))
    version = op_version(op_type, opset, domain)
    if not entries or version is None:
        return None
    usable = [fn for since, fn in entries if since <= version]
    return usable[-1] if usable else None


def supported_ops() -> list:
    """``(domain, op_type, first version)`` for every registered converter."""
    _families.load_all()
    return sorted((d, op, entries[0][0]) for (d, op), entries in _REGISTRY.items())


def support_table(min_opset: int, max_opset: int) -> list:
    """One row per registered op: the model opsets it converts at, the op's schema versions those
    opsets select and its published limits. For the default domain the opsets are those in ``[min_opset, max_opset]``; for
    another domain, every declared version of that domain's op set up to its newest. An op that
    onnxruntime defines in the default domain (declared with domain "") gets its own row, with domain
    ``ORT_DEFAULT_DOMAIN``, for the opsets at which ``onnx.defs`` has no such op."""
    _families.load_all()
    rows = []
    for (domain, op_type), entries in sorted(_REGISTRY.items()):
        lo, hi = (min_opset, max_opset) if domain == "" else _declared_range(domain)
        opsets = [o for o in range(lo, hi + 1) if resolve(op_type, o, domain)]
        for label, chosen in _by_origin(op_type, domain, opsets):
            versions = sorted({op_version(op_type, o, domain) for o in chosen})
            since = max(s for s, _ in entries if s <= versions[0])
            rows.append({"op_type": op_type, "domain": label, "since": since,
                         "opsets": [chosen[0], chosen[-1]], "versions": versions,
                         "limits": [limit.to_json() for limit in published_limits(op_type, domain)]})
    return rows


ORT_DEFAULT_DOMAIN = "ai.onnx (onnxruntime)"


def _by_origin(op_type: str, domain: str, opsets: list) -> list:
    """``[(domain label, opsets)]``: a default-domain op's opsets split into ONNX's and onnxruntime's."""
    if domain != "":
        return [(domain, opsets)] if opsets else []
    standard = [o for o in opsets if isinstance(schema(op_type, o), SchemaFacts)]
    ort_own = [o for o in opsets if o not in standard]
    return [(label, chosen) for label, chosen in (("ai.onnx", standard), (ORT_DEFAULT_DOMAIN, ort_own)) if chosen]


def _declared_range(domain: str) -> tuple:
    versions = [s.since_version for (d, _), entries in _DECLARED.items() if d == domain for s in entries]
    return min(versions), max(versions)
