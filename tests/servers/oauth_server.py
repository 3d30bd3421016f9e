"""An MCP server that requires OAuth bearer tokens, as a process: the SDK's resource-server support.

Run it as `python tests/servers/oauth_server.py --issuer URL [--scope S ...]`. It serves streamable
HTTP at `http://127.0.0.1:PORT/mcp` (an OS-chosen port) and prints one JSON line on stdout once
listening: `{"url": ..., "resource_metadata": ...}`.

It publishes protected resource metadata (RFC 9728) naming `--issuer` as its authorization server
and the `--scope` scopes (default `mcp`) as the ones it requires. Each bearer token must be a JWT
signed with a key from the issuer's JWKS (found through its RFC 8414 metadata), not expired, with
`iss` the issuer and `aud` this server's URL; anything else is answered 401 with
`WWW-Authenticate: Bearer ..., resource_metadata="..."` by the SDK's middleware.
Tools: `whoami` (the token's subject, client and scopes), `echo` and `pause` (which says when
it started and ended), and `vault`, which with `--vault-scope S` a token needs scope S to call:
without it the call is answered 403 `WWW-Authenticate: Bearer error="insufficient_scope",
scope="..."` (the MCP spec's step-up challenge) before it reaches the tool. `--port` binds that
port instead of a free one (a server that moves to another authorization server keeps its URL).
`--json-response` answers each POST with JSON instead of an SSE stream, as many hosted servers do.
`--record FILE` appends a JSON line per `whoami` call: its bearer token and that token's subject.
"""

from __future__ import annotations

import argparse
import json
import socket
import sys
import time
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any, cast

import anyio
import httpx2
import jwt
import uvicorn
from mcp.server.auth.middleware.auth_context import get_access_token
from mcp.server.auth.provider import AccessToken
from mcp.server.auth.routes import build_resource_metadata_url
from mcp.server.auth.settings import AuthSettings
from mcp.server.mcpserver import MCPServer
from pydantic import AnyHttpUrl


class JwtVerifier:
    """A `TokenVerifier` for the issuer's JWT access tokens, audience `resource`.

    The JWKS is fetched on first use and again when a token names a key it does not hold.
    """

    def __init__(self, issuer: str, resource: str) -> None:
        self.issuer = issuer
        self.resource = resource
        self._keys: jwt.PyJWKSet | None = None
        self._lock = anyio.Lock()

    async def _fetch_keys(self) -> jwt.PyJWKSet:
        async with httpx2.AsyncClient(timeout=10) as http:
            metadata = await http.get(f"{self.issuer}/.well-known/oauth-authorization-server")
            metadata.raise_for_status()
            jwks = await http.get(metadata.json()["jwks_uri"])
            jwks.raise_for_status()
        return jwt.PyJWKSet.from_dict(jwks.json())

    async def _key(self, kid: str) -> jwt.PyJWK | None:
        async with self._lock:
            for attempt in range(2):
                if self._keys is None or attempt:
                    self._keys = await self._fetch_keys()
                found = [key for key in self._keys.keys if key.key_id == kid]
                if found:
                    return found[0]
        return None

    async def verify_token(self, token: str) -> AccessToken | None:
        try:
            kid = jwt.get_unverified_header(token).get("kid")
            key = await self._key(str(kid))
            if key is None:
                return None
            claims: dict[str, Any] = jwt.decode(
                token,
                key,
                algorithms=["RS256"],
                audience=self.resource,
                issuer=self.issuer,
                options={"require": ["exp", "iss", "aud", "client_id"]},
            )
        except jwt.PyJWTError as exc:
            print(f"oauth_server: token refused: {exc}", file=sys.stderr, flush=True)
            return None
        return AccessToken(
            token=token,
            client_id=str(claims["client_id"]),
            scopes=str(claims.get("scope", "")).split(),
            expires_at=int(claims["exp"]),
            resource=self.resource,
            subject=claims.get("sub"),
            claims=claims,
        )


Scope = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[MutableMapping[str, Any]]]
Send = Callable[[MutableMapping[str, Any]], Awaitable[None]]
App = Callable[[Scope, Receive, Send], Awaitable[None]]


def step_up(app: App, verifier: JwtVerifier, scope: str, metadata: str) -> App:
    """Answer a `tools/call` of `vault` whose valid token lacks `scope` with a 403 challenge."""

    async def guarded(request: Scope, receive: Receive, send: Send) -> None:
        if request["type"] != "http" or request["method"] != "POST":
            return await app(request, receive, send)
        body, more, messages = b"", True, list[MutableMapping[str, Any]]()
        while more:
            message = await receive()
            messages.append(message)
            body += message.get("body", b"")
            more = message.get("more_body", False)
        try:
            loaded: object = json.loads(body)
        except ValueError:
            loaded = None
        call = cast("dict[str, Any]", loaded) if isinstance(loaded, dict) else {}
        headers = dict(request["headers"])
        bearer = headers.get(b"authorization", b"").decode().removeprefix("Bearer ")
        token = await verifier.verify_token(bearer) if bearer else None
        params = cast("dict[str, Any]", call.get("params") or {})
        wants = call.get("method") == "tools/call" and params.get("name") == "vault"
        if wants and token is not None and scope not in token.scopes:
            needed = " ".join([*token.scopes, scope])
            challenge = (
                f'Bearer error="insufficient_scope", scope="{needed}", '
                f'resource_metadata="{metadata}", error_description="vault needs {scope}"'
            )
            await send(
                {
                    "type": "http.response.start",
                    "status": 403,
                    "headers": [
                        (b"www-authenticate", challenge.encode()),
                        (b"content-length", b"0"),
                    ],
                }
            )
            await send({"type": "http.response.body", "body": b""})
            return

        async def replay() -> MutableMapping[str, Any]:
            return messages.pop(0) if messages else await receive()

        await app(request, replay, send)

    return guarded


def build_server(
    issuer: str, url: str, scopes: list[str], verifier: JwtVerifier, record: str | None = None
) -> MCPServer:
    server = MCPServer(
        "oauth",
        version="0.1.0",
        token_verifier=verifier,
        # From strings: AuthSettings keeps a path-less issuer without a trailing slash, which
        # clients compare with the issuer's metadata as strings (RFC 8414 §3.3).
        auth=AuthSettings.model_validate(
            {
                "issuer_url": issuer,
                "resource_server_url": url,
                "required_scopes": scopes or None,
                "validate_token_resource": True,
            }
        ),
    )

    @server.tool()
    def whoami() -> str:
        """Who the bearer token speaks for: `sub=... client_id=... scopes=...`."""
        token = get_access_token()
        if token is None:
            return "anonymous"
        if record is not None:
            with open(record, "a", encoding="utf-8") as file:
                file.write(json.dumps({"sub": token.subject, "token": token.token}) + "\n")
        return f"sub={token.subject} client_id={token.client_id} scopes={' '.join(token.scopes)}"

    @server.tool()
    def echo(text: str) -> str:
        """Return the text unchanged."""
        return text

    @server.tool()
    def vault() -> str:
        """Say what the token's scopes are (with --vault-scope, only a token with it gets here)."""
        token = get_access_token()
        return f"vault opened with scopes={' '.join(token.scopes) if token else ''}"

    @server.tool()
    async def pause(seconds: float) -> str:
        """Wait `seconds`; return when it started and ended (`START END`, epoch seconds)."""
        began = time.time()
        await anyio.sleep(seconds)
        return f"{began} {time.time()}"

    return server


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--issuer", required=True, help="the authorization server's issuer URL")
    p.add_argument("--scope", action="append", help="a required scope (repeatable; default mcp)")
    p.add_argument(
        "--json-response", action="store_true", help="answer POSTs with JSON, not SSE streams"
    )
    p.add_argument("--vault-scope", help="the scope a token needs to call `vault`")
    p.add_argument("--port", type=int, default=0, help="the port to bind (default: a free one)")
    p.add_argument("--record", help="append each whoami call's token and subject to this file")
    args = p.parse_args()
    scopes: list[str] = ["mcp"] if args.scope is None else [s for s in args.scope if s]

    # Bind first: the resource URL (the tokens' audience) names the port.
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    sock.bind(("127.0.0.1", args.port))
    sock.listen(128)
    url = f"http://127.0.0.1:{sock.getsockname()[1]}/mcp"
    verifier = JwtVerifier(args.issuer, url)
    server = build_server(args.issuer, url, scopes, verifier, args.record)
    app: App = server.streamable_http_app(json_response=args.json_response)
    metadata = str(build_resource_metadata_url(AnyHttpUrl(url)))
    if args.vault_scope:
        app = step_up(app, verifier, args.vault_scope, metadata)
    print(json.dumps({"url": url, "resource_metadata": metadata}), flush=True)
    config = uvicorn.Config(app, log_level="warning", lifespan="on", timeout_graceful_shutdown=2)
    uvicorn.Server(config).run(sockets=[sock])


if __name__ == "__main__":
    main()
