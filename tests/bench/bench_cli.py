"""The one-shot commands as a user runs them: ``--help``, ``call`` and ``tools``.

Eight stdio fixture servers (``tests/servers/fixture_server.py``, each with its own
``--name``), one of them slow to start (``--startup-delay 3``), in one config whose
manifests are cached in a temporary directory. Each command is run as a subprocess,
``python -m mcpmount ...``, five times (the median is the figure):

1. ``mcpmount --help`` against ``python -c pass`` (the interpreter's own start);
2. ``mcpmount call fast0__echo``: a fast server's tool;
3. ``mcpmount tools`` once the manifests are cached (a priming ``tools`` writes them).

With ``--before SRC`` every command runs a second time with ``PYTHONPATH=SRC`` (another
checkout's ``src``, e.g. ``git archive main src | tar -x -C /tmp/before``) and the ratios
after/before are printed. Run it from the repository root:

    python tests/bench/bench_cli.py [--before /tmp/before/src]   # about a minute

``BENCH_CPU=1`` reports CPU seconds (the command's and its servers') instead of wall
time; ``BENCH_REPEATS=N`` runs each command N times.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

FIXTURE = Path(__file__).parents[1] / "servers" / "fixture_server.py"
SRC = Path(__file__).parents[2] / "src"
SERVERS = 8
SLOW_START = 3.0
"""Seconds the slow server sleeps before it answers."""
REPEATS = int(os.environ.get("BENCH_REPEATS", "5"))


def bench_config(folder: Path) -> Path:
    tables = [f'[registry]\ncache_dir = "{folder / "cache"}"\n']
    for index in range(SERVERS):
        slow = index == SERVERS - 1
        name = "slow" if slow else f"fast{index}"
        args = [str(FIXTURE), "--name", name]
        if slow:
            args += ["--startup-delay", str(SLOW_START)]
        tables.append(
            f'[servers.{name}]\ncommand = "{sys.executable}"\nargs = {json.dumps(args)}\n'
        )
    path = folder / "mcpmount.toml"
    path.write_text("\n".join(tables))
    return path


def seconds(command: list[str], src: Path) -> float:
    """The median wall time of ``command`` over `REPEATS` runs (each must succeed); with
    ``BENCH_CPU=1`` the CPU time of the command and its servers instead (a loaded
    machine's wall times measure its load)."""
    env = os.environ | {"PYTHONPATH": str(src)}
    cpu = os.environ.get("BENCH_CPU") == "1"
    times: list[float] = []
    for _ in range(REPEATS):
        began = time.perf_counter()
        used = resource.getrusage(resource.RUSAGE_CHILDREN)
        subprocess.run(command, env=env, check=True, capture_output=True, timeout=300)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        spent = after.ru_utime + after.ru_stime - used.ru_utime - used.ru_stime
        times.append(spent if cpu else time.perf_counter() - began)
    return statistics.median(times)


def measure(src: Path, config: Path) -> dict[str, float]:
    mcpmount = [sys.executable, "-m", "mcpmount"]
    subprocess.run(  # writes the manifests (where this version caches for `tools`)
        [*mcpmount, "check", "--refresh-cache", str(config)],
        env=os.environ | {"PYTHONPATH": str(src)},
        check=True,
        capture_output=True,
        timeout=120,
    )
    return {
        "python -c pass": seconds([sys.executable, "-c", "pass"], src),
        "mcpmount --help": seconds([*mcpmount, "--help"], src),
        "call fast0__echo": seconds(
            [*mcpmount, "call", "fast0__echo", '{"text": "hi"}', str(config)], src
        ),
        "tools (cached)": seconds([*mcpmount, "tools", str(config)], src),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description="time mcpmount --help, call and tools")
    parser.add_argument("--before", type=Path, help="the src folder of the version to compare")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        config = bench_config(Path(folder))
        after = measure(SRC, config)
        before = measure(args.before, config) if args.before else None
    print(f"{SERVERS} servers, one starting in {SLOW_START:g} s; medians of {REPEATS} runs")
    for name, value in after.items():
        line = f"  {name:18} {value * 1000:8.0f} ms"
        if before is not None:
            ratio = value / before[name]
            line += f"   before {before[name] * 1000:8.0f} ms   after/before {ratio:.2f}"
        print(line)
    interpreter = after["python -c pass"]
    print(f"  --help over the interpreter's start: {after['mcpmount --help'] - interpreter:.3f} s")


if __name__ == "__main__":
    main()
