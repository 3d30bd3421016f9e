"""MCP host files: the JSON that Claude Desktop, Claude Code, Cursor and VS Code keep.

Most hosts keep their servers under ``mcpServers`` (Claude Desktop's
``claude_desktop_config.json``, Claude Code's ``.mcp.json`` and ``~/.claude.json``,
Cursor's ``mcp.json``); VS Code's ``mcp.json`` keeps them under ``servers``, beside the
``inputs`` its ``${input:id}`` variables ask for. Claude Code keeps a project's own servers
deeper, under ``projects.<folder>.mcpServers`` of ``~/.claude.json``: ``within`` names the
object that holds them.

Each entry is a server under a name of the host's choosing; its namespace is derived from
that name. The entry itself is read by `host_entry`; its values may use the variables of
every host (`HostVariables`): ``${VAR}`` and ``${VAR:-default}`` (Claude Code),
``${env:VAR}``, ``${userHome}`` and ``${workspaceFolder}`` (Cursor, VS Code) and
``${input:id}`` (VS Code).
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from pathlib import Path

from mcpmount.config._settings import RegistrySettings
from mcpmount.config._spec import ServerSpec
from mcpmount.config._tables import Tables
from mcpmount.config.hostfiles._hostentry import RENAMED, host_entry
from mcpmount.configfile import Asker, HostVariables, Loc, Table, line, read_inputs
from mcpmount.naming import MAX_NAMESPACE_LENGTH

__all__ = ["read_host_file"]

_INVALID_RUN = re.compile(r"[^a-z0-9_-]+|_{2,}")
_LEADING_NON_LETTERS = re.compile(r"^[^a-z]+")

_SPELT = {"transport": "type"} | {ours: theirs for theirs, ours in RENAMED.items()}
"""Our keys as host files spell them, to name them in problems."""


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
    within: Sequence[str] = (),
    workspace: Path,
    ask: Asker | None,
) -> tuple[RegistrySettings | None, dict[str, ServerSpec]]:
    """Return the settings (from ``MCPMOUNT_*`` only) and the servers of a host file.

    Args:
        document: The file's top-level object.
        tables: Where its problems and notes go.
        within: The keys of the object that holds the servers; none for the top level.
        workspace: What ``${workspaceFolder}`` names.
        ask: Asks the user for an ``${input:id}``; None where nobody can be asked.
    """
    # Other top-level keys are the host's own settings (Claude Desktop keeps many there).
    settings = tables.settings({}, prefix=())
    holder, at = _holder(document, tuple(within), tables)
    if holder is None:
        return settings, {}
    key = _servers_key(holder, at, tables.problems)
    if key is None:
        return settings, {}
    inputs = read_inputs(holder["inputs"], tables.problems) if "inputs" in holder else {}
    host = HostVariables(workspace=workspace, inputs=inputs, ask=ask)
    servers: dict[str, ServerSpec] = {}
    names: dict[str, str] = {}
    for name, raw in (tables.table(holder[key], (*at, key)) or {}).items():
        loc = (*at, key, name)
        data = tables.table(raw, loc)
        if data is None or (data := host_entry(data, loc, tables, host, settings)) is None:
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
        spec = tables.server(data, loc, spelt=_SPELT, host=host)
        if spec is not None and namespace and names[namespace] == name:
            servers[namespace] = spec
    return settings, servers


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
    problems.append(
        line(
            (*at, "mcpServers"),
            'is required (an MCP host file is {"mcpServers": {...}}, '
            'or VS Code\'s {"servers": {...}})',
        )
    )
    return None
