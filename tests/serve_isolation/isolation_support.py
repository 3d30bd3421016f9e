"""Helpers for the isolation tests: a served registry with a hidden namespace, two tokens,
clients that keep every byte they received (answers compared with the name blanked:
isolation_compare_support.py).

`mcpmount serve --transport http --tokens-file` mounts tests/serve_isolation/isolation_server.py
twice: as `PUB` (the limited token's only namespace) and as `HIDDEN` (the same program with
`PRIVATE` planted in every text it writes, and a few tools and a prompt of its own). The
`FULL` token sees both, the `LIMITED` one `PUB` only. A hidden name is probed beside the
same name in `NOWHERE`, a namespace that is not mounted, of the same length, so both are
answered from the same visible names.
"""

from __future__ import annotations

import json
import sys
from collections.abc import AsyncGenerator, AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final, TypeVar

import anyio
import httpx2
import mcp_types
import pytest
from mcp import Client, MCPError
from mcp.client import ClientRequestContext
from mcp.client.streamable_http import streamable_http_client
from pydantic import BaseModel, ValidationError

from mcpmount.serve import CONVERSATION_HEADER
from serve.serve_support import BEHAVIOUR, connected, served_http, wait_for_tool

SERVER: Final = Path(__file__).parent / "isolation_server.py"

FULL: Final = "full-token-0123456789abcdef"
"""A token that sees every namespace."""

LIMITED: Final = "limited-token-0123456789abcdef"
"""A token that sees `PUB` only."""

PUB: Final = "pub"
HIDDEN: Final = "vault"
NOWHERE: Final = "qzxjw"
"""Not mounted; as long as `HIDDEN`, sharing no letter with it or with `PUB`."""

MODERN: Final = "2026-07-28"
"""The protocol version of the era without a handshake."""

PRIVATE: Final = "VAULT-CANARY-7f3a"
"""Planted in every text the hidden server writes."""

HIDDEN_ONLY: Final = ("vault_admin_secret", "quokka_census", "vault_admin_secret_prompt")
"""Raw names only the hidden server has (``quokka`` is a word only its tools have)."""

SECRETS: Final = (HIDDEN, PRIVATE, "quokka", *HIDDEN_ONLY)
"""What must never reach the limited client, in any case (checked case-insensitively)."""

ERAS: Final = [
    pytest.param("legacy", (), id="handshake-session"),
    pytest.param("auto", (), id="2026"),
    pytest.param("legacy", ("--stateless",), id="handshake-stateless"),
    pytest.param("auto", ("--stateless",), id="2026-stateless"),
]
"""(Client mode, serve flags): the handshake era (2025-11-25) with a session, the
2026-07-28 era (no session over HTTP), and both with ``--stateless``."""

SESSIONLESS: Final = [pytest.param((), id="2026"), pytest.param(("--stateless",), id="stateless")]
"""The serve flags of the 2026-07-28 era's two ways to serve."""

SERVED: Final = ("legacy", ())
SERVED_STATELESS: Final = ("legacy", ("--stateless",))
SERVED_AUTO: Final = ("auto", ())
"""(protocol, serve flags) of the `shared` fixture (tests/serve_isolation/conftest.py).
Tests given an equal parameter in a ``scope="module"`` parametrization share one registry
(pytest runs them one after another); in a function-scoped one each gets its own."""

_SHARED_FLAGS: Final = pytest.mark.parametrize(
    "shared",
    [pytest.param(SERVED, id="stateful"), pytest.param(SERVED_STATELESS, id="stateless")],
    indirect=True,
    scope="module",
)
_MODES: Final = pytest.mark.parametrize(
    "mode", [pytest.param("legacy", id="handshake"), pytest.param("auto", id="2026")]
)


_Test = TypeVar("_Test", bound=Callable[..., object])


def on_shared_eras(test: _Test) -> _Test:
    """`ERAS` for a test taking ``shared`` and ``mode``: the served registry is a
    module-scoped parameter and the client mode a function-scoped one, so pytest runs both
    modes on one registry before it starts the next."""
    return _SHARED_FLAGS(_MODES(test))


SHARED_SESSIONLESS: Final = [
    pytest.param(SERVED, id="2026"),
    pytest.param(SERVED_STATELESS, id="stateless"),
]
"""`SESSIONLESS` as the `shared` fixture's parameter: ``parametrize("shared",
SHARED_SESSIONLESS, indirect=True, scope="module")``."""

MEMO: Final = "memo://one"
ITEMS: Final = "memo://items/{item}"
DEFERRED: Final = ("archive_*", "ledger_*", "quokka_*")
"""The raw tools deferred in every namespace: found through ``tool_search`` only."""

PUB_TOOLS: Final = tuple(
    f"{PUB}__{name}"
    for name in (
        "echo",
        "log",
        "elicit",
        "headed",
        "grow",
        "touch",
        "archive_lookup",
        "ledger_export",
    )
)
"""Every tool the limited token may see (before any grows)."""


def uri(namespace: str, raw: str = MEMO) -> str:
    """A registry URI of ``raw`` in ``namespace``."""
    return f"mcpmount://{namespace}/{raw}"


def isolation_server(namespace: str, record: Path, *, protocol: str, private: str = "") -> str:
    """A config table mounting the isolation server as ``namespace``, recording to ``record``.

    Required, so that serve answers only once both are mounted: an optional server that
    mounts late (a loaded machine) is announced to every session as a list change, which
    the notice counts here would take for one of the tests' own."""
    args = [str(SERVER), "--label", namespace, "--record", str(record)]
    args += ["--private", private] if private else []
    return (
        f'[servers.{namespace}]\ncommand = "{sys.executable}"\nargs = {json.dumps(args)}\n'
        f'protocol = "{protocol}"\ndefer = {json.dumps(list(DEFERRED))}\nrequired = true\n'
    )


def write_setup(tmp_path: Path, *, protocol: str = "legacy") -> tuple[str, Path]:
    """Write the config (`PUB`, `HIDDEN`) and the tokens file; return their paths.

    ``protocol`` is the era serve speaks to both servers: ``legacy`` (serve forwards
    ``logging/setLevel``) or ``auto`` (the servers stamp their results' ``serverInfo``).
    """
    config = tmp_path / "serve.toml"
    config.write_text(
        "[registry]\nstartup_timeout = 15\n\n"
        + isolation_server(PUB, tmp_path / f"{PUB}.log", protocol=protocol)
        + "\n"
        + isolation_server(HIDDEN, tmp_path / f"{HIDDEN}.log", protocol=protocol, private=PRIVATE)
    )
    tokens = tmp_path / "tokens.txt"
    tokens.write_text(f"{FULL}\n{LIMITED} {PUB}\n")
    return str(config), tokens


def recorded(tmp_path: Path, namespace: str) -> list[str]:
    """The lines the server mounted as ``namespace`` recorded (see isolation_server.py)."""
    path = tmp_path / f"{namespace}.log"
    return path.read_text().splitlines() if path.exists() else []


@asynccontextmanager
async def serving(tmp_path: Path, *flags: str, protocol: str = "legacy") -> AsyncGenerator[str]:
    """Serve `write_setup`'s config over HTTP with the tokens; yield the URL once every
    server is mounted."""
    config, tokens = write_setup(tmp_path, protocol=protocol)
    async with served_http(config, tmp_path, "--tokens-file", str(tokens), *flags) as (url, _):
        async with principal(url, FULL, mode="auto") as full:
            await wait_for_tool(full.client, f"{HIDDEN}__echo")
            await wait_for_tool(full.client, f"{PUB}__echo")
        yield url


@dataclass(frozen=True)
class Shared:
    """What the `shared` fixture yields: a `serving` registry several tests use."""

    url: str
    stateless: bool
    """Served with ``--stateless``."""


class _Teed(httpx2.AsyncByteStream):
    def __init__(self, stream: httpx2.AsyncByteStream, into: bytearray) -> None:
        self._stream = stream
        self._into = into

    async def __aiter__(self) -> AsyncIterator[bytes]:
        async for chunk in self._stream:
            self._into += chunk
            yield chunk

    async def aclose(self) -> None:
        await self._stream.aclose()


class Tee(httpx2.AsyncBaseTransport):
    """The default HTTP transport, keeping every byte received: status lines, headers and
    bodies, streamed ones (SSE) as they arrive."""

    def __init__(self) -> None:
        self._inner = httpx2.AsyncHTTPTransport()
        self.received = bytearray()

    async def handle_async_request(self, request: httpx2.Request) -> httpx2.Response:
        response = await self._inner.handle_async_request(request)
        self.received += f"HTTP {response.status_code}\r\n".encode()
        for key, value in response.headers.raw:
            self.received += key + b": " + value + b"\r\n"
        return httpx2.Response(
            response.status_code,
            headers=response.headers,
            stream=_Teed(response.stream, self.received),  # pyright: ignore[reportArgumentType]
            extensions=response.extensions,
        )

    async def aclose(self) -> None:
        await self._inner.aclose()

    def text(self) -> str:
        return self.received.decode(errors="replace")


@dataclass
class Principal:
    """One client of serve with a token: what it received, kept in order."""

    client: Client
    tee: Tee
    notices: list[object] = field(default_factory=list[object])
    logs: list[mcp_types.LoggingMessageNotificationParams] = field(
        default_factory=list[mcp_types.LoggingMessageNotificationParams]
    )
    answer: str = "yes"
    """What its user answers a form."""

    def told(self, kind: type[BaseModel]) -> int:
        """How many notices of ``kind`` came (a 2026-07-28 listen stream's too)."""
        return sum(isinstance(notice, kind) for notice in self.notices)

    async def wait_told(self, kind: type[BaseModel], count: int = 1) -> None:
        """Wait until ``count`` notices of ``kind`` came (the caller bounds it)."""
        while self.told(kind) < count:
            await anyio.sleep(0.02)

    async def set_level(self, level: mcp_types.LoggingLevel) -> None:
        """Send ``logging/setLevel`` (the handshake era's)."""
        # Not Client.set_logging_level: it warns of the 2026-07-28 deprecation.
        params = mcp_types.SetLevelRequestParams(level=level)
        request = mcp_types.SetLevelRequest(params=params)
        await self.client.session.send_request(request, mcp_types.EmptyResult)

    async def subscribe(self, resource: str) -> None:
        """Send ``resources/subscribe`` (the handshake era's)."""
        # Not Client.subscribe_resource: it warns of the 2026-07-28 deprecation.
        request = mcp_types.SubscribeRequest(params=mcp_types.SubscribeRequestParams(uri=resource))
        await self.client.session.send_request(request, mcp_types.EmptyResult)

    async def wait_for_log(self, text: str) -> None:
        """Wait until a log message holding ``text`` came (the caller bounds it)."""
        while not any(text in str(entry.data) for entry in self.logs):
            await anyio.sleep(0.02)


@asynccontextmanager
async def principal(
    url: str,
    token: str,
    *,
    mode: str,
    conversation: str | None = None,
    log_level: mcp_types.LoggingLevel | None = None,
) -> AsyncGenerator[Principal]:
    """A connected Client of ``url`` with ``token`` (and a conversation id), answering forms
    and keeping its notices, log messages and every byte it received."""
    headers = {"Authorization": f"Bearer {token}"}
    if conversation is not None:
        headers[CONVERSATION_HEADER] = conversation
    tee = Tee()
    state: list[Principal] = []

    async def on_message(message: object) -> None:
        state[0].notices.append(message)

    async def on_log(params: mcp_types.LoggingMessageNotificationParams) -> None:
        state[0].logs.append(params)

    async def on_elicit(
        context: ClientRequestContext, params: mcp_types.ElicitRequestParams
    ) -> mcp_types.ElicitResult:
        return mcp_types.ElicitResult(action="accept", content={"answer": state[0].answer})

    async with httpx2.AsyncClient(headers=headers, transport=tee, timeout=BEHAVIOUR) as http:
        client = Client(
            streamable_http_client(url, http_client=http),
            mode=mode,
            cache=None,
            message_handler=on_message,
            logging_callback=on_log,
            elicitation_callback=on_elicit,
            log_level=log_level,
        )
        state.append(Principal(client, tee))
        async with connected(client):
            yield state[0]


async def rpc(
    url: str, token: str, method: str, params: dict[str, Any], **headers: str
) -> dict[str, Any]:
    """POST one raw 2026-07-28 request as a client would (``headers`` added, ``_`` for
    ``-``); return the JSON-RPC response, ``{"status": ..., "result" or "error": ...}``."""
    envelope = {
        "io.modelcontextprotocol/protocolVersion": MODERN,
        "io.modelcontextprotocol/clientInfo": {"name": "raw", "version": "1"},
        "io.modelcontextprotocol/clientCapabilities": {},
    }
    body = {"jsonrpc": "2.0", "id": 1, "method": method, "params": {**params, "_meta": envelope}}
    sent = {
        "Authorization": f"Bearer {token}",
        "Content-Type": "application/json",
        "Accept": "application/json, text/event-stream",
        "MCP-Protocol-Version": MODERN,
        "Mcp-Method": method,
        **{key.replace("_", "-"): value for key, value in headers.items()},
    }
    name = params.get("name", params.get("uri"))
    if isinstance(name, str):
        sent["Mcp-Name"] = name
    with anyio.fail_after(BEHAVIOUR):
        async with httpx2.AsyncClient() as http:
            response = await http.post(url, headers=sent, content=json.dumps(body).encode())
    reply = response.json()
    reply.pop("jsonrpc")
    reply.pop("id")
    return {"status": response.status_code, **reply}


async def answer(request: Awaitable[BaseModel]) -> dict[str, Any]:
    """What a request was answered, as wire JSON: ``{"result": ...}`` or ``{"error": ...}``
    (or ``{"unreadable": ...}``: a result that is not of the method's type)."""
    try:
        with anyio.fail_after(BEHAVIOUR):
            result = await request
    except MCPError as exc:
        return {"error": exc.error.model_dump(mode="json", by_alias=True, exclude_none=True)}
    except ValidationError as exc:
        return {"unreadable": str(exc)}
    return {"result": result.model_dump(mode="json", by_alias=True, exclude_none=True)}
