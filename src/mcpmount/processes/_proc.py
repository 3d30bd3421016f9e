"""What ``/proc`` tells of a process group and a leader's descendants (Linux; elsewhere
the callers fall back to signal 0).

Each process is read from ``/proc/<pid>/stat``; a leader's descendants are found through
the kernel's children lists, which costs a few files where a scan of ``/proc`` reads
every process's, with that scan as the fallback where the kernel keeps no lists.
"""

from __future__ import annotations

import os

__all__ = ["escaped_descendants", "has_children", "scan_group", "started_at"]


def scan_group(pgid: int) -> list[int]:
    """Return the live (non-zombie) members of group ``pgid``; ``[pgid]`` without /proc."""
    try:
        entries = os.listdir("/proc")
    except OSError:  # no procfs: the signal probe is all we have
        return [pgid]
    members: list[int] = []
    for entry in entries:
        fields = _proc_stat(entry) if entry.isdigit() else None
        if fields is not None and len(fields) > 2 and fields[0] != b"Z" and int(fields[2]) == pgid:
            members.append(int(entry))
    return members


def _proc_stat(pid: int | str) -> list[bytes] | None:
    """Return the fields of ``/proc/<pid>/stat`` after the command: state ppid pgrp ...

    The command is in parentheses and may hold spaces or parentheses, so the fields start
    after the last ``)``.
    """
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            stat = f.read()
    except OSError:
        return None
    return stat[stat.rfind(b")") + 2 :].split()


def started_at(pid: int) -> int | None:
    """Return the start time of live process ``pid`` (clock ticks), or None if it is gone."""
    fields = _proc_stat(pid)
    if fields is None or len(fields) < 20 or fields[0] == b"Z":
        return None
    return int(fields[19])


def _children(pid: int) -> list[int] | None:
    """Return ``pid``'s children from the kernel's lists; None if it keeps none.

    Reading the descendants' lists costs a few files, where a scan of ``/proc`` reads
    every process's.
    """
    try:
        tasks = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return []  # gone
    children: list[int] = []
    for task in tasks:
        try:
            with open(f"/proc/{pid}/task/{task}/children", "rb") as f:
                children += (int(child) for child in f.read().split())
        except FileNotFoundError:
            if os.path.exists(f"/proc/{pid}/task/{task}"):
                return None  # no CONFIG_PROC_CHILDREN
        except OSError:
            return None
    return children


def has_children(pid: int) -> bool:
    """Whether ``pid`` has child processes (True when the kernel cannot tell us)."""
    try:
        tasks = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return False  # the leader is gone, or there is no /proc to ask
    for task in tasks:
        try:
            with open(f"/proc/{pid}/task/{task}/children", "rb") as f:
                if f.read().strip():
                    return True
        except FileNotFoundError:
            continue  # the thread ended
        except OSError:
            return True  # no CONFIG_PROC_CHILDREN: scan to be sure
    return False


def escaped_descendants(leader: int) -> list[tuple[int, int]]:
    """Return (pid, start time) of the leader's live descendants outside its process group."""
    escaped: list[tuple[int, int]] = []
    stack = [leader]
    while stack:
        children = _children(stack.pop())
        if children is None:
            return _all_escaped(leader)
        for pid in children:
            fields = _proc_stat(pid)
            if fields is not None and len(fields) >= 20:
                stack.append(pid)
                if int(fields[2]) != leader and fields[0] != b"Z":
                    escaped.append((pid, int(fields[19])))
    return escaped


def _all_escaped(leader: int) -> list[tuple[int, int]]:
    """`escaped_descendants` for a kernel without children lists: read every process."""
    try:
        entries = [int(e) for e in os.listdir("/proc") if e.isdigit()]
    except OSError:
        return []
    children: dict[int, list[tuple[int, list[bytes]]]] = {}
    for pid in entries:
        fields = _proc_stat(pid)
        if fields is not None and len(fields) >= 20:
            children.setdefault(int(fields[1]), []).append((pid, fields))
    escaped: list[tuple[int, int]] = []
    stack = [leader]
    while stack:
        for pid, fields in children.get(stack.pop(), []):
            stack.append(pid)
            if int(fields[2]) != leader and fields[0] != b"Z":
                escaped.append((pid, int(fields[19])))
    return escaped
