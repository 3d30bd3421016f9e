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
- Windsurf (docs.windsurf.com, "Cascade MCP integration"): ``~/.codeium/windsurf/mcp_config.json``
  on every platform (``%USERPROFILE%`` on Windows); it has no project file.
- Zed (zed.dev/docs/ai/mcp and "Configuring Zed"): ``context_servers`` of its
  ``settings.json`` (JSON with comments), in ``zed`` under ``$XDG_CONFIG_HOME`` (else
  ``~/.config``) on Linux, ``~/.config/zed`` on macOS, ``%APPDATA%\\Zed`` on Windows; and
  of the project's ``.zed/settings.json``, which wins.
- OpenAI Codex (developers.openai.com/codex/mcp, "Configuration"): ``[mcp_servers.<name>]``
  tables of ``config.toml`` in ``$CODEX_HOME`` (else ``~/.codex``), and of a trusted
  project's ``.codex/config.toml``, which wins.
- Gemini CLI (geminicli.com/docs/cli/configuration, "Settings files"): ``mcpServers`` of
  ``~/.gemini/settings.json``, then the project's ``.gemini/settings.json``, then the
  system file, which overrides both: ``/etc/gemini-cli/settings.json`` on Linux,
  ``/Library/Application Support/GeminiCli/settings.json`` on macOS,
  ``C:\\ProgramData\\gemini-cli\\settings.json`` on Windows, or
  ``$GEMINI_CLI_SYSTEM_SETTINGS_PATH``.
- goose (block.github.io/goose/docs/guides/config-files): ``extensions`` of
  ``~/.config/goose/config.yaml`` on macOS and Linux (``$XDG_CONFIG_HOME/goose`` when
  set), ``%APPDATA%\\Block\\goose\\config\\config.yaml`` on Windows; no project file.
- Continue (docs.continue.dev/customize/deep-dives/mcp): the ``mcpServers`` list of
  ``~/.continue/config.yaml``, then each block file in the workspace's
  ``.continue/mcpServers/`` folder (``*.yaml``, ``*.yml``, or ``*.json`` in the
  ``mcpServers`` shape other hosts use), in name order.
- LM Studio (lmstudio.ai/docs/app/plugins/mcp): ``~/.lmstudio/mcp.json``, in Cursor's
  ``mcpServers`` shape (``%USERPROFILE%\\.lmstudio`` on Windows).

The project is the current directory.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path

from mcpmount.config import HostFormat

__all__ = ["HostApp", "HostFile", "app_data", "host_files"]


class HostApp(StrEnum):
    """An MCP host whose config files mcpmount reads and writes."""

    CLAUDE_DESKTOP = "claude-desktop"
    CLAUDE_CODE = "claude-code"
    CURSOR = "cursor"
    VSCODE = "vscode"
    WINDSURF = "windsurf"
    ZED = "zed"
    CODEX = "codex"
    GEMINI = "gemini"
    GOOSE = "goose"
    CONTINUE = "continue"
    LM_STUDIO = "lm-studio"

    @property
    def label(self) -> str:
        """The host's name as people write it."""
        return _TITLES[self]


_TITLES = {
    HostApp.CLAUDE_DESKTOP: "Claude Desktop",
    HostApp.CLAUDE_CODE: "Claude Code",
    HostApp.CURSOR: "Cursor",
    HostApp.VSCODE: "VS Code",
    HostApp.WINDSURF: "Windsurf",
    HostApp.ZED: "Zed",
    HostApp.CODEX: "OpenAI Codex",
    HostApp.GEMINI: "Gemini CLI",
    HostApp.GOOSE: "goose",
    HostApp.CONTINUE: "Continue",
    HostApp.LM_STUDIO: "LM Studio",
}

_KEYS = {
    HostApp.VSCODE: "servers",
    HostApp.ZED: "context_servers",
    HostApp.CODEX: "mcp_servers",
    HostApp.GOOSE: "extensions",
}
"""The key each host keeps its servers under, where it is not ``mcpServers``."""


@dataclass(frozen=True, slots=True)
class HostFile:
    """One config file of a host, and where in it the servers are."""

    host: HostApp
    """Whose file it is."""

    path: Path
    """The file."""

    scope: str
    """Which of the host's scopes it holds: ``user``, ``project``, (Claude Code) ``local``
    or (Gemini CLI) ``system``."""

    within: tuple[str, ...] = ()
    """The keys of the object that holds the servers; none for the top level."""

    workspace: Path | None = None
    """What ``${workspaceFolder}`` names in it; None for the folder the file is in."""

    @property
    def key(self) -> str:
        """The key its servers are under: VS Code's ``servers``, Zed's ``context_servers``,
        Codex's ``mcp_servers``, goose's ``extensions``, every other host's ``mcpServers``
        (a list in Continue's YAML, an object everywhere else)."""
        if self.host is HostApp.CONTINUE and self.path.suffix.lower() == ".json":
            return "mcpServers"
        return _KEYS.get(self.host, "mcpServers")

    @property
    def format(self) -> HostFormat:
        """How the file is read: the host's own format (`HostFormat`)."""
        if self.host is HostApp.CONTINUE and self.path.suffix.lower() == ".json":
            return HostFormat.MCP_JSON  # a block copied from another host, as it was
        return _FORMATS.get(self.host, HostFormat.MCP_JSON)

    def __str__(self) -> str:
        where = "".join(f"[{key!r}]" for key in self.within)
        return f"{self.path}{where} ({self.scope})"


_FORMATS = {
    HostApp.WINDSURF: HostFormat.WINDSURF,
    HostApp.ZED: HostFormat.ZED,
    HostApp.CODEX: HostFormat.CODEX,
    HostApp.GEMINI: HostFormat.GEMINI,
    HostApp.GOOSE: HostFormat.GOOSE,
    HostApp.CONTINUE: HostFormat.CONTINUE,
}
"""Each host's format, where it is not the ``mcpServers`` JSON of Claude's and Cursor's."""


def app_data(home: Path, environ: Mapping[str, str], platform: str) -> Path:
    """Return the folder desktop apps (Electron's ``appData``) keep their settings in."""
    if platform == "darwin":
        return home / "Library" / "Application Support"
    if platform == "win32":
        return Path(environ.get("APPDATA") or home / "AppData" / "Roaming")
    return Path(environ.get("XDG_CONFIG_HOME") or home / ".config")


def host_files(
    host: HostApp,
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
        environ: Where ``APPDATA``, ``XDG_CONFIG_HOME``, ``CODEX_HOME`` and
            ``GEMINI_CLI_SYSTEM_SETTINGS_PATH`` are read; defaults to ``os.environ``.
        platform: ``sys.platform`` of the machine the host runs on; defaults to this one's.
    """
    platform = sys.platform if platform is None else platform
    home = Path.home() if home is None else home
    cwd = Path.cwd() if cwd is None else cwd.absolute()
    environ = os.environ if environ is None else environ
    match host:
        case HostApp.CLAUDE_DESKTOP:
            folder = app_data(home, environ, platform) / "Claude"
            return [HostFile(host, folder / "claude_desktop_config.json", "user")]
        case HostApp.CLAUDE_CODE:
            claude_json = home / ".claude.json"
            return [
                HostFile(host, claude_json, "user", workspace=cwd),
                HostFile(host, cwd / ".mcp.json", "project"),
                HostFile(host, claude_json, "local", ("projects", str(cwd)), workspace=cwd),
            ]
        case HostApp.CURSOR:
            return [
                HostFile(host, home / ".cursor" / "mcp.json", "user", workspace=cwd),
                HostFile(host, cwd / ".cursor" / "mcp.json", "project"),
            ]
        case HostApp.VSCODE:
            user = app_data(home, environ, platform) / "Code" / "User" / "mcp.json"
            return [
                HostFile(host, user, "user", workspace=cwd),
                HostFile(host, cwd / ".vscode" / "mcp.json", "project"),
            ]
        case HostApp.WINDSURF:
            path = home / ".codeium" / "windsurf" / "mcp_config.json"
            return [HostFile(host, path, "user", workspace=cwd)]
        case HostApp.ZED:
            return [
                HostFile(
                    host,
                    _zed_folder(home, environ, platform) / "settings.json",
                    "user",
                    workspace=cwd,
                ),
                HostFile(host, cwd / ".zed" / "settings.json", "project", workspace=cwd),
            ]
        case HostApp.CODEX:
            codex_home = Path(environ.get("CODEX_HOME") or home / ".codex")
            return [
                HostFile(host, codex_home / "config.toml", "user", workspace=cwd),
                HostFile(host, cwd / ".codex" / "config.toml", "project", workspace=cwd),
            ]
        case HostApp.GEMINI:
            return [
                HostFile(host, home / ".gemini" / "settings.json", "user", workspace=cwd),
                HostFile(host, cwd / ".gemini" / "settings.json", "project", workspace=cwd),
                HostFile(host, _gemini_system(environ, platform), "system", workspace=cwd),
            ]
        case HostApp.GOOSE:
            if platform == "win32":
                folder = app_data(home, environ, platform) / "Block" / "goose" / "config"
            else:
                folder = Path(environ.get("XDG_CONFIG_HOME") or home / ".config") / "goose"
            return [HostFile(host, folder / "config.yaml", "user", workspace=cwd)]
        case HostApp.CONTINUE:
            blocks = cwd / ".continue" / "mcpServers"
            found = sorted(blocks.glob("*")) if blocks.is_dir() else []
            return [
                HostFile(host, home / ".continue" / "config.yaml", "user", workspace=cwd),
                *(
                    HostFile(host, path, "project", workspace=cwd)
                    for path in found
                    if path.suffix.lower() in (".yaml", ".yml", ".json")
                ),
            ]
        case HostApp.LM_STUDIO:
            return [HostFile(host, home / ".lmstudio" / "mcp.json", "user", workspace=cwd)]


def _zed_folder(home: Path, environ: Mapping[str, str], platform: str) -> Path:
    """Return the folder of Zed's own settings: only Linux honours ``XDG_CONFIG_HOME``
    (and Flatpak's own), macOS keeps ``~/.config/zed``, Windows the roaming app data."""
    if platform == "win32":
        return app_data(home, environ, platform) / "Zed"
    if platform.startswith("linux"):
        base = environ.get("FLATPAK_XDG_CONFIG_HOME") or environ.get("XDG_CONFIG_HOME")
        return Path(base or home / ".config") / "zed"
    return home / ".config" / "zed"


def _gemini_system(environ: Mapping[str, str], platform: str) -> Path:
    """Return Gemini CLI's system settings file, which overrides the user's and project's."""
    if given := environ.get("GEMINI_CLI_SYSTEM_SETTINGS_PATH"):
        return Path(given)
    if platform == "win32":
        return Path("C:/ProgramData/gemini-cli/settings.json")
    if platform == "darwin":
        return Path("/Library/Application Support/GeminiCli/settings.json")
    return Path("/etc/gemini-cli/settings.json")
