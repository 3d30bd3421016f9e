"""The call log's other sinks: serve's stdout over HTTP, refused under stdio."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest
from serve_calllog_support import (
    ENVIRONMENT,
    FULL,
    Sent,
    calllog_config,
    client_of,
    digest,
    log_files,
)

from serve.serve_support import BEHAVIOUR, serve_command, wait_for_tool
from support import portfile_process

pytestmark = [pytest.mark.anyio, pytest.mark.slow, pytest.mark.usefixtures("no_leaks")]


async def test_call_log_stdout_writes_each_record_on_serves_stdout(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``--call-log stdout`` (over HTTP) writes each request's record, one JSON line, on
    serve's stdout, and writes no file."""
    for name, value in ENVIRONMENT.items():
        monkeypatch.setenv(name, value)
    config = calllog_config(tmp_path, "")
    portfile = tmp_path / "port"
    command = serve_command(config, "--transport", "http", "--port", "0")
    flags = ["--portfile", str(portfile), "--call-log", "stdout"]
    log = tmp_path / "serve.log"
    served = portfile_process([*command, *flags], portfile, log, stdout=subprocess.PIPE)
    async with served as (url, process):
        assert process.stdout is not None
        async with client_of(url, FULL, Sent(), mode="legacy") as client:
            await wait_for_tool(client, "pub__echo")
            await client.call_tool("pub__echo", {"text": "out"})
        seen: list[dict[str, Any]] = []
        buffer = b""
        with anyio.fail_after(BEHAVIOUR):
            while not any(r.get("args") == digest({"text": "out"}) for r in seen):
                buffer += await process.stdout.receive()
                *lines, buffer = buffer.split(b"\n")
                seen += [json.loads(line) for line in lines]
    call = [r for r in seen if r["method"] == "tools/call"][-1]
    assert (call["principal"], call["name"], call["server"]) == ("token:full", "pub__echo", "pub")
    assert log_files(tmp_path / "calls.jsonl") == []


def test_call_log_stdout_is_refused_under_stdio(tmp_path: Path) -> None:
    """Under stdio, stdout is the MCP stream: serve refuses to write the log there, and
    says what to do instead, before it mounts anything."""
    config = tmp_path / "serve.toml"
    config.write_text('[serve]\ncall_log = "stdout"\n')
    done = subprocess.run(
        [sys.executable, "-m", "mcpmount", "serve", str(config)],
        capture_output=True,
        text=True,
        stdin=subprocess.DEVNULL,
        timeout=BEHAVIOUR,
        check=False,
    )
    assert done.returncode == 2, done.stderr
    assert "needs --transport http" in done.stderr
    assert done.stdout == ""
