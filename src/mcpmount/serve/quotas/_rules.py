"""`Rules`: the ``[serve.limits]`` rules, read once, and which of them a call matches.

A rule's globs are matched with `fnmatch.fnmatchcase`: against a principal's name (a
static token's name without its ``token:`` mark, an OAuth client's ``client/subject``),
and against the called tool's public name. Each principal is counted apart, under its
full identity, so a static token and an OAuth client of the same name never share a
count; a ``per_tool`` rule counts each tool apart too.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from fnmatch import fnmatchcase
from typing import Final

import limits

from mcpmount.config import LimitRule, ServeLimits
from mcpmount.serve.access import Principal

__all__ = ["InFlight", "Match", "Rules"]

_STATIC: Final = "token:"
"""How a static token's identity starts (`mcpmount.serve.access`); its name follows."""


@dataclass(frozen=True, slots=True)
class _Rule:
    at: int
    """Its place among the rules (what messages and keys name it by)."""
    rule: LimitRule
    item: limits.RateLimitItem | None


@dataclass(frozen=True, slots=True)
class Match:
    """A rule a call matched, and the key it is counted under."""

    at: int
    rule: LimitRule
    item: limits.RateLimitItem | None
    key: tuple[str, ...]

    def names(self) -> str:
        """The rule as a message names it: ``[[serve.limits.rule]] #2 (tools "x_*")``."""
        return f'[[serve.limits.rule]] #{self.at + 1} (tools "{self.rule.tools}")'


class Rules:
    """The rules of one ``[serve.limits]`` table (see the module docstring)."""

    def __init__(self, settings: ServeLimits) -> None:
        self.settings = settings
        self._rules = [
            _Rule(at, rule, limits.parse(rule.rate) if rule.rate is not None else None)
            for at, rule in enumerate(settings.rule)
        ]

    def __bool__(self) -> bool:
        return bool(self._rules)

    def matching(self, principal: Principal, tool: str) -> list[Match]:
        """The rules a call of ``tool`` by ``principal`` counts against."""
        identity = principal.identity
        name = identity.removeprefix(_STATIC)
        found: list[Match] = []
        for each in self._rules:
            rule = each.rule
            if fnmatchcase(name, rule.principal) and fnmatchcase(tool, rule.tools):
                key = (str(each.at), rule.tools, identity)
                found.append(
                    Match(each.at, rule, each.item, (*key, tool) if rule.per_tool else key)
                )
        return found


class InFlight:
    """The calls running now under each concurrency-capped key, in this process."""

    def __init__(self) -> None:
        self._running: Counter[tuple[str, ...]] = Counter()

    def enter(self, matches: list[Match]) -> Match | None:
        """Count a call in under every capped rule of ``matches``; or, when one is full,
        count nothing and return it."""
        capped = [m for m in matches if m.rule.concurrency is not None]
        for match in capped:
            if self._running[match.key] >= (match.rule.concurrency or 0):
                return match
        for match in capped:  # no await since the look: no other call slipped in
            self._running[match.key] += 1
        return None

    def leave(self, matches: list[Match]) -> None:
        """Count out a call `enter` counted in."""
        for match in matches:
            if match.rule.concurrency is not None:
                self._running[match.key] -= 1
                if self._running[match.key] <= 0:
                    del self._running[match.key]
