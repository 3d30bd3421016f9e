"""Where the test suite's CPU goes: a pytest plugin that logs each test's CPU, and a report.

Nearly all of the suite's time is CPU, most of it in the processes the tests start. The
plugin writes one line per test to ``$SUITE_CPU_LOG``: its node id, the CPU of the pytest
process, the CPU of the children reaped meanwhile (``getrusage``; a module fixture's
servers count where they are reaped) and its wall time. Run it from the repository root:

    SUITE_CPU_LOG=/tmp/cpu.tsv PYTHONPATH=tests/bench pytest -p suite_cpu
    python tests/bench/suite_cpu.py /tmp/cpu.tsv            # totals, by room and by file
    python tests/bench/suite_cpu.py /tmp/old.tsv /tmp/new.tsv  # two runs over their common tests
"""

from __future__ import annotations

import os
import resource
import sys
import time
from collections import defaultdict
from collections.abc import Generator
from typing import TextIO

import pytest

_log: TextIO | None = None


def _now() -> tuple[float, float, float]:
    own = resource.getrusage(resource.RUSAGE_SELF)
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (
        own.ru_utime + own.ru_stime,
        children.ru_utime + children.ru_stime,
        time.monotonic(),
    )


def pytest_configure(config: pytest.Config) -> None:
    global _log
    _log = open(os.environ.get("SUITE_CPU_LOG", "suite-cpu.tsv"), "a", buffering=1)  # noqa: SIM115


def pytest_unconfigure(config: pytest.Config) -> None:
    if _log is not None:
        _log.close()


@pytest.hookimpl(wrapper=True)
def pytest_runtest_protocol(item: pytest.Item, nextitem: pytest.Item | None) -> Generator[None]:
    before = _now()
    try:
        yield
    finally:
        after = _now()
        own, children, wall = (b - a for a, b in zip(before, after, strict=True))
        if _log is not None:
            _log.write(f"{item.nodeid}\t{own:.3f}\t{children:.3f}\t{wall:.3f}\n")


Row = tuple[float, float, float]


def read(path: str) -> dict[str, Row]:
    """The log at ``path``: node id to (own CPU, children's CPU, wall), in seconds."""
    rows: dict[str, Row] = {}
    with open(path) as log:
        for line in log:
            fields = line.rstrip("\n").split("\t")
            if len(fields) == 4:
                rows[fields[0]] = (float(fields[1]), float(fields[2]), float(fields[3]))
    return rows


def _file(nodeid: str) -> str:
    return nodeid.split("::")[0]


def _room(nodeid: str) -> str:
    parts = _file(nodeid).split("/")
    return parts[1] if len(parts) > 2 else parts[-1]


def report(rows: dict[str, Row]) -> None:
    own, children, wall = (sum(row[i] for row in rows.values()) / 60 for i in range(3))
    print(f"{len(rows)} tests: pytest {own:.1f} CPU-min, children {children:.1f} CPU-min,")
    print(f"  wall {wall:.1f} min")
    for title, key in (("by room", _room), ("by file (top 25)", _file)):
        groups: defaultdict[str, list[float]] = defaultdict(lambda: [0.0, 0.0, 0.0, 0.0])
        for nodeid, row in rows.items():
            group = groups[key(nodeid)]
            group[0] += 1
            for i in range(3):
                group[i + 1] += row[i]
        print(title + ": CPU s (pytest + children), wall s, tests")
        ranked = sorted(groups.items(), key=lambda item: -(item[1][1] + item[1][2]))
        for name, (count, g_own, g_children, g_wall) in ranked[:25]:
            print(f"  {g_own + g_children:7.1f} {g_wall:7.1f} {count:5.0f}  {name}")


def compare(old: dict[str, Row], new: dict[str, Row]) -> None:
    common = [nodeid for nodeid in old if nodeid in new]
    before, after = (
        [sum(rows[n][i] for n in common) / 60 for i in range(3)] for rows in (old, new)
    )
    print(f"{len(common)} tests in both runs, minutes:")
    for i, what in enumerate(("pytest CPU", "children CPU", "wall")):
        print(f"  {what:12} {before[i]:7.1f} -> {after[i]:7.1f}  ({after[i] / before[i]:.2f}x)")
    cpu_before, cpu_after = before[0] + before[1], after[0] + after[1]
    print(f"  {'CPU':12} {cpu_before:7.1f} -> {cpu_after:7.1f}  ({cpu_after / cpu_before:.2f}x)")


if __name__ == "__main__":
    if len(sys.argv) == 2:
        report(read(sys.argv[1]))
    elif len(sys.argv) == 3:
        compare(read(sys.argv[1]), read(sys.argv[2]))
    else:
        sys.exit(__doc__)
