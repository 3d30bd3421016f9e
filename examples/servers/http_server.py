"""A key-value store served over streamable HTTP at http://HOST:PORT/mcp.

Run: `python examples/servers/http_server.py --host 127.0.0.1 --port 8765`.
"""

from __future__ import annotations

import argparse
from typing import Annotated

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from pydantic import Field

server = MCPServer("kv", version="1.0.0", instructions="A small shared key-value store.")
data: dict[str, str] = {}

Key = Annotated[str, Field(min_length=1, max_length=256, description="The key.")]


@server.tool()
def kv_set(key: Key, value: Annotated[str, Field(description="The value to store.")]) -> str:
    """Store a value under a key, replacing any previous value."""
    data[key] = value
    return f"stored {key}"


@server.tool()
def kv_get(key: Key) -> str:
    """Return the value stored under a key."""
    if key not in data:
        raise ToolError(f"no value for key {key!r}")
    return data[key]


@server.tool()
def kv_list(
    prefix: Annotated[str, Field(description="Only keys starting with this.")] = "",
) -> list[str]:
    """List the stored keys, sorted, optionally filtered by a prefix."""
    return sorted(k for k in data if k.startswith(prefix))


@server.tool()
def kv_delete(key: Key) -> str:
    """Delete a key (no error if it is absent)."""
    return f"deleted {key}" if data.pop(key, None) is not None else f"{key} was not set"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--host", default="127.0.0.1", help="bind address (default 127.0.0.1)")
    parser.add_argument("--port", type=int, default=8765, help="TCP port (default 8765)")
    args = parser.parse_args()
    print(f"kv: serving http://{args.host}:{args.port}/mcp")
    server.run("streamable-http", host=args.host, port=args.port)


if __name__ == "__main__":
    main()
