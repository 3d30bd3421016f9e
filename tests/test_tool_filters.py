"""A tool the user filtered out never comes back: ``enabledTools``/``disabledTools`` in an
``mcpServers`` file and ``tools``/``exclude_tools`` in TOML keep it out of the list, the
search and the calls."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from mcpmount.config import load_config
from mcpmount.errors import ConfigError, UnknownToolError
from mcpmount.registry import open_registry
from support import FIXTURE, record_pids

pytestmark = pytest.mark.usefixtures("no_leaks")


def _host_file(tmp_path: Path, disabled: object, **more: object) -> Path:
    path = tmp_path / ".mcp.json"
    entry = {"command": sys.executable, "args": [FIXTURE], "disabledTools": disabled, **more}
    path.write_text(json.dumps({"mcpServers": {"fx": entry}}))
    return path


async def test_disabled_tools_of_an_mcp_json_are_never_mounted(tmp_path: Path) -> None:
    """The disabled tools are not listed, found or callable; the others are."""
    async with open_registry(_host_file(tmp_path, ["crash", "fail*"])) as registry:
        record_pids(registry)
        names = {tool.name for tool in registry.mounted_tools()}
        assert "fx__echo" in names
        assert not {"fx__crash", "fx__fail"} & names
        found = registry.search("select:fx__crash,fx__echo")
        assert [hit.tool.name for hit in found.hits] == ["fx__echo"]
        with pytest.raises(UnknownToolError):
            await registry.call("fx__crash", {})


async def test_excluded_tools_in_toml_skip_even_a_tool_that_would_refuse_the_server(
    tmp_path: Path,
) -> None:
    """A disabled tool is dropped before it is checked: its bad definition no longer matters."""
    listing = json.dumps(
        {
            "tools": [
                {"name": "bad name!", "inputSchema": {"type": "object"}},
                {"name": "good", "inputSchema": {"type": "object"}},
            ]
        }
    )
    path = tmp_path / "servers.toml"
    args = json.dumps([FIXTURE, "--raw", "--list-json", listing])
    path.write_text(
        f'[servers.raw]\ncommand = "{sys.executable}"\nargs = {args}\n'
        'exclude_tools = ["bad name!"]\n'
    )
    async with open_registry(path) as registry:
        record_pids(registry)
        assert [tool.name for tool in registry.mounted_tools()] == ["raw__good"]


async def test_enabled_tools_mount_only_what_they_match_less_the_disabled(
    tmp_path: Path,
) -> None:
    """enabledTools is an allow-list; disabledTools still wins over it."""
    path = _host_file(tmp_path, ["add"], enabledTools=["echo", "add", "pid"])
    async with open_registry(path) as registry:
        record_pids(registry)
        assert [tool.name for tool in registry.mounted_tools()] == ["fx__echo", "fx__pid"]


def test_disabled_tools_must_be_a_list_of_globs(tmp_path: Path) -> None:
    """A wrong type is a config error under the host file's own key."""
    with pytest.raises(ConfigError, match=r"mcpServers\.fx\.disabledTools"):
        load_config(_host_file(tmp_path, "crash"))
