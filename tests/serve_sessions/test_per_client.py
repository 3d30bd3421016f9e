"""Upstream sessions per client through a real `mcpmount serve`: two SDK clients of a
stateful server each see only their own state under ``sessions = "per_client"``, and one
shared state under ``"shared"``; a client's process goes when it leaves or idles; a cap
refuses a client past it; what the server asks goes to the client of its session."""

from __future__ import annotations

from pathlib import Path

import anyio
import pytest
from serve_sessions_support import (
    NAME,
    Peer,
    children_of,
    config,
    peer,
    two_peers_of_http,
    until,
)

from serve.serve_support import served_http

pytestmark = [pytest.mark.anyio, pytest.mark.usefixtures("no_leaks")]


@pytest.mark.parametrize("sessions", ["per_client", "shared"])
async def test_two_clients_of_a_stdio_server_see_their_own_state_only_per_client(
    tmp_path: Path, sessions: str
) -> None:
    async with (
        served_http(config(tmp_path, sessions), tmp_path) as (url, _),
        peer(url, "alice") as alice,
        peer(url, "bob") as bob,
    ):
        assert await alice.call("cd", {"path": "/alice"}) == "/alice"
        if sessions == "per_client":
            assert await bob.call("pwd") == "/"
            assert await bob.call("cd", {"path": "/bob"}) == "/bob"
            assert await alice.call("pwd") == "/alice"
            assert await alice.call("pid") != await bob.call("pid")
        else:
            assert await bob.call("pwd") == "/alice"
            assert await alice.call("pid") == await bob.call("pid")


@pytest.mark.slow
@pytest.mark.parametrize("sessions", ["per_client", "shared"])
async def test_two_clients_of_an_http_server_see_their_own_state_only_per_client(
    tmp_path: Path, sessions: str
) -> None:
    async with two_peers_of_http(tmp_path, sessions) as (alice, bob):
        await alice.call("cd", {"path": "/alice"})
        expected = "/" if sessions == "per_client" else "/alice"
        assert await bob.call("pwd") == expected


@pytest.mark.slow
async def test_each_client_has_its_own_process_reaped_when_it_leaves(tmp_path: Path) -> None:
    async with served_http(config(tmp_path, "per_client"), tmp_path) as (url, serve):
        async with peer(url, "alice") as alice:
            await until(lambda: len(children_of(serve.pid)) == 1, "the shared process")
            shared = children_of(serve.pid)
            async with peer(url, "bob") as bob:
                pids = {int(await alice.call("pid")), int(await bob.call("pid"))}
                assert len(pids) == 2
                assert not pids & shared
                assert pids <= children_of(serve.pid)
            # bob's session ended (its DELETE): its process goes, alice's stays
            await until(lambda: len(children_of(serve.pid) & pids) == 1, "bob's process reaped")
            assert int(await alice.call("pid")) in children_of(serve.pid)
        await until(lambda: children_of(serve.pid) == shared, "alice's process reaped")


@pytest.mark.slow
async def test_an_idle_client_session_is_closed_and_reopened_on_its_next_call(
    tmp_path: Path,
) -> None:
    path = config(tmp_path, "per_client", extra="session_idle_timeout = 1\n")
    async with served_http(path, tmp_path) as (url, serve), peer(url, "alice") as alice:
        await until(lambda: len(children_of(serve.pid)) == 1, "the shared process")
        shared = children_of(serve.pid)
        await alice.call("cd", {"path": "/alice"})
        first = int(await alice.call("pid"))
        await until(lambda: first not in children_of(serve.pid), "the idle session closed")
        assert children_of(serve.pid) == shared
        assert await alice.call("pwd") == "/"  # a new session: its state starts over
        assert int(await alice.call("pid")) != first


@pytest.mark.slow
async def test_a_client_past_max_client_sessions_is_refused_saying_what_to_do(
    tmp_path: Path,
) -> None:
    path = config(tmp_path, "per_client", extra="max_client_sessions = 1\n")
    async with served_http(path, tmp_path) as (url, _), peer(url, "alice") as alice:
        assert await alice.call("cd", {"path": "/alice"}) == "/alice"
        async with peer(url, "bob") as bob:
            refused = await bob.call("pwd")
            assert refused.startswith("ERROR: ")
            assert f"server {NAME!r}" in refused
            assert "max_client_sessions" in refused
            assert "try again" in refused
        assert await alice.call("pwd") == "/alice"  # the client that has one goes on


@pytest.mark.slow
@pytest.mark.parametrize("sessions", ["per_client", "shared"])
async def test_a_question_on_the_standalone_stream_goes_to_the_client_of_its_session(
    tmp_path: Path, sessions: str
) -> None:
    async with two_peers_of_http(tmp_path, sessions) as (alice, bob):
        answers: dict[str, str] = {}

        async def ask(who: str, client: Peer) -> None:
            answers[who] = await client.call("ask", {"label": who, "together": 2})

        async with anyio.create_task_group() as tg:
            tg.start_soon(ask, "alice", alice)
            tg.start_soon(ask, "bob", bob)
        if sessions == "per_client":
            assert answers == {"alice": "alice", "bob": "bob"}
            assert alice.asked == ["question for alice"]
            assert bob.asked == ["question for bob"]
        else:  # one session, two calls in flight: nobody to tell, so nobody is asked
            assert answers == {"alice": "no answer (decline)", "bob": "no answer (decline)"}
            assert alice.asked == bob.asked == []
