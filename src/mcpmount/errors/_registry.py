"""The errors of a registry as a whole: their base, its config, and lookups of names it has not
mounted.

None of them belongs to one server: a `ConfigError` names the file (and each problem's server
and key), a lookup names what was sought and how to find the right name.
"""

from __future__ import annotations

from collections.abc import Sequence

__all__ = [
    "ConfigError",
    "RegistryError",
    "UnknownNameError",
    "UnknownPromptError",
    "UnknownResourceError",
    "UnknownToolError",
]


class RegistryError(Exception):
    """Base class of every error mcpmount raises on purpose."""


class ConfigError(RegistryError):
    """Raised when a config file is missing, unreadable or invalid.

    ``problems`` holds one line per problem, each naming the server and key where known.
    """

    def __init__(self, path: str, problems: Sequence[str]) -> None:
        self.path = path
        self.problems = tuple(problems)
        lines = "\n".join(f"  - {p}" for p in self.problems)
        noun = "problem" if len(self.problems) == 1 else "problems"
        super().__init__(f"{path}: {len(self.problems)} config {noun}:\n{lines}")


class UnknownNameError(RegistryError, LookupError):
    """Base class of a lookup of a name that is not mounted; ``kind`` says what was sought."""

    kind = "name"

    def __init__(self, name: str, suggestions: Sequence[str] = ()) -> None:
        self.name = name
        self.suggestions = tuple(suggestions)
        # A model reads this (served, or through an adapter): it speaks of tools, not of
        # library calls.
        hint = (
            f"; did you mean {', '.join(self.suggestions)}?"
            if self.suggestions
            else f"; list the {self.kind}s for their exact names{self.also}"
        )
        super().__init__(f"no mounted {self.kind} is named {name!r}{hint}")

    also = ""
    """What else finds a name of this kind, said after the hint to list them."""


class UnknownToolError(UnknownNameError):
    """Raised when a call names a tool that is not mounted."""

    kind = "tool"
    also = ", or find one by what it does with the tool_search tool where it is listed"


class UnknownPromptError(UnknownNameError):
    """Raised when a prompt name is not mounted."""

    kind = "prompt"


class UnknownResourceError(RegistryError, LookupError):
    """Raised when a URI is not a registry URI, or names a server that is not mounted.

    Registry URIs are ``mcpmount://<namespace>/<the server's own URI>``.
    """

    def __init__(self, uri: str, reason: str) -> None:
        self.uri = uri
        self.reason = reason
        super().__init__(
            f"cannot route resource {uri!r}: {reason}; list the resources for their exact URIs"
        )
