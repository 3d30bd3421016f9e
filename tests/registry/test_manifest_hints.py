"""A server's cache hints bound its cached manifest: lists that say ``ttlMs: 0`` are never
served from the cache, a short ``ttlMs`` ends the entry's use when it passes, and hints
count in the 2026-07-28 era only (a handshake-era server says nothing).

The fixture server sends the hints its ``--cache-hint TTL_MS:SCOPE`` names on every list
(mcp 2.3.0's ``cache_hints``). Spawns are counted by a shell that appends its pid to a file
and then runs the fixture server in its place. Every test requests ``no_leaks``.
"""

from __future__ import annotations

import json
import logging
import sys
import time
from pathlib import Path
from typing import Any

import anyio
import pytest

from mcpmount.config import RegistrySettings, StdioServer
from mcpmount.manifests import decode_entry, spec_key
from mcpmount.registry import Registry
from mcpmount.upstream import ServerState
from support import FIXTURE, text_of

pytestmark = [pytest.mark.slow, pytest.mark.usefixtures("no_leaks")]

_COUNTING = 'echo $$ >> "$0"; exec "$@"'
"""A shell script: append its pid to the file named by $0, then become the server."""


def _hinted(spawns: Path, hint: str, **options: Any) -> StdioServer:
    """A lazy fixture server whose lists say ``hint``, each spawn a line in ``spawns``."""
    args = ["-c", _COUNTING, str(spawns), sys.executable, FIXTURE, "--cache-hint", hint]
    return StdioServer(command="/bin/sh", args=args, start="lazy", **options)


def _spawns(spawns: Path) -> int:
    return len(spawns.read_text().splitlines()) if spawns.exists() else 0


def _settings(tmp_path: Path) -> RegistrySettings:
    return RegistrySettings(cache_dir=str(tmp_path / "cache"))


def _entry(tmp_path: Path, spec: StdioServer) -> dict[str, Any]:
    return json.loads((tmp_path / "cache" / f"{spec_key(spec)}.json").read_bytes())


async def _mount(tmp_path: Path, spec: StdioServer) -> tuple[ServerState, bool]:
    """Mount ``spec`` in a registry of its own; return its state and whether it is cached."""
    async with Registry(_settings(tmp_path)) as registry:
        await registry.mount("fx", spec)
        (row,) = registry.status()
        return row.state, row.cached


@pytest.mark.parametrize(
    ("protocol", "cached"), [("auto", False), ("legacy", True)], ids=["2026", "handshake"]
)
async def test_lists_that_may_not_be_kept_are_listed_live_at_every_start(
    tmp_path: Path, caplog: pytest.LogCaptureFixture, protocol: str, cached: bool
) -> None:
    """``ttlMs: 0`` (mcp 2.3.0's default): a lazy server is started at every mount (its
    entry holds no list, said at info level only). A handshake-era server says nothing,
    so the same program is cached as before."""
    spawns = tmp_path / "spawns"
    spec = _hinted(spawns, "0:private", protocol=protocol)
    caplog.set_level(logging.INFO, logger="mcpmount")
    assert await _mount(tmp_path, spec) == (ServerState.READY, False)  # no entry yet
    second = await _mount(tmp_path, spec)
    assert second == ((ServerState.LAZY, True) if cached else (ServerState.READY, False))
    assert _spawns(spawns) == (1 if cached else 2)
    entry = _entry(tmp_path, spec)
    assert (entry["tools"] == [], "ttl" in entry) == (not cached, not cached)
    said = [r.getMessage() for r in caplog.records if "ttlMs" in r.getMessage()]
    assert bool(said) == (not cached)
    assert all(r.levelno < logging.WARNING for r in caplog.records if "ttlMs" in r.getMessage())


async def test_a_short_ttl_ends_the_entry_when_it_passes(tmp_path: Path) -> None:
    """``ttlMs: 3000``: the entry is usable for three seconds from its writing, then the
    lazy server is started and listed live, however long ``manifest_ttl`` is."""
    spawns = tmp_path / "spawns"
    spec = _hinted(spawns, "3000:public")
    assert await _mount(tmp_path, spec) == (ServerState.READY, False)
    entry = _entry(tmp_path, spec)
    assert entry["ttl"] == 3.0
    data = json.dumps(entry).encode()
    written, key = entry["written"], spec_key(spec)
    assert decode_entry("fx", key, data, ttl=86400, now=written + 2.9) is not None
    assert decode_entry("fx", key, data, ttl=86400, now=written + 3.1) is None
    with anyio.fail_after(10):
        while time.time() <= written + 3.0:  # the hint's own bound, not a guess
            await anyio.sleep(0.1)
    async with Registry(_settings(tmp_path)) as registry:
        await registry.mount("fx", spec)
        (row,) = registry.status()
        assert (row.state, row.cached) == (ServerState.READY, False)
        assert text_of(await registry.call("fx__echo", {"text": "hi"})) == "hi"
    assert _spawns(spawns) == 2
    assert _entry(tmp_path, spec)["written"] > written  # listed live, cached again


async def test_a_long_ttl_serves_the_entry_and_manifest_ttl_still_bounds_it(
    tmp_path: Path,
) -> None:
    """``ttlMs`` of ten minutes: the lazy server is published from its entry without a
    spawn; the entry is bound by the shorter of the hint and ``manifest_ttl``."""
    spawns = tmp_path / "spawns"
    spec = _hinted(spawns, "600000:public", manifest_ttl=60)
    assert await _mount(tmp_path, spec) == (ServerState.READY, False)
    assert _entry(tmp_path, spec)["ttl"] == 600.0
    assert await _mount(tmp_path, spec) == (ServerState.LAZY, True)
    assert _spawns(spawns) == 1
    entry = _entry(tmp_path, spec)
    data, key = json.dumps(entry).encode(), spec_key(spec)
    assert decode_entry("fx", key, data, ttl=60, now=entry["written"] + 61) is None
