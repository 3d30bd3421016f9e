"""Each serve setting has one home, the ``[serve]`` table: its keys serve without a flag, a
flag overrides the key of its name, and every old place of a setting (``[registry]
first_list_wait``, ``MCPMOUNT_FIRST_LIST_WAIT``, ``from_servers(first_list_wait=)``,
`serve`'s keywords) is still read, with a warning naming the key."""

from __future__ import annotations

import inspect
import logging
import signal
import socket
import sys
from collections.abc import AsyncGenerator
from contextlib import asynccontextmanager
from pathlib import Path

import anyio
import httpx2
import pytest
from mcp import Client

from leaks import record_group
from mcpmount.cli._parser import build_parser
from mcpmount.cli._serve import serve_flags
from mcpmount.config import RegistryConfig, ServeSettings, load_config
from mcpmount.errors import ConfigError
from mcpmount.serve import serve
from serve.serve_support import (
    BEHAVIOUR,
    STARTUP,
    connected,
    serve_command,
    served_http,
    wait_for_tool,
)
from support import fixture_server, portfile_process

pytestmark = [pytest.mark.anyio, pytest.mark.usefixtures("no_leaks")]


@asynccontextmanager
async def serving(config: Path, portfile: Path, *flags: str) -> AsyncGenerator[str]:
    """Run ``mcpmount serve CONFIG FLAGS`` (stderr to a log beside it) until ``portfile``
    names its port; yield its URL; stop it with SIGTERM."""
    command = serve_command(str(config), *flags)
    log = config.with_suffix(".log")
    async with portfile_process(command, portfile, log, start=STARTUP, stop=BEHAVIOUR) as (
        url,
        _,
    ):
        yield url


async def test_the_serve_table_alone_serves_http(tmp_path: Path) -> None:
    """The transport, the port and the port file are keys: no flag is needed to serve HTTP
    (the port file is relative to the config)."""
    config = tmp_path / "serve.toml"
    config.write_text(
        '[serve]\ntransport = "http"\nport = 0\nportfile = "serve.port"\n\n' + fixture_server("one")
    )
    async with (
        serving(config, tmp_path / "serve.port") as url,
        connected(Client(url)) as client,
    ):
        await wait_for_tool(client, "one__echo")


@pytest.mark.slow
async def test_a_flag_overrides_the_key_of_its_name(tmp_path: Path) -> None:
    """``--port 0`` and ``--portfile`` (`served_http`'s flags) override ``[serve] port``
    and ``portfile``: the config's port is taken (serving on it would fail), and its port
    file stays unwritten."""
    with socket.socket() as held:
        held.bind(("127.0.0.1", 0))
        held.listen()
        taken = held.getsockname()[1]
        config = tmp_path / "serve.toml"
        config.write_text(
            f'[serve]\ntransport = "stdio"\nport = {taken}\nportfile = "config.port"\n\n'
            + fixture_server("one")
        )
        async with (
            served_http(str(config), tmp_path) as (url, _),
            connected(Client(url)) as client,
        ):
            await wait_for_tool(client, "one__echo")
    assert not (tmp_path / "config.port").exists()
    assert url != f"http://127.0.0.1:{taken}/mcp"


def test_flags_merge_into_the_serve_table_as_their_keys(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Tokens and allowed hosts join the table's; other flags replace their key; a flag
    not given leaves the key as the table says."""
    config = tmp_path / "serve.toml"
    config.write_text(
        '[serve]\nport = 9000\nhost = "0.0.0.0"\nallowed_hosts = ["a.example.com"]\n'
        '[serve.tokens.table]\ntoken = "table-token-0123456789"\n'
    )
    monkeypatch.setenv("FLAG_TOKEN", "flag-token-0123456789")
    args = build_parser().parse_args(
        [
            *("serve", str(config), "--port", "0", "--token-env", "FLAG_TOKEN"),
            *("--allowed-host", "b.example.com", "--no-watch"),
        ]
    )
    merged = load_config(config, environ={}).with_serve(**serve_flags(args)).serve
    assert (merged.port, merged.host, merged.watch) == (0, "0.0.0.0", False)
    assert sorted(merged.tokens) == ["FLAG_TOKEN", "table"]
    assert merged.allowed_hosts == ["a.example.com", "b.example.com"]
    assert merged.transport == "stdio"  # no --transport: the table's (here the default)


def test_a_hosts_file_takes_first_list_wait_from_its_flag(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """A host's file has no ``[serve]`` table, so ``--first-list-wait`` is where its wait is
    set; the old variable still works there, and its warning names the flag."""
    config = tmp_path / "claude_desktop_config.json"
    config.write_text('{"mcpServers": {"one": {"command": "python3", "args": ["one.py"]}}}')
    args = build_parser().parse_args(["serve", str(config), "--first-list-wait", "7"])
    assert (
        load_config(config, environ={}).with_serve(**serve_flags(args)).serve.first_list_wait == 7
    )
    with caplog.at_level(logging.WARNING, logger="mcpmount"):
        loaded = load_config(config, environ={"MCPMOUNT_FIRST_LIST_WAIT": "4"})
    assert loaded.serve.first_list_wait == 4
    assert "mcpmount serve --first-list-wait" in caplog.text


def test_a_bad_flag_value_names_its_key_and_never_the_value(tmp_path: Path) -> None:
    config = RegistryConfig.from_servers({})
    with pytest.raises(ConfigError) as error:
        config.with_serve(port=70000, metrics_token="short")
    assert error.value.problems == (
        "port: Input should be less than or equal to 65535",
        "metrics_token: must be at least 16 characters",
    )


def test_serve_takes_the_config_and_little_else_and_the_port_defaults_agree(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """At most six parameters; the port is the table's key, whose default the command's
    help names (the command and the library bind the same port unless told)."""
    assert len(inspect.signature(serve).parameters) <= 6
    assert ServeSettings().port == 8000
    with pytest.raises(SystemExit):
        build_parser().parse_args(["serve", "--help"])
    assert "[serve] port: 8000" in " ".join(capsys.readouterr().out.split())


class TestOldPlaces:
    """Each old place of a serve setting, still read with a warning naming the new key."""

    def test_registry_first_list_wait(
        self, tmp_path: Path, caplog: pytest.LogCaptureFixture
    ) -> None:
        config = tmp_path / "old.toml"
        config.write_text("[registry]\nfirst_list_wait = 7\n")
        with caplog.at_level(logging.WARNING, logger="mcpmount"):
            loaded = load_config(config, environ={})
        assert loaded.serve.first_list_wait == 7
        assert loaded.settings.first_list_wait is None
        assert [r.getMessage() for r in caplog.records] == [
            "registry.first_list_wait: moved to [serve] first_list_wait, where serve's "
            "settings are; move it (for a host's file, which has no [serve]: "
            "mcpmount serve --first-list-wait)"
        ]

    def test_the_serve_key_wins_over_the_old_one(
        self, tmp_path: Path, caplog: pytest.LogCaptureFixture
    ) -> None:
        config = tmp_path / "both.toml"
        config.write_text("[registry]\nfirst_list_wait = 7\n[serve]\nfirst_list_wait = 3\n")
        with caplog.at_level(logging.WARNING, logger="mcpmount"):
            assert load_config(config, environ={}).serve.first_list_wait == 3
        assert "registry.first_list_wait: moved to [serve]" in caplog.text

    def test_the_variable(self, tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
        config = tmp_path / "env.toml"
        config.write_text("")
        with caplog.at_level(logging.WARNING, logger="mcpmount"):
            loaded = load_config(config, environ={"MCPMOUNT_FIRST_LIST_WAIT": "4"})
        assert loaded.serve.first_list_wait == 4
        assert "MCPMOUNT_FIRST_LIST_WAIT: moved to [serve] first_list_wait" in caplog.text

    def test_from_servers_in_code(self) -> None:
        with pytest.warns(DeprecationWarning, match=r"first_list_wait: moved to \[serve\]"):
            config = RegistryConfig.from_servers({}, first_list_wait=5)
        assert config.serve.first_list_wait == 5

    @pytest.mark.slow
    async def test_old_forms_warn_at_the_users_line(self, tmp_path: Path) -> None:
        """A script written against the old forms (``pin=`` on a spec,
        ``from_servers(first_list_wait=)``, ``serve(config, transport="http", port=0)``)
        still runs and serves, in a process of its own under Python's DEFAULT warning
        filters, and is shown each warning at its own line, naming the new place: a
        warning attributed to pydantic, mcpmount or anyio would be hidden."""
        script = tmp_path / "old.py"
        script.write_text(OLD_SCRIPT)
        log = tmp_path / "old.log"
        with log.open("w") as errlog:
            process = await anyio.open_process(
                [sys.executable, str(script)], stderr=errlog, start_new_session=True
            )
        record_group(process.pid)
        async with process:
            try:
                assert process.stdout is not None
                with anyio.fail_after(STARTUP):
                    url = (await process.stdout.receive()).decode().strip()
                with anyio.fail_after(BEHAVIOUR):
                    async with httpx2.AsyncClient() as http:
                        health = await http.get(url.removesuffix("/mcp") + "/healthz")
            finally:
                process.send_signal(signal.SIGTERM)
                with anyio.fail_after(BEHAVIOUR):
                    await process.wait()
        assert health.status_code == 200
        warned = log.read_text()
        for line, message in [
            (5, "the key `pin` is renamed `visible`"),
            (6, "first_list_wait: moved to [serve] first_list_wait"),
            (7, "serve(transport=, port=...) is deprecated: these are [serve] keys"),
        ]:
            assert f"{script}:{line}: DeprecationWarning: {message}" in warned, warned
        assert "give them with serve(config.with_serve(transport=, port=...))" in warned


OLD_SCRIPT = """import anyio
from mcpmount.config import RegistryConfig, StdioServer
from mcpmount.serve import serve

spec = StdioServer(command="x", pin=["a"])
config = RegistryConfig.from_servers({}, first_list_wait=5)
anyio.run(lambda: serve(config, transport="http", port=0, on_ready=lambda u: print(u, flush=True)))
"""
"""A program written against the old forms, one per line: it prints the URL once serving."""
