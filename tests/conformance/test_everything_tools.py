"""Every tool server-everything offers to a full-featured client is listed and callable
through `mcpmount serve`, over stdio and HTTP, in both protocol eras.

The reference is server-everything itself, asked by the same client (sampling, elicitation
in form and URL modes, roots; no tasks): what it lists to that client directly is what
`serve` must list as `everything__<tool>`, and each call that succeeds directly must
succeed through `serve`. A tool that requires task augmentation (`execution.taskSupport =
"required"`) cannot be called by a client without tasks: through `serve` it must be either
callable or not listed, never listed and uncallable.
"""

from __future__ import annotations

from pathlib import Path

import anyio
import mcp_types
import pytest
from mcp import Client, MCPError

from conformance.everything_support import NAMESPACE, STARTUP, arguments_for, connected

pytestmark = [pytest.mark.conformance, pytest.mark.usefixtures("no_leaks")]

CALL_TIMEOUT = 30.0
"""Seconds for one call (the slowest, `trigger-long-running-operation`, runs 1 s here)."""

OFFERED_TO_FULL_CLIENTS = {
    "get-roots-list",
    "trigger-elicitation-request",
    "trigger-url-elicitation",
    "trigger-sampling-request",
}
"""The tools server-everything registers only for a client offering roots, elicitation
(form; URL) and sampling."""


def needs_tasks(tool: mcp_types.Tool) -> bool:
    return tool.execution is not None and tool.execution.task_support == "required"


async def listed(client: Client) -> dict[str, mcp_types.Tool]:
    with anyio.fail_after(STARTUP):
        return {tool.name: tool for tool in (await client.list_tools()).tools}


async def call_problem(client: Client, name: str, tool: mcp_types.Tool, raw_name: str) -> str:
    """Why calling `name` failed, or "" when it succeeded."""
    try:
        with anyio.fail_after(CALL_TIMEOUT):
            result = await client.call_tool(name, arguments_for(tool, raw_name))
    except MCPError as exc:
        return f"error {exc.error.code}: {exc.error.message}"
    except TimeoutError:
        return f"no answer within {CALL_TIMEOUT:.0f} s"
    if result.is_error:
        text = " ".join(b.text for b in result.content if isinstance(b, mcp_types.TextContent))
        return f"isError: {text[:200]}"
    return ""


async def test_server_everything_lists_and_answers_every_tool_to_a_full_featured_client(
    tmp_path: Path,
) -> None:
    async with connected(tmp_path, "direct", "legacy") as client:
        tools = await listed(client)
        assert tools.keys() >= OFFERED_TO_FULL_CLIENTS, sorted(tools)
        problems = {
            name: await call_problem(client, name, tool, name)
            for name, tool in tools.items()
            if not needs_tasks(tool)
        }
    assert not {name: why for name, why in problems.items() if why}


@pytest.mark.timeout(120)
@pytest.mark.parametrize("via", ["serve-stdio", "serve-http"])
@pytest.mark.parametrize("mode", ["legacy", "auto"])
async def test_every_tool_is_listed_and_callable_through_serve(
    tmp_path: Path, via: str, mode: str
) -> None:
    async with connected(tmp_path, "direct", "legacy") as client:
        reference = await listed(client)
    problems: list[str] = []
    async with connected(tmp_path, via, mode) as client:
        served = await listed(client)
        for raw_name, tool in sorted(reference.items()):
            name = f"{NAMESPACE}__{raw_name}"
            if name not in served:
                if not needs_tasks(tool):
                    problems.append(f"{raw_name}: not listed")
                continue
            why = await call_problem(client, name, served[name], raw_name)
            if why:
                kind = "listed, needs tasks, not callable" if needs_tasks(tool) else "call failed"
                problems.append(f"{raw_name}: {kind}: {why}")
    assert not problems, f"through {via} ({mode}):\n" + "\n".join(problems)
