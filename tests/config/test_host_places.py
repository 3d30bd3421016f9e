"""Where each host keeps its servers, per platform, as its documentation says
(`mcpmount.hosts.host_files`): the files, their scope, the key of the servers and the
format each is read in."""

from __future__ import annotations

from pathlib import Path

import pytest

from mcpmount.config import HostFormat
from mcpmount.config.hostfiles import sniff_format
from mcpmount.hosts import HostApp, host_files

HOME, PROJECT = Path("/home/ada"), Path("/work/app")

Row = tuple[str, str, str, HostFormat]
"""A file as ``host_files`` gives it: its path, its scope, its key and its format."""

PLACES: dict[tuple[HostApp, str], list[Row]] = {
    (HostApp.WINDSURF, "linux"): [
        ("/home/ada/.codeium/windsurf/mcp_config.json", "user", "mcpServers", HostFormat.WINDSURF)
    ],
    (HostApp.WINDSURF, "win32"): [
        ("/home/ada/.codeium/windsurf/mcp_config.json", "user", "mcpServers", HostFormat.WINDSURF)
    ],
    (HostApp.ZED, "linux"): [
        ("/xdg/zed/settings.json", "user", "context_servers", HostFormat.ZED),
        ("/work/app/.zed/settings.json", "project", "context_servers", HostFormat.ZED),
    ],
    (HostApp.ZED, "darwin"): [
        ("/home/ada/.config/zed/settings.json", "user", "context_servers", HostFormat.ZED),
        ("/work/app/.zed/settings.json", "project", "context_servers", HostFormat.ZED),
    ],
    (HostApp.ZED, "win32"): [
        ("/roaming/Zed/settings.json", "user", "context_servers", HostFormat.ZED),
        ("/work/app/.zed/settings.json", "project", "context_servers", HostFormat.ZED),
    ],
    (HostApp.CODEX, "linux"): [
        ("/home/ada/.codex/config.toml", "user", "mcp_servers", HostFormat.CODEX),
        ("/work/app/.codex/config.toml", "project", "mcp_servers", HostFormat.CODEX),
    ],
    (HostApp.GEMINI, "linux"): [
        ("/home/ada/.gemini/settings.json", "user", "mcpServers", HostFormat.GEMINI),
        ("/work/app/.gemini/settings.json", "project", "mcpServers", HostFormat.GEMINI),
        ("/etc/gemini-cli/settings.json", "system", "mcpServers", HostFormat.GEMINI),
    ],
    (HostApp.GEMINI, "darwin"): [
        ("/home/ada/.gemini/settings.json", "user", "mcpServers", HostFormat.GEMINI),
        ("/work/app/.gemini/settings.json", "project", "mcpServers", HostFormat.GEMINI),
        (
            "/Library/Application Support/GeminiCli/settings.json",
            "system",
            "mcpServers",
            HostFormat.GEMINI,
        ),
    ],
    (HostApp.GEMINI, "win32"): [
        ("/home/ada/.gemini/settings.json", "user", "mcpServers", HostFormat.GEMINI),
        ("/work/app/.gemini/settings.json", "project", "mcpServers", HostFormat.GEMINI),
        ("C:/ProgramData/gemini-cli/settings.json", "system", "mcpServers", HostFormat.GEMINI),
    ],
    (HostApp.GOOSE, "linux"): [("/xdg/goose/config.yaml", "user", "extensions", HostFormat.GOOSE)],
    (HostApp.GOOSE, "darwin"): [("/xdg/goose/config.yaml", "user", "extensions", HostFormat.GOOSE)],
    (HostApp.GOOSE, "win32"): [
        ("/roaming/Block/goose/config/config.yaml", "user", "extensions", HostFormat.GOOSE)
    ],
    (HostApp.CONTINUE, "linux"): [
        ("/home/ada/.continue/config.yaml", "user", "mcpServers", HostFormat.CONTINUE)
    ],
    (HostApp.LM_STUDIO, "win32"): [
        ("/home/ada/.lmstudio/mcp.json", "user", "mcpServers", HostFormat.MCP_JSON)
    ],
}

ENVIRON = {"XDG_CONFIG_HOME": "/xdg", "APPDATA": "/roaming"}


@pytest.mark.parametrize(("host", "platform"), list(PLACES))
def test_each_host_keeps_its_servers_where_its_documentation_says(
    host: HostApp, platform: str
) -> None:
    """Each file, in the order the host lets the later one win, with its key and format."""
    files = host_files(host, home=HOME, cwd=PROJECT, environ=ENVIRON, platform=platform)
    found = [(file.path.as_posix(), file.scope, file.key, file.format) for file in files]
    assert found == PLACES[host, platform]


def test_codex_home_and_gemini_system_path_move_those_files() -> None:
    """``CODEX_HOME`` moves Codex's user file; ``GEMINI_CLI_SYSTEM_SETTINGS_PATH`` Gemini's
    system file."""
    environ = {"CODEX_HOME": "/opt/codex", "GEMINI_CLI_SYSTEM_SETTINGS_PATH": "/srv/g.json"}
    codex = host_files(HostApp.CODEX, home=HOME, cwd=PROJECT, environ=environ, platform="linux")
    assert codex[0].path == Path("/opt/codex/config.toml")
    gemini = host_files(HostApp.GEMINI, home=HOME, cwd=PROJECT, environ=environ, platform="linux")
    assert gemini[-1].path == Path("/srv/g.json")


def test_continue_reads_the_workspace_blocks_in_name_order(tmp_path: Path) -> None:
    """Each YAML or JSON block of ``.continue/mcpServers/`` is a project file; a JSON one is
    the ``mcpServers`` JSON other hosts write, and other files are not read."""
    blocks = tmp_path / ".continue" / "mcpServers"
    blocks.mkdir(parents=True)
    for name in ("b.yaml", "a.json", "c.yml", "notes.md"):
        (blocks / name).write_text("")
    files = host_files(HostApp.CONTINUE, home=HOME, cwd=tmp_path, environ={}, platform="linux")
    found = [(file.path.name, file.scope, file.format) for file in files]
    assert found == [
        ("config.yaml", "user", HostFormat.CONTINUE),
        ("a.json", "project", HostFormat.MCP_JSON),
        ("b.yaml", "project", HostFormat.CONTINUE),
        ("c.yml", "project", HostFormat.CONTINUE),
    ]


SNIFFED: list[tuple[str, str, dict[str, object], HostFormat | None]] = [
    ("toml", "/p/.codex/config.toml", {"model": "o3"}, HostFormat.CODEX),
    ("toml", "/p/config.toml", {"mcp_servers": {}}, HostFormat.CODEX),
    ("toml", "/p/mcpmount.toml", {"servers": {}}, None),
    ("json", "/h/.gemini/settings.json", {"mcpServers": {}}, HostFormat.GEMINI),
    ("json", "/p/any.json", {"mcpServers": {"a": {"httpUrl": "https://x"}}}, HostFormat.GEMINI),
    ("json", "/p/any.json", {"mcpServers": {"a": {"serverUrl": "https://x"}}}, HostFormat.WINDSURF),
    ("json", "/h/.config/zed/settings.json", {"theme": "One"}, HostFormat.ZED),
    ("json", "/p/zed/mcp.json", {"mcpServers": {}}, HostFormat.MCP_JSON),
    ("json", "/p/any.json", {"context_servers": {}}, HostFormat.ZED),
    ("yaml", "/h/.config/goose/config.yaml", {"extensions": {}}, HostFormat.GOOSE),
    ("yaml", "/p/block.yaml", {"mcpServers": []}, HostFormat.CONTINUE),
]


@pytest.mark.parametrize(("syntax", "path", "document", "expected"), SNIFFED)
def test_a_file_given_by_path_is_told_by_its_keys_then_its_folder(
    syntax: str, path: str, document: dict[str, object], expected: HostFormat | None
) -> None:
    """A key only one format has decides; else the folder its host keeps it in; else
    the ``mcpServers`` JSON (or, for TOML, ours)."""
    assert sniff_format(document, syntax, Path(path)) == expected
