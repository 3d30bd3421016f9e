"""What one message from a server may hold, checked on its bytes before it is parsed.

Parsing is where a hostile server wins: a 16 MB line of 220,000 tools becomes about a
gigabyte of Python objects before any list limit can refuse it. So each transport holds
a message to ``max_message_bytes`` while it reads it, and counts in the raw bytes what
parsing would build: tool definitions (the ``"inputSchema"`` key every tool carries) and,
since a key can be written with escapes that a byte count cannot see, JSON objects (every
``{``). A message defining more than ``max_tools`` tools, or holding more than
`OBJECTS_PER_TOOL` objects per allowed tool, is refused unparsed. The host's memory then
stays within a small multiple of the limits.
"""

from __future__ import annotations

from dataclasses import dataclass, field

__all__ = ["OBJECTS_PER_TOOL", "MessageLimits", "MessageMeter", "Refusal"]

OBJECTS_PER_TOOL = 256
"""JSON objects one message may hold per allowed tool (a tool's schema rarely needs 50)."""

_TOOL_KEY = b'"inputSchema"'


@dataclass(frozen=True, slots=True)
class Refusal:
    """Why a message was refused unparsed."""

    reason: str
    tool_list: bool = False
    """It broke a ``max_tools`` bound: for a ``tools/list`` answer, a refused tool list."""


@dataclass(frozen=True, slots=True)
class MessageLimits:
    """The limits on one message: its size and the tools it may define."""

    max_bytes: int
    max_tools: int
    size_bound: str = "max_message_bytes"
    """What sets ``max_bytes``, for the refusal's message."""

    def too_large(self) -> Refusal:
        """The refusal of a message over ``max_bytes``."""
        return Refusal(f"it sent a message over {self.size_bound} ({self.max_bytes} bytes)")

    def refuse(self, message: bytes | bytearray) -> Refusal | None:
        """Why a whole message must be refused unparsed, or None."""
        if len(message) > self.max_bytes:
            return self.too_large()
        return self._count(message.count(_TOOL_KEY), message.count(b"{"))

    def meter(self) -> MessageMeter:
        """A meter for a message that arrives in chunks."""
        return MessageMeter(self)

    def _count(self, tools: int, objects: int) -> Refusal | None:
        if tools > self.max_tools:
            reason = f"it sent a message defining more than {self.max_tools} tools (max_tools)"
        elif objects > OBJECTS_PER_TOOL * self.max_tools:
            reason = (
                f"it sent a message of more than {OBJECTS_PER_TOOL * self.max_tools} JSON "
                f"objects ({OBJECTS_PER_TOOL} per tool of max_tools)"
            )
        else:
            return None
        return Refusal(reason + "; raise the limit or split the server", tool_list=True)


@dataclass(slots=True)
class MessageMeter:
    """`MessageLimits.refuse` for a message read chunk by chunk."""

    limits: MessageLimits
    size: int = 0
    tools: int = 0
    objects: int = 0
    _tail: bytes = field(default=b"", repr=False)
    """The last bytes of the previous chunk, so a key split across two is counted."""

    def feed(self, chunk: bytes) -> Refusal | None:
        """Count ``chunk``; return why the message must be refused, or None."""
        self.size += len(chunk)
        if self.size > self.limits.max_bytes:
            return self.limits.too_large()
        window = self._tail + chunk
        self.tools += window.count(_TOOL_KEY)
        self.objects += chunk.count(b"{")
        self._tail = window[-(len(_TOOL_KEY) - 1) :]
        return self.limits._count(self.tools, self.objects)  # pyright: ignore[reportPrivateUsage]

    def reset(self) -> None:
        """Start over, for the next message of a stream."""
        self.size = self.tools = self.objects = 0
        self._tail = b""
