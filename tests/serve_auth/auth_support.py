"""Helpers for the tests of who may use HTTP `mcpmount serve`: configs, clients with a bearer
token, and raw requests that show what a refused request is answered."""

from __future__ import annotations

import json
import socket
import sys
from collections.abc import AsyncGenerator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Final

import anyio
import httpx2
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from serve.serve_support import BEHAVIOUR, connected
from support import SERVERS

RECORDING: Final = Path(__file__).parent / "recording_server.py"

TOKEN: Final = "serve-token-0123456789abcdef"
"""A static token for the tests (long enough: 16 characters or more)."""

OTHER_TOKEN: Final = "other-token-0123456789abcdef"


def _request(method: str, params: dict[str, object]) -> dict[str, object]:
    return {"jsonrpc": "2.0", "id": 1, "method": method, "params": params}


_CALL: Final = _request("tools/call", {"name": "alpha__echo", "arguments": {"text": "hi"}})

_HELLO: Final = {"name": "raw", "version": "1"}
_INITIALIZE: Final = _request(
    "initialize", {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": _HELLO}
)


def recording(name: str, record: Path, extra: str = "") -> str:
    """A config table for tests/serve_auth/recording_server.py, recording to ``record``."""
    args = json.dumps([str(RECORDING), "--record", str(record)])
    return f'[servers.{name}]\ncommand = "{sys.executable}"\nargs = {args}\n{extra}\n'


def content(name: str) -> str:
    """A config table for tests/servers/content_server.py (prompts, resources, a template)."""
    args = json.dumps([str(SERVERS / "content_server.py"), "--label", name])
    return f'[servers.{name}]\ncommand = "{sys.executable}"\nargs = {args}\n'


def calls(record: Path) -> list[str]:
    """The ``tools/call`` lines a recording server wrote."""
    lines = record.read_text().splitlines() if record.exists() else []
    return [line for line in lines if line.startswith("tools/call")]


def free_port() -> int:
    """A port nothing listens on now (for a server that must know its URL before it binds)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@asynccontextmanager
async def bearer_client(
    url: str, token: str | None, *, mode: str, auth: httpx2.Auth | None = None
) -> AsyncGenerator[Client]:
    """A Client of ``url`` whose every request carries ``Authorization: Bearer TOKEN`` (or
    what ``auth``, such as the SDK's OAuth providers, adds)."""
    headers = {"Authorization": f"Bearer {token}"} if token is not None else {}
    async with httpx2.AsyncClient(headers=headers, auth=auth, timeout=BEHAVIOUR) as http:
        client = Client(streamable_http_client(url, http_client=http), mode=mode, cache=None)
        async with connected(client):
            yield client


async def post(
    url: str, *, authorization: str | None = None, host: str | None = None, call: bool = True
) -> httpx2.Response:
    """POST one raw JSON-RPC message (a ``tools/call``, or ``initialize``) to ``url``."""
    headers = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}
    if authorization is not None:
        headers["Authorization"] = authorization
    if host is not None:
        headers["Host"] = host
    body = _CALL if call else _INITIALIZE
    with anyio.fail_after(BEHAVIOUR):
        async with httpx2.AsyncClient() as http:
            return await http.post(url, headers=headers, content=json.dumps(body).encode())
