"""A server installed where people install it sees its own install, never the home around it.

For each layout (`layouts.LAYOUTS`: pipx, ``uv tool install``, npx, a script in ``~/bin``,
one in a project's ``bin/``) the probe tries to read every planted secret: an SSH key,
AWS credentials, another server's OAuth token in mcpmount's store, the project's
``.env``. Sandboxed, each is not there and the server still runs (it answers); without
the sandbox, each is read, so the test can fail. The same program then runs sandboxed
with a ``read`` file inside a ``write`` folder, which it cannot overwrite.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from layouts import LAYOUTS, SECRETS, build, install, scratch_home
from sandbox_support import PROBE

from mcpmount.config import StdioServer
from mcpmount.registry import Registry
from support import stdio_spec, text_of

pytestmark = [
    pytest.mark.slow,
    pytest.mark.anyio,
    pytest.mark.usefixtures("no_leaks"),
    pytest.mark.usefixtures("bwrap"),
]


@pytest.fixture(scope="session", name="packages")
def packages_fixture(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """The probe's wheel and npm tarball, built once per session."""
    return build(tmp_path_factory.mktemp("probe-packages"))


@pytest.fixture(name="home")
def home_fixture(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A scratch ``$HOME`` with the secrets planted (`layouts.scratch_home`)."""
    return scratch_home(tmp_path, monkeypatch)


@pytest.mark.parametrize("sandboxed", [True, False], ids=["sandbox", "no-sandbox"])
@pytest.mark.parametrize("layout", LAYOUTS)
async def test_an_installed_server_reads_no_secret_of_the_home_it_is_installed_in(
    home: Path, packages: tuple[Path, Path], layout: str, sandboxed: bool
) -> None:
    """Sandboxed: every planted secret is missing; unsandboxed: every one is read."""
    command, path = install(layout, home, *packages)
    spec = StdioServer.model_validate(
        {"command": command, "env": {"PATH": path}, "sandbox": sandboxed}
    )
    async with Registry() as registry:
        await registry.mount("probe", spec)
        for name, text in SECRETS.items():
            got = text_of(await registry.call("probe__read", {"path": str(home / name)}))
            if sandboxed:
                assert got.startswith("failed:"), f"{layout} read {name}: {got}"
                assert "ENOENT" in got or "FileNotFoundError" in got, got
            else:
                assert got == f"ok: {text}", f"{layout} could not read {name}: {got}"


@pytest.mark.parametrize("sandboxed", [True, False], ids=["sandbox", "no-sandbox"])
async def test_a_read_path_inside_a_write_path_stays_read_only(home: Path, sandboxed: bool) -> None:
    """``read = ["~/notes/ro.txt"]`` in ``write = ["~/notes"]``: the file cannot be
    overwritten, the folder around it can; a ``write`` folder inside a ``read`` folder
    stays writable."""
    notes, docs = home / "notes", home / "docs"
    (docs / "out").mkdir(parents=True)
    notes.mkdir()
    (notes / "ro.txt").write_text("keep me")
    table = {"read": [str(notes / "ro.txt"), str(docs)], "write": [str(notes), str(docs / "out")]}
    async with Registry() as registry:
        await registry.mount("probe", stdio_spec(PROBE, sandbox=table if sandboxed else False))

        async def write(path: Path) -> str:
            return text_of(await registry.call("probe__write", {"path": str(path)}))

        overwrite = await write(notes / "ro.txt")
        assert overwrite.startswith("failed: OSError" if sandboxed else "ok:"), overwrite
        assert (notes / "ro.txt").read_text() == ("keep me" if sandboxed else "written")
        assert await write(notes / "new.txt") == "ok: written"
        assert await write(docs / "out" / "new.txt") == "ok: written"
        assert (await write(docs / "beside.txt")).startswith("failed:" if sandboxed else "ok:")
