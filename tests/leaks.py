"""goleak-style leak checks for tests that spawn servers: processes, fds, threads, asyncio tasks.

A `LeakChecker` takes a baseline, samples our descendants every 20 ms while the test runs
(recording their process groups and sessions, so a grandchild reparented to init or a helper that
called setsid is still found), and afterwards retries until everything is gone or the deadline
passes. Leaked processes are SIGKILLed after being reported, so one failing test cannot poison
the next. Linux only (reads /proc, by proc_table.py).
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
import itertools
import os
import signal
import threading
import time
from collections.abc import AsyncGenerator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import Final

from proc_table import ProcInfo, descendants, open_fds, process_table

__all__ = [
    "LeakChecker",
    "LeakError",
    "assert_no_extra_tasks",
    "leak_checked",
    "record_group",
    "task_snapshot",
]

SAMPLE_INTERVAL = 0.02
# Pool threads that outlive a test by design (they idle out or die with the event loop).
_POOL_THREAD_PREFIXES = ("AnyIO worker thread", "asyncio_", "ThreadPoolExecutor", "waitpid-")


def _is_harness_task(task: asyncio.Task[object]) -> bool:
    """Tasks that belong to the test machinery, not to the code under test."""
    coro = task.get_coro()
    name: str = getattr(coro, "__qualname__", "")
    code = getattr(coro, "cr_code", None)
    filename: str = code.co_filename if code is not None else ""
    # anyio's pytest runner drives each fixture step and test through a fresh wrapper task.
    if name == "TestRunner._call_in_runner_task":
        return True
    # sse_starlette starts one shutdown watcher per event loop on the first SSE response; it
    # polls every 0.5 s and may outlive the uvicorn server it watched (sse_starlette issue #211).
    return name == "_shutdown_watcher" and "sse_starlette" in filename


class LeakError(AssertionError):
    """Something a test started is still alive or open after it finished."""


def _threads() -> dict[int, str]:
    return {t.ident: t.name for t in threading.enumerate() if t.ident is not None}


def task_snapshot() -> set[asyncio.Task[object]]:
    """The running loop's tasks; pass it to `assert_no_extra_tasks` at the end of a test."""
    return asyncio.all_tasks()


async def assert_no_extra_tasks(
    baseline: set[asyncio.Task[object]], *, timeout: float = 2.0, cancel: bool = True
) -> None:
    """Fail if tasks beyond `baseline` (and the caller) are still pending after `timeout`."""
    deadline = time.monotonic() + timeout
    while True:
        extra = {
            t
            for t in asyncio.all_tasks() - baseline - {asyncio.current_task()}
            if not _is_harness_task(t)
        }
        if not extra:
            return
        if time.monotonic() >= deadline:
            break
        await asyncio.sleep(SAMPLE_INTERVAL)
    if cancel:
        for task in extra:
            task.cancel()
    names = "\n  ".join(sorted(f"{t.get_name()}: {t.get_coro()!r}" for t in extra))
    raise LeakError(f"{len(extra)} asyncio task(s) still pending:\n  {names}")


_active: list[LeakChecker] = []


def record_group(pgid: int) -> None:
    """Tell every active checker that `pgid` (a process group or session id) belongs to the test."""
    for checker in _active:
        checker.record_group(pgid)


class _Sampler:
    """One thread that samples our descendants for every active checker.

    A module's checker and its tests' checkers are active at once; one sample serves them
    all. The thread runs while any checker is active.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._thread: threading.Thread | None = None
        self._stop = threading.Event()

    def add(self, checker: LeakChecker) -> None:
        with self._lock:
            _active.append(checker)
            if self._thread is None:
                self._stop = threading.Event()
                self._thread = threading.Thread(
                    target=self._run, args=(self._stop,), name="leak-sampler", daemon=True
                )
                self._thread.start()

    def remove(self, checker: LeakChecker) -> None:
        thread = None
        with self._lock:
            if checker in _active:
                _active.remove(checker)
            if not _active and self._thread is not None:
                thread, self._thread = self._thread, None
                self._stop.set()
        if thread is not None:
            thread.join()

    @staticmethod
    def _run(stop: threading.Event) -> None:
        while not stop.wait(SAMPLE_INTERVAL):
            found = descendants(os.getpid())
            for checker in _active.copy():  # another thread adds and removes
                checker.saw(found)


_sampler: Final = _Sampler()


@dataclass
class LeakChecker:
    """Baseline at `start()`, sample while running, `check()` (sync) or `acheck()` at the end.

    Also usable as a context manager: `with LeakChecker() as lc: ...` checks on clean exit.
    """

    check_fds: bool = True
    check_threads: bool = True
    groups: set[int] = field(default_factory=set[int])
    _base_fds: dict[int, str] = field(default_factory=dict[int, str])
    _base_threads: dict[int, str] = field(default_factory=dict[int, str])
    _base_procs: set[tuple[int, int]] = field(default_factory=set[tuple[int, int]])
    _base_groups: set[int] = field(default_factory=set[int])
    _seen: dict[tuple[int, int], ProcInfo] = field(default_factory=dict[tuple[int, int], ProcInfo])
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def start(self) -> LeakChecker:
        # No collection first: garbage of an earlier test that holds an fd is in the
        # baseline, and whatever it closes later cannot be reported as new.
        self._base_fds = open_fds()
        self._base_threads = _threads()
        for info in descendants(os.getpid()):
            self._base_procs.add((info.pid, info.start))
            self._base_groups.update((info.pgid, info.sid))
        self._base_groups.update((os.getpgrp(), os.getsid(0)))
        _sampler.add(self)
        return self

    def record_group(self, pgid: int) -> None:
        with self._lock:
            self.groups.add(pgid)

    def sample(self) -> None:
        """Record our current descendants and their groups (the sampler does it every
        `SAMPLE_INTERVAL` seconds)."""
        self.saw(descendants(os.getpid()))

    def saw(self, found: list[ProcInfo]) -> None:
        """Record ``found`` (our descendants) and their groups."""
        with self._lock:
            for info in found:
                key = (info.pid, info.start)
                if key not in self._base_procs:
                    self._seen[key] = info
                    self.groups.update({info.pgid, info.sid} - self._base_groups)

    def stop(self) -> None:
        _sampler.remove(self)
        self.sample()

    # --- the checks -----------------------------------------------------------------------

    def problems(self) -> tuple[list[str], list[ProcInfo]]:
        """One pass: human-readable problems, plus live processes to kill."""
        table, me = process_table(), os.getpid()
        with self._lock:
            groups, seen = set(self.groups), dict(self._seen)
        out: list[str] = []
        live: list[ProcInfo] = []
        for info in table.values():
            if info.pid == me or info.zombie:
                continue
            in_group = info.pgid in groups or info.sid in groups
            if in_group or (info.pid, info.start) in seen:
                live.append(info)
        out += [f"process alive: {p.describe()}" for p in live]
        out += [
            f"zombie child (never waited for): {p.describe()}"
            for p in table.values()
            if p.ppid == me and p.zombie and (p.pid, p.start) not in self._base_procs
        ]
        if self.check_fds:
            base = self._base_fds
            new = {fd: t for fd, t in open_fds().items() if base.get(fd) != t}
            out += [f"fd {fd} still open -> {t}" for fd, t in sorted(new.items())]
        if self.check_threads:
            out += [
                f"thread still running: {name!r}"
                for ident, name in _threads().items()
                if ident not in self._base_threads
                and name != "leak-sampler"
                and not name.startswith(_POOL_THREAD_PREFIXES)
            ]
        return out, live

    def _finish(self, found: list[str], live: list[ProcInfo]) -> None:
        if not found:
            return
        kill_and_wait(live)
        raise LeakError("leaked after the test:\n  " + "\n  ".join(found))

    def check(self, timeout: float = 2.0) -> None:
        """Stop sampling; retry until clean or `timeout`, then kill leftovers and raise.

        A clean end is passed without a garbage collection (which costs 0.1-0.3 s in a
        process holding the SDK); the first retry collects, so an fd held only by garbage
        is closed before it could be reported.
        """
        self.stop()
        deadline = time.monotonic() + timeout
        found, live = self.problems()
        for attempt in itertools.count():
            if not found or time.monotonic() >= deadline:
                break
            if attempt:
                time.sleep(SAMPLE_INTERVAL * 2)
            gc.collect()
            found, live = self.problems()
        self._finish(found, live)

    async def acheck(self, timeout: float = 2.0) -> None:
        """Like `check`, but lets the event loop run (close transports, reap) between retries."""
        self.stop()
        deadline = time.monotonic() + timeout
        found, live = self.problems()
        for attempt in itertools.count():
            if not found or time.monotonic() >= deadline:
                break
            if attempt:
                await asyncio.sleep(SAMPLE_INTERVAL * 2)
            gc.collect()
            found, live = self.problems()
        self._finish(found, live)

    def __enter__(self) -> LeakChecker:
        return self.start()

    def __exit__(self, exc_type: type[BaseException] | None, *_: object) -> None:
        if exc_type is None:
            self.check()
        else:
            self.stop()


SETTLE: Final = 10.0
"""Seconds `leak_checked` waits for what a block closed to be gone (a process group reaped,
a task done, an fd closed) before it calls it a leak: on a loaded machine that can take
seconds; a clean block is passed at once."""


@asynccontextmanager
async def leak_checked() -> AsyncGenerator[LeakChecker]:
    """A block that fails (on exit) if it left processes, zombies, fds, threads or tasks behind.

    The `no_leaks` fixture runs each test in one; a fixture that several tests share (module
    scope) runs its servers in one too, so what they leaked is found at the module's teardown.
    Both checks run even if the first fails: `acheck` also kills leaked processes so they
    cannot poison later tests.
    """
    tasks = task_snapshot()
    checker = LeakChecker().start()
    try:
        yield checker
    finally:
        checker.stop()
    failures: list[str] = []
    for check in (assert_no_extra_tasks(tasks, timeout=SETTLE), checker.acheck(SETTLE)):
        try:
            await check
        except LeakError as exc:
            failures.append(str(exc))
    if failures:
        raise LeakError("\n".join(failures))


def kill_and_wait(procs: list[ProcInfo]) -> None:
    """SIGKILL `procs` and give them 1 s to die.

    Zombie children are left for their owners (Popen, asyncio) to reap: reaping them here would
    steal the exit status. Later checks ignore them because they are in those checks' baseline.
    """
    for info in procs:
        with contextlib.suppress(OSError):
            os.kill(info.pid, signal.SIGKILL)
    deadline = time.monotonic() + 1.0
    pids = {p.pid for p in procs}
    while time.monotonic() < deadline:
        table = process_table()
        if all(pid not in table or table[pid].zombie for pid in pids):
            break
        time.sleep(SAMPLE_INTERVAL)
