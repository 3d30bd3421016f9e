"""A quick yes for the plain JSON Schemas most tools list, before the full metaschema check.

``jsonschema`` checks a schema against its metaschema through ``$ref``/``$dynamicRef``
lookups that cost about a millisecond per tool schema. Most tool schemas (those pydantic,
zod or hand-written tools produce) use a few keywords with simple shapes, which the Draft
2020-12 metaschema (``jsonschema``'s default, used when a schema names no ``$schema``)
constrains as `plainly_valid` checks here. It only ever says yes: a schema with any other
keyword, a ``$schema`` other than 2020-12's at its root, or any value it is not sure of
goes to the full check, which also words the problem.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from typing import Any

__all__ = ["plainly_valid"]

DRAFT_2020_12 = "https://json-schema.org/draft/2020-12/schema"

_SIMPLE_TYPES = frozenset({"array", "boolean", "integer", "null", "number", "object", "string"})

_LOCAL_REF = re.compile(r"#(?:/[A-Za-z0-9_.~$-]*)*")
"""A ``$ref`` into the same document (``#/$defs/Name``): a valid URI reference, whichever
checker ``jsonschema`` has for that format."""


def _is_number(value: object) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _is_count(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0


def _is_names(value: object) -> bool:
    """A list of distinct strings (``uniqueItems`` holds for strings as for a set)."""
    if not isinstance(value, list):
        return False
    names: list[object] = list(value)  # pyright: ignore[reportUnknownArgumentType]
    return all(isinstance(n, str) for n in names) and len(set(names)) == len(names)


def _is_type(value: object) -> bool:
    if isinstance(value, str):
        return value in _SIMPLE_TYPES
    if not _is_names(value):
        return False
    names: list[str] = value  # pyright: ignore[reportAssignmentType]
    return bool(names) and set(names) <= _SIMPLE_TYPES


_VALUES: dict[str, Callable[[object], bool]] = {
    "type": _is_type,
    "required": _is_names,
    "enum": lambda v: isinstance(v, list),
    "examples": lambda v: isinstance(v, list),
    "const": lambda _: True,
    "default": lambda _: True,
    "multipleOf": lambda v: isinstance(v, int | float) and not isinstance(v, bool) and v > 0,
    "$ref": lambda v: isinstance(v, str) and _LOCAL_REF.fullmatch(v) is not None,
    **dict.fromkeys(
        ("title", "description", "format", "$comment", "contentEncoding", "contentMediaType"),
        lambda v: isinstance(v, str),
    ),
    **dict.fromkeys(
        ("deprecated", "readOnly", "writeOnly", "uniqueItems"), lambda v: isinstance(v, bool)
    ),
    **dict.fromkeys(("minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum"), _is_number),
    **dict.fromkeys(
        (
            "minLength",
            "maxLength",
            "minItems",
            "maxItems",
            "minProperties",
            "maxProperties",
            "minContains",
            "maxContains",
        ),
        _is_count,
    ),
}
"""Keywords whose value is not a schema, and what the 2020-12 metaschema asks of it."""

_ONE_SCHEMA = frozenset(
    {
        "items",
        "additionalProperties",
        "not",
        "contains",
        "propertyNames",
        "if",
        "then",
        "else",
        "unevaluatedItems",
        "unevaluatedProperties",
        "contentSchema",
    }
)
_SCHEMA_LISTS = frozenset({"allOf", "anyOf", "oneOf", "prefixItems"})
"""Keywords whose value is a non-empty list of schemas."""
_SCHEMA_MAPS = frozenset({"properties", "$defs"})
"""Keywords whose value maps names to schemas."""


def plainly_valid(schema: Mapping[str, Any]) -> bool:
    """Return True only if ``schema`` is surely a valid Draft 2020-12 schema (see the module)."""
    if schema.get("$schema", DRAFT_2020_12) != DRAFT_2020_12:
        return False
    stack: list[object] = [{k: v for k, v in schema.items() if k != "$schema"}]
    while stack:
        item = stack.pop()
        if isinstance(item, bool):
            continue
        if not isinstance(item, dict):
            return False
        node: dict[str, object] = item  # pyright: ignore[reportUnknownVariableType]
        for key, value in node.items():
            if key in _ONE_SCHEMA:
                stack.append(value)
            elif key in _SCHEMA_MAPS:
                if not isinstance(value, dict):
                    return False
                stack.extend(value.values())  # pyright: ignore[reportUnknownMemberType, reportUnknownArgumentType]
            elif key in _SCHEMA_LISTS:
                if not isinstance(value, list) or not value:
                    return False
                stack.extend(value)  # pyright: ignore[reportUnknownArgumentType]
            elif (check := _VALUES.get(key)) is None or not check(value):
                return False
    return True
