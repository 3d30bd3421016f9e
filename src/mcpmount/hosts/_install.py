"""Put ``mcpmount serve CONFIG`` into a host's config file: `plan_install`, `Installation`.

The entry is a stdio server running the given command with ``serve`` and the config's
absolute path; when the config's ``[serve]`` says another transport, the entry says
``--transport stdio``, since a host speaks to its entry over stdio.
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
where it has one, and the entry is in the host's own shape (``_shapes``). Only the entry
changes in the file: its comments, layout and other keys stay, byte for byte (``_edit``).
"""

from __future__ import annotations

import difflib
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from mcpmount.config import needed_variables
from mcpmount.errors import ConfigError
from mcpmount.hosts._backup import read_host_file, write_host_file
from mcpmount.hosts._commands import RawServer, host_path, serve_transport, stdio_servers
from mcpmount.hosts._edit import servers_in, snippet, with_entry, without_entry
from mcpmount.hosts._loops import self_serving
from mcpmount.hosts._places import HostApp, HostFile, host_files
from mcpmount.hosts._shapes import environment, shape_entry

__all__ = ["Installation", "plan_install"]


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

    entry: dict[str, object]
    """The entry, in the host's own shape."""

    def diff(self) -> str:
        """Return the change as a unified diff (empty when nothing changes)."""
        if not self.changed:
            return ""
        old = (self.before or "").splitlines(keepends=True)
        new = self.after.splitlines(keepends=True)
        label = str(self.file.path)
        before = label if self.before is not None else "/dev/null"
        return "".join(difflib.unified_diff(old, new, before, label))

    def snippet(self) -> str:
        """Return the entry as its user would paste it into the host's file."""
        return snippet(self.file, self.name, self.entry)

    def write(self, now: datetime | None = None, *, config: str | None = None) -> Path | None:
        """Write the file if it changes, after backing up the old one; ``config`` is the
        one ``adopt`` moved the file's servers into.

        Returns:
            The backup's path; None if there was no file to back up, or no change.
        """
        if not self.changed:
            return None
        return write_host_file(self.file.path, self.after, self.name, config=config, now=now)


def plan_install(
    host: HostApp,
    config: str | os.PathLike[str],
    *,
    command: Sequence[str],
    name: str = "mcpmount",
    project: bool = False,
    copy_env: bool = False,
    given: Mapping[str, str] | None = None,
    without: Sequence[str] = (),
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
        given: Values of the entry's ``env``, as the host's file writes them, that the
            caller has (``adopt``: what the servers it moved had there).
        without: Servers to take out of the file as the entry goes in (``adopt``).
        platform: ``sys.platform`` of the host's machine; defaults to this one's.

    Raises:
        ConfigError: If the config cannot be read, the host has no such file, or the
            file is there but is not a JSON object of servers.
    """
    environ = os.environ if environ is None else environ
    config_path = Path(config).absolute()
    needed = needed_variables(config_path)
    target = install_target(host, name, project, home, cwd, environ, platform)
    servers_run = stdio_servers(config_path)
    _refuse_self_serving(config_path, target.path, servers_run)
    before = read_host_file(target.path)
    servers = servers_in(target, before)
    given = given or {}
    wanted = {variable: optional for variable, optional in needed.items() if variable not in given}
    env, passed, notes = environment(host, wanted, environ, copy_env, name, target.path)
    env |= given
    path, missing = host_path(servers_run, environ)
    notes += missing
    if path is not None:
        env["PATH"] = path
        notes.append(f"env: PATH is {path}, where the config's commands are found")
    existing = servers.get(name)
    argv = [*command, "serve", str(config_path)]
    transport = serve_transport(config_path)
    if transport not in (None, "stdio"):
        argv[-1:-1] = ["--transport", "stdio"]
        notes.append(
            f"args: --transport stdio, for the host; the config's [serve] says {transport}"
        )
    entry = shape_entry(host, name, argv, env, passed, existing)
    changed = entry != existing or bool(without)
    text = before
    for server in without:
        text = without_entry(target, text or "", server)
    after = with_entry(target, text, name, entry) if changed else before or ""
    return Installation(target, name, before, after, changed, tuple(notes), entry)


def install_target(
    host: HostApp,
    name: str,
    project: bool,
    home: Path | None = None,
    cwd: Path | None = None,
    environ: Mapping[str, str] | None = None,
    platform: str | None = None,
) -> HostFile:
    """Return the file an entry goes into: the host's user file, or its project's.

    Continue's project keeps each server in a block file of its own, in
    ``.continue/mcpServers/``: the entry's is ``NAME.yaml`` there.

    Raises:
        ConfigError: If the host has no project file and ``project`` is asked.
    """
    files = host_files(host, home=home, cwd=cwd, environ=environ, platform=platform)
    if host is HostApp.CONTINUE and project:
        folder = (Path.cwd() if cwd is None else cwd.absolute()) / ".continue" / "mcpServers"
        return HostFile(host, folder / f"{name}.yaml", "project")
    scope = "project" if project else "user"
    target = next((file for file in files if file.scope == scope and not file.within), None)
    if target is None:
        raise ConfigError(host.value, [f"{host.label} has no project config; leave out --project"])
    return target


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
