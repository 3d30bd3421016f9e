"""The stdio wire of `run_stdio`: this process's stdin lines and its stdout, for `stdio_server`.

The SDK reads and writes the standard streams in anyio worker threads: two thread hops
for each message out (write, flush) and one for each line in, which cost a served call
more than everything else in the process together. When a stream is a pipe or a socket
(what every MCP client spawns a server with), it is polled on the event loop instead:

- stdin: wait until readable, then one ``os.read`` (a readable pipe answers at once,
  blocking mode or not: nothing else reads our stdin); a cancel interrupts the wait.
- stdout: the wire moves to a private descriptor, non-blocking, and fd 1 points at
  stderr meanwhile (as the SDK's own claim does), so stray output of this process or its
  children misses the wire. Both are restored on leaving.

Anything else (a terminal, a file, the null device) keeps the thread: stdin is then read
by a daemon thread (`_ThreadedLines`), stdout written by the SDK.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import stat
import sys
import threading
from collections.abc import AsyncGenerator, Generator
from typing import Final, cast

import anyio
import anyio.from_thread
import anyio.lowlevel

from mcpmount.serve.front import screen

__all__ = ["stdio_wire"]

_CHUNK: Final = 65536


@contextlib.asynccontextmanager
async def stdio_wire() -> AsyncGenerator[tuple[anyio.AsyncFile[str], anyio.AsyncFile[str] | None]]:
    """Yield stdin's lines (screened) and, when stdout is a pipe or socket, its writer
    (None: the SDK's ``stdio_server`` claims and writes it)."""
    stdin, stdout = sys.stdin.fileno(), sys.stdout.fileno()
    lines: _PolledLines | _ThreadedLines = (
        _PolledLines(stdin) if _pollable(stdin) else _ThreadedLines(stdin)
    )
    with contextlib.ExitStack() as stack:
        writer = stack.enter_context(_claimed(stdout)) if _pollable(stdout) else None
        try:
            yield cast("anyio.AsyncFile[str]", lines), cast("anyio.AsyncFile[str] | None", writer)
        finally:
            lines.close()


def _pollable(fd: int) -> bool:
    """Whether ``fd`` is a pipe or a socket (the loop can wait on it; it is not shared)."""
    try:
        mode = os.fstat(fd).st_mode
    except OSError:
        return False
    return stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode)


class _Lines:
    """Complete lines out of the chunks read; each byte is scanned for a newline once."""

    def __init__(self) -> None:
        self._buffer = bytearray()
        self._scanned = 0

    def next_line(self) -> str | None:
        end = self._buffer.find(b"\n", self._scanned)
        if end < 0:
            self._scanned = len(self._buffer)
            return None
        text = self._buffer[: end + 1].decode("utf-8", errors="replace")
        del self._buffer[: end + 1]
        self._scanned = 0
        return screen(text)

    def rest(self) -> str | None:
        """What is left after the last newline, at the end of the stream."""
        if not self._buffer:
            return None
        text = self._buffer.decode("utf-8", errors="replace")
        self._buffer.clear()
        return screen(text)


class _PolledLines(_Lines):
    """Lines of a pipe or socket, read on the event loop."""

    def __init__(self, fd: int) -> None:
        super().__init__()
        self._fd = fd
        self._ended = False

    def __aiter__(self) -> _PolledLines:
        return self

    async def __anext__(self) -> str:
        while (line := self.next_line()) is None:
            if self._ended:
                raise StopAsyncIteration
            await anyio.wait_readable(self._fd)
            try:
                chunk = os.read(self._fd, _CHUNK)
            except OSError:
                chunk = b""  # the wire failed: the session ends, as at its end
            if not chunk:
                self._ended = True
                if (last := self.rest()) is not None:
                    return last
            else:
                self._buffer += chunk
        return line

    def close(self) -> None:
        self._ended = True


class _ThreadedLines(_Lines):
    """Lines of stdin, read by a daemon thread (a terminal or a file: nothing to poll).

    The SDK reads stdin in an anyio worker thread, which a cancel cannot interrupt: a
    SIGTERM while the client keeps stdin open would hang the shutdown until the next
    line. A daemon thread feeding a stream can be left behind, and never delays exit.
    """

    def __init__(self, fd: int) -> None:
        super().__init__()
        self._send, self._receive = anyio.create_memory_object_stream[str](0)
        self._fd = fd
        token = anyio.lowlevel.current_token()
        thread = threading.Thread(
            target=self._read, args=(token,), name="mcpmount stdin", daemon=True
        )
        thread.start()

    def _read(self, token: anyio.lowlevel.EventLoopToken) -> None:
        # os.read on the descriptor, not sys.stdin.buffer: a daemon thread blocked inside
        # a BufferedReader holds its lock, and the interpreter's exit then aborts with
        # "Fatal Python error: _enter_buffered_busy" (exit 134) while the client keeps
        # stdin open. A raw read holds no lock.
        try:
            while chunk := os.read(self._fd, _CHUNK):
                self._buffer += chunk
                while (line := self.next_line()) is not None:
                    anyio.from_thread.run(self._send.send, line, token=token)
            if (last := self.rest()) is not None:
                anyio.from_thread.run(self._send.send, last, token=token)
        except Exception:  # the loop ended (RunFinishedError), stdin failed or was closed
            pass
        # EOF (or a read error): the session ends; after the loop ended, nothing to tell.
        with contextlib.suppress(Exception):
            anyio.from_thread.run_sync(self._send.close, token=token)

    def __aiter__(self) -> _ThreadedLines:
        return self

    async def __anext__(self) -> str:
        try:
            return await self._receive.receive()
        except anyio.EndOfStream:
            raise StopAsyncIteration from None

    def close(self) -> None:
        self._receive.close()


@contextlib.contextmanager
def _claimed(fd: int) -> Generator[_Writer | None]:
    """Move the wire of ``fd`` (stdout) to a private non-blocking descriptor and point
    ``fd`` at stderr; yield its writer, or None when ``fd`` could not be moved; restore
    both on leaving."""
    try:
        wire = fcntl.fcntl(fd, fcntl.F_DUPFD_CLOEXEC, 3)
    except OSError:
        yield None
        return
    try:
        if not _divert(fd):
            yield None  # two writers on one pipe would tear frames: the SDK's then
            return
        os.set_blocking(wire, False)
        try:
            yield _Writer(wire)
        finally:
            with contextlib.suppress(OSError):
                os.set_blocking(wire, True)
            with contextlib.suppress(OSError):
                os.dup2(wire, fd)
    finally:
        os.close(wire)


def _divert(fd: int) -> bool:
    """Point ``fd`` at stderr (or the null device); whether it was moved."""
    try:
        target = os.dup(2)
    except OSError:
        try:
            target = os.open(os.devnull, os.O_WRONLY)
        except OSError:
            return False
    try:
        os.dup2(target, fd)
        return True
    except OSError:
        return False
    finally:
        os.close(target)


class _Writer:
    """Messages to a non-blocking pipe or socket, written from the event loop; a full
    pipe (a client not reading) waits for room without holding the loop."""

    def __init__(self, fd: int) -> None:
        self._fd = fd

    async def write(self, text: str) -> None:
        data = memoryview(text.encode("utf-8"))
        while data:
            with contextlib.suppress(BlockingIOError):
                data = data[os.write(self._fd, data) :]
            if data:
                await anyio.wait_writable(self._fd)

    async def flush(self) -> None:
        """Nothing is buffered here."""
