"""What one message from a server may hold, checked on its bytes before it is parsed.

Parsing is where a hostile server wins: a 16 MB line of 220,000 tools becomes about a
gigabyte of Python objects before any list limit can refuse it. So each transport holds
a message to ``max_message_bytes`` while it reads, and counts the tool definitions in
the raw bytes (the ``"inputSchema"`` key every tool carries; escaped inside a string,
the key cannot match), refusing a message with more than ``max_tools`` of them unparsed.
The host's memory then stays within a small multiple of the limits.
"""

from __future__ import annotations

from dataclasses import dataclass, field

__all__ = ["MessageLimits", "MessageMeter"]

_TOOL_KEY = b'"inputSchema"'


@dataclass(frozen=True, slots=True)
class MessageLimits:
    """The limits on one message: its size and the tools it may define."""

    max_bytes: int
    max_tools: int

    def too_large(self) -> str:
        """The reason given for a message over ``max_bytes``."""
        return f"it sent a message over max_message_bytes ({self.max_bytes} bytes)"

    def too_many_tools(self) -> str:
        """The reason given for a message defining more than ``max_tools`` tools."""
        return (
            f"it sent a message defining more than {self.max_tools} tools (max_tools); "
            "raise the limit or split the server"
        )

    def refuse(self, message: bytes) -> str | None:
        """Why a whole message must be refused unparsed, or None."""
        if len(message) > self.max_bytes:
            return self.too_large()
        if message.count(_TOOL_KEY) > self.max_tools:
            return self.too_many_tools()
        return None

    def meter(self) -> MessageMeter:
        """A meter for a message that arrives in chunks."""
        return MessageMeter(self)


@dataclass(slots=True)
class MessageMeter:
    """`MessageLimits.refuse` for a message read chunk by chunk."""

    limits: MessageLimits
    size: int = 0
    tools: int = 0
    _tail: bytes = field(default=b"", repr=False)
    """The last bytes of the previous chunk, so a key split across two is counted."""

    def feed(self, chunk: bytes) -> str | None:
        """Count ``chunk``; return why the message must be refused, or None."""
        self.size += len(chunk)
        if self.size > self.limits.max_bytes:
            return self.limits.too_large()
        window = self._tail + chunk
        self.tools += window.count(_TOOL_KEY)
        self._tail = window[-(len(_TOOL_KEY) - 1) :]
        if self.tools > self.limits.max_tools:
            return self.limits.too_many_tools()
        return None
