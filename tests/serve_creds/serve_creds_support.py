"""A gateway for per-principal credentials: oidc-provider, an MCP server that records the
bearer token of each call, and `mcpmount serve` over HTTP with two static tokens.

The operator logs in once (`mcpmount login`, as ``operator``): serve lists the server's
tools with that login. Each principal's client then logs in as its own person (``alice``,
``bob``) through the URL its first call is answered with; the scripted browser
(`oauth_support.browse`) brings the authorization response back to serve's callback.
"""

from __future__ import annotations

import json
import os
import re
import sys
from collections.abc import AsyncGenerator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final
from urllib.parse import urlsplit, urlunsplit

import anyio
import httpx2
import mcp_types
from anyio.streams.text import TextReceiveStream
from cryptography.fernet import Fernet
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from oauth.oauth_browser_support import browse
from oauth.oauth_support import AuthorizationServer, authorization_server, resource_server
from serve.serve_support import BEHAVIOUR, connected, served_http

ALICE: Final = "alice-serve-token-0123456789"
"""The static serve token of the principal who logs in upstream as ``alice``."""
BOB: Final = "bob-serve-token-0123456789ab"
"""The static serve token of the principal who logs in upstream as ``bob``."""

_URL_LINE: Final = re.compile(r"Open this URL to log in to (\S+): (\S+)")


@dataclass
class Gateway:
    """The servers and files of one test: `serve` itself runs in `served`."""

    server: AuthorizationServer
    upstream: str
    """The MCP server's URL (``tracker``)."""
    record: Path
    """Where the upstream writes each ``whoami`` call's token and subject."""
    config: Path
    tokens: Path
    """``MCPMOUNT_TOKEN_DIR``: the operator's login, and ``principals/`` beside it."""
    key: str
    """``MCPMOUNT_TOKEN_KEY``."""

    def env(self, **extra: str) -> dict[str, str]:
        return {
            **os.environ,
            "MCPMOUNT_TOKEN_DIR": str(self.tokens),
            "MCPMOUNT_TOKEN_KEY": self.key,
            **extra,
        }

    def recorded(self) -> list[dict[str, str]]:
        """Each ``whoami`` call the upstream answered: its bearer token and subject."""
        lines = self.record.read_text().splitlines() if self.record.exists() else []
        return [json.loads(line) for line in lines]

    def tokens_of(self, subject: str) -> set[str]:
        """The upstream tokens that came with the calls of ``subject``."""
        return {line["token"] for line in self.recorded() if line["sub"] == subject}

    async def operator_login(self) -> None:
        """`mcpmount login tracker` as the operator, in the scripted browser."""
        command = [sys.executable, "-m", "mcpmount", "login", "tracker", str(self.config)]
        with anyio.fail_after(60):
            async with await anyio.open_process(
                [*command, "--no-browser"], env=self.env()
            ) as process:
                assert process.stderr is not None
                said = ""
                async for chunk in TextReceiveStream(process.stderr):
                    said += chunk
                    if found := _URL_LINE.search(said):
                        await browse(found.group(2), user="operator")
                        break
                assert await process.wait() == 0, said


def config_text(upstream: str, credentials: str) -> str:
    return (
        f'[servers.tracker]\nurl = "{upstream}"\nrequired = true\n'
        f'[servers.tracker.oauth]\ncredentials = "{credentials}"\n'
        f'[serve.tokens.alice]\ntoken = "{ALICE}"\n[serve.tokens.bob]\ntoken = "{BOB}"\n'
    )


@asynccontextmanager
async def gateway(tmp_path: Path, *, credentials: str = "per_principal") -> AsyncGenerator[Gateway]:
    """The authorization server and the recording MCP server, a config naming them (with
    ``credentials``), and the operator logged in."""
    record = tmp_path / "calls.jsonl"
    async with (
        authorization_server() as server,
        resource_server(server.issuer, record=record) as upstream,
    ):
        config = tmp_path / "mcpmount.toml"
        config.write_text(config_text(upstream, credentials))
        key = Fernet.generate_key().decode()
        found = Gateway(server, upstream, record, config, tmp_path / "tokens", key)
        await found.operator_login()
        yield found


@asynccontextmanager
async def served(gateway: Gateway, directory: Path, *flags: str) -> AsyncGenerator[str]:
    """`mcpmount serve CONFIG --transport http` (its port file and log in ``directory``);
    yield its ``/mcp`` URL."""
    await anyio.Path(directory).mkdir(exist_ok=True)
    config = str(gateway.config)
    async with served_http(config, directory, *flags, env=gateway.env()) as (url, _):
        yield url


async def log_in(url: str, user: str, *, via: str | None = None) -> str:
    """Play ``user``'s browser from the authorization URL back to serve's callback (to the
    origin ``via`` instead, as a load balancer might send it); return the page serve
    answered there (which must be a success)."""
    back = await browse(url, user=user, deliver=False)
    if via is not None:
        back = urlunsplit(urlsplit(via)[:2] + urlsplit(back)[2:])
    async with httpx2.AsyncClient(timeout=BEHAVIOUR) as http:
        answer = await http.get(back)
    assert answer.status_code == 200, answer.text
    return answer.text


class LogsIn:
    """An elicitation callback that logs in as ``user`` at the URL it is sent, then accepts
    (the 2026-07-28 era's URL elicitation); it counts what it was asked."""

    def __init__(self, user: str) -> None:
        self.user = user
        self.asked: list[str] = []

    async def __call__(
        self, context: Any, params: mcp_types.ElicitRequestParams
    ) -> mcp_types.ElicitResult:
        assert isinstance(params, mcp_types.ElicitRequestURLParams), params
        self.asked.append(params.url)
        await log_in(params.url, self.user)
        return mcp_types.ElicitResult(action="accept")


@asynccontextmanager
async def principal(
    url: str, token: str, *, mode: str, logs_in: LogsIn | None = None
) -> AsyncGenerator[Client]:
    """A Client of serve with ``token``; ``logs_in`` answers URL elicitations (and makes the
    client declare them); without it the client declares them with a callback that fails."""

    async def refuse(context: Any, params: mcp_types.ElicitRequestParams) -> mcp_types.ErrorData:
        return mcp_types.ErrorData(code=mcp_types.INVALID_REQUEST, message="not expected")

    headers = {"Authorization": f"Bearer {token}"}
    async with httpx2.AsyncClient(headers=headers, timeout=BEHAVIOUR) as http:
        client = Client(
            streamable_http_client(url, http_client=http),
            mode=mode,
            cache=None,
            elicitation_callback=logs_in if logs_in is not None else refuse,
        )
        async with connected(client):
            yield client


def text(result: mcp_types.CallToolResult) -> str:
    return " ".join(c.text for c in result.content if isinstance(c, mcp_types.TextContent))


def files_hold(directory: Path, secret: str) -> list[str]:
    """The files under ``directory`` whose bytes hold ``secret``."""
    return [
        str(path)
        for path in directory.rglob("*")
        if path.is_file() and secret.encode() in path.read_bytes()
    ]
