"""Who a request comes from, and what it may see: the one door everything leaving serve passes.

A `Principal` is a client as access sees it: the identity of its token (none without
authentication, over stdio) and the namespaces that token may see (``None``: all). Every
request has one (`principal_of`, from the SDK's authenticated user; `current_principal`
where only the request's context is at hand), and every handshake-era session remembers
the principal that opened it (`mcpmount.serve.sessions._sessions`), so that what is sent to it
later (log messages, list changes, resource updates) is sent only if it may see it.

`Door` answers, for a principal, every question of the form "may it see this?" over the
served registry:

- whose a tool, prompt or resource URI is (`Door.owner`): the registry's tables and
  routing, never the name itself (a server mounted with ``prefix = false`` keeps its own
  names, which may hold ``__``);
- which names it sees (`Door.visible_names`), and the error an unknown name gets
  (`Door.unknown`): the registry's own unknown-name error, its "did you mean" drawn only
  from the visible names. A hidden name is answered with exactly that error, as if it
  did not exist.

A policy (`mcpmount.policy`, ``[serve] policy``) narrows what each principal sees name by
name: the door asks it after the namespaces, and what it denies is hidden just the same.
A principal that sees every namespace, with no policy, is answered as the registry
answers: the door costs it one attribute test per question.
"""

from __future__ import annotations

import difflib
import hashlib
from collections.abc import Callable, Container, Iterable
from dataclasses import dataclass, field
from typing import Any, Final, Literal

from mcp.server import ServerRequestContext
from mcp.server.auth.middleware.auth_context import get_access_token
from mcp.server.auth.middleware.bearer_auth import AuthenticatedUser
from mcp.server.auth.provider import AccessToken
from starlette.requests import HTTPConnection

from mcpmount.errors import (
    UnknownNameError,
    UnknownPromptError,
    UnknownToolError,
)
from mcpmount.policy import Policy, Subject
from mcpmount.registry import Registry
from mcpmount.serve.access._tokens import Grant

__all__ = [
    "EVERYONE",
    "Door",
    "NameKind",
    "Principal",
    "current_principal",
    "principal_of",
]

NameKind = Literal["tool", "prompt", "resource"]
"""What a name names: a tool's or prompt's public name, or a registry URI (or template)."""

_SUGGESTIONS: Final = 3
"""How many close names an unknown-name error suggests (as the registry does)."""


@dataclass(frozen=True, slots=True)
class Principal:
    """A client as access sees it: who it is, and which namespaces it may see."""

    identity: str
    """Its token's identity (``""``: no token, as over stdio or without authentication).
    Conversations are kept apart by it (`scoped`)."""

    namespaces: frozenset[str] | None
    """The namespaces it may see; None: every one."""

    subject: Subject = field(default_factory=lambda: Subject(""), compare=False)
    """Its token's attributes, as a policy reads them."""

    @property
    def limited(self) -> bool:
        """Whether some namespace may be hidden from it."""
        return self.namespaces is not None

    def sees(self, namespace: str | None) -> bool:
        """Whether it may see what belongs to ``namespace`` (None: to no mounted server)."""
        return self.namespaces is None or (namespace is not None and namespace in self.namespaces)

    def sees_any(self, namespaces: Iterable[str]) -> bool:
        """Whether it may see what belongs to at least one of ``namespaces``."""
        return self.namespaces is None or not self.namespaces.isdisjoint(namespaces)

    def scoped(self, key: str) -> str:
        """``key`` (a conversation id the client chose) in this principal's own space: two
        tokens naming the same conversation never share it."""
        if not self.identity:
            return key
        digest = hashlib.sha256(self.identity.encode()).hexdigest()[:16]
        return f"{digest}:{key}"


EVERYONE: Final = Principal("", None)
"""A client without a token: over stdio, or HTTP without authentication. It sees all."""


def principal_of(ctx: ServerRequestContext[Any, Any]) -> Principal:
    """The principal of a request (from the user the SDK's bearer middleware put in the
    HTTP scope); `EVERYONE` without a token."""
    request = ctx.request
    if not isinstance(request, HTTPConnection):
        return EVERYONE
    user = request.scope.get("user")
    return _of_token(user.access_token if isinstance(user, AuthenticatedUser) else None)


def current_principal() -> Principal:
    """The principal of the HTTP request being handled, where no request context is at hand
    (the SDK's ``Mcp-Param`` header check asks only for a tool's schema); `EVERYONE`
    outside an authenticated request."""
    return _of_token(get_access_token())


def _of_token(token: AccessToken | None) -> Principal:
    if not isinstance(token, Grant):
        return EVERYONE
    identity = token.client_id if token.subject is None else f"{token.client_id}/{token.subject}"
    identity = identity or "?"
    claims = token.claims or {}
    subject = Subject(
        identity,
        name=token.client_id.removeprefix("token:") if token.claims is None else token.client_id,
        issuer=str(claims.get("iss", "")),
        subject=token.subject or "",
        scopes=token.scopes,
        claims=claims,
    )
    return Principal(identity, token.namespaces, subject)


class Door:
    """What a principal may see of a served registry (see the module docstring).

    Args:
        registry: The served registry.
    """

    def __init__(self, registry: Registry) -> None:
        self._registry = registry
        self.policy: Callable[[], Policy | None] = lambda: None
        """The policy in force now (serve points it at the config it serves)."""

    def limits(self, principal: Principal) -> bool:
        """Whether anything may be hidden from ``principal``."""
        return principal.limited or self.policy() is not None

    def owner(self, kind: NameKind, name: str) -> str | None:
        """The namespace ``name`` belongs to; None when it names nothing mounted."""
        return self._registry.owner(kind, name)

    def called(self, principal: Principal, name: str) -> str | None:
        """The public name of the tool a call of ``name`` reaches for ``principal``: ``name``
        itself, or the tool an app of a server it sees calls by that raw name (an app of a
        hidden server neither takes the name nor shares it); None if none."""
        try:
            return self._registry.get(name, servers=principal.namespaces).name
        except UnknownToolError:
            return None

    def sees(self, principal: Principal, kind: NameKind, name: str) -> bool:
        """Whether ``principal`` may see ``name`` (also True for a name of no server, to a
        principal that sees all with no policy: the registry then says it is unknown; under
        a policy the gate says so, in the words it answers a denied name with)."""
        policy = self.policy()
        if policy is None:
            return not principal.limited or principal.sees(self.owner(kind, name))
        owner = self.owner(kind, name)  # None: unknown, answered as a denied name is
        return (
            owner is not None
            and principal.sees(owner)
            and policy.allows(principal.subject, kind, name, owner)
        )

    def searched(self, principal: Principal) -> Container[str] | None:
        """The public names ``principal``'s ``tool_search`` may find, beside its namespaces
        (None: all of them): a policy's decisions, asked of the names searched."""
        if self.policy() is None:
            return None
        return _Searched(self, principal)

    def visible_names(self, principal: Principal, kind: Literal["tool", "prompt"]) -> list[str]:
        """The public names of the tools (or prompts) ``principal`` may see."""
        if kind == "tool":
            names = [tool.name for tool in self._registry.mounted_tools()]
        else:
            names = [prompt.name for prompt in self._registry.prompts()]
        if not self.limits(principal):
            return names
        return [name for name in names if self.sees(principal, kind, name)]

    def unknown(
        self, principal: Principal, kind: Literal["tool", "prompt"], name: str
    ) -> UnknownNameError:
        """The error an unknown (or hidden) ``name`` gets: the registry's, suggesting close
        names among the visible ones only."""
        close = difflib.get_close_matches(name, self.visible_names(principal, kind), n=_SUGGESTIONS)
        return UnknownToolError(name, close) if kind == "tool" else UnknownPromptError(name, close)

    def answer_unknown(self, principal: Principal, error: UnknownNameError) -> UnknownNameError:
        """``error`` as ``principal`` may read it: its suggestions limited to what it sees."""
        if not self.limits(principal):
            return error
        if isinstance(error, UnknownPromptError):
            return self.unknown(principal, "prompt", error.name)
        return self.unknown(principal, "tool", error.name)


@dataclass(frozen=True, slots=True)
class _Searched:
    """The tools a principal may find (`Door.searched`), decided name by name."""

    door: Door
    principal: Principal

    def __contains__(self, name: object) -> bool:
        return isinstance(name, str) and self.door.sees(self.principal, "tool", name)
