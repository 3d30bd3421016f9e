"""What the model is shown of a listed tool: the server's per-tool overrides applied."""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence

import mcp_types

from mcpmount.config import ToolOverride

__all__ = ["apply_overrides"]

logger = logging.getLogger(__name__)


def apply_overrides(
    server: str, tools: Sequence[mcp_types.Tool], overrides: Mapping[str, ToolOverride]
) -> dict[str, mcp_types.Tool]:
    """Return raw name -> the definition the model is shown, for each of ``tools``.

    A tool without an override (or whose override changes nothing) keeps its own
    definition object. An override naming a tool that is not in ``tools`` is logged as a
    warning and otherwise ignored: servers add and drop tools, and a filter may drop it.
    """
    shown: dict[str, mcp_types.Tool] = {}
    for tool in tools:
        override = overrides.get(tool.name)
        update = {} if override is None else override.model_dump(exclude_none=True)
        changed = {key: value for key, value in update.items() if getattr(tool, key) != value}
        shown[tool.name] = tool.model_copy(update=changed) if changed else tool
    if unknown := sorted(overrides.keys() - shown.keys()):
        logger.warning(
            "server %r: overrides name tools it does not list (or that a filter drops): %s",
            server,
            ", ".join(map(repr, unknown)),
        )
    return shown
