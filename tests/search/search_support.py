"""Tools to index in the search tests, and the names a query finds."""

from __future__ import annotations

import mcp_types

from mcpmount.search import SearchIndex
from mcpmount.tool import MountedTool


def make(
    namespace: str,
    raw_name: str,
    description: str = "",
    args: dict[str, str] | None = None,
    title: str | None = None,
) -> MountedTool:
    """A mounted tool ``namespace__raw_name`` whose arguments are strings described by ``args``."""
    properties = {k: {"type": "string", "description": v} for k, v in (args or {}).items()}
    definition = mcp_types.Tool(
        name=raw_name,
        title=title,
        description=description,
        input_schema={"type": "object", "properties": properties},
    )
    return MountedTool(f"{namespace}__{raw_name}", namespace, raw_name, definition, True)


def names(index: SearchIndex, query: str, limit: int = 5) -> list[str]:
    """The public names ``query`` finds, best first."""
    return [hit.tool.name for hit in index.search(query, limit).hits]
