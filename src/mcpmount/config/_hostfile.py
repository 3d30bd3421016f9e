"""MCP host files: the ``{"mcpServers": {...}}`` JSON of Claude Desktop and ``.mcp.json``.

Each entry is a server under a name of the host's choosing; its namespace is derived from
that name. Keys that hosts add and that mean nothing here are ignored.

Claude Code's ``headersHelper`` is a shell command string whose output is a JSON object of
headers; it becomes ``headers_command = ["/bin/sh", "-c", <the string>]``, since the host
defines it as a command for the shell, not as a program and its arguments. An ``oauth``
object is our ``oauth`` table, with its keys also taken in the hosts' camelCase
(``clientId``, ``clientSecret``, ``callbackPort``); ``true`` works too.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Literal, cast

from mcpmount.config._problems import Loc, line, unknown_key
from mcpmount.config._read import Table
from mcpmount.config._settings import RegistrySettings
from mcpmount.config._spec import ServerSpec
from mcpmount.config._tables import Tables
from mcpmount.naming import MAX_NAMESPACE_LENGTH

_HOST_ONLY_KEYS = frozenset({"disabled", "autoApprove", "alwaysAllow", "timeout", "description"})
"""Keys MCP hosts add to ``mcpServers`` entries that mean nothing here; they are ignored."""

_HOST_KEYS = (
    "command",
    "args",
    "env",
    "cwd",
    "url",
    "headers",
    "headersHelper",
    "oauth",
    "type",
    "enabledTools",
    "disabledTools",
)

_RENAMED = {
    "enabledTools": "tools",
    "disabledTools": "exclude_tools",
    "headersHelper": "headers_command",
}
"""Host keys that mean what one of ours means, under another name."""

_OAUTH_KEYS = {
    "clientId": "client_id",
    "clientSecret": "client_secret",
    "callbackPort": "callback_port",
}
"""An ``oauth`` object's keys as hosts spell them, and as we do."""

_HOST_TYPES: Mapping[str, Literal["stdio", "http", "sse"]] = {
    "stdio": "stdio",
    "http": "http",
    "streamable-http": "http",
    "streamableHttp": "http",
    "sse": "sse",
}
"""Each ``type`` hosts write, as our ``transport``."""

_INVALID_RUN = re.compile(r"[^a-z0-9_-]+|_{2,}")
_LEADING_NON_LETTERS = re.compile(r"^[^a-z]+")


def _derive_namespace(name: str) -> str:
    """Return a namespace for an MCP host's server name (``"GitHub Tools"`` -> ``github-tools``).

    The result is a valid namespace, or empty when the name has no ASCII letter.
    """
    namespace = _INVALID_RUN.sub("-", name.lower())
    namespace = _LEADING_NON_LETTERS.sub("", namespace)
    return namespace[:MAX_NAMESPACE_LENGTH].rstrip("-_")


def read_host_file(
    document: Table, tables: Tables
) -> tuple[RegistrySettings | None, dict[str, ServerSpec]]:
    """Return the settings (from ``MCPMOUNT_*`` only) and the servers of a host file."""
    # Other top-level keys are the host's own settings (Claude Desktop keeps many there).
    settings = tables.settings({}, prefix=())
    if "mcpServers" not in document:
        tables.problems.append(
            'mcpServers: is required (an MCP host file is {"mcpServers": {...}})'
        )
        return settings, {}
    servers: dict[str, ServerSpec] = {}
    names: dict[str, str] = {}
    for name, raw in (tables.table(document["mcpServers"], ("mcpServers",)) or {}).items():
        loc = ("mcpServers", name)
        data = tables.table(raw, loc)
        if data is None or (data := _our_keys(data, loc, tables.problems)) is None:
            continue
        namespace = _derive_namespace(name)
        if not namespace:
            tables.problems.append(line(loc, "cannot derive a namespace: no ASCII letter"))
        elif (other := names.setdefault(namespace, name)) != name:
            tables.problems.append(
                line(
                    loc,
                    f"{json.dumps(other)} and {json.dumps(name)} both become "
                    f"the namespace {namespace!r}; rename one",
                )
            )
        spelt = {"transport": "type"} | {ours: theirs for theirs, ours in _RENAMED.items()}
        spec = tables.server(data, loc, spelt=spelt)
        if spec is not None and namespace and names[namespace] == name:
            servers[namespace] = spec
    return settings, servers


def _our_keys(entry: Table, loc: Loc, problems: list[str]) -> Table | None:
    """Return an ``mcpServers`` entry in our keys, or None if it is disabled or broken."""
    disabled = entry.get("disabled", False)
    if not isinstance(disabled, bool):
        problems.append(line((*loc, "disabled"), "must be true or false"))
    elif disabled:
        return None
    data: Table = {}
    for key, value in entry.items():
        if key in _HOST_KEYS:
            data[_RENAMED.get(key, key)] = value
        elif key not in _HOST_ONLY_KEYS:
            problems.append(line((*loc, key), unknown_key(key, _HOST_KEYS)))
    if "type" in data:
        kind = data.pop("type")
        if not isinstance(kind, str) or kind not in _HOST_TYPES:
            expected = ", ".join(map(repr, _HOST_TYPES))
            problems.append(line((*loc, "type"), f"must be one of {expected}"))
            return None
        data["transport"] = _HOST_TYPES[kind]
    if "headers_command" in data:
        helper = data["headers_command"]
        if not isinstance(helper, str):
            problems.append(line((*loc, "headersHelper"), "must be a string (a shell command)"))
            return None
        data["headers_command"] = ["/bin/sh", "-c", helper]
    if isinstance(oauth := data.get("oauth"), dict):
        table = cast("Table", oauth)
        data["oauth"] = {_OAUTH_KEYS.get(key, key): value for key, value in table.items()}
    return data
