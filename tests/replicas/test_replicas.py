"""Three stateless `mcpmount serve` replicas behind a real HAProxy, driven by SDK Clients.

Both protocol eras: ``mode="auto"`` (2026-07-28 against a 2.x server) and ``mode="legacy"``
(the initialize handshake, then every request on its own, as stateless HTTP allows). Each
replica mounts its own copy of the upstream servers, so the fixture server's ``pid`` tool
tells which replica answered a call. Redis-backed shared state is not used here:
`replicated` passes ``--shared-state`` to every replica when a test asks for it.
"""

from __future__ import annotations

import signal
import socket
import subprocess
from collections.abc import AsyncGenerator, Callable, Sequence
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Final

import anyio
import pytest
from mcp import Client, MCPError
from mcp_types import CONNECTION_CLOSED

from replicas import replica_support
from replicas.haproxy_support import HAPROXY, haproxy_config
from replicas.replica_support import Cluster, Replica, replicated, stateless_client
from serve.serve_support import BEHAVIOUR, STARTUP, changing, connected, names, write_config
from support import fixture_server, free_port, text_of

pytestmark = [pytest.mark.slow, pytest.mark.usefixtures("no_leaks")]

MODES: Final = pytest.mark.parametrize("mode", ["auto", "legacy"])

CLIENTS: Final = 4
"""Clients calling at once through the load balancer."""


@asynccontextmanager
async def mounted(
    tmp_path: Path, server: str, tool: str, mode: str, idempotent_tools: Sequence[str] = ()
) -> AsyncGenerator[Cluster]:
    """Three replicas serving ``server`` behind HAProxy, once each one lists ``tool``."""
    config = write_config(tmp_path, server)
    async with replicated(config, tmp_path, idempotent_tools=idempotent_tools) as cluster:
        for replica in cluster.replicas:  # asked directly, not through HAProxy
            async with connected(stateless_client(replica.url, mode)) as client:
                with anyio.fail_after(STARTUP):
                    while tool not in names(await client.list_tools()):
                        await anyio.sleep(0.1)
        yield cluster


async def upstream_pid(url: str, mode: str, tool: str) -> str:
    async with connected(stateless_client(url, mode)) as client:
        return text_of(await client.call_tool(tool, {}))


async def replica_pids(cluster: Cluster, mode: str, tool: str = "fx__pid") -> list[str]:
    """Each replica's upstream pid, asked of the replica itself (not through HAProxy)."""
    return [await upstream_pid(r.url, mode, tool) for r in cluster.replicas]


async def grew(before: dict[str, int], cluster: Cluster) -> dict[str, int]:
    """Responses each replica sent since ``before`` (HAProxy's counters)."""
    after = await cluster.served_requests()
    return {name: after[name] - before.get(name, 0) for name in after}


def test_the_generated_haproxy_config_is_valid(tmp_path: Path) -> None:
    """haproxy -c accepts the config, with and without idempotent tools and a health path."""
    assert HAPROXY is not None, "haproxy is not installed: `apt-get install haproxy`"
    for tools, health in (((), None), (["fx__add", "fx__pid"], "/readyz")):
        config = tmp_path / "haproxy.cfg"
        config.write_text(
            haproxy_config(
                port=1,
                replicas=[2, 3, 4],
                stats_socket=tmp_path / "s.sock",
                idempotent_tools=tools,
                health_path=health,
            )
        )
        checked = subprocess.run(
            [HAPROXY, "-c", "-f", str(config)], capture_output=True, text=True, check=False
        )
        assert checked.returncode == 0, checked.stdout + checked.stderr


async def test_haproxy_moves_to_another_port_when_its_port_was_taken_meanwhile(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The port picked for HAProxy is taken before it binds: it starts on the next one."""
    with socket.socket() as squatter:
        squatter.bind(("127.0.0.1", 0))
        squatter.listen()
        taken: int = squatter.getsockname()[1]
        ports = iter([taken])
        monkeypatch.setattr(replica_support, "free_port", lambda: next(ports, None) or free_port())
        config = write_config(tmp_path, fixture_server("fx"))
        async with replicated(config, tmp_path, count=1) as cluster:
            assert f":{taken}/" not in cluster.url
            assert "cannot bind" in (tmp_path / "haproxy.log").read_text()
            assert (await cluster.states()) == {"r0": "UP"}


@MODES
async def test_clients_get_correct_answers_from_all_three_replicas(
    tmp_path: Path, mode: str
) -> None:
    """Calls from several clients through HAProxy are answered right, by every replica."""
    async with mounted(tmp_path, fixture_server("fx"), "fx__pid", mode) as cluster:
        expected = set(await replica_pids(cluster, mode))
        assert len(expected) == 3
        before = await cluster.served_requests()
        seen: set[str] = set()

        async def client_calls(k: int) -> None:
            async with connected(stateless_client(cluster.url, mode)) as client:
                for i in range(9):
                    added = await client.call_tool("fx__add", {"a": k, "b": i})
                    assert added.structured_content == {"result": k + i}
                    seen.add(text_of(await client.call_tool("fx__pid", {})))

        with anyio.fail_after(BEHAVIOUR * 2):
            async with anyio.create_task_group() as tg:
                for k in range(CLIENTS):
                    tg.start_soon(client_calls, k)
        assert seen == expected  # each replica's own upstream answered some calls
        spread = await grew(before, cluster)
        assert all(n >= 10 for n in spread.values()), spread


@MODES
async def test_an_upstream_list_change_reaches_clients_through_every_replica(
    tmp_path: Path, mode: str
) -> None:
    """Each replica's upstream gains a tool; every list through HAProxy then shows it."""
    async with (
        mounted(tmp_path, changing("live"), "live__grow", mode) as cluster,
        connected(stateless_client(cluster.url, mode)) as client,
    ):
        assert "live__extra" not in names(await client.list_tools())
        for replica in cluster.replicas:  # each replica has its own upstream to change
            async with connected(stateless_client(replica.url, mode)) as direct:
                await direct.call_tool("live__grow", {"name": "extra"})
        with anyio.fail_after(BEHAVIOUR):  # until every replica has re-listed its upstream
            while True:
                before = await cluster.served_requests()
                lists = [names(await client.list_tools()) for _ in range(6)]
                if all("live__extra" in listed for listed in lists):
                    break
                await anyio.sleep(0.1)
        assert all(n >= 1 for n in (await grew(before, cluster)).values())
        called = await client.call_tool("live__extra", {"x": 7})
        assert text_of(called) == "extra:7"


async def call_stream(
    url: str, mode: str, k: int, calls: int, errors: list[str], progress: list[int]
) -> None:
    """``calls`` calls of fx__add, each checked and counted once; failures are recorded,
    not raised.

    A connection cut mid-answer may end the SDK client itself rather than fail one call:
    the call it was making then fails with "Connection closed" (as would every later one),
    and leaving the client raises why it ended. That call is recorded with that reason, and
    a new client makes the rest."""
    client: Client
    i = 0
    while i < calls:
        ended: Exception | None = None  # what the call the client ended in was told
        try:
            async with connected(stateless_client(url, mode)) as client:
                while i < calls:
                    try:
                        added = await client.call_tool("fx__add", {"a": k, "b": i})
                    except Exception as exc:
                        if isinstance(exc, MCPError) and exc.error.code == CONNECTION_CLOSED:
                            ended = exc
                            break
                        errors.append(f"client {k} call {i}: {exc!r}")
                    else:
                        if added.structured_content != {"result": k + i}:
                            errors.append(f"client {k} call {i}: {added}")
                    i += 1
                    progress.append(1)
        except Exception as exc:  # why the client ended: during call i, or as it closed
            if i == calls:
                errors.append(f"client {k} closing: {exc!r}")
                continue
            ended = exc
        if ended is not None:
            errors.append(f"client {k} call {i}: {ended!r}")
            i += 1
            progress.append(1)


async def calls_while_stopping(
    cluster: Cluster, mode: str, victim: Replica, stop: Callable[[], None]
) -> tuple[list[str], dict[str, int], dict[str, int]]:
    """`CLIENTS` clients make 60 calls each through HAProxy; a third of the way through,
    ``stop()`` ends ``victim``. Returns the errors, and HAProxy's counters as ``stop()``
    returned and once the victim had exited."""
    errors: list[str] = []
    progress: list[int] = []
    calls = 60
    stopping: dict[str, int] = {}
    stopped: dict[str, int] = {}
    with anyio.fail_after(BEHAVIOUR * 3):
        async with anyio.create_task_group() as tg:
            for k in range(CLIENTS):
                tg.start_soon(call_stream, cluster.url, mode, k, calls, errors, progress)
            while len(progress) < CLIENTS * calls // 3:
                await anyio.sleep(0.01)
            stop()
            stopping = await cluster.served_requests()
            await victim.process.wait()
            stopped = await cluster.served_requests()
    assert len(progress) == CLIENTS * calls
    return errors, stopping, stopped


async def others_serve(cluster: Cluster, victim: Replica, since: dict[str, int]) -> None:
    """Each other replica answered calls since ``since``, and HAProxy's health checks took
    the victim out."""
    after = await grew(since, cluster)
    assert all(n > 0 for name, n in after.items() if name != victim.name), after
    with anyio.fail_after(BEHAVIOUR):
        while (await cluster.states())[victim.name] == "UP":
            await anyio.sleep(0.1)


LOST_MID_RESPONSE: Final = "SSE stream ended without a response"
"""A legacy-era call whose replica died after it began its streamed (SSE) response."""

CUT_MID_BODY: Final = "peer closed connection without sending complete message body"
"""A call whose replica died after its answer's headers went out and before its body."""


def begun_answers(errors: list[str]) -> list[str]:
    """The errors of calls whose answer had begun when their replica died: no proxy can
    replay those (a call HAProxy did not replay would fail as ``502 Bad Gateway``)."""
    return [e for e in errors if LOST_MID_RESPONSE in e or CUT_MID_BODY in e]


@MODES
async def test_a_replica_killed_mid_run_loses_no_retryable_request(
    tmp_path: Path, mode: str
) -> None:
    """SIGKILL one replica while clients call an idempotent tool: no call HAProxy could replay
    fails, the others go on serving, and HAProxy marks the dead one down.

    In the 2026-07-28 era a quick call is answered as one JSON body (the SDK commits to a
    stream only after 15 s or a notification), so a call cut by the kill got no byte back
    and HAProxy replays it. Only a kill that lands between the two writes of one answer, its
    headers and then its body (microseconds, with no await between them), leaves a call
    that no proxy can replay; a replica writes one answer at a time, so at most one call
    fails so. In the legacy era the SDK answers every POST with a stream whose headers go
    out before the call runs, so a call in flight on the killed replica had its response
    begun: no proxy can replay that, and the client is told (at most one such call per
    client); every other call succeeds.
    """
    async with mounted(
        tmp_path, fixture_server("fx"), "fx__add", mode, idempotent_tools=["fx__add"]
    ) as cluster:
        victim = cluster.replicas[1]
        errors, _, killed = await calls_while_stopping(cluster, mode, victim, victim.kill)
        begun = begun_answers(errors)
        assert len(begun) <= (CLIENTS if mode == "legacy" else 1), begun
        assert [e for e in errors if e not in begun] == []
        assert (await grew(killed, cluster))[victim.name] == 0
        await others_serve(cluster, victim, killed)


@MODES
async def test_a_replica_stopped_mid_run_by_sigterm_fails_no_call(
    tmp_path: Path, mode: str
) -> None:
    """A rolling update's SIGTERM: the replica finishes the calls it began and refuses new
    connections, which HAProxy sends to another replica. No call fails, in either era,
    though no tool is listed as idempotent (nothing that reached a replica is replayed)."""
    async with mounted(tmp_path, fixture_server("fx"), "fx__add", mode) as cluster:
        victim = cluster.replicas[1]
        errors, stopping, _ = await calls_while_stopping(
            cluster, mode, victim, lambda: victim.process.send_signal(signal.SIGTERM)
        )
        assert errors == []
        await others_serve(cluster, victim, stopping)


@pytest.mark.parametrize("idempotent", [True, False])
@pytest.mark.parametrize(("mode", "flags"), [("auto", []), ("legacy", ["--json-response"])])
async def test_an_in_flight_call_is_replayed_only_if_its_tool_is_listed_idempotent(
    tmp_path: Path, mode: str, flags: list[str], idempotent: bool
) -> None:
    """Three clients each have a call in flight; a replica with one of them is killed.
    Its calls run again on another replica only if the tool is listed as idempotent;
    otherwise each fails, once. Nothing of their answers had gone out, so HAProxy could
    replay them: in the 2026-07-28 era a call answered within 15 s is one JSON body, and in
    the handshake era ``--json-response`` makes it one (without it, the answer is a stream
    begun before the call runs, and no proxy can replay it)."""
    config = write_config(tmp_path, fixture_server("fx"))
    listed = ["fx__sleep"] if idempotent else []
    async with replicated(config, tmp_path, idempotent_tools=listed, flags=flags) as cluster:
        outcomes: list[str] = []
        ready: list[int] = []
        go = anyio.Event()

        async def sleeper() -> None:
            # A client of its own: a connection HAProxy closes ends that client, no other.
            try:
                async with connected(stateless_client(cluster.url, mode)) as client:
                    with anyio.fail_after(STARTUP):  # its replica lists the tool (mounted)
                        while "fx__sleep" not in names(await client.list_tools()):
                            await anyio.sleep(0.1)
                    ready.append(1)
                    await go.wait()
                    result = await client.call_tool("fx__sleep", {"seconds": 4})
            except Exception as exc:
                outcomes.append(f"error {exc!r}")
            else:
                outcomes.append("ok" if text_of(result) == "slept 4.0" else f"error {result}")

        async def kill_one_with_calls() -> tuple[dict[str, int], Replica, int]:
            """Once every call is in flight (HAProxy's count, no sleep), SIGKILL a replica
            running some; return the counters before, the replica and its calls."""
            while len(ready) < 3:
                await anyio.sleep(0.02)
            before = await cluster.served_requests()
            go.set()
            while sum((running := await cluster.in_flight()).values()) < 3:
                await anyio.sleep(0.02)
            victim = next(r for r in cluster.replicas if running[r.name] > 0)
            victim.kill()
            return before, victim, running[victim.name]

        killed: list[tuple[dict[str, int], Replica, int]] = []
        with anyio.fail_after(BEHAVIOUR * 2):
            async with anyio.create_task_group() as tg:
                for _ in range(3):
                    tg.start_soon(sleeper)
                killed.append(await kill_one_with_calls())
        [(before, victim, cut)] = killed
        assert sum(o != "ok" for o in outcomes) == (0 if idempotent else cut), outcomes
        assert len(outcomes) == 3, outcomes
        assert (await grew(before, cluster))[victim.name] == 0  # never answered
