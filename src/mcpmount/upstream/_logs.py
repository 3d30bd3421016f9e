"""An upstream server's log messages: where they go, and the level the host asks for.

Messages (``notifications/message``) go to the host's `LogHandler` when it gave one, else
to Python `logging` under ``mcpmount.server.<namespace>``, at the Python level matching
the MCP level (`PYTHON_LEVELS`). Either way the data is redacted with the server's
secrets first: a server may echo its environment.

The level: until the host sets one (`Registry.set_log_level`) nothing is asked of the
server, which keeps its own default. Once set, a handshake-era server that advertises the
``logging`` capability gets ``logging/setLevel``, now and after every restart; in the
2026-07-28 era, where a server logs only for requests that opt in, every request carries
the level in its ``_meta`` (``io.modelcontextprotocol/logLevel``): a connection started
afterwards stamps it on all of them, a call always.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass

import anyio
import mcp_types
from mcp import Client, MCPError
from mcp_types.version import MODERN_PROTOCOL_VERSIONS
from pydantic_core import to_json

from mcpmount.config import ServerSpec
from mcpmount.handlers import LogHandler

__all__ = ["LOGGER_PREFIX", "PYTHON_LEVELS", "UpstreamLog"]

logger = logging.getLogger(__name__)

LOGGER_PREFIX = "mcpmount.server."
"""Upstream messages go to the logger ``mcpmount.server.<namespace>``."""

PYTHON_LEVELS: dict[str, int] = {
    "debug": logging.DEBUG,
    "info": logging.INFO,
    "notice": logging.INFO,
    "warning": logging.WARNING,
    "error": logging.ERROR,
    "critical": logging.CRITICAL,
    "alert": logging.CRITICAL,
    "emergency": logging.CRITICAL,
}
"""MCP (RFC 5424) levels to Python's. Python has no notice, alert or emergency: those
keep their MCP name in the message, as ``[notice]``."""

MAX_MESSAGE_CHARS = 4000
"""The longest rendered message; the rest is cut, so one message cannot flood a log."""


@dataclass(eq=False)
class UpstreamLog:
    """One connection's log messages and log level."""

    server: str
    spec: ServerSpec
    handler: LogHandler | None = None
    level: mcp_types.LoggingLevel | None = None
    """The level the host asked for; None: nothing asked, the server's default."""

    async def receive(self, params: mcp_types.LoggingMessageNotificationParams) -> None:
        """Take one message (the SDK's ``logging_callback``); never raises."""
        data = _redacted(params.data, self.spec.redact)
        params = params.model_copy(update={"data": data, "logger": self._redact(params.logger)})
        if self.handler is not None:
            try:
                await self.handler(self.server, params)
            except Exception as exc:
                logger.warning("server %r: the log handler failed: %r", self.server, exc)
            return
        level = PYTHON_LEVELS.get(params.level, logging.WARNING)
        target = logging.getLogger(LOGGER_PREFIX + self.server)
        if not target.isEnabledFor(level):
            return
        tag = f"[{params.level}] " if params.level in ("notice", "alert", "emergency") else ""
        source = f"{params.logger}: " if params.logger else ""
        text = render(data)
        if len(text) > MAX_MESSAGE_CHARS:
            text = text[:MAX_MESSAGE_CHARS] + " [...]"
        extra = {"mcp_server": self.server, "mcp_level": params.level, "mcp_logger": params.logger}
        target.log(level, "%s%s%s", tag, source, text, extra=extra)

    def call_meta(self, client: Client) -> mcp_types.RequestParamsMeta | None:
        """The ``_meta`` of a call: the level's opt-in in the 2026-07-28 era, once set."""
        if self.level is None or client.protocol_version not in MODERN_PROTOCOL_VERSIONS:
            return None
        meta = mcp_types.RequestParamsMeta()
        meta[mcp_types.LOG_LEVEL_META_KEY] = self.level
        return meta

    async def set_level(self, level: mcp_types.LoggingLevel, client: Client | None) -> None:
        """Keep ``level`` for later and send it now through ``client`` if given; never raises."""
        self.level = level
        if client is not None:
            await self.apply(client)

    async def apply(self, client: Client) -> None:
        """Send ``logging/setLevel`` if a level is set and the server takes it (handshake
        era); a refusal is logged, never raised."""
        if self.level is None or client.protocol_version in MODERN_PROTOCOL_VERSIONS:
            return
        if client.server_capabilities.logging is None:
            return
        params = mcp_types.SetLevelRequestParams(level=self.level)
        try:
            # Not the SDK's set_logging_level: it warns of the 2026-07-28 era's deprecation.
            request = mcp_types.SetLevelRequest(params=params)
            await client.session.send_request(request, mcp_types.EmptyResult)
        except (MCPError, anyio.BrokenResourceError, anyio.ClosedResourceError) as exc:
            message = self.spec.redact(str(exc))
            logger.warning("server %r refused log level %r: %s", self.server, self.level, message)

    def _redact(self, text: str | None) -> str | None:
        return None if text is None else self.spec.redact(text)


def render(data: object) -> str:
    """A message's data as one readable line: a string as is, anything else as JSON."""
    if isinstance(data, str):
        return data
    return to_json(data, fallback=repr).decode()


def _redacted(value: object, redact: Callable[[str], str]) -> object:
    """``value`` with every string in it (keys too) redacted."""
    match value:
        case str():
            return redact(value)
        case dict():
            mapping: dict[object, object] = value  # pyright: ignore[reportUnknownVariableType]
            return {_redacted(k, redact): _redacted(v, redact) for k, v in mapping.items()}
        case list():
            items: list[object] = value  # pyright: ignore[reportUnknownVariableType]
            return [_redacted(item, redact) for item in items]
        case _:
            return value
