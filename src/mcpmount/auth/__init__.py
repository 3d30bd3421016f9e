"""OAuth 2.1 for url servers, on the SDK's ``mcp.client.auth``, with logins kept per user.

`oauth_for` gives a server's HTTP client its OAuth (an ``httpx2.Auth``): the stored tokens,
refreshed ahead of expiry under a lock that every process of the user shares, and
`LoginRequired` when only a person can help. `login` runs the browser flow ahead of time
(``mcpmount login NS``) and `logout` forgets it.

Its modules: ``_store`` (`TokenStore`: one file per server and client, mode 0600),
``_provider`` (the SDK's providers, taught to keep logins), ``_callback`` (the loopback
redirect listener), ``_login`` and ``_required`` (`LoginRequired`).

Only `LoginRequired` loads with the package. The rest loads at its first use, with what it
stands on (``mcp.client.auth``, ``jwt`` and ``cryptography``, ``filelock``, ``platformdirs``,
``webbrowser``): a registry without an ``oauth`` server never pays for them.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

from mcpmount.auth._required import LoginRequired

if TYPE_CHECKING:
    from mcpmount.auth._login import LOGIN_TIMEOUT, LoginFailed, login, logout
    from mcpmount.auth._provider import oauth_for
    from mcpmount.auth._store import TokenStore

__all__ = [
    "LOGIN_TIMEOUT",
    "LoginFailed",
    "LoginRequired",
    "TokenStore",
    "login",
    "logout",
    "oauth_for",
]

_LOADED_ON_USE = {
    "LOGIN_TIMEOUT": "_login",
    "LoginFailed": "_login",
    "login": "_login",
    "logout": "_login",
    "oauth_for": "_provider",
    "TokenStore": "_store",
}
"""Each name the package loads at first use, and its module."""


def __getattr__(name: str) -> object:
    if (module := _LOADED_ON_USE.get(name)) is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.{module}"), name)
    globals()[name] = value
    return value
