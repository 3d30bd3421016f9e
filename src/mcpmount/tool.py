"""A mounted tool: one row of the registry's name table."""

from __future__ import annotations

from dataclasses import dataclass

import mcp_types

__all__ = ["MountedTool"]


@dataclass(frozen=True, slots=True)
class MountedTool:
    """A tool of one server, as the registry publishes it."""

    name: str
    """The public name, ``<namespace>__<tool>``; unique in the registry."""

    server: str
    """The namespace of the server that owns the tool."""

    raw_name: str
    """The name the server listed it under; calls are sent with this name."""

    definition: mcp_types.Tool
    """The definition exactly as the server listed it (untrusted data)."""

    deferred: bool = False
    """Hidden from the per-turn manifest; found through ``tool_search``, still callable."""

    def to_mcp(self) -> mcp_types.Tool:
        """Return the definition under its public name, as a ``tools/list`` entry."""
        return self.definition.model_copy(update={"name": self.name})

    def to_dict(self) -> dict[str, object]:
        """Return the wire form (camelCase keys) under the public name."""
        return self.to_mcp().model_dump(mode="json", by_alias=True, exclude_none=True)
