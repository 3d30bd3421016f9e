"""A sandbox per stdio server: bubblewrap on Linux, sandbox-exec on macOS.

`policy_for` reads a server's ``sandbox`` (and the registry's default) into a `SandboxPolicy`;
`sandboxed` turns a command into the one that runs it under that policy, with the proxy
of a host allow-list beside it; `summary` says how a server is sandboxed here.

Its modules: ``_exposure`` (what a sandbox never shows: credentials and the folders
around them), ``_runtime`` (the program and runtime a server needs to see), ``_policy``
(the policy, the tool this machine has, and what a sandbox mounts: `mounts_of`),
``_bwrap`` (the Linux command line and the in-sandbox forwarder), ``_macos`` (the
Seatbelt profile), ``_proxy`` (the allow-list proxy), ``_addresses`` (which addresses it
may reach) and ``_launch`` (all of it around one spawn).
"""

from mcpmount.sandbox._bwrap import python_paths
from mcpmount.sandbox._exposure import credential_locations, exposed
from mcpmount.sandbox._launch import Launch, sandboxed
from mcpmount.sandbox._macos import sandbox_exec_profile
from mcpmount.sandbox._policy import (
    Mounts,
    SandboxPolicy,
    SandboxUnavailableError,
    Tool,
    find_tool,
    mounts_of,
    policy_for,
    summary,
)
from mcpmount.sandbox._runtime import SYSTEM_DIRS

__all__ = [
    "SYSTEM_DIRS",
    "Launch",
    "Mounts",
    "SandboxPolicy",
    "SandboxUnavailableError",
    "Tool",
    "credential_locations",
    "exposed",
    "find_tool",
    "mounts_of",
    "policy_for",
    "python_paths",
    "sandbox_exec_profile",
    "sandboxed",
    "summary",
]
