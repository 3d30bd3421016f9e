"""Stop signals: every command closes what it opened on SIGINT, SIGTERM and SIGHUP.

``timeout``, systemd, ``docker stop`` and CI runners send SIGTERM, and a closed terminal
sends SIGHUP; without a handler either kills the process at once, and every server it
started (and every helper they forked) would outlive it. So a command runs under
`until_signalled`: the first stop signal cancels it, its registry closes as it unwinds
(closers are shielded and bounded), and the exit code is 128 + the signal's number, as a
shell reports a process the signal killed. Signals that arrive while it closes are
ignored: the close is already bounded.
"""

from __future__ import annotations

import logging
import signal
from collections.abc import Awaitable, Callable
from typing import Final

import anyio

__all__ = ["STOP_SIGNALS", "until_signalled"]

logger = logging.getLogger(__name__)

STOP_SIGNALS: Final = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)


async def until_signalled(command: Callable[[], Awaitable[int]]) -> int:
    """Run ``command``; return its exit code, or 128 + the stop signal that cancelled it.

    Raises:
        Exception: Whatever ``command`` raises (not wrapped in an exception group).
    """
    received: list[signal.Signals] = []
    code = 0
    try:
        async with anyio.create_task_group() as tg:

            async def watch() -> None:
                with anyio.open_signal_receiver(*STOP_SIGNALS) as signals:
                    async for signum in signals:
                        name = signal.Signals(signum)
                        if received:
                            logger.info("%s: already closing every server", name.name)
                            continue
                        logger.info("%s: closing every server", name.name)
                        received.append(name)
                        command_scope.cancel()

            tg.start_soon(watch)
            with anyio.CancelScope() as command_scope:
                code = await command()
            tg.cancel_scope.cancel()
    except BaseExceptionGroup as group:
        if len(group.exceptions) == 1:
            raise group.exceptions[0] from None
        raise
    return 128 + received[0] if received else code
