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
are scanned in one pass over their JSON text; with no secret known (and ``block_secrets``
off), a tool gets no hook at all.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Mapping
from functools import cached_property
from typing import Any, Protocol

import mcp_types

from mcpmount.config import CREDENTIAL_FORMATS, RegistrySettings, ServerBase, ServerSpec
from mcpmount.errors import SecretRefusedError
from mcpmount.handlers import Interceptor, ToolCall
from mcpmount.tool import MountedTool
from mcpmount.upstream import Supervisor

__all__ = ["CREDENTIAL_FORMATS", "MIN_LENGTH", "WORD_LENGTH", "Mounted", "SecretGuard", "guarded"]

MIN_LENGTH = 8
"""The shortest value guarded as a secret."""

WORD_LENGTH = 16
"""The shortest value of letters only guarded as a secret."""

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

    def redact(self, text: str) -> str:
        """Replace every known secret in ``text`` with whose it is."""
        if self.known is None:
            return text
        return self.known.sub(lambda match: f"[redacted: secret of {self.whose(match[0])}]", text)

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

    def arguments(
        self, entry: MountedTool, spec: ServerSpec, settings: RegistrySettings
    ) -> Interceptor | None:
        """The hook that refuses ``entry``'s calls carrying a secret they may not carry."""
        block = spec.block_secrets if spec.block_secrets is not None else settings.block_secrets
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
            return _redacted(self.index(), result)

        return Interceptor(after=redact, name="the secret guard")


def _check(index: SecretIndex, call: ToolCall, block: bool) -> None:
    """Raise `SecretRefusedError` if ``call``'s arguments carry a secret they may not."""
    pattern = index.blocked if block else index.others(call.server)
    if pattern is None:
        return
    text = _json(call.arguments)
    if (match := pattern.search(text)) is None:
        return
    where = _where(call.arguments, pattern)
    server, tool = call.server, call.tool
    if match.lastgroup not in (None, "known"):
        carried = f"what looks like {_FORMAT_GROUPS[match.lastgroup]}"
        remedy = f"remove it, or set block_secrets = false for server {server!r} if it is none"
        raise SecretRefusedError(
            server, tool, where=where, carried=carried, rule=_BLOCKED, remedy=remedy
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
        )
    raise SecretRefusedError(
        server,
        tool,
        where=where,
        carried=f"a secret of {index.whose(match[0])}",
        rule=_CROSSING,
        remedy=_CROSSING_REMEDY,
        owner=min(owners),
    )


def _json(value: Mapping[str, Any]) -> str:
    """``value`` as JSON text, one string to scan in one pass (a secret that JSON escapes
    is guarded in its escaped form too)."""
    return json.dumps(dict(value), ensure_ascii=False, default=_plain)


def _plain(value: object) -> object:
    if isinstance(value, Mapping):
        mapping: Mapping[object, object] = value  # pyright: ignore[reportUnknownVariableType]
        return dict(mapping)
    return str(value)


def _where(arguments: Mapping[str, Any], pattern: re.Pattern[str]) -> str:
    """Name the first argument (or key) where ``pattern`` matches."""
    stack: list[tuple[str, object]] = [("", arguments)]
    while stack:
        where, value = stack.pop()
        if isinstance(value, Mapping):
            mapping: Mapping[object, object] = value  # pyright: ignore[reportUnknownVariableType]
            for key, item in reversed(list(mapping.items())):
                name = f"{where}.{key}" if where else str(key)
                if pattern.search(str(key)):
                    return f"a key of {where or 'the arguments'}"
                stack.append((name, item))
        elif isinstance(value, list | tuple):
            items: list[object] = list(value)  # pyright: ignore[reportUnknownArgumentType]
            stack.extend((f"{where}[{i}]", item) for i, item in reversed(list(enumerate(items))))
        elif pattern.search(value if isinstance(value, str) else str(value)):
            return where
    return "arguments"


def _redacted(index: SecretIndex, result: mcp_types.CallToolResult) -> mcp_types.CallToolResult:
    """Return ``result`` with every known secret in its text replaced (itself if none)."""
    known = index.known
    if known is None:  # every server with secrets closed during the call
        return result
    update: dict[str, object] = {}
    content = [_redact_block(index, block) for block in result.content]
    if any(new is not old for new, old in zip(content, result.content, strict=True)):
        update["content"] = content
    structured = result.structured_content
    if structured is not None and known.search(_json(structured)):
        update["structured_content"] = _redact_value(index, structured)
    return result.model_copy(update=update) if update else result


def _redact_block(index: SecretIndex, block: mcp_types.ContentBlock) -> mcp_types.ContentBlock:
    match block:
        case mcp_types.TextContent(text=text) if (new := index.redact(text)) != text:
            return block.model_copy(update={"text": new})
        case mcp_types.EmbeddedResource(resource=mcp_types.TextResourceContents() as inner):
            if (new := index.redact(inner.text)) != inner.text:
                return block.model_copy(update={"resource": inner.model_copy(update={"text": new})})
            return block
        case _:
            return block


def _redact_value(index: SecretIndex, value: Any) -> Any:
    if isinstance(value, str):
        return index.redact(value)
    if isinstance(value, Mapping):
        mapping: Mapping[Any, Any] = value  # pyright: ignore[reportUnknownVariableType]
        return {index.redact(str(k)): _redact_value(index, v) for k, v in mapping.items()}
    if isinstance(value, list | tuple):
        items: list[Any] = list(value)  # pyright: ignore[reportUnknownArgumentType]
        return [_redact_value(index, item) for item in items]
    return value
