"""The user's side of an OAuth login: a scripted browser that signs in and consents, a
loopback redirect listener, and ``mcpmount login`` run as a user runs it (`Setup`).

Import it as ``oauth.oauth_browser_support``.
"""

from __future__ import annotations

import html
import json
import os
import re
import sys
from dataclasses import dataclass, field
from pathlib import Path
from subprocess import CompletedProcess
from typing import Final
from urllib.parse import urljoin, urlsplit

import anyio
import anyio.abc
import httpx2
from anyio.streams.text import TextReceiveStream

from oauth.oauth_support import AuthorizationServer

BROWSING: Final = 30.0
"""Seconds for the scripted browser to go from the authorize URL to the redirect back."""


_FORM = re.compile(r'<form[^>]*\baction="([^"]*)"')
_PROMPT = re.compile(r'<input type="hidden" name="prompt" value="([^"]*)"')
_CANCEL = re.compile(r'<a href="([^"]*)">\[ Cancel \]</a>')


async def browse(
    authorize_url: str, *, user: str = "alice", deny: bool = False, deliver: bool = True
) -> str:
    """Play the user's browser: sign in as `user`, consent, and return the redirect back.

    Follows the authorization server's redirects with a cookie jar, fills its login form (any
    login and password) and its consent form (or with `deny` cancels there), and stops at the
    first redirect away from the server: the client's `redirect_uri` with `code`, `state` and
    `iss` (or `error=access_denied`). With `deliver`, it then GETs that URL, so the client's
    loopback listener receives it.
    """
    origin = urlsplit(authorize_url)[:2]
    with anyio.fail_after(BROWSING):
        async with httpx2.AsyncClient(timeout=10, follow_redirects=False) as http:
            answer = await http.get(authorize_url)
            for _ in range(20):
                if answer.is_redirect:
                    target = urljoin(str(answer.url), answer.headers["location"])
                    if urlsplit(target)[:2] != origin:
                        if deliver:
                            await http.get(target)
                        return target
                    answer = await http.get(target)
                    continue
                form = _FORM.search(answer.text)
                prompt = _PROMPT.search(answer.text)
                if answer.status_code != 200 or form is None or prompt is None:
                    raise AssertionError(
                        f"authorization server answered {answer.status_code} at {answer.url}:"
                        f" {answer.text[:2000]}"
                    )
                fields = {"prompt": prompt.group(1)}
                cancel = _CANCEL.search(answer.text)
                if deny and fields["prompt"] == "consent" and cancel is not None:
                    answer = await http.get(urljoin(str(answer.url), html.unescape(cancel[1])))
                    continue
                if fields["prompt"] == "login":
                    fields |= {"login": user, "password": "any"}
                action = urljoin(str(answer.url), html.unescape(form.group(1)))
                answer = await http.post(action, data=fields)
    raise AssertionError(f"no redirect back to the client after 20 steps from {authorize_url}")


class CallbackListener:
    """A one-shot loopback redirect listener, as a native OAuth client runs (RFC 8252 §7.3).

    `async with CallbackListener() as listener:` binds 127.0.0.1 on an OS-chosen port;
    `listener.redirect_uri` is `http://127.0.0.1:PORT/callback`; `await listener.received()`
    waits for one GET and returns its full URL.
    """

    def __init__(self) -> None:
        self.redirect_uri = ""
        self._send, self._receive = anyio.create_memory_object_stream[str](1)

    async def __aenter__(self) -> CallbackListener:
        self._listener = await anyio.create_tcp_listener(local_host="127.0.0.1", local_port=0)
        port = self._listener.extra(anyio.abc.SocketAttribute.local_port)
        self.redirect_uri = f"http://127.0.0.1:{port}/callback"
        self._group = anyio.create_task_group()
        await self._group.__aenter__()
        self._group.start_soon(self._listener.serve, self._answer)
        return self

    async def __aexit__(self, *exc: object) -> None:
        self._group.cancel_scope.cancel()
        await self._group.__aexit__(None, None, None)
        await self._listener.aclose()
        self._send.close()
        self._receive.close()

    async def _answer(self, stream: anyio.abc.SocketStream) -> None:
        async with stream:
            request = b""
            try:
                while b"\r\n\r\n" not in request:
                    request += await stream.receive()
                target = request.split(b" ", 2)[1].decode()
                await stream.send(
                    b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 5\r\n"
                    b"Connection: close\r\n\r\ndone\n"
                )
                self._send.send_nowait(urljoin(self.redirect_uri, target))
            except (anyio.EndOfStream, anyio.BrokenResourceError, anyio.WouldBlock, IndexError):
                return  # a connection that sent no request line, or a request after the first

    async def received(self) -> str:
        """The URL of the first request the listener received."""
        with anyio.fail_after(BROWSING):
            return await self._receive.receive()


def login_file(tokens: Path) -> Path:
    """The one file under ``tokens`` that holds a login's tokens (the others name issuers)."""
    [path] = [found for found in tokens.glob("*.json") if "tokens" in json.loads(found.read_text())]
    return path


_URL_LINE = re.compile(r"Open this URL to log in to (\S+): (\S+)")


@dataclass
class Setup:
    server: AuthorizationServer
    url: str
    config: Path
    tokens: Path
    extra_env: dict[str, str] = field(default_factory=dict[str, str])

    def env(self) -> dict[str, str]:
        return {**os.environ, "MCPMOUNT_TOKEN_DIR": str(self.tokens), **self.extra_env}

    def login_file(self) -> Path:
        return login_file(self.tokens)

    def stored(self) -> dict[str, object]:
        return json.loads(self.login_file().read_text())

    def access_token(self) -> str:
        tokens = self.stored()["tokens"]
        assert isinstance(tokens, dict)
        return str(tokens["access_token"])  # pyright: ignore[reportUnknownArgumentType]

    def refresh_token(self) -> str:
        tokens = self.stored()["tokens"]
        assert isinstance(tokens, dict)
        return str(tokens["refresh_token"])  # pyright: ignore[reportUnknownArgumentType]

    async def mcpmount(self, *args: str) -> CompletedProcess[str]:
        with anyio.fail_after(60):
            done = await anyio.run_process(
                [sys.executable, "-m", "mcpmount", *args], env=self.env(), check=False
            )
        # Rich wraps what it prints at 80 columns when not on a terminal: join the lines.
        err = " ".join(done.stderr.decode().split())
        return CompletedProcess(done.args, done.returncode, done.stdout.decode(), err)

    async def login(
        self, *, deny: bool = False, status: int = 0, namespace: str = "tracker"
    ) -> tuple[str, str]:
        """Run `mcpmount login NAMESPACE --no-browser`, play the browser; return (stdout,
        stderr)."""
        command = [sys.executable, "-m", "mcpmount", "login", namespace, str(self.config)]
        with anyio.fail_after(60):
            async with await anyio.open_process(
                [*command, "--no-browser"], env=self.env()
            ) as process:
                assert process.stderr is not None
                assert process.stdout is not None
                errors = TextReceiveStream(process.stderr)
                said = ""
                async for chunk in errors:
                    said += chunk
                    if found := _URL_LINE.search(said):
                        break
                else:
                    raise AssertionError(f"login printed no URL: {said}")
                assert found.group(1) == namespace
                await browse(found.group(2), deny=deny)
                async for chunk in errors:
                    said += chunk
                out = "".join([chunk async for chunk in TextReceiveStream(process.stdout)])
                assert await process.wait() == status, said
        return out, said
