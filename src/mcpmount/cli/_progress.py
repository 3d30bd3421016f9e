"""A call's progress on a terminal: the tool's progress notifications as a bar on stderr.

Until the tool reports progress the bar pulses under the tool's name; each notification
moves it (a known ``total`` fills it, an unknown one counts the steps) and shows the
server's message through `shown`. Off a terminal nothing is drawn: the notifications are
dropped, and stdout only ever gets the result.
"""

from __future__ import annotations

import contextlib
from collections.abc import Generator
from typing import TYPE_CHECKING

from rich.console import Console
from rich.progress import BarColumn, Progress, SpinnerColumn, TextColumn, TimeElapsedColumn

from mcpmount.cli._shown import visible

if TYPE_CHECKING:
    from mcp.shared.dispatcher import ProgressFnT

__all__ = ["progress_bar"]


@contextlib.contextmanager
def progress_bar(err: Console, name: str) -> Generator[ProgressFnT | None]:
    """Show the call of ``name`` on ``err`` while the body runs, if it is a terminal.

    Yields:
        The callback to hand the call (``progress=``), or None off a terminal.
    """
    if not err.is_terminal:
        yield None
        return
    columns = (
        SpinnerColumn(),
        TextColumn("{task.description}", markup=False),
        BarColumn(),
        TextColumn("{task.fields[step]}", markup=False),
        TimeElapsedColumn(),
    )
    shown_name = visible(name)
    with Progress(*columns, console=err, transient=True) as bar:
        task = bar.add_task(f"calling {shown_name}", total=None, step="")

        async def progress(progress: float, total: float | None, message: str | None) -> None:
            step = f"{progress:g}/{total:g}" if total else f"{progress:g}"
            if message:
                step += f" {visible(message)}"
            bar.update(task, completed=progress, total=total, step=step)

        yield progress
