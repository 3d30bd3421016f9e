"""`PrincipalCredentials`: serve's side of ``credentials = "per_principal"``.

Before a principal's call reaches a per-principal server, `PrincipalCredentials.ensure`
makes sure the principal has logged in there. If not, it starts the login
(`mcpmount.auth.PrincipalLogins`) and sends the client its URL as a URL-mode elicitation:

- handshake era (2025-11-25): the call is answered with the URL elicitation required
  error (-32042) carrying it; the client opens the URL and, once back, calls again;
- 2026-07-28 era, where that error is retired: the call's ``InputRequiredResult`` carries
  an ``elicitation/create`` request in URL mode (the relay's rounds); when the client
  answers it (accept: the person went to the URL), the call waits for the login to be
  finished and goes on;
- a client that offers no URL-mode elicitation: an error whose message holds the URL.

The browser comes back to ``/oauth/callback`` (`route`), served beside ``/mcp`` without a
token, which finishes the login of the one principal its ``state`` names. Then
`connection_auth` gives each principal's upstream session that principal's tokens, and
no other's: a principal without a login has no session to call through.

The principal without a token (stdio, HTTP without authentication) is the operator: its
calls, and every server's listing, go through the shared login (``mcpmount login``).
"""

from __future__ import annotations

import html
import logging
import os
import secrets
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Final

import httpx2
import mcp_types
from mcp import MCPError
from mcp.shared.exceptions import UrlElicitationRequiredError
from mcp_types.version import MODERN_PROTOCOL_VERSIONS
from starlette.requests import Request
from starlette.responses import HTMLResponse
from starlette.routing import Route

from mcpmount.auth import (
    CALLBACK_PATH,
    LoginFailed,
    PrincipalLogins,
    Sealer,
    TokenStore,
)
from mcpmount.config import (
    TOKEN_KEY_ENV,
    HttpServer,
    RegistryConfig,
    ServerSpec,
    token_key_problem,
)
from mcpmount.errors import ConfigError
from mcpmount.serve.access import Principal
from mcpmount.serve.relay import Downstream
from mcpmount.upstream import ClientKey

__all__ = ["PrincipalCredentials", "check_token_key", "per_principal"]

logger = logging.getLogger(__name__)

_PAGE: Final = "<!doctype html><meta charset=utf-8><title>mcpmount</title><p>{message}</p>"


def check_token_key(config: RegistryConfig) -> None:
    """Refuse ``config`` if a server has per-principal credentials and ``MCPMOUNT_TOKEN_KEY``
    holds no key (``mcpmount check`` and serve's start).

    Raises:
        ConfigError: Naming each such server, the variable and how to make a key.
    """
    named = [ns for ns, spec in config.servers.items() if per_principal(spec)]
    if named and (problem := token_key_problem(os.environ.get(TOKEN_KEY_ENV))) is not None:
        where = str(config.path or "config")
        raise ConfigError(where, [f"servers.{ns}.oauth.credentials: {problem}" for ns in named])


def per_principal(spec: ServerSpec) -> bool:
    """Whether ``spec`` is a url server whose calls carry each principal's own login."""
    return (
        isinstance(spec, HttpServer)
        and spec.oauth is not None
        and spec.oauth.credentials == "per_principal"
    )


class PrincipalCredentials:
    """Each principal's logins to the per-principal servers (see the module docstring).

    Args:
        logins: Where the logins are run and kept.
        servers: The servers of the config being served now (a reload changes them).
    """

    def __init__(
        self, logins: PrincipalLogins, servers: Callable[[], Mapping[str, ServerSpec]]
    ) -> None:
        self.logins = logins
        self._servers = servers

    @classmethod
    def configured(
        cls,
        config: RegistryConfig,
        servers: Callable[[], Mapping[str, ServerSpec]],
        *,
        shared_state: str | None = None,
    ) -> PrincipalCredentials:
        """The credentials of ``config``'s per-principal servers, sealed with the key in
        ``MCPMOUNT_TOKEN_KEY``; in ``shared_state``'s Redis when given.

        Raises:
            ConfigError: The key is missing or malformed (the message says what to set).
        """
        check_token_key(config)
        sealer = Sealer.from_environment()
        directory = Path(TokenStore.of(config.settings).directory) / "principals"
        return cls(PrincipalLogins(sealer, directory, redis_url=shared_state), servers)

    async def aclose(self) -> None:
        """Let go of the Redis client of the shared logins, if there is one."""
        self.logins.close()

    def announcing(self, on_ready: Callable[[str], None] | None) -> Callable[[str], None]:
        """``on_ready`` of the MCP URL, after taking the callback's address from it."""

        def ready(url: str) -> None:
            self.logins.callback_url = url.removesuffix("/mcp") + CALLBACK_PATH
            if on_ready is not None:
                on_ready(url)

        return ready

    def _spec(self, namespace: str | None) -> HttpServer | None:
        spec = self._servers().get(namespace) if namespace is not None else None
        return spec if isinstance(spec, HttpServer) and per_principal(spec) else None

    def connection_auth(
        self, namespace: str, spec: HttpServer, key: ClientKey
    ) -> httpx2.Auth | None:
        """The auth of ``key``'s upstream session with ``spec``'s server: its principal's own
        tokens (None: the spec's own auth, for the operator and the other servers)."""
        if not key.principal or not per_principal(spec):
            return None
        return self.logins.auth(namespace, spec, key.principal)

    async def ensure(
        self, principal: Principal, namespace: str | None, downstream: Downstream
    ) -> None:
        """Make sure ``principal`` has logged in to ``namespace``'s server before its call
        goes there, asking its client to log in if not (see the module docstring).

        Raises:
            MCPError: The principal must log in first (-32042 in the handshake era), it
                declined, or did not finish in time.
        """
        spec = self._spec(namespace)
        if spec is None or not principal.identity or namespace is None:
            return
        who = principal.identity
        if self.logins.logged_in(who, spec):
            return
        try:
            url = await self.logins.start(who, namespace, spec)
        except LoginFailed as exc:
            raise MCPError(mcp_types.INTERNAL_ERROR, str(exc)) from None
        message = (
            f"{namespace} acts as you: log in to {spec.display_url()} with your own account "
            "to use its tools"
        )
        elicitation = downstream.capabilities.elicitation
        offers_url = elicitation is not None and elicitation.url is not None
        if not offers_url:
            raise MCPError(
                mcp_types.INVALID_REQUEST,
                f"{message}: open {url} in a browser, then call again",
            )
        if downstream.ctx.protocol_version not in MODERN_PROTOCOL_VERSIONS:
            params = mcp_types.ElicitRequestURLParams(
                message=message, url=url, elicitation_id=secrets.token_hex(8)
            )
            raise UrlElicitationRequiredError([params], message=f"{message}, then call again")
        answer = await downstream.ask(
            mcp_types.ElicitRequest(
                params=mcp_types.ElicitRequestURLParams(message=message, url=url)
            )
        )
        if not isinstance(answer, mcp_types.ElicitResult) or answer.action != "accept":
            said = answer.action if isinstance(answer, mcp_types.ElicitResult) else "no answer"
            raise MCPError(
                mcp_types.INVALID_REQUEST,
                f"{namespace}: the login was not done ({said}); the call was not made",
            )
        if not await self.logins.wait(who, spec, downstream.timeout):
            raise MCPError(
                mcp_types.REQUEST_TIMEOUT,
                f"{namespace}: the login was not finished within {downstream.timeout:g} s; "
                "call again for a new one",
            )

    def route(self) -> Route:
        """``GET /oauth/callback``: where the browser comes back from a login."""

        async def callback(request: Request) -> HTMLResponse:
            try:
                namespace = await self.logins.finish(dict(request.query_params))
            except LoginFailed as exc:
                logger.info("a login's callback was refused: %s", exc)
                return _page(400, f"The login did not succeed: {exc}")
            return _page(200, f"Logged in to {namespace}. Go back to your client.")

        return Route(CALLBACK_PATH, callback, methods=["GET"])


def _page(status: int, message: str) -> HTMLResponse:
    body = _PAGE.format(message=html.escape(message))
    return HTMLResponse(body, status_code=status, headers={"Cache-Control": "no-store"})
