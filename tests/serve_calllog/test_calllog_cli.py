"""`mcpmount log` over the call log of a real serve: each filter keeps what it says, and
``--follow`` shows a new request's record until it is interrupted."""

from __future__ import annotations

import fnmatch
import json
import os
import signal
import subprocess
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import MCPError
from serve_calllog_support import (
    ENVIRONMENT,
    FULL,
    LIMITED,
    Sent,
    calllog_config,
    client_of,
    digest,
    records,
    serving,
)

from leaks import record_group
from serve.serve_support import BEHAVIOUR

pytestmark = [pytest.mark.anyio, pytest.mark.usefixtures("no_leaks")]


def _bare_environment() -> dict[str, str]:
    """This environment without the config's variables: the log needs none of them."""
    return {k: v for k, v in os.environ.items() if k not in ENVIRONMENT}


def log_command(config: str, *flags: str) -> list[dict[str, Any]]:
    """Run ``mcpmount log CONFIG --json FLAGS``; the records it printed."""
    done = subprocess.run(
        [sys.executable, "-m", "mcpmount", "log", config, "--json", *flags],
        capture_output=True,
        text=True,
        timeout=BEHAVIOUR,
        env=_bare_environment(),
        check=True,
    )
    return [json.loads(line) for line in done.stdout.splitlines()]


async def _make_calls(url: str) -> None:
    """Requests of both tokens: a call, a tool's failure, an unknown and a hidden name."""
    async with client_of(url, FULL, Sent(), mode="legacy") as client:
        await client.call_tool("pub__echo", {"text": "one"})
        await client.call_tool("pub__fail", {"message": "no"})
        with pytest.raises(MCPError):
            await client.call_tool("nowhere__echo", {"text": "x"})
    async with client_of(url, LIMITED, Sent(), mode="legacy") as client:
        await client.call_tool("pub__echo", {"text": "two"})
        with pytest.raises(MCPError):
            await client.call_tool("vault__echo", {"text": "x"})


@pytest.mark.timeout(180)  # eight runs of the command line, seconds each on a loaded machine
async def test_each_filter_of_mcpmount_log_keeps_the_records_it_names(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``--principal``, ``--server``, ``--tool GLOB``, ``--outcome``, ``--since`` and ``-n``
    print exactly the records of the file that pass them (read with none of the config's
    variables set), and the whole log unfiltered."""
    for name, value in ENVIRONMENT.items():
        monkeypatch.setenv(name, value)
    config = calllog_config(tmp_path)
    async with serving(config, tmp_path) as url:
        await _make_calls(url)
    every = records(tmp_path / "calls.jsonl")
    assert {r["outcome"] for r in every} >= {"ok", "tool_error", "unknown", "denied"}

    def where(**wanted: object) -> list[dict[str, Any]]:
        return [r for r in every if all(r[k] == v for k, v in wanted.items())]

    assert log_command(config, "-n", "0") == every
    assert log_command(config, "-n", "3") == every[-3:]
    assert log_command(config, "-n", "0", "--principal", "token:limited") == where(
        principal="token:limited"
    )
    assert log_command(config, "-n", "0", "--server", "vault") == where(server="vault")
    pub = [r for r in every if fnmatch.fnmatchcase(str(r["name"]), "pub__*")]
    assert len(pub) == 3
    assert log_command(config, "-n", "0", "--tool", "pub__*") == pub
    refused = [r for r in every if r["outcome"] in ("denied", "unknown")]
    assert len(refused) == 2
    assert log_command(config, "-n", "0", "--outcome", "denied,unknown") == refused
    later = (datetime.now(UTC) + timedelta(minutes=5)).isoformat()
    assert log_command(config, "-n", "0", "--since", later) == []
    assert log_command(config, "-n", "0", "--since", "1h") == every


@pytest.mark.slow
async def test_mcpmount_log_follow_shows_a_new_record_and_stops_on_ctrl_c(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``--follow`` prints the record of a request made after it started (and only the
    ones its filter keeps), and ends with 130 on SIGINT."""
    for name, value in ENVIRONMENT.items():
        monkeypatch.setenv(name, value)
    config = calllog_config(tmp_path)
    command = [sys.executable, "-m", "mcpmount", "log", config, "--json", "--follow"]
    async with (
        serving(config, tmp_path) as url,
        await anyio.open_process(
            [*command, "-n", "0", "--principal", "token:full"],
            env=_bare_environment(),
            start_new_session=True,
        ) as follower,
    ):
        record_group(follower.pid)
        assert follower.stdout is not None
        seen: list[dict[str, Any]] = []
        buffer = b""
        async with client_of(url, LIMITED, Sent(), mode="legacy") as client:
            await client.call_tool("pub__echo", {"text": "not shown"})
        async with client_of(url, FULL, Sent(), mode="legacy") as client:
            await client.call_tool("pub__echo", {"text": "followed"})
        with anyio.fail_after(BEHAVIOUR):
            while not any(r.get("args") == digest({"text": "followed"}) for r in seen):
                buffer += await follower.stdout.receive()
                *lines, rest = buffer.split(b"\n")
                buffer = rest
                seen += [json.loads(line) for line in lines]
        assert {r["principal"] for r in seen} == {"token:full"}
        follower.send_signal(signal.SIGINT)
        with anyio.fail_after(BEHAVIOUR):
            assert await follower.wait() == 128 + signal.SIGINT
