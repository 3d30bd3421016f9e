"""URLs as messages show them: `redacted_url`, the one redaction of every URL mcpmount prints.

A config's URLs carry credentials in two places: the userinfo (``redis://user:pw@host``,
``https://token@host``) and the query (``redis://host/0?password=pw``, which redis-py
reads as the password; ``https://host/mcp?api_key=k``). Both are hidden, the query's
values by their key: a key that looks like a credential keeps its name, so a reader can
tell which one is wrong, and its value becomes ``***``.
"""

from __future__ import annotations

from typing import Final
from urllib.parse import unquote_plus

__all__ = ["redacted_url"]

_HIDDEN: Final = "***"

_CREDENTIAL_WORDS: Final = (
    "pass",  # password, passwd, passphrase
    "pwd",
    "token",  # token, access_token, id_token
    "secret",  # secret, client_secret
    "key",  # key, api_key, apikey, x-api-key
    "sig",  # sig, signature, x-amz-signature
    "auth",  # auth, authorization
    "cred",  # credential, credentials
    "session",
    "cookie",
    "jwt",
    "bearer",
    "private",
)
"""A query key holding one of these (in any case) names a credential. A harmless key that
matches too (``author``) only has its value hidden."""


def _is_credential_key(key: str) -> bool:
    """Return whether a query key (as it is written: percent-encoded or not) names a
    credential: it holds a word of `_CREDENTIAL_WORDS`, in any case."""
    name = unquote_plus(key).lower()
    return any(word in name for word in _CREDENTIAL_WORDS)


def redacted_url(url: str) -> str:
    """Return ``url`` fit for a message: no password, no credential in its query.

    The userinfo's password becomes ``***`` (``redis://user:***@host``), and so does a
    userinfo without one (``https://***@host``: a lone user is often a token). A query
    value whose key looks like a credential (`_is_credential_key`) becomes ``***``, the
    key kept (``?password=***&db=0``). The fragment, never sent anywhere, is dropped. The
    rest is kept as written, and nothing is parsed that could fail: a password holding
    ``?``, ``#`` or ``@`` is hidden whole, up to the authority's last ``@``.
    """
    scheme, sep, rest = url.partition("://")
    if not sep:
        scheme, rest = "", url
    authority, slash, path = rest.partition("/")
    userinfo, at, host = authority.rpartition("@")
    if at:
        user, colon, _ = userinfo.partition(":")
        userinfo = f"{user}:{_HIDDEN}" if colon else _HIDDEN
    where, _, query = f"{host}{slash}{path}".partition("#")[0].partition("?")
    shown = f"{scheme}{sep}{userinfo}{at}{where}"
    if not query:
        return shown
    return f"{shown}?" + "&".join(_redacted_pair(pair) for pair in query.split("&"))


def _redacted_pair(pair: str) -> str:
    key, eq, _ = pair.partition("=")
    return f"{key}={_HIDDEN}" if eq and _is_credential_key(key) else pair
