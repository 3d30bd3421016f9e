"""The fields of a tool that search reads, and what each weighs in BM25F.

Five fields, in this order: the name (public and raw, namespace included), the title, the
argument names, the description and the argument descriptions (argument titles too).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from mcpmount.search._analysis import Analyzer
from mcpmount.tool import MountedTool

__all__ = ["FIELD_B", "FIELD_WEIGHT", "Fields", "tool_fields"]

Fields = tuple[tuple[str, ...], ...]
"""Per field, its terms in order (repeats count)."""

# The name carries most signal and is short, so it weighs most and is barely
# length-normalized.
FIELD_WEIGHT: Final = (3.0, 2.0, 1.5, 1.0, 0.5)
"""Per field, its weight."""
FIELD_B: Final = (0.3, 0.5, 0.5, 0.5, 0.5)
"""Per field, its length normalization (BM25's ``b``)."""

_MAX_SCHEMA_DEPTH = 2


def tool_fields(tool: MountedTool, analyzer: Analyzer) -> Fields:
    """Return the terms of each field of ``tool``, analyzed by ``analyzer``."""
    tokenize = analyzer.tokenize
    d = tool.definition
    name = tokenize(tool.name)
    # Words never span a "_", so a public name ending in "_" + the raw name already holds
    # every term of the raw name (``fs__read_file``): skip tokenizing it again.
    if not tool.name.endswith("_" + tool.raw_name):
        seen = set(name)
        name += tuple(t for t in tokenize(tool.raw_name) if t not in seen)
    title = d.title or (d.annotations.title if d.annotations is not None else None) or ""
    params: list[str] = []
    texts: list[str] = []
    _schema_text(d.input_schema, 1, params, texts)
    return (
        name,
        tokenize(title),
        tokenize(" ".join(params)),
        tokenize(d.description or ""),
        tokenize(" ".join(texts)),
    )


def _schema_text(schema: Mapping[str, Any], depth: int, names: list[str], texts: list[str]) -> None:
    """Collect property names and descriptions, recursing into nested objects and arrays."""
    props: object = schema.get("properties")
    if not isinstance(props, dict):
        return
    for key, value in props.items():  # pyright: ignore[reportUnknownVariableType]
        if isinstance(key, str):
            names.append(key)
        if not isinstance(value, dict):
            continue
        prop: dict[str, Any] = value  # pyright: ignore[reportUnknownVariableType]
        for text_key in ("title", "description"):
            text = prop.get(text_key)
            if isinstance(text, str):
                texts.append(text)
        if depth < _MAX_SCHEMA_DEPTH:
            _schema_text(prop, depth + 1, names, texts)
            items = prop.get("items")
            if isinstance(items, dict):
                _schema_text(items, depth + 1, names, texts)  # pyright: ignore[reportUnknownArgumentType]
