"""Whose request it is: its session, else its conversation, else its principal.

The SDK hands handlers a per-request context, not a session object, so a session is keyed
by what the transport says (`session_key`): a stdio (or in-memory) pipe carries one peer,
and a stateful HTTP session has its ``Mcp-Session-Id`` header. The 2026-07-28 era over
HTTP, and ``--stateless`` HTTP, have no session; such a request may name its
conversation with the ``Mcp-Conversation-Id`` header (`CONVERSATION_HEADER`).

`client_key` is the `ClientKey` a ``per_client`` server's upstream sessions are kept
under: the handshake-era session where there is one (it lives as long as the client's
connection, and its end is heard: a ``DELETE``), else the conversation (what a 2026-era
client says holds its state together), within its principal's space, else the principal
(a sessionless request naming no conversation has nothing narrower that lasts beyond
it; a key per request would start a process per call and keep no state).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any, Final, cast

from mcp.server import ServerRequestContext

from mcpmount.serve.access import principal_of
from mcpmount.upstream import ClientKey

__all__ = [
    "CONVERSATION_HEADER",
    "CONVERSATION_ID",
    "PIPE",
    "client_key",
    "headers_of",
    "session_key",
]

CONVERSATION_HEADER: Final = "Mcp-Conversation-Id"
"""The HTTP header that names a sessionless request's conversation."""

CONVERSATION_ID: Final = re.compile(r"[A-Za-z0-9._:-]{1,128}")
"""What a conversation id may be: 1-128 of A-Z a-z 0-9 . _ : - (a UUID, a ULID, ...)."""

PIPE: Final = "<pipe>"
"""The session key of a transport without HTTP requests: it carries exactly one peer."""


def session_key(ctx: ServerRequestContext[Any, Any]) -> str | None:
    """Return the key of the session ``ctx`` came from, or None if it has none."""
    if ctx.request is None:
        return PIPE
    session_id = headers_of(ctx).get("mcp-session-id")
    return f"http:{session_id}" if session_id else None


def client_key(ctx: ServerRequestContext[Any, Any]) -> ClientKey:
    """Whose request ``ctx`` is, for a ``per_client`` server's sessions (see the module
    docstring): ``http:<Mcp-Session-Id>`` or the pipe, else ``conv:<conversation>``, else
    ``principal:<principal>``."""
    principal = principal_of(ctx)
    key = session_key(ctx)
    if key is not None:
        return ClientKey(key, principal.identity)
    value = headers_of(ctx).get(CONVERSATION_HEADER.lower())
    if value is not None and CONVERSATION_ID.fullmatch(value) is not None:
        return ClientKey(f"conv:{principal.scoped(value)}", principal.identity)
    return ClientKey(f"principal:{principal.scoped('')}", principal.identity)


def headers_of(ctx: ServerRequestContext[Any, Any]) -> Mapping[str, str]:
    """The HTTP headers of ``ctx``'s request (none for a pipe)."""
    headers = getattr(ctx.request, "headers", None)
    return cast("Mapping[str, str]", headers) if headers is not None else {}
