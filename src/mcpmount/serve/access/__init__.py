"""Access: who a client of HTTP ``serve`` is, and what it may see.

- `HttpSecurity` (``_http``): the ``[serve]`` settings as the SDK's HTTP protections: the
  bearer check before any MCP message is read, allowed hosts, no unauthenticated exposure
  (`check_exposure`), and the OAuth protected resource metadata.
- `StaticTokens` and `JwtTokens` (``_tokens``): the tokens the bearer check accepts; what
  an accepted token may see travels with it as a `Grant`.
- `Principal` and `Door` (``_principal``): a client as access sees it (its token's
  identity and namespaces), and the one object that answers "may it see this?" for every
  answer, error, notice, search and round trip the front sends.
- `raise_for` (``_errors``): the JSON-RPC error a client is told for a registry error, in
  its protocol era (`resource_not_found`).

This room imports nothing of the front; the front asks it.
"""

from mcpmount.serve.access._errors import RESOURCE_NOT_FOUND, raise_for, resource_not_found
from mcpmount.serve.access._http import AppSecurity, HttpSecurity, app_security, check_exposure
from mcpmount.serve.access._principal import (
    EVERYONE,
    Door,
    NameKind,
    Principal,
    current_principal,
    principal_of,
)
from mcpmount.serve.access._tokens import Grant, JwtTokens, StaticTokens, read_tokens_file

__all__ = [
    "EVERYONE",
    "RESOURCE_NOT_FOUND",
    "AppSecurity",
    "Door",
    "Grant",
    "HttpSecurity",
    "JwtTokens",
    "NameKind",
    "Principal",
    "StaticTokens",
    "app_security",
    "check_exposure",
    "current_principal",
    "principal_of",
    "raise_for",
    "read_tokens_file",
    "resource_not_found",
]
