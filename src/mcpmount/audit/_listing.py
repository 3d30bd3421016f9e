"""What the audit reads of one mounted server: a `ServerListing`."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import mcp_types

from mcpmount.audit._hidden import HiddenText
from mcpmount.config import ServerSpec
from mcpmount.tool import MountedTool

__all__ = ["ServerListing"]


@dataclass(frozen=True, slots=True)
class ServerListing:
    """What one mounted server tells the model, and how it is configured, as audited."""

    server: str
    spec: ServerSpec
    tools: Sequence[MountedTool]
    gated: frozenset[str]
    """Raw names of its tools whose calls wait for the approver (``approve``, ``approval``)."""
    prompts: Sequence[mcp_types.Prompt] = ()
    """Under their raw names."""
    resources: Sequence[mcp_types.Resource] = ()
    """Under their own URIs."""
    templates: Sequence[mcp_types.ResourceTemplate] = ()
    hidden: Sequence[HiddenText] = ()
    """Hidden characters stripped from its lists when they were mounted."""
