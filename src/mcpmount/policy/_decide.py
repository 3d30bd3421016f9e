"""`Policy`: one loaded policy file, and its decisions, cached until it is replaced.

A decision costs Cedar tens of microseconds (the entities are built and read anew each
time); a list of a thousand tools asks a thousand. Decisions depend only on the policy
(fixed for this object: a reload makes a new one), the client's attributes
(`Subject.key`), and the name and its server, so they are cached under those; the cache is
bounded, and emptied whole when full (a flood of made-up names cannot grow it).
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Final

import cedarpy

from mcpmount.errors import ConfigError
from mcpmount.policy._load import parse_policies
from mcpmount.policy._schema import ENTITY_TYPES, Kind, Subject, resource_entity

__all__ = ["Policy", "read_policy"]

logger = logging.getLogger(__name__)

MAX_CACHED: Final = 65_536
"""Decisions kept at most (a few MB); past it the cache starts again."""


class Policy:
    """The policies of one file: who may use which tool, prompt and resource.

    Cedar's rules apply: nothing is allowed unless a ``permit`` says so, and a ``forbid``
    overrides every ``permit``. A policy that fails on a request (an evaluation error)
    counts as not matching, as in Cedar; a request with any such error is denied, so that a
    ``forbid`` that fails never lets anything through.

    Args:
        policies: The parsed policies.
        path: The file they were read from (in log lines).
        source: Their text (two policies of the same text decide alike).
    """

    def __init__(
        self, policies: cedarpy.PolicySet, path: Path | None = None, source: str = ""
    ) -> None:
        self._policies = policies
        self._path = path
        self.source = source
        self._cache: dict[tuple[str, Kind, str, str], bool] = {}

    def allows(self, subject: Subject, kind: Kind, name: str, server: str | None) -> bool:
        """Whether ``subject`` may see and use ``name`` (a tool's or prompt's public name,
        or a resource URI or template), of ``server`` (None: no mounted server's)."""
        key = (subject.key, kind, name, server or "")
        decided = self._cache.get(key)
        if decided is None:
            decided = self._decide(subject, kind, name, server or "")
            if len(self._cache) >= MAX_CACHED:
                self._cache.clear()
            self._cache[key] = decided
        return decided

    def _decide(self, subject: Subject, kind: Kind, name: str, server: str) -> bool:
        request = {
            "principal": {"type": "Client", "id": subject.identity},
            "action": {"type": "Action", "id": "use"},
            "resource": {"type": ENTITY_TYPES[kind], "id": name},
            "context": {},
        }
        entities = [subject.entity, resource_entity(kind, name, server)]
        result = cedarpy.is_authorized(request, self._policies, entities)  # pyright: ignore[reportUnknownMemberType]
        errors = result.diagnostics.errors
        if errors:
            logger.warning(
                "policy %s: denied %s %r to %r, as a policy failed on it: %s",
                self._path or "",
                kind,
                name,
                subject.identity,
                "; ".join(errors),
            )
            return False
        return result.allowed


def read_policy(path: Path) -> Policy:
    """Read, parse and validate the policy file at ``path``.

    Raises:
        ConfigError: The file is unreadable, or a policy in it does not parse or does not
            fit the schema; each problem with its line.
    """
    policies, text, problems = parse_policies(path)
    if policies is None:
        raise ConfigError(str(path), problems)
    return Policy(policies, path, text)
