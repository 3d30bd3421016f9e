"""mcpmount against the raw MCP SDK used at its best, side by side in one run.

The SDK side is the pattern its task rules call for (a ``Client`` must be entered and
exited by one living task): one owner task per server, all started concurrently, each
entering ``Client(stdio_client(params, errlog=devnull))``, listing every page of
``tools/list``, then waiting for its stop event; closing sets every stop event at once.
The mcpmount side is ``open_registry(RegistryConfig.from_servers(...))`` (config
validation and naming included) and ``registry.call``. Both spawn the same server,
``tests/bench/echo_server.py``.

Measured:

1. mount (connect + list) and close of 1, 10 and 30 stdio servers, each repeated and
   alternated (SDK first, then mcpmount first), reported as medians;
1b. cold mount of 10 and 30 stdio servers of 21 tools each (``tests/servers/fixture_server.py
   --tools 14``) for the raw SDK, mcpmount vetting every schema as it did before
   (``check_schema`` per schema, every definition hashed at first publish) and mcpmount as
   it is (`SchemaVetting`): the order of the three rotates each repetition; wall time to
   the tool list, and the host process's own CPU time (mount and close);
2. p50/p99 latency of a trivial ``echo`` call over stdio and over streamable HTTP (both
   clients open at once, calls alternated one by one, in rounds; the p50 ratio is the
   median of the rounds' ratios, each round's p50s paired);
   over stdio in both protocol eras (2026-07-28, found by ``server/discover``, and legacy),
   and again with the secret guard at work (a second server holds a token), and that
   against the same call with the guard off (the guard's own cost); beside each
   era's, a control: two SDK clients measured the same way, whose ratio shows how far the
   machine's noise alone moves a ratio in this run;
3. 16-way throughput: 16 tasks making sequential calls on one connection;
4. memory: a fresh interpreter's RSS after ``import mcp`` against ``import mcpmount``, and
   after mounting 30 stdio servers on each side (alternated, medians).

Run it from the repository root:

    python tests/bench/bench_registry.py            # about 2 minutes on 2 cores
    python tests/bench/bench_registry.py --quick    # about 40 s
    python tests/bench/bench_registry.py --only cold  # about 3 minutes
    python tests/bench/bench_registry.py --only memory
"""

from __future__ import annotations

import argparse
import compileall
import contextlib
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import AsyncGenerator, Awaitable, Callable, Generator, Iterable, Mapping
from dataclasses import dataclass, field
from importlib.metadata import version
from pathlib import Path
from typing import Any, TextIO
from unittest import mock

import anyio
import jsonschema
import mcp_types
from anyio.abc import TaskStatus
from jsonschema.validators import validator_for
from mcp import Client
from mcp.client.stdio import StdioServerParameters, stdio_client
from pydantic import SecretStr
from rich.console import Console
from rich.table import Table

import mcpmount
from mcpmount.catalog import ToolDiff, diff_tools
from mcpmount.catalog import tool_hash as pin_hash
from mcpmount.config import HttpServer, RegistryConfig, ServerSpec, StdioServer
from mcpmount.registry import Registry, open_registry
from mcpmount.tool import MountedTool
from mcpmount.upstream import SchemaVetting

ECHO_SERVER = Path(__file__).resolve().with_name("echo_server.py")
SERVER_COUNTS = (1, 10, 30)
MANY_TOOLS = [  # the fixture server's 7 tools and 14 more: 21 tools
    str(Path(__file__).resolve().parents[1] / "servers" / "fixture_server.py"),
    *("--tools", "14"),
]
COLD_COUNTS = (10, 30)
CALL_ARGS = {"text": "x"}

CallFn = Callable[[], Awaitable[object]]


@dataclass(frozen=True)
class Plan:
    reps: dict[int, int]
    """Mount-and-close repetitions per server count (a 30-server round costs about 14 s)."""

    cold_reps: dict[int, int]
    """Cold-mount repetitions (of all three sides) per count of 21-tool servers."""

    rounds: int
    """Rounds of the latency figures: each gives one p50 per side, and their ratio."""

    calls: dict[str, int]
    """Sequential calls per side and round for the latency figures, per transport."""

    throughput_calls: dict[str, int]
    """Calls per side (split over ``concurrency`` tasks) for throughput, per transport."""

    warmup: int = 20
    concurrency: int = 16


# Over HTTP every call costs about 45 ms on both sides (the floor of the SDK's streamable
# HTTP round trip on this machine), hence fewer of them.
FULL = Plan(
    reps={1: 4, 10: 3, 30: 2},
    cold_reps={10: 3, 30: 3},
    rounds=12,
    calls={"stdio": 100, "http": 40},
    throughput_calls={"stdio": 1600, "http": 640},
    warmup=50,
)
QUICK = Plan(
    reps={1: 2, 10: 1, 30: 1},
    cold_reps={10: 1, 30: 1},
    rounds=8,
    calls={"stdio": 40, "http": 15},
    throughput_calls={"stdio": 480, "http": 320},
)


@dataclass
class Row:
    """One line of the report: a measurement for the SDK and for mcpmount."""

    section: str
    what: str
    sdk: float
    mcpmount: float
    unit: str
    target: float | None = None
    higher_is_better: bool = False
    note: str = ""
    over: float | None = None
    """A target on the difference instead: mcpmount at most this much above the SDK."""
    paired: float | None = None
    """The ratio measured pair by pair (the median of per-round ratios), if not the
    ratio of the two figures."""

    @property
    def met(self) -> bool | None:
        """Whether the ratio, as printed (3 decimals), meets the target (or the difference
        ``over``); None if no target."""
        if self.over is not None:
            return round(self.mcpmount - self.sdk, 2) <= self.over
        return None if self.target is None else round(self.ratio, 3) <= self.target

    @property
    def ratio(self) -> float:
        """mcpmount over SDK for times; SDK over mcpmount for rates (so < 1 is always better)."""
        if self.paired is not None:
            return self.paired
        if self.higher_is_better:
            return self.sdk / self.mcpmount
        return self.mcpmount / self.sdk


@dataclass
class Report:
    rows: list[Row] = field(default_factory=list[Row])

    def add(self, row: Row) -> None:
        self.rows.append(row)
        print(
            f"  {row.section:<10} {row.what:<14} sdk {row.sdk:10.2f} {row.unit:<7} "
            f"mcpmount {row.mcpmount:10.2f} {row.unit:<7} ratio {row.ratio:.3f}",
            file=sys.stderr,
            flush=True,
        )


# -- the SDK at its best ----------------------------------------------------------------------


async def sdk_list_all(client: Client) -> list[mcp_types.Tool]:
    tools: list[mcp_types.Tool] = []
    cursor: str | None = None
    while True:
        page = await client.list_tools(cursor=cursor)
        tools += page.tools
        cursor = page.next_cursor
        if cursor is None:
            return tools


async def sdk_owner(client: Client, *, task_status: TaskStatus[tuple[Client, anyio.Event]]) -> None:
    """Own one SDK client: enter, list every page, report started, wait, exit."""
    stop = anyio.Event()
    async with client:
        await sdk_list_all(client)
        task_status.started((client, stop))
        await stop.wait()


@contextlib.asynccontextmanager
async def sdk_clients(clients: list[Client]) -> AsyncGenerator[list[tuple[Client, anyio.Event]]]:
    """Start one owner task per client, all concurrently; on exit stop them all at once."""
    started: list[tuple[Client, anyio.Event]] = []
    async with anyio.create_task_group() as owners:

        async def start(client: Client) -> None:
            started.append(await owners.start(sdk_owner, client))

        async with anyio.create_task_group() as starters:
            for client in clients:
                starters.start_soon(start, client)
        try:
            yield started
        finally:
            for _, stop in started:
                stop.set()


GUARDED_TOKEN = "ghp_" + "x7Kq2" * 7
"""Another server's token (made up) that the secret guard looks for in every call."""


def stdio_client_for(devnull: TextIO, args: list[str] | None = None) -> Client:
    params = StdioServerParameters(command=sys.executable, args=args or [str(ECHO_SERVER)])
    return Client(stdio_client(params, errlog=devnull))


# -- mcpmount ---------------------------------------------------------------------------------


def stdio_config(n: int, args: list[str] | None = None) -> RegistryConfig:
    servers: dict[str, ServerSpec] = {
        f"s{i}": StdioServer(command=sys.executable, args=args or [str(ECHO_SERVER)])
        for i in range(n)
    }
    return RegistryConfig.from_servers(servers)


def problem_as_before(_: SchemaVetting, schema: Mapping[str, Any]) -> str | None:
    """What vetting a schema did before `SchemaVetting`: ``check_schema``, every time."""
    try:
        validator_for(schema).check_schema(schema)  # pyright: ignore[reportUnknownMemberType, reportArgumentType]
    except jsonschema.SchemaError as exc:
        where = "/".join(str(part) for part in exc.path) or "the top level"
        return f"at {where}: {exc.message}"
    return None


def diff_as_before(
    before: Mapping[str, str],
    after: Iterable[MountedTool],
    old_tools: Mapping[str, MountedTool] | None = None,
) -> ToolDiff:
    """`diff_tools` as it was: every tool's definition hashed, a first publish's too."""
    after = list(after)
    for tool in after:
        pin_hash(tool.definition, tool.listed)
    return diff_tools(before, after, old_tools)


@contextlib.contextmanager
def as_before() -> Generator[None]:
    """Mount as mcpmount did before each distinct schema was vetted once."""
    with (
        mock.patch.object(SchemaVetting, "problem", problem_as_before),
        mock.patch("mcpmount.catalog._catalog.diff_tools", diff_as_before),
    ):
        yield


# -- 1. mount and close -----------------------------------------------------------------------


async def time_sdk_mount(
    n: int, devnull: TextIO, args: list[str] | None = None
) -> tuple[float, float]:
    began = time.perf_counter()
    async with contextlib.AsyncExitStack() as stack:
        clients = [stdio_client_for(devnull, args) for _ in range(n)]
        started = await stack.enter_async_context(sdk_clients(clients))
        assert len(started) == n
        mounted = time.perf_counter()
    closed = time.perf_counter()
    return mounted - began, closed - mounted


async def time_mcpmount_mount(
    n: int, args: list[str] | None = None, tools: int = 1
) -> tuple[float, float]:
    began = time.perf_counter()
    async with contextlib.AsyncExitStack() as stack:
        registry = await stack.enter_async_context(open_registry(stdio_config(n, args)))
        assert len(registry.mounted_tools()) == n * tools
        mounted = time.perf_counter()
    closed = time.perf_counter()
    return mounted - began, closed - mounted


async def bench_mount(plan: Plan, report: Report, devnull: TextIO) -> None:
    # Warm the page cache and both code paths once; not measured.
    await time_sdk_mount(1, devnull)
    await time_mcpmount_mount(1)
    for n in SERVER_COUNTS:
        sdk: list[tuple[float, float]] = []
        ours: list[tuple[float, float]] = []
        reps = plan.reps[n]
        for rep in range(reps):
            if rep % 2 == 0:
                sdk.append(await time_sdk_mount(n, devnull))
                ours.append(await time_mcpmount_mount(n))
            else:
                ours.append(await time_mcpmount_mount(n))
                sdk.append(await time_sdk_mount(n, devnull))
        label = f"{n} server{'s' if n > 1 else ''}"
        report.add(
            Row(
                "mount",
                label,
                statistics.median(t for t, _ in sdk) * 1e3,
                statistics.median(t for t, _ in ours) * 1e3,
                "ms",
                target=1.05,
                note=f"median of {reps}",
            )
        )
        report.add(
            Row(
                "close",
                label,
                statistics.median(t for _, t in sdk) * 1e3,
                statistics.median(t for _, t in ours) * 1e3,
                "ms",
                target=1.1 if n == 30 else None,
                note=f"median of {reps}",
            )
        )


# -- 1b. cold mount: raw SDK, mcpmount as before, mcpmount -----------------------------------


async def time_cold(side: str, n: int, devnull: TextIO) -> tuple[float, float]:
    """Seconds to a complete tool list of ``n`` 21-tool servers on one side, and the host's
    own CPU seconds (all its threads, not the servers') for that mount and its close."""
    cpu = time.process_time()
    if side == "sdk":
        mounted, _ = await time_sdk_mount(n, devnull, MANY_TOOLS)
    elif side == "before":
        with as_before():
            mounted, _ = await time_mcpmount_mount(n, MANY_TOOLS, tools=21)
    else:
        mounted, _ = await time_mcpmount_mount(n, MANY_TOOLS, tools=21)
    return mounted, time.process_time() - cpu


async def bench_cold(plan: Plan, report: Report, devnull: TextIO) -> None:
    sides = ["sdk", "before", "now"]
    for side in sides:  # warm the page cache and each code path once; not measured
        await time_cold(side, 1, devnull)
    for n in COLD_COUNTS:
        times: dict[str, list[tuple[float, float]]] = {side: [] for side in sides}
        reps = plan.cold_reps[n]
        for rep in range(reps):
            order = sides[rep % 3 :] + sides[: rep % 3]
            for side in order:
                times[side].append(await time_cold(side, n, devnull))
        target = 1.05 if n == 30 else None  # the target: within 5% of the SDK at K=30
        for measure, unit, pick in (("", "ms", 0), (" cpu", "ms CPU", 1)):
            sdk = [t[pick] for t in times["sdk"]]
            for side, what in (("before", " as before"), ("now", "")):
                ours = [t[pick] for t in times[side]]
                ratios = [a / b for a, b in zip(ours, sdk, strict=True)]
                report.add(
                    Row(
                        "cold" + measure,
                        f"{n}x21{what}",
                        statistics.median(sdk) * 1e3,
                        statistics.median(ours) * 1e3,
                        unit,
                        target=target if side == "now" and not pick else None,
                        note=f"median of {reps}; each rep {min(ratios):.3f}-{max(ratios):.3f}",
                    )
                )


# -- 2 and 3. calls ---------------------------------------------------------------------------


async def latencies(
    sdk_call: CallFn, our_call: CallFn, rounds: int, calls: int, warmup: int
) -> list[tuple[list[float], list[float]]]:
    """Per round, ``calls`` seconds of each side, the two sides alternating call by call
    (the first one changes each round), so that the machine's drift hits both alike."""
    for _ in range(warmup):
        await sdk_call()
        await our_call()
    measured: list[tuple[list[float], list[float]]] = []
    for round_ in range(rounds):
        samples: tuple[list[float], list[float]] = ([], [])
        sides = [(sdk_call, samples[0]), (our_call, samples[1])]
        if round_ % 2:
            sides.reverse()
        for _ in range(calls):
            for call, out in sides:
                began = time.perf_counter()
                await call()
                out.append(time.perf_counter() - began)
        measured.append(samples)
    return measured


async def throughput(call: CallFn, total: int, concurrency: int) -> float:
    """Calls per second of ``concurrency`` tasks making sequential calls, ``total`` in all."""
    per_task = total // concurrency

    async def worker() -> None:
        for _ in range(per_task):
            await call()

    began = time.perf_counter()
    async with anyio.create_task_group() as tg:
        for _ in range(concurrency):
            tg.start_soon(worker)
    return per_task * concurrency / (time.perf_counter() - began)


def percentile(samples: list[float], q: float) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


async def sdk_echo(client: Client) -> object:
    """One ``echo`` call through the SDK's ``client``."""
    result = await client.call_tool("echo", CALL_ARGS)
    assert not result.is_error
    return result


async def bench_calls(
    transport: str,
    sdk_client: Client,
    registry: Registry,
    plan: Plan,
    report: Report,
    era: str = "",
) -> None:
    async def sdk_call() -> object:
        return await sdk_echo(sdk_client)

    async def our_call() -> object:
        result = await registry.call("s0__echo", CALL_ARGS)
        assert not result.is_error
        return result

    calls = plan.calls[transport]
    rounds = await latencies(sdk_call, our_call, plan.rounds, calls, plan.warmup)
    note = f"{plan.rounds} rounds of {calls} calls a side, alternated call by call; ratio: "
    report.add(p50_row("call", f"{transport} p50{era}", rounds, note + "the median round's"))
    report.add(
        Row(
            "call",
            f"{transport} p99{era}",
            percentile([t for sdk, _ in rounds for t in sdk], 0.99) * 1e3,
            percentile([t for _, ours in rounds for t in ours], 0.99) * 1e3,
            "ms",
            note=f"all {plan.rounds * calls} calls of each side",
        )
    )
    if era:
        return  # throughput once per transport
    # Two rounds in alternating order; the better round of each side counts.
    total = plan.throughput_calls[transport]
    rates: tuple[list[float], list[float]] = ([], [])
    for first_sdk in (True, False):
        order = [(sdk_call, rates[0]), (our_call, rates[1])]
        if not first_sdk:
            order.reverse()
        for call, out in order:
            out.append(await throughput(call, total, plan.concurrency))
    report.add(
        Row(
            "throughput",
            f"{transport} {plan.concurrency}-way",
            max(rates[0]),
            max(rates[1]),
            "calls/s",
            target=1.053,  # mcpmount at 0.95x the SDK's rate or better
            higher_is_better=True,
            note=f"{total} calls, best of 2",
        )
    )


async def bench_control(
    clients: list[tuple[Client, anyio.Event]], plan: Plan, report: Report, era: str = ""
) -> None:
    """The p50 ratio of two identical SDK clients (each with its own server), measured as
    `bench_calls` measures mcpmount's: how far from 1.000 the machine's noise alone moves
    that ratio in this run."""
    (first, _), (second, _) = clients
    calls = plan.calls["stdio"]
    rounds = await latencies(
        lambda: sdk_echo(first), lambda: sdk_echo(second), plan.rounds, calls, plan.warmup
    )
    note = "two SDK clients in place of SDK and mcpmount, as above: the noise"
    report.add(p50_row("control", f"stdio p50{era}, SDK/SDK", rounds, note, target=None))


def p50_row(
    section: str,
    what: str,
    rounds: list[tuple[list[float], list[float]]],
    note: str,
    target: float | None = 1.02,
) -> Row:
    """The row of a paired p50: the median of the rounds' ratios, their range in the note."""
    p50s = [(percentile(first, 0.5), percentile(second, 0.5)) for first, second in rounds]
    ratios = sorted(second / first for first, second in p50s)
    return Row(
        section,
        what,
        statistics.median(first for first, _ in p50s) * 1e3,
        statistics.median(second for _, second in p50s) * 1e3,
        "ms",
        target=target,
        paired=statistics.median(ratios),
        note=f"{note} ({ratios[0]:.3f}-{ratios[-1]:.3f})",
    )


async def bench_stdio_calls(plan: Plan, report: Report, devnull: TextIO) -> None:
    async with (
        sdk_clients([stdio_client_for(devnull), stdio_client_for(devnull)]) as started,
        open_registry(stdio_config(1)) as registry,
    ):
        await bench_calls("stdio", started[0][0], registry, plan, report)
        await bench_control(started, plan, report)
    params = StdioServerParameters(command=sys.executable, args=[str(ECHO_SERVER)])
    legacy = StdioServer(command=sys.executable, args=[str(ECHO_SERVER)], protocol="legacy")
    legacy_clients = [Client(stdio_client(params, errlog=devnull), mode="legacy") for _ in range(2)]
    async with (
        sdk_clients(legacy_clients) as started,
        open_registry(RegistryConfig.from_servers({"s0": legacy})) as registry,
    ):
        await bench_calls("stdio", started[0][0], registry, plan, report, era=" legacy")
        await bench_control(started, plan, report, era=" legacy")
    # The same call with the secret guard at work: another server holds a token, so each
    # call's arguments are scanned for it before they leave.
    guarded = {
        "s0": StdioServer(command=sys.executable, args=[str(ECHO_SERVER)]),
        "s1": StdioServer(
            command=sys.executable,
            args=[str(ECHO_SERVER)],
            env={"API_TOKEN": SecretStr(GUARDED_TOKEN)},
        ),
    }
    async with (
        sdk_clients([stdio_client_for(devnull)]) as started,
        open_registry(RegistryConfig.from_servers(guarded)) as registry,
    ):
        await bench_calls("stdio", started[0][0], registry, plan, report, era=", secrets")
        await bench_guard(registry, plan, report)


async def bench_guard(guarded: Registry, plan: Plan, report: Report) -> None:
    """The guard's own cost: the same plain call through a registry where it is at work
    (``guarded``: another server holds a token, so each call's arguments are checked and
    its result scanned) against the same two servers where no secret is known (no hook at
    all), alternated as `bench_calls` alternates; in the row, "sdk" is the guard off,
    "mcpmount" on."""
    echo = StdioServer(command=sys.executable, args=[str(ECHO_SERVER)])
    plain = {"s0": echo, "s1": echo.model_copy(update={"env": {"MODE": SecretStr("plain")}})}
    async with open_registry(RegistryConfig.from_servers(plain)) as unguarded:

        async def off() -> object:
            return await unguarded.call("s0__echo", CALL_ARGS)

        async def on() -> object:
            return await guarded.call("s0__echo", CALL_ARGS)

        calls = plan.calls["stdio"]
        rounds = await latencies(off, on, plan.rounds, calls, plan.warmup)
    note = "the secret guard on (sdk column: off), same call, alternated; ratio: the median round's"
    report.add(p50_row("guard", "stdio p50, on/off", rounds, note))


@contextlib.contextmanager
def http_server() -> Generator[str]:
    """Run the echo server over streamable HTTP in a subprocess; kill it on the way out."""
    with tempfile.TemporaryDirectory(prefix="mcpmount-bench-") as tmp:
        portfile = Path(tmp) / "port"
        process = subprocess.Popen(
            [sys.executable, str(ECHO_SERVER), "--http", "--portfile", str(portfile)],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
        )
        try:
            deadline = time.monotonic() + 20
            while not portfile.exists():
                if process.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError("the HTTP echo server did not start")
                time.sleep(0.02)
            yield f"http://127.0.0.1:{int(portfile.read_text())}/mcp"
        finally:
            process.terminate()
            try:
                process.wait(5)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()


async def bench_http_calls(plan: Plan, report: Report) -> None:
    with http_server() as url:
        config = RegistryConfig.from_servers({"s0": HttpServer(url=url)})
        async with (
            sdk_clients([Client(url)]) as started,
            open_registry(config) as registry,
        ):
            await bench_calls("http", started[0][0], registry, plan, report)


# -- 4. memory --------------------------------------------------------------------------------

RSS_CHILD = """
import os, sys
import anyio
side, n, echo = sys.argv[1], int(sys.argv[2]), sys.argv[3]
if side == "sdk":
    from mcp import Client
    from mcp.client.stdio import StdioServerParameters, stdio_client
else:
    from mcpmount import RegistryConfig, StdioServer, open_registry

def rss():
    with open("/proc/self/status") as status:
        return next(int(line.split()[1]) for line in status if line.startswith("VmRSS"))

async def own(started, stop, devnull):
    params = StdioServerParameters(command=sys.executable, args=[echo])
    async with Client(stdio_client(params, errlog=devnull)) as client:
        await client.list_tools()
        started.append(client)
        await stop.wait()

async def main():
    if side == "sdk":
        stop, started = anyio.Event(), []
        with open(os.devnull, "w") as devnull:
            async with anyio.create_task_group() as tg:
                for _ in range(n):
                    tg.start_soon(own, started, stop, devnull)
                while len(started) < n:
                    await anyio.sleep(0.05)
                print(rss())
                stop.set()
    else:
        spec = StdioServer(command=sys.executable, args=[echo])
        config = RegistryConfig.from_servers({f"s{i}": spec for i in range(n)})
        async with open_registry(config):
            print(rss())

if n == 0:
    print(rss())
else:
    anyio.run(main)
"""
"""A fresh host: ``sdk`` or ``mcpmount`` imported (n = 0) or ``n`` echo servers mounted."""


def child_rss(side: str, n: int) -> float:
    """MB of resident memory of a fresh host process (see `RSS_CHILD`)."""
    done = subprocess.run(
        [sys.executable, "-c", RSS_CHILD, side, str(n), str(ECHO_SERVER)],
        capture_output=True,
        text=True,
        check=True,
        timeout=300,
    )
    return int(done.stdout.split()[-1]) / 1024


async def bench_memory(plan: Plan, report: Report) -> None:
    # An installed mcpmount has its bytecode (pip compiles it on install), as the SDK has;
    # a checkout run under PYTHONDONTWRITEBYTECODE would compile every module of ours in
    # each fresh process, and count the compiler's memory as the library's (about 1 MB).
    compileall.compile_dir(Path(mcpmount.__file__).parent, quiet=1)
    reps = max(2, plan.reps[30])
    for n, label, over in ((0, "import", 6.0), (30, "30 servers", 8.0)):
        sdk: list[float] = []
        ours: list[float] = []
        for rep in range(reps):
            order = [("sdk", sdk), ("mcpmount", ours)]
            for side, out in order if rep % 2 == 0 else reversed(order):
                out.append(await anyio.to_thread.run_sync(child_rss, side, n))
        what = "import mcp / mcpmount" if n == 0 else f"host RSS, {label}"
        report.add(
            Row(
                "memory",
                what,
                statistics.median(sdk),
                statistics.median(ours),
                "MB",
                over=over,
                note=f"median of {reps}, fresh processes",
            )
        )


# -- the report -------------------------------------------------------------------------------


def machine_info() -> str:
    cpu = platform.processor() or platform.machine()
    with contextlib.suppress(OSError):
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    return (
        f"nproc {len(os.sched_getaffinity(0))} ({cpu}) | Python {platform.python_version()} "
        f"| mcp {version('mcp')} | anyio {version('anyio')} | mcpmount {version('mcpmount')} "
        f"| {platform.system()} {platform.release()}"
    )


def render(report: Report, plan: Plan, elapsed: float) -> None:
    table = Table(
        title="mcpmount vs raw MCP SDK (owner task per server, all concurrent)",
        caption=(
            "ratio = mcpmount/SDK for times, SDK/mcpmount for throughput: below 1 means mcpmount "
            f"is faster | {'--quick' if plan is QUICK else 'full'} run, {elapsed:.0f} s"
        ),
    )
    for name, justify in [
        ("section", "left"),
        ("measure", "left"),
        ("SDK", "right"),
        ("mcpmount", "right"),
        ("unit", "left"),
        ("ratio", "right"),
        ("target", "right"),
        ("", "left"),
        ("how", "left"),
    ]:
        table.add_column(name, justify=justify)  # pyright: ignore[reportArgumentType]
    for row in report.rows:
        verdict = ""
        if row.met is not None:
            verdict = "[green]ok[/]" if row.met else "[red]MISSED[/]"
        table.add_row(
            row.section,
            row.what,
            f"{row.sdk:.2f}",
            f"{row.mcpmount:.2f}",
            row.unit,
            f"{row.ratio:.3f}",
            f"≤ {row.target:.2f}"
            if row.target is not None
            else (f"+{row.over:g} {row.unit}" if row.over is not None else ""),
            verdict,
            row.note,
        )
    console = Console(width=130)
    console.print(machine_info())
    console.print(table)


async def main(plan: Plan, sections: set[str], devnull: TextIO) -> None:
    report = Report()
    began = time.perf_counter()
    if "mount" in sections:
        await bench_mount(plan, report, devnull)
    if "cold" in sections:
        await bench_cold(plan, report, devnull)
    if "stdio" in sections:
        await bench_stdio_calls(plan, report, devnull)
    if "http" in sections:
        await bench_http_calls(plan, report)
    if "memory" in sections:
        await bench_memory(plan, report)
    render(report, plan, time.perf_counter() - began)


def parse_args(argv: list[str] | None = None) -> tuple[Plan, set[str]]:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--quick", action="store_true", help="fewer repetitions and calls")
    parser.add_argument(
        "--only",
        action="append",
        choices=["mount", "cold", "stdio", "http", "memory"],
        help="run only these sections (repeatable); default: all",
    )
    args = parser.parse_args(argv)
    plan = QUICK if args.quick else FULL
    sections: set[str] = set(args.only or ["mount", "cold", "stdio", "http", "memory"])
    return plan, sections


def run(argv: list[str] | None = None) -> None:
    plan, sections = parse_args(argv)
    with open(os.devnull, "w") as devnull:  # the SDK servers' stderr
        anyio.run(main, plan, sections, devnull)


if __name__ == "__main__":
    run()
