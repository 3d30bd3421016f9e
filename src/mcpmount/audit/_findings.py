"""What the audit reports: a `Finding` and its `Severity`."""

from __future__ import annotations

import enum
from dataclasses import dataclass

__all__ = ["Finding", "Severity"]


class Severity(enum.IntEnum):
    """How much a finding matters, ordered: ``--fail-on`` fails on a level and those above."""

    INFO = 0
    """Worth knowing; nothing to fix (a server without pins)."""
    LOW = 1
    """Odd, rarely harmful (a soft hyphen in a description)."""
    MEDIUM = 2
    """Worth a look before trusting the server (a destructive tool without a gate)."""
    HIGH = 3
    """What a poisoned server does (hidden tag characters, "ignore previous instructions")."""

    @property
    def label(self) -> str:
        """The lowercase name (``"high"``), as the command line and JSON write it."""
        return self.name.lower()

    @classmethod
    def parse(cls, label: str) -> Severity:
        """Return the severity called ``label`` (any case).

        Raises:
            ValueError: No severity has that name.
        """
        try:
            return cls[label.upper()]
        except KeyError:
            raise ValueError(f"unknown severity {label!r}") from None


@dataclass(frozen=True, slots=True)
class Finding:
    """One thing the audit found, about one server and, usually, one of its definitions."""

    severity: Severity
    rule: str
    """Which check found it: ``hidden-text``, ``shadowing``, ``instructions``,
    ``destructive-ungated``, ``secret-in-args``, ``unpinned``, ``unmounted``."""
    server: str
    message: str
    """What was found and what to do; server text in it is quoted, secrets never are."""
    kind: str | None = None
    """``"tool"``, ``"prompt"``, ``"resource"``, ``"resource template"``, or None for the
    server itself (its config)."""
    item: str | None = None
    """The raw name or URI of the definition, or None for the server itself."""

    def to_dict(self) -> dict[str, str | None]:
        """Return the finding as ``--json`` writes it."""
        return {
            "severity": self.severity.label,
            "rule": self.rule,
            "server": self.server,
            "kind": self.kind,
            "item": self.item,
            "message": self.message,
        }
