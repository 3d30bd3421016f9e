"""Edges of what a sandbox shows, each found by trying to get past it.

- A file argument inside a ``write`` folder is data that folder shows: a server that left
  a symlink there on an earlier run (``db.sqlite -> ~/project/.env``) must not get the
  link's target mounted on its next start, and the file itself stays writable.
- ``read = ["//tmp"]`` is ``/tmp``: the leading ``//`` must not slip the bind past the
  check that keeps the private home on top.
- A malformed absolute-form request to the proxy is answered ``400``; the server lives on.

Each sandboxed case has its unsandboxed twin, where the escape works.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from pathlib import Path

import anyio
import pytest
from sandbox_support import PROBE

from mcpmount.registry import Registry
from mcpmount.sandbox._addresses import AllowList
from mcpmount.sandbox._proxy import Limits, serve_proxy
from support import stdio_spec, text_of

pytestmark = [pytest.mark.slow, pytest.mark.anyio, pytest.mark.usefixtures("no_leaks")]


@pytest.fixture(name="home")
def home_fixture(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A scratch ``$HOME`` holding a project with a ``.env`` and a data folder."""
    home = tmp_path / "home"
    (home / "project").mkdir(parents=True)
    (home / "project" / ".env").write_text("API_TOKEN=planted")
    (home / "data").mkdir()
    monkeypatch.setenv("HOME", str(home))
    return home


@pytest.mark.usefixtures("bwrap")
@pytest.mark.parametrize("sandboxed", [True, False], ids=["sandbox", "no-sandbox"])
async def test_a_symlink_left_in_a_write_folder_is_not_followed_out_of_it(
    home: Path, sandboxed: bool
) -> None:
    """``--db ~/data/db.sqlite``, a link to ``~/project/.env``: sandboxed, not readable."""
    link = home / "data" / "db.sqlite"
    link.symlink_to(home / "project" / ".env")
    sandbox = {"write": [str(home / "data")]} if sandboxed else False
    async with Registry() as registry:
        await registry.mount("probe", stdio_spec(PROBE, "--db", str(link), sandbox=sandbox))
        got = text_of(await registry.call("probe__read", {"path": str(link)}))
    if sandboxed:
        assert got.startswith("failed:"), got
    else:
        assert got == "ok: API_TOKEN=planted"


@pytest.mark.usefixtures("bwrap")
@pytest.mark.parametrize("sandboxed", [True, False], ids=["sandbox", "no-sandbox"])
async def test_a_file_argument_inside_a_write_folder_stays_writable(
    home: Path, sandboxed: bool
) -> None:
    """The database a server is given in its ``write`` folder is written, not read-only."""
    database = home / "data" / "db.sqlite"
    database.write_text("old")
    sandbox = {"write": [str(home / "data")]} if sandboxed else False
    async with Registry() as registry:
        await registry.mount("probe", stdio_spec(PROBE, "--db", str(database), sandbox=sandbox))
        got = text_of(await registry.call("probe__write", {"path": str(database)}))
    assert got == "ok: written"
    assert database.read_text() == "written"


@pytest.mark.usefixtures("bwrap")
async def test_a_read_path_written_with_two_leading_slashes_keeps_the_home_private(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``read = ["//<parent of home>"]``: the home inside it is still the private one,
    as for the same path written with one slash; without the sandbox the key is read."""
    home = tmp_path / "home"
    (home / ".ssh").mkdir(parents=True)
    (home / ".ssh" / "id_rsa").write_text("KEY")
    monkeypatch.setenv("HOME", str(home))
    key = {"path": str(home / ".ssh" / "id_rsa")}
    seen: dict[str, str] = {}
    async with Registry() as registry:
        for name, sandbox in (
            ("slashes", {"read": ["/" + str(tmp_path)]}),
            ("plain", {"read": [str(tmp_path)]}),
            ("none", False),
        ):
            await registry.mount(name, stdio_spec(PROBE, sandbox=sandbox))
            seen[name] = text_of(await registry.call(f"{name}__read", key))
    assert seen["none"] == "ok: KEY"
    assert seen["plain"].startswith("failed:"), seen
    assert seen["slashes"].startswith("failed:"), seen


@pytest.mark.parametrize(
    "target", ["http://example.com:99999/", "http://[::1/", "http://example.com:x/"]
)
async def test_a_malformed_request_to_the_proxy_is_a_400_and_the_proxy_lives_on(
    target: str,
) -> None:
    """urlsplit raises on these; the proxy answers ``400`` and serves the next request."""
    with tempfile.TemporaryDirectory() as folder:
        path = os.path.join(folder, "proxy.sock")
        listener = await anyio.create_unix_listener(path)
        async with listener, anyio.create_task_group() as tg:
            tg.start_soon(serve_proxy, listener, AllowList(("example.com",)), "probe", Limits())
            for _ in range(2):  # the second one shows the proxy still serves
                async with await anyio.connect_unix(path) as stream:
                    await stream.send(f"GET {target} HTTP/1.1\r\n\r\n".encode())
                    answer = b""
                    with anyio.fail_after(10), contextlib.suppress(anyio.EndOfStream):
                        while True:
                            answer += await stream.receive()
                assert answer.startswith(b"HTTP/1.1 400 "), answer
            tg.cancel_scope.cancel()
