"""What every transport kind does for a connection, so upstream code never asks which kind it is."""

from __future__ import annotations

import abc
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field

import anyio
import mcp_types
from mcp import MCPError
from mcp.client import Transport

from mcpmount.transports._limits import Refusal

__all__ = ["Diagnostics", "ServerTransport", "leaves", "short"]

_STDERR_TAIL_BYTES = 4096
_HTTP_STATUSES_KEPT = 8


@dataclass(eq=False)
class Diagnostics:
    """What a transport learned about its server, for status and error messages."""

    pid: int | None = None
    """The server process's pid (also its process group id), once spawned; stdio only."""

    failure: str | None = None
    """Why the transport gave up on the server (e.g. an oversized message), if it did."""

    http_statuses: list[int] = field(default_factory=list[int])
    """HTTP error statuses (>= 400) the server answered with, newest last (at most 8)."""

    session_renewals: int = 0
    """How often an expired HTTP session was re-initialized."""

    refused_list: str | None = None
    """Why a message defining more tools than ``max_tools`` was refused unparsed."""

    transport: str | None = None
    """The transport ``transport = "auto"`` chose: ``"http"`` or ``"sse"``, once it chose."""

    def note_refusal(self, refusal: Refusal) -> None:
        """Remember a message refused unparsed, if it was a tool list."""
        if refusal.tool_list:
            self.refused_list = refusal.reason

    # Never in a repr: the server may have written a secret to stderr.
    _stderr: deque[bytes] = field(default_factory=lambda: deque[bytes](), repr=False)
    _stderr_size: int = field(default=0, repr=False)

    def note_status(self, status: int) -> None:
        """Remember one HTTP error status."""
        self.http_statuses.append(status)
        del self.http_statuses[:-_HTTP_STATUSES_KEPT]

    def note_stderr(self, chunk: bytes) -> None:
        """Keep ``chunk`` of the server's stderr; only the last 4 KiB or so are kept."""
        self._stderr.append(chunk)
        self._stderr_size += len(chunk)
        while self._stderr_size - len(self._stderr[0]) >= _STDERR_TAIL_BYTES:
            self._stderr_size -= len(self._stderr.popleft())

    def stderr_tail(self, limit: int = 2000, redact: Callable[[str], str] = str) -> str:
        """Return the last ``limit`` characters the server wrote to stderr.

        ``redact`` runs on everything kept *before* the cut, so a secret that straddles
        the cut cannot leave its suffix behind (about 4 KiB are kept, more than the cut).
        """
        text = redact(b"".join(self._stderr).decode("utf-8", "replace"))
        return text[-limit:]


class ServerTransport(abc.ABC):
    """How one connection reaches its server: open, bound the close, explain failures.

    One instance serves one connection, which opens it once. Every kind (stdio, HTTP, an
    in-process server) implements this, and only this, for the code above it.
    """

    def __init__(self) -> None:
        self.diagnostics = Diagnostics()
        """Filled in as the transport runs."""

    @property
    @abc.abstractmethod
    def close_bound(self) -> float:
        """Seconds a close may take at worst; past it the connection is cut off."""

    @property
    def silence_hint(self) -> str:
        """What to check when the server never answered (the end of a startup timeout)."""
        return "check that the server is running and speaks MCP"

    @property
    def writes_at_once(self) -> bool:
        """Whether the session's every write is taken at once, whatever the server does.

        Then the SDK's request clock, which starts after the write, bounds a whole call.
        Not over HTTP: the SDK's clients may hold a write behind a POST (the legacy SSE
        client POSTs one message after another).
        """
        return False

    @abc.abstractmethod
    def open(self, on_lost: Callable[[str], None]) -> Transport:
        """Return the SDK transport: an async context manager yielding (read, write) streams.

        ``on_lost(reason)`` is called at most once, from the transport's own task, when it
        stops delivering messages by itself; ``diagnostics.failure`` then holds ``reason``.
        """

    async def wait_failure(self) -> str | None:
        """Return why the transport gave up, if it did, once news of it had time to arrive."""
        return self.diagnostics.failure

    def describe(self, exc: BaseException, *, starting: bool) -> str:
        """Say what went wrong, from the most telling leaf of a (nested) exception group."""
        when = " during startup" if starting else ""
        found = [
            leaf for leaf in leaves(exc) if not isinstance(leaf, anyio.get_cancelled_exc_class())
        ]
        for leaf in found:
            message = self._describe_leaf(leaf)
            if message is not None:
                return message
            match leaf:
                case MCPError() if leaf.code == mcp_types.CONNECTION_CLOSED:
                    if self.diagnostics.failure is not None:
                        return f"{self.diagnostics.failure}{when}"
                    return f"the server closed the connection{when}"
                case MCPError():
                    return f"the server answered with error {leaf.code}: {leaf.message}"
                case _:
                    pass
        if not found:
            return "cancelled"
        return f"{type(found[0]).__name__}: {short(found[0])}"

    def _describe_leaf(self, leaf: BaseException) -> str | None:
        """Return this kind's message for one exception, or None if it has none."""
        return None


def leaves(exc: BaseException) -> list[BaseException]:
    """Flatten (nested) exception groups to their leaves, in order."""
    if isinstance(exc, BaseExceptionGroup):
        group: BaseExceptionGroup[BaseException] = exc  # pyright: ignore[reportUnknownVariableType]
        return [leaf for inner in group.exceptions for leaf in leaves(inner)]
    return [exc]


def short(exc: BaseException) -> str:
    """Return the exception's text (or its type's name), cut to 300 characters."""
    text = str(exc) or type(exc).__name__
    return text if len(text) <= 300 else text[:300] + "..."
