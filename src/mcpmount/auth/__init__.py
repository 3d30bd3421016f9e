"""OAuth 2.1 for url servers, on the SDK's ``mcp.client.auth``, with logins kept per user.

`oauth_for` gives a server's HTTP client its OAuth (an ``httpx2.Auth``): the stored tokens,
refreshed ahead of expiry under a lock that every process of the user shares, and
`LoginRequired` when only a person can help. `login` runs the browser flow ahead of time
(``mcpmount login NS``) and `logout` forgets it.

Its modules: ``_store`` (`TokenStore`: one file per server and client, mode 0600),
``_provider`` (the SDK's providers, taught to keep logins), ``_callback`` (the loopback
redirect listener) and ``_login``. Under ``serve``,
``credentials = "per_principal"`` adds ``_sealed`` (`Sealer`, `SealedTokens`: each
principal's logins encrypted at rest, on disk or in Redis) and ``_principals``
(`PrincipalLogins`: a login started by a principal's call, finished at serve's callback).

Only its errors load with the package: `LoginRequired` and `LoginFailed`, which live in
`mcpmount.errors` with every other error. The rest loads at its first use, with what it
stands on (``mcp.client.auth``, ``jwt`` and ``cryptography``, ``filelock``, ``platformdirs``,
``webbrowser``): a registry without an ``oauth`` server never pays for them.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

from mcpmount.errors import LoginFailed, LoginRequired

if TYPE_CHECKING:
    from mcpmount.auth._login import LOGIN_TIMEOUT, login, logout
    from mcpmount.auth._principals import CALLBACK_PATH, PENDING_LIFE, PrincipalLogins
    from mcpmount.auth._provider import oauth_for
    from mcpmount.auth._sealed import SealedTokens, Sealer
    from mcpmount.auth._store import TokenStore

__all__ = [
    "CALLBACK_PATH",
    "LOGIN_TIMEOUT",
    "PENDING_LIFE",
    "LoginFailed",
    "LoginRequired",
    "PrincipalLogins",
    "SealedTokens",
    "Sealer",
    "TokenStore",
    "login",
    "logout",
    "oauth_for",
]

_LOADED_ON_USE = {
    "LOGIN_TIMEOUT": "_login",
    "login": "_login",
    "logout": "_login",
    "oauth_for": "_provider",
    "TokenStore": "_store",
    "CALLBACK_PATH": "_principals",
    "PENDING_LIFE": "_principals",
    "PrincipalLogins": "_principals",
    "SealedTokens": "_sealed",
    "Sealer": "_sealed",
}
"""Each name the package loads at first use, and its module."""


def __getattr__(name: str) -> object:
    if (module := _LOADED_ON_USE.get(name)) is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.{module}"), name)
    globals()[name] = value
    return value
