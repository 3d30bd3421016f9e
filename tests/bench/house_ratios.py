"""This tree against an older one (02c1c27 by default) in one run: new/old time ratios of
mount, call, search and the serve hop, so that a refactoring shows what it cost.

Each tree runs in a child Python of this venv with ``PYTHONPATH=<tree>/src`` (the old tree
checked out by ``git worktree add --detach`` into a scratch folder, removed at the end). Both
children stay up for the whole run and are asked for one figure at a time, old and new in
turn (old first in even rounds, new first in odd ones), so that the load of a shared machine
drifts over both alike. A round measures, on each side:

- ``mount``: seconds for ``open_registry`` to mount ``--servers`` stdio echo servers
  (``tests/bench/echo_server.py``) with every tool listed;
- ``call``: the p50 of ``--calls`` sequential ``registry.call`` of ``echo``, one server;
- ``search``: the p50 of one ``tool_search`` (``call_tool_search``) per query of the
  tuning set over ``--tools`` tools (``tests/search_eval``, as ``bench_search.py``);
- ``serve``: the p50 of an ``echo`` call by the SDK's ``Client`` through a real
  ``mcpmount serve --transport http --port 0`` (the echo server over stdio behind it), in
  blocks of ten against the direct call (the echo server over HTTP); ``hop`` is the
  difference, what the hop adds.

Beside each wall time, the CPU it cost where mcpmount runs (the child's for mount and call,
the searching thread's, the serve process's a served call), which a loaded machine moves
far less. ``direct`` and ``direct cpu`` run no code of either tree (the SDK client and the
echo server): how far their ratios stray from 1 is what noise alone does in this run.
``hop x`` and ``hop cpu x`` divide the served call's figures by the direct call's of the
same blocks, so that what the load does to both cancels out of the serve hop's ratio.
Each row's ratio is the median of the rounds' new/old ratios; the spread is their range.

    python tests/bench/house_ratios.py                 # about 4 minutes on 2 loaded cores
    python tests/bench/house_ratios.py --old HEAD~5 --rounds 5 --json
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import AsyncGenerator, Generator
from pathlib import Path
from typing import Any

import anyio
from anyio.abc import Process
from anyio.streams.buffered import BufferedByteReceiveStream
from bench_serve import cpu_seconds, descendants, started

SCRIPT = Path(__file__).resolve()
HERE = SCRIPT.parent
ROOT = HERE.parents[1]
ECHO = HERE / "echo_server.py"
ASKED = ("mount", "call", "search", "serve")
ROWS = (
    *("mount", "mount cpu", "call", "call cpu", "search", "search cpu"),
    *("serve", "direct", "hop", "hop x", "serve cpu", "direct cpu", "hop cpu x"),
)
FACTORS = {"hop x", "hop cpu x"}
"""Rows that are a ratio of two figures of one side, not a time."""
NOTES = {
    "mount cpu": "the child's, all threads",
    "call cpu": "the child's, all threads, a call",
    "search cpu": "p50 of the thread's",
    "direct": "no mcpmount in it: the noise",
    "hop": "serve - direct",
    "hop x": "serve / direct, same blocks",
    "serve cpu": "the serve process's, a call",
    "direct cpu": "the echo server's, a direct call: the noise",
    "hop cpu x": "serve cpu / direct cpu, same blocks",
}
BLOCK = 10
ASK_TIMEOUT = 300.0
"""Seconds a child may take over one figure (or its start) before the run fails."""


# -- the child: one tree, asked for one figure at a time -------------------------------------


class Child:
    """What one tree's child keeps between questions: a registry, an index, two clients."""

    def __init__(self, args: argparse.Namespace, workdir: Path) -> None:
        self.args = args
        self.workdir = workdir
        self.echo = [sys.executable, str(args.echo)]
        self.pids: dict[str, int] = {}
        """The HTTP servers' pids: ``echo`` (the direct side's server), ``serve``."""

    async def figure(self, measure: str) -> dict[str, float]:
        """Seconds of the figures of ``measure``: its wall time and its CPU (see `ROWS`)."""
        if measure == "mount":
            return await self.mount()
        if measure == "call":
            return await self.calls()
        if measure == "search":
            return self.search()
        return await self.hop()

    async def mount(self) -> dict[str, float]:
        from mcpmount import RegistryConfig, StdioServer, open_registry

        spec = StdioServer(command=self.echo[0], args=self.echo[1:])
        config = RegistryConfig.from_servers({f"s{i}": spec for i in range(self.args.servers)})
        began, cpu = time.perf_counter(), time.process_time()
        async with open_registry(config) as registry:
            took, cpu = time.perf_counter() - began, time.process_time() - cpu
            assert len(registry.mounted_tools()) == self.args.servers
        return {"mount": took, "mount cpu": cpu}

    async def calls(self) -> dict[str, float]:
        times: list[float] = []
        cpu = time.process_time()
        for _ in range(self.args.calls):
            began = time.perf_counter()
            result = await self.registry.call("s0__echo", {"text": "x"})
            times.append(time.perf_counter() - began)
            assert not result.is_error
        cpu = (time.process_time() - cpu) / self.args.calls
        return {"call": statistics.median(times), "call cpu": cpu}

    def search(self) -> dict[str, float]:
        from mcpmount.search import call_tool_search
        from search_eval.eval_data import QUERIES

        times: list[float] = []
        cpu: list[float] = []
        for query in QUERIES:
            began, began_cpu = time.perf_counter(), time.thread_time()
            call_tool_search(self.index, {"query": query.text})
            cpu.append(time.thread_time() - began_cpu)
            times.append(time.perf_counter() - began)
        return {"search": statistics.median(times), "search cpu": statistics.median(cpu)}

    async def hop(self) -> dict[str, float]:
        """The p50 of a call via serve and of the direct call, in alternating blocks, and
        the CPU a call of the serve process (and of the direct side's server: a control)."""
        sides: dict[str, list[float]] = {"direct": [], "serve": []}
        cpu = {"direct": 0.0, "serve": 0.0}
        order = [
            ("direct", self.direct, "echo", "echo"),
            ("serve", self.served, "e__echo", "serve"),
        ]
        for block in range(max(1, self.args.hop_calls // BLOCK)):
            for side, client, tool, server in order if block % 2 == 0 else reversed(order):
                before = cpu_seconds(self.pids[server])
                for _ in range(BLOCK):
                    began = time.perf_counter()
                    await client.call_tool(tool, {"text": "hello"})
                    sides[side].append(time.perf_counter() - began)
                cpu[side] += cpu_seconds(self.pids[server]) - before
        figures = {side: statistics.median(times) for side, times in sides.items()}
        calls = len(sides["serve"])
        figures |= {f"{side} cpu": seconds / calls for side, seconds in cpu.items()}
        return figures

    @contextlib.asynccontextmanager
    async def opened(self) -> AsyncGenerator[None]:
        from mcp import Client

        from mcpmount import RegistryConfig, StdioServer, open_registry
        from mcpmount.search import SearchIndex
        from search_eval.eval_data import eval_corpus

        self.index = SearchIndex()
        self.index.add(eval_corpus(self.args.tools))
        self.index.search("warm up")  # builds lazily: not measured
        config = self.workdir / "serve.toml"
        command, script = (json.dumps(word) for word in self.echo)
        config.write_text(f"[servers.e]\ncommand = {command}\nargs = [{script}]\n")
        serve = [sys.executable, "-m", "mcpmount", "serve", str(config), "--transport", "http"]
        serve += ["--port", "0", "--portfile"]
        echo_http = [*self.echo, "--http", "--portfile"]
        spec = StdioServer(command=self.echo[0], args=self.echo[1:])
        with (
            self.started([*echo_http, str(self.workdir / "echo.port")]) as direct,
            self.started([*serve, str(self.workdir / "serve.port")]) as served,
        ):
            async with (
                open_registry(RegistryConfig.from_servers({"s0": spec})) as registry,
                Client(direct) as self.direct,
                Client(served) as self.served,
            ):
                self.registry = registry
                with anyio.fail_after(ASK_TIMEOUT):
                    while "e__echo" not in [t.name for t in (await self.served.list_tools()).tools]:
                        await anyio.sleep(0.05)
                for measure in ("call", "hop"):  # warm up: not measured
                    await self.figure(measure)
                yield

    @contextlib.contextmanager
    def started(self, argv: list[str]) -> Generator[str]:
        """Run an HTTP server whose last argument is its portfile; yield its ``/mcp`` URL."""
        portfile = Path(argv[-1])
        with (
            (self.workdir / f"{portfile.stem}.log").open("w") as log,
            started(argv, portfile, log) as url,
        ):
            mine = descendants(os.getpid())  # children first, and whatever they started
            named = (pid for pid in mine if str(portfile).encode() in cmdline(pid))
            self.pids[portfile.stem] = next(named)
            yield url


def cmdline(pid: int) -> bytes:
    with contextlib.suppress(OSError):
        return Path(f"/proc/{pid}/cmdline").read_bytes()
    return b""


def child_run(args: argparse.Namespace) -> None:
    """Check that mcpmount comes from the tree asked for, then answer questions."""
    import mcpmount

    expected = Path(os.environ["PYTHONPATH"].split(os.pathsep)[0]).resolve()
    if not Path(mcpmount.__file__).resolve().is_relative_to(expected):
        raise SystemExit(f"mcpmount came from {mcpmount.__file__}, not {expected}")
    anyio.run(child_main, args)


async def child_main(args: argparse.Namespace) -> None:
    """Answer one JSON line per question line on stdin until ``quit`` or end of input."""
    import mcpmount

    answers = os.fdopen(os.dup(1), "w", buffering=1)
    os.dup2(2, 1)  # whatever else prints goes to the log, never into the answers
    child = Child(args, Path(args.workdir))
    async with child.opened():
        answers.write(json.dumps({"ready": mcpmount.__file__}) + "\n")
        while (question := (await anyio.to_thread.run_sync(sys.stdin.readline)).strip()) in ASKED:
            answers.write(json.dumps({"figure": await child.figure(question)}) + "\n")


# -- the parent: two children, a report ------------------------------------------------------


class Side:
    """One tree's child process and the figures it gave, per measure."""

    def __init__(self, name: str, process: Process, log: Path) -> None:
        self.name = name
        self.process = process
        self.log = log
        assert process.stdout is not None
        self.answers = BufferedByteReceiveStream(process.stdout)
        self.figures: dict[str, list[float]] = {row: [] for row in ROWS}

    async def answer(self) -> dict[str, Any]:
        try:
            with anyio.fail_after(ASK_TIMEOUT):
                line = await self.answers.receive_until(b"\n", 1 << 20)
        except (TimeoutError, anyio.EndOfStream, anyio.IncompleteRead) as exc:
            tail = self.log.read_text()[-3000:] if self.log.exists() else ""
            raise RuntimeError(f"the {self.name} tree's child failed ({exc!r}):\n{tail}") from exc
        return json.loads(line)

    async def ask(self, measure: str) -> None:
        assert self.process.stdin is not None
        await self.process.stdin.send(measure.encode() + b"\n")
        figures: dict[str, float] = (await self.answer())["figure"]
        if measure == "serve":
            figures["hop"] = figures["serve"] - figures["direct"]
            figures["hop x"] = figures["serve"] / figures["direct"]
            figures["hop cpu x"] = figures["serve cpu"] / figures["direct cpu"]
        for row, seconds in figures.items():
            self.figures[row].append(seconds)


@contextlib.asynccontextmanager
async def side(name: str, src: Path, tmp: Path, args: argparse.Namespace) -> AsyncGenerator[Side]:
    workdir = tmp / name
    workdir.mkdir()
    argv = [sys.executable, str(SCRIPT), "--child", "--workdir", str(workdir)]
    argv += ["--echo", str(tmp / ECHO.name), "--tools", str(args.tools)]
    argv += ["--servers", str(args.servers), "--calls", str(args.calls)]
    argv += ["--hop-calls", str(args.hop_calls)]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(src), str(ROOT / "tests")])}
    log = workdir / "child.log"
    with log.open("w") as stderr:
        process = await anyio.open_process(argv, env=env, stderr=stderr)
    async with process:
        try:
            ready = Side(name, process, log)
            await ready.answer()
            yield ready
        finally:
            with anyio.CancelScope(shield=True):
                assert process.stdin is not None
                with contextlib.suppress(anyio.BrokenResourceError, anyio.ClosedResourceError):
                    await process.stdin.send(b"quit\n")
                with anyio.move_on_after(60):
                    await process.wait()
                if process.returncode is None:
                    process.kill()
                    await process.wait()


async def measure_all(old: Path, new: Path, tmp: Path, args: argparse.Namespace) -> list[Side]:
    deadline = time.monotonic() + args.max_seconds
    async with side("old", old, tmp, args) as before, side("new", new, tmp, args) as after:
        for round_ in range(args.rounds):
            if round_ and time.monotonic() > deadline:
                print(f"stopped after {round_} rounds: --max-seconds", file=sys.stderr)
                break
            for measure in ASKED:
                for one in (before, after) if round_ % 2 == 0 else (after, before):
                    await one.ask(measure)
        return [before, after]


def rows(before: Side, after: Side) -> dict[str, dict[str, float]]:
    """Per measure: each side's median (ms, or x for `FACTORS`), the median new/old ratio
    and its range."""
    table: dict[str, dict[str, float]] = {}
    for measure in ROWS:
        old, new = before.figures[measure], after.figures[measure]
        ratios = sorted(b / a for a, b in zip(old, new, strict=True) if a > 0)
        scale = 1 if measure in FACTORS else 1e3
        table[measure] = {
            "old": statistics.median(old) * scale,
            "new": statistics.median(new) * scale,
            "ratio": statistics.median(ratios) if ratios else float("nan"),
            "low": ratios[0] if ratios else float("nan"),
            "high": ratios[-1] if ratios else float("nan"),
            "rounds": len(old),
        }
    return table


def leftovers(tmp: Path) -> list[int]:
    """Every live process whose command line names the scratch folder (this run's)."""
    found: list[int] = []
    for entry in Path("/proc").glob("[0-9]*"):
        pid = int(entry.name)
        if str(tmp).encode() in cmdline(pid) and pid != os.getpid():
            found.append(pid)
    return found


def git(*argv: str) -> None:
    subprocess.run(["git", "-C", str(ROOT), *argv], check=True, capture_output=True, timeout=120)


def run(args: argparse.Namespace) -> int:
    tmp = Path(tempfile.mkdtemp(prefix="house-ratios-"))
    old = tmp / "old-tree"
    shutil.copy(ECHO, tmp / ECHO.name)  # every server's command line names `tmp`
    load = os.getloadavg()[0]
    began = time.monotonic()
    try:
        git("worktree", "add", "--detach", str(old), args.old)
        before, after = anyio.run(measure_all, old / "src", ROOT / "src", tmp, args)
    finally:
        stray = leftovers(tmp)
        for pid in stray:
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGKILL)
        with contextlib.suppress(subprocess.SubprocessError):
            git("worktree", "remove", "--force", str(old))
        git("worktree", "prune")
        shutil.rmtree(tmp, ignore_errors=True)
    table = rows(before, after)
    if args.json:
        print(json.dumps({"old": args.old, "load": load, "rows": table, "leftovers": stray}))
    else:
        rounds, took = table["mount"]["rounds"], time.monotonic() - began
        print(f"this tree against {args.old}: {rounds:.0f} rounds in {took:.0f} s; load average")
        print(f"{load:.2f} on {os.cpu_count()} CPUs at the start. Wall times are p50s but mount's.")
        print(f"{'measure':10} {'old':>9} {'new':>9}    {'new/old':>8}  rounds' range")
        for measure, row in table.items():
            unit = "x" if measure in FACTORS else "ms"
            print(
                f"{measure:10} {row['old']:9.3f} {row['new']:9.3f} {unit:2} {row['ratio']:8.3f}"
                f"  {row['low']:.3f}-{row['high']:.3f}  {NOTES.get(measure, '')}"
            )
        if stray:
            print(f"killed {len(stray)} processes left over: {stray}")
    return 1 if stray else 0


def parse(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--old", default="02c1c27", help="the older tree's commit (02c1c27)")
    parser.add_argument("--rounds", type=int, default=9, help="rounds of the four figures (9)")
    parser.add_argument("--servers", type=int, default=10, help="servers mounted at once (10)")
    parser.add_argument("--calls", type=int, default=200, help="registry calls a round (200)")
    parser.add_argument("--hop-calls", type=int, default=100, help="serve calls a round (100)")
    parser.add_argument("--tools", type=int, default=10_000, help="tools searched (10,000)")
    parser.add_argument("--max-seconds", type=float, default=900, help="no round after (900)")
    parser.add_argument("--json", action="store_true", help="print the figures as JSON")
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--workdir", help=argparse.SUPPRESS)
    parser.add_argument("--echo", type=Path, default=ECHO, help=argparse.SUPPRESS)
    return parser.parse_args(argv)


if __name__ == "__main__":
    arguments = parse()
    if arguments.child:
        child_run(arguments)
    else:
        sys.exit(run(arguments))
