"""Helpers for the task tests: server-everything behind `mcpmount serve`, and a client
that speaks tasks in either era.

server-everything 2026.8.31 (pinned in conformance/package.json; `npm ci --prefix
conformance`) has one task-only tool, `simulate-research-query`: four stages of a second
each, and with ``ambiguous`` an elicitation for its client in the third.

SDK 2.3's `Client` has no task API: it validates a ``tools/call`` answer as a
`CallToolResult`, so a `CreateTaskResult` cannot come back through ``call_tool`` on a
2025-11-25 session. `Tasker` sends each task request below that check, stamped exactly as
the session stamps its own requests (the protocol version header, and in the 2026 era the
``_meta`` envelope with the client's capabilities: the tasks extension, advertised), and
gives back the raw result, or raises the `MCPError` the server answered.
"""

from __future__ import annotations

import os
from collections.abc import AsyncGenerator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

import anyio
import httpx2
import mcp_types
from mcp import Client, StdioServerParameters
from mcp.client import ClientRequestContext
from mcp.client.extension import ClientExtension, NotificationBinding
from mcp.client.stdio import stdio_client
from mcp.client.streamable_http import streamable_http_client

from conformance.everything_support import everything_server
from serve.serve_support import BEHAVIOUR, connected, serve_command, served_http
from support import write_config

__all__ = [
    "MODERN",
    "PREFIX",
    "RESEARCH",
    "TASKS",
    "TERMINAL",
    "TaskNotices",
    "Tasker",
    "serving_http",
    "tasker",
    "tasks_config",
]

TASKS: Final = "io.modelcontextprotocol/tasks"
RESEARCH: Final = "everything__simulate-research-query"
"""The task-only tool, as serve names it."""

MODERN: Final = "2026-07-28"
TERMINAL: Final = ("completed", "failed", "cancelled")
PREFIX: Final = "mmt-"
"""How serve's own task ids begin (the server's never leave serve)."""


def tasks_config(tmp_path: Path, protocol: str = "auto", first_list_wait: float = 2.0) -> str:
    """A config mounting server-everything over stdio as `everything`, spoken to in
    ``protocol`` (``legacy``: its task status notices are heard, see docs/recipes/tasks.md);
    serve's first answers wait ``first_list_wait`` seconds at most for it."""
    return write_config(
        tmp_path,
        everything_server(f'protocol = "{protocol}"'),
        registry=f"startup_timeout = 30\nfirst_list_wait = {first_list_wait}",
        name="serve.toml",
    )


class TaskNotices(ClientExtension):
    """The tasks extension, advertised, keeping every ``notifications/tasks/status``."""

    identifier = TASKS

    def __init__(self) -> None:
        self.statuses: list[mcp_types.TaskStatusNotificationParams] = []

    def notifications(self) -> list[NotificationBinding[Any]]:
        async def keep(params: mcp_types.TaskStatusNotificationParams) -> None:
            self.statuses.append(params)

        return [
            NotificationBinding(
                method="notifications/tasks/status",
                params_type=mcp_types.TaskStatusNotificationParams,
                handler=keep,
            )
        ]


@dataclass
class Tasker:
    """A connected client that speaks tasks in its era."""

    client: Client
    asked: list[mcp_types.ElicitRequestParams]
    """What it was asked (an elicitation of a task, in the handshake era)."""
    notices: TaskNotices
    """The task status notifications it was sent."""

    @property
    def modern(self) -> bool:
        return self.client.protocol_version == MODERN

    async def send(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        """Send one request as the session would; its raw result (or the MCPError)."""
        session = self.client.session
        data: dict[str, Any] = {"method": method, "params": dict(params)}
        opts: Any = {}
        session._stamp(data, opts)  # pyright: ignore[reportPrivateUsage]
        if method.startswith("tasks/") and "taskId" in params:
            opts.setdefault("headers", {})["mcp-name"] = params["taskId"]  # SEP-2663's route
        dispatcher = session._dispatcher  # pyright: ignore[reportPrivateUsage]
        with anyio.fail_after(BEHAVIOUR):
            return await dispatcher.send_raw_request(method, data["params"], opts)

    async def start(self, arguments: dict[str, Any], name: str = RESEARCH) -> dict[str, Any]:
        """Call ``name`` as a task; the task serve answered (either era's form)."""
        params: dict[str, Any] = {"name": name, "arguments": arguments}
        if not self.modern:
            params["task"] = {}
        answer = await self.send("tools/call", params)
        if self.modern:
            assert answer.get("resultType") == "task", answer
            return answer
        assert "task" in answer, answer
        return answer["task"]

    async def get(self, task_id: str) -> dict[str, Any]:
        return await self.send("tasks/get", {"taskId": task_id})

    async def wait(self, task_id: str, *statuses: str) -> dict[str, Any]:
        """Poll ``tasks/get`` until the task's status is one of ``statuses`` (within
        `BEHAVIOUR` seconds: its four stages take four)."""
        with anyio.fail_after(BEHAVIOUR):
            while (task := await self.get(task_id))["status"] not in statuses:
                assert task["status"] not in TERMINAL, task
                await anyio.sleep(0.1)
        return task


@asynccontextmanager
async def tasker(
    tmp_path: Path,
    via: str,
    mode: str,
    *,
    token: str | None = None,
    url: str | None = None,
    declare: bool = True,
    upstream: str = "auto",
    first_list_wait: float = 2.0,
) -> AsyncGenerator[Tasker]:
    """A `Tasker` connected to serve: over stdio (a serve of its own), or to ``url`` (an
    HTTP serve), with ``token``; it answers every elicitation "historical". Unless
    ``declare`` is false, it declares the tasks extension."""
    asked: list[mcp_types.ElicitRequestParams] = []
    notices = TaskNotices()

    async def elicit(
        context: ClientRequestContext, params: mcp_types.ElicitRequestParams
    ) -> mcp_types.ElicitResult:
        asked.append(params)
        return mcp_types.ElicitResult(action="accept", content={"interpretation": "historical"})

    options: Any = {
        "mode": mode,
        "cache": None,
        "elicitation_callback": elicit,
        "extensions": [notices] if declare else None,
    }
    if via == "stdio":
        command, *args = serve_command(tasks_config(tmp_path, upstream, first_list_wait))
        # The SDK gives a child a minimal environment: pass on where our sources are.
        env = {"PYTHONPATH": os.environ["PYTHONPATH"]} if "PYTHONPATH" in os.environ else None
        params = StdioServerParameters(command=command, args=args, env=env)
        with (tmp_path / "serve.log").open("w") as errlog:
            client = Client(stdio_client(params, errlog=errlog), **options)
            async with connected(client):
                yield Tasker(client, asked, notices)
        return
    assert url is not None
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    async with httpx2.AsyncClient(headers=headers, timeout=BEHAVIOUR) as http:
        client = Client(streamable_http_client(url, http_client=http), **options)
        async with connected(client):
            yield Tasker(client, asked, notices)


@asynccontextmanager
async def serving_http(tmp_path: Path, *flags: str) -> AsyncGenerator[str]:
    """`mcpmount serve` of server-everything over HTTP; its URL."""
    async with served_http(tasks_config(tmp_path), tmp_path, *flags) as (url, _):
        yield url
