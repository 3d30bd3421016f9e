"""Each principal's own login at an upstream's authorization server, run through ``serve``.

With ``credentials = "per_principal"`` a url server's calls carry the token of the
principal (client token) that makes them. `PrincipalLogins` runs those logins:

- `start` discovers the server's authorization server (RFC 9728, then RFC 8414), registers
  serve as a client there once per server and issuer (its redirect URI serve's
  ``/oauth/callback``), and returns the authorization URL: PKCE (S256), the server as the
  resource (RFC 8707), and a one-time random ``state`` whose pending login (the principal,
  the server, the PKCE verifier) is kept sealed and expires after `PENDING_LIFE`;
- `finish` is the callback: it takes the pending login of the ``state`` (once), checks the
  response's issuer (RFC 9207), exchanges the code and keeps the tokens in that principal's
  `SealedTokens`, the only place they go. The browser that comes back is not the
  principal's client, so ``state`` alone says whose login it is;
- `auth` is the ``httpx2.Auth`` of a principal's upstream session: the SDK's provider on
  that principal's login (`Persisted.of_principal`), so refreshing, its lock and the
  issuer's keys are the principal's own.

Pending logins live where the tokens do (a directory, or Redis shared by replicas), so a
login started at one replica is finished at whichever the browser reaches.
"""

from __future__ import annotations

import secrets
import time
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Final
from urllib.parse import urlencode, urlsplit

import anyio
import httpx2
from mcp.client.auth import OAuthFlowError, PKCEParameters
from mcp.client.auth.utils import (
    build_oauth_authorization_server_metadata_discovery_urls,
    build_protected_resource_metadata_discovery_urls,
    create_client_registration_request,
    handle_auth_metadata_response,
    handle_protected_resource_response,
    handle_registration_response,
    issuers_match,
    union_scopes,
    validate_authorization_response_iss,
)
from mcp.shared.auth import (
    OAuthClientInformationFull,
    OAuthClientMetadata,
    OAuthMetadata,
    OAuthToken,
    ProtectedResourceMetadata,
)
from pydantic import AnyUrl, ValidationError

from mcpmount.auth._provider import Persisted, provider
from mcpmount.auth._sealed import SealedTokens, Sealer, redis_client
from mcpmount.auth._store import Login, LoginMetadata, Record
from mcpmount.config import HttpServer, OAuthSpec
from mcpmount.errors import LoginFailed

if TYPE_CHECKING:
    from redis import Redis

__all__ = ["CALLBACK_PATH", "PENDING_LIFE", "PrincipalLogins"]

CALLBACK_PATH: Final = "/oauth/callback"
"""Where serve takes the browser back from a principal's login."""

PENDING_LIFE: Final = 600.0
"""Seconds a started login may wait for its browser to come back."""

_HTTP_TIMEOUT: Final = 30.0
_SERVE: Final = "\0serve"
"""The pseudo-principal whose records are serve's own: registrations, pending logins."""


class PrincipalLogins:
    """The logins of every principal, sealed (see the module docstring).

    Args:
        sealer: Seals every record (``MCPMOUNT_TOKEN_KEY``).
        directory: Where the sealed files are (unused with Redis).
        redis_url: ``serve --shared-state``: records in that Redis, shared by replicas.
    """

    def __init__(self, sealer: Sealer, directory: Path, *, redis_url: str | None = None) -> None:
        self._sealer = sealer
        self._directory = directory
        self._redis: Redis | None = redis_client(redis_url) if redis_url is not None else None
        self.callback_url: str | None = None
        """Serve's ``/oauth/callback`` as the browser reaches it; serve sets it once bound,
        and a server's ``redirect_uri`` takes its place."""

    def close(self) -> None:
        if self._redis is not None:
            self._redis.close()

    def store(self, principal: str) -> SealedTokens:
        """The sealed logins of ``principal``."""
        return SealedTokens(principal, self._sealer, self._directory, self._redis)

    def login(self, principal: str, spec: HttpServer) -> Login:
        """``principal``'s login to ``spec``'s server."""
        oauth = _oauth(spec)
        return self.store(principal).login(spec.url, oauth.client(), issuer=oauth.issuer)

    def logged_in(self, principal: str, spec: HttpServer) -> bool:
        """Whether ``principal`` holds tokens for ``spec``'s server."""
        return self.login(principal, spec).tokens() is not None

    def auth(self, namespace: str, spec: HttpServer, principal: str) -> Persisted:
        """The auth of ``principal``'s session with ``spec``'s server: its own tokens,
        refreshed as its own; a server that refuses them fails with `LoginRequired`."""
        login = self.login(principal, spec)
        return provider(spec.url, _oauth(spec), login, namespace).keep_secret(spec).of_principal()

    async def wait(self, principal: str, spec: HttpServer, seconds: float) -> bool:
        """Wait at most ``seconds`` for ``principal``'s login to ``spec``'s server (finished
        here or at another replica); return whether it is there."""
        with anyio.move_on_after(seconds):
            while not self.logged_in(principal, spec):
                await anyio.sleep(0.1)
        return self.logged_in(principal, spec)

    async def start(self, principal: str, namespace: str, spec: HttpServer) -> str:
        """Start ``principal``'s login to ``spec``'s server; return the URL to open.

        Raises:
            LoginFailed: Discovery or registration failed (the message names the server).
        """
        oauth = _oauth(spec)
        redirect = oauth.redirect_uri or self.callback_url
        where = f"server {namespace!r} ({spec.display_url()})"
        if redirect is None:
            raise LoginFailed(f"{where}: serve has no address for {CALLBACK_PATH} yet")
        try:
            async with httpx2.AsyncClient(timeout=_HTTP_TIMEOUT) as http:
                resource, issuer, metadata = await _discover(http, spec)
                client = await self._client(http, spec, issuer, metadata, redirect)
        except (httpx2.HTTPError, OAuthFlowError, ValidationError) as exc:
            raise LoginFailed(f"{where}: {spec.redact(str(exc))}") from None
        pkce, state = PKCEParameters.generate(), secrets.token_urlsafe(32)
        kept = self.login(principal, spec)
        scope = union_scopes(_scope(oauth, resource), kept.wanted_scope())
        target = str(resource.resource) if resource is not None else spec.url
        self._pending(state).replace(
            {
                "principal": principal,
                "namespace": namespace,
                "url": spec.url,
                "client_key": oauth.client() or "",
                "configured_issuer": oauth.issuer,
                "issuer": issuer,
                "verifier": pkce.code_verifier,
                "redirect_uri": redirect,
                "resource": target,
                "client": client.model_dump(mode="json", exclude_none=True),
                "metadata": LoginMetadata(
                    resource=resource, authorization_server=issuer, server=metadata
                ).model_dump(mode="json", exclude_none=True),
                "expires": time.time() + PENDING_LIFE,
            }
        )
        query = {
            "response_type": "code",
            "client_id": client.client_id,
            "redirect_uri": redirect,
            "state": state,
            "code_challenge": pkce.code_challenge,
            "code_challenge_method": "S256",
            "resource": target,
        } | ({"scope": scope} if scope else {})
        return f"{metadata.authorization_endpoint}?{urlencode(query)}"

    async def finish(self, query: Mapping[str, str]) -> str:
        """Finish the login the browser came back from with ``query``; return its server's
        namespace.

        Raises:
            LoginFailed: No pending login has this ``state`` (unknown, used or expired), or
                the authorization server refused it; nothing was kept.
        """
        state = query.get("state") or ""
        record = self._pending(state) if state else None
        pending = record.read() if record is not None else {}
        if record is not None and pending:
            record.forget()  # once
        if not pending or float(pending.get("expires", 0)) < time.time():
            raise LoginFailed(
                "this login is unknown, already used or expired; call the tool again for a new one"
            )
        namespace = str(pending["namespace"])
        metadata = LoginMetadata.model_validate(pending["metadata"])
        client = OAuthClientInformationFull.model_validate(pending["client"])
        try:
            validate_authorization_response_iss(query.get("iss"), metadata.server)
        except OAuthFlowError as exc:
            raise LoginFailed(f"server {namespace!r}: {exc}; it was refused") from None
        if "code" not in query:
            described = query.get("error_description") or query.get("error") or "no code"
            said = described[:300]
            raise LoginFailed(f"server {namespace!r}: the authorization server said {said}")
        tokens = await self._exchange(pending, client, metadata, query["code"])
        store = self.store(str(pending["principal"]))
        issuer = pending.get("configured_issuer")
        login = store.login(
            str(pending["url"]),
            str(pending["client_key"]) or None,
            issuer=issuer if isinstance(issuer, str) else None,
        )
        login.use(str(pending["issuer"]))
        await login.set_client_info(client)
        login.set_metadata(metadata)
        await login.set_tokens(tokens)
        return namespace

    async def _exchange(
        self,
        pending: Mapping[str, object],
        client: OAuthClientInformationFull,
        metadata: LoginMetadata,
        code: str,
    ) -> OAuthToken:
        namespace = pending["namespace"]
        server = metadata.server
        if server is None:
            raise LoginFailed(f"server {namespace!r}: its authorization server has no token URL")
        data = {
            "grant_type": "authorization_code",
            "code": code,
            "redirect_uri": str(pending["redirect_uri"]),
            "client_id": client.client_id,
            "code_verifier": str(pending["verifier"]),
            "resource": str(pending["resource"]),
        }
        if client.client_secret:
            data["client_secret"] = client.client_secret
        try:
            async with httpx2.AsyncClient(timeout=_HTTP_TIMEOUT) as http:
                answer = await http.post(str(server.token_endpoint), data=data)
        except httpx2.HTTPError as exc:
            raise LoginFailed(f"server {namespace!r}: token request failed: {exc!r}") from None
        if answer.status_code != 200:
            said = answer.text[:300]
            raise LoginFailed(f"server {namespace!r}: the token request was refused: {said}")
        try:
            return OAuthToken.model_validate_json(answer.content)
        except ValidationError:
            raise LoginFailed(f"server {namespace!r}: the token answer is malformed") from None

    async def _client(
        self,
        http: httpx2.AsyncClient,
        spec: HttpServer,
        issuer: str,
        metadata: OAuthMetadata,
        redirect: str,
    ) -> OAuthClientInformationFull:
        """Serve's client at ``issuer`` for ``spec``'s server: configured, or registered
        once (again when its redirect URI changed) and kept sealed."""
        oauth = _oauth(spec)
        secret = oauth.secret()
        method = "client_secret_post" if secret else "none"
        if oauth.client_id is not None:
            return OAuthClientInformationFull(
                redirect_uris=[AnyUrl(redirect)],
                client_id=oauth.client_id,
                client_secret=secret,
                token_endpoint_auth_method=method,
                grant_types=["authorization_code", "refresh_token"],
            )
        record = self.store(_SERVE).record("client", spec.url, issuer)
        kept = record.read()
        if kept.get("redirect_uri") == redirect and isinstance(kept.get("client"), dict):
            return OAuthClientInformationFull.model_validate(kept["client"])
        wanted = OAuthClientMetadata(
            redirect_uris=[AnyUrl(redirect)],
            client_name="mcpmount serve",
            grant_types=["authorization_code", "refresh_token"],
            response_types=["code"],
            token_endpoint_auth_method="none",
            scope=oauth.scope(),
        )
        base = f"{urlsplit(issuer).scheme}://{urlsplit(issuer).netloc}"
        request = create_client_registration_request(metadata, wanted, base)
        client = await handle_registration_response(await http.send(request))
        record.replace(
            {"redirect_uri": redirect, "client": client.model_dump(mode="json", exclude_none=True)}
        )
        return client

    def _pending(self, state: str) -> Record:
        return self.store(_SERVE).record("pending", state)


async def _discover(
    http: httpx2.AsyncClient, spec: HttpServer
) -> tuple[ProtectedResourceMetadata | None, str, OAuthMetadata]:
    """The server's resource metadata, its authorization server's issuer and metadata.

    Raises:
        OAuthFlowError: It names another issuer than the configured one, or none answers.
    """
    oauth = _oauth(spec)
    resource = None
    for url in build_protected_resource_metadata_discovery_urls(None, spec.url):
        resource = await handle_protected_resource_response(await http.get(url))
        if resource is not None:
            break
    named = str(resource.authorization_servers[0]) if resource is not None else None
    if oauth.issuer is not None and named is not None and not issuers_match(named, oauth.issuer):
        raise OAuthFlowError(
            f"the server names the authorization server {named}, not the configured issuer "
            f"{oauth.issuer}"
        )
    issuer = oauth.issuer or named
    for url in build_oauth_authorization_server_metadata_discovery_urls(issuer, spec.url):
        found, metadata = await handle_auth_metadata_response(await http.get(url))
        if metadata is not None:
            return resource, str(metadata.issuer), metadata
        if not found:
            break
    raise OAuthFlowError(f"no authorization server metadata found for {issuer or spec.url}")


def _scope(oauth: OAuthSpec, resource: ProtectedResourceMetadata | None) -> str | None:
    if oauth.scope() is not None:
        return oauth.scope()
    if resource is not None and resource.scopes_supported:
        return " ".join(resource.scopes_supported)
    return None


def _oauth(spec: HttpServer) -> OAuthSpec:
    if spec.oauth is None:
        raise ValueError(f"{spec.display_url()} has no oauth table")
    return spec.oauth
