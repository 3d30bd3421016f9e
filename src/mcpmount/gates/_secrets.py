"""The secret guard: a server's secrets go to that server only, and never to the model.

The registry knows each mounted server's secrets (`ServerBase.secret_values`: every value
a ``${VAR}`` took from the environment, ``env`` and header values, URL userinfo and query
values, an OAuth client secret, what ``headers_command`` printed) and whose they are. From
them the guard gives each tool two hooks (`SecretGuard.arguments` and `SecretGuard.results`):

- A call whose arguments carry a secret of another server is refused before it is sent
  (`SecretRefusedError`, naming whose secret it is and where, never the value). With
  ``block_secrets`` so is a secret of the called server itself, and text in a well-known
  credential format (`CREDENTIAL_FORMATS`).
- Every known secret in a result (its text, its structured content, the text of an
  embedded resource) is replaced with ``[redacted: secret of server X]``.

What counts as a secret (`guarded`): a value of at least `MIN_LENGTH` characters, and each
whitespace-separated part of it that is as long (the token of ``Bearer <token>``); a value
of letters only (``production``) counts from `WORD_LENGTH` characters, because words like
that are set in ``env`` and written in arguments with no secret meant. Shorter values
would refuse ordinary calls for a coincidence, and are not guarded (their own server's
messages still hide them).

Cost: the secrets are compiled into one regular expression alternation, built again only
when the set changes (a server mounts, closes or gets new headers), and a call's arguments
are searched string by string (keys too) where they are, without making JSON of them
(a microsecond for a plain call's); with no secret known (and ``block_secrets``
off), a tool gets no hook at all.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Mapping
from functools import cached_property
from typing import Any, Protocol, TypeVar, cast

import mcp_types
import pydantic

from mcpmount.config import CREDENTIAL_FORMATS, RegistrySettings, ServerBase, ServerSpec
from mcpmount.errors import SecretRefusedError
from mcpmount.gates._redaction import redact_model
from mcpmount.handlers import Interceptor, ToolCall
from mcpmount.tool import MountedTool
from mcpmount.upstream import Supervisor

__all__ = ["CREDENTIAL_FORMATS", "MIN_LENGTH", "WORD_LENGTH", "Mounted", "SecretGuard", "guarded"]

MIN_LENGTH = 8
"""The shortest value guarded as a secret."""

WORD_LENGTH = 16
"""The shortest value of letters only guarded as a secret."""

_Model = TypeVar("_Model", bound=pydantic.BaseModel)

_FORMAT_GROUPS = {f"format{i}": name for i, name in enumerate(CREDENTIAL_FORMATS)}

_CROSSING = "a server's secrets go to that server only"
_CROSSING_REMEDY = (
    "remove it from the arguments (a tool that asks for another server's credentials may be "
    "trying to steal them)"
)
_BLOCKED = "block_secrets refuses secrets in arguments"


def guarded(value: str) -> list[str]:
    """Return what of one secret value is guarded: the value and its long parts (see the
    module docstring)."""
    return [
        part
        for part in dict.fromkeys((value.strip(), *value.split()))
        if len(part) >= MIN_LENGTH and (len(part) >= WORD_LENGTH or not part.isalpha())
    ]


class Mounted(Protocol):
    """What the guard reads of the registry's servers (`Servers`)."""

    @property
    def supervisors(self) -> Mapping[str, Supervisor]:
        """Every mounted server by namespace."""
        ...

    @property
    def generation(self) -> int:
        """Changes whenever a server is published or forgotten."""
        ...


def _alternation(texts: Iterator[str]) -> str:
    """Longest first, so that a secret holding another is matched whole."""
    return "|".join(re.escape(text) for text in sorted(set(texts), key=len, reverse=True))


class SecretIndex:
    """The known secrets at one moment, and the patterns that find them (each compiled
    when first used)."""

    def __init__(self, owners: Mapping[str, frozenset[str]]) -> None:
        self.owners = owners
        """Each guarded value (and its JSON-escaped form) to the servers it belongs to."""
        self._others: dict[str, re.Pattern[str] | None] = {}

    @cached_property
    def known(self) -> re.Pattern[str] | None:
        """Finds any known secret; None when there is none."""
        return re.compile(_alternation(iter(self.owners))) if self.owners else None

    @cached_property
    def blocked(self) -> re.Pattern[str]:
        """Finds any known secret (group ``known``) or a credential format (``format<i>``)."""
        formats = [
            f"(?P<{group}>{CREDENTIAL_FORMATS[name]})" for group, name in _FORMAT_GROUPS.items()
        ]
        known = [f"(?P<known>{_alternation(iter(self.owners))})"] if self.owners else []
        return re.compile("|".join(known + formats))

    def others(self, server: str) -> re.Pattern[str] | None:
        """Finds a secret that is not ``server``'s; None when there is none."""
        if server not in self._others:
            foreign = (value for value, owners in self.owners.items() if server not in owners)
            text = _alternation(foreign)
            self._others[server] = re.compile(text) if text else None
        return self._others[server]

    @cached_property
    def known_bytes(self) -> re.Pattern[bytes] | None:
        """Finds any known secret in bytes (UTF-8); None when there is none."""
        raw = sorted({v.encode() for v in self.owners}, key=len, reverse=True)
        return re.compile(b"|".join(map(re.escape, raw))) if raw else None

    def redact(self, text: str) -> str:
        """Replace every known secret in ``text`` with whose it is."""
        if self.known is None:
            return text
        return self.known.sub(lambda match: self.marker(match[0]), text)

    def marker(self, value: str) -> str:
        """What replaces the known secret ``value``."""
        return f"[redacted: secret of {self.whose(value)}]"

    def whose(self, value: str) -> str:
        """``server 'a'`` or ``servers 'a' and 'b'``."""
        names = sorted(self.owners[value])
        if len(names) == 1:
            return f"server {names[0]!r}"
        return "servers " + ", ".join(map(repr, names[:-1])) + f" and {names[-1]!r}"


def _index(supervisors: Mapping[str, Supervisor]) -> SecretIndex:
    owners: dict[str, set[str]] = {}
    for server, supervisor in supervisors.items():
        for value in supervisor.spec.secret_values():
            for part in guarded(value):
                for form in (part, json.dumps(part, ensure_ascii=False)[1:-1]):
                    owners.setdefault(form, set()).add(server)
    return SecretIndex({value: frozenset(servers) for value, servers in owners.items()})


class SecretGuard:
    """The registry's known secrets, kept current, and the hooks that guard calls with them."""

    def __init__(self, servers: Mounted) -> None:
        self._servers = servers
        self._version = -1
        self._index = SecretIndex({})
        self._listed: dict[int, tuple[pydantic.BaseModel, pydantic.BaseModel]] = {}
        """Each listed definition (by id, with itself, so the id is not reused) and its
        redaction, under the secrets of `_listed_for`."""
        self._listed_for: SecretIndex | None = None

    def version(self) -> int:
        """Changes whenever the set of known secrets may have changed."""
        return self._servers.generation + ServerBase.secrets_changed

    def index(self) -> SecretIndex:
        """The known secrets now (built again only after they changed)."""
        if (version := self.version()) != self._version:
            self._index, self._version = _index(self._servers.supervisors), version
        return self._index

    def redact(self, text: str) -> str:
        """Replace every known secret in ``text`` with whose it is."""
        return self.index().redact(text)

    def redact_listing(self, items: list[_Model]) -> list[_Model]:
        """``items`` (tool, prompt, resource or template definitions: their descriptions
        and titles reach the model) with every known secret redacted. The same definition
        is redacted once for each set of secrets: the manifest is listed on every turn."""
        index = self.index()
        if index.known is None:
            return items
        if self._listed_for is not index:
            self._listed, self._listed_for = {}, index
        shown: list[_Model] = []
        for item in items:
            seen = self._listed.get(id(item))
            if seen is None or seen[0] is not item:
                seen = self._listed[id(item)] = (item, redact_model(index, item))
            shown.append(cast("_Model", seen[1]))
        return shown

    def redact_model(self, model: _Model) -> _Model:
        """``model`` (any message of a server) with every known secret replaced."""
        return redact_model(self.index(), model)

    def arguments(
        self, entry: MountedTool, spec: ServerSpec, settings: RegistrySettings
    ) -> Interceptor | None:
        """The hook that refuses ``entry``'s calls carrying a secret they may not carry."""
        block = spec.effective(settings).block_secrets
        index = self.index()
        if not block and index.others(entry.server) is None:
            return None

        async def check(call: ToolCall) -> None:
            _check(self.index(), call, block)

        return Interceptor(before=check, name="the secret guard")

    def results(
        self, entry: MountedTool, spec: ServerSpec, settings: RegistrySettings
    ) -> Interceptor | None:
        """The hook that redacts every known secret in ``entry``'s results."""
        if self.index().known is None:
            return None

        async def redact(
            call: ToolCall, result: mcp_types.CallToolResult
        ) -> mcp_types.CallToolResult:
            return self.redact_model(result)

        return Interceptor(after=redact, name="the secret guard")


ERROR_KINDS: Mapping[str, str] = {
    "tools/call": "tool",
    "prompts/get": "prompt",
    "resources/read": "resource",
    "completion/complete": "completion",
}
"""The `CallError` kind of each request kind."""


def check_request(index: SecretIndex, call: ToolCall) -> None:
    """Refuse ``call`` (a request of any kind) if what it carries holds another server's
    secret (`SecretRefusedError`)."""
    _check(index, call, block=False)


def _check(index: SecretIndex, call: ToolCall, block: bool) -> None:
    """Raise `SecretRefusedError` if ``call``'s arguments carry a secret they may not.

    Neither the error nor what names the place quotes a known secret: not the value, not
    an argument's name, not a URI (all known secrets in them are redacted)."""
    pattern = index.blocked if block else index.others(call.server)
    if pattern is None:
        return
    if not _carries(pattern, call.arguments):
        return
    place, match = _where(call.arguments, pattern)
    where = index.redact(place)
    server, tool, kind = call.server, index.redact(call.tool), ERROR_KINDS[call.kind]
    if match.lastgroup not in (None, "known"):
        carried = f"what looks like {_FORMAT_GROUPS[match.lastgroup]}"
        remedy = f"remove it, or set block_secrets = false for server {server!r} if it is none"
        raise SecretRefusedError(
            server, tool, where=where, carried=carried, rule=_BLOCKED, remedy=remedy, kind=kind
        )
    owners = index.owners[match[0]]
    if server in owners:
        remedy = (
            "remove it (the server has its own copy from its config), or set "
            f"block_secrets = false for server {server!r}"
        )
        raise SecretRefusedError(
            server,
            tool,
            where=where,
            carried="a secret of this server",
            rule=_BLOCKED,
            remedy=remedy,
            owner=server,
            kind=kind,
        )
    raise SecretRefusedError(
        server,
        tool,
        where=where,
        carried=f"a secret of {index.whose(match[0])}",
        rule=_CROSSING,
        remedy=_CROSSING_REMEDY,
        owner=min(owners),
        kind=kind,
    )


def json_text(value: Mapping[str, Any]) -> str:
    """``value`` as JSON text, one string to scan in one pass (a secret that JSON escapes
    is guarded in its escaped form too)."""
    return json.dumps(dict(value), ensure_ascii=False, default=_plain)


def _plain(value: object) -> object:
    if isinstance(value, Mapping):
        mapping: Mapping[object, object] = value  # pyright: ignore[reportUnknownVariableType]
        return dict(mapping)
    return str(value)


def _carries(pattern: re.Pattern[str], value: object) -> bool:
    """Whether ``pattern`` matches a string in ``value`` (a JSON-like value: keys too)."""
    if isinstance(value, str):
        return pattern.search(value) is not None
    if isinstance(value, Mapping):
        mapping: Mapping[object, object] = value  # pyright: ignore[reportUnknownVariableType]
        for key, item in mapping.items():
            if pattern.search(str(key)) is not None or _carries(pattern, item):
                return True
        return False
    if isinstance(value, list | tuple):
        items: list[object] = list(value)  # pyright: ignore[reportUnknownArgumentType]
        return any(_carries(pattern, item) for item in items)
    if value is None or isinstance(value, bool):
        return False
    return pattern.search(str(value)) is not None


def _where(arguments: Mapping[str, Any], pattern: re.Pattern[str]) -> tuple[str, re.Match[str]]:
    """Name the first argument (or key) where ``pattern`` matches, with the match; only
    asked once `_carries` found one."""
    stack: list[tuple[str, object]] = [("", arguments)]
    while stack:
        where, value = stack.pop()
        if isinstance(value, Mapping):
            mapping: Mapping[object, object] = value  # pyright: ignore[reportUnknownVariableType]
            for key, item in reversed(list(mapping.items())):
                name = f"{where}.{key}" if where else str(key)
                if match := pattern.search(str(key)):
                    return f"a key of {where or 'the arguments'}", match
                stack.append((name, item))
        elif isinstance(value, list | tuple):
            items: list[object] = list(value)  # pyright: ignore[reportUnknownArgumentType]
            stack.extend((f"{where}[{i}]", item) for i, item in reversed(list(enumerate(items))))
        elif (
            value is not None
            and not isinstance(value, bool)
            and (match := pattern.search(value if isinstance(value, str) else str(value)))
        ):
            return where, match
    raise AssertionError("_where is asked only where _carries found a match")
