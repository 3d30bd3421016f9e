"""The latency `mcpmount serve` adds to a call, against a direct call, in one run.

For each protocol era (``legacy``: the initialize handshake; ``2026``: the 2026-07-28 era
the SDK's ``Client`` picks by default), three pairings are measured, each one client
straight to ``tests/bench/echo_server.py`` and one through ``mcpmount serve`` in front of it,
all made by the SDK's ``Client`` in that era (and the served upstream mounted in it too):

- stdio front, stdio upstream: both spawned by their client;
- HTTP front, HTTP upstream: ``mcpmount serve --transport http`` before the echo server's
  ``--http``;
- HTTP front, stdio upstream: ``mcpmount serve --transport http`` spawning the echo server
  (the direct side is the echo server over HTTP: the client speaks HTTP either way).

Each pairing has a third side, the floor of a hop: ``tests/bench/sdk_proxy.py``, a low-level
SDK ``Server`` that forwards ``tools/list`` and ``tools/call`` through one SDK ``Client`` and
does nothing else, in front of the same upstream over the same transports. What serve adds
over what the proxy adds is what serve's own work costs (names, access, the relay of
questions and progress, stop handling, metrics).

Calls of the trivial ``echo`` tool are interleaved in blocks (direct, via serve, via the
proxy), so machine noise hits every side alike; p50 and p99 are reported with the ratio,
and the load average the run started under.

Each pairing also prints the CPU a call costs, summed over every process of its side (this
one, the client, and all it started), and what the ``mcpmount serve`` process alone spends
on a served call (and the proxy's on a proxied one). A hop is one more server half and one
more client half of the SDK in one process, so the hop's CPU over the direct call's whole
CPU (its client's and its server's) is the hop against the SDK's own cost of the same two
halves; the last line puts serve's added p50 and CPU over the proxy's.

Run it from the repository root:  python tests/bench/bench_serve.py [--calls 300] [--era legacy]
"""

from __future__ import annotations

import argparse
import contextlib
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Generator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TextIO

import anyio
from mcp import Client, StdioServerParameters
from mcp.client.stdio import stdio_client

ECHO = Path(__file__).parent / "echo_server.py"
PROXY = Path(__file__).parent / "sdk_proxy.py"
BLOCK = 10
ERAS = {"legacy": "legacy", "2026": "auto"}
"""Each era's name here, and the ``mode`` of the SDK's ``Client`` that speaks it."""


def percentile(samples: list[float], q: float) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def wait_for(path: Path, process: subprocess.Popen[bytes]) -> str:
    deadline = time.monotonic() + 60  # a loaded machine starts Python slowly
    while not path.exists() or not path.read_text().strip():
        if process.poll() is not None or time.monotonic() > deadline:
            raise SystemExit(f"{process.args!r} did not start")
        time.sleep(0.02)
    return path.read_text().strip()


@contextlib.contextmanager
def started(args: list[str], portfile: Path, devnull: TextIO) -> Generator[str]:
    """Run an HTTP server (``args``, which write ``portfile``); yield its ``/mcp`` URL."""
    process = subprocess.Popen(args, stderr=devnull)
    try:
        yield f"http://127.0.0.1:{wait_for(portfile, process)}/mcp"
    finally:
        process.terminate()
        process.wait(10)


def config(path: Path, era: str, server: str) -> Path:
    """Write a config mounting the echo server as ``e``: ``server`` is its TOML keys."""
    protocol = "legacy" if era == "legacy" else "auto"
    path.write_text(f'[servers.e]\n{server}\nprotocol = "{protocol}"\n')
    return path


def descendants(pid: int) -> list[int]:
    """Every live process below ``pid`` (each thread's ``children`` list, as Linux has it)."""
    found: list[int] = []
    todo = [pid]
    while todo:
        for children in Path(f"/proc/{todo.pop()}/task").glob("*/children"):
            with contextlib.suppress(OSError):
                kids = [int(k) for k in children.read_text().split()]
                found += kids
                todo += kids
    return found


def cpu_seconds(pid: int) -> float:
    """CPU time of ``pid``'s live threads, to the nanosecond (the scheduler's own count)."""
    total = 0
    for stat in Path(f"/proc/{pid}/task").glob("*/schedstat"):
        with contextlib.suppress(OSError, ValueError):
            total += int(stat.read_text().split()[0])
    return total / 1e9


def hop_of(pid: int) -> str | None:
    """Which hop ``pid`` is: ``"serve"`` (`mcpmount serve`), ``"proxy"`` (the SDK proxy)."""
    with contextlib.suppress(OSError):
        words = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
        if b"mcpmount" in words and b"serve" in words:
            return "serve"
        if any(word.endswith(b"sdk_proxy.py") for word in words):
            return "proxy"
    return None


@dataclass
class Side:
    """One side of a pairing: its client, its call times, and the CPU its calls cost."""

    name: str
    client: Client
    tool: str = "echo"
    hop: str | None = None
    """The kind of hop its calls go through (`hop_of`), if any."""
    times: list[float] = field(default_factory=list[float])
    cpu: float = 0.0
    """Seconds of CPU of this process and every process it started, during its blocks."""
    hop_cpu: float = 0.0
    """Seconds of CPU of its hop's processes, during its blocks."""

    def per_call_ms(self, seconds: float) -> float:
        return seconds / len(self.times) * 1e3

    @property
    def p50(self) -> float:
        return statistics.median(self.times) * 1e3

    @property
    def p99(self) -> float:
        return percentile(self.times, 0.99) * 1e3


async def measure(sides: list[Side], calls: int) -> None:
    """Call each side in turn, ``BLOCK`` calls at a time, ``calls`` in all per side."""
    for side in sides:  # warm up
        for _ in range(20):
            await side.client.call_tool(side.tool, {"text": "warm"})
    processes = descendants(os.getpid())
    hops = {pid: hop_of(pid) for pid in processes}
    theirs = [
        [pid for pid, hop in hops.items() if hop == side.hop] if side.hop else [] for side in sides
    ]
    for _ in range(calls // BLOCK):
        for side, mine in zip(sides, theirs, strict=True):
            hop_before = sum(map(cpu_seconds, mine))
            before = sum(map(cpu_seconds, processes))
            before += time.process_time()  # last: reading /proc is not the calls' CPU
            for _ in range(BLOCK):
                start = time.perf_counter()
                await side.client.call_tool(side.tool, {"text": "hello"})
                side.times.append(time.perf_counter() - start)
            after = time.process_time()
            side.cpu += after + sum(map(cpu_seconds, processes)) - before
            side.hop_cpu += sum(map(cpu_seconds, mine)) - hop_before


def report(label: str, direct: Side, hops: list[Side]) -> None:
    d_cpu = direct.per_call_ms(direct.cpu)
    print(
        f"{label:18} n={len(direct.times):4}  direct   p50 {direct.p50:6.2f} ms "
        f"p99 {direct.p99:6.2f} ms, CPU a call {d_cpu:5.2f} ms",
        flush=True,
    )
    for side in hops:
        cpu, hop_cpu = side.per_call_ms(side.cpu), side.per_call_ms(side.hop_cpu)
        print(
            f"{'':18} {'via ' + side.name:15} p50 {side.p50:6.2f} ms p99 {side.p99:6.2f} ms: "
            f"added p50 {side.p50 - direct.p50:+.2f} ms ({side.p50 / direct.p50:.2f}x), "
            f"CPU {cpu - d_cpu:+.2f} ms; its process {hop_cpu:5.2f} ms, "
            f"{hop_cpu / d_cpu:.2f}x the direct call's",
            flush=True,
        )
    serve, proxy = hops
    added = (serve.p50 - direct.p50) / (proxy.p50 - direct.p50)
    cpu = serve.hop_cpu / proxy.hop_cpu
    print(
        f"{'':18} serve over the SDK proxy: added p50 {added:.2f}x, the hop's CPU {cpu:.2f}x",
        flush=True,
    )


async def pair(label: str, direct: Client, served: Client, proxied: Client, calls: int) -> None:
    async with direct as d, served as s, proxied as p:
        while "e__echo" not in [t.name for t in (await s.list_tools()).tools]:
            await anyio.sleep(0.05)
        sides = [
            Side("direct", d),
            Side("serve", s, "e__echo", "serve"),
            Side("sdk proxy", p, hop="proxy"),
        ]
        await measure(sides, calls)
        report(label, sides[0], sides[1:])


def run_era(era: str, calls: int, tmp: Path, devnull: TextIO) -> None:
    """Measure the three pairings of one era."""
    mode = ERAS[era]
    python = sys.executable
    stdio_upstream = f'command = "{python}"\nargs = ["{ECHO}"]'
    stdio_config = config(tmp / f"{era}-stdio.toml", era, stdio_upstream)
    serve = [python, "-m", "mcpmount", "serve"]
    flags = ["--transport", "http", "--port", "0", "--portfile"]
    proxy = [python, str(PROXY), "--mode", mode]
    echo_http = [python, str(ECHO), "--http", "--portfile", str(tmp / f"{era}-echo.port")]
    with started(echo_http, tmp / f"{era}-echo.port", devnull) as url:
        http_config = config(tmp / f"{era}-http.toml", era, f'url = "{url}"')
        served_http = [*serve, str(http_config), *flags, str(tmp / f"{era}-sh.port")]
        served_stdio = [*serve, str(stdio_config), *flags, str(tmp / f"{era}-ss.port")]
        proxied_http = [*proxy, "--url", url, "--portfile", str(tmp / f"{era}-ph.port")]
        proxied_stdio = [*proxy, "--portfile", str(tmp / f"{era}-ps.port"), "--", python, str(ECHO)]
        with (
            started(served_http, tmp / f"{era}-sh.port", devnull) as via_http,
            started(served_stdio, tmp / f"{era}-ss.port", devnull) as via_stdio,
            started(proxied_http, tmp / f"{era}-ph.port", devnull) as proxy_http,
            started(proxied_stdio, tmp / f"{era}-ps.port", devnull) as proxy_stdio,
        ):

            def spawned(args: list[str]) -> Client:
                params = StdioServerParameters(command=python, args=args)
                return Client(stdio_client(params, errlog=devnull), mode=mode)

            async def compare() -> None:
                await pair(
                    f"{era} stdio/stdio",
                    spawned([str(ECHO)]),
                    spawned([*serve[1:], str(stdio_config)]),
                    spawned([*proxy[1:], "--", python, str(ECHO)]),
                    calls,
                )
                await pair(
                    f"{era} http/http",
                    Client(url, mode=mode),
                    Client(via_http, mode=mode),
                    Client(proxy_http, mode=mode),
                    calls,
                )
                await pair(
                    f"{era} http/stdio",
                    Client(url, mode=mode),
                    Client(via_stdio, mode=mode),
                    Client(proxy_stdio, mode=mode),
                    calls,
                )

            anyio.run(compare)


def main(calls: int, eras: list[str]) -> None:
    """Start the HTTP servers of each era (blocking setup), then measure its pairings."""
    print(f"load average {os.getloadavg()[0]:.2f} on {os.cpu_count()} CPUs", flush=True)
    with open(os.devnull, "w") as devnull, tempfile.TemporaryDirectory() as tmp:
        for era in eras:
            run_era(era, calls, Path(tmp), devnull)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description="The latency mcpmount serve adds to a call.")
    parser.add_argument("--calls", type=int, default=300, help="calls per side and pairing")
    parser.add_argument("--era", choices=[*ERAS, "both"], default="both")
    args = parser.parse_args()
    main(args.calls, list(ERAS) if args.era == "both" else [args.era])
