"""`mcpmount serve`, driven by the SDK's own Client over stdio and streamable HTTP.

The served process is a real subprocess in front of real upstream servers
(tests/servers/fixture_server.py, plus a small server written here for progress and
rich content). Nothing is mocked: what a stock MCP host sees is what is checked.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
from collections.abc import AsyncGenerator, Callable, Generator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import TextIO, cast

import anyio
import anyio.abc
import httpx2
import mcp_types
import pytest
from mcp import Client, MCPError, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.shared.subscriptions import ToolsListChanged

from leaks import record_group
from support import text_of

SERVERS = Path(__file__).parent / "servers"
FIXTURE = SERVERS / "fixture_server.py"

pytestmark = [pytest.mark.anyio, pytest.mark.usefixtures("no_leaks")]

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


def fixture(name: str, *flags: str, extra: str = "") -> str:
    args = json.dumps([str(FIXTURE), *flags])
    return f'[servers.{name}]\ncommand = "{sys.executable}"\nargs = {args}\n{extra}\n'


def changing(name: str) -> str:
    """A server whose tools change at run time (tests/servers/changing_server.py)."""
    script = json.dumps([str(SERVERS / "changing_server.py")])
    return f'[servers.{name}]\ncommand = "{sys.executable}"\nargs = {script}\n'


def write_config(tmp_path: Path, *servers: str) -> str:
    path = tmp_path / "serve.toml"
    path.write_text("[registry]\nstartup_timeout = 15\n\n" + "\n".join(servers))
    return str(path)


def rich(tmp_path: Path) -> str:
    script = tmp_path / "rich_server.py"
    script.write_text(textwrap.dedent(RICH_SERVER))
    return f'[servers.rich]\ncommand = "{sys.executable}"\nargs = ["{script}"]\n'


def names(result: mcp_types.ListToolsResult) -> list[str]:
    return [tool.name for tool in result.tools]


def found(result: mcp_types.CallToolResult) -> list[str]:
    """The names a tool_search result holds."""
    payload = cast("dict[str, list[dict[str, str]]]", result.structured_content)
    return [tool["name"] for tool in payload["tools"]]


def serve_command(config: str, *flags: str) -> list[str]:
    return [sys.executable, "-m", "mcpmount", "serve", config, *flags]


@asynccontextmanager
async def served_stdio(
    config: str,
    errlog: TextIO,
    *,
    mode: str = "legacy",
    on_message: Callable[[object], None] | None = None,
) -> AsyncGenerator[Client]:
    """A Client connected to `mcpmount serve CONFIG` over stdio."""
    command, *args = serve_command(config)

    async def message_handler(message: object) -> None:
        if on_message is not None:
            on_message(message)

    params = StdioServerParameters(command=command, args=args)
    async with Client(
        stdio_client(params, errlog=errlog), mode=mode, message_handler=message_handler
    ) as client:
        yield client


async def wait_for_tool(client: Client, name: str, changed: anyio.Event | None = None) -> None:
    """Re-list whenever told, until `name` is served."""
    while name not in names(await client.list_tools()):
        if changed is None:
            await anyio.sleep(0.1)
        else:
            await changed.wait()


@pytest.fixture(name="errlog")
def errlog_fixture(tmp_path: Path) -> Generator[TextIO]:
    """A real file for the served process's stderr (the SDK hands it to the child)."""
    with open(tmp_path / "serve.log", "w") as f:
        yield f


class TestStdio:
    async def test_a_stock_client_lists_searches_and_calls_deferred_and_visible_tools(
        self, tmp_path: Path, errlog: TextIO
    ) -> None:
        """The manifest is namespaced; search finds a deferred tool; both servers answer."""
        config = write_config(
            tmp_path, fixture("one"), fixture("two", "--name", "two", extra="defer = true")
        )
        with anyio.fail_after(30):
            async with served_stdio(config, errlog) as client:
                await wait_for_tool(client, "tool_search")
                await wait_for_tool(client, "one__echo")
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

    async def test_an_upstream_error_result_stays_an_error_result(
        self, tmp_path: Path, errlog: TextIO
    ) -> None:
        """isError passes through; an unknown tool is a JSON-RPC invalid-params error."""
        config = write_config(tmp_path, fixture("one"))
        with anyio.fail_after(30):
            async with served_stdio(config, errlog) as client:
                await wait_for_tool(client, "one__fail")
                failed = await client.call_tool("one__fail", {"message": "disk full"})
                assert failed.is_error
                assert "disk full" in text_of(failed)
                with pytest.raises(MCPError) as caught:
                    await client.call_tool("one__ecko", {})
                assert caught.value.code == mcp_types.INVALID_PARAMS
                assert "one__echo" in caught.value.message

    async def test_a_crash_mid_call_is_an_error_result_naming_server_and_tool(
        self, tmp_path: Path, errlog: TextIO
    ) -> None:
        """The registry's own failure reaches the model as an isError result."""
        config = write_config(tmp_path, fixture("one"))
        with anyio.fail_after(30):
            async with served_stdio(config, errlog) as client:
                await wait_for_tool(client, "one__crash")
                result = await client.call_tool("one__crash", {})
                assert result.is_error
                text = text_of(result)
                assert "'one'" in text
                assert "one__crash" in text

    async def test_progress_and_every_content_block_pass_through(
        self, tmp_path: Path, errlog: TextIO
    ) -> None:
        """Upstream progress reaches the caller; blocks, structured content and _meta survive."""
        config = write_config(tmp_path, rich(tmp_path))
        seen: list[tuple[float, float | None, str | None]] = []

        async def progress(progress: float, total: float | None, message: str | None) -> None:
            seen.append((progress, total, message))

        with anyio.fail_after(30):
            async with served_stdio(config, errlog) as client:
                await wait_for_tool(client, "rich__blocks")
                done = await client.call_tool("rich__steps", {"n": 3}, progress_callback=progress)
                assert text_of(done) == "done"
                assert seen == [(1, 3, "step 1"), (2, 3, "step 2"), (3, 3, "step 3")]
                result = await client.call_tool("rich__blocks", {})
        kinds = [block.type for block in result.content]
        assert kinds == ["text", "image", "audio", "resource_link", "resource"]
        assert result.structured_content == {"answer": 42}
        assert result.meta is not None
        assert result.meta["example.com/trace"] == "t-1"

    async def test_the_first_list_waits_for_every_server_to_mount(
        self, tmp_path: Path, errlog: TextIO
    ) -> None:
        """A client that lists once (most do) sees a slow server's tools in that list."""
        config = write_config(tmp_path, fixture("one"), fixture("slow", "--startup-delay", "2"))
        with anyio.fail_after(30):
            async with served_stdio(config, errlog) as client:
                listed = names(await client.list_tools())
        assert "one__echo" in listed
        assert "slow__echo" in listed

    async def test_an_upstream_list_change_is_announced_downstream_legacy_era(
        self, tmp_path: Path, errlog: TextIO
    ) -> None:
        """An upstream adds a tool: serve re-lists it and sends list_changed downstream."""
        config = write_config(tmp_path, changing("live"))
        changed = anyio.Event()
        notices: list[object] = []

        def on_message(message: object) -> None:
            if isinstance(message, mcp_types.ToolListChangedNotification):
                notices.append(message)
                changed.set()

        with anyio.fail_after(30):
            async with served_stdio(config, errlog, on_message=on_message) as client:
                assert client.protocol_version == "2025-11-25"
                assert "live__extra" not in names(await client.list_tools())
                await client.call_tool("live__grow", {"name": "extra"})
                while "live__extra" not in names(await client.list_tools()):
                    await changed.wait()
                    changed = anyio.Event()
                result = await client.call_tool("live__extra", {"x": 4})
                assert text_of(result) == "extra:4"
        assert notices

    async def test_an_upstream_list_change_is_announced_on_the_listen_stream_2026_era(
        self, tmp_path: Path, errlog: TextIO
    ) -> None:
        """In the 2026-07-28 era the change arrives through subscriptions/listen."""
        config = write_config(tmp_path, changing("live"))
        with anyio.fail_after(30):
            async with served_stdio(config, errlog, mode="2026-07-28") as client:
                assert client.protocol_version == "2026-07-28"
                async with client.listen(tools_list_changed=True) as events:
                    assert "live__extra" not in names(await client.list_tools())
                    await client.call_tool("live__grow", {"name": "extra"})
                    async for event in events:
                        assert isinstance(event, ToolsListChanged)
                        if "live__extra" in names(await client.list_tools()):
                            break

    async def test_stdin_eof_closes_every_upstream_server(
        self, tmp_path: Path, errlog: TextIO
    ) -> None:
        """When the host goes away, serve reaps what it started and exits."""
        pidfile = tmp_path / "one.pid"
        config = write_config(tmp_path, fixture("one", "--pidfile", str(pidfile)))
        with anyio.fail_after(30):
            async with served_stdio(config, errlog) as client:
                await wait_for_tool(client, "one__pid")
                upstream = (await client.call_tool("one__pid", {})).structured_content
        assert not _alive(cast("dict[str, int]", upstream)["result"])


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return Path(f"/proc/{pid}").exists() and "Z" not in _state(pid)


def _state(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return "Z"


@asynccontextmanager
async def served_http(
    config: str, tmp_path: Path, *flags: str
) -> AsyncGenerator[tuple[str, anyio.abc.Process]]:
    """Run `mcpmount serve CONFIG --transport http --port 0`; yield its URL and process."""
    portfile = tmp_path / "port"
    command = serve_command(
        config, "--transport", "http", "--port", "0", "--portfile", str(portfile)
    )
    log = tmp_path / "serve.log"
    with log.open("w") as errlog:
        process = await anyio.open_process(
            [*command, *flags], stdout=subprocess.DEVNULL, stderr=errlog, start_new_session=True
        )
    record_group(process.pid)
    async with process:
        try:
            with anyio.fail_after(15):
                while not portfile.exists():
                    assert process.returncode is None, log.read_text()
                    await anyio.sleep(0.02)
            yield f"http://127.0.0.1:{portfile.read_text().strip()}/mcp", process
        finally:
            if process.returncode is None:
                process.send_signal(signal.SIGTERM)
            with anyio.fail_after(15):
                await process.wait()


class TestHttp:
    async def test_a_stock_client_over_http_searches_and_calls_a_deferred_tool(
        self, tmp_path: Path
    ) -> None:
        """Streamable HTTP (2026 era): list, search, call both servers, see an error result."""
        config = write_config(
            tmp_path, fixture("one"), fixture("two", "--name", "two", extra="defer = true")
        )
        with anyio.fail_after(30):
            async with served_http(config, tmp_path) as (url, _), Client(url) as client:
                await wait_for_tool(client, "tool_search")
                await wait_for_tool(client, "one__add")
                searched = await client.call_tool("tool_search", {"query": "add two integers"})
                assert "two__add" in found(searched)
                added = await client.call_tool("two__add", {"a": 20, "b": 22})
                assert added.structured_content == {"result": 42}
                echoed = await client.call_tool("one__echo", {"text": "over http"})
                assert text_of(echoed) == "over http"
                failed = await client.call_tool("one__fail", {"message": "nope"})
                assert failed.is_error

    async def test_a_legacy_http_session_is_told_about_changes_and_keeps_its_finds(
        self, tmp_path: Path
    ) -> None:
        """Handshake era over HTTP: list_changed on the session; search results join its list."""
        config = write_config(tmp_path, fixture("one", extra="defer = true"), changing("live"))
        changed = anyio.Event()

        async def on_message(message: object) -> None:
            if isinstance(message, mcp_types.ToolListChangedNotification):
                changed.set()

        with anyio.fail_after(30):
            async with (
                served_http(config, tmp_path) as (url, _),
                Client(url, mode="legacy", message_handler=on_message) as client,
            ):
                await client.call_tool("live__grow", {"name": "extra"})
                while "live__extra" not in names(await client.list_tools()):
                    await changed.wait()
                    changed = anyio.Event()
                await client.call_tool("tool_search", {"query": "select:one__add"})
                assert "one__add" in names(await client.list_tools())

    async def test_stateless_mode_serves_without_sessions(self, tmp_path: Path) -> None:
        """--stateless: every request stands alone, calls still route (load-balancer mode)."""
        config = write_config(tmp_path, fixture("one"))
        with anyio.fail_after(30):
            async with served_http(config, tmp_path, "--stateless") as (url, _), Client(url) as c:
                await wait_for_tool(c, "one__add")
                added = await c.call_tool("one__add", {"a": 1, "b": 1})
                assert added.structured_content == {"result": 2}

    async def test_a_foreign_host_header_is_refused(self, tmp_path: Path) -> None:
        """DNS-rebinding protection stays on: a request for another Host is refused."""
        config = write_config(tmp_path, fixture("one"))
        with anyio.fail_after(30):
            async with served_http(config, tmp_path) as (url, _):
                async with Client(url) as client:  # mounted: the shutdown is then quick
                    await wait_for_tool(client, "one__echo")
                async with httpx2.AsyncClient() as http:
                    response = await http.post(
                        url,
                        headers={"Host": "evil.example.com", "Content-Type": "application/json"},
                        content=b"{}",
                    )
        assert response.status_code in (403, 421)

    async def test_sigterm_closes_every_upstream_server_and_exits_0(self, tmp_path: Path) -> None:
        """SIGTERM: serve reaps each upstream server (pidfiles name them), then exits 0."""
        pidfiles = [tmp_path / "a.pid", tmp_path / "b.pid"]
        config = write_config(
            tmp_path,
            fixture("a", "--pidfile", str(pidfiles[0])),
            fixture("b", "--pidfile", str(pidfiles[1])),
        )
        with anyio.fail_after(30):
            async with served_http(config, tmp_path) as (url, process):
                async with Client(url) as client:
                    await wait_for_tool(client, "a__pid")
                    await wait_for_tool(client, "b__pid")
                pids = [
                    int(line.split()[1])
                    for p in pidfiles
                    for line in p.read_text().split("\n")
                    if line
                ]
                assert all(_alive(pid) for pid in pids)
                process.send_signal(signal.SIGTERM)
                await process.wait()
        assert process.returncode == 0, (tmp_path / "serve.log").read_text()
        assert not [pid for pid in pids if _alive(pid)]


def test_a_required_server_failing_stops_serve_with_exit_1(tmp_path: Path) -> None:
    """The error names the server on stderr; exit 1; nothing keeps running."""
    config = write_config(tmp_path, fixture("bad", "--crash-on-start"))
    done = subprocess.run(
        serve_command(config, "--transport", "http", "--port", "0"),
        capture_output=True,
        text=True,
        timeout=30,
        check=False,
    )
    assert done.returncode == 1
    assert "bad" in done.stderr
    assert done.stdout == ""
