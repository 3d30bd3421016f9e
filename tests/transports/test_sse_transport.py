"""Legacy HTTP+SSE servers (the SDK's SSE server), mounted with ``transport = "sse"``.

Every promise of streamable HTTP holds: message limits per event, startup and call
timeouts, clear errors that name the server and never a secret, a crash mid-call, and a
close that leaves nothing behind. Every test requests ``no_leaks``.
"""

from __future__ import annotations

import time
from pathlib import Path

import anyio
import pytest

import mcpmount
from asking_support import Recorder as AskRecorder
from asking_support import fresh_asking_server
from http_fixture import serve_http
from mcpmount.config import HttpServer
from mcpmount.errors import (
    CallTimeoutError,
    RegistryError,
    ServerCrashedError,
    ServerStartError,
    ToolListError,
    UpstreamError,
)
from mcpmount.registry import Registry
from servers.http_faults import HangApp, StatusApp
from servers.sse_faults import Garbage, Recorder, ShortStream, build_sse_server, serve_process
from support import free_port, text_of

pytestmark = [pytest.mark.slow, pytest.mark.usefixtures("no_leaks")]

SECRET = "hunter2-sse-secret"


def sse(url: str, **fields: object) -> HttpServer:
    return HttpServer.model_validate({"url": url, "transport": "sse", **fields})


class TestSse:
    @pytest.mark.parametrize("protocol", ["auto", "legacy"])
    async def test_an_sse_server_is_listed_and_called_over_the_handshake(
        self, protocol: str
    ) -> None:
        """Tools are listed and called; ``server/discover`` never reaches the server, even
        with ``protocol = "auto"``: SSE carries only the handshake era."""
        app = Recorder(build_sse_server().sse_app())
        async with serve_http(app, path="/sse") as url, Registry() as registry:
            await registry.mount("old", sse(url, protocol=protocol))
            assert {tool.name for tool in registry.tools()} >= {"old__echo", "old__add", "old__big"}
            assert text_of(await registry.call("old__add", {"a": 2, "b": 3})) == "5"
        assert app.count("POST", "initialize") == 1
        assert app.count("POST", "server/discover") == 0
        assert app.count("GET") == 1

    async def test_an_answer_over_max_message_bytes_is_refused_while_it_is_read(self) -> None:
        """An event over the limit ends the connection with the limit named; the call that
        was waiting for it fails as a crash, and the server is reported failed."""
        app = build_sse_server().sse_app()
        async with serve_http(app, path="/sse") as url, Registry() as registry:
            await registry.mount("old", sse(url, max_message_bytes=65_536))
            with pytest.raises(ServerCrashedError, match=r"max_message_bytes \(65536 bytes\)"):
                await registry.call("old__big", {"n": 200_000})
            [row] = registry.status()
            assert row.state == "failed"

    async def test_a_list_over_max_tools_is_refused_as_a_tool_list(self) -> None:
        """A tools/list event defining more tools than max_tools is refused unparsed."""
        app = build_sse_server().sse_app()
        async with serve_http(app, path="/sse") as url, Registry() as registry:
            with pytest.raises(ToolListError, match=r"more than 2 tools \(max_tools\)"):
                await registry.mount("old", sse(url, max_tools=2))

    async def test_an_event_over_the_sdks_1_mib_cap_is_named(self) -> None:
        """The SDK's SSE client reads no event over 1 MiB, whatever max_message_bytes says;
        the error says so instead of an anonymous stream failure."""
        app = build_sse_server().sse_app()
        async with serve_http(app, path="/sse") as url, Registry() as registry:
            await registry.mount("old", sse(url, max_result_bytes=4_000_000))
            with pytest.raises(ServerCrashedError, match="over 1 MiB, the most the SDK's SSE"):
                await registry.call("old__big", {"n": 1_500_000})

    async def test_a_request_the_server_refuses_fails_alone(self) -> None:
        """A POST answered 413 (body too large) fails its call with the status; the
        connection stays up and the next call succeeds."""
        app = build_sse_server().sse_app(max_request_body_size=10_000)
        async with serve_http(app, path="/sse") as url, Registry() as registry:
            await registry.mount("old", sse(url))
            with pytest.raises(UpstreamError, match="HTTP 413") as caught:
                await registry.call("old__echo", {"text": "y" * 20_000})
            assert "server 'old'" in str(caught.value)
            assert text_of(await registry.call("old__echo", {"text": "ok"})) == "ok"

    async def test_a_session_the_server_forgot_cuts_the_connection(self) -> None:
        """A POST answered 404 (the server no longer knows the session) ends the connection
        with that reason, at once: the call fails, and never waits out its timeout."""
        app = Recorder(build_sse_server().sse_app())
        async with serve_http(app, path="/sse") as url, Registry() as registry:
            await registry.mount("old", sse(url))
            app.refuse = 404
            began = time.perf_counter()
            with pytest.raises(ServerCrashedError, match="no longer knows this SSE session"):
                await registry.call("old__echo", {"text": "x"}, timeout=30)
            assert time.perf_counter() - began < 10
            app.refuse = None

    async def test_an_event_that_is_not_json_rpc_is_skipped(self) -> None:
        """A ``message`` event that does not parse is skipped; the stream goes on."""
        app = Garbage(build_sse_server().sse_app())
        async with serve_http(app, path="/sse") as url, Registry() as registry:
            await registry.mount("old", sse(url))
            assert text_of(await registry.call("old__echo", {"text": "ok"})) == "ok"

    async def test_a_dropped_stream_loses_the_server_and_a_restart_brings_it_back(
        self,
    ) -> None:
        """The server drops the GET stream after mounting: the server is lost, and with
        ``restart = "on-failure"`` it is connected again and answers."""
        app = Recorder(build_sse_server().sse_app())
        async with serve_http(app, path="/sse") as url, Registry() as registry:
            await registry.mount("old", sse(url, restart="on-failure"))
            assert text_of(await registry.call("old__echo", {"text": "one"})) == "one"
            app.drop()
            with anyio.fail_after(20):
                while (row := registry.status()[0]).restarts == 0 or row.state != "ready":
                    await anyio.sleep(0.05)
            assert text_of(await registry.call("old__echo", {"text": "two"})) == "two"
        assert app.count("GET") == 2

    async def test_a_stalled_call_fails_at_the_call_timeout(self) -> None:
        """A call whose answer never comes fails at its timeout; the server stays usable."""
        app = build_sse_server().sse_app()
        async with serve_http(app, path="/sse") as url, Registry() as registry:
            await registry.mount("old", sse(url))
            with pytest.raises(CallTimeoutError):
                await registry.call("old__sleep", {"seconds": 30}, timeout=0.5)
            assert text_of(await registry.call("old__echo", {"text": "ok"})) == "ok"

    @pytest.mark.parametrize(
        ("app", "expected"),
        [
            pytest.param(
                ShortStream(endpoint=False), "ended before its `endpoint` event", id="no-endpoint"
            ),
            pytest.param(
                ShortStream(endpoint=True), "the server ended its SSE stream", id="stream-ends"
            ),
            pytest.param(
                StatusApp(200, b"<html>login</html>", b"text/html"),
                "is not an SSE stream.*text/html",
                id="html-200",
            ),
            pytest.param(StatusApp(404, b"nope"), "HTTP 404 from .*check the path", id="404"),
            pytest.param(StatusApp(401, b"no"), "HTTP 401 .* refused the credentials", id="401"),
            pytest.param(HangApp(), "within 3 s.*is an MCP SSE endpoint", id="silent"),
        ],
    )
    async def test_a_failure_is_described_naming_the_server_and_no_secret(
        self, app: StatusApp | ShortStream | HangApp, expected: str
    ) -> None:
        """Each failure gets its own message, within startup_timeout plus a bounded close
        (a silent server costs all of it); the header, the URL's userinfo and query values,
        and a value expanded from the environment into the path never show."""
        async with serve_http(app, path=f"/{SECRET}-path/sse") as url:
            async with Registry() as registry:
                url = url.replace("://", "://alice:pw-" + SECRET + "@") + "?token=q-" + SECRET
                headers = {"Authorization": f"Bearer tok-{SECRET}"}
                spec = sse(url, headers=headers, startup_timeout=3)
                began = time.perf_counter()
                with pytest.raises(ServerStartError, match=expected) as caught:
                    await registry.mount("web", spec.with_expanded([f"{SECRET}-path"]))
                assert time.perf_counter() - began < 3 + 3.5
            if isinstance(app, HangApp):
                app.release()
        message = str(caught.value)
        assert "server 'web'" in message
        assert SECRET not in message

    async def test_a_refused_connection_names_the_url_without_its_secrets(self) -> None:
        """Nothing listening: "cannot connect", with the URL's credentials shown as ``***``
        (a user name is not one: it is shown, as the config's display form shows it)."""
        url = f"http://alice:pw-{SECRET}@127.0.0.1:{free_port()}/sse?token={SECRET}"
        shown = r"http://alice:\*\*\*@127\.0\.0\.1:\d+/sse\?token=\*\*\*:"
        async with Registry() as registry:
            with pytest.raises(ServerStartError, match=f"cannot connect to {shown}") as caught:
                await registry.mount("down", sse(url, startup_timeout=5))
        assert SECRET not in str(caught.value)

    async def test_a_server_that_dies_mid_call_is_a_crash(self, tmp_path: Path) -> None:
        """The server process exits during a call: ServerCrashedError, naming the server;
        the server is reported failed, and nothing is left when the registry closes."""
        async with serve_process(tmp_path) as (url, process), Registry() as registry:
            await registry.mount("web", sse(url))
            assert text_of(await registry.call("web__echo", {"text": "up"})) == "up"
            with pytest.raises(ServerCrashedError, match="server 'web'"):
                await registry.call("web__crash", {}, timeout=30)
            [row] = registry.status()
            assert row.state == "failed"
            assert row.error is not None
            assert "SSE stream" in row.error
            assert await process.wait() == 3

    async def test_closing_leaves_nothing_even_with_a_call_in_flight(self) -> None:
        """The closer returns within its bound while a call waits; the call fails, and no
        task, socket or thread is left (``no_leaks``)."""
        app = build_sse_server().sse_app()
        async with serve_http(app, path="/sse") as url, Registry() as registry:
            close = await registry.mount("old", sse(url))
            failed: list[BaseException] = []

            async def waiting_call() -> None:
                try:
                    await registry.call("old__sleep", {"seconds": 30})
                except RegistryError as exc:
                    failed.append(exc)

            async with anyio.create_task_group() as tg:
                tg.start_soon(waiting_call)
                await anyio.sleep(0.3)
                began = time.perf_counter()
                await close()
                assert time.perf_counter() - began < 3.5
            assert failed


async def test_an_sse_entry_of_an_mcp_host_file_mounts(tmp_path: Path) -> None:
    """``"type": "sse"`` in an mcpServers file mounts the server over SSE."""
    app = Recorder(build_sse_server().sse_app())
    async with serve_http(app, path="/sse") as url:
        config = tmp_path / ".mcp.json"
        config.write_text(f'{{"mcpServers": {{"Old Tools": {{"type": "sse", "url": "{url}"}}}}}}')
        async with mcpmount.open_registry(config) as registry:
            assert text_of(await registry.call("old-tools__echo", {"text": "hi"})) == "hi"
    assert app.count("GET") == 1


async def test_handlers_answer_a_server_reached_over_sse() -> None:
    """Sampling, elicitation and roots asked on the SSE stream are answered by POST, and
    attributed to the one call in flight (the handshake era's rule)."""
    recorder = AskRecorder()
    app = fresh_asking_server().sse_app()
    async with (
        serve_http(app, path="/sse") as url,
        Registry(handlers=recorder.handlers()) as registry,
    ):
        await registry.mount("h", sse(url))
        view = registry.view()
        sampled = await view.call("h__sample", {"prompt": "hi"}, context="v")
        elicited = await view.call("h__elicit", {"question": "why?"}, context="v")
        rooted = await view.call("h__roots", {}, context="v")
    answers = [text_of(result) for result in (sampled, elicited, rooted)]
    assert list(zip(answers, recorder.asked, strict=True)) == [
        ("model said: echo hi", ("sampling", "h", "h__sample", "v")),
        ("user answered: because", ("elicitation:form", "h", "h__elicit", "v")),
        ("roots: file:///work/project", ("roots", "h", "h__roots", "v")),
    ]
