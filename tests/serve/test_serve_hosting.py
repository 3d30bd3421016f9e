"""The served process: it exits on stdin EOF, SIGTERM or a failed required server, reaping
every upstream server, and its HTTP endpoint refuses a foreign Host."""

from __future__ import annotations

import signal
import subprocess
from pathlib import Path
from typing import cast

import anyio
import httpx2
import pytest
from mcp import Client

from serve.serve_support import (
    BEHAVIOUR,
    STARTUP,
    connected,
    serve_command,
    served_http,
    served_stdio,
    wait_for_tool,
    write_config,
)
from support import alive, fixture_server

pytestmark = [pytest.mark.slow, pytest.mark.anyio, pytest.mark.usefixtures("no_leaks")]


class TestStdio:
    async def test_stdin_eof_closes_every_upstream_server(self, tmp_path: Path) -> None:
        """When the host goes away, serve reaps what it started and exits."""
        pidfile = tmp_path / "one.pid"
        config = write_config(tmp_path, fixture_server("one", "--pidfile", str(pidfile)))
        async with served_stdio(config, tmp_path) as client:
            await wait_for_tool(client, "one__pid")
            with anyio.fail_after(BEHAVIOUR):
                upstream = (await client.call_tool("one__pid", {})).structured_content
        assert not alive(cast("dict[str, int]", upstream)["result"])


class TestHttp:
    async def test_a_foreign_host_header_is_refused(self, tmp_path: Path) -> None:
        """DNS-rebinding protection stays on: a request for another Host is refused."""
        config = write_config(tmp_path, fixture_server("one"))
        async with served_http(config, tmp_path) as (url, _):
            async with connected(Client(url)) as client:  # mounted: the shutdown is then quick
                await wait_for_tool(client, "one__echo")
            with anyio.fail_after(BEHAVIOUR):
                async with httpx2.AsyncClient() as http:
                    response = await http.post(
                        url,
                        headers={"Host": "evil.example.com", "Content-Type": "application/json"},
                        content=b"{}",
                    )
        assert response.status_code in (403, 421)

    async def test_sigterm_closes_every_upstream_server_and_exits_0(self, tmp_path: Path) -> None:
        """SIGTERM: serve reaps each upstream server (pidfiles name them), then exits 0."""
        pidfiles = [tmp_path / "a.pid", tmp_path / "b.pid"]
        config = write_config(
            tmp_path,
            fixture_server("a", "--pidfile", str(pidfiles[0])),
            fixture_server("b", "--pidfile", str(pidfiles[1])),
        )
        async with served_http(config, tmp_path) as (url, process):
            async with connected(Client(url)) as client:
                await wait_for_tool(client, "a__pid")
                await wait_for_tool(client, "b__pid")
            pids = [
                int(line.split()[1]) for p in pidfiles for line in p.read_text().split("\n") if line
            ]
            assert all(alive(pid) for pid in pids)
            with anyio.fail_after(BEHAVIOUR):
                process.send_signal(signal.SIGTERM)
                await process.wait()
        assert process.returncode == 0, (tmp_path / "serve.log").read_text()
        assert not [pid for pid in pids if alive(pid)]


def test_a_required_server_failing_stops_serve_with_exit_1(tmp_path: Path) -> None:
    """``required = true`` keeps all or nothing: the error names the server on stderr;
    exit 1; nothing keeps running, not even the good server beside it."""
    bad = fixture_server("bad", "--crash-on-start", extra="required = true")
    config = write_config(tmp_path, fixture_server("good") + bad)
    done = subprocess.run(
        serve_command(config, "--transport", "http", "--port", "0"),
        capture_output=True,
        text=True,
        timeout=STARTUP + BEHAVIOUR,  # the process starts, its server fails, it stops
        check=False,
    )
    assert done.returncode == 1
    assert "bad" in done.stderr
    assert "1 required server failed" in done.stderr
    assert done.stdout == ""
