"""The latency `mcpmount serve` adds to a call, against a direct call, in one run.

Four clients are open at once, all made by the SDK's ``Client``:

- direct stdio: ``tests/bench/echo_server.py`` spawned by the client;
- via serve, stdio: ``mcpmount serve`` spawned by the client, in front of that server;
- direct HTTP: the echo server with ``--http``;
- via serve, HTTP: ``mcpmount serve --transport http`` in front of that HTTP server.

Calls of the trivial ``echo`` tool are interleaved in blocks (direct, then via serve), so
machine noise hits both sides alike; p50 and p99 are reported with the ratio.

Run it from the repository root:  python tests/bench/bench_serve.py [--calls 300]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import TextIO

import anyio
from mcp import Client, StdioServerParameters
from mcp.client.stdio import stdio_client

ECHO = Path(__file__).parent / "echo_server.py"
BLOCK = 10


def percentile(samples: list[float], q: float) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def wait_for(path: Path, process: subprocess.Popen[bytes]) -> str:
    deadline = time.monotonic() + 20
    while not path.exists() or not path.read_text().strip():
        if process.poll() is not None or time.monotonic() > deadline:
            raise SystemExit(f"{process.args!r} did not start")
        time.sleep(0.02)
    return path.read_text().strip()


async def measure(
    direct: Client, served: Client, name: str, calls: int
) -> tuple[list[float], list[float]]:
    times: tuple[list[float], list[float]] = ([], [])
    for client, tool in ((direct, "echo"), (served, f"{name}__echo")):  # warm up
        for _ in range(20):
            await client.call_tool(tool, {"text": "warm"})
    for _ in range(calls // BLOCK):
        for side, (client, tool) in enumerate(((direct, "echo"), (served, f"{name}__echo"))):
            for _ in range(BLOCK):
                start = time.perf_counter()
                await client.call_tool(tool, {"text": "hello"})
                times[side].append(time.perf_counter() - start)
    return times


def report(label: str, direct: list[float], served: list[float]) -> None:
    d50, s50 = statistics.median(direct) * 1e3, statistics.median(served) * 1e3
    d99, s99 = percentile(direct, 0.99) * 1e3, percentile(served, 0.99) * 1e3
    print(
        f"{label:6} n={len(direct):4}  direct p50 {d50:6.2f} ms p99 {d99:6.2f} ms | "
        f"via serve p50 {s50:6.2f} ms p99 {s99:6.2f} ms | added p50 {s50 - d50:+.2f} ms, "
        f"ratio p50 {s50 / d50:.2f}x p99 {s99 / d99:.2f}x"
    )


async def compare(
    stdio_config: Path, url: str, served_url: str, calls: int, devnull: TextIO
) -> None:
    direct = StdioServerParameters(command=sys.executable, args=[str(ECHO)])
    serve = StdioServerParameters(
        command=sys.executable, args=["-m", "mcpmount", "serve", str(stdio_config)]
    )
    async with (
        Client(stdio_client(direct, errlog=devnull)) as d,
        Client(stdio_client(serve, errlog=devnull)) as s,
    ):
        while "e__echo" not in [t.name for t in (await s.list_tools()).tools]:
            await anyio.sleep(0.05)
        report("stdio", *await measure(d, s, "e", calls))
    async with Client(url) as d, Client(served_url) as s:
        while "e__echo" not in [t.name for t in (await s.list_tools()).tools]:
            await anyio.sleep(0.05)
        report("http", *await measure(d, s, "e", calls))


def main(calls: int) -> None:
    """Start the HTTP servers (blocking setup), then measure all four clients."""
    with open(os.devnull, "w") as devnull, tempfile.TemporaryDirectory() as tmp:
        stdio_config = Path(tmp, "stdio.toml")
        stdio_config.write_text(f'[servers.e]\ncommand = "{sys.executable}"\nargs = ["{ECHO}"]\n')
        echo_port, serve_port = Path(tmp, "echo.port"), Path(tmp, "serve.port")
        echo_http = subprocess.Popen(
            [sys.executable, str(ECHO), "--http", "--portfile", str(echo_port)], stderr=devnull
        )
        try:
            url = f"http://127.0.0.1:{wait_for(echo_port, echo_http)}/mcp"
            http_config = Path(tmp, "http.toml")
            http_config.write_text(f'[servers.e]\nurl = "{url}"\n')
            serve = [sys.executable, "-m", "mcpmount", "serve", str(http_config)]
            flags = ["--transport", "http", "--port", "0", "--portfile", str(serve_port)]
            serve_http = subprocess.Popen([*serve, *flags], stderr=devnull)
            try:
                served_url = f"http://127.0.0.1:{wait_for(serve_port, serve_http)}/mcp"
                anyio.run(compare, stdio_config, url, served_url, calls, devnull)
            finally:
                serve_http.terminate()
                serve_http.wait(10)
        finally:
            echo_http.terminate()
            echo_http.wait(10)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description="The latency mcpmount serve adds to a call.")
    parser.add_argument("--calls", type=int, default=300, help="calls per side and transport")
    main(parser.parse_args().calls)
