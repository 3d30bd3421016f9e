"""What the sandbox tests share: the probe server, bwrap's presence, finding a process by argv."""

from __future__ import annotations

import os
import shutil
import subprocess

import anyio

from support import SERVERS

PROBE = str(SERVERS / "sandbox_probe_server.py")


def has_bwrap() -> bool:
    """Whether bwrap is installed and can make a sandbox here."""
    bwrap = shutil.which("bwrap")
    if bwrap is None:
        return False
    argv = [bwrap, "--unshare-all", "--ro-bind", "/", "/", "--", "/bin/true"]
    return subprocess.run(argv, capture_output=True, check=False).returncode == 0


def processes_with(token: str) -> list[int]:
    """The pids of live processes whose command line holds ``token``."""
    found: list[int] = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit() or int(entry) == os.getpid():
            continue
        try:
            with open(f"/proc/{entry}/cmdline", "rb") as f:
                cmdline = f.read()
            with open(f"/proc/{entry}/stat") as f:
                state = f.read().rsplit(")", 1)[1].split()[0]
        except OSError:
            continue
        if token.encode() in cmdline and state != "Z":
            found.append(int(entry))
    return found


async def wait_processes_with(token: str, timeout: float = 10.0) -> list[int]:
    """`processes_with`, once some exist (a forked helper takes a moment to exec)."""
    with anyio.move_on_after(timeout):
        while not (found := processes_with(token)):
            await anyio.sleep(0.02)
        return found
    return []
