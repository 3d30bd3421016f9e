"""Clients that give up on a call mid-way, through a real `mcpmount serve --transport http`.

A client gives up by cancelling the call (``notifications/cancelled``; in the 2026-07-28
era the SDK closes the call's response stream instead), by closing that stream, or by
ending its session, and it may do so while the upstream tool only runs, reports progress,
logs, or waits for the client's answer to its question. Each is an ordinary disconnect:
serve's stderr holds no traceback, serve answers the next call, and the upstream call is
cancelled (tests/servers/busy_server.py counts how each of its calls ended).

A handshake-era client with a session that only closes the call's stream has not given up
at once (a disconnect is not a cancellation: the SDK keeps the call for the client to come
back), so its call is cancelled only once ``[serve] resume_window`` is over; closing the
stream is otherwise tried sessionless: ``--stateless`` and the 2026-07-28 era.
"""

from __future__ import annotations

import json
import sys
from collections import Counter
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any, Final

import anyio
import httpx2
import mcp_types
import pytest
from mcp import Client
from mcp.client import ClientRequestContext

from serve.serve_support import BEHAVIOUR, connected, served_http, wait_for_tool, write_config
from support import SERVERS, text_of

pytestmark = [pytest.mark.slow, pytest.mark.anyio, pytest.mark.usefixtures("no_leaks")]

LONG: Final = 600.0
"""Seconds each upstream tool would run: only a cancellation ends it within a test."""

ROUNDS: Final = 3
"""How many times each way of giving up is tried (the races they met were frequent)."""

HANDSHAKE: Final = "2025-11-25"
MODERN: Final = "2026-07-28"


def busy_config(tmp_path: Path, *more: str) -> str:
    """The busy server twice: ``busy`` negotiates 2026-07-28 with serve, ``old`` the
    handshake era (its question is asked mid-call, so a call waiting for the answer is
    still running upstream, and can be cancelled); then the tables ``more``."""
    args = json.dumps([str(SERVERS / "busy_server.py")])
    tables = [
        f'[servers.{name}]\ncommand = "{sys.executable}"\nargs = {args}\n{extra}'
        for name, extra in (("busy", ""), ("old", 'protocol = "legacy"\n'))
    ]
    return write_config(tmp_path, *tables, *more)


@dataclass(frozen=True)
class GiveUp:
    """Give up on a call of ``tool`` once it is under way: once the upstream tool runs
    (``wait``), or the client got progress, a log message or the question; with
    ``answer``, the client answers the question and gives up while the tool goes on."""

    tool: str
    answer: bool = False

    @property
    def server(self) -> str:
        return self.tool.split("__")[0]

    @property
    def name(self) -> str:
        return self.tool.split("__")[1]

    @property
    def under_way(self) -> str | None:
        """The upstream count that says the call is under way; None: the client sees it."""
        if self.answer:
            return "ask answered"
        return "wait" if self.name == "wait" else None


@dataclass
class Signs:
    """A client's callbacks: ``seen`` is set by its first progress, log message or question."""

    answer: bool = False
    seen: anyio.Event = field(default_factory=anyio.Event)

    def callbacks(self) -> dict[str, Any]:
        return {"logging_callback": self.log, "elicitation_callback": self.elicit}

    async def progress(self, progress: float, total: float | None, message: str | None) -> None:
        self.seen.set()

    async def log(self, params: mcp_types.LoggingMessageNotificationParams) -> None:
        self.seen.set()

    async def elicit(
        self, context: ClientRequestContext, params: mcp_types.ElicitRequestParams
    ) -> mcp_types.ElicitResult:
        self.seen.set()
        if not self.answer:
            await anyio.sleep_forever()  # the user walked away
        return mcp_types.ElicitResult(action="accept", content={"answer": "go on"})


async def counts(watcher: Client, server: str) -> Counter[str]:
    """How the busy server ``server`` says its calls went (see busy_server.py)."""
    return Counter(json.loads(text_of(await watcher.call_tool(f"{server}__calls", {}))))


async def reach(watcher: Client, server: str, key: str, n: int) -> None:
    """Wait until ``server`` counts ``key`` at least ``n`` times, within `BEHAVIOUR`."""
    with anyio.fail_after(BEHAVIOUR):
        while (await counts(watcher, server))[key] < n:
            await anyio.sleep(0.05)


async def set_level(client: Client) -> None:
    """``logging/setLevel info`` (not Client.set_logging_level: it warns of 2026-07-28)."""
    request = mcp_types.SetLevelRequest(params=mcp_types.SetLevelRequestParams(level="info"))
    await client.session.send_request(request, mcp_types.EmptyResult)


async def cancel_and_leave(url: str, mode: str, way: GiveUp, watcher: Client) -> None:
    """A fresh SDK Client calls ``way.tool``, cancels the call once it is under way, and
    leaves at once (a handshake-era session is ended with a DELETE)."""
    signs = Signs(answer=way.answer)
    before = await counts(watcher, way.server)
    client = Client(url, mode=mode, log_level="info", cache=None, **signs.callbacks())
    async with connected(client):
        if way.name == "chatter" and client.protocol_version == HANDSHAKE:
            await set_level(client)
        async with anyio.create_task_group() as tg:
            arguments = {"seconds": LONG}
            tg.start_soon(client.call_tool, way.tool, arguments, None, signs.progress)
            if way.under_way is not None:
                await reach(watcher, way.server, way.under_way, before[way.under_way] + 1)
            else:
                with anyio.fail_after(BEHAVIOUR):
                    await signs.seen.wait()
            tg.cancel_scope.cancel()


def raw_call(era: str, tool: str) -> tuple[dict[str, object], dict[str, str]]:
    """A ``tools/call`` of ``tool`` as a sessionless client of ``era`` posts it (the
    2026-07-28 era: its ``_meta`` envelope, its headers, and a log opt-in)."""
    meta: dict[str, object] = {"progressToken": "giving-up"}
    headers = {"accept": "application/json, text/event-stream", "mcp-protocol-version": era}
    if era == MODERN:
        meta |= {
            mcp_types.PROTOCOL_VERSION_META_KEY: era,
            mcp_types.CLIENT_INFO_META_KEY: {"name": "giving-up", "version": "1"},
            mcp_types.CLIENT_CAPABILITIES_META_KEY: {},
            mcp_types.LOG_LEVEL_META_KEY: "info",
        }
        headers |= {"mcp-method": "tools/call", "mcp-name": tool}
    params = {"name": tool, "arguments": {"seconds": LONG}, "_meta": meta}
    return {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": params}, headers


async def close_early(
    http: httpx2.AsyncClient, url: str, era: str, way: GiveUp, watcher: Client
) -> None:
    """Post a call of ``way.tool`` raw and close its response (the connection) once it is
    under way: the upstream tool runs, or a progress or log notice came on the stream."""
    before = await counts(watcher, way.server)
    body, headers = raw_call(era, way.tool)
    seen = anyio.Event()

    async def call() -> None:
        async with http.stream("POST", url, json=body, headers=headers) as response:
            async for line in response.aiter_lines():
                if line.startswith("data:") and '"method":"notifications/' in line:
                    seen.set()

    async with anyio.create_task_group() as tg:
        tg.start_soon(call)
        if way.under_way is not None:
            await reach(watcher, way.server, way.under_way, before[way.under_way] + 1)
        else:
            with anyio.fail_after(BEHAVIOUR):
                await seen.wait()
        tg.cancel_scope.cancel()


def cancelled(ways: list[GiveUp]) -> Counter[tuple[str, str]]:
    """(server, count key) → how many cancellations ``ways``, each tried `ROUNDS` times, make."""
    return Counter({(way.server, f"{way.name} cancelled"): ROUNDS for way in ways})


async def assert_cancelled_and_answering(watcher: Client, ways: list[GiveUp]) -> None:
    """Every upstream call given up was cancelled, and serve still answers a call."""
    for (server, key), n in cancelled(ways).items():
        await reach(watcher, server, key, n)
    for server in ("busy", "old"):
        assert not any(k.endswith("finished") for k in await counts(watcher, server))
    with anyio.fail_after(BEHAVIOUR):
        done = await watcher.call_tool("busy__wait", {"seconds": 0})
    assert text_of(done) == "wait: done"


def assert_no_traceback(tmp_path: Path) -> None:
    log = (tmp_path / "serve.log").read_text()
    for word in ("Traceback", "ClosedResourceError", "BrokenResourceError"):
        assert word not in log, log


CANCELLING = {
    HANDSHAKE: [
        GiveUp("busy__wait"),
        GiveUp("busy__progress"),
        GiveUp("busy__chatter"),
        GiveUp("old__ask"),
        GiveUp("busy__ask", answer=True),
    ],
    # A 2026-era client that leaves between rounds is let go after the round timeout
    # (test_serve_relay.py); here it gives up in the round after its answer.
    MODERN: [
        GiveUp("busy__wait"),
        GiveUp("busy__progress"),
        GiveUp("busy__chatter"),
        GiveUp("old__ask", answer=True),
        GiveUp("busy__ask", answer=True),
    ],
}


@pytest.mark.parametrize(("mode", "era"), [("legacy", HANDSHAKE), ("auto", MODERN)])
async def test_a_client_that_cancels_a_call_and_leaves_is_an_ordinary_disconnect(
    tmp_path: Path, mode: str, era: str
) -> None:
    """The SDK Client cancels while the tool runs, reports progress, logs, or waits for an
    answer (or goes on after it), then leaves at once: the upstream call is cancelled, and
    serve logs no traceback (the SDK's transport raced a session's DELETE with the
    ``notifications/cancelled`` or the answer posted just before it)."""
    ways = CANCELLING[era]
    async with (
        served_http(busy_config(tmp_path), tmp_path) as (url, _),
        connected(Client(url, mode="legacy", cache=None)) as watcher,
    ):
        await wait_for_tool(watcher, "old__ask")
        await wait_for_tool(watcher, "busy__ask")
        for _ in range(ROUNDS):
            for way in ways:
                await cancel_and_leave(url, mode, way, watcher)
        await assert_cancelled_and_answering(watcher, ways)
    assert_no_traceback(tmp_path)


@pytest.mark.parametrize(
    ("flags", "era"),
    [((), MODERN), (("--stateless",), MODERN), (("--stateless",), HANDSHAKE)],
    ids=["2026-07-28", "stateless-2026-07-28", "stateless-2025-11-25"],
)
async def test_a_sessionless_client_that_closes_its_stream_mid_call_is_an_ordinary_disconnect(
    tmp_path: Path, flags: tuple[str, ...], era: str
) -> None:
    """Raw HTTP: the call's response is closed while the tool runs, reports progress or
    logs (a sessionless handshake-era request has no way to get log messages); the
    upstream call is cancelled, and serve logs no traceback."""
    ways = [GiveUp("busy__wait"), GiveUp("busy__progress")]
    if era == MODERN:
        ways.append(GiveUp("busy__chatter"))
    async with (
        served_http(busy_config(tmp_path), tmp_path, *flags) as (url, _),
        connected(Client(url, mode="legacy", cache=None)) as watcher,
        httpx2.AsyncClient(timeout=BEHAVIOUR) as http,
    ):
        await wait_for_tool(watcher, "busy__wait")
        for _ in range(ROUNDS):
            for way in ways:
                await close_early(http, url, era, way, watcher)
        await assert_cancelled_and_answering(watcher, ways)
    assert_no_traceback(tmp_path)


_HELLO: Final = {
    "protocolVersion": HANDSHAKE,
    "capabilities": {},
    "clientInfo": {"name": "giving-up", "version": "1"},
}
_ACCEPT: Final = {
    "accept": "application/json, text/event-stream",
    "mcp-protocol-version": HANDSHAKE,
}


async def open_session(http: httpx2.AsyncClient, url: str) -> dict[str, str]:
    """Open a handshake-era session raw; return the headers its requests carry."""
    initialize = {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": _HELLO}
    opened = await http.post(url, json=initialize, headers=_ACCEPT)
    headers = _ACCEPT | {"mcp-session-id": opened.headers["mcp-session-id"]}
    initialized = {"jsonrpc": "2.0", "method": "notifications/initialized"}
    await http.post(url, json=initialized, headers=headers)
    return headers


async def test_a_handshake_era_session_ended_mid_call_cancels_the_call(tmp_path: Path) -> None:
    """Raw HTTP: a session is DELETEd while its call reports progress, without cancelling
    the call first: the upstream call is cancelled, and serve logs no traceback."""
    way = GiveUp("busy__progress")
    body, _ = raw_call(HANDSHAKE, way.tool)
    async with (
        served_http(busy_config(tmp_path), tmp_path) as (url, _),
        connected(Client(url, mode="legacy", cache=None)) as watcher,
        httpx2.AsyncClient(timeout=BEHAVIOUR) as http,
    ):
        await wait_for_tool(watcher, way.tool)
        for _ in range(ROUNDS):
            with anyio.fail_after(BEHAVIOUR):
                headers = await open_session(http, url)
                async with http.stream("POST", url, json=body, headers=headers) as response:
                    async for line in response.aiter_lines():
                        if line.startswith("data:") and "notifications/progress" in line:
                            break
                    ended = await http.delete(url, headers=headers)
                    assert ended.status_code == 200
        await assert_cancelled_and_answering(watcher, [way])
    assert_no_traceback(tmp_path)


async def test_a_call_and_the_end_of_its_session_sent_together_leave_no_traceback(
    tmp_path: Path,
) -> None:
    """Raw HTTP: a client posts a call and DELETEs its session at once, on two connections
    (the SDK's transport raced the two): the call is answered or refused 404, the
    upstream call never finishes, and serve logs no traceback."""
    body, _ = raw_call(HANDSHAKE, "busy__wait")
    answered: list[int] = []
    async with (
        served_http(busy_config(tmp_path), tmp_path) as (url, _),
        connected(Client(url, mode="legacy", cache=None)) as watcher,
        httpx2.AsyncClient(timeout=BEHAVIOUR) as http,
    ):
        await wait_for_tool(watcher, "busy__wait")

        async def call(headers: dict[str, str]) -> None:
            async with http.stream("POST", url, json=body, headers=headers) as response:
                answered.append(response.status_code)
                async for _ in response.aiter_bytes():
                    pass  # the stream ends with the session

        for _ in range(5 * ROUNDS):
            with anyio.fail_after(BEHAVIOUR):
                headers = await open_session(http, url)
                async with anyio.create_task_group() as tg:
                    tg.start_soon(call, headers)
                    tg.start_soon(partial(http.delete, url, headers=headers))
        await assert_cancelled_and_answering(watcher, [])
    assert set(answered) <= {200, 404}
    assert_no_traceback(tmp_path)


async def test_a_session_call_whose_stream_is_closed_and_never_resumed_is_cancelled(
    tmp_path: Path,
) -> None:
    """Raw HTTP, a handshake-era session: the call's stream is closed while the tool runs
    and the client never comes back (nor cancels, nor ends its session): the upstream call
    is cancelled once ``resume_window`` is over, not before, and serve logs no traceback."""
    window = 2.0
    config = busy_config(tmp_path, f"[serve]\nresume_window = {window}\n")
    way = GiveUp("busy__wait")
    body, _ = raw_call(HANDSHAKE, way.tool)
    async with (
        served_http(config, tmp_path) as (url, _),
        connected(Client(url, mode="legacy", cache=None)) as watcher,
        httpx2.AsyncClient(timeout=BEHAVIOUR) as http,
    ):
        await wait_for_tool(watcher, way.tool)
        headers = await open_session(http, url)

        async def call() -> None:
            async with http.stream("POST", url, json=body, headers=headers) as response:
                async for _ in response.aiter_lines():
                    pass

        async with anyio.create_task_group() as tg:
            tg.start_soon(call)
            await reach(watcher, way.server, "wait", 1)
            tg.cancel_scope.cancel()  # the stream is closed; the session lives on
        closed = anyio.current_time()
        await reach(watcher, way.server, "wait cancelled", 1)
        assert anyio.current_time() - closed >= window * 0.9
        await assert_cancelled_and_answering(watcher, [])
    assert_no_traceback(tmp_path)
