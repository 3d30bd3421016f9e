"""Credentials: each principal's own login to the servers that act as a person.

`PrincipalCredentials` (``_credentials``): for a url server with ``credentials =
"per_principal"``, a principal's first call sends it to log in (a URL-mode elicitation),
``/oauth/callback`` finishes the login, and its upstream session carries its own tokens.

Above access (who is asking) and the relay (how its client is asked); hosting serves the
callback route and the front asks `PrincipalCredentials.ensure` before each call.
"""

from mcpmount.serve.credentials._credentials import (
    PrincipalCredentials,
    check_token_key,
    per_principal,
)

__all__ = ["PrincipalCredentials", "check_token_key", "per_principal"]
