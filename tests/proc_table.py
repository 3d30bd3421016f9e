"""This machine's processes and this process's open fds, as /proc shows them: what the
leak checker (leaks.py) compares before and after a test. Linux only.

A process is named by its pid and start time (`ProcInfo`), so a reused pid is not taken
for the process that had it.
"""

from __future__ import annotations

import contextlib
import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Final

__all__ = ["ProcInfo", "descendants", "open_fds", "process_table"]


@dataclass(frozen=True)
class ProcInfo:
    pid: int
    ppid: int
    pgid: int
    sid: int
    state: str
    start: int  # start time in clock ticks: (pid, start) names a process despite pid reuse

    @property
    def zombie(self) -> bool:
        return self.state in "ZX"

    def cmdline(self) -> str:
        try:
            raw = Path(f"/proc/{self.pid}/cmdline").read_bytes()
        except OSError:
            return "?"
        return raw.replace(b"\0", b" ").decode(errors="replace").strip() or "?"

    def describe(self) -> str:
        return (
            f"pid={self.pid} ppid={self.ppid} pgid={self.pgid} sid={self.sid} "
            f"state={self.state} cmd={self.cmdline()!r}"
        )


def _read_stat(pid: str) -> ProcInfo | None:
    try:
        raw = Path(f"/proc/{pid}/stat").read_text()
    except OSError:  # gone between listdir and read
        return None
    # "pid (comm) state ppid pgrp session ..." and comm may contain spaces or parentheses.
    rest = raw[raw.rindex(")") + 2 :].split()
    return ProcInfo(int(pid), int(rest[1]), int(rest[2]), int(rest[3]), rest[0], int(rest[19]))


def process_table() -> dict[int, ProcInfo]:
    """Every process visible in /proc, by pid."""
    table: dict[int, ProcInfo] = {}
    for name in os.listdir("/proc"):
        if name.isdigit() and (info := _read_stat(name)) is not None:
            table[info.pid] = info
    return table


def _descendants(table: dict[int, ProcInfo], root: int) -> list[ProcInfo]:
    children: dict[int, list[ProcInfo]] = {}
    for info in table.values():
        children.setdefault(info.ppid, []).append(info)
    found: list[ProcInfo] = []
    stack = [root]
    while stack:
        for child in children.get(stack.pop(), []):
            found.append(child)
            stack.append(child.pid)
    return found


_CHILDREN_LISTED: Final = Path(f"/proc/self/task/{os.getpid()}/children").exists()
"""Whether the kernel lists each thread's children (``CONFIG_PROC_CHILDREN``)."""


def descendants(root: int) -> list[ProcInfo]:
    """`root`'s descendants, read down from `root` through each thread's children list.

    It reads only the descendants' files, not every process's: a sample costs a third of
    a scan of /proc (`process_table`), which it falls back to where the kernel has no
    children lists.
    """
    if not _CHILDREN_LISTED:
        return _descendants(process_table(), root)
    found: list[ProcInfo] = []
    stack, seen = [root], set[bytes]()
    while stack:
        pid = stack.pop()
        try:
            threads = os.listdir(f"/proc/{pid}/task")
        except OSError:  # gone meanwhile
            continue
        for tid in threads:
            try:
                with open(f"/proc/{pid}/task/{tid}/children", "rb") as listed:
                    pids = listed.read().split()
            except OSError:
                continue
            for child in pids:
                if child not in seen and (info := _read_stat(child.decode())) is not None:
                    seen.add(child)
                    found.append(info)
                    stack.append(info.pid)
    return found


_SAMPLED: Final = re.compile(r"/proc(/\d+/(stat|fd|task(/\d+/children)?))?")
"""What the sampler thread opens for a moment (`descendants`, or `process_table` where the
kernel lists no children), while a checker looks at its fds."""


def open_fds() -> dict[int, str]:
    """This process's open fds and their targets ("pipe:[123]", "socket:[456]", a path).

    Leaves out `/proc` being read by a checker's sampler: with a module's checker
    around each test's (`leak_checked`), one samples while the other checks.
    """
    fds: dict[int, str] = {}
    for name in os.listdir("/proc/self/fd"):
        with contextlib.suppress(OSError):  # the fd listdir itself used is already closed
            target = os.readlink(f"/proc/self/fd/{name}")
            if not _SAMPLED.fullmatch(target):
                fds[int(name)] = target
    return fds
