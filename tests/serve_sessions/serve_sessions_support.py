"""Helpers for the per-client session tests: a served stateful server, and its clients.

`mcpmount serve` mounts tests/serve_sessions/sessions_server.py (state per MCP session:
a working directory, the serving pid, a question on the standalone stream) as `NAME`,
over stdio (serve spawns it) or over streamable HTTP (the test runs it), with
``sessions`` as the test says. Each `Peer` is a real SDK `Client` of serve that answers
the server's question with its own name, and keeps the questions it was asked.
"""

from __future__ import annotations

import json
import sys
from collections.abc import AsyncGenerator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Final

import anyio
import anyio.abc
import httpx2
import mcp_types
from mcp import Client
from mcp.client import ClientRequestContext
from mcp.client.streamable_http import streamable_http_client

from serve.serve_support import BEHAVIOUR, STARTUP, connected, served_http
from support import portfile_process

SERVER: Final = Path(__file__).parent / "sessions_server.py"
NAME: Final = "state"
"""The namespace the stateful server is mounted as."""


def config(tmp_path: Path, sessions: str, *, url: str | None = None, extra: str = "") -> str:
    """Write a serve config mounting the stateful server (stdio, or at ``url``) with
    ``sessions``; return its path."""
    if url is None:
        where = f'command = "{sys.executable}"\nargs = {json.dumps([str(SERVER)])}\n'
    else:
        where = f'url = "{url}"\n'
    path = tmp_path / "serve.toml"
    path.write_text(
        "[registry]\nstartup_timeout = 15\n\n"
        f'[servers.{NAME}]\n{where}protocol = "legacy"\nrequired = true\n'
        f'sessions = "{sessions}"\n{extra}'
    )
    return str(path)


@asynccontextmanager
async def upstream_http(tmp_path: Path) -> AsyncGenerator[tuple[str, anyio.abc.Process]]:
    """Run the stateful server over streamable HTTP; yield its URL and process."""
    portfile = tmp_path / "upstream.port"
    command = [sys.executable, str(SERVER), "--http", "--portfile", str(portfile)]
    log = tmp_path / "upstream.log"
    async with portfile_process(command, portfile, log, start=STARTUP, stop=BEHAVIOUR) as up:
        yield up


@dataclass(eq=False)
class Peer:
    """A client of serve that answers questions with its ``name``, and keeps them."""

    name: str
    client: Client | None = None
    asked: list[str] = field(default_factory=list[str])

    async def elicit(
        self, context: ClientRequestContext, params: mcp_types.ElicitRequestParams
    ) -> mcp_types.ElicitResult:
        self.asked.append(params.message)
        return mcp_types.ElicitResult(action="accept", content={"answer": self.name})

    async def call(self, tool: str, arguments: dict[str, object] | None = None) -> str:
        """Call ``state__<tool>``; return its text (an error's text too, marked)."""
        assert self.client is not None
        with anyio.fail_after(BEHAVIOUR):
            result = await self.client.call_tool(f"{NAME}__{tool}", arguments or {})
        text = "".join(c.text for c in result.content if isinstance(c, mcp_types.TextContent))
        return f"ERROR: {text}" if result.is_error else text


@asynccontextmanager
async def peer(url: str, name: str) -> AsyncGenerator[Peer]:
    """A connected handshake-era client of serve at ``url``, named ``name``."""
    me = Peer(name)
    async with httpx2.AsyncClient(timeout=BEHAVIOUR) as http:
        client = Client(
            streamable_http_client(url, http_client=http),
            mode="legacy",
            cache=None,
            elicitation_callback=me.elicit,
        )
        me.client = client
        async with connected(client):
            yield me


@asynccontextmanager
async def two_peers_of_http(tmp_path: Path, sessions: str) -> AsyncGenerator[tuple[Peer, Peer]]:
    """``alice`` and ``bob``, clients of serve mounting the stateful server over HTTP with
    ``sessions``."""
    async with (
        upstream_http(tmp_path) as (upstream, _),
        served_http(config(tmp_path, sessions, url=upstream), tmp_path) as (url, _),
        peer(url, "alice") as alice,
        peer(url, "bob") as bob,
    ):
        yield alice, bob


def children_of(pid: int) -> set[int]:
    """The pids of the live stateful servers descending from ``pid`` (from /proc)."""
    parents: dict[int, int] = {}
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if fields[0] not in "ZX":
            parents[int(stat.parent.name)] = int(fields[1])
    found: set[int] = set()
    for child in parents:
        ancestor, steps = parents.get(child), 0
        while ancestor not in (None, 0, 1, pid) and steps < 64:
            ancestor, steps = parents.get(ancestor), steps + 1
        args = _cmdline(child)
        if ancestor == pid and "-c" not in args and any(a.endswith(SERVER.name) for a in args):
            found.add(child)  # the server itself, not its launcher (``python -c``)
    return found


def _cmdline(pid: int) -> list[str]:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().decode(errors="replace").split("\0")
    except OSError:
        return []


async def until(condition: object, what: str, seconds: float = BEHAVIOUR) -> None:
    """Wait (bounded) until ``condition()`` is true."""
    assert callable(condition)
    with anyio.fail_after(seconds):
        while not condition():
            await anyio.sleep(0.05)
    assert condition(), what
