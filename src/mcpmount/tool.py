"""A mounted tool: one row of the registry's name table."""

from __future__ import annotations

from dataclasses import dataclass

import mcp_types

from mcpmount.naming import SEPARATOR

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
    """The definition the model is shown: as the server listed it (untrusted data), with
    the server's override of its name, title or description applied (see `listed`)."""

    deferred: bool = False
    """Hidden from the per-turn manifest; found through ``tool_search``, still callable."""

    annotations_trusted: bool = False
    """Whether the server's behaviour hints (``readOnlyHint`` and friends) are believed.
    Set from the server's ``trust_annotations``; untrusted hints are not exported."""

    listed: mcp_types.Tool | None = None
    """The definition exactly as the server listed it, when an override changed it;
    None when `definition` is that."""

    @property
    def renamed(self) -> bool:
        """Whether the public name is not simply ``<namespace>__<raw name>``, or the raw
        name itself (``prefix = false``): an override renamed the tool, or its name was
        sanitized or shortened and carries a hash suffix."""
        return self.name not in (f"{self.server}{SEPARATOR}{self.raw_name}", self.raw_name)

    def to_mcp(self) -> mcp_types.Tool:
        """Return the definition under its public name, as a ``tools/list`` entry.

        Behaviour hints of an untrusted server are left out: a host may auto-approve a
        "read-only" tool, and any server can claim that ``delete_repo`` is read-only.
        """
        update: dict[str, object] = {"name": self.name}
        annotations = self.definition.annotations
        if annotations is not None and not self.annotations_trusted:
            update["annotations"] = mcp_types.ToolAnnotations(title=annotations.title)
        return self.definition.model_copy(update=update)

    def to_dict(self) -> dict[str, object]:
        """Return the wire form (camelCase keys) under the public name."""
        return self.to_mcp().model_dump(mode="json", by_alias=True, exclude_none=True)
