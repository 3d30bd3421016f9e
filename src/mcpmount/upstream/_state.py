"""Where a server is in its life: starting, ready, failed, closed, or not started yet.

A connection, the supervisor that restarts it and a ``per_client`` server's pool all tell
their server's state in these words; the registry's status shows them.
"""

from __future__ import annotations

import enum

__all__ = ["ServerState"]


class ServerState(enum.StrEnum):
    """Where a server is in its life."""

    STARTING = "starting"
    READY = "ready"
    RESTARTING = "restarting"
    FAILED = "failed"
    CLOSED = "closed"
    LAZY = "lazy"
    """Published from its cached lists, not started yet: its first call starts it."""
    IDLE = "idle"
    """Stopped after nobody called it for ``idle_timeout``: the next call starts it."""
