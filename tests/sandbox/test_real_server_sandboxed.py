"""The real ``@modelcontextprotocol/server-filesystem`` works sandboxed, with its folder.

Its command is the npm bin link, a symlink to a script whose ``#!`` runs ``node`` through
``env``: the sandbox finds node (a system file) and mounts the package's ``node_modules``
read-only, and the served folder read-write; nothing else of the user's is there.
Pinned in ``tests/servers/npm/package.json``; ``.ci/run`` installs it (``npm ci``).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from mcpmount.config import SandboxTable, StdioServer
from mcpmount.registry import Registry
from support import SERVERS, text_of

FILESYSTEM = SERVERS / "npm" / "node_modules" / ".bin" / "mcp-server-filesystem"

pytestmark = [
    pytest.mark.slow,
    pytest.mark.anyio,
    pytest.mark.usefixtures("no_leaks"),
    pytest.mark.usefixtures("bwrap"),
]


async def test_server_filesystem_serves_its_folder_from_inside_a_sandbox(tmp_path: Path) -> None:
    """It writes and reads in its folder; a file beside the folder is not there for it."""
    folder = tmp_path / "folder"
    folder.mkdir()
    (tmp_path / "beside.txt").write_text("private")
    assert FILESYSTEM.exists(), "server-filesystem is missing: npm ci --prefix tests/servers/npm"
    sandbox = SandboxTable(write=[str(folder)])
    spec = StdioServer(command=str(FILESYSTEM), args=[str(folder)], sandbox=sandbox)
    async with Registry() as registry:
        await registry.mount("fs", spec)
        target = str(folder / "note.txt")
        await registry.call("fs__write_file", {"path": target, "content": "from the sandbox"})
        assert (folder / "note.txt").read_text() == "from the sandbox"
        read = await registry.call("fs__read_text_file", {"path": target})
        assert text_of(read) == "from the sandbox"
        listed = text_of(await registry.call("fs__list_directory", {"path": str(folder)}))
        assert "note.txt" in listed
        # Outside its folder the server refuses by itself; in the sandbox the file is absent.
        beside = await registry.call("fs__read_text_file", {"path": str(tmp_path / "beside.txt")})
        assert beside.is_error
        assert "private" not in text_of(beside)
