"""What the gateway's features add to a plain call through `mcpmount serve`, in one run.

Two `mcpmount serve --transport http` processes mount the same upstream
(``tests/bench/echo_server.py`` over stdio, one fast ``echo`` tool) behind the same static
bearer token: one with every feature off, one with every feature of issue 40 this tree has
turned on (`features`): the call log to a file, a Cedar policy that allows the tool,
and a rate limit and a concurrency cap it stays under. One SDK ``Client`` per side calls
``e__echo`` over HTTP, the sides interleaved in blocks of ten calls, so that the machine's
noise hits both alike. It prints each side's p50 and p95, the p50 difference in ms (the
bar: at most 0.3 ms), and checks that the call log holds a record of every call.

Run it from the repository root:  python tests/bench/gateway_overhead.py [--calls 2000]
[--era 2026|legacy]
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

import anyio
import httpx2
from bench_serve import ECHO, cpu_seconds, descendants, percentile, started
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from mcpmount.config import ServeSettings

BLOCK = 10
BAR_MS = 0.3
TOKEN = "gateway-bench-token-0123456789"
ERAS = {"legacy": "legacy", "2026": "auto"}


def features(tmp: Path, only: set[str]) -> tuple[list[str], str]:
    """The ``[serve]`` lines that turn on every feature this tree has, and their names.

    Each is made to decide on every call without refusing it: the policy allows the tool
    past a ``forbid`` it has to evaluate, and the limit counts every call of it against a
    rate and a cap the run stays under.
    """
    keys = ServeSettings.model_fields
    lines: list[str] = []
    names: list[str] = []
    if "log" in only:
        lines.append(f'call_log = "{tmp / "calls.jsonl"}"')
        names.append("call log")
    if "policy" in keys and "policy" in only:
        policy = tmp / "policy.cedar"
        policy.write_text(
            "permit(principal, action, resource);\n"
            'forbid(principal, action, resource is Tool) when { resource.name like "e__del*" };\n'
        )
        lines.append(f'policy = "{policy}"')
        names.append("policy")
    if "limits" in keys and "limits" in only:
        lines.append('\n[[serve.limits.rule]]\ntools = "e__*"\nrate = "1000000/minute"')
        lines.append("concurrency = 64")
        names.append("rate limit and concurrency cap")
    return lines, ", ".join(names)


def config(path: Path, serve: list[str], protocol: str) -> Path:
    """Write a config mounting the echo server as ``e``, with ``serve`` in ``[serve]``."""
    path.write_text(
        '[serve.tokens.bench]\ntoken = "${GATEWAY_BENCH_TOKEN}"\n\n'
        "[serve]\n" + "\n".join(serve) + "\n\n"
        f'[servers.e]\ncommand = "{sys.executable}"\nargs = ["{ECHO}"]\n'
        f'protocol = "{protocol}"\nrequired = true\n'
    )
    return path


def serve_pid(config: str) -> int:
    """The pid of this process's `mcpmount serve` of ``config``."""
    for pid in descendants(os.getpid()):
        words = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
        if b"serve" in words and config.encode() in words:
            return pid
    raise SystemExit(f"no serve of {config} runs")


async def measure(
    urls: dict[str, str], pids: dict[str, int], mode: str, calls: int
) -> tuple[dict[str, list[float]], dict[str, float]]:
    """Call ``e__echo`` on every side in turn, `BLOCK` calls at a time; each call's time,
    and the CPU seconds each side's serve process spent in its blocks."""
    times: dict[str, list[float]] = {side: [] for side in urls}
    cpu = dict.fromkeys(urls, 0.0)
    headers = {"Authorization": f"Bearer {TOKEN}"}
    async with (
        httpx2.AsyncClient(headers=headers, timeout=60) as off_http,
        httpx2.AsyncClient(headers=headers, timeout=60) as on_http,
        Client(streamable_http_client(urls["off"], http_client=off_http), mode=mode) as off,
        Client(streamable_http_client(urls["on"], http_client=on_http), mode=mode) as on,
    ):
        clients = {"off": off, "on": on}
        for client in clients.values():
            with anyio.fail_after(60):
                while "e__echo" not in [t.name for t in (await client.list_tools()).tools]:
                    await anyio.sleep(0.05)
            for _ in range(50):  # warm up
                await client.call_tool("e__echo", {"text": "warm"})
        for _ in range(calls // BLOCK):
            for side, client in clients.items():
                before = cpu_seconds(pids[side])
                for _ in range(BLOCK):
                    start = time.perf_counter()
                    await client.call_tool("e__echo", {"text": "hello"})
                    times[side].append(time.perf_counter() - start)
                cpu[side] += cpu_seconds(pids[side]) - before
    return times, cpu


def main() -> None:
    parser = argparse.ArgumentParser(description="What the gateway features add to a call.")
    parser.add_argument("--calls", type=int, default=2000, help="calls per side")
    parser.add_argument("--era", choices=sorted(ERAS), default="2026")
    parser.add_argument(
        "--features", default="log,policy,limits", help="which to turn on (default: all)"
    )
    args = parser.parse_args()
    os.environ["GATEWAY_BENCH_TOKEN"] = TOKEN
    with tempfile.TemporaryDirectory() as scratch, open(os.devnull, "w") as devnull:
        tmp = Path(scratch)
        protocol = "legacy" if args.era == "legacy" else "auto"
        on_lines, named = features(tmp, set(args.features.split(",")))
        serve = [sys.executable, "-m", "mcpmount", "serve"]
        flags = ["--transport", "http", "--port", "0", "--portfile"]
        off_config = config(tmp / "off.toml", [], protocol)
        on_config = config(tmp / "on.toml", on_lines, protocol)
        load = os.getloadavg()[0]
        with (
            started(
                [*serve, str(off_config), *flags, str(tmp / "off.port")], tmp / "off.port", devnull
            ) as off,
            started(
                [*serve, str(on_config), *flags, str(tmp / "on.port")], tmp / "on.port", devnull
            ) as on,
        ):
            pids = {"off": serve_pid(str(off_config)), "on": serve_pid(str(on_config))}
            urls = {"off": off, "on": on}
            times, cpu = anyio.run(measure, urls, pids, ERAS[args.era], args.calls)
        log = tmp / "calls.jsonl"
        logged = log.read_text().count('"method":"tools/call"') if log.exists() else 0
    print(f"gateway overhead, {args.era} era, HTTP, {args.calls} calls a side, load {load:.2f}")
    print(f"  on: {named}")
    p50 = {side: statistics.median(t) * 1e3 for side, t in times.items()}
    for side, samples in times.items():
        p95 = percentile(samples, 0.95) * 1e3
        per_call = cpu[side] / len(samples) * 1e3
        print(
            f"  features {side:3}  p50 {p50[side]:6.3f} ms  p95 {p95:6.3f} ms  "
            f"serve's CPU a call {per_call:6.3f} ms"
        )
    added = p50["on"] - p50["off"]
    verdict = "within" if added <= BAR_MS else "OVER"
    print(f"  p50 difference {added:+.3f} ms ({verdict} the {BAR_MS} ms bar)")
    added_cpu = (cpu["on"] - cpu["off"]) / args.calls * 1e3
    print(f"  serve's CPU difference a call {added_cpu:+.3f} ms")
    print(f"  call log records of calls: {logged} (calls made on that side: {args.calls + 50})")


if __name__ == "__main__":
    main()
