"""The call log file rotates by size, keeps its backups, and loses no record it keeps."""

from __future__ import annotations

import stat
from pathlib import Path

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
    records,
    serving,
)

from serve.serve_support import BEHAVIOUR

pytestmark = [pytest.mark.anyio, pytest.mark.slow, pytest.mark.usefixtures("no_leaks")]

MAX_BYTES = 1500
BACKUPS = 2
CALLS = 40


async def test_the_log_rotates_past_its_size_and_keeps_the_newest_records_whole(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Past ``call_log_max_bytes`` the file is rotated: no file grows past it, only
    ``call_log_backups`` rotated files are kept, every file is its owner's alone, and the
    records kept are the newest calls, in order, none missing."""
    for name, value in ENVIRONMENT.items():
        monkeypatch.setenv(name, value)
    log = tmp_path / "calls.jsonl"
    rotation = f"call_log_max_bytes = {MAX_BYTES}\ncall_log_backups = {BACKUPS}"
    config = calllog_config(tmp_path, f'call_log = "calls.jsonl"\n{rotation}')
    async with (
        serving(config, tmp_path) as url,
        client_of(url, FULL, Sent(), mode="legacy") as client,
    ):
        for i in range(CALLS):
            await client.call_tool("pub__echo", {"text": f"call {i}"})
        last = digest({"text": f"call {CALLS - 1}"})
        with anyio.fail_after(BEHAVIOUR):  # serve flushes its log every few tens of ms
            while not any(r["args"] == last for r in records(log)):
                await anyio.sleep(0.05)
        kept = records(log)
    files = log_files(log)
    assert [path.name for path in files] == ["calls.jsonl.2", "calls.jsonl.1", "calls.jsonl"]
    for path in files:
        assert path.stat().st_size <= MAX_BYTES
        assert stat.S_IMODE(path.stat().st_mode) == 0o600
    calls = [r["args"] for r in kept if r["method"] == "tools/call"]
    expected = [digest({"text": f"call {i}"}) for i in range(CALLS)]
    assert len(calls) >= 2 * MAX_BYTES // 300  # two full files of records at the least
    assert calls == expected[-len(calls) :]
