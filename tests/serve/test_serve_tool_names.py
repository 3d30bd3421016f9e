"""Through `mcpmount serve`, a stock client sees overridden tools under their override,
sanitized names it can call, and no tool it could never call (one that requires tasks)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import anyio
import pytest
from mcp import Client, MCPError

from serve.serve_support import (
    BEHAVIOUR,
    connected,
    names,
    served_http,
    wait_for_tool,
    write_config,
)
from support import fixture_server, text_of

pytestmark = [pytest.mark.slow, pytest.mark.usefixtures("no_leaks")]

TOOLS = json.dumps(
    [
        {"name": "q", "description": "Query the thing.", "inputSchema": {"type": "object"}},
        {"name": "read file", "inputSchema": {"type": "object"}},
        {"name": "café/menu", "inputSchema": {"type": "object"}},
        {
            "name": "needs_task",
            "inputSchema": {"type": "object"},
            "execution": {"taskSupport": "required"},
        },
        {
            "name": "may_task",
            "inputSchema": {"type": "object"},
            "execution": {"taskSupport": "optional"},
        },
    ]
)
EXTRA = (
    'invalid_names = "sanitize"\nprotocol = "legacy"\n'
    '[servers.t.overrides.q]\nname = "search"\ndescription = "Search the tracker."\n'
)


@pytest.mark.parametrize("mode", ["legacy", "2026-07-28"])
async def test_a_stock_client_sees_overrides_and_sanitized_names_and_the_task_only_tool(
    tmp_path: Path, mode: str
) -> None:
    """Over streamable HTTP, in both downstream eras: every listed name fits model APIs and
    every listed tool answers under its raw name."""
    config = write_config(tmp_path, fixture_server("t", "--raw-tools", TOOLS, extra=EXTRA))
    async with (
        served_http(config, tmp_path) as (url, _),
        connected(Client(url, mode=mode)) as client,
    ):
        await wait_for_tool(client, "t__search")
        with anyio.fail_after(BEHAVIOUR):
            listed = await client.list_tools()
            served = {tool.name: tool for tool in listed.tools}
            assert len(served) == 5
            assert served["t__search"].description == "Search the tracker."
            assert all(re.fullmatch(r"[A-Za-z0-9_-]{1,64}", name) for name in names(listed))
            answers = {text_of(await client.call_tool(name, {})) for name in served}
            # The fixture does no tasks: it answers the task-augmented call at once.
            assert answers == {"q {}", "read file {}", "café/menu {}", "may_task {}"} | {
                "needs_task {}"
            }


@pytest.mark.parametrize("mode", ["legacy", "2026-07-28"])
async def test_a_filtered_out_tool_does_not_exist_through_serve(tmp_path: Path, mode: str) -> None:
    """``tools`` and ``exclude_tools`` hold through serve, in both downstream eras: a tool the
    user turned off is neither listed, nor found by search, nor callable."""
    extra = 'tools = ["q", "may_*"]\nexclude_tools = ["may_task"]\nprotocol = "legacy"\n'
    config = write_config(tmp_path, fixture_server("t", "--raw-tools", TOOLS, extra=extra))
    async with (
        served_http(config, tmp_path) as (url, _),
        connected(Client(url, mode=mode)) as client,
    ):
        await wait_for_tool(client, "t__q")
        with anyio.fail_after(BEHAVIOUR):
            assert names(await client.list_tools()) == ["t__q"]
            with pytest.raises(MCPError, match="no mounted tool is named 't__may_task'"):
                await client.call_tool("t__may_task", {})
            assert text_of(await client.call_tool("t__q", {})) == "q {}"
