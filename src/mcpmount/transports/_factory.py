"""From a server spec to the transport kind it names."""

from __future__ import annotations

import os

import httpx2

from mcpmount.config import HttpServer, RegistrySettings, ServerSpec, StdioServer
from mcpmount.processes import Reaper
from mcpmount.sandbox import policy_for
from mcpmount.transports._auto import AutoTransport
from mcpmount.transports._base import ServerTransport
from mcpmount.transports._headers_command import CommandHeaders
from mcpmount.transports._http import HttpTransport
from mcpmount.transports._limits import MessageLimits
from mcpmount.transports._sse import SseTransport
from mcpmount.transports._stdio import StdioTransport

__all__ = ["transport_for"]


def transport_for(
    spec: ServerSpec,
    settings: RegistrySettings,
    reaper: Reaper | None = None,
    *,
    server: str = "",
    auth: httpx2.Auth | None = None,
) -> ServerTransport:
    """Return a fresh transport for ``spec``.

    ``settings`` are the registry's (the server's own are resolved here, `effective`);
    ``reaper`` ends a stdio server's process group if the host dies; ``server`` is the
    namespace, which a url server's OAuth names in the command that logs in; ``auth``
    replaces a url server's own (``headers_command``, ``oauth``) when given (one client's
    credentials, for its own session).
    """
    effective = spec.effective(settings)
    limits = MessageLimits(effective.max_message_bytes, effective.max_tools)
    match spec:
        case StdioServer():
            return StdioTransport(
                spec.command,
                spec.args,
                env=spec.env_values(),
                cwd=spec.cwd,  # a str, so a missing cwd's error names it as given
                limits=limits,
                reaper=reaper,
                sandbox=policy_for(effective.sandbox, os.path.expanduser("~"), settings.token_dir),
                server=server,
            )
        case HttpServer(transport="sse"):
            return SseTransport(spec, limits, auth or _auth(spec, settings, server, reaper))
        case HttpServer(transport="auto"):
            return AutoTransport(spec, limits, auth or _auth(spec, settings, server, reaper))
        case HttpServer():
            return HttpTransport(spec, limits, auth or _auth(spec, settings, server, reaper))


def _auth(
    spec: HttpServer, settings: RegistrySettings, server: str, reaper: Reaper | None
) -> httpx2.Auth | None:
    """Return how a url server's requests authenticate beyond ``headers``, if they do.

    One per transport, so ``auto``'s probe and its connection share it (one run of
    ``headers_command``, one OAuth token).
    """
    if spec.headers_command is not None:
        return CommandHeaders(spec, reaper)
    if spec.oauth is None:
        return None
    from mcpmount.auth import TokenStore, oauth_for  # OAuth loads with its first server

    return oauth_for(spec, server, TokenStore.of(settings))
