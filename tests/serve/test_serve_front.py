"""The served front: what a stock client lists and calls, and how errors reach it.

`mcpmount serve` runs as a subprocess driven by the SDK's own Client, in front of the
fixture server and a small server written here for progress and rich content.
"""

from __future__ import annotations

import sys
import textwrap
from pathlib import Path

import anyio
import mcp_types
import pytest
from mcp import Client, MCPError

from serve.serve_support import (
    BEHAVIOUR,
    STARTUP,
    connected,
    found,
    names,
    served_http,
    served_stdio,
    wait_for_tool,
    write_config,
)
from support import fixture_server, text_of

pytestmark = [pytest.mark.slow, pytest.mark.anyio, pytest.mark.usefixtures("no_leaks")]

RICH_SERVER = '''
"""Progress and every content block type, for the pass-through tests."""
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError
import mcp_types as types

server = MCPServer("rich", version="0.1.0")

@server.tool()
async def steps(n: int, ctx: Context) -> str:
    """Report n progress steps, then finish."""
    for i in range(n):
        await ctx.report_progress(i + 1, n, f"step {i + 1}")
    return "done"

@server.tool()
def blocks() -> types.CallToolResult:
    """Return one block of each kind, structured content and _meta."""
    return types.CallToolResult(
        content=[
            types.TextContent(type="text", text="hello"),
            types.ImageContent(type="image", data="aGk=", mime_type="image/png"),
            types.AudioContent(type="audio", data="aGk=", mime_type="audio/wav"),
            types.ResourceLink(type="resource_link", uri="file:///a.txt", name="a.txt"),
            types.EmbeddedResource(
                type="resource",
                resource=types.TextResourceContents(uri="file:///b.txt", text="bee"),
            ),
        ],
        structured_content={"answer": 42},
        _meta={"example.com/trace": "t-1"},
    )

if __name__ == "__main__":
    server.run()
'''


def rich(tmp_path: Path) -> str:
    script = tmp_path / "rich_server.py"
    script.write_text(textwrap.dedent(RICH_SERVER))
    return f'[servers.rich]\ncommand = "{sys.executable}"\nargs = ["{script}"]\n'


def one_visible_two_deferred(tmp_path: Path) -> str:
    """A config of two fixture servers: `one` listed, `two` deferred (found by search)."""
    return write_config(
        tmp_path,
        fixture_server("one"),
        fixture_server("two", "--name", "two", extra="defer = true"),
    )


class TestStdio:
    async def test_a_stock_client_lists_searches_and_calls_deferred_and_visible_tools(
        self, tmp_path: Path
    ) -> None:
        """The manifest is namespaced; search finds a deferred tool; both servers answer."""
        config = one_visible_two_deferred(tmp_path)
        async with served_stdio(config, tmp_path) as client:
            await wait_for_tool(client, "tool_search")
            await wait_for_tool(client, "one__echo")
            with anyio.fail_after(BEHAVIOUR):
                listed = names(await client.list_tools())
                assert "one__add" in listed
                assert not any(name.startswith("two__") for name in listed)

                searched = await client.call_tool("tool_search", {"query": "add two integers"})
                assert not searched.is_error
                assert "two__add" in found(searched)
                # This session's list now holds what its search found.
                assert "two__add" in names(await client.list_tools())

                added = await client.call_tool("two__add", {"a": 2, "b": 3})
                assert added.structured_content == {"result": 5}
                echoed = await client.call_tool("one__echo", {"text": "hi"})
                assert echoed.content == [mcp_types.TextContent(type="text", text="hi")]

    async def test_an_upstream_error_result_stays_an_error_result(self, tmp_path: Path) -> None:
        """isError passes through; an unknown tool is a JSON-RPC invalid-params error."""
        config = write_config(tmp_path, fixture_server("one"))
        async with served_stdio(config, tmp_path) as client:
            await wait_for_tool(client, "one__fail")
            with anyio.fail_after(BEHAVIOUR):
                failed = await client.call_tool("one__fail", {"message": "disk full"})
                assert failed.is_error
                assert "disk full" in text_of(failed)
                with pytest.raises(MCPError) as caught:
                    await client.call_tool("one__ecko", {})
                assert caught.value.code == mcp_types.INVALID_PARAMS
                assert "one__echo" in caught.value.message

    async def test_a_crash_mid_call_is_an_error_result_naming_server_and_tool(
        self, tmp_path: Path
    ) -> None:
        """The registry's own failure reaches the model as an isError result."""
        config = write_config(tmp_path, fixture_server("one"))
        async with served_stdio(config, tmp_path) as client:
            await wait_for_tool(client, "one__crash")
            with anyio.fail_after(BEHAVIOUR):
                result = await client.call_tool("one__crash", {})
            assert result.is_error
            text = text_of(result)
            assert "'one'" in text
            assert "one__crash" in text

    async def test_progress_and_every_content_block_pass_through(self, tmp_path: Path) -> None:
        """Upstream progress reaches the caller; blocks, structured content and _meta survive."""
        config = write_config(tmp_path, rich(tmp_path))
        seen: list[tuple[float, float | None, str | None]] = []

        async def progress(progress: float, total: float | None, message: str | None) -> None:
            seen.append((progress, total, message))

        async with served_stdio(config, tmp_path) as client:
            await wait_for_tool(client, "rich__blocks")
            with anyio.fail_after(BEHAVIOUR):
                done = await client.call_tool("rich__steps", {"n": 3}, progress_callback=progress)
                assert text_of(done) == "done"
                assert seen == [(1, 3, "step 1"), (2, 3, "step 2"), (3, 3, "step 3")]
                result = await client.call_tool("rich__blocks", {})
        kinds = [block.type for block in result.content]
        assert kinds == ["text", "image", "audio", "resource_link", "resource"]
        assert result.structured_content == {"answer": 42}
        assert result.meta is not None
        assert result.meta["example.com/trace"] == "t-1"

    async def test_the_first_list_waits_for_every_server_to_mount(self, tmp_path: Path) -> None:
        """A client that lists once (most do) sees a slow server's tools in that list, when
        its table says ``required = true`` (a server that does not say is waited for at
        most ``first_list_wait``)."""
        required = "required = true"
        config = write_config(
            tmp_path,
            fixture_server("one", extra=required),
            fixture_server("slow", "--startup-delay", "2", extra=required),
        )
        async with served_stdio(config, tmp_path) as client:
            with anyio.fail_after(STARTUP):  # what is checked is this wait for the mounts
                listed = names(await client.list_tools())
        assert "one__echo" in listed
        assert "slow__echo" in listed


class TestHttp:
    async def test_a_stock_client_over_http_searches_and_calls_a_deferred_tool(
        self, tmp_path: Path
    ) -> None:
        """Streamable HTTP (2026 era): list, search, call both servers, see an error result."""
        config = one_visible_two_deferred(tmp_path)
        async with served_http(config, tmp_path) as (url, _), connected(Client(url)) as client:
            await wait_for_tool(client, "tool_search")
            await wait_for_tool(client, "one__add")
            with anyio.fail_after(BEHAVIOUR):
                searched = await client.call_tool("tool_search", {"query": "add two integers"})
                assert "two__add" in found(searched)
                added = await client.call_tool("two__add", {"a": 20, "b": 22})
                assert added.structured_content == {"result": 42}
                echoed = await client.call_tool("one__echo", {"text": "over http"})
                assert text_of(echoed) == "over http"
                failed = await client.call_tool("one__fail", {"message": "nope"})
                assert failed.is_error
