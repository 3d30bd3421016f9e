"""What the subreaper launcher adds to a stdio server's start and close, and to a helper
program's run, measured in one run against the same without it.

On Linux an unsandboxed server and a ``before_call`` or ``headers_command`` program run
under the launcher (``python -I -S -c``, a child subreaper that ends the daemons they
leave). Measured, alternating the two sides each repetition (without first, then with
first) so a loaded machine slows both alike:

1. mount: ``registry.mount`` of ``tests/bench/echo_server.py`` (spawn, handshake, list);
2. close: closing that server (stdin EOF, the launcher's sweep, the reaping);
3. program: ``run_program`` of ``/bin/true``, what a ``before_call`` adds to each call;
4. program-py: ``run_program`` of a Python program (``python -I -S -c pass``), the
   usual shape of a ``before_call``.

"Without" is today's spawn with the launcher switched off for the measurement. Medians,
the ratio and the milliseconds added are printed. Run it from the repository root:

    python tests/bench/bench_launcher.py            # about a minute on 2 cores
    python tests/bench/bench_launcher.py --runs 5   # quicker, noisier
"""

from __future__ import annotations

import argparse
import contextlib
import logging
import os
import platform
import statistics
import sys
import time
from collections.abc import Awaitable, Callable, Generator
from pathlib import Path

import anyio

import mcpmount.processes._procgroup as procgroup
from mcpmount.config import RegistrySettings, StdioServer
from mcpmount.processes import run_program
from mcpmount.registry import Registry

ECHO = str(Path(__file__).with_name("echo_server.py"))


@contextlib.contextmanager
def launcher(on: bool) -> Generator[None]:
    """Run what is measured with the launcher, or without it (today's spawn)."""
    works = procgroup.launcher_works
    procgroup.launcher_works = works if on else lambda: False
    try:
        yield
    finally:
        procgroup.launcher_works = works


async def time_mount(on: bool) -> tuple[float, float]:
    """Seconds to mount the echo server, and to close it."""
    spec = StdioServer(command=sys.executable, args=[ECHO])
    with launcher(on):
        async with Registry(RegistrySettings()) as registry:
            began = time.perf_counter()
            close = await registry.mount("echo", spec)
            mounted = time.perf_counter()
            await close()
            return mounted - began, time.perf_counter() - mounted


async def time_program(on: bool, argv: list[str]) -> float:
    """Seconds to run ``argv`` to its end as a helper program."""
    with launcher(on):
        began = time.perf_counter()
        await run_program(argv, timeout=10, max_output=100)
        return time.perf_counter() - began


def report(name: str, without: list[float], with_: list[float]) -> None:
    before, after = statistics.median(without) * 1000, statistics.median(with_) * 1000
    print(
        f"{name:<11} without {before:7.1f} ms   with launcher {after:7.1f} ms   "
        f"ratio {after / before:5.2f}   added {after - before:+6.1f} ms"
    )


async def compare(
    runs: int, measure: Callable[[bool], Awaitable[float]]
) -> tuple[list[float], ...]:
    """Run both sides ``runs`` times, alternating which goes first."""
    await measure(False)  # warm the page cache
    await measure(True)
    times: dict[bool, list[float]] = {False: [], True: []}
    for i in range(runs):
        for on in (False, True) if i % 2 == 0 else (True, False):
            times[on].append(await measure(on))
    return times[False], times[True]


async def main(runs: int) -> None:
    logging.basicConfig(level=logging.ERROR)
    print(
        f"# {platform.platform()}, {os.cpu_count()} cores, Python {platform.python_version()}, "
        f"{runs} runs per side (programs: 4x), medians"
    )
    mounts: dict[bool, list[tuple[float, float]]] = {False: [], True: []}

    async def mount(on: bool) -> float:
        mounts[on].append(await time_mount(on))
        return 0.0

    await compare(runs, mount)
    del mounts[False][0], mounts[True][0]  # the warm-up
    report("mount", [m for m, _ in mounts[False]], [m for m, _ in mounts[True]])
    report("close", [c for _, c in mounts[False]], [c for _, c in mounts[True]])
    true = ["/bin/true"]
    report("program", *await compare(runs * 4, lambda on: time_program(on, true)))
    python = [sys.executable, "-I", "-S", "-c", "pass"]
    report("program-py", *await compare(runs * 4, lambda on: time_program(on, python)))


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description="What the launcher adds to a start.")
    parser.add_argument("--runs", type=int, default=15, help="mounts per side (programs: 4x)")
    anyio.run(main, parser.parse_args().runs)
