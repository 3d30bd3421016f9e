"""One-shot commands touch only what they need, and show on a terminal what they wait for.

``call`` starts only the server of its tool; ``tools`` (and ``search``, ``prompts``,
``resources``) list a server from its fresh cached manifest without starting it, and
``--live`` starts every server. Each server here writes a marker file when it starts
(``--pidfile``), so "never started" is read from the disk, not from a clock.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from cli.cli_support import mcpmount, terminal
from support import FIXTURE, SERVERS, script_server, write_config

pytestmark = [pytest.mark.slow, pytest.mark.usefixtures("no_leaks")]


def marked(name: str, marker: Path, *flags: str, extra: str = "") -> str:
    """A config table for the fixture server as ``name``, writing ``marker`` as it starts."""
    return script_server(
        name, FIXTURE, "--name", name, "--pidfile", str(marker), *flags, extra=extra
    )


def test_call_starts_only_the_server_of_its_tool(tmp_path: Path) -> None:
    """The other servers are never started: one that would hang, one that would crash."""
    hang, crash = tmp_path / "hang.pid", tmp_path / "crash.pid"
    config = write_config(
        tmp_path,
        marked("fast", tmp_path / "fast.pid")
        + marked("hang", hang, "--no-init", extra="startup_timeout = 10")
        + marked("crash", crash, "--crash-on-start"),
    )
    done = mcpmount("call", "fast__echo", '{"text": "hi"}', config)
    assert (done.returncode, done.stdout) == (0, "hi\n"), done.stderr
    assert (tmp_path / "fast.pid").exists()
    assert not hang.exists()
    assert not crash.exists()
    missing = mcpmount("call", "hang__echo", '{"text": "hi"}', config)  # its own server's fate
    assert missing.returncode == 1
    assert "server 'hang'" in missing.stderr
    assert "crash" not in missing.stderr


def test_a_server_without_prefix_is_started_for_any_name(tmp_path: Path) -> None:
    """A ``prefix = false`` server's names say nothing of it: it is started with the
    named server; a name of no namespace starts, once the manifests are cached, only the
    server whose tool it is."""
    bare, other = tmp_path / "bare.pid", tmp_path / "other.pid"
    config = write_config(
        tmp_path,
        marked("fast", tmp_path / "fast.pid")
        + marked("bare", bare, extra="prefix = false")
        + marked("other", other),
    )
    assert mcpmount("call", "fast__echo", '{"text": "a"}', config).stdout == "a\n"
    assert bare.exists()
    assert not other.exists()
    assert mcpmount("tools", config).returncode == 0  # caches every manifest
    bare.unlink()
    other.unlink()
    assert mcpmount("call", "echo", '{"text": "bare"}', config).stdout == "bare\n"
    assert bare.exists()
    assert not other.exists()


@pytest.mark.parametrize("command", ["tools", "prompts", "resources", "search"])
def test_listing_commands_answer_from_cached_manifests_without_starting_servers(
    tmp_path: Path, command: str
) -> None:
    """The first run mounts and caches; the next lists the same without starting anything;
    ``--live`` starts every server again."""
    markers = [tmp_path / "a.pid", tmp_path / "b.pid"]
    config = write_config(
        tmp_path,
        f'[registry]\ncache_dir = "{tmp_path / "manifests"}"\n\n'
        + marked("a", markers[0])
        + marked("b", markers[1]),
    )
    args = [command, *(["echo"] if command == "search" else []), config, "--json"]
    first = mcpmount(*args)
    assert first.returncode == 0, first.stderr
    assert all(marker.exists() for marker in markers)
    for marker in markers:
        marker.unlink()
    cached = mcpmount("-v", *args)
    assert (cached.returncode, cached.stdout) == (0, first.stdout), cached.stderr
    assert not any(marker.exists() for marker in markers)
    assert "listed 2 servers from cached lists; --live starts them" in " ".join(
        cached.stderr.split()
    )
    live = mcpmount(*args, "--live")
    assert (live.returncode, live.stdout) == (0, first.stdout), live.stderr
    assert all(marker.exists() for marker in markers)


def test_a_terminal_is_shown_the_servers_still_pending_and_a_pipe_nothing(
    tmp_path: Path,
) -> None:
    """While a slow server starts, stderr's status line names it; off a terminal nothing."""
    config = write_config(
        tmp_path,
        marked("fast", tmp_path / "fast.pid")
        + marked("slow", tmp_path / "slow.pid", "--startup-delay", "2"),
    )
    code, shown = terminal("tools", config)
    assert code == 0, shown
    assert "mounting 1/2 servers; waiting for slow" in shown
    piped = mcpmount("tools", config, "--live")
    assert piped.returncode == 0
    assert "waiting" not in piped.stderr + piped.stdout


def test_call_shows_the_tools_progress_as_a_bar_on_a_terminal(tmp_path: Path) -> None:
    """Each progress notification moves the bar, with the server's message; a pipe gets
    only the result."""
    busy = json.dumps([str(SERVERS / "busy_server.py")])
    config = write_config(tmp_path, f'[servers.b]\ncommand = "{sys.executable}"\nargs = {busy}\n')
    code, shown = terminal("call", "b__progress", '{"seconds": 1.5}', config)
    assert code == 0, shown
    assert "calling b__progress" in shown
    assert "step " in shown
    piped = mcpmount("call", "b__progress", '{"seconds": 0.3}', config)
    assert piped.returncode == 0, piped.stderr
    assert "step" not in piped.stderr
    assert "calling" not in piped.stderr
