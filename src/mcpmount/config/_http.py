"""A server reached at a URL: `HttpServer`."""

from __future__ import annotations

import ipaddress
from collections.abc import Iterable
from typing import Literal, LiteralString
from urllib.parse import urlsplit

from pydantic import ValidationInfo, field_validator
from pydantic_core import PydanticCustomError

from mcpmount.config._fields import Command, HeaderName, HeaderValue
from mcpmount.config._oauth import OAuthSpec
from mcpmount.config._secrecy import url_secrets
from mcpmount.config._server import ServerBase
from mcpmount.config._urls import redacted_url


def _is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


class HttpServer(ServerBase):
    """A server reached over HTTP: streamable HTTP, the legacy HTTP+SSE transport, or either."""

    transport: Literal["http", "sse", "auto"] = "http"
    """How the URL is reached: ``http`` (streamable HTTP; implied by ``url``), ``sse`` (the
    legacy HTTP+SSE transport: a GET stream whose first event names where to POST), or
    ``auto`` (streamable HTTP, or SSE when the server answers a POST of ``initialize`` with
    a 4xx as an SSE-only server does)."""

    # Declared before ``url`` so that the url check can see it.
    allow_insecure: bool = False
    """Allow plain ``http://`` to a host that is not loopback."""

    url: str
    """The MCP endpoint: https, or http to a loopback host (or with ``allow_insecure``)."""

    headers: dict[HeaderName, HeaderValue] = {}
    """Headers sent with every request; the values are secrets."""

    headers_command: Command | None = None
    """A program and its arguments, never run through a shell (a single string is refused),
    that prints a JSON object of header names to values: run before the first request and
    again after an HTTP 401, with the user's environment, for at most 10 seconds. Its
    headers override same-named ``headers``; its values are secrets."""

    oauth: OAuthSpec | None = None
    """OAuth 2.1 for a server that asks for it: ``true``, or a table (`OAuthSpec`)."""

    get_stream: bool = True
    """Whether streamable HTTP opens its standalone GET stream, on which a server may send
    requests and notifications outside any call; false for a server that never serves it."""

    @field_validator("get_stream")
    @classmethod
    def _check_get_stream(cls, value: bool, info: ValidationInfo) -> bool:
        if not value and info.data.get("transport") == "sse":
            raise PydanticCustomError(
                "mcpmount_get_stream",
                "applies to streamable HTTP only; an SSE server's one stream is its GET",
            )
        return value

    @field_validator("oauth", mode="before")
    @classmethod
    def _oauth_flag(cls, value: object) -> object:
        if value is True:
            return {}
        return None if value is False else value

    @field_validator("oauth")
    @classmethod
    def _one_kind_of_auth(cls, value: OAuthSpec | None, info: ValidationInfo) -> OAuthSpec | None:
        if value is not None and info.data.get("headers_command") is not None:
            raise PydanticCustomError(
                "mcpmount_auth",
                "give either oauth or headers_command: both would set the Authorization header",
            )
        return value

    @field_validator("url")
    @classmethod
    def _check_url(cls, url: str, info: ValidationInfo) -> str:
        def problem(message: LiteralString) -> PydanticCustomError:
            return PydanticCustomError("mcpmount_url", message)

        if any(ch.isspace() or not ch.isprintable() for ch in url):
            raise problem("must not contain whitespace or control characters")
        try:
            parts = urlsplit(url)
            host = parts.hostname
            _ = parts.port  # raises ValueError on a bad port
        except ValueError:
            raise problem("is not a valid URL") from None
        scheme = parts.scheme.lower()
        if scheme not in ("http", "https"):
            raise problem("must be an http:// or https:// URL")
        if not host:
            raise problem("must include a host")
        insecure_ok = info.data.get("allow_insecure", False) is True
        if scheme == "http" and not insecure_ok and not _is_loopback(host):
            raise problem(
                "must use https unless the host is loopback (127.0.0.0/8, localhost, ::1); "
                "set allow_insecure = true to allow plain http"
            )
        return url

    def header_values(self) -> dict[str, str]:
        """Return ``headers`` with the plain values, for the HTTP client and nothing else."""
        return {name: value.get_secret_value() for name, value in self.headers.items()}

    def secret_values(self) -> list[str]:
        """Return the values `redact` hides: the secret header values (`named_secrets`),
        the URL's userinfo and credential-like query values, the OAuth client secret."""
        values = self.named_secrets(self.header_values().items())
        values += url_secrets(self.url)
        if self.oauth and (secret := self.oauth.secret()):
            values.append(secret)
        return values + super().secret_values()

    def display_url(self) -> str:
        """Return the URL for messages: `redacted_url` shows it, and every secret value of
        this server (the userinfo's, the query's, an expanded ``${VAR}``) is ``***``."""
        return self.redact(redacted_url(self.url))

    def __repr_args__(self) -> Iterable[tuple[str | None, object]]:
        # The URL may carry a token in its userinfo or query: show the display form only;
        # an argument of ``headers_command`` may hold a value expanded from a secret.
        for name, value in super().__repr_args__():
            if name == "url":
                yield name, self.display_url()
            elif name == "headers_command" and self.headers_command is not None:
                yield name, [self.redact(arg) for arg in self.headers_command]
            else:
                yield name, value
