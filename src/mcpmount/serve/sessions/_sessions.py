"""The downstream sessions of a served registry, and the conversations of requests without one.

The SDK hands handlers a per-request context, not a session object, so a session is keyed by
what the transport says: a stdio (or in-memory) pipe carries one peer, and a stateful HTTP
session has its ``Mcp-Session-Id`` header. The 2026-07-28 era over HTTP, and ``--stateless``
HTTP, have no session; such a request may name its conversation with the
``Mcp-Conversation-Id`` header (`CONVERSATION_HEADER`), which keys what its searches found
(`mcpmount.serve.front._activations`), within the principal's own space (two tokens naming the
same conversation never share it). Handshake-era sessions are remembered with the principal
that opened them, to be sent what that principal may see (`Sessions.audience`); they are
told of list changes only once they have listed the tools (`Sessions.listeners`). At most
`MAX_SESSIONS` sessions are kept, least recently used first out.
"""

from __future__ import annotations

import secrets
from collections import OrderedDict
from collections.abc import Iterable
from typing import Any, Final

from mcp.server import ServerRequestContext
from mcp.server.session import ServerSession
from mcp_types.version import MODERN_PROTOCOL_VERSIONS

from mcpmount.errors import BadConversationError
from mcpmount.serve.access import Principal, principal_of
from mcpmount.serve.relay import (
    CONVERSATION_HEADER,
    CONVERSATION_ID,
    PIPE,
    client_key,
    headers_of,
    session_key,
)

__all__ = [
    "CONVERSATION_HEADER",
    "MAX_SESSIONS",
    "Sessions",
    "client_key",
]

MAX_SESSIONS: Final = 1000
"""How many downstream sessions get list_changed (and log messages) at once."""


class Sessions:
    """The handshake-era sessions to tell of changes, and each request's conversation key.

    The session table is bounded by `MAX_SESSIONS`, the least recently used session first out.
    """

    def __init__(self) -> None:
        self._peers: OrderedDict[str, tuple[ServerSession, Principal]] = OrderedDict()
        self._listed: set[str] = set()
        """Keys of peers that have listed the tools: only they are told of changes."""
        self._pipe = f"pipe:{secrets.token_hex(8)}"
        """This front's pipe, as a conversation key: unique, so a shared store never mixes
        two processes' pipes."""

    @staticmethod
    def key(ctx: ServerRequestContext[Any, Any]) -> str | None:
        """Return the key of the session ``ctx`` came from, or None if it has none."""
        return session_key(ctx)

    def conversation(self, ctx: ServerRequestContext[Any, Any]) -> str | None:
        """Return the key that ``ctx``'s activations are kept under, or None if it has none.

        A session's key (a stateful HTTP session's, or this front's pipe), else
        ``"conv:<id>"`` from the `CONVERSATION_HEADER` of a sessionless request, within its
        principal's space (`Principal.scoped`).

        Raises:
            BadConversationError: The header is there but is not a valid id.
        """
        key = self.key(ctx)
        if key == PIPE:
            return self._pipe
        if key is not None:
            return key
        value = headers_of(ctx).get(CONVERSATION_HEADER.lower())
        if value is None:
            return None
        if CONVERSATION_ID.fullmatch(value) is None:
            raise BadConversationError(CONVERSATION_HEADER, value)
        return f"conv:{principal_of(ctx).scoped(value)}"

    def track(self, ctx: ServerRequestContext[Any, Any]) -> None:
        """Remember the session of a handshake-era request (for log messages and changes)."""
        key = self.key(ctx)
        if key is not None and ctx.protocol_version not in MODERN_PROTOCOL_VERSIONS:
            self._peers[key] = (ctx.session, principal_of(ctx))
            self._peers.move_to_end(key)
            while len(self._peers) > MAX_SESSIONS:
                gone, _ = self._peers.popitem(last=False)
                self._listed.discard(gone)

    def listed(self, ctx: ServerRequestContext[Any, Any]) -> None:
        """Say that the session of ``ctx`` is listing the tools: from now on it is told of
        list changes (a change before this is in the list it gets)."""
        key = self.key(ctx)
        if key is not None and key in self._peers:
            self._listed.add(key)

    def keys(self) -> list[str]:
        """Return the key of every remembered handshake-era session."""
        return list(self._peers)

    def principal(self, key: str) -> Principal | None:
        """Return the principal of the session ``key``, or None if it is not remembered."""
        peer = self._peers.get(key)
        return peer[1] if peer is not None else None

    def audience(
        self, namespaces: Iterable[str] | None
    ) -> list[tuple[str, ServerSession, Principal]]:
        """Return the remembered handshake-era sessions whose principal may see something of
        ``namespaces``: the only ones anything about them may be sent to (None: news of no
        server in particular, for every session)."""
        wanted = None if namespaces is None else tuple(namespaces)
        return [
            (key, session, principal)
            for key, (session, principal) in self._peers.items()
            if wanted is None or principal.sees_any(wanted)
        ]

    def listeners(self, namespaces: Iterable[str] | None) -> list[tuple[str, ServerSession]]:
        """Return the sessions of `audience` that have listed the tools (to be told of a
        change of ``namespaces``' lists)."""
        return [(k, s) for k, s, _ in self.audience(namespaces) if k in self._listed]

    def drop(self, key: str, session: ServerSession) -> None:
        """Forget a gone session, unless ``key`` now names another session."""
        peer = self._peers.get(key)
        if peer is not None and peer[0] is session:
            del self._peers[key]
            self._listed.discard(key)
