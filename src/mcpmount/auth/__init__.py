"""OAuth 2.1 for url servers, on the SDK's ``mcp.client.auth``, with logins kept per user.

`oauth_for` gives a server's HTTP client its OAuth (an ``httpx2.Auth``): the stored tokens,
refreshed ahead of expiry under a lock that every process of the user shares, and
`LoginRequired` when only a person can help. `login` runs the browser flow ahead of time
(``mcpmount login NS``) and `logout` forgets it.

Its modules: ``_store`` (`TokenStore`: one file per server and client, mode 0600),
``_provider`` (the SDK's providers, taught to keep logins), ``_callback`` (the loopback
redirect listener) and ``_login``.
"""

from mcpmount.auth._login import LOGIN_TIMEOUT, LoginFailed, login, logout
from mcpmount.auth._provider import LoginRequired, oauth_for
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
