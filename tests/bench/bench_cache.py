"""Opening from cached manifests against today's eager mount and the raw SDK, in one run.

30 stdio fixture servers of 21 tools each (``tests/servers/fixture_server.py --tools 14``,
each with its own ``--name`` so each has its own cache entry) are opened four ways, each
timed from the start to a complete tool list:

1. the raw SDK at its best (one owner task per server, all concurrent: see
   ``bench_registry.py``);
2. ``open_registry`` with ``start = "eager"`` (mcpmount before cached manifests);
3. ``open_registry`` with ``start = "lazy"`` and every manifest cached (written by a
   priming open): nothing is spawned (five times in a row: the first, and the median);
4. the same with ``start = "background"``: the tool list is complete at once and the
   servers start behind it (timed to the list; then until every server is up).

Then a first call to one lazy server, against the same server started alone by the SDK
(alternated, five each, medians);
and the resident memory of the host and its servers with 30 configured and 3 called,
eager against ``lazy`` with ``idle_timeout``.
The cache lives in a temporary directory. Run it from the repository root:

    python tests/bench/bench_cache.py     # about 1 minute on 2 cores
"""

from __future__ import annotations

import os
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import TextIO

import anyio
from bench_registry import MANY_TOOLS, sdk_list_all, time_sdk_mount
from mcp import Client
from mcp.client.stdio import StdioServerParameters, stdio_client

from mcpmount.config import RegistryConfig, ServerSpec, StdioServer
from mcpmount.registry import open_registry
from mcpmount.upstream import ServerState

SERVERS = 30
REPEATS = 5
"""Cached opens in a row (the first is the figure; the median shows the noise)."""
USED = 3
"""Servers called in the memory comparison."""
TARGET_MS = 100.0
"""Open to a complete tool list from a warm cache, in milliseconds."""


def _args(i: int) -> list[str]:
    return [*MANY_TOOLS, "--name", f"fixture-{i}"]


def _config(cache_dir: str, start: str, **settings: object) -> RegistryConfig:
    servers: dict[str, ServerSpec] = {
        f"s{i}": StdioServer(command=sys.executable, args=_args(i)) for i in range(SERVERS)
    }
    return RegistryConfig.from_servers(servers, cache_dir=cache_dir, start=start, **settings)


async def _open(config: RegistryConfig, *, until_up: bool = False) -> tuple[float, float, int]:
    """Seconds to a complete tool list, seconds until every server is up, and the tools."""
    began = time.perf_counter()
    async with open_registry(config) as registry:
        tools = len(registry.tools())
        listed = time.perf_counter() - began
        while until_up and any(r.state is not ServerState.READY for r in registry.status()):
            await anyio.sleep(0.01)
        up = time.perf_counter() - began
    return listed, up, tools


async def _sdk_first_call(devnull: TextIO) -> float:
    began = time.perf_counter()
    params = StdioServerParameters(command=sys.executable, args=_args(0))
    async with Client(stdio_client(params, errlog=devnull)) as client:
        await sdk_list_all(client)
        await client.call_tool("echo", {"text": "x"})
        return time.perf_counter() - began


async def _lazy_first_call(config: RegistryConfig) -> float:
    async with open_registry(config) as registry:
        began = time.perf_counter()
        await registry.call("s0__echo", {"text": "x"})
        return time.perf_counter() - began


def _rss_mib(pid: int) -> float:
    """Resident memory of one process (``VmRSS`` in ``/proc/<pid>/status``), in MiB."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return 0.0


async def _memory(config: RegistryConfig, used: int) -> float:
    """Host plus servers' resident memory (MiB) once ``used`` servers have had a call."""
    async with open_registry(config) as registry:
        for i in range(used):
            await registry.call(f"s{i}__echo", {"text": "x"})
        pids = [row.pid for row in registry.status() if row.pid is not None]
        return _rss_mib(os.getpid()) + sum(_rss_mib(pid) for pid in pids)


async def main(devnull: TextIO) -> None:
    with tempfile.TemporaryDirectory(prefix="mcpmount-bench-cache-") as cache_dir:
        eager = _config(cache_dir, "eager")
        lazy = _config(cache_dir, "lazy")
        background = _config(cache_dir, "background")
        print(f"{SERVERS} stdio servers of 21 tools each", file=sys.stderr)
        sdk, _ = await time_sdk_mount(SERVERS, devnull, _args(0))
        eager_s, _, tools = await _open(eager)
        prime_s, _, _ = await _open(lazy)  # no entries yet: mounts eagerly, writes them
        assert len(os.listdir(cache_dir)) == SERVERS, "every server should have an entry"
        lazy_runs = [await _open(lazy) for _ in range(REPEATS)]
        lazy_s, _, lazy_tools = lazy_runs[0]
        lazy_median = statistics.median(run[0] for run in lazy_runs)
        background_s, background_up, background_tools = await _open(background, until_up=True)
        assert tools == lazy_tools == background_tools == SERVERS * 21, (tools, lazy_tools)
        # Alternated: one server's start-up is noisy on a busy machine.
        calls = [
            (await _sdk_first_call(devnull), await _lazy_first_call(lazy)) for _ in range(REPEATS)
        ]
        sdk_call = statistics.median(sdk for sdk, _ in calls)
        lazy_call = statistics.median(lazy for _, lazy in calls)
        idle = _config(cache_dir, "lazy", idle_timeout=60)
        memory = {name: await _memory(c, USED) for name, c in (("eager", eager), ("lazy", idle))}
    rows = [
        ("raw SDK, every server started", sdk),
        ("mcpmount eager (today)", eager_s),
        ("mcpmount lazy, first open (writes the cache)", prime_s),
        ("mcpmount lazy, cached (first open)", lazy_s),
        (f"mcpmount lazy, cached (median of {REPEATS})", lazy_median),
        ("mcpmount background, cached: tool list", background_s),
        ("mcpmount background, cached: all servers up", background_up),
    ]
    print(f"\n{'open to a complete tool list':<48} {'ms':>9} {'/ SDK':>8} {'/ eager':>8}")
    for label, seconds in rows:
        print(f"{label:<48} {seconds * 1000:9.1f} {seconds / sdk:8.3f} {seconds / eager_s:8.3f}")
    verdict = "met" if lazy_s * 1000 <= TARGET_MS else "MISSED"
    print(f"\ncached open target <= {TARGET_MS:g} ms: first {lazy_s * 1000:.1f} ms ({verdict})")
    ratio = memory["lazy"] / memory["eager"]
    print(
        f"memory, host + servers, {SERVERS} configured and {USED} called: eager "
        f"{memory['eager']:.0f} MiB, lazy + idle_timeout {memory['lazy']:.0f} MiB, "
        f"ratio {ratio:.3f} (target <= 0.2)"
    )
    print(
        f"first call (median of {REPEATS}): lazy server {lazy_call * 1000:.1f} ms, SDK start + "
        f"list + call {sdk_call * 1000:.1f} ms, ratio {lazy_call / sdk_call:.3f} (target <= 1.05)"
    )


def run() -> None:
    with open(os.devnull, "w") as devnull:  # the SDK servers' stderr
        anyio.run(main, devnull)


if __name__ == "__main__":
    run()
