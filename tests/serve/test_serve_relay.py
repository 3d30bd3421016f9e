"""What an upstream server asks mid-call reaches the downstream client of that call.

`mcpmount serve` in front of tests/servers/asking_server.py, driven by the SDK's Client
with sampling, elicitation and roots callbacks: over stdio and streamable HTTP, in the
handshake era (standalone requests on the call's stream) and in the 2026-07-28 era
(``InputRequiredResult`` rounds that the Client drives itself).
"""

from __future__ import annotations

import signal
from pathlib import Path

import anyio
import mcp_types
import pytest
from mcp import Client, MCPError

from serve.relay_support import ERAS, EVERY_WAY, Host, served
from serve.serve_support import (
    BEHAVIOUR,
    asking,
    connected,
    served_http,
    wait_for_tool,
    write_config,
)
from support import text_of

pytestmark = [pytest.mark.slow, pytest.mark.anyio, pytest.mark.usefixtures("no_leaks")]


@pytest.mark.parametrize(("transport", "mode", "version"), EVERY_WAY)
async def test_sampling_elicitation_and_roots_reach_the_downstream_client(
    tmp_path: Path, transport: str, mode: str, version: str
) -> None:
    """Each question goes to the calling client, and its answer back to the server."""
    config = write_config(tmp_path, asking("ask"))
    host = Host()
    async with served(config, tmp_path, transport, mode, **host.callbacks()) as client:
        await wait_for_tool(client, "ask__sample")
        assert client.protocol_version == version
        with anyio.fail_after(BEHAVIOUR):
            sampled = await client.call_tool("ask__sample", {"prompt": "hi"})
            elicited = await client.call_tool("ask__elicit", {"question": "why?"})
            visited = await client.call_tool("ask__elicit_url", {"url": "https://x.test/a"})
            rooted = await client.call_tool("ask__roots", {})
            both = await client.call_tool("ask__both", {"prompt": "yo"})
    assert text_of(sampled) == "model said: echo hi"
    assert text_of(elicited) == "user answered: because"
    assert text_of(visited) == "user action: accept"
    assert text_of(rooted) == "roots: file:///work/project"
    assert text_of(both) == "model said: echo yo; roots: 1"
    assert host.asked[:4] == [
        "sampling",
        "elicitation:form",
        "elicitation:url:https://x.test/a",
        "roots",
    ]
    assert sorted(host.asked[4:]) == ["roots", "sampling"]


@pytest.mark.parametrize(("mode", "version"), ERAS)
async def test_a_handshake_era_upstream_is_relayed_too(
    tmp_path: Path, mode: str, version: str
) -> None:
    """An upstream on the handshake era asks with standalone requests; they are relayed."""
    config = write_config(tmp_path, asking("ask", extra='protocol = "legacy"'))
    host = Host()
    async with served(config, tmp_path, "stdio", mode, **host.callbacks()) as client:
        await wait_for_tool(client, "ask__sample")
        with anyio.fail_after(BEHAVIOUR):
            sampled = await client.call_tool("ask__sample", {"prompt": "old"})
            elicited = await client.call_tool("ask__elicit", {"question": "why?"})
            rooted = await client.call_tool("ask__roots", {})
    assert text_of(sampled) == "model said: echo old"
    assert text_of(elicited) == "user answered: because"
    assert text_of(rooted) == "roots: file:///work/project"
    assert host.asked == ["sampling", "elicitation:form", "roots"]


@pytest.mark.parametrize(("mode", "version"), ERAS)
async def test_a_client_that_offers_nothing_gets_the_safe_answers(
    tmp_path: Path, mode: str, version: str
) -> None:
    """No capability downstream: elicitation declined, sampling refused, no roots."""
    config = write_config(tmp_path, asking("ask"))
    async with served(config, tmp_path, "stdio", mode) as client:
        await wait_for_tool(client, "ask__sample")
        with anyio.fail_after(BEHAVIOUR):
            elicited = await client.call_tool("ask__elicit", {"question": "why?"})
            rooted = await client.call_tool("ask__roots", {})
            # The server gets the refusal as an error and answers with it.
            with pytest.raises(MCPError, match="cannot sample"):
                await client.call_tool("ask__sample", {"prompt": "hi"})
    assert text_of(elicited) == "user action: decline"
    assert text_of(rooted) == "roots: "
    log = (tmp_path / "serve.log").read_text()
    assert "does not offer it" in log


async def test_a_2026_round_is_answered_once_and_a_client_that_never_returns_is_let_go(
    tmp_path: Path,
) -> None:
    """requestState is one-time; a call whose client never retries is dropped in time."""
    config = tmp_path / "serve.toml"
    config.write_text("[registry]\nstartup_timeout = 15\ncall_timeout = 2\n\n" + asking("ask"))
    host = Host()
    async with served(str(config), tmp_path, "stdio", "auto", **host.callbacks()) as client:
        await wait_for_tool(client, "ask__elicit")
        session = client.session
        with anyio.fail_after(BEHAVIOUR):
            first = await session.call_tool(
                "ask__elicit", {"question": "q"}, allow_input_required=True
            )
            assert isinstance(first, mcp_types.InputRequiredResult)
            assert first.input_requests is not None
            [(key, request)] = first.input_requests.items()
            assert isinstance(request, mcp_types.ElicitRequest)
            answer = mcp_types.ElicitResult(action="accept", content={"answer": "once"})
            done = await session.call_tool(
                "ask__elicit",
                {"question": "q"},
                input_responses={key: answer},
                request_state=first.request_state,
                allow_input_required=True,
            )
            assert isinstance(done, mcp_types.CallToolResult)
            assert text_of(done) == "user answered: once"
            with pytest.raises(MCPError, match="unknown or expired"):  # replayed
                await session.call_tool(
                    "ask__elicit",
                    {"question": "q"},
                    input_responses={key: answer},
                    request_state=first.request_state,
                )

            left = await session.call_tool(
                "ask__elicit", {"question": "q"}, allow_input_required=True
            )
            assert isinstance(left, mcp_types.InputRequiredResult)
            await anyio.sleep(3)  # past the round timeout (the call timeout, 2 s)
            with pytest.raises(MCPError, match="unknown or expired"):
                await session.call_tool(
                    "ask__elicit",
                    {"question": "q"},
                    input_responses={key: answer},
                    request_state=left.request_state,
                )
            counted = await client.call_tool("ask__calls", {})
    assert '"elicit": 1' in text_of(counted)  # the abandoned call never completed


@pytest.mark.parametrize(("mode", "version"), ERAS)
async def test_stateless_http_asks_through_rounds_only(
    tmp_path: Path, mode: str, version: str
) -> None:
    """--stateless HTTP has no channel back to a handshake-era client (decline, no roots);
    a 2026-07-28 client is asked through its rounds, which need none."""
    config = write_config(tmp_path, asking("ask"))
    host = Host()
    async with (
        served_http(config, tmp_path, "--stateless") as (url, _),
        connected(Client(url, mode=mode, **host.callbacks())) as client,
    ):
        await wait_for_tool(client, "ask__elicit")
        assert client.protocol_version == version
        with anyio.fail_after(BEHAVIOUR):
            elicited = await client.call_tool("ask__elicit", {"question": "why?"})
            rooted = await client.call_tool("ask__roots", {})
    if mode == "legacy":
        assert (text_of(elicited), text_of(rooted)) == ("user action: decline", "roots: ")
        assert host.asked == []
    else:
        assert text_of(elicited) == "user answered: because"
        assert text_of(rooted) == "roots: file:///work/project"
        assert host.asked == ["elicitation:form", "roots"]


@pytest.mark.parametrize(("mode", "version"), ERAS)
async def test_concurrent_calls_each_ask_their_own_client_question(
    tmp_path: Path, mode: str, version: str
) -> None:
    """Two calls asking at once: each question reaches the client, each answer its call."""
    config = write_config(tmp_path, asking("ask"))
    host = Host()
    results: dict[str, str] = {}
    async with served(config, tmp_path, "stdio", mode, **host.callbacks()) as client:
        await wait_for_tool(client, "ask__sample")

        async def call(name: str, arguments: dict[str, str]) -> None:
            results[name] = text_of(await client.call_tool(name, arguments))

        with anyio.fail_after(BEHAVIOUR):
            async with anyio.create_task_group() as tg:
                tg.start_soon(call, "ask__sample", {"prompt": "one"})
                tg.start_soon(call, "ask__elicit", {"question": "two?"})
                tg.start_soon(call, "ask__roots", dict[str, str]())
    assert results == {
        "ask__sample": "model said: echo one",
        "ask__elicit": "user answered: because",
        "ask__roots": "roots: file:///work/project",
    }
    assert sorted(host.asked) == ["elicitation:form", "roots", "sampling"]


async def test_a_client_whose_roots_changed_tells_the_servers(tmp_path: Path) -> None:
    """notifications/roots/list_changed from the client reaches a handshake-era server."""
    config = write_config(tmp_path, asking("ask", extra='protocol = "legacy"'))
    host = Host()
    async with served(config, tmp_path, "stdio", "legacy", **host.callbacks()) as client:
        await wait_for_tool(client, "ask__calls")
        with anyio.fail_after(BEHAVIOUR):
            await client.session.send_notification(mcp_types.RootsListChangedNotification())
            while '"roots_changed": 1' not in text_of(await client.call_tool("ask__calls", {})):
                await anyio.sleep(0.05)


async def test_serve_stops_promptly_while_a_2026_call_waits_for_its_client(
    tmp_path: Path,
) -> None:
    """SIGTERM with a call parked for the client's answers: it is cancelled, serve exits 0."""
    config = write_config(tmp_path, asking("ask"))
    host = Host()
    async with served_http(config, tmp_path) as (url, process):
        async with connected(Client(url, **host.callbacks())) as client:
            await wait_for_tool(client, "ask__elicit")
            with anyio.fail_after(BEHAVIOUR):
                parked = await client.session.call_tool(
                    "ask__elicit", {"question": "q"}, allow_input_required=True
                )
            assert isinstance(parked, mcp_types.InputRequiredResult)
        with anyio.fail_after(BEHAVIOUR):
            process.send_signal(signal.SIGTERM)
            await process.wait()
    assert process.returncode == 0, (tmp_path / "serve.log").read_text()
