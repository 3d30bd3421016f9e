"""A host never loses every server: under ``mcpmount serve``, a server that hangs or crashes
as it starts is reported and retried while the others serve, and comes back once fixed.

Everything is real: ``serve`` run as a host runs it (stdio, the SDK ``Client`` in the
handshake era, as desktop hosts speak), a good fixture server, one that never answers its
handshake (``--no-init``) and one that exits at start while a flag file exists
(tests/servers/flaky_server.py); ``mcpmount status`` run as a user runs it. None of the
three tables says ``required``, as in a host's file: before, the crash ended ``serve``.
"""

from __future__ import annotations

import json
import random
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import anyio
import mcp_types
import pytest
from mcp import Client

from mcpmount.registry import Registry
from mcpmount.serve.front import Retries
from mcpmount.serve.front._retries import ATTEMPTS, FIRST_DELAY, JITTER, MAX_DELAY
from serve.relay_support import Host
from serve.serve_support import (
    BEHAVIOUR,
    STARTUP,
    connected,
    names,
    served_http,
    served_stdio,
    wait_for_tool,
)
from support import SERVERS, fixture_server, script_server, text_of

pytestmark = [pytest.mark.slow, pytest.mark.anyio, pytest.mark.usefixtures("no_leaks")]

FIRST_LIST_WAIT = 10.0
"""The config's ``first_list_wait``: the first list waits this long at most."""

HUNG_TIMEOUT = 14
"""The hung server's ``startup_timeout``: past the first list's bound, so a list answered
within that bound did not wait for it."""


@pytest.fixture(name="runtime_dir", autouse=True)
def runtime_dir_fixture(monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A runtime directory of this test's own, where ``status`` finds the serve (short: a
    unix socket's path may not be much over 100 bytes)."""
    with tempfile.TemporaryDirectory(prefix="mm-") as directory:
        monkeypatch.setenv("XDG_RUNTIME_DIR", directory)
        yield Path(directory)


def flaky(name: str, flag: Path, extra: str = "") -> str:
    """A server that exits at start while ``flag`` exists."""
    return script_server(name, str(SERVERS / "flaky_server.py"), str(flag), extra=extra)


def three_servers(tmp_path: Path, flag: Path) -> str:
    path = tmp_path / "serve.toml"
    path.write_text(
        f"[serve]\nfirst_list_wait = {FIRST_LIST_WAIT}\n\n"
        + fixture_server("good")
        + fixture_server("hung", "--no-init", extra=f"startup_timeout = {HUNG_TIMEOUT}")
        + flaky("crashy", flag)
    )
    return str(path)


async def status_rows(config: str) -> dict[str, dict[str, object]]:
    """``mcpmount status CONFIG --json``: the running serve's rows, by server."""
    with anyio.fail_after(STARTUP):
        done = await anyio.run_process(
            [sys.executable, "-m", "mcpmount", "status", config, "--json"],
            check=False,
            stdin=subprocess.DEVNULL,
        )
    rows = json.loads(done.stdout)
    assert all(row["served_by"] for row in rows), rows  # the serve's, not mounted here
    return {row["server"]: row for row in rows}


async def wait_failed(config: str, *servers: str) -> dict[str, dict[str, object]]:
    """Ask ``status`` until each of ``servers`` is failed (and retried), within bounds."""
    with anyio.fail_after(HUNG_TIMEOUT + STARTUP):
        while True:
            rows = await status_rows(config)
            if all(rows[server]["state"] == "failed" for server in servers):
                return rows
            await anyio.sleep(0.2)


async def test_a_hung_and_a_crashing_server_do_not_take_the_host_down(tmp_path: Path) -> None:
    """The good server is listed and called within first_list_wait + 1 s; both failures are
    in status, in the log (with what to do) and told to the client; the crashed server is
    back, listed, callable and announced, once fixed, without a restart of serve."""
    flag = tmp_path / "broken"
    flag.touch()
    config = three_servers(tmp_path, flag)
    host = Host()
    changed: list[object] = []

    def on_message(message: object) -> None:
        if isinstance(message, mcp_types.ToolListChangedNotification):
            changed.append(message)

    async with served_stdio(config, tmp_path, on_message=on_message, **host.callbacks()) as client:
        with anyio.fail_after(FIRST_LIST_WAIT + 1):
            first = names(await client.list_tools())
            echoed = await client.call_tool("good__echo", {"text": "still here"})
        assert "good__echo" in first
        assert not [name for name in first if name.startswith(("hung__", "crashy__"))]
        assert text_of(echoed) == "still here"

        rows = await wait_failed(config, "crashy")
        assert "exited with code 1" in str(rows["crashy"]["error"])
        assert "broken" in str(rows["crashy"]["error"])  # its stderr, quoted
        assert "trying again" in str(rows["crashy"]["retry"])
        assert rows["hung"]["state"] in ("starting", "failed")  # it has 14 s to answer
        assert rows["good"]["state"] == "ready"
        with anyio.fail_after(BEHAVIOUR):
            while "crashy" not in {entry.logger for entry in host.logs}:
                await anyio.sleep(0.05)
        told = {entry.logger: str(entry.data) for entry in host.logs}
        assert "exited with code 1" in told["crashy"]

        flag.unlink()  # fixed: the next retry mounts it
        with anyio.fail_after(BEHAVIOUR + 16):  # the backoff may be at 16 s by now
            while not changed or "crashy__echo" not in names(await client.list_tools()):
                await anyio.sleep(0.1)
        with anyio.fail_after(BEHAVIOUR):
            back = await client.call_tool("crashy__echo", {"text": "back"})
            assert text_of(back) == "back"
            assert (await status_rows(config))["crashy"]["state"] == "ready"
            while "crashy" not in {e.logger for e in host.logs if e.level == "info"}:
                await anyio.sleep(0.05)

        rows = await wait_failed(config, "hung")  # once its startup_timeout passed
        assert f"within {HUNG_TIMEOUT} s" in str(rows["hung"]["error"])
        assert "trying again" in str(rows["hung"]["retry"])
        assert isinstance(rows["hung"]["attempts"], int)
        with anyio.fail_after(BEHAVIOUR):  # the client is told as it times out
            while "hung" not in {entry.logger for entry in host.logs}:
                await anyio.sleep(0.05)
        assert {e.level for e in host.logs if e.logger == "hung"} == {"warning"}
    log = " ".join((tmp_path / "serve.log").read_text().split())  # unwrapped
    for server in ("crashy", "hung"):
        assert f"server '{server}' did not start" in log
    assert "mounts by itself" in log  # what to do
    assert "mcpmount check" in log
    assert "server 'crashy' is up" in log


async def test_over_http_the_good_server_serves_and_the_failure_is_told(tmp_path: Path) -> None:
    """The same over streamable HTTP: a session lists and calls the good server's tools,
    and is told that the crashing one did not start (the first list's bound is the stdio
    test's)."""
    flag = tmp_path / "broken"
    flag.touch()
    body = f"[serve]\nfirst_list_wait = {FIRST_LIST_WAIT}\n\n"
    config = tmp_path / "serve.toml"
    config.write_text(body + fixture_server("good") + flaky("crashy", flag))
    host = Host()
    async with (
        served_http(str(config), tmp_path) as (url, _),
        connected(Client(url, mode="legacy", **host.callbacks())) as client,
    ):
        await wait_for_tool(client, "good__echo")
        with anyio.fail_after(BEHAVIOUR):
            assert text_of(await client.call_tool("good__echo", {"text": "hi"})) == "hi"
        with anyio.fail_after(BEHAVIOUR):
            while "crashy" not in {entry.logger for entry in host.logs}:
                await anyio.sleep(0.05)
        rows = await status_rows(str(config))
        assert rows["crashy"]["state"] == "failed"


def test_the_retry_schedule_doubles_to_a_cap_jittered_for_about_14_minutes() -> None:
    """1, 2, 4, ... 32 s, then 60 s, each within ±20 % and not all alike; 20 attempts in
    all, the first mount included, about 14 minutes (as docs/serve.md says)."""
    retries = Retries(Registry(), rng=random.Random(38))
    bases = [min(FIRST_DELAY * 2 ** (n - 1), MAX_DELAY) for n in range(1, ATTEMPTS)]
    waits = [retries.delay(n) for n in range(1, ATTEMPTS)]
    assert bases[:7] == [1, 2, 4, 8, 16, 32, 60]
    for wait, base in zip(waits, bases, strict=True):
        assert base * (1 - JITTER) <= wait <= base * (1 + JITTER)
    assert len({round(wait / base, 6) for wait, base in zip(waits, bases, strict=True)}) > 1
    assert 13 * 60 <= sum(bases) <= 15 * 60
