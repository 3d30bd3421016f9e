"""A Connection over `MemoryTransport`: an SDK server in this process, no pipe, no socket."""

from __future__ import annotations

import anyio
import pytest
from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError

from mcpmount.config import RegistrySettings, StdioServer
from mcpmount.errors import ServerNotRunningError
from mcpmount.transports import MemoryTransport
from mcpmount.upstream import Connection, ServerState
from support import text_of

pytestmark = pytest.mark.usefixtures("no_leaks")


def build_server() -> MCPServer:
    server = MCPServer("memory")

    @server.tool()
    def shout(text: str) -> str:
        """Return ``text`` in capitals."""
        return text.upper()

    @server.tool()
    def fail() -> str:
        """Always fail, as a tool does on bad input."""
        raise ToolError("it failed on purpose")

    return server


def memory_connection(server: MCPServer) -> Connection:
    # The spec supplies limits and policy only: the transport given replaces the command.
    spec = StdioServer(command="in-memory")
    return Connection("mem", spec, RegistrySettings(), use_transport=MemoryTransport(server))


async def test_a_connection_lists_and_calls_an_in_process_server() -> None:
    """Connect, list, call and close through memory streams, as over a pipe."""
    connection = memory_connection(build_server())
    async with anyio.create_task_group() as tg:
        await tg.start(connection.run)
        assert connection.state is ServerState.READY
        assert sorted(tool.name for tool in connection.tools) == ["fail", "shout"]
        assert connection.pid is None
        result = await connection.call("mem__shout", "shout", {"text": "hi"})
        assert text_of(result) == "HI"
        failed = await connection.call("mem__fail", "fail", {})
        assert failed.is_error
        assert "it failed on purpose" in text_of(failed)
        await connection.aclose()
    assert connection.state is ServerState.CLOSED


async def test_a_closed_memory_connection_refuses_calls() -> None:
    """After close, a call fails at once, naming the state; nothing is sent."""
    connection = memory_connection(build_server())
    async with anyio.create_task_group() as tg:
        await tg.start(connection.run)
        await connection.aclose()
    with pytest.raises(ServerNotRunningError, match="it is closed"):
        await connection.call("mem__shout", "shout", {"text": "x"})
