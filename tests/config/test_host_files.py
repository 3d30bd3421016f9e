"""MCP host files: the {"mcpServers": {...}} JSON that Claude Desktop and .mcp.json use."""

from __future__ import annotations

import pytest
from config_support import Write, http, problems_of, stdio

from mcpmount.config import load_config


def test_a_json_host_file_loads_stdio_and_streamable_http_servers(write: Write) -> None:
    """An ``mcpServers`` JSON file loads; every streamable HTTP spelling of "type" maps to http."""
    path = write(
        ".mcp.json",
        """
        {
          "mcpServers": {
            "files": {"command": "npx", "args": ["-y", "fs"], "env": {"A": "b"}, "cwd": "/srv"},
            "one": {"url": "https://one.example/mcp", "headers": {"X-Key": "k"}},
            "two": {"type": "http", "url": "https://two.example/mcp"},
            "three": {"type": "streamable-http", "url": "https://three.example/mcp"},
            "four": {"type": "streamableHttp", "url": "https://four.example/mcp"},
            "five": {"type": "stdio", "command": "uvx"}
          },
          "globalShortcut": "Ctrl+Space"
        }
        """,
    )
    config = load_config(path, environ={})
    files = stdio(config, "files")
    assert (files.command, files.args, files.cwd) == ("npx", ["-y", "fs"], "/srv")
    assert files.env_values() == {"A": "b"}
    assert http(config, "one").header_values() == {"X-Key": "k"}
    assert [type(spec).__name__ for spec in config.servers.values()] == [
        "StdioServer",
        "HttpServer",
        "HttpServer",
        "HttpServer",
        "HttpServer",
        "StdioServer",
    ]


def test_a_json_sse_server_is_a_url_server_on_the_sse_transport(write: Write) -> None:
    """``"type": "sse"`` mounts the URL over the legacy HTTP+SSE transport."""
    path = write(
        ".mcp.json",
        '{"mcpServers": {"old": {"type": "sse", "url": "https://old.example/sse"}, '
        '"new": {"url": "https://new.example/mcp"}}}',
    )
    config = load_config(path, environ={})
    assert (http(config, "old").transport, http(config, "old").url) == (
        "sse",
        "https://old.example/sse",
    )
    assert http(config, "new").transport == "http"  # no type: streamable HTTP, as before


@pytest.mark.parametrize(
    ("name", "namespace"),
    [
        ("GitHub", "github"),
        ("my server", "my-server"),
        ("Brave Search (personal)", "brave-search-personal"),
        ("123 Files!", "files"),
        ("A__B", "a-b"),
        ("snake_case", "snake_case"),
        ("x" * 40, "x" * 32),
        ("café", "caf"),
    ],
)
def test_json_server_names_are_normalized_to_namespaces(
    write: Write, name: str, namespace: str
) -> None:
    """Host names are lowercased, invalid runs become '-', leading non-letters go, 32 max."""
    path = write("servers.json", f'{{"mcpServers": {{"{name}": {{"command": "x"}}}}}}')
    assert list(load_config(path, environ={}).servers) == [namespace]


def test_two_json_names_that_normalize_alike_are_an_error_naming_both(write: Write) -> None:
    """Two host names mapping to one namespace are refused, naming both."""
    path = write(
        "servers.json",
        '{"mcpServers": {"GitHub": {"command": "a"}, "github": {"command": "b"}}}',
    )
    assert problems_of(path) == (
        'mcpServers.github: "GitHub" and "github" both become the namespace \'github\'; rename one',
    )


def test_a_json_name_without_letters_is_an_error(write: Write) -> None:
    """A name that yields no namespace at all is refused."""
    path = write("servers.json", '{"mcpServers": {"123": {"command": "a"}}}')
    assert problems_of(path) == ("mcpServers.123: cannot derive a namespace: no ASCII letter",)


def test_a_disabled_json_server_is_skipped_with_a_note(write: Write) -> None:
    """``"disabled": true`` skips the server entirely, even a broken one, and says so."""
    path = write(
        "servers.json",
        """
        {"mcpServers": {
          "on": {"command": "a", "disabled": false},
          "off": {"disabled": true, "url": "ftp://nope", "whatever": 1}
        }}
        """,
    )
    config = load_config(path, environ={})
    assert list(config.servers) == ["on"]
    assert config.notes == ('mcpServers.off: not mounted: the file disables it ("disabled": true)',)


def test_host_only_json_keys_are_ignored_but_other_keys_are_errors(write: Write) -> None:
    """Keys hosts add that mean nothing here (timeout, dev, ...) are ignored; anything else
    is unknown."""
    path = write(
        "servers.json",
        """
        {"mcpServers": {
          "fs": {"command": "a", "timeout": 60, "dev": {"watch": "src/**"},
                 "description": "files", "disabledTools": []},
          "bad": {"command": "a", "arg": ["x"], "required": false}
        }}
        """,
    )
    assert problems_of(path) == (
        "mcpServers.bad.arg: unknown key; did you mean 'args'?",
        "mcpServers.bad.required: unknown key",
    )


@pytest.mark.parametrize(
    ("entry", "problem"),
    [
        (
            '{"type": "websocket", "url": "https://a.example"}',
            "mcpServers.fs.type: must be one of 'stdio', 'http', 'streamable-http', "
            "'streamableHttp', 'sse'",
        ),
        (
            '{"type": "sse", "command": "a"}',
            "mcpServers.fs.type: says sse, but command means stdio",
        ),
        (
            '{"type": "stdio", "url": "https://a.example"}',
            "mcpServers.fs.type: says stdio, but url means http",
        ),
        ('{"command": "a", "env": []}', "mcpServers.fs.env: must be an object"),
        ('"npx"', "mcpServers.fs: must be an object"),
    ],
)
def test_a_bad_json_server_entry_names_its_key(write: Write, entry: str, problem: str) -> None:
    """JSON problems are named by the host file's own keys."""
    path = write("servers.json", f'{{"mcpServers": {{"fs": {entry}}}}}')
    assert problems_of(path) == (problem,)


def test_a_json_file_without_mcpservers_is_an_error(write: Write) -> None:
    """A JSON file must be an MCP host file: ``mcpServers``, or VS Code's ``servers``."""
    (problem,) = problems_of(write("servers.json", '{"mcpservers": {}}'))
    assert problem.startswith("mcpServers: is required")
    assert "VS Code JSON" in problem
    assert "goose YAML" in problem


def test_mcpmount_variables_apply_to_json_host_files(write: Write) -> None:
    """A JSON file has no ``[registry]`` table, so settings come from the environment."""
    path = write("servers.json", '{"mcpServers": {}}')
    config = load_config(path, environ={"MCPMOUNT_MAX_TOOLS": "7"})
    assert config.settings.max_tools == 7
