"""MCP hosts' own config files: where they are, reading them, and installing into them.

`host_files` says where each `Host` (Claude Desktop, Claude Code, Cursor, VS Code) keeps
its servers, per platform (``_places``); `load_host` reads them all as the host does,
into one config (``_read``; ``mcpmount check --from HOST``); `plan_install` works out the
``mcpmount serve`` entry for one of them and `Installation.write` puts it there
(``_install``; ``mcpmount install HOST CONFIG``). Reading one file is the config's job
(`mcpmount.config.load_config`); this room knows the hosts.
"""

from __future__ import annotations

from mcpmount.hosts._install import Installation, plan_install
from mcpmount.hosts._places import Host, HostFile, host_files
from mcpmount.hosts._read import HostConfig, load_host

__all__ = [
    "Host",
    "HostConfig",
    "HostFile",
    "Installation",
    "host_files",
    "load_host",
    "plan_install",
]
