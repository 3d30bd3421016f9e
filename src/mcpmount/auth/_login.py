"""``mcpmount login`` and ``logout``: an OAuth login run ahead of time, and forgetting it.

A login asks the server for an MCP session with no token; its 401 starts the SDK's flow
(discovery, registration, the browser, the token exchange), and the tokens are kept in
the user's `TokenStore`. Mounting later uses and refreshes them and never opens a browser.
"""

from __future__ import annotations

import contextlib
import logging
import webbrowser
from collections.abc import AsyncGenerator, Callable
from urllib.parse import urlsplit

import anyio
import httpx2
from mcp.client.auth import OAuthFlowError, OAuthRegistrationError, OAuthTokenError
from mcp.shared.auth import AuthorizationCodeResult

from mcpmount.auth._callback import Callback, callback_listener
from mcpmount.auth._provider import Persisted, provider
from mcpmount.auth._store import Login, TokenStore
from mcpmount.config import HttpServer
from mcpmount.errors import LoginFailed

__all__ = ["LOGIN_TIMEOUT", "login", "logout"]

logger = logging.getLogger(__name__)

LOGIN_TIMEOUT = 300.0
"""Seconds a login waits for the person at the browser, and for the servers."""

_INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-11-25",
        "capabilities": {},
        "clientInfo": {"name": "mcpmount-login", "version": "1"},
    },
}


async def login(
    spec: HttpServer,
    namespace: str,
    store: TokenStore,
    *,
    show: Callable[[str], None],
    open_browser: bool = True,
) -> None:
    """Log in to ``spec``'s server and keep the tokens in ``store``.

    Args:
        spec: The server; its ``oauth`` table says how.
        namespace: Its namespace, for messages.
        store: Where the login is kept.
        show: Tells the person what to do (the URL to open), one line at a time.
        open_browser: Also open the URL in the user's browser.

    Raises:
        LoginFailed: The server has no ``oauth`` key, the person did not finish in
            `LOGIN_TIMEOUT` seconds, or a server refused.
    """
    oauth = spec.oauth
    where = f"server {namespace!r} ({spec.display_url()})"
    if oauth is None:
        raise LoginFailed(f"{where} has no `oauth` key: add `oauth = true` to its table")
    kept = store.login(spec.url, oauth.client(), issuer=oauth.issuer)
    before = kept.tokens_kept()
    kept.forget_tokens()  # so the server asks: a login starts afresh
    client, wanted = await kept.get_client_info(), (kept.wanted_scope() or "").split()
    if client and client.scope is not None and set(wanted) - set(client.scope.split()):
        kept.forget_client()  # registered for less than the server now asks for
    try:
        with anyio.fail_after(LOGIN_TIMEOUT):
            if oauth.grant == "client_credentials":
                await _ask(spec, provider(spec.url, oauth, kept, namespace))
            else:
                async with _listening(kept, oauth.callback_port) as callback:

                    async def redirect(url: str) -> None:
                        show(f"Open this URL to log in to {namespace}: {url}")
                        if open_browser:
                            await anyio.to_thread.run_sync(webbrowser.open, url)

                    async def answer() -> AuthorizationCodeResult:
                        try:
                            return await callback.wait()
                        finally:  # an error from another server is not this one's either
                            person.check_issuer(callback.issuer)

                    person = provider(
                        spec.url,
                        oauth,
                        kept,
                        namespace,
                        redirect_uri=callback.uri,
                        redirect_handler=redirect,
                        callback_handler=answer,
                    )
                    await _ask(spec, person)
    except Exception as exc:
        kept.keep_tokens(before)  # a failed login leaves the last good one in place
        reason = _reason(exc, spec)
        if reason is None:
            raise
        raise LoginFailed(f"{where}: {reason}") from None
    if await kept.get_tokens() is None:
        kept.keep_tokens(before)
        raise LoginFailed(f"{where} did not ask for a login (it answered without a token)")


def _reason(exc: BaseException, spec: HttpServer) -> str | None:
    """Say why a login failed, from the first telling exception (in groups too), or None."""
    if isinstance(exc, BaseExceptionGroup):
        group: BaseExceptionGroup[BaseException] = exc  # pyright: ignore[reportUnknownVariableType]
        return next(filter(None, (_reason(inner, spec) for inner in group.exceptions)), None)
    match exc:
        case TimeoutError():
            return f"the login was not finished within {LOGIN_TIMEOUT:.0f} s"
        case OAuthFlowError() | OAuthTokenError() | OAuthRegistrationError():
            return spec.redact(str(exc))
        case httpx2.HTTPError():
            return f"{type(exc).__name__}: {spec.redact(str(exc))}"
        case _:
            return None


def logout(spec: HttpServer, store: TokenStore) -> bool:
    """Forget the login kept for ``spec``; return whether there was one."""
    oauth = spec.oauth
    return store.login(spec.url, oauth.client() if oauth else None).forget()


@contextlib.asynccontextmanager
async def _listening(kept: Login, port: int) -> AsyncGenerator[Callback]:
    """Listen for the browser, on the port the kept registration names if it can.

    A registration names its redirect URI; a fresh port would not match it, so the client
    registers again when that port is taken (a hand-registered client's port is fixed).
    """
    client = await kept.get_client_info()
    registered: set[str] = {str(uri) for uri in client.redirect_uris or []} if client else set()
    ports = [urlsplit(uri).port for uri in registered]
    async with contextlib.AsyncExitStack() as stack:
        callback = None
        if port == 0 and ports and ports[0]:
            with contextlib.suppress(OSError):  # taken: listen anywhere and register again
                callback = await stack.enter_async_context(callback_listener(ports[0]))
        if callback is None:
            callback = await stack.enter_async_context(callback_listener(port))
        if client is not None and callback.uri not in registered:
            kept.forget_client()
        yield callback


async def _ask(spec: HttpServer, auth: Persisted) -> None:
    """Ask ``spec``'s server for a session through ``auth``; its 401 starts the login."""
    headers = {"accept": "application/json, text/event-stream", **spec.header_values()}
    async with httpx2.AsyncClient(auth=auth, headers=headers, timeout=30.0) as http:
        if spec.transport == "sse":
            status = await _status(http, "GET", spec.url, None)
        else:
            status = await _status(http, "POST", spec.url, _INITIALIZE)
            if spec.transport == "auto" and 400 <= status < 500 and status not in (401, 403):
                status = await _status(http, "GET", spec.url, None)  # an SSE-only server
    if status in (401, 403):
        raise OAuthTokenError(f"the server refused the new token (HTTP {status})")


async def _status(http: httpx2.AsyncClient, method: str, url: str, body: object) -> int:
    """Send one request, read only its status, and end any session it opened."""
    async with http.stream(method, url, json=body) as response:
        session = response.headers.get("mcp-session-id")
        status = response.status_code
    if session:
        with contextlib.suppress(httpx2.HTTPError):
            await http.delete(url, headers={"mcp-session-id": session})
    return status
