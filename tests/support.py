"""Small helpers shared by the test modules: fixture-server paths, stdio specs, pid checks,
free ports and config files."""

from __future__ import annotations

import socket
import sys
from pathlib import Path
from typing import Any, cast

import mcp_types

from leaks import record_group
from mcpmount.config import StdioServer
from mcpmount.registry import Registry

SERVERS = Path(__file__).parent / "servers"
FIXTURE = str(SERVERS / "fixture_server.py")
CHANGING = str(SERVERS / "changing_server.py")


def stdio_spec(script: str = FIXTURE, *flags: str, **options: Any) -> StdioServer:
    """A stdio spec running ``script`` with ``flags`` under this interpreter."""
    return StdioServer(command=sys.executable, args=[script, *flags], **options)


def fixture(*flags: str, **options: Any) -> StdioServer:
    """A stdio spec for the fixture server with ``flags``."""
    return stdio_spec(FIXTURE, *flags, **options)


def text_of(result: mcp_types.CallToolResult) -> str:
    """The concatenated text blocks of a tool result."""
    return "".join(b.text for b in result.content if isinstance(b, mcp_types.TextContent))


def strings_in(value: object) -> str:
    """Every string of a JSON value, keys too, joined: where a hidden character can hide
    (JSON text itself writes controls as escapes)."""
    if isinstance(value, str):
        return value
    if isinstance(value, dict):
        items = cast("dict[str, object]", value).items()
        return "".join(key + strings_in(item) for key, item in items)
    if isinstance(value, list):
        return "".join(strings_in(item) for item in cast("list[object]", value))
    return ""


def record_pids(registry: Registry) -> None:
    """Record each mounted server's process group with the leak checker."""
    for row in registry.status():
        if row.pid is not None:
            record_group(row.pid)


def alive(pid: int) -> bool:
    """Whether ``pid`` exists and is not a zombie (read from /proc/<pid>/stat)."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def free_port() -> int:
    """A port of 127.0.0.1 that nothing listens on now: for a server that must know its URL
    before it binds, or a URL that must be refused. Another process may take it meanwhile."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port
