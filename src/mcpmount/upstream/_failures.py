"""How a server's failures are told: start errors with its stderr tail, results past the bound.

A server that fails to start is described by what its transport saw (the refused list, the
exception, the timeout) followed by the last of its stderr, redacted by its spec, since that
is usually where it says why. A result is measured against ``max_result_bytes`` only when
its payloads come near the limit: serializing every result again would cost more than the
rest of the call path.
"""

from __future__ import annotations

from dataclasses import dataclass

import mcp_types
from pydantic_core import to_json

from mcpmount.config import ServerSpec
from mcpmount.errors import ResultTooLargeError, ServerStartError, ToolListError
from mcpmount.transports import ServerTransport, leaves

__all__ = ["StartFailures", "check_size"]

_STDERR_TAIL_CHARS = 1000

_OPAQUE_PAYLOAD = 1 << 62
"""Counts a block of unknown size (e.g. an embedded resource) as "measure it"."""


@dataclass(frozen=True, slots=True)
class StartFailures:
    """Describes why one server did not start, or why it was lost."""

    server: str
    spec: ServerSpec
    transport: ServerTransport

    def timed_out(self, seconds: float) -> ServerStartError:
        what = "connect, handshake and list its tools"
        return ServerStartError(
            self.server,
            self.with_stderr(
                f"did not {what} within {seconds:g} s (startup_timeout); "
                f"{self.transport.silence_hint}, or raise startup_timeout"
            ),
        )

    def failed(
        self, exc: Exception, *, timed_out: bool, timeout: float
    ) -> ServerStartError | ToolListError:
        """The error for ``exc`` raised while starting (``timed_out``: the deadline passed)."""
        for leaf in leaves(exc):
            if isinstance(leaf, ToolListError | ServerStartError):
                return leaf
        if (refused := self.transport.diagnostics.refused_list) is not None:
            return ToolListError(self.server, refused)
        if timed_out:
            return self.timed_out(timeout)
        described = self.spec.redact(self.transport.describe(exc, starting=True))
        return ServerStartError(self.server, self.with_stderr(described))

    def with_stderr(self, message: str) -> str:
        """``message`` and the server's last stderr lines (redacted), if it wrote any."""
        tail = self.transport.diagnostics.stderr_tail(_STDERR_TAIL_CHARS, self.spec.redact)
        tail = tail.strip()
        return f"{message}\n    stderr: {tail}" if tail else message


def check_size(result: mcp_types.CallToolResult, server: str, tool: str, limit: int) -> None:
    """Raise `ResultTooLargeError` if ``result`` serializes past ``limit`` bytes."""
    # The payload estimate is exact enough far from the limit; only near it do we measure.
    if _payload_size(result) * 2 > limit:
        size = len(result.model_dump_json(by_alias=True, exclude_none=True))
        if size > limit:
            raise ResultTooLargeError(server, tool, size, limit)


def _payload_size(result: mcp_types.CallToolResult) -> int:
    """Estimate a result's size from its text and binary payloads (a lower bound)."""
    size = 0 if result.structured_content is None else len(to_json(result.structured_content))
    for block in result.content:
        match block:
            case mcp_types.TextContent():
                size += len(block.text)
            case mcp_types.ImageContent() | mcp_types.AudioContent():
                size += len(block.data)
            case _:
                size += _OPAQUE_PAYLOAD
    return size
