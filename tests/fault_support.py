"""Helpers shared by the fault tests: raw fixture listings, pid files, waiting for a death."""

from __future__ import annotations

from pathlib import Path

import anyio

from mcpmount.config import StdioServer
from support import alive, fixture


def raw(listing: str, *flags: str, **options: object) -> StdioServer:
    """A stdio spec for the SDK-free fixture whose tools/list result is ``listing``, verbatim."""
    return fixture("--raw", "--list-json", listing, *flags, **options)


async def wait_dead(pid: int, within: float) -> None:
    """Return once ``pid`` is dead (or a zombie); fail if it still lives after ``within`` s."""
    with anyio.fail_after(within):
        while alive(pid):
            await anyio.sleep(0.02)


def read_pids(pidfile: Path) -> dict[str, int]:
    """The fixture server's ``--pidfile``: one ``role pid`` line per process it started."""
    return {
        role: int(pid) for role, pid in (line.split() for line in pidfile.read_text().splitlines())
    }
