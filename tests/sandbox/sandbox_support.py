"""What the sandbox tests share: the probe server, bwrap's presence, finding a process by argv."""

from __future__ import annotations

import contextlib
import os
import shutil
import subprocess
from collections.abc import AsyncGenerator

import anyio
from anyio.abc import SocketStream

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


@contextlib.asynccontextmanager
async def web_listener() -> AsyncGenerator[int]:
    """Yield the port of a loopback service (like serve's port) on an OS-chosen port.

    It answers an HTTP request with ``hello`` and closes; a bare connection gets ``hello``
    after 1 s of silence and is held open until the other side closes it.
    """

    async def answer(stream: SocketStream) -> None:
        # A client gone early must not fail the listener, which would cancel the test.
        async with stream:
            with contextlib.suppress(anyio.EndOfStream, anyio.BrokenResourceError, OSError):
                request = b""
                with anyio.move_on_after(1):
                    while b"\r\n\r\n" not in request:
                        request += await stream.receive()
                await stream.send(b"HTTP/1.0 200 OK\r\nContent-Length: 5\r\n\r\nhello")
                while not request:  # held open, like a client's idle keep-alive connection
                    await stream.receive()

    listener = await anyio.create_tcp_listener(local_host="127.0.0.1")
    async with listener, anyio.create_task_group() as tg:
        tg.start_soon(listener.serve, answer)
        yield listener.extra(anyio.abc.SocketAttribute.local_port)
        tg.cancel_scope.cancel()
