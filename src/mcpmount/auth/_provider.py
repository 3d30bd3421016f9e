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
  the answer comes (calls to a server that answers with JSON would run one at a time);
- the login is kept under the issuer discovery found (`Login.use`), and an ``issuer`` the
  config names is the only one a login or token request goes to;
- a server that asks for more scope mid-session (403 ``insufficient_scope``) gets it: the
  client credentials grant asks for the union at once (the SDK's step-up); a person's login
  keeps what was asked, says which ``mcpmount login`` grants it, and that login asks for the
  union of what was granted and what was asked.
"""

from __future__ import annotations

import json
from collections.abc import AsyncGenerator, Awaitable, Callable
from contextlib import AsyncExitStack

import httpx2
from mcp.client.auth import OAuthClientProvider, OAuthFlowError
from mcp.client.auth.extensions.client_credentials import ClientCredentialsOAuthProvider
from mcp.client.auth.utils import extract_field_from_www_auth, issuers_match, union_scopes
from mcp.shared.auth import AuthorizationCodeResult, OAuthClientInformationFull, OAuthClientMetadata
from mcp.shared.inbound import MCP_PROTOCOL_VERSION_HEADER
from mcp_types import INTERNAL_ERROR
from pydantic import AnyUrl, PrivateAttr

from mcpmount.auth._store import Login, LoginMetadata, TokenStore
from mcpmount.config import HttpServer, OAuthSpec
from mcpmount.errors import LoginRequired

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
    _issuer: str | None = None
    _refused: bool = False
    _spec: HttpServer | None = None
    _kept: str | None = None
    _principal: bool = False

    def keep(
        self,
        login: Login,
        namespace: str,
        *,
        interactive: bool,
        configured_client: OAuthClientInformationFull | None,
        issuer: str | None,
    ) -> None:
        self._login = login
        self._namespace = namespace
        self._interactive = interactive
        self._configured_client = configured_client
        self._issuer = issuer

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

    def _expected_issuer(self) -> str:
        # The SDK asks once discovery has named the authorization server, before it checks
        # the stored credentials against it: the moment to bring out the login kept there.
        issuer = super()._expected_issuer()
        if self._issuer is not None and not issuers_match(issuer, self._issuer):
            raise OAuthFlowError(
                f"the server names the authorization server {issuer}, not the configured "
                f"issuer {self._issuer}; if the server moved, change `issuer` in its oauth table"
            )
        kept = self._login.issuer
        if self._configured_client is not None and kept and not issuers_match(issuer, kept):
            # A client registered by hand belongs to the server it was registered with: its
            # id is never shown to another (SEP-2352).
            raise OAuthFlowError(
                f"the server now names the authorization server {issuer}, but client_id "
                f"{self._configured_client.client_id!r} was used with {kept}; register a "
                "client there and set its client_id (and `issuer`), or remove client_id to "
                "let mcpmount register itself"
            )
        if self._login.use(issuer):
            context = self.context
            context.current_tokens = self._login.tokens()
            if not isinstance(self, ClientCredentialsOAuthProvider):
                context.client_info = self._configured_client or self._login.client()
            context.oauth_metadata = None  # the old server's; discovery follows
            self._reload_expiry()
        return issuer

    def check_issuer(self, issuer: str | None) -> None:
        """Refuse an authorization response from another server than the one asked (RFC 9207).

        The SDK checks the ``iss`` of a response with a code too; this also checks one with
        an error, and says what happened and what to do.

        Raises:
            OAuthFlowError: ``issuer`` is not the authorization server's, or is missing where
                that server said it sends one.
        """
        metadata = self.context.oauth_metadata
        expected = str(metadata.issuer) if metadata else None
        promised = metadata is not None and metadata.authorization_response_iss_parameter_supported
        if issuer is None and not promised:
            return
        if issuer != expected:
            came = f"issuer {issuer!r}" if issuer else "no issuer"
            raise OAuthFlowError(
                f"the authorization response names {came}, not {expected!r}, the authorization "
                "server this login was sent to, so it was refused (RFC 9207: another server "
                "answered, or something between changed the answer); log in again, and if it "
                "happens again, check which authorization server the server names"
            )

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

    def of_principal(self) -> Persisted:
        """Make it one principal's login under serve (``credentials = "per_principal"``): a
        refused login is forgotten, so that the principal's next call logs in again, and the
        errors say so. Returns itself."""
        self._principal = True
        return self

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
                    self._refuse(response)
                    return
            flow = super()._auth_flow(request)
            try:
                outgoing = await flow.__anext__()
                while True:
                    if outgoing is request:
                        await held.aclose()  # any refresh is done and kept
                    response = yield outgoing
                    if outgoing is request and self._wants_person(response):
                        self._refuse(response)
                        return
                    outgoing = await flow.asend(response)
            except StopAsyncIteration:
                return
            finally:
                await flow.aclose()

    def _refuse(self, response: httpx2.Response) -> None:
        """Fail for want of a person: the session, or (more scope) only this request.

        Raises:
            LoginRequired: The server wants a login at all (a 401).
        """
        why = self._why(response)
        if response.status_code != 403:
            if self._principal:
                self._login.forget_tokens()
            raise LoginRequired(why)
        # Only this call needs more scope; the others still work, so the session goes on
        # and the call is answered with a JSON-RPC error saying why, which the SDK relays.
        error = {"code": INTERNAL_ERROR, "message": why}
        response.headers["content-type"] = "application/json"
        response._content = json.dumps({"jsonrpc": "2.0", "id": None, "error": error}).encode()  # pyright: ignore[reportPrivateUsage]

    def _wants_person(self, response: httpx2.Response) -> bool:
        """Whether answering ``response`` would need a browser that nobody is watching."""
        if self._interactive or isinstance(self, ClientCredentialsOAuthProvider):
            return False
        return _challenged(response)

    def _why(self, response: httpx2.Response) -> str:
        fix = f"run `mcpmount login {self._namespace}`"
        if self._principal:
            fix = "call again to log in as yourself"
        asked = extract_field_from_www_auth(response, "scope")
        if response.status_code == 403 and asked:
            tokens = self.context.current_tokens
            self._login.want_scope(union_scopes(tokens.scope if tokens else None, asked))
            return f"the server asks for scope {asked!r}, more than the stored login grants; {fix}"
        if self._refused:
            return f"the authorization server refused the stored refresh token; {fix}"
        if self.context.current_tokens is None:
            return f"the server needs an OAuth login and none is stored; {fix}"
        return f"the server refused the stored OAuth token; {fix}"


class AskingMetadata(OAuthClientMetadata):
    """Client metadata whose scope always holds what the server asked for mid-session.

    The SDK sets the scope from the server's challenge just before it registers the client
    and sends the person to log in; both must ask for the union (see `Persisted._why`).
    """

    _also: str | None = PrivateAttr(default=None)

    def ask_also(self, scope: str | None) -> None:
        self._also = scope
        self.scope = self.scope  # the union, from now on

    def __setattr__(self, name: str, value: object) -> None:
        if name == "scope" and (value is None or isinstance(value, str)):
            value = union_scopes(value, self._also)
        super().__setattr__(name, value)


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
        machine.keep(
            login, namespace, interactive=interactive, configured_client=None, issuer=oauth.issuer
        )
        return machine
    redirect = AnyUrl(redirect_uri or NOT_INTERACTIVE)
    secret = oauth.secret()
    method = "client_secret_post" if secret else "none"
    metadata = AskingMetadata(
        redirect_uris=[redirect],
        client_name="mcpmount",
        grant_types=["authorization_code", "refresh_token"],
        response_types=["code"],
        token_endpoint_auth_method=method,
        scope=oauth.scope(),
    )
    metadata.ask_also(login.wanted_scope())
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
        client_metadata_url=oauth.client_metadata_url,
    )
    person.keep(
        login, namespace, interactive=interactive, configured_client=configured, issuer=oauth.issuer
    )
    return person


def oauth_for(spec: HttpServer, namespace: str, store: TokenStore) -> Persisted | None:
    """Return the OAuth of ``spec``'s HTTP client (None without an ``oauth`` key).

    It never redirects to a browser: a server that wants a person's login fails its
    request with `LoginRequired`.
    """
    if spec.oauth is None:
        return None
    login = store.login(spec.url, spec.oauth.client(), issuer=spec.oauth.issuer)
    return provider(spec.url, spec.oauth, login, namespace).keep_secret(spec)
