"""200 concurrent SDK clients through HAProxy to three `serve` replicas, beside one replica alone.

Each replica is ``mcpmount serve --transport http --stateless`` in front of its own copy of
``tests/bench/echo_server.py`` (stdio), started by the replica tests' harness
(``tests/replicas/replica_support.py``: a real HAProxy, round-robin, health checks). The
same load runs twice in one run, each for a bounded time: first against one replica
directly, then through HAProxy against all three. Every client is the SDK's ``Client``
(stateless HTTP, no response cache) calling the cheap ``e__echo`` tool in a closed loop,
and each call's result is checked. The clients are spread over several worker processes,
so that one Python process's event loop is not what is measured.

Reported per side: calls per second, p50 and p99 latency, p99/p50, and errors (exceptions,
error results, wrong answers). Targets: 0 errors, p99 under 5x p50.

Run it from the repository root:
    python tests/bench/bench_replicas.py [--clients 200] [--seconds 20] [--workers 4]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

import anyio
from mcp import Client

TESTS = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(TESTS))  # for the harness

from replicas.replica_support import replicated  # noqa: E402

ECHO = Path(__file__).parent / "echo_server.py"
TOOL = "e__echo"
READY = 60.0
"""Seconds for the replicas to mount and the workers to connect, on a loaded machine."""


def percentile(samples: list[float], q: float) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


# --- a worker process: N clients in one event loop ------------------------------------------


async def run_worker(url: str, clients: int, mode: str) -> None:
    """Connect ``clients`` Clients, say "ready", read the seconds to run, then call in a loop.

    Prints one JSON line: the latencies (s) of calls started in the window, and the errors.
    """
    latencies: list[float] = []
    errors: list[str] = []
    go = anyio.Event()
    ready = 0
    deadline = 0.0

    async def one(k: int) -> None:
        nonlocal ready
        async with Client(url, mode=mode, cache=None) as client:
            await client.call_tool(TOOL, {"text": "warm"})
            ready += 1
            await go.wait()
            i = 0
            while time.monotonic() < deadline:
                text = f"{k}:{i}"
                start = time.perf_counter()
                try:
                    result = await client.call_tool(TOOL, {"text": text})
                except Exception as exc:
                    errors.append(repr(exc))
                else:
                    if result.is_error or result.structured_content != {"result": text}:
                        errors.append(f"wrong answer: {result}")
                latencies.append(time.perf_counter() - start)
                i += 1

    async with anyio.create_task_group() as tg:
        for k in range(clients):
            tg.start_soon(one, k)
        with anyio.fail_after(READY):
            while ready < clients:
                await anyio.sleep(0.05)
        print("ready", flush=True)
        seconds = float(await anyio.to_thread.run_sync(sys.stdin.readline))
        deadline = time.monotonic() + seconds
        go.set()
    print(json.dumps({"latencies": latencies, "errors": errors[:20], "error_count": len(errors)}))


# --- the parent: start the replicas and the workers, report ---------------------------------


@dataclass
class Load:
    """What the clients of one side measured."""

    latencies: list[float] = field(default_factory=list[float])
    """Seconds per call, for every call started in the window."""
    errors: list[str] = field(default_factory=list[str])
    """The first errors of each worker."""
    error_count: int = 0


def drive(url: str, clients: int, workers: int, seconds: float, mode: str) -> Load:
    """Run the load against ``url`` for ``seconds``; return what every worker measured."""
    shares = [clients // workers + (i < clients % workers) for i in range(workers)]
    procs = [
        subprocess.Popen(
            [sys.executable, __file__, "--worker", url, "--clients", str(n), "--mode", mode],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        for n in shares
        if n
    ]
    load = Load()
    try:
        for proc in procs:
            assert proc.stdout is not None
            if proc.stdout.readline().strip() != "ready":
                raise SystemExit(f"a worker failed to connect its clients to {url}")
        for proc in procs:
            assert proc.stdin is not None
            proc.stdin.write(f"{seconds}\n")
            proc.stdin.flush()
        for proc in procs:
            output = proc.communicate(timeout=seconds + READY)[0]
            measured = json.loads(output.strip().splitlines()[-1])
            load.latencies += measured["latencies"]
            load.errors += measured["errors"]
            load.error_count += measured["error_count"]
    finally:
        for proc in procs:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
    return load


def report(label: str, load: Load, seconds: float) -> None:
    p50 = statistics.median(load.latencies) * 1e3
    p99 = percentile(load.latencies, 0.99) * 1e3
    print(
        f"{label:22} calls {len(load.latencies):6}  {len(load.latencies) / seconds:7.1f}/s  "
        f"p50 {p50:7.1f} ms  p99 {p99:7.1f} ms  p99/p50 {p99 / p50:4.1f}  "
        f"errors {load.error_count}"
    )
    for error in load.errors:
        print(f"  {error}")


async def start_and_measure(args: argparse.Namespace) -> None:
    with tempfile.TemporaryDirectory(prefix="mcpmount-bench-") as tmp:
        config = anyio.Path(tmp, "bench.toml")
        await config.write_text(
            "[registry]\nstartup_timeout = 60\n\n"
            f'[servers.e]\ncommand = "{sys.executable}"\nargs = ["{ECHO}"]\n'
        )
        async with replicated(str(config), Path(tmp), idempotent_tools=[TOOL]) as cluster:
            for replica in cluster.replicas:  # each mounted its echo server
                async with Client(replica.url, mode="legacy", cache=None) as client:
                    with anyio.fail_after(READY):
                        while TOOL not in [t.name for t in (await client.list_tools()).tools]:
                            await anyio.sleep(0.1)
            print(
                f"{args.clients} SDK clients (mode {args.mode}) in {args.workers} worker "
                f"processes, {args.seconds:g} s per side, tool {TOOL}, {os.cpu_count()} CPUs, "
                f"load average {os.getloadavg()[0]:.1f} before"
            )
            alone = cluster.replicas[0].url
            for label, url in (
                ("one replica, direct", alone),
                ("HAProxy -> 3 replicas", cluster.url),
            ):
                result = await anyio.to_thread.run_sync(
                    drive, url, args.clients, args.workers, args.seconds, args.mode
                )
                report(label, result, args.seconds)
            print(f"per replica (HAProxy's counters): {await cluster.served_requests()}")


def main() -> None:
    parser = argparse.ArgumentParser(description="serve replicas behind HAProxy, under load.")
    parser.add_argument("--clients", type=int, default=200, help="concurrent SDK clients")
    parser.add_argument("--seconds", type=float, default=20, help="measured seconds per side")
    parser.add_argument("--workers", type=int, default=4, help="processes the clients run in")
    parser.add_argument("--mode", default="auto", help='"auto" (2026-07-28) or "legacy"')
    parser.add_argument("--worker", metavar="URL", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        anyio.run(run_worker, args.worker, args.clients, args.mode)
    else:
        anyio.run(start_and_measure, args)


if __name__ == "__main__":
    main()
