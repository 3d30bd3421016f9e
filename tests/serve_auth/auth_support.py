"""Helpers for the tests of who may use HTTP `mcpmount serve`: configs, clients with a bearer
token, and raw requests that show what a refused request is answered."""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import time
from collections.abc import AsyncGenerator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any, Final

import anyio
import httpx2
import jwt
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import rsa
from jwt.algorithms import RSAAlgorithm
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

from serve.serve_support import BEHAVIOUR, connected
from support import SERVERS, script_server

RECORDING: Final = Path(__file__).parent / "recording_server.py"

TOKEN: Final = "serve-token-0123456789abcdef"
"""A static token for the tests (long enough: 16 characters or more)."""

OTHER_TOKEN: Final = "other-token-0123456789abcdef"


def _request(method: str, params: dict[str, object]) -> dict[str, object]:
    return {"jsonrpc": "2.0", "id": 1, "method": method, "params": params}


_CALL: Final = _request("tools/call", {"name": "alpha__echo", "arguments": {"text": "hi"}})

_HELLO: Final = {"name": "raw", "version": "1"}
_INITIALIZE: Final = _request(
    "initialize", {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": _HELLO}
)


def recording(name: str, record: Path, extra: str = "") -> str:
    """A config table for tests/serve_auth/recording_server.py, recording to ``record``."""
    return script_server(name, str(RECORDING), "--record", str(record), extra=extra)


def content(name: str) -> str:
    """A config table for tests/servers/content_server.py (prompts, resources, a template)."""
    return script_server(name, str(SERVERS / "content_server.py"), "--label", name)


def calls(record: Path) -> list[str]:
    """The ``tools/call`` lines a recording server wrote."""
    lines = record.read_text().splitlines() if record.exists() else []
    return [line for line in lines if line.startswith("tools/call")]


@asynccontextmanager
async def bearer_client(
    url: str, token: str | None, *, mode: str, auth: httpx2.Auth | None = None
) -> AsyncGenerator[Client]:
    """A Client of ``url`` whose every request carries ``Authorization: Bearer TOKEN`` (or
    what ``auth``, such as the SDK's OAuth providers, adds)."""
    headers = {"Authorization": f"Bearer {token}"} if token is not None else {}
    async with httpx2.AsyncClient(headers=headers, auth=auth, timeout=BEHAVIOUR) as http:
        client = Client(streamable_http_client(url, http_client=http), mode=mode, cache=None)
        async with connected(client):
            yield client


async def post(
    url: str, *, authorization: str | None = None, host: str | None = None, call: bool = True
) -> httpx2.Response:
    """POST one raw JSON-RPC message (a ``tools/call``, or ``initialize``) to ``url``."""
    headers = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}
    if authorization is not None:
        headers["Authorization"] = authorization
    if host is not None:
        headers["Host"] = host
    body = _CALL if call else _INITIALIZE
    with anyio.fail_after(BEHAVIOUR):
        async with httpx2.AsyncClient() as http:
            return await http.post(url, headers=headers, content=json.dumps(body).encode())


ISSUER: Final = "https://issuer.example.com"
"""The issuer `Issuer`'s tokens name."""


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


class Issuer:
    """An RSA signing key, its JWKS as an ASGI app, and tokens for one resource."""

    def __init__(self, resource: str) -> None:
        self.resource = resource
        self.key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
        public: dict[str, Any] = json.loads(RSAAlgorithm.to_jwk(self.key.public_key()))
        self.jwks = {"keys": [{**public, "kid": "k1", "use": "sig", "alg": "RS256"}]}

    def app(self) -> Starlette:
        async def keys(request: Request) -> JSONResponse:
            return JSONResponse(self.jwks)

        return Starlette(routes=[Route("/jwks", keys)])

    def claims(self, **extra: object) -> dict[str, object]:
        now = int(time.time())
        return {
            "iss": ISSUER,
            "aud": self.resource,
            "sub": "agent",
            "client_id": "agent",
            "iat": now,
            "exp": now + 600,
            **extra,
        }

    def token(self, **extra: object) -> str:
        return jwt.encode(self.claims(**extra), self.key, algorithm="RS256", headers={"kid": "k1"})

    def flags(self, jwks_url: str) -> list[str]:
        """`mcpmount serve`'s flags to accept this issuer's tokens (keys at ``jwks_url``)."""
        return [
            *("--oauth-issuer", ISSUER, "--oauth-jwks-url", jwks_url),
            *("--oauth-resource", self.resource),
        ]

    def hs256_with_the_public_key(self) -> str:
        """The classic algorithm confusion: HMAC keyed with the (public) RSA key."""
        secret = self.key.public_key().public_bytes(
            serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
        )
        head = _b64(json.dumps({"alg": "HS256", "typ": "JWT", "kid": "k1"}).encode())
        body = _b64(json.dumps(self.claims()).encode())
        mac = hmac.new(secret, f"{head}.{body}".encode(), hashlib.sha256).digest()
        return f"{head}.{body}.{_b64(mac)}"
