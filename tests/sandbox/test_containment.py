"""A hostile server under its sandbox: each thing it tries fails, and succeeds without one.

The probe server (``tests/servers/sandbox_probe_server.py``) reads a private key planted in
the user's home, writes outside its ``write`` path, connects to a loopback listener the
test opens, signals a process the test started, and leaves a helper behind in a session
of its own. Each test runs with and without the sandbox, so it can fail.
"""

from __future__ import annotations

import contextlib
import os
import signal
import sys
import uuid
from collections.abc import AsyncIterator
from pathlib import Path
from subprocess import DEVNULL

import anyio
import pytest
from anyio.abc import SocketStream
from sandbox_support import PROBE, processes_with, wait_processes_with

from mcpmount.config import RegistrySettings
from mcpmount.registry import Registry
from support import stdio_spec, text_of

pytestmark = [
    pytest.mark.slow,
    pytest.mark.anyio,
    pytest.mark.usefixtures("no_leaks"),
    pytest.mark.usefixtures("bwrap"),
]


@pytest.fixture(name="home")
def home_fixture(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The user's home (``$HOME``) with a private key planted in ``.ssh``."""
    home = tmp_path / "home"
    (home / ".ssh").mkdir(parents=True)
    (home / ".ssh" / "id_rsa").write_text("-----BEGIN PRIVATE KEY-----\n")
    monkeypatch.setenv("HOME", str(home))
    return home


@pytest.fixture(name="listener_port")
async def listener_port_fixture() -> AsyncIterator[int]:
    """A loopback TCP listener on an OS-chosen port that greets each connection."""

    async def greet(stream: SocketStream) -> None:
        async with stream:  # a client gone early must not fail the listener (and the test)
            with contextlib.suppress(anyio.BrokenResourceError, OSError):
                await stream.send(b"hello")

    listener = await anyio.create_tcp_listener(local_host="127.0.0.1")
    async with listener, anyio.create_task_group() as tg:
        tg.start_soon(listener.serve, greet)
        yield listener.extra(anyio.abc.SocketAttribute.local_port)
        tg.cancel_scope.cancel()


@pytest.mark.parametrize("sandboxed", [True, False], ids=["sandbox", "no-sandbox"])
async def test_a_hostile_server_is_contained_by_its_sandbox_only(
    tmp_path: Path, home: Path, listener_port: int, sandboxed: bool
) -> None:
    """Sandboxed, reading the key, writing outside, connecting, signalling and escaping fail."""
    allowed = tmp_path / "allowed"
    allowed.mkdir()
    outside = tmp_path / "outside.txt"
    token = f"sandbox-probe-{uuid.uuid4().hex}"
    sandbox = {"write": [str(allowed)]} if sandboxed else False
    sleeper = [sys.executable, "-c", "import time; time.sleep(60)"]
    async with await anyio.open_process(sleeper, stdin=DEVNULL, stdout=DEVNULL) as victim:
        try:
            async with Registry() as registry:
                await registry.mount("probe", stdio_spec(PROBE, sandbox=sandbox))

                async def call(tool: str, **arguments: object) -> str:
                    return text_of(await registry.call(f"probe__{tool}", arguments))

                key = await call("read", path=str(home / ".ssh" / "id_rsa"))
                assert key.startswith("failed:" if sandboxed else "ok: -----BEGIN PRIVATE KEY")
                assert await call("write", path=str(allowed / "kept.txt")) == "ok: written"
                assert (allowed / "kept.txt").read_text() == "written"
                await call("write", path=str(outside))
                assert outside.exists() is not sandboxed
                greeting = await call("connect", port=listener_port)
                assert greeting.startswith("failed:" if sandboxed else "ok: hello")
                signalled = await call("signal", pid=victim.pid)
                assert signalled.startswith("failed:" if sandboxed else "ok:")
                assert (await call("leave_child", token=token)).startswith("ok:")
                assert await wait_processes_with(token)  # the helper runs, inside or out
            # Closed: the sandbox's PID namespace ended the helper that left the group, and
            # without one, on Linux, the subreaper launcher (tests/processes has its control).
            assert not processes_with(token)
            if not sandboxed:
                with anyio.fail_after(5):
                    assert await victim.wait() == -signal.SIGTERM
            assert (victim.returncode is None) is sandboxed
        finally:
            for pid in processes_with(token):
                os.kill(pid, signal.SIGKILL)
            if victim.returncode is None:
                victim.kill()


async def test_the_registry_default_sandboxes_a_server_that_sets_none(
    tmp_path: Path, home: Path
) -> None:
    """``sandbox = true`` at the top covers each server; ``sandbox = false`` opts one out."""
    key = str(home / ".ssh" / "id_rsa")
    async with Registry(RegistrySettings(sandbox=True)) as registry:
        await registry.mount("boxed", stdio_spec(PROBE))
        await registry.mount("free", stdio_spec(PROBE, sandbox=False))
        boxed = text_of(await registry.call("boxed__read", {"path": key}))
        free = text_of(await registry.call("free__read", {"path": key}))
    assert boxed.startswith("failed: FileNotFoundError")
    assert free.startswith("ok:")
