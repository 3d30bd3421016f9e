"""Gemini CLI's ``settings.json``: its ``mcpServers``, read as Gemini CLI reads them.

As geminicli.com/docs/tools/mcp-server (the repository's ``docs/tools/mcp-server.md``,
"Configuration Properties") defines them, which differ from other hosts' same keys:

- ``url`` is the legacy SSE transport there, ``httpUrl`` streamable HTTP; given both,
  Gemini CLI takes ``httpUrl`` (a note says ``url`` is not used).
- ``timeout`` is in milliseconds, per request: our ``call_timeout``, in seconds.
- ``includeTools`` and ``excludeTools`` are our ``tools`` and ``exclude_tools``.
- ``trust: true`` runs every tool of the server without asking: our ``auto_approve =
  ["*"]``, which exempts them from the approval gate; a note says so, and says when no
  gate is configured (then it changes nothing).
- ``$VAR`` and ``${VAR}`` are expanded in every value (Gemini CLI expands its whole
  settings file); ``$VAR`` becomes ``${VAR}`` here.
- ``oauth`` gives the login's ``clientId``, ``clientSecret`` and ``scopes``; its
  endpoints are discovered here, so the others are not used (a note says which).
  ``authProviderType`` other than ``dynamic_discovery`` signs in with Google's own
  credentials, which mcpmount cannot: such a server is not mounted, and a note says why.
- The top-level ``mcp.excluded`` (or the older ``excludeMCPServers``) leaves servers
  out; ``mcp.allowed`` (``allowMCPServers``) leaves out every server it does not name.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import cast

from mcpmount.config._settings import RegistrySettings
from mcpmount.config._tables import Tables
from mcpmount.config.hostfiles._entrykeys import Place, names, not_mounted, seconds
from mcpmount.configfile import Loc, Table, format_loc, line, unknown_key

__all__ = ["GEMINI_SPELT", "gemini_entry", "gemini_excluded"]

_SAME = ("command", "args", "env", "cwd", "headers")
_IGNORED = ("description", "extensionName", "targetAudience", "targetServiceAccount")
_KEYS = (
    *_SAME,
    *_IGNORED,
    "url",
    "httpUrl",
    "type",
    "timeout",
    "trust",
    "includeTools",
    "excludeTools",
    "oauth",
    "authProviderType",
)
_TYPES = {"sse": "sse", "http": "http", "stdio": "stdio"}
_OAUTH = {"clientId": "client_id", "clientSecret": "client_secret", "scopes": "scopes"}

GEMINI_SPELT: Mapping[str, str] = {
    "tools": "includeTools",
    "exclude_tools": "excludeTools",
    "call_timeout": "timeout",
    "auto_approve": "trust",
}
"""Our keys as Gemini CLI spells them, to name them in problems."""

_BARE = re.compile(r"(?<!\$)\$([A-Za-z_][A-Za-z0-9_]*)")
"""``$VAR``: a variable without braces (not after a ``$``, which would escape it)."""


def gemini_entry(entry: Table, at: Place) -> Table | None:
    """Return a Gemini CLI server entry in our keys, or None if it is not mounted or broken
    (see the module docstring)."""
    loc, tables = at.loc, at.tables
    before = len(tables.problems)
    where = format_loc(loc)
    provider = entry.get("authProviderType", "dynamic_discovery")
    if provider != "dynamic_discovery":
        why = (
            f"authProviderType {provider!r} signs in with Google credentials, which mcpmount cannot"
        )
        not_mounted(tables, loc, why)
        return None
    entry = cast("Table", _braced(entry))
    data: Table = {key: value for key, value in entry.items() if key in _SAME}
    for key in entry:
        if key not in _KEYS:
            tables.problems.append(line((*loc, key), unknown_key(key, _KEYS)))
    for key, transport in (("url", "sse"), ("httpUrl", "http")):
        if key in entry:
            data["url"], data["transport"] = entry[key], transport
    if "url" in entry and "httpUrl" in entry:
        tables.notes.append(f"{where}: url is not used: Gemini CLI takes httpUrl over it")
    if "type" in entry:
        kind = entry["type"]
        if not isinstance(kind, str) or kind not in _TYPES:
            tables.problems.append(line((*loc, "type"), "must be 'stdio', 'sse' or 'http'"))
        else:
            data["transport"] = _TYPES[kind]
    if "timeout" in entry:
        data["call_timeout"] = seconds(entry["timeout"], (*loc, "timeout"), tables, per=1000)
    for theirs, ours in (("includeTools", "tools"), ("excludeTools", "exclude_tools")):
        if theirs in entry:
            data[ours] = names(entry[theirs], (*loc, theirs), tables)
    _trust(entry, data, loc, tables, at.settings)
    if "oauth" in entry:
        _oauth(entry["oauth"], data, loc, tables)
    return data if len(tables.problems) == before else None


def gemini_excluded(document: Table, tables: Tables) -> dict[str, str]:
    """Return the servers the file's ``mcp.allowed`` and ``mcp.excluded`` (or the older
    ``allowMCPServers`` and ``excludeMCPServers``) leave out, each with why."""
    mcp = document.get("mcp", {})
    lists: dict[str, object] = {}
    if isinstance(mcp, dict):
        table = cast("Table", mcp)
        lists = {f"mcp.{key}": table[key] for key in ("allowed", "excluded") if key in table}
    for key in ("allowMCPServers", "excludeMCPServers"):
        if key in document:
            lists[key] = document[key]
    servers = document.get("mcpServers", {})
    every = list(cast("Table", servers)) if isinstance(servers, dict) else []
    out: dict[str, str] = {}
    for key, value in lists.items():
        given = names(value, tuple(key.split(".")), tables) or []
        if key in ("mcp.allowed", "allowMCPServers"):
            out |= {name: f"{key} does not name it" for name in every if name not in given}
        else:
            out |= dict.fromkeys(given, f"{key} names it")
    return out


def _trust(
    entry: Table, data: Table, loc: Loc, tables: Tables, settings: RegistrySettings | None
) -> None:
    trust = entry.get("trust", False)
    if not isinstance(trust, bool):
        tables.problems.append(line((*loc, "trust"), "must be true or false"))
        return
    if not trust:
        return
    data["auto_approve"] = ["*"]
    note = f"{format_loc(loc)}: trust: true lets every tool of it skip the approval gate"
    if settings is not None and settings.approval == "configured":
        note += (
            ", which changes nothing here: no gate is configured (MCPMOUNT_APPROVAL="
            "destructive or all would gate calls)"
        )
    tables.notes.append(note)


def _oauth(value: object, data: Table, loc: Loc, tables: Tables) -> None:
    where = (*loc, "oauth")
    table = tables.table(value, where)
    if table is None or table.get("enabled", True) is False:
        return
    data["oauth"] = {_OAUTH[key]: item for key, item in table.items() if key in _OAUTH}
    unused = [key for key in table if key not in _OAUTH and key != "enabled"]
    if unused:
        tables.notes.append(
            f"{format_loc(where)}: {', '.join(unused)} not used: mcpmount discovers the "
            "server's OAuth endpoints itself"
        )


def _braced(node: object) -> object:
    """Return ``node`` with every ``$VAR`` in its strings written ``${VAR}``."""
    if isinstance(node, str):
        return _BARE.sub(r"${\1}", node)
    if isinstance(node, dict):
        return {key: _braced(item) for key, item in cast("Table", node).items()}
    if isinstance(node, list):
        return [_braced(item) for item in cast("list[object]", node)]
    return node
