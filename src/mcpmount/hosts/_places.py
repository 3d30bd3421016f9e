"""Where each MCP host keeps its config files, by platform: `host_files`.

Each path is the one its host's documentation gives:

- Claude Desktop (modelcontextprotocol.io, "Connect to local MCP servers"; Settings,
  Developer, Edit Config opens it): ``claude_desktop_config.json`` in ``Claude`` under the
  application data folder: ``~/Library/Application Support`` on macOS, ``%APPDATA%`` on
  Windows, and on Linux, where Electron apps keep theirs, ``$XDG_CONFIG_HOME`` (else
  ``~/.config``).
- Claude Code (code.claude.com/docs/en/mcp, "MCP installation scopes"): the user scope is
  ``mcpServers`` of ``~/.claude.json``, the project scope the project's ``.mcp.json``, and
  the local scope ``projects.<project folder>.mcpServers`` of ``~/.claude.json``. Local
  wins over project, project over user.
- Cursor (cursor.com/docs/context/mcp, "Configuration locations"): ``~/.cursor/mcp.json``
  for every project, ``.cursor/mcp.json`` in the project; the project's wins.
- VS Code (code.visualstudio.com/docs/copilot/reference/mcp-configuration): the
  workspace's ``.vscode/mcp.json`` and the user profile's ``mcp.json``, in ``Code/User``
  under the application data folder (as Claude Desktop's); the workspace's wins here.
  Profiles other than the default keep theirs under ``Code/User/profiles/<id>/``.

The project is the current directory.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path

__all__ = ["Host", "HostFile", "app_data", "host_files"]


class Host(StrEnum):
    """An MCP host whose config files mcpmount reads and writes."""

    CLAUDE_DESKTOP = "claude-desktop"
    CLAUDE_CODE = "claude-code"
    CURSOR = "cursor"
    VSCODE = "vscode"

    @property
    def label(self) -> str:
        """The host's name as people write it."""
        return _TITLES[self]


_TITLES = {
    Host.CLAUDE_DESKTOP: "Claude Desktop",
    Host.CLAUDE_CODE: "Claude Code",
    Host.CURSOR: "Cursor",
    Host.VSCODE: "VS Code",
}


@dataclass(frozen=True, slots=True)
class HostFile:
    """One config file of a host, and where in it the servers are."""

    host: Host
    """Whose file it is."""

    path: Path
    """The file."""

    scope: str
    """Which of the host's scopes it holds: ``user``, ``project`` or (Claude Code) ``local``."""

    within: tuple[str, ...] = ()
    """The keys of the object that holds the servers; none for the top level."""

    workspace: Path | None = None
    """What ``${workspaceFolder}`` names in it; None for the folder the file is in."""

    @property
    def key(self) -> str:
        """The key its servers are under: VS Code's ``servers``, every other host's
        ``mcpServers``."""
        return "servers" if self.host is Host.VSCODE else "mcpServers"

    def __str__(self) -> str:
        where = "".join(f"[{key!r}]" for key in self.within)
        return f"{self.path}{where} ({self.scope})"


def app_data(home: Path, environ: Mapping[str, str], platform: str) -> Path:
    """Return the folder desktop apps (Electron's ``appData``) keep their settings in."""
    if platform == "darwin":
        return home / "Library" / "Application Support"
    if platform == "win32":
        return Path(environ.get("APPDATA") or home / "AppData" / "Roaming")
    return Path(environ.get("XDG_CONFIG_HOME") or home / ".config")


def host_files(
    host: Host,
    *,
    home: Path | None = None,
    cwd: Path | None = None,
    environ: Mapping[str, str] | None = None,
    platform: str | None = None,
) -> list[HostFile]:
    """Return the files ``host`` reads its servers from, the one that wins last.

    Args:
        host: The host.
        home: The user's home folder; defaults to ``Path.home()``.
        cwd: The project folder; defaults to the current directory.
        environ: Where ``APPDATA`` and ``XDG_CONFIG_HOME`` are read; defaults to
            ``os.environ``.
        platform: ``sys.platform`` of the machine the host runs on; defaults to this one's.
    """
    platform = sys.platform if platform is None else platform
    home = Path.home() if home is None else home
    cwd = Path.cwd() if cwd is None else cwd.absolute()
    environ = os.environ if environ is None else environ
    match host:
        case Host.CLAUDE_DESKTOP:
            folder = app_data(home, environ, platform) / "Claude"
            return [HostFile(host, folder / "claude_desktop_config.json", "user")]
        case Host.CLAUDE_CODE:
            claude_json = home / ".claude.json"
            return [
                HostFile(host, claude_json, "user", workspace=cwd),
                HostFile(host, cwd / ".mcp.json", "project"),
                HostFile(host, claude_json, "local", ("projects", str(cwd)), workspace=cwd),
            ]
        case Host.CURSOR:
            return [
                HostFile(host, home / ".cursor" / "mcp.json", "user", workspace=cwd),
                HostFile(host, cwd / ".cursor" / "mcp.json", "project"),
            ]
        case Host.VSCODE:
            user = app_data(home, environ, platform) / "Code" / "User" / "mcp.json"
            return [
                HostFile(host, user, "user", workspace=cwd),
                HostFile(host, cwd / ".vscode" / "mcp.json", "project"),
            ]
