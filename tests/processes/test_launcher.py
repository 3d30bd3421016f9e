"""The launcher is invisible to what it runs: the same environment, working directory,
exit status and spawn errors as a direct spawn (Linux, where servers run under it).

Every test requests ``no_leaks``.
"""

from __future__ import annotations

import os
import signal
from collections.abc import Sequence
from pathlib import Path

import pytest

from leaks import record_group
from mcpmount.processes import ProcessGroup

pytestmark = pytest.mark.usefixtures("no_leaks")


async def run(
    argv: Sequence[str], env: dict[str, str] | None = None, cwd: Path | None = None
) -> tuple[int | None, str, bool]:
    """Run ``argv`` as a process group to its end; its status, its stdout, and whether it
    ran under the launcher."""
    codes: list[int] = []
    group = await ProcessGroup.spawn(
        argv, env=env if env is not None else os.environ, cwd=cwd, on_reaped=codes.append
    )
    record_group(group.pid)
    assert group.process.stdout is not None
    out = bytearray()
    try:
        async for chunk in group.process.stdout:
            out += chunk
    finally:
        await group.stop()
        await group.close_pipes()
    return group.returncode, out.decode(), group.launched


async def test_the_server_gets_exactly_the_environment_it_was_given() -> None:
    """The interpreter's own additions (``LC_CTYPE`` in the C locale) do not reach it."""
    env = {"PATH": os.defpath, "ONLY": "this"}
    status, out, launched = await run(["env"], env)
    assert launched
    assert (status, sorted(out.splitlines())) == (0, ["ONLY=this", f"PATH={os.defpath}"])


async def test_the_server_runs_in_its_working_directory(tmp_path: Path) -> None:
    assert await run(["pwd"], cwd=tmp_path) == (0, f"{tmp_path}\n", True)


@pytest.mark.parametrize(
    ("script", "status"),
    [
        pytest.param("exit 3", 3, id="exit"),
        pytest.param("kill -TERM $$", -signal.SIGTERM, id="killed"),
        pytest.param("kill -SEGV $$", 128 + signal.SIGSEGV, id="core-signal"),
    ],
)
async def test_the_launcher_exits_as_the_server_did(script: str, status: int) -> None:
    """An exit status is passed on; a deadly signal too, but one that dumps core becomes
    ``128 + N`` (the launcher does not dump core in the server's name)."""
    assert (await run(["sh", "-c", script]))[0] == status


async def test_a_missing_or_unexecutable_command_fails_the_spawn(tmp_path: Path) -> None:
    """As a direct spawn does: the transport names the command, not the launcher."""
    with pytest.raises(FileNotFoundError):
        await run(["no-such-command-of-mcpmount"])
    with pytest.raises(FileNotFoundError):
        await run([str(tmp_path / "absent")])
    script = tmp_path / "server"
    script.write_text("#!/bin/sh\n")
    with pytest.raises(PermissionError):
        await run([str(script)])
