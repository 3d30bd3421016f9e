"""Move a host's servers into an mcpmount config, and put its file back: `plan_adopt`,
`uninstall`.

``mcpmount adopt HOST`` turns each server of the host's file into a table of a new
mcpmount config, takes them out of the file and puts the one ``mcpmount serve`` entry in
their place. No value that may be a secret goes into the config, nor is printed: every
``env`` and header value, and every argument, URL or folder that holds a host variable
(``${input:token}``, ``${workspaceFolder}``), becomes a ``${VAR}`` reference in the
config, and the entry's own ``env`` gives ``VAR`` the value as the file wrote it, where it
already was. So the host goes on expanding its own variables, and the secret stays in the
file its user put it in. A server with keys mcpmount would not carry over (``oauth``,
``envFile``, ...) or one the file disables stays in the file as it is, and is named.

``mcpmount uninstall HOST`` puts back, byte for byte, the file mcpmount first changed
(after ``install`` or ``adopt``), if the file has not changed since mcpmount wrote it;
else it takes out only mcpmount's entry, and says so (`mcpmount.hosts._backup`).
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import cast

from mcpmount.errors import ConfigError
from mcpmount.hosts._backup import digest, forget, last_written, read_host_file, write_host_file
from mcpmount.hosts._edit import servers_in, without_entry
from mcpmount.hosts._install import Installation, install_target, plan_install
from mcpmount.hosts._places import HostApp

__all__ = ["Adoption", "Uninstalled", "plan_adopt", "uninstall"]

_MOVED = {
    "command": "command",
    "args": "args",
    "cwd": "cwd",
    "env": "env",
    "url": "url",
    "serverUrl": "url",
    "httpUrl": "url",
    "headers": "headers",
    "autoApprove": "auto_approve",
    "alwaysAllow": "auto_approve",
}
"""The keys of a host's entry that mcpmount's config says too, and their names there."""

_DROPPED = frozenset({"description", "type", "enabled", "name"})
"""Keys that say nothing the config needs (``type`` becomes ``transport``)."""

_TYPES = {"sse": "sse", "http": "http", "streamable-http": "http", "streamableHttp": "http"}

_NOT_A_NAME = re.compile(r"[^A-Z0-9_]+")


@dataclass(frozen=True, slots=True)
class Adoption:
    """What ``adopt`` would do: the config to write, and the host file's new entry."""

    config: Path
    """The mcpmount config the servers move into."""

    text: str
    """The config's text: its servers, with ``${VAR}`` where a value was."""

    moved: tuple[str, ...]
    """The servers that move, by name."""

    kept: tuple[str, ...]
    """The servers that stay in the host's file, each with why."""

    variables: tuple[str, ...]
    """The variables the entry's ``env`` gives ``serve``, by name (never their values)."""

    install: Installation
    """The host file with the servers taken out and the entry put in."""

    def write(self) -> Path | None:
        """Write the config, then the host's file; return the host file's backup."""
        self.config.parent.mkdir(parents=True, exist_ok=True)
        with open(self.config, "x", encoding="utf-8") as file:  # never over another's
            file.write(self.text)
        return self.install.write(config=str(self.config))


def plan_adopt(
    host: HostApp,
    config: Path,
    *,
    command: Sequence[str],
    name: str = "mcpmount",
    project: bool = False,
    home: Path | None = None,
    cwd: Path | None = None,
    environ: Mapping[str, str] | None = None,
) -> Adoption:
    """Work out what moving ``host``'s servers into ``config`` does; nothing is written.

    Raises:
        ConfigError: If the config exists, the host's file has no server to move, or the
            file cannot be read.
    """
    config = config.absolute()
    if config.exists():
        raise ConfigError(str(config), ["exists already: give adopt a new file to write"])
    target = install_target(host, name, project, home, cwd, environ)
    servers = servers_in(target, read_host_file(target.path))
    tables: dict[str, dict[str, object]] = {}
    values: dict[str, str] = {}
    kept: list[str] = []
    for server, entry in servers.items():
        if server == name:
            continue
        why = _why_kept(entry)
        if why:
            kept.append(f"{server}: {why}")
            continue
        tables[server] = _table(server, entry, values)
    if not tables:
        raise ConfigError(
            str(target.path),
            [f"no server to adopt in {host.label}'s file", *kept],
        )
    text = _toml_text(tables)
    config.parent.mkdir(parents=True, exist_ok=True)
    # plan_install reads the config it serves: it is there while the entry is planned.
    with open(config, "x", encoding="utf-8") as file:
        file.write(text)
    try:
        install = plan_install(
            host,
            config,
            command=command,
            name=name,
            project=project,
            home=home,
            cwd=cwd,
            environ=environ,
            given=values,
            without=list(tables),
        )
    finally:
        config.unlink()
    return Adoption(config, text, tuple(tables), tuple(kept), tuple(values), install)


def _why_kept(entry: Mapping[str, object]) -> str | None:
    if entry.get("disabled") is True or entry.get("enabled") is False:
        return "kept in the file: the file disables it"
    other = sorted(key for key in entry if key not in _MOVED and key not in _DROPPED)
    if other:
        return f"kept in the file: mcpmount would not carry over {', '.join(other)}"
    return None


def _variable(server: str, key: str, value: str, values: dict[str, str]) -> str:
    """A name for ``value`` in the entry's ``env``: ``key`` if free, else one with the
    server's name; returns the reference the config writes."""
    base = _NOT_A_NAME.sub("_", key.upper()).strip("_") or "VALUE"
    if base[0].isdigit():
        base = f"V_{base}"
    name = base
    if name in values and values[name] != value:
        name = f"{_NOT_A_NAME.sub('_', server.upper()).strip('_')}_{base}"
        n = 2
        while name in values and values[name] != value:
            name, n = f"{name}_{n}", n + 1
    values[name] = value
    return f"${{{name}}}"


def _table(server: str, entry: Mapping[str, object], values: dict[str, str]) -> dict[str, object]:
    """The server as a table of mcpmount's config, its values moved into ``values``."""
    table: dict[str, object] = {}
    kind = entry.get("type")
    for key, value in entry.items():
        ours = _MOVED.get(key)
        if ours is None:
            continue
        if key in ("env", "headers") and isinstance(value, dict):
            named = cast("dict[str, object]", value)
            where = "" if key == "env" else f"{server}_"
            table[ours] = {
                k: _variable(server, where + k, str(v), values) for k, v in named.items()
            }
        elif isinstance(value, list):
            items = [str(v) for v in cast("list[object]", value)]
            table[ours] = [
                _variable(server, f"{server}_arg_{i}", v, values) if "${" in v else v
                for i, v in enumerate(items)
            ]
        elif isinstance(value, str) and "${" in value:
            table[ours] = _variable(server, f"{server}_{key}", value, values)
        else:
            table[ours] = value
    if isinstance(kind, str) and kind in _TYPES and "url" in table:
        table["transport"] = _TYPES[kind]
    return table


def _toml_text(tables: Mapping[str, Mapping[str, object]]) -> str:
    import tomlkit

    document = tomlkit.document()
    document.add(tomlkit.comment("Moved here by `mcpmount adopt`; `mcpmount uninstall` undoes it."))
    document.add(tomlkit.comment("Each ${VAR} is given by the env of the host's mcpmount entry."))
    servers = tomlkit.table(is_super_table=True)
    for server, table in tables.items():
        servers[server] = table
    document["servers"] = servers
    return tomlkit.dumps(document)


@dataclass(frozen=True, slots=True)
class Uninstalled:
    """What ``uninstall`` did to a host's file."""

    file: Path
    """The host's file."""

    restored: Path | None
    """The copy it was put back from, byte for byte; None if it was not."""

    removed: bool
    """Whether mcpmount's entry was taken out (the file changed since it was written)."""

    config: str | None
    """The config ``adopt`` moved the file's servers into, if it did."""

    backup: Path | None
    """The file before this uninstall, when only the entry was taken out."""


def uninstall(
    host: HostApp,
    *,
    name: str = "mcpmount",
    project: bool = False,
    home: Path | None = None,
    cwd: Path | None = None,
    environ: Mapping[str, str] | None = None,
) -> Uninstalled:
    """Put ``host``'s file back as it was before mcpmount changed it, or take out the entry.

    Raises:
        ConfigError: If the file has no entry ``name`` and mcpmount wrote nothing there.
    """
    target = install_target(host, name, project, home, cwd, environ)
    path = target.path
    record = last_written(path)
    current = path.read_bytes() if path.is_file() else None
    if record is not None and current is not None and digest(current) == record.written:
        if record.backup is None:
            path.unlink()  # mcpmount made it
        else:
            backup = Path(record.backup)
            temporary = path.with_name(f".{path.name}.{os.getpid()}.mcpmount")
            temporary.write_bytes(backup.read_bytes())
            os.chmod(temporary, os.stat(path).st_mode & 0o777)
            os.replace(temporary, path)
        forget(path)
        restored = Path(record.backup) if record.backup else None
        return Uninstalled(path, restored, False, record.config, None)
    text = read_host_file(path)
    if text is None or name not in servers_in(target, text):
        raise ConfigError(str(path), [f"no entry {name!r} of mcpmount here: nothing to uninstall"])
    backup = write_host_file(path, without_entry(target, text, name), name)
    forget(path)
    return Uninstalled(path, None, True, record.config if record else None, backup)
