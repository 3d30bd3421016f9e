"""`Registry.reload`: a new config applied server by server. Unchanged servers keep their
process and make no change; removed ones are reaped; added ones mount; changed ones (their
spec, a secret value, or a registry setting they read) restart; a config error changes
nothing; a new spec that fails leaves nothing of it, and the old one stays closed.

Every test requests ``no_leaks``: after it, nothing the test spawned is alive and no fd,
thread or task is left over.
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any, Final

import anyio
import pytest

from mcpmount.catalog import Pins
from mcpmount.config import HttpServer, RegistryConfig, RegistrySettings, StdioServer
from mcpmount.errors import ConfigError, ServerStartError
from mcpmount.registry import Registry, RegistryChange, ReloadResult
from mcpmount.registry._reload import server_settings_changed
from support import alive, fixture, record_pids

pytestmark = [pytest.mark.slow, pytest.mark.usefixtures("no_leaks")]

BOUND: Final = 60.0
"""Seconds a mount-and-reload may take on a loaded machine (never hangs, not a speed test)."""


def config(servers: dict[str, StdioServer], **settings: Any) -> RegistryConfig:
    return RegistryConfig.from_servers(servers, **{"startup_timeout": 20, **settings})


def pids(registry: Registry) -> dict[str, int | None]:
    record_pids(registry)
    return {row.server: row.pid for row in registry.status()}


def names(registry: Registry) -> set[str]:
    return {tool.name for tool in registry.mounted_tools()}


async def opened(registry: Registry, first: RegistryConfig) -> list[RegistryChange]:
    """Mount ``first``; return the list every later change is appended to."""
    await registry.mount_all(first.servers)
    changes: list[RegistryChange] = []
    registry.subscribe(changes.append)
    return changes


async def test_each_kind_of_change_is_applied_and_only_it_is_told() -> None:
    first = config({"keep": fixture(), "gone": fixture(), "grow": fixture("--tools", "1")})
    second = config({"keep": fixture(), "grow": fixture("--tools", "2"), "new": fixture()})
    with anyio.fail_after(BOUND):
        async with Registry(first.settings) as registry:
            changes = await opened(registry, first)
            before = pids(registry)
            result = await registry.reload(second)
            after = pids(registry)

            assert result == ReloadResult(
                added=("new",), removed=("gone",), restarted=("grow",), unchanged=("keep",)
            )
            assert after["keep"] == before["keep"]
            assert "gone" not in after
            assert before["gone"] is not None
            assert not alive(before["gone"])
            assert after["grow"] != before["grow"]
            assert "grow__tool_1" in names(registry)
            assert "new__echo" in names(registry)
            assert not {n for n in names(registry) if n.startswith("gone__")}
            told = {change.server for change in changes if change.kind == "tools"}
            assert told == {"gone", "grow", "new"}  # never "keep"
            assert any("gone__echo" in c.removed for c in changes)
            assert any("new__echo" in c.added for c in changes)
            assert (await registry.call("grow__tool_1", {})).is_error is False


async def test_the_same_config_again_touches_nothing() -> None:
    """Specs compare by value: a config loaded anew, secrets included, is no change."""
    first = config({"a": fixture(env={"TOKEN": "s3cret-value"})})
    again = config({"a": fixture(env={"TOKEN": "s3cret-value"})})
    with anyio.fail_after(BOUND):
        async with Registry(first.settings) as registry:
            changes = await opened(registry, first)
            before = pids(registry)
            result = await registry.reload(again)
            assert result.unchanged == ("a",)
            assert not result.restarted
            assert pids(registry) == before
            assert changes == []


async def test_a_changed_secret_restarts_its_server() -> None:
    first = config({"a": fixture(env={"TOKEN": "old-secret"}), "b": fixture()})
    second = config({"a": fixture(env={"TOKEN": "new-secret"}), "b": fixture()})
    with anyio.fail_after(BOUND):
        async with Registry(first.settings) as registry:
            await opened(registry, first)
            before = pids(registry)
            result = await registry.reload(second)
            assert result.restarted == ("a",)
            assert result.unchanged == ("b",)
            after = pids(registry)
            assert after["a"] != before["a"]
            assert after["b"] == before["b"]


async def test_settings_restart_the_servers_they_affect_and_the_rest_stay(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """``max_tools`` restarts a server that uses the registry's, not one with its own;
    ``call_timeout`` applies at once; ``max_name_length`` cannot, and is named."""
    servers = {"uses": fixture(), "own": fixture(max_tools=50)}
    first = config(servers)
    second = config(servers, max_tools=40, call_timeout=7, max_name_length=50)
    with anyio.fail_after(BOUND):
        async with Registry(first.settings) as registry:
            await opened(registry, first)
            before = pids(registry)
            with caplog.at_level(logging.WARNING, logger="mcpmount.registry"):
                result = await registry.reload(second)
            assert result.restarted == ("uses",)
            assert result.unchanged == ("own",)
            assert result.ignored_settings == ("max_name_length",)
            assert "max_name_length" in caplog.text
            assert pids(registry)["own"] == before["own"]
            assert registry.settings.call_timeout == 7
            assert registry.settings.max_tools == 40
            assert registry.settings.max_name_length == first.settings.max_name_length


async def test_a_config_error_changes_nothing_and_is_raised(tmp_path: Path) -> None:
    path = tmp_path / "servers.toml"
    path.write_text('[servers.a]\ncommand = "x"\nargs = "not a list"\n')
    first = config({"a": fixture()})
    with anyio.fail_after(BOUND):
        async with Registry(first.settings) as registry:
            changes = await opened(registry, first)
            before = pids(registry)
            with pytest.raises(ConfigError) as raised:
                await registry.reload(path)
            assert "servers.a" in str(raised.value)
            assert pids(registry) == before
            assert changes == []
            assert names(registry) >= {"a__echo"}


async def test_a_reload_from_a_file_path(tmp_path: Path) -> None:
    spec = fixture()
    path = tmp_path / "servers.toml"
    args = ", ".join(f'"{arg}"' for arg in spec.args)
    path.write_text(f'[servers.b]\ncommand = "{spec.command}"\nargs = [{args}]\n')
    first = config({"a": fixture()})
    with anyio.fail_after(BOUND):
        async with Registry(first.settings) as registry:
            await opened(registry, first)
            result = await registry.reload(str(path))
            assert result.added == ("b",)
            assert result.removed == ("a",)
            assert "b__echo" in names(registry)
            assert "a__echo" not in names(registry)


@pytest.mark.parametrize("required", [True, False])
async def test_a_new_spec_that_fails_is_reported_and_the_old_one_stays_closed(
    required: bool,
) -> None:
    """All-or-nothing per server: nothing of the new spec, and the old one is not brought
    back (the config asks for the new one); the others are unharmed, required or not.
    The next reload tries the server again."""
    good = config({"a": fixture(), "b": fixture()})
    broken = config({"a": fixture("--crash-on-start", required=required), "b": fixture()})
    with anyio.fail_after(BOUND):
        async with Registry(good.settings) as registry:
            await opened(registry, good)
            before = pids(registry)
            result = await registry.reload(broken)
            assert set(result.failed) == {"a"}
            assert not result.restarted
            assert isinstance(result.failed["a"], ServerStartError)
            assert result.unchanged == ("b",)
            assert before["a"] is not None
            assert not alive(before["a"])
            assert not {n for n in names(registry) if n.startswith("a__")}
            assert set(registry.failures) == {"a"}
            assert pids(registry)["b"] == before["b"]

            retried = await registry.reload(good)
            assert retried.added == ("a",)
            assert not retried.failed
            assert "a__echo" in names(registry)
            assert registry.failures == {}


def test_what_counts_as_a_change_of_a_url_server() -> None:
    """A header value is a secret compared by value; OAuth's token settings concern url
    servers only; a key the server sets itself is not the registry's to change."""

    def url(token: str) -> HttpServer:
        table = {"url": "https://x.test/mcp", "headers": {"Authorization": token}}
        return HttpServer.model_validate(table)

    assert url("Bearer one") == url("Bearer one")
    assert url("Bearer one") != url("Bearer two")
    old = RegistrySettings()
    tokens = old.model_copy(update={"token_dir": "/elsewhere"})
    assert server_settings_changed(url("a"), old, tokens)
    assert not server_settings_changed(fixture(), old, tokens)
    startup = old.model_copy(update={"startup_timeout": 5.0})
    assert server_settings_changed(fixture(), old, startup)
    assert not server_settings_changed(fixture(startup_timeout=9), old, startup)


async def test_new_pins_restart_only_the_servers_whose_pins_changed() -> None:
    """A reload given the lock file's pins as they are now: a server whose pins changed
    restarts and is held to them (refused when its tools differ), the others stay; a reload
    with pins that approve it mounts it again; omitted pins keep the ones in force."""
    first = config({"keep": fixture(), "pinned": fixture("--tools", "1")})
    with anyio.fail_after(BOUND):
        async with Registry(first.settings) as registry:
            await opened(registry, first)
            approved = registry.lock()
        tampered = Pins(
            {**approved.servers, "pinned": dict.fromkeys(approved.servers["pinned"], "0" * 32)}
        )
        async with Registry(first.settings, pins=approved) as registry:
            await opened(registry, first)
            before = pids(registry)
            result = await registry.reload(first, pins=tampered)
            assert (result.restarted, result.unchanged) == ((), ("keep",))
            assert "changed" in result.failed["pinned"].detail
            assert pids(registry)["keep"] == before["keep"]
            assert not any(name.startswith("pinned__") for name in names(registry))
            result = await registry.reload(first)  # the tampered pins stay in force
            assert "pinned" in result.failed
            result = await registry.reload(first, pins=approved)
            assert (result.added, result.unchanged) == (("pinned",), ("keep",))
            assert any(name.startswith("pinned__") for name in names(registry))
            assert registry.pins is approved
