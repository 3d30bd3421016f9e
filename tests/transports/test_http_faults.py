"""Streamable HTTP servers that refuse, hang, redirect or lose the session, one per fault.

Every test requests ``no_leaks``: after it, nothing the test spawned is alive and no fd,
thread or task is left over.
"""

from __future__ import annotations

import time

import pytest

from http_fixture import build_http_fixture_server, serve_http
from mcpmount.config import HttpServer
from mcpmount.errors import CallTimeoutError, ServerStartError
from mcpmount.registry import Registry
from servers.http_faults import HangApp, RedirectApp, SessionFaults, StatusApp
from support import free_port, text_of

pytestmark = [pytest.mark.slow, pytest.mark.usefixtures("no_leaks")]


class TestHttp:
    async def test_a_refused_url_never_shows_its_userinfo_or_query(self) -> None:
        """The error names the URL without the password or the token in the query."""
        url = f"http://alice:hunter2pass@127.0.0.1:{free_port()}/mcp?token=qs-secret-42"
        async with Registry() as registry:
            with pytest.raises(ServerStartError, match="cannot connect") as caught:
                await registry.mount("down", HttpServer(url=url, startup_timeout=5))
        message = str(caught.value)
        assert "hunter2pass" not in message
        assert "qs-secret-42" not in message
        assert "127.0.0.1" in message

    async def test_an_unresolvable_host_fails_within_the_startup_timeout(self) -> None:
        """DNS failure is an error naming the server, bounded by startup_timeout."""
        async with Registry() as registry:
            began = time.perf_counter()
            with pytest.raises(ServerStartError, match="server 'nowhere'"):
                await registry.mount(
                    "nowhere", HttpServer(url="https://mcp.invalid/mcp", startup_timeout=3)
                )
            assert time.perf_counter() - began < 3 + 3.5

    async def test_tls_to_a_plain_http_port_fails_with_a_clear_error(self) -> None:
        """A TLS handshake failure is reported as an HTTP failure, promptly."""
        app = StatusApp(200)
        async with serve_http(app) as url:
            https = url.replace("http://", "https://")
            async with Registry() as registry:
                with pytest.raises(ServerStartError, match=r"cannot connect|HTTP failure"):
                    await registry.mount("tls", HttpServer(url=https, startup_timeout=5))

    @pytest.mark.parametrize(
        ("app", "expected"),
        [
            pytest.param(
                StatusApp(401, b"no", headers=[(b"www-authenticate", b'Bearer realm="mcp"')]),
                "HTTP 401 .* wants authorization; for an OAuth login",
                id="401",
            ),
            pytest.param(StatusApp(403, b"forbidden"), "HTTP 403", id="403"),
            pytest.param(StatusApp(500, b"boom"), "HTTP 500", id="500"),
            pytest.param(
                StatusApp(200, b"<html>login</html>", b"text/html; charset=utf-8"),
                "Unexpected content type: text/html",
                id="html-200",
            ),
        ],
    )
    async def test_an_http_error_status_is_kept_not_collapsed(
        self, app: StatusApp, expected: str
    ) -> None:
        """401, 403, 500 and an HTML page each get their own message, not "internal error"."""
        async with serve_http(app) as url, Registry() as registry:
            with pytest.raises(ServerStartError, match=expected) as caught:
                await registry.mount("web", HttpServer(url=url))
            assert "Server returned an error response" not in str(caught.value)

    async def test_a_401_to_a_given_token_says_to_check_it(self) -> None:
        app = StatusApp(401, b"no", headers=[(b"www-authenticate", b'Bearer realm="mcp"')])
        async with serve_http(app) as url, Registry() as registry:
            spec = HttpServer.model_validate({"url": url, "headers": {"Authorization": "t0k3n"}})
            with pytest.raises(ServerStartError, match="refused the credentials") as caught:
                await registry.mount("web", spec)
            assert "check `headers`" in str(caught.value)
            assert "t0k3n" not in str(caught.value)

    async def test_a_server_that_accepts_and_never_answers_fails_at_the_startup_timeout(
        self,
    ) -> None:
        """No answer at all costs startup_timeout (not httpx's 300 s), plus a bounded close."""
        app = HangApp()
        async with serve_http(app) as url:
            async with Registry() as registry:
                began = time.perf_counter()
                with pytest.raises(ServerStartError, match="within 1 s") as caught:
                    await registry.mount("mute", HttpServer(url=url, startup_timeout=1))
                assert time.perf_counter() - began < 1 + 3.5
            # It says what to check for an HTTP server, not for a stdio one.
            assert "is an MCP endpoint and answers" in str(caught.value)
            assert "stdout" not in str(caught.value)
            app.release()

    async def test_a_stalled_http_call_fails_at_the_call_timeout(self, http_server: str) -> None:
        """A call whose answer never comes fails at its timeout; the server stays usable."""
        async with Registry() as registry:
            await registry.mount("web", HttpServer(url=http_server))
            with pytest.raises(CallTimeoutError):
                await registry.call("web__sleep", {"seconds": 30}, timeout=0.5)
            assert text_of(await registry.call("web__echo", {"text": "ok"})) == "ok"

    async def test_an_expired_session_is_re_initialized_once(self) -> None:
        """A 404 for the session id re-initializes once and the call succeeds."""
        app = SessionFaults(build_http_fixture_server().streamable_http_app())
        async with serve_http(app) as url, Registry() as registry:
            await registry.mount("web", HttpServer(url=url, protocol="legacy"))
            assert text_of(await registry.call("web__echo", {"text": "one"})) == "one"
            app.expire()
            assert text_of(await registry.call("web__echo", {"text": "two"})) == "two"
            assert text_of(await registry.call("web__echo", {"text": "three"})) == "three"
            assert app.initializes == 2

    async def test_a_session_that_cannot_be_renewed_reports_session_expired(self) -> None:
        """If re-initializing fails, the call fails saying the session expired."""
        app = SessionFaults(build_http_fixture_server().streamable_http_app())
        async with serve_http(app) as url, Registry() as registry:
            await registry.mount("web", HttpServer(url=url, protocol="legacy"))
            app.expire()
            app.refuse_initialize = True
            with pytest.raises(Exception, match="session expired") as caught:
                await registry.call("web__echo", {"text": "x"})
            assert "server 'web'" in str(caught.value)
            assert app.initializes == 2

    async def test_a_cross_origin_redirect_is_refused_and_named(self) -> None:
        """A 307 to another origin is not followed; the error names the location."""
        target = StatusApp(200, b"{}", b"application/json")
        async with (
            serve_http(target) as other,
            serve_http(RedirectApp(other)) as url,
            Registry() as registry,
        ):
            with pytest.raises(ServerStartError, match="not followed") as caught:
                await registry.mount("moved", HttpServer(url=url))
            assert other in str(caught.value)
        assert target.requests == 0

    @pytest.mark.parametrize("delete", ["405", "hang"])
    async def test_a_refused_or_hanging_delete_keeps_close_bounded(self, delete: str) -> None:
        """DELETE answering 405 or never answering: close still returns within 3.5 s."""
        app = SessionFaults(build_http_fixture_server().streamable_http_app())
        app.delete = delete
        async with serve_http(app) as url:
            async with Registry() as registry:
                close = await registry.mount("web", HttpServer(url=url, protocol="legacy"))
                began = time.perf_counter()
                await close()
                assert time.perf_counter() - began < 3.5
            app.release()
