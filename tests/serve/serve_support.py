"""Helpers for the `mcpmount serve` tests: configs, a served process and a connected Client.

The served process is a real subprocess in front of real upstream servers
(tests/servers/fixture_server.py and tests/servers/changing_server.py). Nothing is mocked:
what a stock MCP host sees is what is checked.

Timing: starting a Python process and mounting its servers can take many seconds on a
loaded machine, and is not what these tests check. It is bounded apart, by `STARTUP`
(`connected`, `served_http`, `wait_for_tool`), so the behaviour a test checks gets its own
bound, `BEHAVIOUR`.
"""

from __future__ import annotations

import functools
import os
import sys
from collections.abc import AsyncGenerator, Callable, Mapping
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any, Final, cast

import anyio
import anyio.abc
import mcp_types
from mcp import Client, StdioServerParameters
from mcp.client.stdio import stdio_client

import support
from support import CHANGING, SERVERS, portfile_process, script_server

STARTUP: Final = 40.0
"""Seconds for a served process to start, or for its servers to mount, on a loaded machine."""

BEHAVIOUR: Final = 20.0
"""Seconds for what a test checks once everything is up, on a loaded machine."""


def asking(name: str, extra: str = "") -> str:
    """A server whose tools ask their client for things (tests/servers/asking_server.py)."""
    return script_server(name, str(SERVERS / "asking_server.py"), extra=extra)


def changing(name: str) -> str:
    """A server whose tools change at run time (tests/servers/changing_server.py)."""
    return script_server(name, CHANGING)


write_config = functools.partial(
    support.write_config, registry="startup_timeout = 15", name="serve.toml"
)
"""`support.write_config` with serve's defaults: ``write_config(tmp_path, *tables)`` writes
``serve.toml`` whose servers get 15 s to start."""


def names(result: mcp_types.ListToolsResult) -> list[str]:
    return [tool.name for tool in result.tools]


def found(result: mcp_types.CallToolResult) -> list[str]:
    """The names a tool_search result holds."""
    payload = cast("dict[str, list[dict[str, str]]]", result.structured_content)
    return [tool["name"] for tool in payload["tools"]]


def serve_command(config: str, *flags: str) -> list[str]:
    return [sys.executable, "-m", "mcpmount", "serve", config, *flags]


@asynccontextmanager
async def connected(client: Client) -> AsyncGenerator[Client]:
    """Enter ``client`` within `STARTUP` seconds; exit it when the block ends.

    An owner task holds the Client, so that the bound covers connecting only: a cancel
    scope may not end while a task group it opened (the Client's) is still open.
    """
    done = anyio.Event()

    async def own(*, task_status: anyio.abc.TaskStatus[Client]) -> None:
        async with client:
            task_status.started(client)
            await done.wait()

    async with anyio.create_task_group() as tg:
        with anyio.fail_after(STARTUP):
            await tg.start(own)
        try:
            yield client
        finally:
            done.set()


@asynccontextmanager
async def served_stdio(
    config: str,
    tmp_path: Path,
    *,
    mode: str = "legacy",
    on_message: Callable[[object], None] | None = None,
    **options: Any,
) -> AsyncGenerator[Client]:
    """A Client connected to `mcpmount serve CONFIG` over stdio; its stderr goes to a file.

    ``options`` go to the Client (its callbacks: sampling, elicitation, roots, logging).
    """
    command, *args = serve_command(config)

    async def message_handler(message: object) -> None:
        if on_message is not None:
            on_message(message)

    # The SDK gives a child a minimal environment: pass on where our sources are, so the
    # served process runs the code under test (a worktree's), not an installed copy, and
    # the runtime directory a test chose (where `mcpmount status` finds the serve).
    names = ("PYTHONPATH", "XDG_RUNTIME_DIR")
    env = {name: os.environ[name] for name in names if name in os.environ} or None
    params = StdioServerParameters(command=command, args=args, env=env)
    # A real file: the SDK hands it to the child as its stderr.
    with (tmp_path / "serve.log").open("w") as errlog:
        transport = stdio_client(params, errlog=errlog)
        client = Client(transport, mode=mode, message_handler=message_handler, **options)
        async with connected(client):
            yield client


@asynccontextmanager
async def served_http(
    config: str, tmp_path: Path, *flags: str, env: Mapping[str, str] | None = None
) -> AsyncGenerator[tuple[str, anyio.abc.Process]]:
    """Run `mcpmount serve CONFIG --transport http --port 0` (in ``env``, else this process's
    environment); yield its URL and process."""
    portfile = tmp_path / "port"
    command = serve_command(
        config, "--transport", "http", "--port", "0", "--portfile", str(portfile)
    )
    async with portfile_process(
        [*command, *flags], portfile, tmp_path / "serve.log", env=env, start=STARTUP, stop=BEHAVIOUR
    ) as served:
        yield served


async def wait_for_tool(client: Client, name: str) -> None:
    """Re-list until `name` is served (its server mounted), within `STARTUP` seconds."""
    with anyio.fail_after(STARTUP):
        while name not in names(await client.list_tools()):
            await anyio.sleep(0.1)
