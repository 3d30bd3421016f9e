"""Start an installed entry as its host would, and say how each server did: `start_as_host`.

``check --from HOST`` runs in the user's shell, with its ``PATH`` and its activated venv,
so it cannot see what breaks when the host itself starts the entry. This starts the entry
from the host's own file, with the environment a host started from the desktop has (only
``HOME`` and ``PATH=/usr/bin:/bin``, beside the few names the SDK's client passes:
``USER``, ``LOGNAME``, ``SHELL``, ``TERM``) plus the entry's ``env``, in ``/``; connects to
it with the SDK's client, and lists its tools until each server of the config it serves has
some, or the time is up. The hosts that expand variables in ``env`` (Claude Code's and
Gemini CLI's ``${VAR}``, Cursor's, VS Code's and Windsurf's ``${env:VAR}``) or pass them by
name (Codex's ``env_vars``, goose's ``env_keys``) take them from this environment, since
they are usually started from the user's session. The entry is read in its file's own
format (JSON, TOML, YAML) and shape (goose's ``cmd`` and ``envs``).
"""

from __future__ import annotations

import os
import re
import tempfile
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import cast

import anyio
import mcp_types
from mcp import Client, StdioServerParameters
from mcp.client.stdio import stdio_client

from mcpmount.configfile import read_config
from mcpmount.errors import ConfigError
from mcpmount.hosts._backup import read_host_file
from mcpmount.hosts._edit import servers_in
from mcpmount.hosts._loops import mounted_files
from mcpmount.hosts._places import HostApp, HostFile, host_files
from mcpmount.hosts._shapes import env_key

__all__ = ["BARE_PATH", "AsHost", "start_as_host"]

BARE_PATH = "/usr/bin:/bin"
"""The ``PATH`` a host started from the desktop gives its servers."""

_VARIABLE = re.compile(r"\$\{(?:env:)?([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}")

_EXPANDS = (HostApp.CLAUDE_CODE, HostApp.CURSOR, HostApp.VSCODE, HostApp.WINDSURF, HostApp.GEMINI)


@dataclass(frozen=True, slots=True)
class AsHost:
    """What starting an entry as its host would showed."""

    file: HostFile
    """The host's file the entry is in."""

    command: tuple[str, ...]
    """The entry's command and arguments."""

    config: Path | None
    """The config the entry serves, if it names one that exists."""

    servers: Mapping[str, tuple[str, ...]]
    """Each server of that config, in file order, with the tools it lists."""

    deferred: frozenset[str]
    """The servers whose tools are all deferred: listed only through ``tool_search``."""

    error: str | None
    """Why the entry could not be started or connected to; None if it was."""

    stderr: str
    """What the entry wrote on stderr (its last lines)."""


def _entry(host: HostApp, name: str, files: list[HostFile]) -> tuple[HostFile, dict[str, object]]:
    """Return the file holding the entry ``name`` the host uses (the last that wins), in
    the file's own format (JSON, TOML or YAML)."""
    for file in reversed(files):
        try:
            servers = servers_in(file, read_host_file(file.path))
        except (OSError, ValueError, ConfigError):
            continue
        if name in servers:
            return file, servers[name]
    where = ", ".join(str(file.path) for file in files)
    raise ConfigError(
        host.value,
        [f"no entry {name!r} in {host.label}'s files ({where}): run mcpmount install first"],
    )


def host_environment(
    host: HostApp, entry: Mapping[str, object], home: Path, environ: Mapping[str, str]
) -> dict[str, str]:
    """Return the environment the host gives the entry: bare, plus its ``env``."""
    env = {"HOME": str(home), "PATH": BARE_PATH}
    raw = entry.get(env_key(host))
    for key, value in cast("dict[str, object]", raw if isinstance(raw, dict) else {}).items():
        text = str(value)
        if host in _EXPANDS:
            text = _VARIABLE.sub(lambda m: environ.get(m[1]) or m[2] or "", text)
        env[key] = text
    named = entry.get("env_vars") or entry.get("env_keys")  # Codex's, goose's: by name
    for variable in cast("list[object]", named if isinstance(named, list) else []):
        if str(variable) in environ:
            env.setdefault(str(variable), environ[str(variable)])
    return env


async def start_as_host(
    host: HostApp,
    name: str = "mcpmount",
    *,
    home: Path | None = None,
    cwd: Path | None = None,
    environ: Mapping[str, str] | None = None,
    timeout: float = 60.0,
) -> AsHost:
    """Start the entry ``name`` of ``host``'s files as the host would; list its tools.

    Args:
        host: The host whose file holds the entry.
        name: The entry's name.
        home: The user's home (the host's ``HOME``); defaults to ``Path.home()``.
        cwd: The project folder, for a project's file; defaults to the current one.
        environ: Where ``APPDATA``/``XDG_CONFIG_HOME`` and the variables the host expands
            are read; defaults to ``os.environ``.
        timeout: Seconds for the entry to start and each of its servers to list tools.

    Raises:
        ConfigError: If no file of the host holds the entry, or it has no ``command``.
    """
    environ = os.environ if environ is None else environ
    home = Path.home() if home is None else home
    files = host_files(host, home=home, cwd=cwd, environ=environ)
    file, entry = _entry(host, name, files)
    command, args = entry.get("command", entry.get("cmd")), entry.get("args", [])
    if not isinstance(command, str) or not isinstance(args, list):
        raise ConfigError(str(file.path), [f"{file.key}.{name}: has no command to start"])
    argv = (command, *(str(arg) for arg in cast("list[object]", args)))
    config = next(
        (path for path in reversed(mounted_files(command, argv[1:], Path("/"))) if path.is_file()),
        None,
    )
    expected, deferred = _servers(config)
    params = StdioServerParameters(
        command=command,
        args=list(argv[1:]),
        env=host_environment(host, entry, home, environ),
        cwd="/",
    )
    listed: dict[str, list[str]] = {server: [] for server in expected}
    down: dict[str, str] = {}
    error: str | None = None

    async def note(params: mcp_types.LoggingMessageNotificationParams) -> None:
        # serve tells a host of each server that did not start (and keeps retrying it)
        if params.level == "warning" and params.logger in listed:
            down[params.logger] = str(params.data)

    with tempfile.TemporaryFile("w+", encoding="utf-8", errors="replace") as errlog:
        try:
            with anyio.fail_after(timeout):
                # The handshake era, as desktop hosts speak: serve's notices reach it.
                transport = stdio_client(params, errlog=errlog)
                async with Client(transport, mode="legacy", logging_callback=note) as client:
                    await _list_until_mounted(client, listed, deferred, down)
            if down:
                error = "; ".join(down.values())
        except TimeoutError:
            waiting = [s for s, tools in listed.items() if not tools and s not in deferred]
            if not any(listed.values()):
                error = f"no tools listed within {timeout:g} s"
            elif waiting:
                error = f"{', '.join(waiting)}: no tools listed within {timeout:g} s"
        except Exception as exc:  # whatever stops it is the answer
            error = f"the entry stopped: {_leaf(exc)}"
        errlog.seek(0)
        stderr = "\n".join(errlog.read().splitlines()[-20:])
    servers = {server: tuple(tools) for server, tools in listed.items()}
    return AsHost(file, argv, config, servers, frozenset(deferred), error, stderr)


async def _list_until_mounted(
    client: Client, listed: dict[str, list[str]], deferred: set[str], down: Mapping[str, str]
) -> None:
    """List tools until every server not deferred lists some, or was told ``down``
    (bounded by the caller)."""
    delay = 0.1
    while True:
        tools = (await client.list_tools()).tools
        for server in listed:
            listed[server] = [t.name for t in tools if t.name.startswith(f"{server}__")]
        if all(tools or s in down for s, tools in listed.items() if s not in deferred):
            return
        await anyio.sleep(delay)
        delay = min(delay * 2, 1.0)


def _leaf(exc: BaseException) -> str:
    """Name the first error an exception group holds (the Client's task group wraps it)."""
    leaf = exc
    while isinstance(leaf, BaseExceptionGroup):
        group = cast("BaseExceptionGroup[BaseException]", leaf)
        leaf = group.exceptions[0]
    return f"{type(leaf).__name__}: {leaf}".rstrip(": ")


def _servers(config: Path | None) -> tuple[list[str], set[str]]:
    """Return the servers of the config an entry serves, and those whose tools are all
    deferred; none for a config that is not there or cannot be read."""
    if config is None:
        return [], set()
    try:
        document, is_json = read_config(config, [])
    except ConfigError:
        return [], set()
    key = "mcpServers" if is_json and "mcpServers" in document else "servers"
    raw = document.get(key)
    servers = cast("dict[str, object]", raw) if isinstance(raw, dict) else {}
    deferred = {
        name
        for name, table in servers.items()
        if isinstance(table, dict) and cast("dict[str, object]", table).get("defer") is True
    }
    return list(servers), deferred
