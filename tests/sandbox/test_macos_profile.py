"""The sandbox-exec profile of macOS, by its text: sandbox-exec cannot run on Linux."""

from __future__ import annotations

import pytest

from mcpmount.sandbox import SandboxPolicy, sandbox_exec_profile

HOME, TMP = "/private/var/folders/x/mcpmount-sandbox-1/home", "/private/var/folders/x/tmp"


def profile(policy: SandboxPolicy, proxy_port: int | None = None) -> list[str]:
    text = sandbox_exec_profile(
        policy, ["/opt/venv", "/Users/me/server.py"], home=HOME, tmp=TMP, proxy_port=proxy_port
    )
    return text.splitlines()


def test_it_denies_by_default_and_keeps_signals_inside_the_sandbox() -> None:
    """Nothing is allowed unless a rule says so; signals reach the sandbox's own processes."""
    lines = profile(SandboxPolicy())
    assert lines[:2] == ["(version 1)", "(deny default)"]
    assert "(allow signal (target same-sandbox))" in lines
    assert not any(
        "(allow signal)" in line or 'file-write* (subpath "/")' in line for line in lines
    )


def test_the_program_and_read_paths_are_read_only_and_write_paths_writable() -> None:
    """The runtime and ``read`` get file-read* only; ``write``, home and TMPDIR get both."""
    lines = profile(SandboxPolicy(read=("/Users/me/notes",), write=("/Users/me/out",)))
    assert (
        '(allow file-read* (subpath "/opt/venv") (subpath "/Users/me/server.py") '
        '(subpath "/Users/me/notes"))'
    ) in lines
    assert '(allow file-read* file-write* (subpath "/Users/me/out"))' in lines
    assert f'(allow file-read* file-write* (subpath "{HOME}") (subpath "{TMP}"))' in lines
    writable = [line for line in lines if "file-write*" in line]
    assert not any("/opt/venv" in line or "/Users/me/notes" in line for line in writable)


@pytest.mark.parametrize(
    ("network", "port", "rule"),
    [
        (False, None, None),
        (True, None, "(allow network*)"),
        (("api.example.com",), 41234, '(allow network-outbound (remote tcp "localhost:41234"))'),
    ],
    ids=["off", "on", "allow-list"],
)
def test_the_network_rule_follows_the_policy(
    network: bool | tuple[str, ...], port: int | None, rule: str | None
) -> None:
    """Off: no network rule at all; on: all of it; a list: the proxy's loopback port only."""
    network_rules = [
        line for line in profile(SandboxPolicy(network=network), port) if "network" in line
    ]
    assert network_rules == ([rule] if rule else [])


def test_a_path_is_quoted_so_it_cannot_end_its_string() -> None:
    """A quote or backslash in a path stays inside its string literal."""
    lines = profile(SandboxPolicy(read=('/Users/me/a"b\\c',)))
    assert any('(subpath "/Users/me/a\\"b\\\\c")' in line for line in lines)


def test_a_read_path_inside_a_write_path_stays_read_only_and_the_inner_write_writable() -> None:
    """The last matching rule wins: a read file in a write folder is denied writes after the
    folder's allow; a write folder inside that read path is allowed again after the deny."""
    policy = SandboxPolicy(
        read=("/Users/me/notes/ro", "/Users/me/docs"),
        write=("/Users/me/notes", "/Users/me/notes/ro/out"),
    )
    lines = profile(policy)
    allow_notes = lines.index(
        '(allow file-read* file-write* (subpath "/Users/me/notes") '
        '(subpath "/Users/me/notes/ro/out"))'
    )
    deny_ro = lines.index('(deny file-write* (subpath "/Users/me/notes/ro"))')
    allow_out = lines.index('(allow file-read* file-write* (subpath "/Users/me/notes/ro/out"))')
    assert allow_notes < deny_ro < allow_out
    assert not any("deny" in line and "/Users/me/docs" in line for line in lines)
