"""Config loading: TOML and mcpServers JSON in, strict frozen data or one line per problem out."""

from __future__ import annotations

import logging
import textwrap
from collections.abc import Callable, Mapping
from pathlib import Path

import pytest
from pydantic import ValidationError

from mcpmount.config import (
    HttpServer,
    RegistryConfig,
    RegistrySettings,
    StdioServer,
    load_config,
)
from mcpmount.errors import ConfigError

Write = Callable[[str, str], Path]

SECRET = "s3cr3t-value"


@pytest.fixture(name="write")
def _write(tmp_path: Path) -> Write:
    """Write a config file into tmp_path and return its path."""

    def write(name: str, text: str) -> Path:
        path = tmp_path / name
        path.write_text(textwrap.dedent(text), encoding="utf-8")
        return path

    return write


def problems_of(path: Path, environ: Mapping[str, str] | None = None) -> tuple[str, ...]:
    """Load ``path``, expecting a ConfigError for it, and return its problems."""
    with pytest.raises(ConfigError) as caught:
        load_config(path, environ={} if environ is None else environ)
    assert caught.value.path == str(path)
    return caught.value.problems


def stdio(config: RegistryConfig, namespace: str) -> StdioServer:
    spec = config.servers[namespace]
    assert isinstance(spec, StdioServer)
    return spec


def http(config: RegistryConfig, namespace: str) -> HttpServer:
    spec = config.servers[namespace]
    assert isinstance(spec, HttpServer)
    return spec


# --- valid files ---------------------------------------------------------------------------


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


# --- ${VAR} expansion ----------------------------------------------------------------------


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


def test_variables_expand_in_env_cwd_url_and_headers_but_not_in_command(write: Write) -> None:
    """Expansion touches args, env, cwd, url and headers values, and nothing else."""
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
    assert fs.command == "${TOOL}"
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


# --- transports ----------------------------------------------------------------------------


def test_giving_both_command_and_url_is_one_clear_error(write: Write) -> None:
    """Both transports at once is one line that says so, not pydantic's union noise."""
    path = write("servers.toml", '[servers.fs]\ncommand = "x"\nurl = "https://a.example"\n')
    assert problems_of(path) == ("servers.fs: give either command (stdio) or url (http), not both",)


def test_giving_neither_command_nor_url_is_one_clear_error(write: Write) -> None:
    """No transport at all is one line that says what to add."""
    path = write("servers.toml", '[servers.fs]\ntransport = "stdio"\nargs = ["a"]\n')
    assert problems_of(path) == ("servers.fs: give either command (stdio) or url (http)",)


@pytest.mark.parametrize(
    ("body", "problem"),
    [
        (
            'transport = "http"\ncommand = "x"',
            "servers.fs.transport: says http, but command means stdio",
        ),
        (
            'transport = "stdio"\nurl = "https://a.example"',
            "servers.fs.transport: says stdio, but url means http",
        ),
        ('transport = "ws"\ncommand = "x"', "servers.fs.transport: must be 'stdio' or 'http'"),
        ("transport = 1\ncommand = 'x'", "servers.fs.transport: must be 'stdio' or 'http'"),
        (
            'transport = "sse"\nurl = "https://a.example"',
            'servers.fs.transport: SSE is not supported; use streamable HTTP (transport = "http")',
        ),
    ],
)
def test_an_explicit_transport_must_agree_with_command_or_url(
    write: Write, body: str, problem: str
) -> None:
    """An explicit transport that contradicts the keys, or is unknown, is one clear error."""
    path = write("servers.toml", f"[servers.fs]\n{body}\n")
    assert problems_of(path) == (problem,)


# --- keys and types ------------------------------------------------------------------------


def test_an_unknown_key_is_an_error_with_a_suggestion(write: Write) -> None:
    """A misspelled key is named, with the closest real key as a suggestion."""
    path = write(
        "servers.toml",
        """
        server = 1

        [registry]
        max_toolz = 64

        [servers.fs]
        command = "x"
        arsg = ["a"]
        zzz = 1
        """,
    )
    assert problems_of(path) == (
        "server: unknown key; did you mean 'servers'?",
        "registry.max_toolz: unknown key; did you mean 'max_tools'?",
        "servers.fs.arsg: unknown key; did you mean 'args'?",
        "servers.fs.zzz: unknown key",
    )


def test_a_key_that_belongs_to_the_other_transport_says_so(write: Write) -> None:
    """``headers`` on a stdio server, or ``env`` on an http one, names the transport it needs."""
    path = write(
        "servers.toml",
        """
        [servers.fs]
        command = "x"
        headers = { A = "b" }

        [servers.api]
        url = "https://a.example"
        env = { A = "b" }
        """,
    )
    assert problems_of(path) == (
        "servers.fs.headers: unknown key; only http servers take it",
        "servers.api.env: unknown key; only stdio servers take it",
    )


@pytest.mark.parametrize(
    ("namespace", "reason"),
    [
        ("GitHub", "lowercase"),
        ("a__b", "'__'"),
        ("a" * 33, "at most 32"),
        ("1abc", "starting with a letter"),
        ("my.server", "lowercase"),
    ],
)
def test_an_invalid_namespace_is_an_error(write: Write, namespace: str, reason: str) -> None:
    """The server key is the namespace, and a bad one is named with the rule it breaks."""
    path = write("servers.toml", f'[servers.{namespace!r}]\ncommand = "x"\n')
    (problem,) = problems_of(path)
    quoted = f'"{namespace}"' if "." in namespace else namespace
    assert problem.startswith(f"servers.{quoted}: ")
    assert reason in problem


def test_args_given_as_a_string_is_an_error_and_never_split(write: Write) -> None:
    """``args = "a b"`` is refused rather than split on spaces."""
    path = write("servers.toml", '[servers.fs]\ncommand = "x"\nargs = "-y server"\n')
    assert problems_of(path) == (
        "servers.fs.args: must be a list of strings (a single string is never split into "
        "arguments)",
    )


@pytest.mark.parametrize(
    ("body", "problem"),
    [
        ("startup_timeout = -1", "servers.fs.startup_timeout: must be greater than 0"),
        ("call_timeout = 0", "servers.fs.call_timeout: must be greater than 0"),
        ("call_timeout = inf", "servers.fs.call_timeout: must be a finite number"),
        ('call_timeout = "30"', "servers.fs.call_timeout: must be a number"),
        ('required = "no"', "servers.fs.required: must be true or false"),
        ('invalid_names = "drop"', "servers.fs.invalid_names: must be 'refuse' or 'skip'"),
        ('defer = "yes"', "servers.fs.defer: must be true, false or a list of globs"),
        ("defer = [1]", "servers.fs.defer: must be true, false or a list of globs"),
        ("env = { A = 1 }", "servers.fs.env.A: must be a string"),
        ('env = { "A=B" = "c" }', 'servers.fs.env."A=B": is not a valid environment variable'),
        ("env = []", "servers.fs.env: must be a table"),
        ('command = ""', "servers.fs.command: must not be empty"),
    ],
)
def test_a_wrongly_typed_or_out_of_range_value_names_the_key(
    write: Write, body: str, problem: str
) -> None:
    """Types are strict and limits are enforced, each error naming its key."""
    command = "" if body.startswith("command") else 'command = "x"\n'
    path = write("servers.toml", f"[servers.fs]\n{command}{body}\n")
    (found,) = problems_of(path)
    assert found.startswith(problem)


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


def test_every_problem_in_the_file_is_reported_at_once(write: Write) -> None:
    """Problems in several servers and the registry come back together, in file order."""
    path = write(
        "servers.toml",
        """
        [registry]
        max_name_length = 1

        [servers.a]
        comand = "x"

        [servers.b]
        command = "x"
        args = "y"
        """,
    )
    assert len(problems_of(path)) == 3


# --- URLs ----------------------------------------------------------------------------------


def test_https_is_required_for_a_host_that_is_not_loopback(write: Write) -> None:
    """Plain http to a remote host is refused, with the way out in the message."""
    path = write("servers.toml", '[servers.api]\nurl = "http://api.example.com/mcp"\n')
    (problem,) = problems_of(path)
    assert problem.startswith("servers.api.url: must use https unless the host is loopback")
    assert "allow_insecure = true" in problem


@pytest.mark.parametrize(
    "url",
    [
        "http://127.0.0.1:8000/mcp",
        "http://127.4.5.6/mcp",
        "http://localhost:3000/mcp",
        "http://LOCALHOST/mcp",
        "http://[::1]:8000/mcp",
    ],
)
def test_plain_http_is_allowed_for_loopback_hosts(write: Write, url: str) -> None:
    """127.0.0.0/8, localhost and ::1 may use plain http."""
    path = write("servers.toml", f"[servers.api]\nurl = {url!r}\n")
    assert http(load_config(path, environ={}), "api").url == url


def test_allow_insecure_permits_plain_http_to_any_host(write: Write) -> None:
    """``allow_insecure = true`` is the explicit opt-in for plain http."""
    path = write(
        "servers.toml",
        '[servers.api]\nurl = "http://10.0.0.5/mcp"\nallow_insecure = true\n',
    )
    assert http(load_config(path, environ={}), "api").allow_insecure is True


@pytest.mark.parametrize(
    ("url", "problem"),
    [
        ("ftp://files.example.com", "must be an http:// or https:// URL"),
        ("search.example.com/mcp", "must be an http:// or https:// URL"),
        ("https:///mcp", "must include a host"),
        ("https://a.example/m cp", "must not contain whitespace or control characters"),
        ("https://a.example:99999/mcp", "is not a valid URL"),
        ("https://[::1/mcp", "is not a valid URL"),
    ],
)
def test_a_url_that_is_not_http_is_an_error(write: Write, url: str, problem: str) -> None:
    """Only well-formed http(s) URLs with a host are accepted."""
    path = write("servers.toml", f"[servers.api]\nurl = {url!r}\n")
    assert problems_of(path) == (f"servers.api.url: {problem}",)


def test_display_url_drops_userinfo_query_and_fragment() -> None:
    """``display_url`` keeps scheme, host, port and path: safe to put in a message."""
    server = HttpServer(url="https://user:pw@api.example.com:8443/v1/mcp?token=abc#top")
    assert server.display_url() == "https://api.example.com:8443/v1/mcp"
    assert "pw" not in repr(server)
    assert "token" not in str(server)


@pytest.mark.parametrize("name", ["Bad Name", "X:Y", ""])
def test_a_header_name_must_be_an_http_token(name: str) -> None:
    """Header names with spaces, colons or nothing at all are refused."""
    with pytest.raises(ValidationError):
        HttpServer(url="https://a.example", headers={name: "v"})  # pyright: ignore[reportArgumentType]


def test_a_header_value_with_a_line_break_is_refused_without_echoing_it(write: Write) -> None:
    """Header injection is refused, and the message does not quote the value."""
    path = write(
        "servers.toml",
        '[servers.api]\nurl = "https://a.example"\nheaders = { A = "x\\r\\nB: s3cr3t" }\n',
    )
    assert problems_of(path) == (
        "servers.api.headers.A: must not contain a line break or a NUL character",
    )


# --- files ---------------------------------------------------------------------------------


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


# --- mcpServers JSON -----------------------------------------------------------------------


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


def test_a_disabled_json_server_is_skipped(write: Write) -> None:
    """``"disabled": true`` skips the server entirely, even a broken one."""
    path = write(
        "servers.json",
        """
        {"mcpServers": {
          "on": {"command": "a", "disabled": false},
          "off": {"disabled": true, "url": "ftp://nope", "whatever": 1}
        }}
        """,
    )
    assert list(load_config(path, environ={}).servers) == ["on"]


def test_host_only_json_keys_are_ignored_but_other_keys_are_errors(write: Write) -> None:
    """Keys hosts add (autoApprove, timeout, ...) are ignored; anything else is unknown."""
    path = write(
        "servers.json",
        """
        {"mcpServers": {
          "fs": {"command": "a", "autoApprove": ["x"], "alwaysAllow": [], "timeout": 60,
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
            '{"type": "sse", "url": "https://a.example/sse"}',
            'mcpServers.fs.type: SSE is not supported; use streamable HTTP ("type": "http")',
        ),
        (
            '{"type": "websocket", "url": "https://a.example"}',
            "mcpServers.fs.type: must be one of 'stdio', 'http', 'streamable-http', "
            "'streamableHttp'",
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
    """A JSON file must be an MCP host file."""
    (problem,) = problems_of(write("servers.json", '{"servers": {}}'))
    assert problem.startswith("mcpServers: is required")


# --- MCPMOUNT_* settings -------------------------------------------------------------------


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


def test_mcpmount_variables_apply_to_json_host_files(write: Write) -> None:
    """A JSON file has no ``[registry]`` table, so settings come from the environment."""
    path = write("servers.json", '{"mcpServers": {}}')
    config = load_config(path, environ={"MCPMOUNT_MAX_TOOLS": "7"})
    assert config.settings.max_tools == 7


def test_registry_settings_built_in_code_read_mcpmount_variables(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """``RegistrySettings()`` reads ``MCPMOUNT_*``; explicit arguments still win."""
    monkeypatch.setenv("MCPMOUNT_MAX_PAGES", "3")
    monkeypatch.setenv("MCPMOUNT_MAX_TOOLS", "4")
    settings = RegistrySettings(max_tools=5)
    assert (settings.max_pages, settings.max_tools) == (3, 5)


# --- secrets -------------------------------------------------------------------------------


def test_a_secret_never_appears_in_reprs_or_error_output(write: Write) -> None:
    """Secrets in env, headers, url and under a misspelled key never reach repr or errors."""
    good = write(
        "good.toml",
        f"""
        [servers.fs]
        command = "x"
        env = {{ TOKEN = "{SECRET}" }}

        [servers.api]
        url = "https://user:{SECRET}@api.example.com/mcp?key={SECRET}"
        headers = {{ Authorization = "Bearer ${{TOKEN}}" }}
        """,
    )
    config = load_config(good, environ={"TOKEN": SECRET})
    for text in (repr(config), str(config), repr(config.servers), str(config.servers["api"])):
        assert SECRET not in text
    assert http(config, "api").header_values() == {"Authorization": f"Bearer {SECRET}"}

    bad = write(
        "bad.toml",
        f"""
        [servers.api]
        url = "https://api.example.com/mcp"
        heders = {{ Authorization = "Bearer {SECRET}" }}
        headers = {{ Authorization = ["Bearer {SECRET}"], "X Y" = "{SECRET}" }}

        [servers.fs]
        command = "x"
        env = {{ TOKEN = 42, OTHER = "{SECRET}" }}
        args = "{SECRET}"
        startup_timeout = "{SECRET}"
        """,
    )
    with pytest.raises(ConfigError) as caught:
        load_config(bad, environ={})
    assert len(caught.value.problems) == 6
    assert SECRET not in str(caught.value)
    assert SECRET not in repr(caught.value)
    assert caught.value.__cause__ is None
    assert caught.value.__context__ is None


def test_a_secret_never_appears_in_pydantic_errors_from_code() -> None:
    """Building a spec in code with a bad value does not echo it either."""
    with pytest.raises(ValidationError) as caught:
        StdioServer(command="x", heders={"Authorization": SECRET})  # pyright: ignore[reportCallIssue]
    assert SECRET not in str(caught.value)


# --- paths ---------------------------------------------------------------------------------


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


# --- deferral ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("defer", "pin", "defer_all", "raw_name", "deferred"),
    [
        (False, [], False, "read", False),
        (True, [], False, "read", True),
        (False, [], True, "read", True),
        (["admin_*"], [], False, "admin_delete", True),
        (["admin_*"], [], False, "read", False),
        (["admin_*"], [], True, "read", True),
        (True, ["read*"], False, "read_file", False),
        (True, ["read*"], False, "write_file", True),
        (False, ["read*"], True, "read_file", False),
        (["*"], ["Read"], False, "read", True),
    ],
)
def test_is_deferred_follows_defer_and_defer_all_but_pin_wins(
    defer: bool | list[str], pin: list[str], defer_all: bool, raw_name: str, deferred: bool
) -> None:
    """``pin`` beats ``defer`` and ``defer_all``; globs are case-sensitive fnmatch patterns."""
    server = StdioServer(command="x", defer=defer, pin=pin)
    assert server.is_deferred(raw_name, defer_all) is deferred


# --- in code -------------------------------------------------------------------------------


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


def test_config_objects_are_frozen(write: Write) -> None:
    """Specs, settings and the servers mapping cannot be changed after loading."""
    config = load_config(write("servers.toml", '[servers.fs]\ncommand = "x"\n'), environ={})
    with pytest.raises(ValidationError):
        config.servers["fs"].required = False  # pyright: ignore[reportAttributeAccessIssue]
    with pytest.raises(ValidationError):
        config.settings.max_tools = 1  # pyright: ignore[reportAttributeAccessIssue]
    with pytest.raises(TypeError):
        config.servers["other"] = StdioServer(command="y")  # pyright: ignore[reportIndexIssue]


def test_per_server_limits_override_the_registry_and_are_range_checked(tmp_path: Path) -> None:
    """`[servers.x] max_tools = 50` overrides the registry's limit for that server only."""
    path = tmp_path / "servers.toml"
    path.write_text(
        '[registry]\nmax_tools = 200\n\n[servers.small]\ncommand = "srv"\nmax_tools = 50\n'
        'max_message_bytes = 1024\n\n[servers.other]\ncommand = "srv"\n'
    )
    config = load_config(path, environ={})
    small = config.servers["small"].limits(config.settings)
    assert (small.max_tools, small.max_message_bytes) == (50, 1024)
    assert config.servers["other"].limits(config.settings).max_tools == 200
    path.write_text('[servers.bad]\ncommand = "srv"\nmax_pages = 0\n')
    with pytest.raises(ConfigError, match=r"servers\.bad\.max_pages: must be greater than 0"):
        load_config(path, environ={})


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
