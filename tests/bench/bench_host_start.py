"""How long a host waits for its tools through `mcpmount serve`, against starting the
servers itself, in one run.

A host starts the entry ``mcpmount install`` writes (mcpmount's absolute Python,
``-m mcpmount serve CONFIG``) as a desktop host does: an environment with only ``HOME``
(a scratch folder here) and ``PATH=/usr/bin:/bin`` beside the entry's ``env``, in ``/``.
It connects with the SDK's stdio client, in the initialize-handshake era hosts speak
(``--mode``), and lists tools. Two times are taken from the spawn: to the first
``tools/list`` answer, and to the first list that holds every server's tools (each server
not wholly deferred lists some), which is what the host's model needs. Later lists follow
each ``notifications/tools/list_changed`` (or a 0.1 s poll, whichever is first).

For each config (``configs/demo.toml``; ``configs/real-servers.toml``, the eleven real
servers of the acceptance set, installed by ``tests/bench/install_real_servers.py``):

- ``direct``: the same host starting those servers itself, one SDK stdio client per
  server, all at once as Claude Desktop does, each with the bare environment plus its own
  ``env``, in its ``cwd`` (else ``/``); its first list is the first server's answer, its
  full list the last server's (every page);
- ``serve``: the installed entry as it is (``start = "eager"``: the manifest cache is
  neither read nor written);
- ``serve cold``: the entry with ``MCPMOUNT_START=background`` and an empty, new
  ``MCPMOUNT_CACHE_DIR``;
- ``serve warm``: the same with a cache filled before the runs, by ``mcpmount check
  --refresh-cache`` started as the host starts ``serve``;
- ``serve lazy``: that cache with ``MCPMOUNT_START=lazy``: no server starts before a
  call, so this is what ``serve``'s own start costs a host.

Beside the times are the number of tools in the full list (a cached list may differ
from the live one the server gives later: it is announced as a list change), and the CPU
seconds spent by then by every process the start made (that are still running) and by
``serve`` alone.

The variants run one after another, never overlapping, in an order rotated each run, so
the machine's load falls on all alike; each waits until every process the last one
started is gone (one still there after 15 s is killed and counted as leaked). Medians of
``--runs`` runs are printed, with each over ``direct``'s.

Run it from the repository root, after installing the real servers:
  python tests/bench/install_real_servers.py
  python tests/bench/bench_host_start.py [--runs 5] [--only demo|real]
"""

from __future__ import annotations

import argparse
import contextlib
import json
import math
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TextIO

import anyio
import mcp_types
from bench_serve import cpu_seconds, descendants
from mcp import Client, StdioServerParameters
from mcp.client.stdio import stdio_client

from mcpmount.config import StdioServer, load_config

REPO = Path(__file__).parents[2]
CONFIGS = {"demo": REPO / "configs" / "demo.toml", "real": REPO / "configs" / "real-servers.toml"}
BARE_PATH = "/usr/bin:/bin"
"""The ``PATH`` a host started from the desktop gives its servers."""
START_LIMIT = 120.0
"""Seconds one start may take to list every server's tools before it counts as failed."""
REAP_LIMIT = 15.0
"""Seconds the processes of a closed start have to end before they are killed."""
INSTALL = Path(__file__).with_name("install_real_servers.py")
WARM = "warm"
VARIANTS: dict[str, dict[str, str]] = {
    "direct": {},
    "serve": {},
    "serve cold": {"MCPMOUNT_START": "background"},
    "serve warm": {"MCPMOUNT_START": "background", "MCPMOUNT_CACHE_DIR": WARM},
    "serve lazy": {"MCPMOUNT_START": "lazy", "MCPMOUNT_CACHE_DIR": WARM},
}
"""Each variant, and what it adds to the entry's ``env`` (`WARM`: the filled cache's
folder); a variant without a cache folder gets an empty one of its own."""


@dataclass(frozen=True)
class Sample:
    """One start: seconds to the first list and to the full one, and the tools it held."""

    first: float
    full: float
    tools: int
    running: list[int]
    """The processes running below this one when the full list came."""
    cpu: float = math.nan
    """CPU seconds the processes of ``running`` had spent by then."""
    serve_cpu: float = math.nan
    """CPU seconds ``serve`` had spent by then (NaN for ``direct``)."""


def cpu_of(pids: list[int]) -> float:
    """CPU seconds ``pids``' live threads have spent; none for one that is gone."""
    return sum(map(cpu_seconds, pids))


@dataclass
class Bench:
    """One config under test: what a host runs for it, and the times of each variant."""

    label: str
    config: Path
    entry: dict[str, Any]
    """The entry ``mcpmount install claude-desktop`` wrote for it."""
    servers: dict[str, StdioServer]
    listed: frozenset[str]
    """The servers that list tools through ``serve`` (not wholly deferred)."""
    warm_cache: Path
    samples: dict[str, list[Sample]] = field(
        default_factory=lambda: {variant: [] for variant in VARIANTS}
    )
    """Each variant's starts, one a run (`FAILED` if it failed)."""


def installed_entry(config: Path, home: Path) -> dict[str, Any]:
    """Install ``config`` for Claude Desktop under the scratch ``home``; return the entry."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("XDG_", "MCPMOUNT_"))}
    argv = [sys.executable, "-m", "mcpmount", "install", "claude-desktop", str(config)]
    done = subprocess.run(argv, env=env | {"HOME": str(home)}, capture_output=True, text=True)
    if done.returncode:
        raise SystemExit(f"install failed: {done.stderr}")
    desktop = home / ".config" / "Claude" / "claude_desktop_config.json"
    return json.loads(desktop.read_text())["mcpServers"]["mcpmount"]


def host_env(home: Path, env: Mapping[str, str], extra: Mapping[str, str] = {}) -> dict[str, str]:
    """The environment a desktop host gives a server: bare, plus the entry's ``env``."""
    return {"HOME": str(home), "PATH": BARE_PATH, **env, **extra}


def serve_params(bench: Bench, home: Path, extra: Mapping[str, str]) -> StdioServerParameters:
    """The installed entry, started as the host starts it, with ``extra`` in its ``env``."""
    return StdioServerParameters(
        command=bench.entry["command"],
        args=list(bench.entry["args"]),
        env=host_env(home, bench.entry.get("env", {}), extra),
        cwd="/",
    )


def direct_params(spec: StdioServer, home: Path) -> StdioServerParameters:
    """A server of the config, as the host would start it without mcpmount."""
    env = {key: value.get_secret_value() for key, value in spec.env.items()}
    return StdioServerParameters(
        command=spec.command,
        args=list(spec.args),
        env=host_env(home, env),
        cwd=spec.cwd or "/",
    )


async def all_tools(client: Client) -> list[mcp_types.Tool]:
    """Every page of the client's tools, fresh (the client caches nothing)."""
    tools: list[mcp_types.Tool] = []
    cursor: str | None = None
    for _ in range(100):
        page = await client.list_tools(cursor=cursor)
        tools += page.tools
        if (cursor := page.next_cursor) is None:
            break
    return tools


async def time_serve(
    params: StdioServerParameters, listed: frozenset[str], mode: str, errlog: TextIO
) -> Sample:
    """Spawn ``serve``; time its first list and its full one."""
    changed = anyio.Event()

    async def on_message(message: object) -> None:
        if isinstance(message, mcp_types.ToolListChangedNotification):
            changed.set()

    start = time.perf_counter()
    client = Client(
        stdio_client(params, errlog=errlog), mode=mode, cache=None, message_handler=on_message
    )
    async with client:
        first = math.nan
        while True:
            tools = await all_tools(client)
            now = time.perf_counter() - start
            first = now if math.isnan(first) else first
            servers = {tool.name.split("__", 1)[0] for tool in tools}
            if listed <= servers:
                running = descendants(os.getpid())
                serve = running[:1]  # this process's one child, first in the list
                return Sample(first, now, len(tools), running, cpu_of(running), cpu_of(serve))
            with anyio.move_on_after(0.1):
                await changed.wait()
            changed = anyio.Event()


async def time_direct(params: list[StdioServerParameters], mode: str, errlog: TextIO) -> Sample:
    """Spawn every server at once; time the first server's list and the last one's."""
    answered: list[float] = []
    tools: list[int] = []
    done = anyio.Event()
    start = time.perf_counter()

    async def one(server: StdioServerParameters, stop: anyio.Event) -> None:
        async with Client(stdio_client(server, errlog=errlog), mode=mode, cache=None) as client:
            tools.append(len(await all_tools(client)))
            answered.append(time.perf_counter() - start)
            if len(answered) == len(params):
                done.set()
            await stop.wait()  # a host keeps them all; close them together

    stop = anyio.Event()
    running: list[int] = []
    cpu = math.nan
    async with anyio.create_task_group() as tg:
        for server in params:
            tg.start_soon(one, server, stop)
        await done.wait()
        running = descendants(os.getpid())
        cpu = cpu_of(running)
        stop.set()
    return Sample(min(answered), max(answered), sum(tools), running, cpu)


def reap(pids: list[int]) -> int:
    """Wait until ``pids`` have ended; kill those left after `REAP_LIMIT`. Return how many
    had to be killed."""
    deadline = time.monotonic() + REAP_LIMIT
    alive = pids
    while alive and time.monotonic() < deadline:
        alive = [pid for pid in alive if Path(f"/proc/{pid}").exists() and not zombie(pid)]
        time.sleep(0.05)
    for pid in alive:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)
    return len(alive)


def zombie(pid: int) -> bool:
    with contextlib.suppress(OSError):
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] == "Z"
    return True


async def run_variant(
    bench: Bench, variant: str, scratch: Path, mode: str, errlog: TextIO
) -> Sample:
    """Start one variant once, from a new scratch ``HOME``."""
    home = Path(tempfile.mkdtemp(dir=scratch, prefix="home-"))
    with anyio.fail_after(START_LIMIT):
        if variant == "direct":
            params = [direct_params(spec, home) for spec in bench.servers.values()]
            return await time_direct(params, mode, errlog)
        extra = {"MCPMOUNT_CACHE_DIR": str(home / "manifests")} | VARIANTS[variant]
        if extra["MCPMOUNT_CACHE_DIR"] == WARM:
            extra["MCPMOUNT_CACHE_DIR"] = str(bench.warm_cache)
        return await time_serve(serve_params(bench, home, extra), bench.listed, mode, errlog)


def fill_cache(bench: Bench, scratch: Path) -> int:
    """Fill ``bench.warm_cache`` by ``check --refresh-cache``, started as ``serve`` is;
    return how many entries it holds."""
    extra = {"MCPMOUNT_START": "background", "MCPMOUNT_CACHE_DIR": str(bench.warm_cache)}
    env = host_env(scratch, bench.entry.get("env", {}), extra)
    argv = [bench.entry["command"], "-m", "mcpmount", "check", "--refresh-cache", str(bench.config)]
    done = subprocess.run(argv, env=env, cwd="/", capture_output=True, text=True, timeout=300)
    if done.returncode:
        raise SystemExit(f"{bench.label}: check --refresh-cache failed:\n{done.stderr[-2000:]}")
    return len(list(bench.warm_cache.glob("*")))


def prepare(label: str, scratch: Path) -> Bench:
    config = CONFIGS[label]
    home = scratch / f"{label}-install"
    home.mkdir()
    loaded = load_config(config)
    servers = {ns: spec for ns, spec in loaded.servers.items() if isinstance(spec, StdioServer)}
    missing = [spec.command for spec in servers.values() if not Path(spec.command).exists()]
    if len(servers) != len(loaded.servers) or missing:
        raise SystemExit(f"{config}: {missing} not installed: run {INSTALL.relative_to(REPO)}")
    listed = frozenset(ns for ns, spec in servers.items() if spec.defer is not True)
    entry = installed_entry(config, home)
    bench = Bench(label, config, entry, servers, listed, scratch / f"{label}-warm")
    entries = fill_cache(bench, scratch)
    print(
        f"{label}: {len(servers)} servers ({len(listed)} list tools through serve); "
        f"warm cache: {entries} entries",
        flush=True,
    )
    return bench


def report(bench: Bench) -> None:
    runs = len(bench.samples["direct"])
    print(
        f"\n{bench.label} ({bench.config.relative_to(REPO)}, {len(bench.servers)} servers), "
        f"medians of {runs} runs:\n{'':12} {'first tools/list':>18} | "
        f"{'list with every server':>24} | tools | CPU s: all, serve's"
    )
    direct = [s for s in bench.samples["direct"] if not math.isnan(s.full)]
    d_first = statistics.median(s.first for s in direct) if direct else math.nan
    d_full = statistics.median(s.full for s in direct) if direct else math.nan
    for variant, samples in bench.samples.items():
        good = [s for s in samples if not math.isnan(s.full)]
        failed = (
            f"  ({len(samples) - len(good)} of {len(samples)} failed)"
            if len(good) < len(samples)
            else ""
        )
        if not good:
            print(f"  {variant:10} every run failed")
            continue
        first = statistics.median(s.first for s in good)
        full = statistics.median(s.full for s in good)
        tools = sorted({s.tools for s in good})
        cpu = statistics.median(s.cpu for s in good)
        serve_cpu = statistics.median(s.serve_cpu for s in good)
        print(
            f"  {variant:10} {first:6.2f} s ({first / d_first:5.2f}x) | "
            f"{full:6.2f} s ({full / d_full:5.2f}x) | "
            f"{'/'.join(map(str, tools)):>5} | {cpu:5.2f} {serve_cpu:5.2f}{failed}"
        )


def main(runs: int, labels: list[str], mode: str) -> None:
    print(f"load average {os.getloadavg()[0]:.2f} on {os.cpu_count()} CPUs; client mode {mode}")
    leaked = 0
    with (
        tempfile.TemporaryDirectory(prefix="bench-host-") as tmp,
        open(Path(tmp) / "stderr.log", "w") as errlog,
    ):
        scratch = Path(tmp)
        benches = [prepare(label, scratch) for label in labels]
        order = [(bench, variant) for bench in benches for variant in VARIANTS]
        for run in range(runs):
            shift = run % len(order)
            for bench, variant in order[shift:] + order[:shift]:
                try:
                    sample = anyio.run(run_variant, bench, variant, scratch, mode, errlog)
                except Exception as exc:  # a failed start is a result, said and counted
                    print(f"  run {run + 1}: {bench.label} {variant} failed: {exc!r}", flush=True)
                    sample = Sample(math.nan, math.nan, 0, descendants(os.getpid()))
                bench.samples[variant].append(sample)
                leaked += reap(sample.running)
                print(
                    f"  run {run + 1}: {bench.label:4} {variant:10} first {sample.first:6.2f} s, "
                    f"full {sample.full:6.2f} s, {sample.tools} tools, CPU {sample.cpu:.2f} s "
                    f"(serve {sample.serve_cpu:.2f} s)",
                    flush=True,
                )
        for bench in benches:
            report(bench)
    left = descendants(os.getpid())
    print(f"\nprocesses killed after {REAP_LIMIT:g} s: {leaked}; still running now: {len(left)}")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description="A host's time to its tools through serve.")
    parser.add_argument("--runs", type=int, default=5, help="starts of each variant")
    parser.add_argument("--only", choices=list(CONFIGS), help="one config only")
    parser.add_argument("--mode", default="legacy", help="the SDK Client's mode (legacy: as hosts)")
    args = parser.parse_args()
    main(args.runs, [args.only] if args.only else list(CONFIGS), args.mode)
