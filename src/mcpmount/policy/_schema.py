"""What a policy may speak of: the Cedar schema, and the entities of one decision.

Every decision asks whether a client (``principal``, a ``Client``) may use (``Action::"use"``)
one tool, prompt or resource (``resource``, a ``Tool``, ``Prompt`` or ``Resource``, named by
its public name or URI). A client's attributes come from its token: a static token's name,
or a JWT's ``client_id``, ``iss``, ``sub`` and scopes; the JWT's other claims are its tags,
each a set of strings (``principal.hasTag("role") && principal.getTag("role").contains(
"admin")``), so that a string claim and a list claim read alike and a claim a token lacks
is a check the validator makes the policy write (`SCHEMA`).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from functools import cached_property
from typing import Any, Final, Literal, cast

__all__ = ["ENTITY_TYPES", "SCHEMA", "Kind", "Subject", "resource_entity"]

Kind = Literal["tool", "prompt", "resource"]
"""What a decision is about: a tool's or prompt's public name, or a resource URI (or template)."""

ENTITY_TYPES: Final[Mapping[Kind, str]] = {
    "tool": "Tool",
    "prompt": "Prompt",
    "resource": "Resource",
}

SCHEMA: Final = """
entity Client = { name: String, issuer: String, subject: String, scopes: Set<String> }
    tags Set<String>;
entity Tool, Prompt, Resource = { name: String, server: String };
action use appliesTo { principal: [Client], resource: [Tool, Prompt, Resource] };
"""
"""The Cedar schema every policy file is validated against (at ``check`` and each load)."""


class Subject:
    """A client as policies see it: its token's attributes (see the module docstring).

    Args:
        identity: The principal's identity (``token:NAME``, ``CLIENT/SUB``; ``""``: none).
        name: A static token's name, or a JWT's ``client_id`` (``""``: no token).
        issuer: A JWT's ``iss`` (``""`` for a static token).
        subject: A JWT's ``sub`` (``""`` without one).
        scopes: The token's scopes.
        claims: A JWT's claims (empty for a static token).
    """

    def __init__(
        self,
        identity: str,
        *,
        name: str = "",
        issuer: str = "",
        subject: str = "",
        scopes: Sequence[str] = (),
        claims: Mapping[str, Any] | None = None,
    ) -> None:
        self.identity = identity
        self.name = name
        self.issuer = issuer
        self.subject = subject
        self.scopes = tuple(scopes)
        self.claims: Mapping[str, Any] = claims or {}

    @cached_property
    def key(self) -> str:
        """What decisions about it are cached under: two tokens with the same attributes
        share their decisions; a new token of one client with other claims does not."""
        if not self.claims and not self.scopes:
            return f"{self.identity}\0{self.name}"
        text = json.dumps(
            [self.identity, self.name, self.issuer, self.subject, self.scopes, self.claims],
            sort_keys=True,
            default=str,
        )
        return hashlib.sha256(text.encode()).hexdigest()

    @cached_property
    def entity(self) -> dict[str, Any]:
        """Its Cedar entity (JSON form)."""
        return {
            "uid": {"type": "Client", "id": self.identity},
            "attrs": {
                "name": self.name,
                "issuer": self.issuer,
                "subject": self.subject,
                "scopes": list(self.scopes),
            },
            "tags": {
                claim: values
                for claim, value in self.claims.items()
                if (values := _as_strings(value)) is not None
            },
            "parents": [],
        }


def resource_entity(kind: Kind, name: str, server: str) -> dict[str, Any]:
    """The Cedar entity of a tool, prompt or resource (JSON form)."""
    return {
        "uid": {"type": ENTITY_TYPES[kind], "id": name},
        "attrs": {"name": name, "server": server},
        "parents": [],
    }


def _as_strings(value: object) -> list[str] | None:
    """A claim as a set of strings: a string or number is one, a list of them each; a
    boolean ``"true"`` or ``"false"``; an object (or a list holding one) is not a tag."""
    if isinstance(value, list):
        items = [_scalar(item) for item in cast("list[object]", value)]
        if any(item is None for item in items):
            return None
        return [item for item in items if item is not None]
    scalar = _scalar(value)
    return None if scalar is None else [scalar]


def _scalar(value: object) -> str | None:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str | int | float):
        return str(value)
    return None
