"""Server specs: the transport a table picks; the rules for URLs, headers, values and deferral."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest
from config_support import SECRET, Write, http, problems_of
from pydantic import TypeAdapter, ValidationError

from mcpmount.config import HttpServer, ServerSpec, StdioServer, load_config
from mcpmount.config._server import PIN_RENAMED
from mcpmount.errors import ConfigError

_TAGS = "'stdio', 'http', 'sse' or 'auto'"


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
        ('comand = "x"', "servers.fs.comand: unknown key; did you mean 'command'?"),
        ('ulr = "https://a.example"', "servers.fs.ulr: unknown key; did you mean 'url'?"),
    ],
)
def test_a_misspelt_command_or_url_is_named_with_a_suggestion(
    write: Write, body: str, problem: str
) -> None:
    """Without command or url, a key close to one of them is taken for it, misspelt."""
    path = write("servers.toml", f'[servers.fs]\n{body}\nargs = ["a"]\nzzz = 1\n')
    assert problems_of(path) == (problem,)


def test_server_spec_is_a_union_told_apart_by_command_or_url() -> None:
    """Validating a table as a `ServerSpec` gives the kind its keys imply; a spec stays itself."""
    adapter = TypeAdapter[ServerSpec](ServerSpec)
    assert isinstance(adapter.validate_python({"command": "x"}), StdioServer)
    assert isinstance(adapter.validate_python({"url": "https://a.example"}), HttpServer)
    spec = HttpServer(url="https://a.example")
    assert adapter.validate_python(spec) is spec
    with pytest.raises(ValidationError, match="says stdio, but url means http"):
        adapter.validate_python({"url": "https://a.example", "transport": "stdio"})


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
        ('transport = "ws"\ncommand = "x"', f"servers.fs.transport: must be {_TAGS}"),
        ("transport = 1\ncommand = 'x'", f"servers.fs.transport: must be {_TAGS}"),
        (
            'transport = "sse"\ncommand = "x"',
            "servers.fs.transport: says sse, but command means stdio",
        ),
        (
            'transport = "sse"\nurl = "https://a.example"\nget_stream = false',
            "servers.fs.get_stream: applies to streamable HTTP only; an SSE server's one "
            "stream is its GET",
        ),
    ],
)
def test_an_explicit_transport_must_agree_with_command_or_url(
    write: Write, body: str, problem: str
) -> None:
    """An explicit transport that contradicts the keys, or is unknown, is one clear error."""
    path = write("servers.toml", f"[servers.fs]\n{body}\n")
    assert problems_of(path) == (problem,)


@pytest.mark.parametrize("transport", ["http", "sse", "auto"])
def test_a_url_server_may_name_how_it_is_reached(write: Write, transport: str) -> None:
    """``transport`` on a url server picks streamable HTTP, SSE or either; http by default."""
    path = write(
        "servers.toml", f'[servers.a]\nurl = "https://a.example"\ntransport = "{transport}"\n'
    )
    assert http(load_config(path, environ={}), "a").transport == transport
    assert HttpServer(url="https://a.example").transport == "http"
    assert HttpServer(url="https://a.example").get_stream is True


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
        (
            'invalid_names = "drop"',
            "servers.fs.invalid_names: must be 'refuse', 'skip' or 'sanitize'",
        ),
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


def test_display_url_hides_the_userinfo_and_query_values_and_drops_the_fragment() -> None:
    """``display_url`` keeps scheme, host, port, path, the user beside a password and the
    query's keys and plain values: safe to put in a message, and the reader can tell which
    key. Only the credentials are secrets."""
    server = HttpServer(url="https://user:pw@api.example.com:8443/v1/mcp?token=abc&v=2&x=long#top")
    assert (
        server.display_url() == "https://user:***@api.example.com:8443/v1/mcp?token=***&v=2&x=long"
    )
    assert "pw" not in repr(server)
    assert "abc" not in str(server)


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


def test_a_secret_never_appears_in_pydantic_errors_from_code() -> None:
    """Building a spec in code with a bad value does not echo it either."""
    with pytest.raises(ValidationError) as caught:
        StdioServer(command="x", heders={"Authorization": SECRET})  # pyright: ignore[reportCallIssue]
    assert SECRET not in str(caught.value)


def test_the_old_pin_key_is_read_as_visible_with_a_warning(
    write: Write, caplog: pytest.LogCaptureFixture
) -> None:
    """``pin`` was renamed ``visible`` ("pins" are the lock file's): a file that still says
    ``pin`` loads the same, and is told where to rename it; ``visible`` loads silently."""
    old = write("old.toml", '[servers.fs]\ncommand = "x"\ndefer = true\npin = ["read*"]\n')
    new = write("new.toml", '[servers.fs]\ncommand = "x"\ndefer = true\nvisible = ["read*"]\n')
    with caplog.at_level(logging.WARNING, logger="mcpmount"):
        specs = [load_config(path, environ={}).servers["fs"] for path in (new, old)]
    assert specs[0] == specs[1]
    assert specs[1].visible == ["read*"]
    assert not specs[1].is_deferred("read_file", False)
    assert specs[1].is_deferred("write_file", False)
    warned = [record.getMessage() for record in caplog.records]
    assert warned == ["servers.fs.pin: " + PIN_RENAMED]
    both = write("both.toml", '[servers.fs]\ncommand = "x"\npin = ["a"]\nvisible = ["b"]\n')
    assert problems_of(both) == (
        "servers.fs.pin: the old name of `visible`, which is set too: merge it into `visible`",
    )
    with pytest.warns(DeprecationWarning, match="visible"):
        built = StdioServer(command="x", pin=["read*"])  # pyright: ignore[reportCallIssue]
    assert built.visible == ["read*"]
    with pytest.raises(ValidationError, match="merge it into `visible`"):
        StdioServer(command="x", pin=["a"], visible=["b"])  # pyright: ignore[reportCallIssue]


@pytest.mark.parametrize(
    ("defer", "visible", "defer_all", "raw_name", "deferred"),
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
def test_is_deferred_follows_defer_and_defer_all_but_visible_wins(
    defer: bool | list[str], visible: list[str], defer_all: bool, raw_name: str, deferred: bool
) -> None:
    """``visible`` beats ``defer`` and ``defer_all``; globs are case-sensitive fnmatch patterns."""
    server = StdioServer(command="x", defer=defer, visible=visible)
    assert server.is_deferred(raw_name, defer_all) is deferred


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
    small = config.servers["small"].effective(config.settings)
    assert (small.max_tools, small.max_message_bytes) == (50, 1024)
    assert config.servers["other"].effective(config.settings).max_tools == 200
    path.write_text('[servers.bad]\ncommand = "srv"\nmax_pages = 0\n')
    with pytest.raises(ConfigError, match=r"servers\.bad\.max_pages: must be greater than 0"):
        load_config(path, environ={})
