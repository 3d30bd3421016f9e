"""The downstream sessions of a served registry, each with its own `View`.

The SDK hands handlers a per-request context, not a session object, so a session is keyed by
what the transport says: a stdio (or in-memory) pipe carries one peer, and a stateful HTTP
session has its ``Mcp-Session-Id`` header. The 2026-07-28 era over HTTP, and ``--stateless``
HTTP, have no session: they see the registry's manifest, and a found tool is still callable
by name (search controls discovery, not access). At most `MAX_SESSIONS` views are kept, least
recently used first out.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Mapping
from typing import Any, Final, cast

from mcp.server import ServerRequestContext
from mcp.server.session import ServerSession
from mcp_types.version import MODERN_PROTOCOL_VERSIONS

from mcpmount.registry import Registry, View

__all__ = ["MAX_SESSIONS", "Sessions"]

MAX_SESSIONS: Final = 1000
"""How many downstream sessions keep a view (and get list_changed) at once."""

_PIPE: Final = "<pipe>"
"""The session key of a transport without HTTP requests: it carries exactly one peer."""


class Sessions:
    """Each downstream session's view, and the handshake-era sessions to tell of changes.

    Both tables are bounded by `MAX_SESSIONS`, the least recently used session first out.

    """

    def __init__(self) -> None:
        self._peers: OrderedDict[str, ServerSession] = OrderedDict()
        self._views: OrderedDict[str, View] = OrderedDict()

    @staticmethod
    def key(ctx: ServerRequestContext[Any, Any]) -> str | None:
        """Return the key of the session ``ctx`` came from, or None if it has none."""
        request = ctx.request
        if request is None:
            return _PIPE
        headers = getattr(request, "headers", None)
        if headers is None:
            return None
        session_id = cast("Mapping[str, str]", headers).get("mcp-session-id")
        return f"http:{session_id}" if session_id else None

    def view(self, ctx: ServerRequestContext[Any, Any], registry: Registry) -> View | None:
        """Return the view of the session ``ctx`` came from (made on first use from
        ``registry``), if any."""
        key = self.key(ctx)
        if key is None:
            return None
        view = self._views.get(key)
        if view is None:
            view = self._views[key] = registry.view()
            while len(self._views) > MAX_SESSIONS:
                self._views.popitem(last=False)
        self._views.move_to_end(key)
        return view

    def track(self, ctx: ServerRequestContext[Any, Any]) -> None:
        """Remember the session of a handshake-era request, to tell it when the list changes."""
        key = self.key(ctx)
        if key is not None and ctx.protocol_version not in MODERN_PROTOCOL_VERSIONS:
            self._peers[key] = ctx.session
            self._peers.move_to_end(key)
            while len(self._peers) > MAX_SESSIONS:
                self._peers.popitem(last=False)

    def peers(self) -> list[tuple[str, ServerSession]]:
        """Return every remembered handshake-era session with its key."""
        return list(self._peers.items())

    def drop(self, key: str, session: ServerSession) -> None:
        """Forget a gone session and its view, unless ``key`` now names another session."""
        if self._peers.get(key) is session:
            del self._peers[key]
            self._views.pop(key, None)
