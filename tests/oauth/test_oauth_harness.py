"""The OAuth harness works end to end with the SDK's own OAuth clients (no mcpmount code).

oidc-provider (tests/oauth/authorization_server.mjs) fronts tests/servers/oauth_server.py; the
SDK's `OAuthClientProvider` logs in by authorization code through the scripted browser and a
loopback listener, and its `ClientCredentialsOAuthProvider` by client credentials.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator
from contextlib import asynccontextmanager
from typing import Literal
from urllib.parse import parse_qs, urlsplit

import anyio
import httpx2
import jwt
import pytest
from mcp import Client
from mcp.client.auth import OAuthClientProvider
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.auth import (
    AuthorizationCodeResult,
    OAuthClientMetadata,
)
from pydantic import AnyUrl

from oauth.oauth_browser_support import CallbackListener, browse
from oauth.oauth_support import (
    AuthorizationServer,
    MemoryStorage,
    authorization_server,
    credentials_provider,
    resource_server,
    revoke_refresh_token,
    token_request,
)
from support import text_of

# Each test starts Node (oidc-provider) and a Python server: on a loaded 2-core machine that
# alone has taken 30 s, so the per-test bound is doubled.
pytestmark = [pytest.mark.slow, pytest.mark.usefixtures("no_leaks"), pytest.mark.timeout(120)]


def code_provider(
    url: str,
    storage: MemoryStorage,
    listener: CallbackListener | None = None,
    authorize_urls: list[str] | None = None,
    *,
    deny: bool = False,
) -> OAuthClientProvider:
    """An authorization-code client that registers itself and browses as alice through
    `listener` (denying consent with `deny`); without one, a browser step fails the test.
    Each authorization URL it is sent to is appended to `authorize_urls`."""
    visited: list[str] = [] if authorize_urls is None else authorize_urls

    async def redirect_handler(authorize_url: str) -> None:
        visited.append(authorize_url)

    async def callback_handler() -> AuthorizationCodeResult:
        if listener is None:
            raise AssertionError(f"unexpected browser step: {visited[-1]}")
        await browse(visited[-1], deny=deny)
        query = parse_qs(urlsplit(await listener.received()).query)
        if "error" in query:
            raise PermissionError(f"authorization refused: {query['error'][0]}")
        return AuthorizationCodeResult(
            code=query["code"][0], state=query["state"][0], iss=query["iss"][0]
        )

    metadata = OAuthClientMetadata(
        redirect_uris=[
            AnyUrl(listener.redirect_uri if listener else "http://127.0.0.1:9/callback")
        ],
        token_endpoint_auth_method="none",
        client_name="harness",
    )
    return OAuthClientProvider(url, metadata, storage, redirect_handler, callback_handler)


async def whoami(url: str, auth: httpx2.Auth, mode: Literal["auto", "legacy"] = "auto") -> str:
    """Call `whoami` with `auth` in a fresh connection (era `mode`)."""
    async with (
        httpx2.AsyncClient(auth=auth, timeout=30) as http,
        Client(streamable_http_client(url, http_client=http), mode=mode) as client,
    ):
        return text_of(await client.call_tool("whoami", {}))


@asynccontextmanager
async def logged_in(
    access_ttl: int = 300, mode: Literal["auto", "legacy"] = "auto"
) -> AsyncGenerator[tuple[AuthorizationServer, str, MemoryStorage, OAuthClientProvider]]:
    """Servers, and tokens for alice from one authorization-code login through the SDK
    (the provider that logged in, and its storage)."""
    storage = MemoryStorage()
    async with (
        authorization_server(access_ttl=access_ttl) as auth,
        resource_server(auth.issuer) as url,
        CallbackListener() as listener,
    ):
        provider = code_provider(url, storage, listener)
        answer = await whoami(url, provider, mode)
        assert answer.startswith("sub=alice client_id="), answer
        assert answer.endswith(" scopes=mcp"), answer
        yield auth, url, storage, provider


@pytest.mark.parametrize("mode", ["auto", "legacy"])
async def test_authorization_code_login_reaches_the_tool_as_the_user(
    mode: Literal["auto", "legacy"],
) -> None:
    async with logged_in(mode=mode) as (auth, url, storage, _):
        assert storage.tokens is not None
        assert storage.tokens.refresh_token
        assert storage.client_info is not None
        claims = jwt.decode(storage.tokens.access_token, options={"verify_signature": False})
        assert claims["aud"] == url
        assert claims["iss"] == auth.issuer
        assert claims["client_id"] == storage.client_info.client_id
        # A new provider over the same storage uses the stored token: no browser.
        assert (await whoami(url, code_provider(url, storage), mode)).startswith("sub=alice")


async def test_denied_consent_reaches_the_client_as_access_denied() -> None:
    async with (
        authorization_server() as auth,
        resource_server(auth.issuer) as url,
        CallbackListener() as listener,
    ):
        with pytest.RaisesGroup(
            pytest.RaisesExc(PermissionError, match="access_denied"), flatten_subgroups=True
        ):
            await whoami(url, code_provider(url, MemoryStorage(), listener, deny=True))


async def test_missing_or_foreign_token_gets_401_naming_the_resource_metadata() -> None:
    async with (
        authorization_server() as auth,
        resource_server(auth.issuer) as url,
        httpx2.AsyncClient(timeout=10) as http,
    ):
        body = {"jsonrpc": "2.0", "id": 1, "method": "ping"}
        headers = {"Accept": "application/json, text/event-stream"}
        bare = await http.post(url, json=body, headers=headers)
        forged_headers = {**headers, "Authorization": "Bearer x.y.z"}
        forged = await http.post(url, json=body, headers=forged_headers)
        metadata_url = url.replace("/mcp", "/.well-known/oauth-protected-resource/mcp")
        for answer in (bare, forged):
            assert answer.status_code == 401
            assert f'resource_metadata="{metadata_url}"' in answer.headers["www-authenticate"]
        metadata = (await http.get(metadata_url)).json()
        assert metadata["resource"] == url
        assert metadata["authorization_servers"] == [auth.issuer]
        assert metadata["scopes_supported"] == ["mcp"]


async def test_client_credentials_reach_the_tool_as_the_client() -> None:
    async with authorization_server() as auth, resource_server(auth.issuer) as url:
        provider = credentials_provider(url, auth)
        answer = await whoami(url, provider)
        assert answer == f"sub={auth.client_id} client_id={auth.client_id} scopes=mcp"


async def test_an_expired_access_token_is_refreshed_and_rotated() -> None:
    async with logged_in(access_ttl=2) as (auth, url, storage, provider):
        assert storage.tokens is not None
        assert storage.client_info is not None
        first = storage.tokens
        await anyio.sleep(auth.access_ttl + 1.5)  # past exp at the server and at the client
        # The provider that logged in knows when its token expires, so it refreshes first.
        assert (await whoami(url, provider)).startswith("sub=alice")
        assert storage.tokens.access_token != first.access_token
        assert storage.tokens.refresh_token not in (None, first.refresh_token)
        # Rotation: the refresh token used above is consumed.
        assert first.refresh_token is not None
        refresh = {"grant_type": "refresh_token", "refresh_token": first.refresh_token}
        client_id = storage.client_info.client_id
        reuse = await token_request(auth, {**refresh, "resource": url}, client_id)
        assert reuse.status_code == 400, reuse.text
        assert reuse.json()["error"] == "invalid_grant"
        # Reuse detection: presenting a consumed refresh token revokes the grant, so the token
        # that replaced it is gone too (two processes refreshing at once lose their login).
        assert storage.tokens.refresh_token is not None
        latest = {**refresh, "refresh_token": storage.tokens.refresh_token}
        lost = await token_request(auth, {**latest, "resource": url}, client_id)
        assert lost.status_code == 400, lost.text
        assert lost.json()["error"] == "invalid_grant"


async def test_a_revoked_refresh_token_no_longer_refreshes() -> None:
    async with logged_in() as (auth, url, storage, _):
        assert storage.tokens is not None
        assert storage.tokens.refresh_token
        assert storage.client_info is not None
        client_id = storage.client_info.client_id
        await revoke_refresh_token(auth, storage.tokens.refresh_token, client_id)
        refresh = {"grant_type": "refresh_token", "refresh_token": storage.tokens.refresh_token}
        answer = await token_request(auth, {**refresh, "resource": url}, client_id)
        assert answer.status_code == 400, answer.text
        assert answer.json()["error"] == "invalid_grant"


async def test_after_revocation_the_sdk_falls_back_to_a_new_login() -> None:
    storage = MemoryStorage()
    authorize_urls: list[str] = []
    async with (
        authorization_server(access_ttl=2) as auth,
        resource_server(auth.issuer) as url,
        CallbackListener() as listener,
    ):
        provider = code_provider(url, storage, listener, authorize_urls)
        assert (await whoami(url, provider)).startswith("sub=alice")
        assert storage.tokens is not None
        assert storage.tokens.refresh_token
        assert storage.client_info is not None
        revoked = storage.tokens.refresh_token
        await revoke_refresh_token(auth, revoked, storage.client_info.client_id)
        await anyio.sleep(auth.access_ttl + 1.5)
        # Its refresh is refused (invalid_grant), so it runs the browser step again.
        assert (await whoami(url, provider)).startswith("sub=alice")
        assert len(authorize_urls) == 2
        assert storage.tokens.refresh_token not in (None, revoked)
