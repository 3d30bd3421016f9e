"""What a sandbox adds to a stdio server's start, measured in one run against no sandbox.

Measured, alternating the two sides each repetition (unsandboxed first, then sandboxed
first) so a loaded machine slows both alike:

1. mount: ``registry.mount`` of ``tests/bench/echo_server.py`` (spawn, handshake, list)
   and its close, with ``sandbox = false`` and ``sandbox = true`` (bwrap, network off);
2. spawn: the same command lines run to exit with ``/bin/true`` as the server, which
   isolates the sandbox's own cost (bwrap's namespaces and mounts) from Python's start;
3. allow-list: mount with ``network = ["localhost"]``, which adds the proxy and the
   in-sandbox forwarder (one more Python start).

Medians, the ratio and the milliseconds added are printed; the target is at most 20 ms
added per server. Run it from the repository root:

    python tests/bench/bench_sandbox.py            # about a minute on 2 cores
    python tests/bench/bench_sandbox.py --runs 5   # quicker, noisier
"""

from __future__ import annotations

import argparse
import logging
import os
import platform
import statistics
import sys
import time
from collections.abc import Awaitable, Callable
from pathlib import Path

import anyio

from mcpmount.config import RegistrySettings, SandboxTable, StdioServer
from mcpmount.registry import Registry
from mcpmount.sandbox import policy_for, sandboxed

ECHO = str(Path(__file__).with_name("echo_server.py"))
TARGET_MS = 20.0


async def time_mount(sandbox: SandboxTable) -> float:
    """Seconds to mount the echo server (spawn, handshake, list) under ``sandbox``."""
    spec = StdioServer(command=sys.executable, args=[ECHO], sandbox=sandbox)
    async with Registry(RegistrySettings()) as registry:
        began = time.perf_counter()
        await registry.mount("echo", spec)
        return time.perf_counter() - began


HOME = os.path.expanduser("~")


async def time_spawn(sandbox: bool) -> float:
    """Seconds to run ``/bin/true`` to its exit, through the sandbox's command line or not."""
    policy = policy_for(SandboxTable(), HOME) if sandbox else None
    env = {"PATH": os.defpath, "HOME": HOME}
    began = time.perf_counter()
    async with sandboxed(policy, "bench", "/bin/true", [], env, None) as launch:
        await anyio.run_process(launch.argv, env=launch.env)
    return time.perf_counter() - began


async def compare(
    name: str,
    runs: int,
    plain: Callable[[], Awaitable[float]],
    boxed: Callable[[], Awaitable[float]],
) -> None:
    """Run both sides ``runs`` times, alternating which goes first; print the medians."""
    await plain()  # warm the page cache and the bwrap probe
    await boxed()
    times: dict[str, list[float]] = {"plain": [], "boxed": []}
    for i in range(runs):
        order = [("plain", plain), ("boxed", boxed)]
        for side, run in order if i % 2 == 0 else order[::-1]:
            times[side].append(await run())
    plain_ms = statistics.median(times["plain"]) * 1000
    boxed_ms = statistics.median(times["boxed"]) * 1000
    added = boxed_ms - plain_ms
    verdict = "within" if added <= TARGET_MS else "OVER"
    print(
        f"{name:<11} unsandboxed {plain_ms:7.1f} ms   sandboxed {boxed_ms:7.1f} ms   "
        f"ratio {boxed_ms / plain_ms:5.2f}   added {added:+6.1f} ms ({verdict} {TARGET_MS:g} ms)"
    )


async def main(runs: int) -> None:
    logging.basicConfig(level=logging.ERROR)
    bwrap = (await anyio.run_process(["bwrap", "--version"])).stdout.decode()
    print(
        f"# {platform.platform()}, {os.cpu_count()} cores, Python {platform.python_version()}, "
        f"{bwrap.strip()}, {runs} runs per side, medians"
    )
    await compare("spawn", runs * 4, lambda: time_spawn(False), lambda: time_spawn(True))
    unboxed, boxed, listed = (
        SandboxTable(enabled=False),
        SandboxTable(),
        SandboxTable(network=["localhost"]),
    )
    await compare("mount", runs, lambda: time_mount(unboxed), lambda: time_mount(boxed))
    await compare("allow-list", runs, lambda: time_mount(unboxed), lambda: time_mount(listed))


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description="What a sandbox adds to a server's start.")
    parser.add_argument("--runs", type=int, default=15, help="mounts per side (spawns: 4x)")
    anyio.run(main, parser.parse_args().runs)
