"""Loading a config file: valid TOML, ${VAR} expansion, paths, and files that cannot be read."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest
from config_support import Write, http, problems_of, stdio

from mcpmount.config import RegistrySettings, load_config


def test_a_stdio_server_loads_with_its_command_args_and_env(write: Write) -> None:
    """A server with ``command`` is a StdioServer carrying every key as written."""
    path = write(
        "servers.toml",
        """
        [servers.fs]
        command = "npx"
        args = ["-y", "@modelcontextprotocol/server-filesystem"]
        env = { LOG_LEVEL = "warn" }
        defer = true
        required = false
        call_timeout = 5
        """,
    )
    config = load_config(path, environ={})
    fs = stdio(config, "fs")
    assert fs.command == "npx"
    assert fs.args == ["-y", "@modelcontextprotocol/server-filesystem"]
    assert fs.env_values() == {"LOG_LEVEL": "warn"}
    assert (fs.defer, fs.required, fs.call_timeout, fs.startup_timeout) == (True, False, 5.0, None)
    assert config.path == path
    assert config.settings == RegistrySettings()


def test_an_http_server_loads_with_its_url_and_headers(write: Write) -> None:
    """A server with ``url`` is an HttpServer; an explicit agreeing transport is accepted."""
    path = write(
        "servers.toml",
        """
        [servers.search]
        transport = "http"
        url = "https://search.example.com/mcp"
        headers = { Authorization = "Bearer abc" }
        """,
    )
    search = http(load_config(path, environ={}), "search")
    assert search.url == "https://search.example.com/mcp"
    assert search.header_values() == {"Authorization": "Bearer abc"}


def test_servers_keep_file_order_and_the_registry_table_sets_the_settings(write: Write) -> None:
    """Namespaces come out in file order, and ``[registry]`` overrides the defaults."""
    path = write(
        "servers.toml",
        """
        [registry]
        max_name_length = 80
        startup_timeout = 2.5
        defer_all = true

        [servers.zeta]
        command = "z"

        [servers.alpha]
        command = "a"
        """,
    )
    config = load_config(path, environ={})
    assert list(config.servers) == ["zeta", "alpha"]
    assert config.settings.max_name_length == 80
    assert config.settings.startup_timeout == 2.5
    assert config.settings.defer_all is True
    assert config.settings.call_timeout == 120.0


def test_a_file_without_servers_is_an_empty_config(write: Write) -> None:
    """A config may declare no servers at all (servers can be mounted later)."""
    assert load_config(write("empty.toml", ""), environ={}).servers == {}


@pytest.mark.parametrize(
    ("written", "expanded"),
    [
        ("${HOME}/notes", "/home/ada/notes"),
        ("${UNSET:-fallback}", "fallback"),
        ("${EMPTY:-fallback}", "fallback"),
        ("${EMPTY}", ""),
        ("${HOME:-unused}", "/home/ada"),
        ("$${HOME}", "${HOME}"),
        ("cost: $$5", "cost: $5"),
        ("a lone $ stays", "a lone $ stays"),
        ("$HOME", "$HOME"),
        ("~/notes", "~/notes"),
        ("*.txt", "*.txt"),
    ],
)
def test_variables_expand_with_defaults_and_double_dollar_is_a_literal_dollar(
    write: Write, written: str, expanded: str
) -> None:
    """``${VAR}`` and ``${VAR:-default}`` expand; ``$$``, ``$NAME``, ``~`` and globs do not."""
    path = write("servers.toml", f'[servers.fs]\ncommand = "x"\nargs = [{written!r}]\n')
    environ = {"HOME": "/home/ada", "EMPTY": ""}
    assert stdio(load_config(path, environ=environ), "fs").args == [expanded]


def test_variables_expand_in_command_env_cwd_url_and_headers(write: Write) -> None:
    """Expansion touches command, args, env, cwd, url and headers values (as Claude Code's
    does), and nothing else."""
    path = write(
        "servers.toml",
        """
        [servers.fs]
        command = "${TOOL}"
        env = { TOKEN = "${TOKEN}" }
        cwd = "/srv/${TOOL}"

        [servers.api]
        url = "https://${HOST}/mcp"
        headers = { Authorization = "Bearer ${TOKEN}" }
        """,
    )
    environ = {"TOOL": "git", "TOKEN": "t0k", "HOST": "api.example.com"}
    config = load_config(path, environ=environ)
    fs, api = stdio(config, "fs"), http(config, "api")
    assert fs.command == "git"
    assert fs.env_values() == {"TOKEN": "t0k"}
    assert fs.cwd == "/srv/git"
    assert api.url == "https://api.example.com/mcp"
    assert api.header_values() == {"Authorization": "Bearer t0k"}


def test_an_unset_variable_without_default_names_the_variable_and_key(write: Write) -> None:
    """The error names the variable and the key, shows how to give a default, and stands alone."""
    path = write(
        "servers.toml",
        """
        [servers.search]
        url = "https://search.example.com/mcp"
        headers = { Authorization = "Bearer ${SEARCH_TOKEN}" }
        """,
    )
    assert problems_of(path) == (
        "servers.search.headers.Authorization: environment variable SEARCH_TOKEN is not set "
        "(use ${SEARCH_TOKEN:-default} to give a default)",
    )


def test_an_unset_variable_in_args_names_the_argument_index(write: Write) -> None:
    """A list item is named by its index."""
    path = write("servers.toml", '[servers.fs]\ncommand = "x"\nargs = ["a", "${NOTES}"]\n')
    (problem,) = problems_of(path)
    assert problem.startswith("servers.fs.args[1]: environment variable NOTES is not set")


@pytest.mark.parametrize("written", ["${}", "${1A}", "${A", "${A:default}"])
def test_a_malformed_reference_is_an_error(write: Write, written: str) -> None:
    """A ``${`` that is not a well-formed reference is refused, with a hint about ``$$``."""
    path = write("servers.toml", f'[servers.fs]\ncommand = "x"\ncwd = {written!r}\n')
    (problem,) = problems_of(path)
    assert problem.startswith("servers.fs.cwd: malformed variable reference")
    assert "$$" in problem


def test_a_secret_looking_variable_in_args_is_warned_about(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """`${GITHUB_TOKEN}` in args is readable in /proc/<pid>/cmdline: a warning names the key."""
    path = tmp_path / "servers.toml"
    path.write_text('[servers.gh]\ncommand = "srv"\nargs = ["--token", "${GITHUB_TOKEN}"]\n')
    with caplog.at_level(logging.WARNING, logger="mcpmount.config"):
        load_config(path, environ={"GITHUB_TOKEN": "ghp_secretvalue123"})
    messages = [record.getMessage() for record in caplog.records]
    assert any("servers.gh.args[1]" in m and "GITHUB_TOKEN" in m for m in messages)
    assert not any("ghp_secretvalue123" in m for m in messages)


def test_a_relative_cwd_is_resolved_against_the_config_directory(write: Write) -> None:
    """``cwd`` is relative to the config file; relative paths in args are left alone."""
    path = write(
        "servers.toml",
        """
        [servers.rel]
        command = "x"
        args = ["./data"]
        cwd = "work"

        [servers.abs]
        command = "x"
        cwd = "/srv"
        """,
    )
    config = load_config(path, environ={})
    rel = stdio(config, "rel")
    assert rel.cwd == str(path.parent / "work")
    assert rel.args == ["./data"]
    assert stdio(config, "abs").cwd == "/srv"


def test_a_missing_file_is_one_problem(tmp_path: Path) -> None:
    """A missing file is reported, not silently loaded as an empty config."""
    assert problems_of(tmp_path / "nope.toml") == ("file not found",)


def test_a_directory_is_not_a_config_file(tmp_path: Path) -> None:
    """Pointing at a directory is one clear problem."""
    assert problems_of(tmp_path) == ("is a directory, not a config file",)


@pytest.mark.parametrize(
    "text",
    [
        '[servers.fs\ncommand = "x"\n',
        '[servers.fs]\ncommand = "x"\ncommand = "y"\n',
        '[servers.fs]\ncommand = "x"\n[servers.fs]\ncommand = "y"\n',
    ],
)
def test_a_toml_syntax_error_is_one_problem_with_the_parsers_message(
    write: Write, text: str
) -> None:
    """Syntax errors, duplicate keys and duplicate tables come back as tomllib words them."""
    (problem,) = problems_of(write("servers.toml", text))
    assert problem.startswith("invalid TOML: ")
    assert "line" in problem


def test_a_json_syntax_error_is_one_problem(write: Write) -> None:
    """Broken JSON is one problem with its position."""
    (problem,) = problems_of(write("servers.json", '{"mcpServers": {'))
    assert problem.startswith("invalid JSON: ")
    assert "line 1" in problem


def test_duplicate_keys_in_json_are_errors(write: Write) -> None:
    """JSON's silent last-one-wins is refused, for server names and keys inside a server."""
    path = write(
        "servers.json",
        """
        {"mcpServers": {
          "fs": {"command": "a"},
          "fs": {"command": "b", "args": [], "args": ["x"]}
        }}
        """,
    )
    assert problems_of(path) == (
        "mcpServers.fs: duplicate key",
        "mcpServers.fs.args: duplicate key",
    )


def test_a_byte_order_mark_is_tolerated(tmp_path: Path) -> None:
    """Files saved with a UTF-8 BOM (some Windows editors) still load."""
    path = tmp_path / "servers.json"
    path.write_bytes(b'\xef\xbb\xbf{"mcpServers": {"fs": {"command": "x"}}}')
    assert list(load_config(path, environ={}).servers) == ["fs"]
