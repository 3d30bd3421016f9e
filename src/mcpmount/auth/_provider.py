"""The SDK's OAuth providers, taught to keep a login across processes.

`mcp.client.auth` runs the protocol: discovery from a 401, registration, the authorization
code grant with PKCE, client credentials, refresh. What it leaves to the host, and this
module adds:

- the expiry and the discovered metadata are kept with the tokens, so a new process knows
  when to refresh and where the token endpoint is without discovering again;
- an access token is refreshed a little before it expires, not after a request failed;
- a refresh holds the login's lock and first re-reads the login, so when another process
  refreshed meanwhile its tokens are used and the spent refresh token is never sent again;
- outside ``mcpmount login`` nobody is waiting at a browser, so a server that wants a login
  fails at once with `LoginRequired`, naming the command that fixes it;
- with a valid token a request goes out without the SDK's lock, which the SDK holds until
  the answer comes (calls to a server that answers with JSON would run one at a time).
"""

from __future__ import annotations

from collections.abc import AsyncGenerator, Awaitable, Callable
from contextlib import AsyncExitStack

import httpx2
from mcp.client.auth import OAuthClientProvider
from mcp.client.auth.extensions.client_credentials import ClientCredentialsOAuthProvider
from mcp.shared.auth import AuthorizationCodeResult, OAuthClientInformationFull, OAuthClientMetadata
from mcp.shared.inbound import MCP_PROTOCOL_VERSION_HEADER
from pydantic import AnyUrl

from mcpmount.auth._required import LoginRequired
from mcpmount.auth._store import Login, LoginMetadata, TokenStore
from mcpmount.config import HttpServer, OAuthSpec

__all__ = ["Persisted", "oauth_for", "provider"]

_EARLY = 30.0
"""Refresh this many seconds before the access token expires (a tenth of its life at most)."""

NOT_INTERACTIVE = "http://127.0.0.1/callback"
"""The redirect URI of a provider that never redirects (only ``mcpmount login`` does)."""


class Persisted(OAuthClientProvider):
    """What mcpmount adds to an SDK provider (see the module docstring)."""

    _login: Login
    _namespace: str
    _interactive: bool
    _configured_client: OAuthClientInformationFull | None
    _refused: bool = False
    _spec: HttpServer | None = None
    _kept: str | None = None

    def keep(
        self,
        login: Login,
        namespace: str,
        *,
        interactive: bool,
        configured_client: OAuthClientInformationFull | None,
    ) -> None:
        self._login = login
        self._namespace = namespace
        self._interactive = interactive
        self._configured_client = configured_client

    async def _initialize(self) -> None:
        await super()._initialize()
        if self._configured_client is not None:
            self.context.client_info = self._configured_client
        self._reload_expiry()
        kept = self._login.metadata()
        context = self.context
        context.protected_resource_metadata = context.protected_resource_metadata or kept.resource
        context.auth_server_url = context.auth_server_url or kept.authorization_server
        context.oauth_metadata = context.oauth_metadata or kept.server

    def _reload_expiry(self) -> None:
        expires_at = self._login.expires_at()
        tokens = self.context.current_tokens
        if expires_at is None or tokens is None:
            self.context.token_expiry_time = expires_at
            return
        life = float(tokens.expires_in) if tokens.expires_in else _EARLY * 10
        self.context.token_expiry_time = expires_at - min(_EARLY, life / 10)

    async def _handle_token_response(self, response: httpx2.Response) -> None:
        await super()._handle_token_response(response)
        self._reload_expiry()
        self._refused = False
        context = self.context
        self._login.set_metadata(
            LoginMetadata(
                resource=context.protected_resource_metadata,
                authorization_server=context.auth_server_url,
                server=context.oauth_metadata,
            )
        )

    async def _handle_refresh_response(self, response: httpx2.Response) -> bool:
        refreshed = await super()._handle_refresh_response(response)
        if refreshed:
            self._reload_expiry()
        else:
            self._refused = True
        return refreshed

    def keep_secret(self, spec: HttpServer) -> Persisted:
        """Add each token it sends to ``spec``'s secrets: hidden in every message, and
        guarded in calls to other servers. Returns itself."""
        self._spec = spec
        return self

    def _add_auth_header(self, request: httpx2.Request) -> None:
        super()._add_auth_header(request)
        tokens = self.context.current_tokens
        if self._spec is None or tokens is None or tokens.access_token == self._kept:
            return
        self._kept = tokens.access_token
        fresh = [token for token in (tokens.access_token, tokens.refresh_token) if token]
        self._spec.with_expanded([*self._spec.secret_values(), *fresh])

    def _stale(self) -> bool:
        return not self.context.is_token_valid() and self.context.can_refresh_token()

    async def _auth_flow(
        self, request: httpx2.Request
    ) -> AsyncGenerator[httpx2.Request, httpx2.Response]:
        async with AsyncExitStack() as held:
            async with self.context.lock:
                if not self._initialized:
                    await self._initialize()
                if self._stale():
                    await held.enter_async_context(self._login.locked())
                    # Another process may have refreshed while this one waited for the lock.
                    self.context.current_tokens = await self._login.get_tokens()
                    self._reload_expiry()
                refreshing = self._stale()
                ready = not refreshing and self.context.is_token_valid()
            if not refreshing:
                await held.aclose()
            if ready:
                # The SDK's flow holds its lock until the answer comes, so calls to a server
                # that answers a POST only when the call is done would run one at a time.
                # With a valid token there is nothing to hold it for.
                self.context.protocol_version = request.headers.get(MCP_PROTOCOL_VERSION_HEADER)
                self._add_auth_header(request)
                response = yield request
                if not _challenged(response):
                    return
                if self._wants_person(response):
                    raise LoginRequired(self._why())
            flow = super()._auth_flow(request)
            try:
                outgoing = await flow.__anext__()
                while True:
                    if outgoing is request:
                        await held.aclose()  # any refresh is done and kept
                    response = yield outgoing
                    if outgoing is request and self._wants_person(response):
                        raise LoginRequired(self._why())
                    outgoing = await flow.asend(response)
            except StopAsyncIteration:
                return
            finally:
                await flow.aclose()

    def _wants_person(self, response: httpx2.Response) -> bool:
        """Whether answering ``response`` would need a browser that nobody is watching."""
        if self._interactive or isinstance(self, ClientCredentialsOAuthProvider):
            return False
        return _challenged(response)

    def _why(self) -> str:
        fix = f"run `mcpmount login {self._namespace}`"
        if self._refused:
            return f"the authorization server refused the stored refresh token; {fix}"
        if self.context.current_tokens is None:
            return f"the server needs an OAuth login and none is stored; {fix}"
        return f"the server refused the stored OAuth token; {fix}"


def _challenged(response: httpx2.Response) -> bool:
    """Whether ``response`` asks for (other) authorization: a 401, or a 403 for scope."""
    insufficient = response.status_code == 403 and "insufficient_scope" in response.headers.get(
        "www-authenticate", ""
    )
    return response.status_code == 401 or insufficient


class CodeGrant(Persisted):
    """The authorization code grant with PKCE (a person logs in with ``mcpmount login``)."""


class CredentialsGrant(Persisted, ClientCredentialsOAuthProvider):
    """The client credentials grant: the client's id and secret get tokens by themselves."""


def provider(
    server_url: str,
    oauth: OAuthSpec,
    login: Login,
    namespace: str,
    *,
    redirect_uri: str | None = None,
    redirect_handler: Callable[[str], Awaitable[None]] | None = None,
    callback_handler: Callable[[], Awaitable[AuthorizationCodeResult]] | None = None,
) -> Persisted:
    """Return the provider for a server's ``oauth`` table, its login kept in ``login``.

    Without handlers it never redirects: a server that wants a person's login fails with
    `LoginRequired`. ``mcpmount login`` passes them, with its loopback ``redirect_uri``.
    """
    interactive = redirect_handler is not None
    if oauth.grant == "client_credentials":
        # OAuthSpec makes sure the client_credentials grant has all three.
        assert oauth.client_id is not None
        assert oauth.client_secret is not None
        machine = CredentialsGrant(
            server_url,
            login,
            client_id=oauth.client_id,
            client_secret=oauth.client_secret.get_secret_value(),
            token_endpoint_auth_method="client_secret_post",
            scope=oauth.scope(),
            issuer=oauth.issuer,
        )
        machine.keep(login, namespace, interactive=interactive, configured_client=None)
        return machine
    redirect = AnyUrl(redirect_uri or NOT_INTERACTIVE)
    secret = oauth.secret()
    method = "client_secret_post" if secret else "none"
    metadata = OAuthClientMetadata(
        redirect_uris=[redirect],
        client_name="mcpmount",
        grant_types=["authorization_code", "refresh_token"],
        response_types=["code"],
        token_endpoint_auth_method=method,
        scope=oauth.scope(),
    )
    configured = None
    if oauth.client_id is not None:
        configured = OAuthClientInformationFull(
            redirect_uris=[redirect],
            client_id=oauth.client_id,
            client_secret=secret,
            token_endpoint_auth_method=method,
            grant_types=["authorization_code", "refresh_token"],
            issuer=oauth.issuer,
        )
    person = CodeGrant(
        server_url,
        metadata,
        login,
        redirect_handler=redirect_handler,
        callback_handler=callback_handler,
    )
    person.keep(login, namespace, interactive=interactive, configured_client=configured)
    return person


def oauth_for(spec: HttpServer, namespace: str, store: TokenStore) -> Persisted | None:
    """Return the OAuth of ``spec``'s HTTP client (None without an ``oauth`` key).

    It never redirects to a browser: a server that wants a person's login fails its
    request with `LoginRequired`.
    """
    if spec.oauth is None:
        return None
    login = store.login(spec.url, spec.oauth.client_id)
    return provider(spec.url, spec.oauth, login, namespace).keep_secret(spec)
