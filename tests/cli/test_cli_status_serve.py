"""``mcpmount status CONFIG`` shows a running ``mcpmount serve CONFIG``: its servers, calls
and latency, read on the serve's status socket, without starting servers of its own.

Everything is a real process: ``serve`` (over stdio or HTTP) in front of fixture servers that
write a marker file when they start (``--pidfile``), an SDK ``Client`` calling through it,
and ``status`` run as a user runs it. "Not started" is read from the disk: no marker.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import stat
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import anyio
import pytest
from mcp import Client

from serve.serve_support import (
    BEHAVIOUR,
    STARTUP,
    connected,
    served_http,
    served_stdio,
    wait_for_tool,
)
from support import fixture_server, write_config

pytestmark = [pytest.mark.slow, pytest.mark.anyio, pytest.mark.usefixtures("no_leaks")]


@pytest.fixture(name="runtime_dir")
def runtime_dir_fixture(monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A runtime directory (``XDG_RUNTIME_DIR``) of this test's own, for every process it
    starts; short, since a unix socket's path may not be much over 100 bytes."""
    with tempfile.TemporaryDirectory(prefix="mm-") as directory:
        monkeypatch.setenv("XDG_RUNTIME_DIR", directory)
        yield Path(directory)


def two_servers(tmp_path: Path) -> tuple[str, list[Path]]:
    """A config of two fixture servers, ``a`` and ``b``, and the markers they write on start."""
    markers = [tmp_path / "a.pid", tmp_path / "b.pid"]
    body = "".join(
        fixture_server(name, "--name", name, "--pidfile", str(marker))
        for name, marker in zip("ab", markers, strict=True)
    )
    return write_config(tmp_path, body), markers


async def status(*args: str) -> subprocess.CompletedProcess[str]:
    """Run ``mcpmount status ARGS`` to its end."""
    with anyio.fail_after(STARTUP + BEHAVIOUR):  # it may mount every server
        done = await anyio.run_process(
            [sys.executable, "-m", "mcpmount", "status", *args],
            check=False,
            stdin=subprocess.DEVNULL,
        )
    return subprocess.CompletedProcess(
        done.args, done.returncode, done.stdout.decode(), done.stderr.decode()
    )


async def call_through(client: Client) -> None:
    """Once both servers are mounted, call ``a`` twice and ``b`` once."""
    await wait_for_tool(client, "a__echo")
    await wait_for_tool(client, "b__echo")
    for name, text in (("a__echo", "one"), ("a__echo", "two"), ("b__echo", "three")):
        result = await client.call_tool(name, {"text": text})
        assert not result.is_error, result


def assert_shows_the_serve(done: subprocess.CompletedProcess[str], markers: list[Path]) -> int:
    """``status --json`` showed the serve's servers with the calls made through it, and
    started none of its own; returns the serve's pid."""
    assert done.returncode == 0, done.stderr
    rows = {row["server"]: row for row in json.loads(done.stdout)}
    assert sorted(rows) == ["a", "b"]
    assert (rows["a"]["calls"], rows["b"]["calls"]) == (2, 1)
    assert all(row["state"] == "ready" for row in rows.values())
    assert all(0 < row["p50_ms"] <= row["p95_ms"] for row in rows.values())
    pids = {row["served_by"] for row in rows.values()}
    assert len(pids) == 1
    pid = pids.pop()
    assert f"showing the running serve (pid {pid}, " in done.stderr
    assert not any(marker.exists() for marker in markers)  # no server started by status
    return pid


def assert_mounted_here(done: subprocess.CompletedProcess[str], markers: list[Path]) -> None:
    """``status --json`` started the servers itself, as with no serve running."""
    assert done.returncode == 0, done.stderr
    rows = json.loads(done.stdout)
    assert [(row["server"], row["calls"]) for row in rows] == [("a", 0), ("b", 0)]
    assert not any("served_by" in row for row in rows)
    assert "running serve" not in done.stderr
    assert all(marker.exists() for marker in markers)


async def test_status_shows_a_stdio_serves_servers_and_calls_without_starting_any(
    tmp_path: Path, runtime_dir: Path
) -> None:
    """A serve a host runs over stdio is found by its config's path alone: ``status`` shows
    its two servers with the calls made through it and starts nothing; ``--local`` mounts
    here as before; once the serve is gone, ``status`` mounts here again."""
    config, markers = two_servers(tmp_path)
    async with served_stdio(config, tmp_path) as client:
        await call_through(client)
        for marker in markers:
            marker.unlink()
        pid = assert_shows_the_serve(await status(config, "--json"), markers)
        table = await status(config)
        assert table.returncode == 0, table.stderr
        assert f"2 servers, serve pid {pid}" in table.stdout
        assert_mounted_here(await status(config, "--local", "--json"), markers)
        for marker in markers:
            marker.unlink()
    assert list((runtime_dir / "mcpmount").iterdir()) == []  # the serve removed its socket
    assert_mounted_here(await status(config, "--json"), markers)


async def test_status_shows_an_http_serve_whose_socket_only_this_user_may_open(
    tmp_path: Path, runtime_dir: Path
) -> None:
    """Over HTTP too, with no ops listener configured; the socket's directory is 0700 and
    the socket 0600, and both go with the serve."""
    config, markers = two_servers(tmp_path)
    async with (
        served_http(config, tmp_path) as (url, process),
        connected(Client(url)) as client,
    ):
        await call_through(client)
        for marker in markers:
            marker.unlink()
        assert assert_shows_the_serve(await status(config, "--json"), markers) == process.pid
        directory = runtime_dir / "mcpmount"
        assert stat.S_IMODE(directory.stat().st_mode) == 0o700
        [sock] = directory.iterdir()
        assert sock.name.endswith(f"-{process.pid}.sock")
        assert stat.S_IMODE(sock.stat().st_mode) == 0o600
    assert process.returncode == 0
    assert list((runtime_dir / "mcpmount").iterdir()) == []


async def test_a_killed_serves_stale_socket_is_ignored_removed_and_replaced(
    tmp_path: Path, runtime_dir: Path
) -> None:
    """A serve killed with SIGKILL leaves its socket: ``status`` finds nobody listening
    there, mounts here and removes it; a new serve of the config is found as usual."""
    config, markers = two_servers(tmp_path)
    directory = runtime_dir / "mcpmount"
    first = tmp_path / "first"  # each serve writes its port and log in its own directory
    first.mkdir()
    async with served_http(config, first) as (_, process):
        # Killed once its servers run: a server spawned at the kill could still hold, until
        # its exec, a copy of the listening socket, which would then accept.
        with anyio.fail_after(STARTUP):
            while not (all(m.exists() for m in markers) and any(directory.glob("*.sock"))):
                await anyio.sleep(0.02)
        os.killpg(process.pid, signal.SIGKILL)  # serve alone: its servers are other groups
        await process.wait()
    [stale] = directory.iterdir()
    assert stale.name.endswith(f"-{process.pid}.sock")
    with socket.socket(socket.AF_UNIX) as probe, pytest.raises(ConnectionRefusedError):
        probe.connect(str(stale))
    for marker in markers:
        marker.unlink()
    assert_mounted_here(await status(config, "--json"), markers)
    assert not stale.exists()
    for marker in markers:
        marker.unlink()
    async with (
        served_http(config, tmp_path) as (url, process),
        connected(Client(url)) as client,
    ):
        await call_through(client)
        for marker in markers:
            marker.unlink()
        assert assert_shows_the_serve(await status(config, "--json"), markers) == process.pid


async def test_a_failed_servers_row_is_the_one_status_prints_here_with_no_secret(
    tmp_path: Path, runtime_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An optional server that fails to mount, printing the secret its ``env`` holds: the
    serve publishes its row as ``status --local`` prints it, the secret hidden in both, and
    nowhere in what the socket sends."""
    secret = "planted-7c1e9b2d44a0"
    monkeypatch.setenv("PLANTED", secret)
    config = write_config(
        tmp_path,
        fixture_server("a", "--name", "a")
        + fixture_server(
            "leaky",
            "--echo-env",
            "API_TOKEN",
            "--crash-on-start",
            extra='env = { API_TOKEN = "${PLANTED}" }\nrequired = false\nstartup_timeout = 5',
        ),
    )
    async with (
        served_http(config, tmp_path) as (url, _),
        connected(Client(url)) as client,
    ):
        await wait_for_tool(client, "a__echo")
        [sock] = (runtime_dir / "mcpmount").iterdir()
        with anyio.fail_after(BEHAVIOUR):
            async with await anyio.connect_unix(sock) as stream:
                sent = b"".join([chunk async for chunk in stream])
        served = await status(config, "--json")
    here = await status(config, "--json", "--local")
    assert secret.encode() not in sent
    for done in (served, here):
        assert done.returncode == 1, done.stderr  # a server failed
        assert secret not in done.stdout + done.stderr
    [published] = [row for row in json.loads(served.stdout) if row["server"] == "leaky"]
    [printed] = [row for row in json.loads(here.stdout) if row["server"] == "leaky"]
    assert "fatal: bad config" in printed["error"]  # its stderr tail, redacted
    assert "trying again" in published.pop("retry")  # the serve retries it; --local not
    assert published.pop("attempts") >= 1
    assert {**published, "served_by": None} == {**printed, "served_by": None}
