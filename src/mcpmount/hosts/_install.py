"""Put ``mcpmount serve CONFIG`` into a host's config file: `plan_install`, `Installation`.

The entry is a stdio server running the given command with ``serve`` and the config's
absolute path, in the host's own shape (VS Code and Claude Code say ``"type": "stdio"``).
An entry of the same name is updated in place: its other keys stay, and so do the ``env``
values it already has (a secret its user put there). Every other key and server of the
file stays as it was. The file is written only when its content changes, after a backup
of the old one beside it (``<file>.bak-<YYYYmmdd-HHMMSS>``), and replaced atomically.

The entry does not depend on the shell ``install`` runs in: a host starts it with its own
bare ``PATH`` and working directory. Its command and config are absolute paths, and when the
config's bare commands (``npx``, ``uvx``, ...) are found here outside the system's folders,
the entry's ``env`` gives the ``PATH`` they need (`host_path`); that ``PATH`` is ours, and is
rewritten on each install. An install whose entry would serve itself (the host's own file
as the config, or a config with a server that starts mcpmount on that file) is refused.

The environment the config needs (`needed_variables`) is passed in the host's own syntax
where it has one: ``${VAR}`` for Claude Code, ``${env:VAR}`` for Cursor and VS Code.
Claude Desktop expands nothing, so its user is told which variables to set; their values
are copied into the file only on request (``copy_env``), never silently.
"""

from __future__ import annotations

import contextlib
import copy
import difflib
import json
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import cast

from mcpmount.config import load_json, needed_variables, strip_jsonc
from mcpmount.errors import ConfigError
from mcpmount.hosts._commands import RawServer, host_path, stdio_servers
from mcpmount.hosts._loops import self_serving
from mcpmount.hosts._places import Host, HostFile, host_files

__all__ = ["Installation", "plan_install"]

_NOT_STDIO = frozenset({"url", "headers", "headersHelper", "oauth"})
"""Keys of an entry that make it a url server: dropped when an entry becomes ours."""

_TYPED = (Host.CLAUDE_CODE, Host.VSCODE)
"""Hosts whose entries say their ``type``: VS Code requires it, Claude Code writes it."""


@dataclass(frozen=True, slots=True)
class Installation:
    """An entry to put into a host's config file, and what the file becomes."""

    file: HostFile
    """The file to write."""

    name: str
    """The entry's name among the host's servers."""

    before: str | None
    """The file's text now; None if it does not exist."""

    after: str
    """The file's text with the entry."""

    changed: bool
    """Whether writing would change what the file holds."""

    notes: tuple[str, ...]
    """What the user should know: the environment passed, or left to set."""

    def diff(self) -> str:
        """Return the change as a unified diff (empty when nothing changes)."""
        if not self.changed:
            return ""
        old = (self.before or "").splitlines(keepends=True)
        new = self.after.splitlines(keepends=True)
        label = str(self.file.path)
        before = label if self.before is not None else "/dev/null"
        return "".join(difflib.unified_diff(old, new, before, label))

    def write(self, now: datetime | None = None) -> Path | None:
        """Write the file if it changes, after backing up the old one.

        Returns:
            The backup's path; None if there was no file to back up, or no change.
        """
        if not self.changed:
            return None
        path = self.file.path
        path.parent.mkdir(parents=True, exist_ok=True)
        backup = None
        if self.before is not None:
            backup = _backup_path(path, now or datetime.now())
            backup.write_text(self.before, encoding="utf-8")
            os.chmod(backup, os.stat(path).st_mode & 0o777)
        temporary = path.with_name(f".{path.name}.{os.getpid()}.mcpmount")
        temporary.write_text(self.after, encoding="utf-8")
        # A new file is the user's alone: it may come to hold a secret.
        mode = os.stat(path).st_mode & 0o777 if self.before is not None else 0o600
        os.chmod(temporary, mode)
        os.replace(temporary, path)
        return backup


def _backup_path(path: Path, now: datetime) -> Path:
    stamp = now.strftime("%Y%m%d-%H%M%S")
    backup, n = path.with_name(f"{path.name}.bak-{stamp}"), 1
    while backup.exists():
        backup, n = path.with_name(f"{path.name}.bak-{stamp}-{n}"), n + 1
    return backup


def plan_install(
    host: Host,
    config: str | os.PathLike[str],
    *,
    command: Sequence[str],
    name: str = "mcpmount",
    project: bool = False,
    copy_env: bool = False,
    home: Path | None = None,
    cwd: Path | None = None,
    environ: Mapping[str, str] | None = None,
    platform: str | None = None,
) -> Installation:
    """Work out the ``mcpmount serve`` entry for ``host`` and the file it goes into.

    Nothing is written: see `Installation.write`.

    Args:
        host: The host to install into.
        config: The config ``mcpmount serve`` is to serve.
        command: The program (and its first arguments) that runs mcpmount.
        name: The entry's name among the host's servers.
        project: Install into the project's file (the current directory's), not the
            user's; Claude Desktop has none.
        copy_env: Copy this environment's values of the variables the config needs
            into the entry, instead of the host's own reference to them.
        home: The user's home folder; defaults to ``Path.home()``.
        cwd: The project folder; defaults to the current directory.
        environ: Where the variables' values are read; defaults to ``os.environ``.
        platform: ``sys.platform`` of the host's machine; defaults to this one's.

    Raises:
        ConfigError: If the config cannot be read, the host has no such file, or the
            file is there but is not a JSON object of servers.
    """
    environ = os.environ if environ is None else environ
    config_path = Path(config).absolute()
    needed = needed_variables(config_path)
    files = host_files(host, home=home, cwd=cwd, environ=environ, platform=platform)
    scope = "project" if project else "user"
    target = next((file for file in files if file.scope == scope and not file.within), None)
    if target is None:
        raise ConfigError(host.value, [f"{host.label} has no project config; leave out --project"])
    servers_run = stdio_servers(config_path)
    _refuse_self_serving(config_path, target.path, servers_run)
    before = target.path.read_text(encoding="utf-8-sig") if target.path.is_file() else None
    old = _document(target, before)
    document = copy.deepcopy(old)
    servers = document.setdefault(target.key, {})
    if not isinstance(servers, dict):
        raise ConfigError(str(target.path), [f"{target.key}: must be an object"])
    env, notes = _environment(host, needed, environ, copy_env, name, target.path)
    path, missing = host_path(servers_run, environ)
    notes += missing
    entry: dict[str, object] = {"type": "stdio"} if host in _TYPED else {}
    entry |= {"command": command[0], "args": [*command[1:], "serve", str(config_path)]}
    existing = cast("dict[str, object]", servers).get(name)
    if isinstance(existing, dict):
        kept = {
            key: value
            for key, value in cast("dict[str, object]", existing).items()
            if key not in _NOT_STDIO
        }
        had = kept.get("env")
        env |= cast("dict[str, str]", had) if isinstance(had, dict) else {}
        entry = kept | entry
    if path is not None:
        env["PATH"] = path
        notes.append(f"env: PATH is {path}, where the config's commands are found")
    if env:
        entry["env"] = env
    cast("dict[str, object]", servers)[name] = entry
    after = json.dumps(document, indent=2, ensure_ascii=False) + "\n"
    return Installation(target, name, before, after, document != old, tuple(notes))


def _refuse_self_serving(config: Path, host_file: Path, servers: Sequence[RawServer]) -> None:
    """Refuse an entry that would start mcpmount on the file that holds it, before anything
    is written or started.

    Raises:
        ConfigError: Naming the host's file and what to do.
    """
    if config.resolve() == host_file.resolve():
        raise ConfigError(
            str(host_file),
            [
                "refused: this is the host's own file, which the entry goes into: serving "
                "it would start the entry, which would serve it again, without end; give "
                "an mcpmount config (TOML) or another host's file"
            ],
        )
    found = [(s.name, s.command, s.args, s.cwd) for s in servers]
    problems = self_serving(found, [host_file, config])
    if problems:
        raise ConfigError(str(config), [f"refused: {problem}" for problem in problems])


def _document(target: HostFile, text: str | None) -> dict[str, object]:
    """Return the file's top-level object (empty for a file to create)."""
    if text is None or not text.strip():
        return {}
    try:
        document = load_json(text)
    except ValueError as exc:
        problem = f"is not JSON ({exc}); fix it, or move it away to start a new one"
        with contextlib.suppress(ValueError):
            load_json(strip_jsonc(text))  # it is JSONC, as VS Code and Cursor allow
            problem = "has comments or trailing commas, which rewriting it would lose: "
            problem += "remove them, or add the entry by hand"
        raise ConfigError(str(target.path), [problem]) from None
    if not isinstance(document, dict):
        raise ConfigError(str(target.path), ["must hold a JSON object"])
    return cast("dict[str, object]", document)


def _environment(
    host: Host,
    needed: Mapping[str, bool],
    environ: Mapping[str, str],
    copy_env: bool,
    name: str,
    path: Path,
) -> tuple[dict[str, str], list[str]]:
    """Return the entry's ``env`` for the variables the config needs, and what to say."""
    env: dict[str, str] = {}
    copied = [variable for variable in needed if copy_env and variable in environ]
    passed: list[str] = []
    left: list[str] = []
    for variable, optional in needed.items():
        if variable in copied:
            env[variable] = environ[variable]
        elif host is Host.CLAUDE_CODE:
            env[variable] = f"${{{variable}:-}}" if optional else f"${{{variable}}}"
            passed.append(variable)
        elif host in (Host.CURSOR, Host.VSCODE):
            env[variable] = f"${{env:{variable}}}"
            passed.append(variable)
        elif not optional:
            left.append(variable)
    notes: list[str] = []
    if passed:
        notes.append(
            f"env: {', '.join(passed)} come from {host.label}'s own environment "
            f"(as {env[passed[0]]}); start {host.label} with them set"
        )
    if copied:
        notes.append(
            f"env: this shell's values of {', '.join(copied)} are copied into {path} "
            "(--copy-env): anyone who can read the file can read them"
        )
    if left:
        notes.append(
            f"env: {host.label} expands no variables: set {', '.join(left)} under "
            f'"env" of "{name}" in {path} yourself, or run again with --copy-env to '
            "copy this shell's values"
        )
    return env, notes
