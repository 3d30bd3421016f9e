"""What a command waits for, as a bar on a terminal's stderr: a call's progress, and the
tool vectors that ``search`` ranks by.

`progress_bar`: until the tool reports progress the bar pulses under the tool's name; each
notification moves it (a known ``total`` fills it, an unknown one counts the steps) and
shows the server's message through `shown`. `search_ready`: with a ``semantic_model`` the
bar counts the tool vectors found in the vector cache or computed. Off a terminal nothing
is drawn, and stdout only ever gets the result.
"""

from __future__ import annotations

import contextlib
from collections.abc import Generator
from typing import TYPE_CHECKING

from rich.console import Console
from rich.progress import BarColumn, Progress, SpinnerColumn, TextColumn, TimeElapsedColumn

from mcpmount.cli._shown import visible
from mcpmount.registry import Registry

if TYPE_CHECKING:
    from mcp.shared.dispatcher import ProgressFnT

__all__ = ["progress_bar", "search_ready"]


def _bar(err: Console) -> Progress:
    columns = (
        SpinnerColumn(),
        TextColumn("{task.description}", markup=False),
        BarColumn(),
        TextColumn("{task.fields[step]}", markup=False),
        TimeElapsedColumn(),
    )
    return Progress(*columns, console=err, transient=True)


@contextlib.contextmanager
def progress_bar(err: Console, name: str) -> Generator[ProgressFnT | None]:
    """Show the call of ``name`` on ``err`` while the body runs, if it is a terminal.

    Yields:
        The callback to hand the call (``progress=``), or None off a terminal.
    """
    if not err.is_terminal:
        yield None
        return
    shown_name = visible(name)
    with _bar(err) as bar:
        task = bar.add_task(f"calling {shown_name}", total=None, step="")

        async def progress(progress: float, total: float | None, message: str | None) -> None:
            step = f"{progress:g}/{total:g}" if total else f"{progress:g}"
            if message:
                step += f" {visible(message)}"
            bar.update(task, completed=progress, total=total, step=step)

        yield progress


async def search_ready(registry: Registry, err: Console) -> None:
    """Wait until ``registry.search`` ranks as the library's does once ready: by meaning
    too, with a ``semantic_model`` (`Registry.wait_search_ready`), showing on ``err``, if
    it is a terminal, how many tool vectors are found or computed. A model that cannot
    load is logged once, and the search ranks by words."""
    model = registry.settings.semantic_model
    if model is None or not err.is_terminal:
        await registry.wait_search_ready()
        return
    with _bar(err) as bar:
        task = bar.add_task(f"search by meaning: {visible(model)}", total=None, step="")
        total = 0

        def progress(pending: int) -> None:
            nonlocal total
            total = total or pending  # told first before the batch that loads the model
            done = total - min(pending, total)
            bar.update(task, total=total, completed=done, step=f"{done}/{total} tool vectors")

        await registry.wait_search_ready(progress)
