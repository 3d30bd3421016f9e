"""How a url server is authorized with OAuth 2.1: the ``oauth`` key, `OAuthSpec`.

``oauth = true`` is the usual case: the server's 401 names its authorization server, the
client registers itself there (dynamic registration) and ``mcpmount login NS`` runs the
authorization code flow with PKCE in a browser once; the tokens are kept and refreshed.
A table says more: a ``client_id`` registered by hand, a ``client_metadata_url`` (a Client
ID Metadata Document the user hosts, used where the authorization server supports it),
``scopes``, or the ``client_credentials`` grant of a machine-to-machine server.

Under ``serve``, ``credentials = "per_principal"`` gives each principal (each client token) a
login of its own at the server's authorization server instead of the one shared login: its
first call is answered with a URL to log in at, the browser comes back to serve's
``/oauth/callback``, and its tokens are kept encrypted with the key in
``MCPMOUNT_TOKEN_KEY`` (`mcpmount.auth`'s principal logins).
"""

from __future__ import annotations

import base64
import binascii
from typing import Final, Literal, Self
from urllib.parse import urlsplit

from pydantic import BaseModel, Field, model_validator
from pydantic_core import PydanticCustomError

from mcpmount.config._fields import STRICT_DATA, EnvValue, Text

__all__ = ["TOKEN_KEY_ENV", "OAuthSpec", "token_key_problem"]

TOKEN_KEY_ENV: Final = "MCPMOUNT_TOKEN_KEY"
"""The environment variable holding the key principals' tokens are encrypted with: one
Fernet key, or several separated by commas (the first encrypts; each decrypts, so a key can
be rotated)."""

_MAKE_KEY: Final = (
    'python -c "from cryptography.fernet import Fernet; print(Fernet.generate_key().decode())"'
)


class OAuthSpec(BaseModel):
    """The ``oauth`` table of a url server (``oauth = true`` is this table empty)."""

    model_config = STRICT_DATA

    grant: Literal["authorization_code", "client_credentials"] = "authorization_code"
    """``authorization_code``: a person logs in once with ``mcpmount login``;
    ``client_credentials``: the client's own id and secret get tokens, no person involved."""

    client_id: Text | None = None
    """A client registered by hand; without it, the client registers itself dynamically."""

    client_metadata_url: Text | None = None
    """An https URL whose document describes this client (a Client ID Metadata Document):
    the URL is then the client id wherever the authorization server says it supports such
    documents, and the client registers itself only where it does not."""

    client_secret: EnvValue | None = None
    """The registered client's secret (usually ``"${VAR}"``); a secret."""

    scopes: list[Text] = []
    """Scopes to ask for; empty: those the server's metadata names."""

    issuer: Text | None = None
    """The authorization server the client is registered with (its issuer URL); tokens are
    then only asked from that server, whatever the MCP server names. Required with
    ``client_credentials``, so that a server cannot lead the secret elsewhere."""

    callback_port: int = Field(default=0, ge=0, le=65535)
    """The loopback port of the login redirect (``http://127.0.0.1:PORT/callback``): 0 for
    any free one; set it when the client was registered by hand with a fixed redirect URI."""

    credentials: Literal["shared", "per_principal"] = "shared"
    """``shared``: one login for everyone (``mcpmount login``); ``per_principal``: under
    ``serve``, each principal (client token) logs in itself on its first call, through a URL
    it is sent, and its calls carry its own token (kept encrypted with the key in
    ``MCPMOUNT_TOKEN_KEY``). Tools are still listed with the shared login."""

    redirect_uri: Text | None = None
    """``per_principal`` only: serve's ``/oauth/callback`` as the browser reaches it (behind
    a proxy, its public URL); default: the address serve listens on."""

    @model_validator(mode="after")
    def _check_grant(self) -> Self:
        if self.grant == "client_credentials" and (
            self.client_id is None or self.client_secret is None or self.issuer is None
        ):
            raise PydanticCustomError(
                "mcpmount_oauth",
                "the client_credentials grant needs client_id, client_secret and the issuer "
                "of the authorization server that issued them",
            )
        if self.client_metadata_url is not None:
            url = urlsplit(self.client_metadata_url)
            if url.scheme != "https" or url.path in ("", "/") or self.client_id is not None:
                raise PydanticCustomError(
                    "mcpmount_oauth",
                    "client_metadata_url must be an https URL with a path, the document's own "
                    "address, and takes no client_id (the URL is the client id)",
                )
            if self.grant == "client_credentials":
                raise PydanticCustomError(
                    "mcpmount_oauth",
                    "client_metadata_url is for a person's login; client_credentials uses a "
                    "client_id and client_secret",
                )
        if self.client_secret is not None and self.client_id is None:
            raise PydanticCustomError(
                "mcpmount_oauth", "client_secret needs the client_id it belongs to"
            )
        self._check_credentials()
        return self

    def _check_credentials(self) -> None:
        if self.credentials == "shared":
            if self.redirect_uri is not None:
                raise PydanticCustomError(
                    "mcpmount_oauth", 'redirect_uri is for credentials = "per_principal" only'
                )
            return
        if self.grant == "client_credentials":
            raise PydanticCustomError(
                "mcpmount_oauth",
                'credentials = "per_principal" is for people\'s logins: the client_credentials '
                "grant has one identity, the client's",
            )
        if self.redirect_uri is not None and urlsplit(self.redirect_uri).scheme not in (
            "http",
            "https",
        ):
            raise PydanticCustomError(
                "mcpmount_oauth", "redirect_uri must be an http(s) URL (serve's /oauth/callback)"
            )

    def scope(self) -> str | None:
        """Return the scopes as OAuth writes them (space-separated), or None for none."""
        return " ".join(self.scopes) or None

    def client(self) -> str | None:
        """Return what names the client: its ``client_id`` or ``client_metadata_url`` (None:
        a client that registers itself)."""
        return self.client_id or self.client_metadata_url

    def secret(self) -> str | None:
        """Return the plain client secret, for the token request and nothing else."""
        return self.client_secret.get_secret_value() if self.client_secret else None


def token_key_problem(value: str | None) -> str | None:
    """What is wrong with ``value`` as `TOKEN_KEY_ENV`'s value, in a sentence; None if nothing.

    ``mcpmount check`` and serve's start say it, not a principal's first call. Never
    repeats the value.
    """
    what = (
        f'credentials = "per_principal" keeps each principal\'s tokens encrypted with the key '
        f"in the environment variable {TOKEN_KEY_ENV}"
    )
    if not value or not value.strip():
        return f"{what}, which is not set: set it to a Fernet key (make one with {_MAKE_KEY})"
    for key in value.split(","):
        try:
            raw = base64.urlsafe_b64decode(key.strip().encode("ascii"))
        except (binascii.Error, UnicodeEncodeError, ValueError):
            raw = b""
        if len(raw) != 32:
            return (
                f"{what}, which does not hold a Fernet key (32 bytes, url-safe base64; several "
                f"separated by commas): make one with {_MAKE_KEY}"
            )
    return None
