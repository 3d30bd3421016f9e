"""What a server's sandbox allows (`Policy`), and which tool can enforce it here (`find_tool`)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from dataclasses import dataclass
from typing import Literal

from mcpmount.config import RegistrySettings, SandboxTable, ServerSpec, StdioServer

__all__ = ["Policy", "SandboxUnavailableError", "Tool", "find_tool", "policy_for", "summary"]

_INSTALL_HINT = "install bubblewrap (apt install bubblewrap, dnf install bubblewrap)"


class SandboxUnavailableError(Exception):
    """Raised when a server must run in a sandbox that cannot be made here."""


@dataclass(frozen=True, slots=True)
class Policy:
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

    def describe_network(self) -> str:
        """``network off``, ``network on`` or ``network: a.example, b.example``."""
        if self.network is False:
            return "network off"
        if self.network is True:
            return "network on"
        return "network: " + ", ".join(self.network)


def policy_for(
    table: SandboxTable | None, default: bool | Literal["prefer"], home: str
) -> Policy | None:
    """Return the sandbox a server runs in, or None if it runs unsandboxed.

    Args:
        table: The server's own ``sandbox``; None uses ``default``.
        default: The registry's ``sandbox``.
        home: The user's home, for paths given as ``~/...``.
    """
    if table is None:
        if default is False:
            return None
        return Policy(prefer=default == "prefer")
    if not table.enabled:
        return None

    def expand(path: str) -> str:
        return os.path.normpath(home + path[1:] if path.startswith("~") else path)

    network = table.network if isinstance(table.network, bool) else tuple(table.network)
    return Policy(
        read=tuple(map(expand, table.read)),
        write=tuple(map(expand, table.write)),
        network=network,
        prefer=table.prefer,
        max_connections=table.max_connections,
        max_buffered_bytes=table.max_buffered_bytes,
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


def summary(spec: ServerSpec, settings: RegistrySettings) -> str:
    """Say how a server is sandboxed here, for ``check`` and ``status``.

    ``bwrap, network off``; ``none``; ``none (no sandbox tool)`` where ``prefer`` runs it
    unsandboxed; ``refused (no sandbox tool)``; ``-`` for a url server.
    """
    if not isinstance(spec, StdioServer):
        return "-"
    policy = policy_for(spec.sandbox, settings.sandbox, os.path.expanduser("~"))
    if policy is None:
        return "none"
    tool = find_tool()
    if isinstance(tool, Tool):
        return f"{tool.kind}, {policy.describe_network()}"
    return "none (no sandbox tool)" if policy.prefer else "refused (no sandbox tool)"
