"""What `mounts_of` says a sandbox shows for the layouts the install tests do not start:
a native binary in ``~/.cargo/bin``, nvm's Node found through ``#!/usr/bin/env node`` on the
server's PATH (not mcpmount's), a ``pip install --user`` script. Each next to the folder it
used to mount whole (``~/.cargo`` with its credentials, ``~/.nvm``, ``~/.local``)."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from mcpmount.config import StdioServer
from mcpmount.sandbox import mounts_of

pytestmark = pytest.mark.usefixtures("bwrap")


@pytest.fixture(name="home")
def home_fixture(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.delenv("XDG_STATE_HOME", raising=False)
    return home


def shown(command: Path, path: str = "/usr/bin:/bin") -> list[str]:
    spec = StdioServer.model_validate(
        {"command": str(command), "env": {"PATH": path}, "sandbox": True}
    )
    mounts = mounts_of(spec)
    assert mounts is not None
    assert mounts.refused is None, mounts.refused
    return list(mounts.program)


def test_a_native_binary_in_cargo_bin_is_shown_alone(home: Path) -> None:
    """Not ``~/.cargo``, which holds ``credentials.toml``."""
    binary = home / ".cargo" / "bin" / "server"
    binary.parent.mkdir(parents=True)
    (home / ".cargo" / "credentials.toml").write_text("token = 'planted'")
    shutil.copy("/bin/true", binary)
    assert shown(binary) == [str(binary)]


def test_env_node_is_found_on_the_servers_path_and_nvms_version_is_its_prefix(
    home: Path,
) -> None:
    """``#!/usr/bin/env node`` names the node on the server's PATH: nvm's, whose version
    folder (it holds ``lib/node_modules``) is shown, never ``~/.nvm``."""
    version = home / ".nvm" / "versions" / "node" / "v22.1.0"
    (version / "bin").mkdir(parents=True)
    (version / "lib" / "node_modules").mkdir(parents=True)
    os.symlink(os.path.realpath(shutil.which("node") or "/usr/bin/node"), version / "bin" / "node")
    script = home / "bin" / "server"
    script.parent.mkdir()
    script.write_text("#!/usr/bin/env node\n")
    assert shown(script, f"{version / 'bin'}:/usr/bin") == [str(script), str(version)]
    assert shown(script) == [str(script)]  # the system's node: nothing more


def test_a_pip_user_script_shows_its_packages_not_the_rest_of_local(home: Path) -> None:
    """``~/.local/bin/x`` of ``pip install --user``: the script and ``lib/python3.X``."""
    script = home / ".local" / "bin" / "server"
    script.parent.mkdir(parents=True)
    script.write_text("#!/usr/bin/python3\n")
    packages = home / ".local" / "lib" / "python3.11"
    (packages / "site-packages").mkdir(parents=True)
    (home / ".local" / "state" / "mcpmount" / "tokens").mkdir(parents=True)
    assert shown(script) == [str(script), str(packages)]
