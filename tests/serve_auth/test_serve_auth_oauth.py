"""OAuth resource-server mode of HTTP `mcpmount serve`, against a real authorization server
(oidc-provider, tests/oauth/authorization_server.mjs) issuing JWT access tokens: discovery
through the protected resource metadata, and 401 for no token, a token for another audience
and an expired token, none of which reaches an upstream server."""

from __future__ import annotations

import time
from collections.abc import AsyncGenerator
from contextlib import asynccontextmanager
from pathlib import Path

import anyio
import httpx2
import jwt
import mcp_types
import pytest

from oauth.oauth_support import (
    AuthorizationServer,
    authorization_server,
    credentials_provider,
    token_request,
)
from serve.serve_support import BEHAVIOUR, served_http, wait_for_tool, write_config
from serve_auth.auth_support import bearer_client, calls, post, recording
from support import free_port

# An authorization server, a served process and token lifetimes of seconds: generous.
pytestmark = [
    pytest.mark.slow,
    pytest.mark.anyio,
    pytest.mark.usefixtures("no_leaks"),
    pytest.mark.timeout(180),
]


def _oauth_flags(auth: AuthorizationServer, port: int, *scopes: str) -> list[str]:
    """Serve on ``port`` as a resource server of ``auth`` requiring ``scopes``."""
    flags = ["--port", str(port), "--oauth-issuer", auth.issuer]
    flags += ["--oauth-jwks-url", auth.metadata["jwks_uri"]]
    flags += ["--oauth-resource", f"http://127.0.0.1:{port}/mcp"]
    for scope in scopes:
        flags += ["--oauth-scope", scope]
    return flags


@asynccontextmanager
async def _served(
    tmp_path: Path, *scopes: str, access_ttl: int = 300
) -> AsyncGenerator[tuple[AuthorizationServer, str, Path]]:
    """An authorization server, and `serve` as its resource server requiring ``scopes`` in
    front of one recording upstream server; yields the server, serve's URL and the record."""
    record = tmp_path / "alpha.log"
    config = write_config(tmp_path, recording("alpha", record))
    port = free_port()
    async with (
        authorization_server(access_ttl=access_ttl) as auth,
        served_http(config, tmp_path, *_oauth_flags(auth, port, *scopes)) as (url, _),
    ):
        assert url == f"http://127.0.0.1:{port}/mcp"
        yield auth, url, record


async def _jwt(auth: AuthorizationServer, resource: str) -> str:
    """A client_credentials access token (a JWT) for ``resource``."""
    data = {"grant_type": "client_credentials", "resource": resource, "scope": "mcp"}
    answer = await token_request(auth, data, auth.client_id, auth.client_secret)
    assert answer.status_code == 200, answer.text
    return str(answer.json()["access_token"])


@pytest.mark.parametrize("mode", ["legacy", "auto"])
async def test_a_client_finds_the_issuer_and_only_a_token_for_this_resource_passes(
    tmp_path: Path, mode: str
) -> None:
    """The SDK's client-credentials provider follows the 401's resource_metadata to the
    issuer and calls with its JWT; no token, a JWT for another audience, a forged or
    malformed one are each 401 with the challenge, and none reaches the upstream server."""
    async with _served(tmp_path, "mcp") as (auth, url, record):
        provider = credentials_provider(url, auth)
        async with bearer_client(url, None, mode=mode, auth=provider) as client:
            await wait_for_tool(client, "alpha__echo")
            with anyio.fail_after(BEHAVIOUR):
                result = await client.call_tool("alpha__echo", {"text": "hello"})
        elsewhere = await _jwt(auth, "http://127.0.0.1:1/other")
        valid = await _jwt(auth, url)
        header, claims, _ = valid.split(".")
        forged = f"{header}.{claims}.{'A' * 342}"
        refused = [
            await post(url),
            await post(url, authorization=f"Bearer {elsewhere}"),
            await post(url, authorization=f"Bearer {forged}"),
            await post(url, authorization="Bearer not.a.jwt"),
        ]
        accepted = await post(url, authorization=f"Bearer {valid}", call=False)
        metadata_url = url.replace("/mcp", "/.well-known/oauth-protected-resource/mcp")
        async with httpx2.AsyncClient(timeout=BEHAVIOUR) as http:
            metadata = (await http.get(metadata_url)).json()
    assert result.content == [mcp_types.TextContent(type="text", text="hello")]
    assert jwt.decode(elsewhere, options={"verify_signature": False})["aud"] != url
    for response in refused:
        assert response.status_code == 401
        challenge = response.headers["www-authenticate"]
        assert challenge.startswith("Bearer ")
        assert 'error="invalid_token"' in challenge
        assert f'resource_metadata="{metadata_url}"' in challenge
    assert accepted.status_code == 200
    assert metadata["resource"] == url
    assert metadata["authorization_servers"] == [auth.issuer]
    assert metadata["scopes_supported"] == ["mcp"]
    assert calls(record) == ["tools/call echo"]


async def test_an_expired_jwt_is_refused_401_and_reaches_no_upstream_server(
    tmp_path: Path,
) -> None:
    """A token past its ``exp`` is 401 like no token; a fresh one from the same issuer
    passes, so it was the expiry that was refused."""
    async with _served(tmp_path, "mcp", access_ttl=3) as (auth, url, record):
        expired = await _jwt(auth, url)
        expiry = int(jwt.decode(expired, options={"verify_signature": False})["exp"])
        await anyio.sleep(max(0.0, expiry + 1.5 - time.time()))
        refused = await post(url, authorization=f"Bearer {expired}")
        fresh = await _jwt(auth, url)
        async with bearer_client(url, fresh, mode="legacy") as client:
            await wait_for_tool(client, "alpha__echo")
            with anyio.fail_after(BEHAVIOUR):
                result = await client.call_tool("alpha__echo", {"text": "fresh"})
    assert refused.status_code == 401
    assert 'error="invalid_token"' in refused.headers["www-authenticate"]
    assert not result.is_error
    assert calls(record) == ["tools/call echo"]


async def test_a_jwt_without_a_required_scope_is_refused_403(tmp_path: Path) -> None:
    """A valid token lacking a scope the server requires: 403 insufficient_scope."""
    async with _served(tmp_path, "admin") as (auth, url, record):
        response = await post(url, authorization=f"Bearer {await _jwt(auth, url)}")
    assert response.status_code == 403
    assert 'error="insufficient_scope"' in response.headers["www-authenticate"]
    assert calls(record) == []
