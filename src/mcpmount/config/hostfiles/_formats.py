"""The formats of the hosts' files that are read: `HostFormat`, and telling them apart.

A host file is found by its host (``mcpmount check --from HOST`` knows whose file it
reads), or given by path; a file given by path is told by its syntax and its keys
(`sniff_format`): a key no other format has (``context_servers``, ``mcp_servers``,
``extensions``, an entry's ``httpUrl`` or ``serverUrl``), else the folder the host keeps
it in (``.gemini/settings.json``, ``.codeium/windsurf/``, ``zed/settings.json``), else
the ``mcpServers`` JSON most hosts share.
"""

from __future__ import annotations

from enum import StrEnum
from pathlib import Path
from typing import cast

from mcpmount.configfile import Table

__all__ = ["FORMATS_READ", "HostFormat", "sniff_format"]


class HostFormat(StrEnum):
    """How a host's file keeps its servers, and what its keys mean."""

    MCP_JSON = "mcp-json"
    """``{"mcpServers": {...}}`` (Claude Desktop, Claude Code, Cursor, LM Studio, a
    Continue JSON block) or VS Code's ``{"servers": {...}, "inputs": [...]}``."""

    WINDSURF = "windsurf"
    """``mcpServers`` JSON, with a remote server's URL under ``serverUrl``."""

    GEMINI = "gemini"
    """Gemini CLI's ``settings.json``: ``url`` is legacy SSE, ``httpUrl`` streamable HTTP."""

    ZED = "zed"
    """Zed's ``settings.json`` (JSON with comments): ``context_servers``."""

    CODEX = "codex"
    """OpenAI Codex's ``config.toml``: ``[mcp_servers.<name>]`` tables."""

    GOOSE = "goose"
    """goose's ``config.yaml``: ``extensions``, each with its ``type``."""

    CONTINUE = "continue"
    """Continue's ``config.yaml`` or YAML block: a list of ``mcpServers``."""


FORMATS_READ = (
    "mcpmount TOML ([servers.<name>])",
    'MCP host JSON ({"mcpServers": {...}}: Claude Desktop, Claude Code, Cursor, Windsurf, '
    "Gemini CLI, LM Studio)",
    'VS Code JSON ({"servers": {...}})',
    'Zed settings JSON ({"context_servers": {...}})',
    "OpenAI Codex TOML ([mcp_servers.<name>])",
    "goose YAML (extensions:)",
    "Continue YAML (mcpServers: - name: ...)",
)
"""Every format a config file may be in, for the error of a file that is none of them."""

_KEYED = {"context_servers": HostFormat.ZED, "mcp_servers": HostFormat.CODEX}


def sniff_format(document: Table, syntax: str, path: Path) -> HostFormat | None:
    """Return the host format of a file given by path, or None for our own TOML (or a
    file that is no known format: its reader says so).

    Args:
        document: The file's top-level table.
        syntax: ``toml``, ``json`` or ``yaml``.
        path: The file, whose folder names the host where the keys do not.
    """
    for key, found in _KEYED.items():
        if key in document:
            return found
    if syntax == "toml":
        return HostFormat.CODEX if path.parent.name == ".codex" else None
    if syntax == "yaml":
        if "extensions" in document:
            return HostFormat.GOOSE
        return HostFormat.CONTINUE
    servers = document.get("mcpServers")
    entries = cast("dict[str, object]", servers).values() if isinstance(servers, dict) else ()
    keys = {key for entry in entries if isinstance(entry, dict) for key in cast("Table", entry)}
    folder = path.absolute().parent
    settings = path.name == "settings.json"
    if "httpUrl" in keys or (settings and folder.name == ".gemini"):
        return HostFormat.GEMINI
    if "serverUrl" in keys or (folder.name == "windsurf" and folder.parent.name == ".codeium"):
        return HostFormat.WINDSURF
    if settings and folder.name in ("zed", "Zed", ".zed"):
        return HostFormat.ZED
    return HostFormat.MCP_JSON
