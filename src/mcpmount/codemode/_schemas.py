"""JSON Schema to the text of a Python type, for the signatures of the tools' functions.

A schema comes from an untrusted server: it may be malformed, deep, cyclic or huge. The
text made from it is always a valid Python expression built only of ``Any``, ``Literal``,
``str``, ``int``, ``float``, ``bool``, ``None``, ``list``, ``dict`` and ASCII literals, so
it is safe to place in generated source. What cannot be read becomes ``Any``.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any, Final, cast

__all__ = ["literal_text", "shape_text", "type_text"]

_MAX_DEPTH: Final = 4
"""Deeper schemas read as ``Any``: a signature is for a reader, not a validator."""

_MAX_ENUM: Final = 24
"""An enum with more members reads as its members' type: a long Literal costs tokens."""

_MAX_LITERAL_CHARS: Final = 60
"""The longest literal (a default, an enum member) shown; longer ones are not shown."""

_MAX_FIELDS: Final = 12
"""An object's shape shows at most this many fields: a reader needs the gist."""

_SIMPLE: Final = {
    "string": "str",
    "integer": "int",
    "number": "float",
    "boolean": "bool",
    "null": "None",
}


def literal_text(value: object) -> str | None:
    """The Python literal of a JSON scalar, in ASCII; None if it is not one or too long.

    ``ascii`` of a str is always a valid, closed literal (quotes, backslashes and
    non-printable characters are escaped), so no value can break out of it.
    """
    if value is None or isinstance(value, bool):
        return repr(value)
    if isinstance(value, int):
        text = repr(value)
    elif isinstance(value, float):
        if not math.isfinite(value):
            return None  # repr gives "inf" or "nan": names, not literals
        text = repr(value)
    elif isinstance(value, str):
        text = ascii(value)
    else:
        return None
    return text if len(text) <= _MAX_LITERAL_CHARS else None


def type_text(schema: object, root: object = None) -> str:
    """The Python type of values of ``schema``, as source text; ``Any`` when unreadable.

    Args:
        schema: A JSON Schema (any object; only a dict says anything).
        root: The schema whose ``$defs`` (or ``definitions``) a local ``$ref`` names.
    """
    return _text(schema, root if root is not None else schema, 0)


def shape_text(schema: object, root: object = None) -> tuple[str, bool]:
    """The fields of the object ``schema`` describes, or of each item of its array, as
    ``{'name': str, 'tags': list[str]}``; and whether it is an array's items. ``""`` when
    it has no listed fields: ``dict[str, Any]`` in a signature says nothing of them."""
    root = root if root is not None else schema
    node = _follow(schema, root)
    each = node.get("type") == "array" or "items" in node
    if each:
        node = _follow(node.get("items"), root)
    properties = node.get("properties")
    if not isinstance(properties, dict) or not properties:
        return "", each
    fields = cast("dict[str, object]", properties)
    shown = [f"{key!a}: {_text(value, root, 1)}" for key, value in fields.items()]
    if len(shown) > _MAX_FIELDS:
        shown = [*shown[:_MAX_FIELDS], "..."]
    return "{" + ", ".join(shown) + "}", each


def _follow(schema: object, root: object) -> dict[str, Any]:
    """``schema`` as a dict, through at most a few local ``$ref``s; ``{}`` if it is none."""
    for _ in range(_MAX_DEPTH):
        if not isinstance(schema, dict):
            return {}
        ref = cast("dict[str, object]", schema).get("$ref")
        if ref is None:
            return cast("dict[str, Any]", schema)
        schema = _resolve(ref, root)
    return {}


def _text(schema: object, root: object, depth: int) -> str:
    if not isinstance(schema, dict) or depth > _MAX_DEPTH:
        return "Any"
    schema = cast("dict[str, Any]", schema)
    ref = schema.get("$ref")
    if ref is not None:
        return _text(_resolve(ref, root), root, depth + 1)
    if "const" in schema:
        literal = literal_text(schema["const"])
        return "Any" if literal is None else f"Literal[{literal}]"
    enum = schema.get("enum")
    if isinstance(enum, list) and enum:
        members = [literal_text(value) for value in cast("list[object]", enum)]
        if len(members) <= _MAX_ENUM and all(m is not None for m in members):
            return f"Literal[{', '.join(dict.fromkeys(cast('list[str]', members)))}]"
    for key in ("anyOf", "oneOf"):
        options = schema.get(key)
        if isinstance(options, list) and options:
            parts = [_text(option, root, depth + 1) for option in cast("list[object]", options)]
            return _union(parts, nullable=schema.get("nullable") is True)
    kind = schema.get("type")
    if isinstance(kind, list):
        kinds = [k for k in cast("list[object]", kind) if isinstance(k, str)]
        parts = [_typed(k, schema, root, depth) for k in kinds] or ["Any"]
    elif isinstance(kind, str):
        parts = [_typed(kind, schema, root, depth)]
    elif isinstance(schema.get("properties"), dict):
        parts = ["dict[str, Any]"]
    elif "items" in schema:
        parts = [_typed("array", schema, root, depth)]
    else:
        parts = ["Any"]
    return _union(parts, nullable=schema.get("nullable") is True)


def _typed(kind: str, schema: Mapping[str, Any], root: object, depth: int) -> str:
    simple = _SIMPLE.get(kind)
    if simple is not None:
        return simple
    if kind == "array":
        items = schema.get("items")
        return "list[Any]" if items is None else f"list[{_text(items, root, depth + 1)}]"
    if kind == "object":
        extra: object = schema.get("additionalProperties")
        if isinstance(extra, dict) and not schema.get("properties"):
            return f"dict[str, {_text(cast('object', extra), root, depth + 1)}]"
        return "dict[str, Any]"
    return "Any"


def _union(parts: list[str], *, nullable: bool) -> str:
    if nullable:
        parts = [*parts, "None"]
    unique = list(dict.fromkeys(parts))
    if "Any" in unique:
        return "Any"
    if unique[-1:] != ["None"] and "None" in unique:
        unique = [p for p in unique if p != "None"] + ["None"]  # `X | None`, as usually written
    return " | ".join(unique)


def _resolve(ref: object, root: object) -> object:
    """The schema a local ``#/$defs/name`` (or ``#/definitions/name``) names; else None."""
    if not isinstance(ref, str) or not isinstance(root, dict):
        return None
    for prefix, key in (("#/$defs/", "$defs"), ("#/definitions/", "definitions")):
        if ref.startswith(prefix):
            defs = cast("dict[str, object]", root).get(key)
            if isinstance(defs, dict):
                return cast("dict[str, object]", defs).get(ref[len(prefix) :])
    return None
