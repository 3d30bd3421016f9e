"""Log messages in both directions between downstream clients and upstream servers.

- Downstream ``logging/setLevel`` (handshake era) sets that session's level: what it
  receives, and nothing else. Each server is asked for the most verbose level wanted by
  the sessions whose principal may see it (`Logs.set_level`), so a client limited to some
  namespaces changes what is asked of those only.
- An upstream log message goes to every handshake-era session whose principal may see its
  server (`Sessions.audience`) as ``notifications/message`` whose logger is the server's
  namespace, at or above the level that session set (every level the server sends, until
  it sets one).
- The 2026-07-28 era has no ``logging/setLevel``: a log message may only ride the
  response of a request that opted in (its ``_meta`` log level). An upstream message
  goes to that server's tool calls in flight, at or above the level each opted in to, and
  the server called is asked for that level.
"""

from __future__ import annotations

import contextlib
import logging
from collections import OrderedDict
from collections.abc import Generator
from typing import Any, Final, cast, get_args

import anyio
import mcp_types
from mcp.server import ServerRequestContext
from mcp.server.connection import allowed_log_levels
from mcp.server.session import ServerSession
from mcp_types.version import MODERN_PROTOCOL_VERSIONS

from mcpmount.serve.access import principal_of
from mcpmount.serve.sessions._sessions import MAX_SESSIONS, Sessions

__all__ = ["LEVELS", "Logs"]

logger = logging.getLogger(__name__)

LEVELS: Final = cast("tuple[mcp_types.LoggingLevel, ...]", get_args(mcp_types.LoggingLevel))
"""The syslog levels MCP uses, least severe first."""

_SEND_TIMEOUT: Final = 2.0
"""How long one session gets to take a log message before it is dropped."""


class Logs:
    """Each session's log level, and the upstream messages sent to those that want them.

    Args:
        sessions: The handshake-era sessions of the front.
    """

    def __init__(self, sessions: Sessions) -> None:
        self.sessions = sessions
        self._levels: OrderedDict[str, mcp_types.LoggingLevel] = OrderedDict()
        self._calls: dict[str, list[ServerRequestContext[Any, Any]]] = {}
        self._asked: dict[str | None, mcp_types.LoggingLevel] = {}
        """What each server was asked for (None: every server without a level of its own).
        A 2026-era opt-in is kept: such a client opts in again with every request."""

    def set_level(
        self, ctx: ServerRequestContext[Any, Any], level: mcp_types.LoggingLevel
    ) -> list[tuple[str | None, mcp_types.LoggingLevel]]:
        """Remember the level of ``ctx``'s session; return what to ask of servers now:
        (server, level) pairs, the server None for every server without a level of its
        own. A server is asked for the most verbose level of the sessions that may see it."""
        key = Sessions.key(ctx)
        if key is not None:
            self._levels[key] = level
            self._levels.move_to_end(key)
            while len(self._levels) > MAX_SESSIONS:
                self._levels.popitem(last=False)
        live = set(self.sessions.keys())
        for gone in [key for key in self._levels if key not in live]:
            del self._levels[gone]  # a session dropped since: its level no longer counts
        principal = principal_of(ctx)
        chosen: list[tuple[frozenset[str] | None, mcp_types.LoggingLevel]] = [
            (principal.namespaces, level)
        ]
        for key, each in self._levels.items():
            if (of := self.sessions.principal(key)) is not None:
                chosen.append((of.namespaces, each))
        wanted: dict[str | None, mcp_types.LoggingLevel] = {}
        for namespaces, each in chosen:  # None: every server without a level of its own
            for server in (None,) if namespaces is None else namespaces:
                _keep_most_verbose(wanted, server, each)
        if (everyone := wanted.get(None)) is not None:
            for server in wanted:  # what every server is asked for holds for these too
                _keep_most_verbose(wanted, server, everyone)
        return self._ask(wanted)

    def opt_in(
        self, ctx: ServerRequestContext[Any, Any], server: str | None
    ) -> list[tuple[str | None, mcp_types.LoggingLevel]]:
        """Note a 2026-era request's log opt-in for its ``server``; return what to ask of
        servers now (as `set_level`): that server, if the level is more verbose than any
        asked of it so far."""
        asked = (ctx.meta or {}).get(mcp_types.LOG_LEVEL_META_KEY)
        if server is None or ctx.protocol_version not in MODERN_PROTOCOL_VERSIONS:
            return []
        level: mcp_types.LoggingLevel | None = next((k for k in LEVELS if k == asked), None)
        if level is None:
            return []
        return self._ask({server: level})

    def _ask(
        self, wanted: dict[str | None, mcp_types.LoggingLevel]
    ) -> list[tuple[str | None, mcp_types.LoggingLevel]]:
        """Of ``wanted``, what is more verbose than what was asked of each server so far."""
        asks: list[tuple[str | None, mcp_types.LoggingLevel]] = []
        for server, level in wanted.items():
            current = self._asked.get(server, self._asked.get(None))
            if current is None or LEVELS.index(level) < LEVELS.index(current):
                self._asked[server] = level
                asks.append((server, level))
        return asks

    @contextlib.contextmanager
    def during(self, server: str | None, ctx: ServerRequestContext[Any, Any]) -> Generator[None]:
        """While a 2026-era request to ``server`` is open, its messages may ride it."""
        if server is None or ctx.protocol_version not in MODERN_PROTOCOL_VERSIONS:
            yield  # handshake-era sessions get every message they want (`forward`)
            return
        calls = self._calls.setdefault(server, [])
        calls.append(ctx)
        try:
            yield
        finally:
            calls.remove(ctx)
            if not calls:
                del self._calls[server]

    async def forward(
        self, server: str, params: mcp_types.LoggingMessageNotificationParams
    ) -> None:
        """Send one upstream log message to each downstream session that wants it."""
        notice = mcp_types.LoggingMessageNotification(
            params=mcp_types.LoggingMessageNotificationParams(
                level=params.level, logger=server, data=params.data
            )
        )
        rank = LEVELS.index(params.level)
        async with anyio.create_task_group() as tg:
            for key, session, _ in self.sessions.audience((server,)):
                wanted = self._levels.get(key, LEVELS[0])
                if rank >= LEVELS.index(wanted):
                    tg.start_soon(self._send, key, session, notice)
            for ctx in self._calls.get(server, []):
                if params.level in allowed_log_levels(ctx.protocol_version, ctx.meta):
                    tg.start_soon(self._send_on_request, ctx, notice)

    async def tell_one(
        self,
        ctx: ServerRequestContext[Any, Any],
        server: str,
        level: mcp_types.LoggingLevel,
        data: str,
    ) -> None:
        """Send one message about ``server`` to the session of ``ctx`` (a handshake-era
        one: see `Sessions.track`), if it wants that level."""
        key = Sessions.key(ctx)
        wanted = self._levels.get(key, LEVELS[0]) if key is not None else LEVELS[0]
        if key is None or LEVELS.index(level) < LEVELS.index(wanted):
            return
        params = mcp_types.LoggingMessageNotificationParams(level=level, logger=server, data=data)
        notice = mcp_types.LoggingMessageNotification(params=params)
        await self._send(key, ctx.session, notice)

    async def _send(
        self, key: str, session: ServerSession, notice: mcp_types.LoggingMessageNotification
    ) -> None:
        try:
            with anyio.fail_after(_SEND_TIMEOUT):
                await session.send_notification(notice)
        except Exception as exc:  # a gone session: forget it, never fail the others
            logger.debug("dropped session %r: a log message failed: %r", key, exc)
            self.sessions.drop(key, session)

    async def _send_on_request(
        self, ctx: ServerRequestContext[Any, Any], notice: mcp_types.LoggingMessageNotification
    ) -> None:
        try:
            with anyio.fail_after(_SEND_TIMEOUT):
                await ctx.session.send_notification(notice, related_request_id=ctx.request_id)
        except Exception as exc:  # the request just ended: the message has nowhere to go
            logger.debug("a log message for request %r was dropped: %r", ctx.request_id, exc)


def _keep_most_verbose(
    wanted: dict[str | None, mcp_types.LoggingLevel],
    server: str | None,
    level: mcp_types.LoggingLevel,
) -> None:
    current = wanted.get(server)
    if current is None or LEVELS.index(level) < LEVELS.index(current):
        wanted[server] = level
