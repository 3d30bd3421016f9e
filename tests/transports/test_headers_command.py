"""``headers_command``: headers from a helper's JSON output, run at mount and after a 401.

The servers are real (in-process uvicorn) behind `BearerGate`, which admits only the token
in a file the test rotates; the helper (``servers/header_helper.py``, run through a
``token-helper`` script so its program name is that) prints the token of another file and
counts its runs. Headers ride on every HTTP request the same way whatever the protocol era,
so the era only matters to the mount itself: the first test runs both. Every test requests
``no_leaks``: a helper that hangs, and the child it forked, are gone after the test.
"""

from __future__ import annotations

import json
import stat
import sys
from pathlib import Path

import anyio
import httpx2
import pytest
from starlette.types import ASGIApp, Receive, Scope, Send

from cli.cli_support import mcpmount
from http_fixture import build_http_fixture_server, serve_http
from mcpmount.config import HttpServer, load_config
from mcpmount.errors import (
    CallError,
    ConfigError,
    SecretRefusedError,
    ServerStartError,
    UpstreamError,
)
from mcpmount.registry import Registry
from mcpmount.transports import Diagnostics, _headers_command
from mcpmount.transports._headers_command import CommandHeaders  # pyright: ignore[reportPrivateUsage]
from mcpmount.transports._http_client import http_client  # pyright: ignore[reportPrivateUsage]
from servers.sse_faults import build_sse_server
from support import fixture, text_of, write_config

pytestmark = [pytest.mark.slow, pytest.mark.usefixtures("no_leaks")]

HELPER = Path(__file__).parent.parent / "servers" / "header_helper.py"

UNREACHED = "http://127.0.0.1:9/mcp"
"""A URL for tests where the helper fails first: no request is ever sent to it."""


class BearerGate:
    """Admit only HTTP requests bearing ``Bearer <the token in valid>``; 401 the others."""

    def __init__(self, app: ASGIApp, valid: Path) -> None:
        self.app = app
        self.valid = valid
        self.refused = 0

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            expected = f"Bearer {self.valid.read_text().strip()}".encode()
            sent = [value for name, value in scope["headers"] if name == b"authorization"]
            if sent != [expected]:
                self.refused += 1
                headers = [(b"www-authenticate", b'Bearer realm="test"')]
                await send({"type": "http.response.start", "status": 401, "headers": headers})
                await send({"type": "http.response.body", "body": b""})
                return
        await self.app(scope, receive, send)


class Tokens:
    """The folder the helper reads its token from and counts its runs in."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.valid = folder / "valid"
        self.helper = folder / "token-helper"
        self.helper.write_text(f'#!/bin/sh\nexec "{sys.executable}" "{HELPER}" "$@"\n')
        self.helper.chmod(self.helper.stat().st_mode | stat.S_IXUSR)
        self.set("tok-first-0123456789")

    def set(self, token: str, *, helper_too: bool = True) -> None:
        """Make ``token`` the valid one, and (unless told otherwise) the one printed."""
        self.token = token
        self.valid.write_text(token)
        if helper_too:
            (self.folder / "token").write_text(token)

    def runs(self) -> int:
        path = self.folder / "runs"
        return len(path.read_text().splitlines()) if path.exists() else 0

    def command(self, mode: str = "ok") -> list[str]:
        return [str(self.helper), str(self.folder), mode]


@pytest.fixture(name="tokens")
def tokens_fixture(tmp_path: Path) -> Tokens:
    return Tokens(tmp_path)


def spec(url: str, tokens: Tokens, mode: str = "ok", **fields: object) -> HttpServer:
    return HttpServer.model_validate(
        {"url": url, "headers_command": tokens.command(mode), "startup_timeout": 20, **fields}
    )


class TestStreamableHttp:
    @pytest.mark.parametrize("protocol", ["auto", "legacy"])
    async def test_the_helper_runs_at_mount_and_again_when_the_token_rotates(
        self, tokens: Tokens, protocol: str
    ) -> None:
        """One run mounts the server; a rotated token gets a 401, one more run, and the
        call is sent again and succeeds. The printed token is redacted from then on."""
        gate = BearerGate(build_http_fixture_server().streamable_http_app(), tokens.valid)
        async with serve_http(gate) as url, Registry() as registry:
            server = spec(url, tokens, protocol=protocol)
            await registry.mount("corp", server)
            assert tokens.runs() == 1
            assert text_of(await registry.call("corp__add", {"a": 2, "b": 3})) == "5"
            assert server.redact(f"Bearer {tokens.token}") == "***"
            tokens.set("tok-second-9876543210")
            assert text_of(await registry.call("corp__echo", {"text": "hi"})) == "hi"
            assert text_of(await registry.call("corp__echo", {"text": "again"})) == "again"
        assert tokens.runs() == 2
        assert gate.refused == 1

    async def test_the_printed_token_is_a_secret_no_other_server_gets(self, tokens: Tokens) -> None:
        """What the helper printed joins the server's secrets: another server's call
        carrying it is refused, and so it is once the token rotated."""
        gate = BearerGate(build_http_fixture_server().streamable_http_app(), tokens.valid)
        async with serve_http(gate) as url, Registry() as registry:
            await registry.mount("corp", spec(url, tokens))
            await registry.mount("other", fixture())
            with pytest.raises(SecretRefusedError, match="a secret of server 'corp'"):
                await registry.call("other__echo", {"text": tokens.token})
            tokens.set("tok-second-9876543210")
            assert text_of(await registry.call("corp__echo", {"text": "hi"})) == "hi"
            with pytest.raises(SecretRefusedError, match="a secret of server 'corp'"):
                await registry.call("other__echo", {"text": f"now {tokens.token}"})

    async def test_the_same_headers_after_a_401_are_not_sent_again(self, tokens: Tokens) -> None:
        """A helper that prints the refused token again: the request is not repeated, and
        the failure says the credentials were refused."""
        gate = BearerGate(build_http_fixture_server().streamable_http_app(), tokens.valid)
        async with serve_http(gate) as url, Registry() as registry:
            await registry.mount("corp", spec(url, tokens))
            tokens.set("tok-server-only-555", helper_too=False)
            with pytest.raises(Exception) as caught:  # noqa: PT011 (the kind is not the point)
                await registry.call("corp__echo", {"text": "hi"})
        assert tokens.runs() == 2
        assert gate.refused == 1
        assert "tok-first" not in str(caught.value)

    async def test_concurrent_requests_share_one_run(self, tokens: Tokens) -> None:
        """Ten first requests wait for one run; ten requests refused with the same old
        token share one more run, and are each sent again once."""
        gate = BearerGate(build_http_fixture_server().streamable_http_app(), tokens.valid)
        server = spec(UNREACHED, tokens, "slow")  # the client gets the real URL
        async with serve_http(gate) as url:
            layers = httpx2.AsyncHTTPTransport()
            async with http_client(server, Diagnostics(), layers, CommandHeaders(server)) as http:
                statuses: list[int] = []

                async def get() -> None:
                    # The MCP app refuses a bare GET (no session); the gate admitted it.
                    statuses.append((await http.get(url)).status_code)

                for expected_runs, expected_refused in ((1, 0), (2, 10)):
                    async with anyio.create_task_group() as tg:
                        for _ in range(10):
                            tg.start_soon(get)
                    assert tokens.runs() == expected_runs
                    assert gate.refused == expected_refused
                    assert 401 not in statuses
                    tokens.set("tok-rotated-24680")
                    statuses.clear()

    async def test_auto_runs_the_helper_once_for_its_probe_and_its_connection(
        self, tokens: Tokens
    ) -> None:
        """``transport = "auto"``: the probe and the connection share one run."""
        gate = BearerGate(build_http_fixture_server().streamable_http_app(), tokens.valid)
        async with serve_http(gate) as url, Registry() as registry:
            await registry.mount("corp", spec(url, tokens, transport="auto"))
            assert text_of(await registry.call("corp__add", {"a": 1, "b": 1})) == "2"
        assert tokens.runs() == 1
        assert gate.refused == 0


class TestSse:
    async def test_the_helper_runs_at_mount_and_again_when_the_token_rotates(
        self, tokens: Tokens
    ) -> None:
        """Over legacy SSE, the stream's GET and every POST carry the headers; a POST
        refused after a rotation runs the helper again and is sent again."""
        gate = BearerGate(build_sse_server().sse_app(), tokens.valid)
        async with serve_http(gate, path="/sse") as url, Registry() as registry:
            await registry.mount("old", spec(url, tokens, transport="sse"))
            assert text_of(await registry.call("old__add", {"a": 2, "b": 3})) == "5"
            tokens.set("tok-sse-second-777")
            assert text_of(await registry.call("old__echo", {"text": "hi"})) == "hi"
        assert tokens.runs() == 2
        assert gate.refused == 1

    async def test_the_same_headers_after_a_401_answer_the_call_as_refused(
        self, tokens: Tokens
    ) -> None:
        """A POST refused with the headers the helper prints again is answered as refused,
        not sent again; the connection stays up, and a later renewal works."""
        gate = BearerGate(build_sse_server().sse_app(), tokens.valid)
        async with serve_http(gate, path="/sse") as url, Registry() as registry:
            await registry.mount("old", spec(url, tokens, transport="sse"))
            tokens.set("tok-sse-server-only-31", helper_too=False)
            with pytest.raises(UpstreamError, match="HTTP 401"):
                await registry.call("old__echo", {"text": "hi"})
            assert (tokens.runs(), gate.refused) == (2, 1)
            tokens.set("tok-sse-both-again-32")
            assert text_of(await registry.call("old__echo", {"text": "hi"})) == "hi"
        assert (tokens.runs(), gate.refused) == (3, 2)


@pytest.mark.parametrize(("transport", "path"), [("http", "/mcp"), ("sse", "/sse")])
async def test_a_helper_failing_after_a_401_ends_the_connection_with_its_reason(
    tokens: Tokens, transport: str, path: str
) -> None:
    """The token rotates and the helper now fails: the call fails, the server is reported
    failed, and the reason is the helper's failure, with no token in it."""
    server = build_sse_server()
    app = server.sse_app() if transport == "sse" else server.streamable_http_app()
    gate = BearerGate(app, tokens.valid)
    async with serve_http(gate, path=path) as url, Registry() as registry:
        await registry.mount("corp", spec(url, tokens, transport=transport, call_timeout=10))
        (tokens.folder / "mode").write_text("fail")
        tokens.set("tok-rotated-but-failing-4")
        with pytest.raises(CallError) as caught:
            await registry.call("corp__echo", {"text": "hi"})
        with anyio.fail_after(30):  # the connection's owner notices the loss by itself
            while (row := registry.status()[0]).state != "failed":
                await anyio.sleep(0.02)
    expected = "headers_command (token-helper) exited with status 1: session expired"
    assert expected in str(caught.value)
    assert row.state == "failed"
    assert expected in (row.error or "")
    assert "tok-" not in str(caught.value) + (row.error or "")


class TestFailures:
    @pytest.mark.parametrize(
        ("mode", "says"),
        [
            ("fail", "exited with status 1: session expired, log in again; run it by hand"),
            ("garbage", "printed no JSON; it must print one JSON object"),
            ("array", "printed JSON that is not an object; it must print one JSON object"),
        ],
    )
    async def test_a_failing_helper_fails_the_mount_clearly(
        self, tokens: Tokens, mode: str, says: str
    ) -> None:
        """The error names the server and the program, says what went wrong, and quotes
        neither what the helper printed nor its stderr past the first line."""
        gate = BearerGate(build_http_fixture_server().streamable_http_app(), tokens.valid)
        async with serve_http(gate) as url, Registry() as registry:
            with pytest.raises(ServerStartError) as caught:
                await registry.mount("corp", spec(url, tokens, mode))
        message = str(caught.value)
        assert message.startswith("server 'corp': headers_command (token-helper) ")
        assert says in message
        assert tokens.token not in message
        assert "second line" not in message
        assert gate.refused == 0  # nothing was sent without the headers

    @pytest.mark.parametrize(("transport", "path"), [("sse", "/sse"), ("auto", "/mcp")])
    async def test_the_error_reads_the_same_over_sse_and_auto(
        self, tokens: Tokens, transport: str, path: str
    ) -> None:
        """SSE fails on its stream's GET, auto on its probe: the same words either way."""
        server = build_sse_server()
        app = server.sse_app() if transport == "sse" else server.streamable_http_app()
        async with serve_http(app, path=path) as url, Registry() as registry:
            with pytest.raises(ServerStartError) as caught:
                await registry.mount("corp", spec(url, tokens, "fail", transport=transport))
        assert str(caught.value) == (
            "server 'corp': headers_command (token-helper) exited with status 1: "
            "session expired, log in again; run it by hand to see why"
        )

    async def test_a_helper_that_hangs_is_stopped_at_its_timeout_with_its_child(
        self, tokens: Tokens, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        """Past its timeout the helper's process group is stopped (``no_leaks`` checks the
        child it forked is gone too), and the error says it did not finish."""
        monkeypatch.setattr(_headers_command, "TIMEOUT", 1.0)
        async with Registry() as registry:
            with pytest.raises(ServerStartError, match=r"did not finish within 1 s") as caught:
                await registry.mount("corp", spec(UNREACHED, tokens, "hang"))
        assert "server 'corp': headers_command (token-helper)" in str(caught.value)

    async def test_a_mount_cancelled_while_the_helper_runs_reaps_it(self, tokens: Tokens) -> None:
        """The mount is cancelled while the helper hangs: the helper and its child are gone
        (``no_leaks``), and so is the server."""
        async with Registry() as registry:
            async with anyio.create_task_group() as tg:
                tg.start_soon(registry.mount, "corp", spec(UNREACHED, tokens, "hang"))
                with anyio.fail_after(30):  # however loaded the machine, the helper starts
                    while tokens.runs() == 0:
                        await anyio.sleep(0.02)
                await anyio.sleep(0.2)  # time to fork its child, usually
                tg.cancel_scope.cancel()
            assert registry.status() == []

    async def test_a_missing_program_is_named(self, tokens: Tokens) -> None:
        """A program that does not exist: the error names it and says to check its path."""
        server = HttpServer.model_validate({"url": UNREACHED, "headers_command": ["/no/such-tool"]})
        async with Registry() as registry:
            with pytest.raises(ServerStartError, match=r"headers_command \(such-tool\) cannot be"):
                await registry.mount("corp", server)


class TestConfig:
    def test_a_single_string_is_refused_and_variables_are_expanded(self, tmp_path: Path) -> None:
        """Like ``args``: a list, never a split string; ``${VAR}`` expands in each item."""
        table = '[servers.a]\nurl = "https://x.test/mcp"\nheaders_command = '
        with pytest.raises(ConfigError, match=r"headers_command: must be a list of strings"):
            load_config(write_config(tmp_path, table + '"a b"\n'))
        good = write_config(tmp_path, table + '["${TOOL}", "-x"]\n')
        [server] = load_config(good, environ={"TOOL": "/opt/helper"}).servers.values()
        assert isinstance(server, HttpServer)
        assert server.headers_command == ["/opt/helper", "-x"]
        assert "/opt/helper" in repr(server)  # a path is no secret (see the security page)

    async def test_headers_helper_in_an_mcp_json_is_a_shell_command(
        self, tokens: Tokens, tmp_path: Path
    ) -> None:
        """Claude Code's ``headersHelper`` string runs through ``/bin/sh -c`` and mounts."""
        gate = BearerGate(build_http_fixture_server().streamable_http_app(), tokens.valid)
        async with serve_http(gate) as url, Registry() as registry:
            helper = f"'{tokens.helper}' '{tokens.folder}' ok"
            entry = {"type": "http", "url": url, "headersHelper": helper}
            path = tmp_path / ".mcp.json"
            path.write_text(json.dumps({"mcpServers": {"corp": entry}}))
            [server] = load_config(path).servers.values()
            assert isinstance(server, HttpServer)
            assert server.headers_command == ["/bin/sh", "-c", helper]
            await registry.mount("corp", server)
            assert text_of(await registry.call("corp__add", {"a": 2, "b": 2})) == "4"
        assert tokens.runs() == 1


def test_check_prints_the_helpers_failure(tokens: Tokens, tmp_path: Path) -> None:
    """``mcpmount check`` names the server, the program, the status and stderr's first line."""
    command = json.dumps(tokens.command("fail"))
    table = f'[servers.corp]\nurl = "{UNREACHED}"\nheaders_command = {command}\n'
    config = write_config(tmp_path, table)
    done = mcpmount("check", config)
    assert done.returncode == 1
    output = done.stdout + done.stderr
    assert "headers_command (token-helper) exited with status 1: session expired" in output
    assert tokens.token not in output
