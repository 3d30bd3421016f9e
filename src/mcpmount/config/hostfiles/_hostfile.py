"""MCP host files, in each host's format (`HostFormat`): `read_host_file`.

Most hosts keep their servers under ``mcpServers`` (Claude Desktop's
``claude_desktop_config.json``, Claude Code's ``.mcp.json`` and ``~/.claude.json``,
Cursor's ``mcp.json``); VS Code's ``mcp.json`` keeps them under ``servers``, beside the
``inputs`` its ``${input:id}`` variables ask for. Claude Code keeps a project's own servers
deeper, under ``projects.<folder>.mcpServers`` of ``~/.claude.json``: ``within`` names the
object that holds them.

The other hosts keep theirs under a key of their own (`Dialect.key`): Zed's
``context_servers``, Codex's ``mcp_servers``, goose's ``extensions``, or a list of
``mcpServers`` each naming itself (Continue).

Each entry is a server under a name of the host's choosing; its namespace is derived from
that name. The entry itself is put in our keys by its format's reader (`Dialect.entry`:
`host_entry` for the ``mcpServers`` JSON, and one per other format); its values may use
the variables of every host (`HostVariables`): ``${VAR}`` and ``${VAR:-default}`` (Claude
Code), ``${env:VAR}``, ``${userHome}`` and ``${workspaceFolder}`` (Cursor, VS Code,
Windsurf) and ``${input:id}`` (VS Code). A file with none of the keys its format keeps
servers under is no format that is read: its error names those that are (`FORMATS_READ`).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TypeAlias, cast

from mcpmount.config._settings import RegistrySettings
from mcpmount.config._spec import ServerSpec
from mcpmount.config._tables import Tables
from mcpmount.config.hostfiles._codex import CODEX_SPELT, codex_entry
from mcpmount.config.hostfiles._entrykeys import Place, not_mounted
from mcpmount.config.hostfiles._formats import FORMATS_READ, HostFormat
from mcpmount.config.hostfiles._gemini import GEMINI_SPELT, gemini_entry, gemini_excluded
from mcpmount.config.hostfiles._hostentry import RENAMED, host_entry, windsurf_entry
from mcpmount.config.hostfiles._yamlhosts import (
    CONTINUE_SPELT,
    GOOSE_SPELT,
    continue_entry,
    goose_entry,
)
from mcpmount.config.hostfiles._zed import zed_entry
from mcpmount.configfile import HostVariables, InputPrompt, Loc, Table, line, read_inputs
from mcpmount.naming import MAX_NAMESPACE_LENGTH

__all__ = ["read_host_file"]

_INVALID_RUN = re.compile(r"[^a-z0-9_-]+|_{2,}")
_LEADING_NON_LETTERS = re.compile(r"^[^a-z]+")

_SPELT = {"transport": "type"} | {ours: theirs for theirs, ours in RENAMED.items()}
"""Our keys as the ``mcpServers`` JSON spells them, to name them in problems."""

EntryReader: TypeAlias = Callable[[Table, Place], "Table | None"]
"""Puts one entry of a host file in our keys; None when it is not mounted (said in a
note) or broken (said in a problem)."""


@dataclass(frozen=True, slots=True)
class Dialect:
    """How one format keeps its servers, and reads each."""

    key: str
    """The key of the object (or, in Continue's YAML, the list) that holds the servers."""

    entry: EntryReader
    """Puts one entry in our keys."""

    spelt: Mapping[str, str]
    """Our keys as the format spells them, to name them in problems."""


_DIALECTS: Mapping[HostFormat, Dialect] = {
    HostFormat.MCP_JSON: Dialect("mcpServers", host_entry, _SPELT),
    HostFormat.WINDSURF: Dialect("mcpServers", windsurf_entry, _SPELT),
    HostFormat.GEMINI: Dialect("mcpServers", gemini_entry, GEMINI_SPELT),
    HostFormat.ZED: Dialect("context_servers", zed_entry, {}),
    HostFormat.CODEX: Dialect("mcp_servers", codex_entry, CODEX_SPELT),
    HostFormat.GOOSE: Dialect("extensions", goose_entry, GOOSE_SPELT),
    HostFormat.CONTINUE: Dialect("mcpServers", continue_entry, CONTINUE_SPELT),
}


def _derive_namespace(name: str) -> str:
    """Return a namespace for an MCP host's server name (``"GitHub Tools"`` -> ``github-tools``).

    The result is a valid namespace, or empty when the name has no ASCII letter.
    """
    namespace = _INVALID_RUN.sub("-", name.lower())
    namespace = _LEADING_NON_LETTERS.sub("", namespace)
    return namespace[:MAX_NAMESPACE_LENGTH].rstrip("-_")


def read_host_file(
    document: Table,
    tables: Tables,
    *,
    host_format: HostFormat = HostFormat.MCP_JSON,
    within: Sequence[str] = (),
    workspace: Path,
    ask: InputPrompt | None,
) -> tuple[RegistrySettings | None, dict[str, ServerSpec]]:
    """Return the settings (from ``MCPMOUNT_*`` only) and the servers of a host file.

    Args:
        document: The file's top-level object.
        tables: Where its problems and notes go.
        host_format: The host's format, which says where its servers are and what their keys
            mean.
        within: The keys of the object that holds the servers; none for the top level.
        workspace: What ``${workspaceFolder}`` names.
        ask: Asks the user for an ``${input:id}``; None where nobody can be asked.
    """
    # Other top-level keys are the host's own settings (Claude Desktop keeps many there).
    settings = tables.settings({}, prefix=())
    holder, at = _holder(document, tuple(within), tables)
    if holder is None:
        return settings, {}
    dialect = _DIALECTS[host_format]
    key = None
    if host_format is HostFormat.MCP_JSON:
        key = _servers_key(holder, at, tables.problems)
    else:
        key = dialect.key if dialect.key in holder else None
        if key is None:
            tables.problems.append(_no_servers(at, dialect.key))
    if key is None:
        return settings, {}
    inputs = read_inputs(holder["inputs"], tables.problems) if "inputs" in holder else {}
    host = HostVariables(workspace=workspace, inputs=inputs, ask=ask)
    excluded = gemini_excluded(holder, tables) if host_format is HostFormat.GEMINI else {}
    servers: dict[str, ServerSpec] = {}
    names: dict[str, str] = {}
    for name, loc, raw in _entries(holder[key], (*at, key), tables):
        data = tables.table(raw, loc)
        if data is None:
            continue
        if name in excluded:
            not_mounted(tables, loc, excluded[name])
            continue
        if (data := dialect.entry(data, Place(loc, tables, host, settings))) is None:
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
        spec = tables.server(data, loc, spelt=dialect.spelt, host=host)
        if spec is not None and namespace and names[namespace] == name:
            servers[namespace] = spec
    return settings, servers


def _entries(servers: object, loc: Loc, tables: Tables) -> Iterator[tuple[str, Loc, object]]:
    """Yield each entry of the servers' object (by its key) or list (by its ``name``)."""
    if not isinstance(servers, list):
        for name, raw in (tables.table(servers, loc) or {}).items():
            yield name, (*loc, name), raw
        return
    for i, raw in enumerate(cast("list[object]", servers)):
        if isinstance(raw, dict):
            entry = cast("Table", raw)
            name = entry.get("name")
            if not isinstance(name, str) or not name:
                tables.problems.append(line((*loc, i, "name"), "is required (a string)"))
                continue
            yield name, (*loc, i), {key: value for key, value in entry.items() if key != "name"}
        else:
            yield str(i), (*loc, i), raw


def _no_servers(at: Loc, key: str) -> str:
    """The problem of a file with no servers where its format keeps them."""
    formats = "; ".join(FORMATS_READ)
    return line((*at, key), f"is required: this file is no format mcpmount reads ({formats})")


def _holder(document: Table, within: Loc, tables: Tables) -> tuple[Table | None, Loc]:
    """Return the object at ``within`` (None after adding the problem), and its location."""
    holder: Table | None = document
    for depth, key in enumerate(within):
        assert holder is not None
        if key not in holder:
            tables.problems.append(line(within[: depth + 1], "not found"))
            return None, within
        holder = tables.table(holder[key], within[: depth + 1])
        if holder is None:
            return None, within
    return holder, within


def _servers_key(holder: Table, at: Loc, problems: list[str]) -> str | None:
    """Return the key that holds the servers: ``mcpServers``, or VS Code's ``servers``."""
    if "mcpServers" in holder and "servers" in holder:
        problems.append(
            line(
                at,
                'has both "mcpServers" and "servers" (VS Code\'s); keep the one its host reads',
            )
        )
        return None
    if "mcpServers" in holder:
        return "mcpServers"
    if "servers" in holder:
        return "servers"
    problems.append(_no_servers(at, "mcpServers"))
    return None
