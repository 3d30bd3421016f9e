"""What a server's sandbox allows (`SandboxPolicy`), which tool can enforce it here (`find_tool`),
and what it shows of the host (`resolve`, `mounts_of`: for the launch, ``check`` and ``status``)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Literal

from mcp.client.stdio import get_default_environment

from mcpmount.config import RegistrySettings, SandboxTable, ServerSpec, StdioServer
from mcpmount.sandbox._exposure import SandboxUnavailableError
from mcpmount.sandbox._runtime import Program, program_paths, resolve_command

__all__ = [
    "Mounts",
    "SandboxPolicy",
    "SandboxUnavailableError",
    "Tool",
    "find_tool",
    "mounts_of",
    "policy_for",
    "resolve",
    "summary",
]

_INSTALL_HINT = "install bubblewrap (apt install bubblewrap, dnf install bubblewrap)"


@dataclass(frozen=True, slots=True)
class SandboxPolicy:
    """A server's sandbox: what it may read and write, and where it may connect."""

    read: tuple[str, ...] = ()
    """Paths mounted read-only, ``~`` expanded."""
    write: tuple[str, ...] = ()
    """Paths mounted read-write, ``~`` expanded."""
    network: bool | tuple[str, ...] = False
    """No network, the host's, or only these hosts through the proxy."""
    prefer: bool = False
    """Whether to run unsandboxed (with a warning) where no sandbox tool exists."""
    max_connections: int = 32
    """Connections open at once through the proxy of a host list."""
    max_buffered_bytes: int = 4 * 1024 * 1024
    """Bytes that proxy holds in flight at once."""
    private: tuple[str, ...] = ()
    """More folders never shown, as mcpmount's state directory is not: ``token_dir``."""

    def describe_network(self) -> str:
        """``network off``, ``network on`` or ``network: a.example, b.example``."""
        if self.network is False:
            return "network off"
        if self.network is True:
            return "network on"
        return "network: " + ", ".join(self.network)


def policy_for(
    sandbox: SandboxTable | bool | Literal["prefer"] | None,
    home: str,
    token_dir: str | None = None,
) -> SandboxPolicy | None:
    """Return the sandbox a server runs in, or None if it runs unsandboxed.

    Args:
        sandbox: The server's ``sandbox`` as it runs with it (`EffectiveSettings`): its
            own table, else the registry's ``true``, ``false`` or ``"prefer"``; None is
            ``false``.
        home: The user's home, for paths given as ``~/...``.
        token_dir: The registry's ``token_dir`` (OAuth logins), never shown where set.
    """

    def expand(path: str) -> str:
        # normpath keeps a leading "//" (POSIX allows it a meaning): "//tmp" is "/tmp" here.
        return "/" + os.path.normpath(home + path[1:] if path.startswith("~") else path).lstrip("/")

    private = () if token_dir is None else (expand(token_dir),)
    if sandbox is None or sandbox is False:
        return None
    if not isinstance(sandbox, SandboxTable):
        return SandboxPolicy(prefer=sandbox == "prefer", private=private)
    table = sandbox
    if not table.enabled:
        return None

    network = table.network if isinstance(table.network, bool) else tuple(table.network)
    return SandboxPolicy(
        read=tuple(map(expand, table.read)),
        write=tuple(map(expand, table.write)),
        network=network,
        prefer=table.prefer,
        max_connections=table.max_connections,
        max_buffered_bytes=table.max_buffered_bytes,
        private=private,
    )


@dataclass(frozen=True, slots=True)
class Tool:
    """The sandbox tool of this machine."""

    kind: Literal["bwrap", "sandbox-exec"]
    path: str


_probed: dict[str, str | None] = {}
"""bwrap's answer to a trial run, per executable: None if it works, else why not."""


def find_tool() -> Tool | str:
    """Return this machine's working sandbox tool, or why there is none (what to install).

    bwrap is tried once per process (a few milliseconds): it may be installed but unable
    to create namespaces (unprivileged user namespaces turned off).
    """
    if sys.platform == "darwin":
        path = shutil.which("sandbox-exec") or "/usr/bin/sandbox-exec"
        if os.path.exists(path):
            return Tool("sandbox-exec", path)
        return "sandbox-exec was not found (it ships with macOS)"
    if not sys.platform.startswith("linux"):
        return f"no sandbox tool is supported on {sys.platform}"
    path = shutil.which("bwrap")
    if path is None:
        return f"bwrap was not found; {_INSTALL_HINT}"
    if path not in _probed:
        _probed[path] = _probe(path)
    problem = _probed[path]
    return Tool("bwrap", path) if problem is None else problem


def _probe(bwrap: str) -> str | None:
    argv = [bwrap, "--unshare-all", "--ro-bind", "/", "/", "--", "/bin/true"]
    try:
        done = subprocess.run(argv, capture_output=True, timeout=10, check=False)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"bwrap cannot run ({exc})"
    if done.returncode == 0:
        return None
    said = done.stderr.decode(errors="replace").strip().splitlines()
    reason = said[-1] if said else f"exit code {done.returncode}"
    return f"bwrap cannot create a sandbox here ({reason}); allow unprivileged user namespaces"


def homes(env: Mapping[str, str]) -> list[str]:
    """The user's home, and the child's ``$HOME`` where it names another one."""
    found = [os.path.expanduser("~")]
    child = os.path.normpath(env.get("HOME", "") or "/")
    if os.path.isabs(child) and child != "/" and child not in found:
        found.append(child)
    return found


def resolve(
    policy: SandboxPolicy,
    command: str,
    args: Sequence[str],
    env: Mapping[str, str],
    cwd: str | None,
) -> Program:
    """Check the policy's paths, and find the program and what it needs shown.

    Raises:
        SandboxUnavailableError: If a ``read`` or ``write`` path is missing, or the program
            cannot run without showing what a sandbox never shows.
        FileNotFoundError: If ``command`` is not found on the child's PATH.
    """
    for key, paths in (("read", policy.read), ("write", policy.write)):
        for path in paths:
            if not os.path.exists(path):
                raise SandboxUnavailableError(
                    f"its sandbox {key} path {path!r} does not exist; create it or remove it"
                )
    executable = resolve_command(command, env, cwd)
    granted = (*policy.read, *policy.write)
    return program_paths(executable, args, cwd, env, homes(env), granted, policy.private)


@dataclass(frozen=True, slots=True)
class Mounts:
    """What one server's sandbox shows of the host beyond the system, or why it is refused."""

    program: tuple[str, ...] = ()
    """The program and its runtime, read-only (a symlink as ``path -> target``)."""
    read: tuple[str, ...] = ()
    """``read``, read-only."""
    write: tuple[str, ...] = ()
    """``write``, read-write."""
    refused: str | None = None
    """Why the sandbox cannot be made (the server is not started), or None."""
    hidden: str | None = None
    """The path it refused to show, where that is why."""

    def as_json(self) -> dict[str, object]:
        """The ``sandbox_mounts`` of ``check --json`` and ``status --json``."""
        return {
            "program": list(self.program),
            "read": list(self.read),
            "write": list(self.write),
            "refused": self.refused,
        }


def mounts_of(spec: ServerSpec, settings: RegistrySettings | None = None) -> Mounts | None:
    """Return what a server's sandbox shows here, or None where it runs unsandboxed.

    Args:
        spec: The server.
        settings: The registry's (its ``sandbox`` for a server that sets none, and its
            ``token_dir``); None reads the server's own ``sandbox`` alone.
    """
    if not isinstance(spec, StdioServer):
        return None
    sandbox = spec.sandbox if settings is None else spec.effective(settings).sandbox
    token_dir = None if settings is None else settings.token_dir
    policy = policy_for(sandbox, os.path.expanduser("~"), token_dir)
    if policy is None:
        return None
    tool = find_tool()
    if not isinstance(tool, Tool):
        return None if policy.prefer else Mounts(refused=tool)
    env = get_default_environment() | spec.env_values()
    try:
        program = resolve(policy, spec.command, spec.args, env, spec.cwd)
    except SandboxUnavailableError as exc:
        return Mounts(read=policy.read, write=policy.write, refused=str(exc), hidden=exc.hidden)
    except OSError:  # not found: the mount fails saying so
        return Mounts(read=policy.read, write=policy.write)
    shown = (*program.paths, *(f"{path} -> {target}" for path, target in program.links))
    return Mounts(shown, policy.read, policy.write)


def summary(spec: ServerSpec, settings: RegistrySettings) -> str:
    """Say how a server is sandboxed here, for ``check`` and ``status``.

    ``bwrap, network off``; ``none``; ``none (no sandbox tool)`` where ``prefer`` runs it
    unsandboxed; ``refused (no sandbox tool)``, ``refused (would show ~/x)`` or ``refused
    (why)``; ``-`` for a url server.
    """
    if not isinstance(spec, StdioServer):
        return "-"
    home = os.path.expanduser("~")
    policy = policy_for(spec.effective(settings).sandbox, home, settings.token_dir)
    if policy is None:
        return "none"
    tool = find_tool()
    if not isinstance(tool, Tool):
        return "none (no sandbox tool)" if policy.prefer else "refused (no sandbox tool)"
    mounts = mounts_of(spec, settings)
    if mounts is not None and mounts.hidden is not None:
        return f"refused (would show {mounts.hidden})"
    if mounts is not None and mounts.refused is not None:
        return f"refused ({mounts.refused})"
    return f"{tool.kind}, {policy.describe_network()}"
