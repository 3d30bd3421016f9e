"""The command line lists what `serve` lists of server-everything.

server-everything registers four tools only for a client that offers sampling,
elicitation or roots; `serve` offers them upstream (it relays them to its client), so the
command line must too, or `mcpmount tools` shows 12 tools where a host sees 16. Its
task-only tool (`simulate-research-query`) is mounted and listed like the others.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import anyio
import pytest
from mcp import Client, StdioServerParameters
from mcp.client.stdio import stdio_client

from conformance.everything_support import NAMESPACE, STARTUP, everything_config

pytestmark = [pytest.mark.conformance, pytest.mark.usefixtures("no_leaks")]


async def served_names(config: Path, errlog: Path) -> set[str]:
    """What a plain client (it offers nothing) lists through `mcpmount serve CONFIG`."""
    env = {"PYTHONPATH": os.environ["PYTHONPATH"]} if "PYTHONPATH" in os.environ else None
    serve = ["-m", "mcpmount", "serve", str(config)]
    params = StdioServerParameters(command=sys.executable, args=serve, env=env)
    with errlog.open("w") as log:
        async with Client(stdio_client(params, errlog=log)) as client:
            with anyio.fail_after(STARTUP):
                return {tool.name for tool in (await client.list_tools()).tools}


@pytest.mark.timeout(120)
async def test_tools_lists_what_serve_lists_with_the_task_only_tool(
    tmp_path: Path,
) -> None:
    config = everything_config(tmp_path)
    command = [sys.executable, "-m", "mcpmount", "tools", str(config), "--live", "--json"]
    env = {**os.environ, "XDG_CACHE_HOME": str(tmp_path / "cache")}
    with anyio.fail_after(STARTUP):
        done = await anyio.run_process(command, env=env, check=False)
    stdout, stderr = done.stdout.decode(), done.stderr.decode()
    assert done.returncode == 0, stderr
    listed = {row["name"] for row in json.loads(stdout)}
    served = await served_names(config, tmp_path / "serve.log")
    assert f"{NAMESPACE}__trigger-sampling-request" in listed
    assert f"{NAMESPACE}__simulate-research-query" in listed
    assert listed | {"tool_search", "call_tool"} == served | {"tool_search", "call_tool"}
    assert "task" not in stderr, stderr
