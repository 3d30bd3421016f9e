"""The status socket a serve answers ``mcpmount status`` on, in this process: one line of
JSON to each reader, whatever the others do; only in a directory this user alone may
enter; gone, with every task and fd it used, when the serving ends.

(``tests/cli/test_cli_status_serve.py`` runs it through ``mcpmount serve`` and ``status``.)
"""

from __future__ import annotations

import json
import logging
import os
import tempfile
from collections.abc import Iterator
from pathlib import Path

import anyio
import pytest

from mcpmount.serve.ops import publish_status, status_sockets

pytestmark = [pytest.mark.slow, pytest.mark.anyio, pytest.mark.usefixtures("no_leaks")]


@pytest.fixture(name="runtime_dir")
def runtime_dir_fixture(monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A runtime directory (``XDG_RUNTIME_DIR``) of this test's own; short, since a unix
    socket's path may not be much over 100 bytes."""
    with tempfile.TemporaryDirectory(prefix="mm-") as directory:
        monkeypatch.setenv("XDG_RUNTIME_DIR", directory)
        yield Path(directory)


async def read(path: Path) -> bytes:
    with anyio.fail_after(10):
        async with await anyio.connect_unix(path) as stream:
            received = b""
            async for chunk in stream:
                received += chunk
            return received


async def test_each_reader_gets_one_line_and_the_socket_goes_with_the_serving(
    tmp_path: Path, runtime_dir: Path
) -> None:
    """A reader that never reads and one that leaves at once hold up no other; the rows
    are read at each connection; after the block nothing is left (no_leaks: tasks, fds)."""
    config = tmp_path / "servers.toml"
    calls = 0

    def rows() -> list[dict[str, object]]:
        nonlocal calls
        calls += 1
        return [{"server": "a", "calls": calls}]

    async with publish_status(config, "http", rows):
        [(pid, path)] = status_sockets(config).items()
        assert pid == os.getpid()
        assert path.parent == runtime_dir / "mcpmount"
        async with await anyio.connect_unix(path):  # never reads
            await (await anyio.connect_unix(path)).aclose()  # leaves at once
            first, second = await read(path), await read(path)
        assert first.count(b"\n") == 1
        assert first.endswith(b"\n")
        answer = json.loads(first)
        assert (answer["pid"], answer["transport"]) == (os.getpid(), "http")
        assert answer["config"] == str(config.resolve())
        assert json.loads(second)["servers"][0]["calls"] > answer["servers"][0]["calls"]
    assert not path.exists()
    assert status_sockets(config) == {}


async def test_a_status_that_cannot_be_read_is_logged_and_the_socket_still_answers(
    tmp_path: Path, runtime_dir: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """The serving goes on: that reader gets nothing, the next one its line."""
    config = tmp_path / "servers.toml"
    failing = [True]

    def rows() -> list[dict[str, object]]:
        if failing.pop():
            raise RuntimeError("boom")
        return []

    failing.insert(0, False)
    async with publish_status(config, "stdio", rows):
        [path] = status_sockets(config).values()
        assert await read(path) == b""
        assert json.loads(await read(path))["servers"] == []
    assert "could not be read" in caplog.text


async def test_a_directory_others_may_enter_is_neither_used_nor_read(
    tmp_path: Path, runtime_dir: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """Whoever made it could answer there: serve warns and publishes nothing, and a reader
    finds no socket in it."""
    config = tmp_path / "servers.toml"
    directory = runtime_dir / "mcpmount"
    directory.mkdir(mode=0o755)
    directory.chmod(0o755)
    with caplog.at_level(logging.WARNING):
        async with publish_status(config, "stdio", list):
            assert list(directory.iterdir()) == []
    assert "may be entered by other users (mode 755)" in caplog.text
    directory.chmod(0o700)
    async with publish_status(config, "stdio", list):
        assert len(status_sockets(config)) == 1
        directory.chmod(0o755)
        assert status_sockets(config) == {}
        directory.chmod(0o700)
