"""A host's servers, read from all of its files as the host reads them: `load_host`."""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import cast

from mcpmount.config import InputPrompt, RegistryConfig, ServerSpec, load_config
from mcpmount.configfile import read_syntax
from mcpmount.errors import ConfigError
from mcpmount.hosts._places import HostApp, HostFile, host_files

__all__ = ["HostConfig", "load_host"]


@dataclass(frozen=True, slots=True)
class HostConfig:
    """What `load_host` found: the merged config, and the files it came from."""

    host: HostApp
    """Whose files were read."""

    config: RegistryConfig
    """Every server of the files; where two files name one, the one the host prefers.
    Its ``path`` is None (it has no one file) and its ``notes`` name their files."""

    read: Sequence[HostFile]
    """The files that declare servers, the one that wins last."""

    looked: Sequence[HostFile]
    """Every file the host may keep servers in, whether or not it exists."""


def load_host(
    host: HostApp,
    *,
    home: Path | None = None,
    cwd: Path | None = None,
    environ: Mapping[str, str] | None = None,
    ask: InputPrompt | None = None,
    platform: str | None = None,
) -> HostConfig:
    """Load the servers ``host`` would start, from each of its config files.

    Args:
        host: The host.
        home: The user's home folder; defaults to ``Path.home()``.
        cwd: The project folder; defaults to the current directory.
        environ: The variables to expand; defaults to ``os.environ``.
        ask: Asks the user for a VS Code ``${input:id}``; None never asks.
        platform: ``sys.platform`` of the host's machine; defaults to this one's.

    Raises:
        ConfigError: If no file of the host exists, or one that does is invalid.
    """
    environ = os.environ if environ is None else environ
    looked = host_files(host, home=home, cwd=cwd, environ=environ, platform=platform)
    present = [file for file in looked if file.path.is_file()]
    if not present:
        where = ", ".join(str(file.path) for file in looked)
        raise ConfigError(
            host.value, [f"no config file of {host.label} found (looked for {where})"]
        )
    servers: dict[str, ServerSpec] = {}
    origin: dict[str, HostFile] = {}
    notes: list[str] = []
    read: list[HostFile] = []
    config: RegistryConfig | None = None
    for file in present:
        if not _declares_servers(file):
            continue
        config = load_config(
            file.path,
            environ=environ,
            ask=ask,
            workspace=file.workspace,
            within=file.within,
            host_format=file.format,
        )
        read.append(file)
        notes += [f"{file.path}: {note}" for note in config.notes]
        for namespace, spec in config.servers.items():
            if namespace in origin:
                notes.append(
                    f"{namespace}: the one of {file} is mounted, not the one of "
                    f"{origin[namespace]}, as {host.label} prefers it"
                )
            servers[namespace], origin[namespace] = spec, file
    if config is None:  # files, but none declares a server: settings from MCPMOUNT_* alone
        config = RegistryConfig.from_servers({})
    merged = dataclasses.replace(config, servers=servers, path=None, notes=tuple(notes))
    return HostConfig(host=host, config=merged, read=read, looked=looked)


def _declares_servers(file: HostFile) -> bool:
    """Whether ``file`` has servers where its host looks, or cannot be read (which
    `load_config` then reports). A host writes files with no servers in them: Claude
    Desktop its preferences, Claude Code its state, Zed, Gemini CLI, goose, Codex and
    Continue their every other setting."""
    try:
        node = read_syntax(file.path, [])[0]
    except ConfigError:
        return True
    for key in file.within:
        inner = node.get(key)
        if not isinstance(inner, dict):
            return False
        node = cast("dict[str, object]", inner)
    return node.get(file.key) is not None
