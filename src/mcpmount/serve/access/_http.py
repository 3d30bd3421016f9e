"""Who may use HTTP ``serve``: bearer tokens, the hosts clients may name, and exposure.

`HttpSecurity` turns the ``[serve]`` settings (with the ``serve`` command's flags merged in,
`mcpmount.config.RegistryConfig.with_serve`) into the SDK's own HTTP protections, passed to
``Server.streamable_http_app`` (mcp/server/lowlevel/server.py):

- tokens: the SDK's bearer middleware with our verifier (`mcpmount.serve.access._tokens`).
  ``/mcp`` without a valid token is answered 401 with ``WWW-Authenticate: Bearer
  error="invalid_token"`` (plus ``resource_metadata`` with OAuth) before any MCP message
  is read, so no upstream server is reached; a token lacking a required scope gets 403.
  Other routes (the protected resource metadata, health) need none.
- OAuth: the RFC 9728 protected resource metadata at
  ``/.well-known/oauth-protected-resource<resource path>`` names the issuer.
- allowed hosts: the SDK's DNS-rebinding check (Host and Origin), loopback names always
  allowed; without allowed hosts the SDK's default stands (on for a loopback bind).
- exposure: `check_exposure` refuses a bind beyond loopback without authentication.
- the metrics' port and token: carried in the settings, used by `mcpmount.serve.ops`.
"""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Final, TypedDict

from mcp.server.auth.provider import TokenVerifier
from mcp.server.auth.settings import AuthSettings
from mcp.server.transport_security import TransportSecuritySettings
from pydantic import ValidationError

from mcpmount.config import ServeSettings, ServeToken
from mcpmount.errors import ConfigError
from mcpmount.serve.access._tokens import Grant, JwtTokens, StaticTokens, read_tokens_file

__all__ = ["AppSecurity", "HttpSecurity", "app_security", "check_exposure"]

_LOOPBACK_NAMES: Final = ("127.0.0.1", "localhost", "[::1]")

_PORT: Final = re.compile(r":[0-9]+$")

_NO_ISSUER: Final = "http://127.0.0.1/"
"""The SDK's `AuthSettings` requires an issuer; with static tokens only there is none, and
without a resource URL (and no authorization server of ours) it is never used or shown."""


class AppSecurity(TypedDict):
    """Keyword arguments of ``Server.streamable_http_app`` that protect it."""

    transport_security: TransportSecuritySettings | None
    auth: AuthSettings | None
    token_verifier: TokenVerifier | None


@dataclass(frozen=True, slots=True)
class HttpSecurity:
    """What protects HTTP ``serve``; build it with `HttpSecurity.build`."""

    settings: ServeSettings
    """The ``[serve]`` settings (the file's, with the flags merged in)."""

    tokens: Mapping[str, ServeToken]
    """Every static token: the table's and the tokens file's."""

    @classmethod
    def build(cls, settings: ServeSettings) -> HttpSecurity:
        """Make ``settings`` (the ``[serve]`` table, with whatever was given beside it
        merged in: `RegistryConfig.with_serve`) ready to serve: read the tokens file, and
        check the OAuth URLs now rather than once every server is mounted.

        Raises:
            ConfigError: The tokens file cannot be read or has a malformed line; the OAuth
                issuer or resource is no URL.
        """
        every = dict(settings.tokens)
        if settings.tokens_file is not None:
            every |= read_tokens_file(Path(settings.tokens_file))
        security = cls(settings, every)
        try:  # refused now, not when the app is built after every server mounted
            security._auth_settings()
        except ValidationError:
            problem = "oauth: the issuer and the resource must be http(s) URLs"
            raise ConfigError("serve", [problem]) from None
        return security

    @property
    def authenticated(self) -> bool:
        """Whether clients must present a token."""
        return self.settings.authenticated

    def app_options(self, host: str) -> AppSecurity:
        """The protections of an app bound to ``host``."""
        return AppSecurity(
            transport_security=self._transport_security(host),
            auth=self._auth_settings() if self.authenticated else None,
            token_verifier=_Verifier(self) if self.authenticated else None,
        )

    def _auth_settings(self) -> AuthSettings:
        oauth = self.settings.oauth
        if oauth is None:
            return AuthSettings.model_validate(
                {"issuer_url": _NO_ISSUER, "resource_server_url": None}
            )
        # From strings: AuthSettings keeps a path-less issuer without a trailing slash, as
        # clients compare it with the issuer's metadata (RFC 8414 §3.3).
        return AuthSettings.model_validate(
            {
                "issuer_url": oauth.issuer,
                "resource_server_url": oauth.resource,
                "required_scopes": oauth.scopes or None,
                # JwtTokens checks the audience itself.
                "validate_token_resource": False,
            }
        )

    def _transport_security(self, host: str) -> TransportSecuritySettings | None:
        if not self.settings.allowed_hosts:
            return None  # the SDK's default: the check is on for a loopback bind
        hosts: list[str] = []
        origins: list[str] = []
        for name in (*_LOOPBACK_NAMES, *self.settings.allowed_hosts):
            with_port = _has_port(name)
            hosts += [name] if with_port else [name, f"{name}:*"]
            for scheme in ("http", "https"):
                origins += [f"{scheme}://{name}"] + ([] if with_port else [f"{scheme}://{name}:*"])
        return TransportSecuritySettings(
            enable_dns_rebinding_protection=True, allowed_hosts=hosts, allowed_origins=origins
        )


def app_security(security: HttpSecurity | None, host: str) -> AppSecurity:
    """The keyword arguments that protect an app bound to ``host``; none without
    ``security`` (the SDK's defaults)."""
    if security is None:
        return AppSecurity(transport_security=None, auth=None, token_verifier=None)
    return security.app_options(host)


class _Verifier:
    """Static tokens first, then JWTs (with OAuth)."""

    def __init__(self, security: HttpSecurity) -> None:
        oauth = security.settings.oauth
        self._static = StaticTokens(security.tokens, list(oauth.scopes) if oauth else [])
        self._jwt = JwtTokens(oauth, security.settings.redact) if oauth is not None else None

    async def verify_token(self, token: str) -> Grant | None:
        if self._static and (grant := await self._static.verify_token(token)) is not None:
            return grant
        if self._jwt is not None:
            return await self._jwt.verify_token(token)
        return None


def _has_port(name: str) -> bool:
    """Whether a Host value names a port (``h:8443``, ``[::1]:8443``; not a bare ``::1``)."""
    return _PORT.search(name) is not None and (name.startswith("[") or name.count(":") == 1)


def is_loopback(host: str) -> bool:
    """Whether ``host`` (an address to bind) is reachable from this machine only."""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def check_exposure(host: str, security: HttpSecurity) -> None:
    """Refuse to serve beyond loopback with no authentication, unless explicitly allowed.

    Raises:
        ConfigError: ``host`` is not loopback, no token or OAuth is configured, and
            unauthenticated serving was not allowed.
    """
    if is_loopback(host) or security.authenticated or security.settings.allow_unauthenticated:
        return
    raise ConfigError(
        "serve",
        [
            f"refusing to serve HTTP on {host} without authentication: anyone who reaches "
            "the port would use every mounted server's credentials. Give tokens "
            "(--token-env, --tokens-file, [serve.tokens]) or OAuth ([serve.oauth], "
            "--oauth-*), bind 127.0.0.1, or pass --allow-unauthenticated "
            "([serve] allow_unauthenticated = true)"
        ],
    )
