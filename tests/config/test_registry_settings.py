"""Registry settings: the [registry] table, MCPMOUNT_* variables, and configs built in code."""

from __future__ import annotations

import pytest
from config_support import Write, problems_of

from mcpmount.config import RegistryConfig, RegistrySettings, StdioServer, load_config
from mcpmount.errors import ConfigError


@pytest.mark.parametrize(
    ("body", "problem"),
    [
        ("max_name_length = 40", "registry.max_name_length: must be at least 44"),
        ("max_name_length = 129", "registry.max_name_length: must be at most 128"),
        ("call_timeout = -5", "registry.call_timeout: must be greater than 0"),
        ("max_tools = 0", "registry.max_tools: must be greater than 0"),
    ],
)
def test_registry_settings_are_range_checked(write: Write, body: str, problem: str) -> None:
    """Registry limits are validated with the bound in the message."""
    assert problems_of(write("servers.toml", f"[registry]\n{body}\n")) == (problem,)


def test_mcpmount_variables_override_the_registry_table(write: Write) -> None:
    """``MCPMOUNT_<KEY>`` (any case) beats the file; unrelated MCPMOUNT_ variables are ignored."""
    path = write("servers.toml", "[registry]\nmax_name_length = 64\ncall_timeout = 9\n")
    environ = {
        "MCPMOUNT_MAX_NAME_LENGTH": "100",
        "mcpmount_defer_all": "true",
        "MCPMOUNT_CONFIG": "elsewhere.toml",
    }
    settings = load_config(path, environ=environ).settings
    assert settings.max_name_length == 100
    assert settings.defer_all is True
    assert settings.call_timeout == 9.0


@pytest.mark.parametrize(
    ("value", "problem"),
    [
        ("many", "MCPMOUNT_MAX_NAME_LENGTH: must be an integer"),
        ("20", "MCPMOUNT_MAX_NAME_LENGTH: must be at least 44"),
    ],
)
def test_a_bad_mcpmount_variable_is_an_error_naming_the_variable(
    write: Write, value: str, problem: str
) -> None:
    """A bad value from the environment names the variable, not ``registry.*``."""
    path = write("servers.toml", "[registry]\nmax_name_length = 64\n")
    assert problems_of(path, {"MCPMOUNT_MAX_NAME_LENGTH": value}) == (problem,)


def test_registry_settings_built_in_code_read_mcpmount_variables(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """``RegistrySettings()`` reads ``MCPMOUNT_*``; explicit arguments still win."""
    monkeypatch.setenv("MCPMOUNT_MAX_PAGES", "3")
    monkeypatch.setenv("MCPMOUNT_MAX_TOOLS", "4")
    settings = RegistrySettings(max_tools=5)
    assert (settings.max_pages, settings.max_tools) == (3, 5)


def test_load_config_reads_settings_from_the_given_environ_only(
    write: Write, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With ``environ=``, ``MCPMOUNT_*`` in the process environment is ignored, even a bad one."""
    monkeypatch.setenv("MCPMOUNT_MAX_TOOLS", "many")
    monkeypatch.setenv("MCPMOUNT_MAX_PAGES", "3")
    path = write("servers.toml", "[registry]\ncall_timeout = 9\n")
    settings = load_config(path, environ={"MCPMOUNT_DEFER_ALL": "1"}).settings
    assert (settings.max_tools, settings.max_pages) == (1000, 100)
    assert (settings.call_timeout, settings.defer_all) == (9.0, True)


@pytest.mark.parametrize(
    ("given", "expected"),
    [
        ({"max_tools": 5}, None),
        ({}, ("MCPMOUNT_MAX_TOOLS: must be an integer",)),
    ],
)
def test_from_servers_reads_mcpmount_variables_but_arguments_win(
    monkeypatch: pytest.MonkeyPatch, given: dict[str, object], expected: tuple[str, ...] | None
) -> None:
    """A variable fills a setting not given; a bad one is named, unless an argument wins."""
    monkeypatch.setenv("MCPMOUNT_MAX_TOOLS", "many")
    monkeypatch.setenv("MCPMOUNT_MAX_PAGES", "3")
    if expected is None:
        settings = RegistryConfig.from_servers({}, **given).settings
        assert (settings.max_tools, settings.max_pages) == (5, 3)
        return
    with pytest.raises(ConfigError) as caught:
        RegistryConfig.from_servers({}, **given)
    assert caught.value.problems == expected


def test_from_servers_builds_a_config_without_a_file() -> None:
    """Embedders build a config from specs and settings; it has no path."""
    fs = StdioServer(command="x")
    config = RegistryConfig.from_servers({"fs": fs}, max_name_length=100)
    assert config.servers == {"fs": fs}
    assert config.settings.max_name_length == 100
    assert config.path is None


def test_from_servers_validates_namespaces_and_settings() -> None:
    """Bad namespaces and settings raise one ConfigError with path "<code>"."""
    with pytest.raises(ConfigError) as caught:
        RegistryConfig.from_servers(
            {"Bad": StdioServer(command="x")}, max_name_length=10, colour="blue"
        )
    assert caught.value.path == "<code>"
    assert caught.value.problems == (
        "max_name_length: must be at least 44",
        "colour: unknown key",
        "servers.Bad: a namespace is lowercase ASCII letters, digits, '-' and single '_', "
        "starting with a letter and not ending in '_'",
    )
