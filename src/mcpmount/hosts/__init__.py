"""MCP hosts' own config files: where they are, reading them, and installing into them.

`host_files` says where each `HostApp` (Claude Desktop, Claude Code, Cursor, VS Code, Windsurf,
Zed, OpenAI Codex, Gemini CLI, goose, Continue, LM Studio) keeps
its servers, per platform (``_places``); `load_host` reads them all as the host does,
into one config (``_read``; ``mcpmount check --from HOST``); `plan_install` works out the
``mcpmount serve`` entry for one of them and `Installation.write` puts it there
(``_install``, in the host's own shape: ``_shapes``; ``mcpmount install HOST CONFIG``),
with the ``PATH`` the config's commands need there (``_commands``). An entry that would
serve the file holding it is refused, and a loop that gets past that stops at its first
nested mcpmount (``_loops``).
`plan_adopt` moves the servers of a host's file into an mcpmount config and puts the
entry in their place, and `uninstall` puts the file back (``_adopt``; ``mcpmount adopt``,
``mcpmount uninstall``); one entry is changed in the file's own format, every other byte
kept (``_edit``, ``_jsonc``), and the file as it was is kept to put back (``_backup``).
`start_as_host` starts an installed entry as its host would (``_ashost``; ``mcpmount check
--as-host HOST``). Reading one file is the config's job (`mcpmount.config.load_config`);
this room knows the hosts.
"""

from __future__ import annotations

from mcpmount.hosts._adopt import Adoption, Uninstalled, plan_adopt, uninstall
from mcpmount.hosts._ashost import BARE_PATH, AsHost, start_as_host
from mcpmount.hosts._install import Installation, plan_install
from mcpmount.hosts._loops import SERVING, enter_chain, self_serving, serving_environment
from mcpmount.hosts._places import HostApp, HostFile, host_files
from mcpmount.hosts._read import HostConfig, load_host

__all__ = [
    "BARE_PATH",
    "SERVING",
    "Adoption",
    "AsHost",
    "HostApp",
    "HostConfig",
    "HostFile",
    "Installation",
    "Uninstalled",
    "enter_chain",
    "host_files",
    "load_host",
    "plan_adopt",
    "plan_install",
    "self_serving",
    "serving_environment",
    "start_as_host",
    "uninstall",
]
