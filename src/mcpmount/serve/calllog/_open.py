"""`open_sink`: the sink the ``[serve]`` table (or ``--call-log``) names, opened for a run."""

from __future__ import annotations

import logging
from collections.abc import AsyncGenerator
from contextlib import asynccontextmanager

import anyio

from mcpmount.config import ServeSettings
from mcpmount.errors import ConfigError
from mcpmount.serve.calllog._sinks import FLUSH_EVERY, JsonLinesFile, OtelLogs, Sink, Stdout

__all__ = ["open_sink"]

logger = logging.getLogger(__name__)


@asynccontextmanager
async def open_sink(
    settings: ServeSettings, *, transport: str, target: str | None = None
) -> AsyncGenerator[Sink | None]:
    """Open where the call log goes: ``target`` (``--call-log``: a path relative to the
    working directory, ``stdout`` or ``otel``), else the settings' ``call_log``; None when
    neither names one. Flushed every `FLUSH_EVERY` seconds while the block runs, and
    closed (flushed) when it ends.

    Raises:
        ConfigError: ``stdout`` under the stdio transport (stdout is the MCP stream), or
            the file cannot be opened (its directory is missing, say).
    """
    target = target if target is not None else settings.call_log
    if target is None:
        yield None
        return
    sink: Sink
    if target == "stdout" and transport == "stdio":
        problem = 'call_log = "stdout" needs --transport http (under stdio, stdout is MCP)'
        raise ConfigError("serve", [problem + '; write to a file, or "otel"'])
    if target == "stdout":
        sink = Stdout()
    elif target == "otel":
        sink = OtelLogs()
    else:
        try:
            sink = JsonLinesFile(
                target, max_bytes=settings.call_log_max_bytes, backups=settings.call_log_backups
            )
        except OSError as exc:
            problem = f"call_log: cannot open {target}: {exc.strerror}"
            raise ConfigError("serve", [problem + "; does its directory exist?"]) from None
    logger.info("call log: one record per request to %s", target)
    try:
        async with anyio.create_task_group() as flushing:
            flushing.start_soon(_flush_every, sink)
            yield sink
            flushing.cancel_scope.cancel()
    finally:
        sink.close()


async def _flush_every(sink: Sink) -> None:
    while True:
        await anyio.sleep(FLUSH_EVERY)
        sink.flush()
