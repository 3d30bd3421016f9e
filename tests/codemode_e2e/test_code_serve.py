"""Code mode behind a real ``mcpmount serve``: each call of a program takes the path a
client's ``tools/call`` takes (the gate, the limits, the call log, the caller's session).

The servers: the real filesystem and memory servers for the acceptance program; the
fixture server as ``pub`` and ``vault`` for the access tests, with two static tokens:
``full`` sees both, ``limited`` only ``pub``. Each refusal is shown against a call that
goes through (the full token's, or the calls under the limit), so a program that could
bypass the path, or a path that refused all, fails the test.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Final

import anyio
import httpx2
import mcp_types
import pytest
from codemode_e2e_support import (
    CODE_ON,
    SUMMARY,
    fixture_table,
    output,
    program_text,
    real_folder,
    real_tables,
)
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from mcpmount.codemode import RUN_CODE_NAME
from serve.relay_support import Host
from serve.serve_support import BEHAVIOUR, STARTUP, connected, names, served_http

pytestmark = [pytest.mark.anyio, pytest.mark.usefixtures("no_leaks")]

FULL: Final = "codemode-full-TOKEN-5e0a91c7d3"
LIMITED: Final = "codemode-limited-TOKEN-2b7f48e1a6"


@pytest.mark.slow
async def test_a_program_combines_two_real_servers_through_serve(tmp_path: Path) -> None:
    """The SDK client lists ``run_code`` and calls it: the same summary as in the library."""
    folder = real_folder(tmp_path)
    config = tmp_path / "serve.toml"
    config.write_text(f"{CODE_ON}\n{real_tables(folder, tmp_path / 'graph.jsonl')}")
    async with (
        served_http(str(config), tmp_path) as (url, _),
        connected(Client(url, mode="legacy", cache=None)) as client,
    ):
        await _wait_for(client, "memory__search_nodes")
        result = await client.call_tool(RUN_CODE_NAME, {"code": program_text(folder)})
    assert not result.is_error, output(result)
    assert output(result) == SUMMARY


def _access_config(tmp_path: Path) -> str:
    """``pub`` and ``vault``, both tokens, a call log, and ``pub__add`` twice a minute."""
    config = tmp_path / "access.toml"
    config.write_text(
        f"{CODE_ON}\n"
        f'[serve]\ncall_log = "calls.jsonl"\n\n'
        f'[serve.tokens.full]\ntoken = "{FULL}"\n\n'
        f'[serve.tokens.limited]\ntoken = "{LIMITED}"\nnamespaces = ["pub"]\n\n'
        '[[serve.limits.rule]]\ntools = "pub__add"\nrate = "2/minute"\n\n'
        + fixture_table("pub")
        + fixture_table("vault")
    )
    return str(config)


async def _wait_for(client: Client, name: str) -> None:
    with anyio.fail_after(STARTUP):
        while name not in names(await client.list_tools()):
            await anyio.sleep(0.1)


ERAS: Final = [
    pytest.param("legacy", id="handshake"),
    pytest.param("auto", id="2026", marks=pytest.mark.slow),
]
"""The SDK Client's mode: the handshake era (2025-11-25, with a session), or 2026-07-28."""


class _Session:
    """A client of the served URL with a bearer token, in the SDK Client's ``mode``."""

    def __init__(self, url: str, token: str, mode: str = "legacy") -> None:
        self.url, self.token, self.mode = url, token, mode

    async def run(self, code: str) -> mcp_types.CallToolResult:
        headers = {"Authorization": f"Bearer {self.token}"}
        async with httpx2.AsyncClient(headers=headers, timeout=BEHAVIOUR * 3) as http:
            client = Client(streamable_http_client(self.url, http_client=http), mode=self.mode)
            async with connected(client):
                return await client.call_tool(RUN_CODE_NAME, {"code": code})

    async def tools(self) -> list[mcp_types.Tool]:
        headers = {"Authorization": f"Bearer {self.token}"}
        async with httpx2.AsyncClient(headers=headers, timeout=BEHAVIOUR) as http:
            client = Client(streamable_http_client(self.url, http_client=http), mode=self.mode)
            async with connected(client):
                await _wait_for(client, "pub__echo")
                return (await client.list_tools()).tools


HIDDEN_OR_ABSENT: Final = """
from _mcpmount_code import call, ToolError
import tools
print(sorted(name for name in dir(tools) if name in ("pub", "vault")))
for name in ("vault__echo", "vaulx__echo"):
    try:
        call(name, {"text": "hi"})
        print("ran")
    except ToolError as exc:
        print(str(exc).replace(name, "NAME"))
"""
"""Which namespaces the ``tools`` module holds; a hidden tool's call, then a nonexistent one's."""


@pytest.mark.parametrize("mode", ERAS)
async def test_a_hidden_tool_is_absent_from_a_program_and_unknown_to_its_calls(
    tmp_path: Path, mode: str
) -> None:
    """For ``limited``, ``vault`` is neither in ``run_code``'s description nor in ``tools``,
    and calling ``vault__echo`` answers exactly as calling a tool that does not exist; for
    ``full`` (the same program, the same path) it runs."""
    async with served_http(_access_config(tmp_path), tmp_path) as (url, _):
        full, limited = _Session(url, FULL, mode), _Session(url, LIMITED, mode)
        await _wait_for_vault(full)
        seen = {tool.name: tool for tool in await full.tools()}
        assert "vault" in (seen[RUN_CODE_NAME].description or "")
        described = {tool.name: tool for tool in await limited.tools()}
        assert "vault" not in (described[RUN_CODE_NAME].description or "")
        assert "pub" in (described[RUN_CODE_NAME].description or "")
        hidden = output(await limited.run(HIDDEN_OR_ABSENT)).splitlines()
        shown = output(await full.run(HIDDEN_OR_ABSENT)).splitlines()
    assert hidden[0] == "['pub']"
    assert hidden[1] == hidden[2]  # hidden answers as absent
    assert hidden[1].startswith("no mounted tool is named 'NAME'")
    assert shown[0] == "['pub', 'vault']"
    assert shown[1] == "ran"  # the same call, seen: it is the gate that refused


async def _wait_for_vault(session: _Session) -> None:
    with anyio.fail_after(STARTUP):
        while "vault__echo" not in [tool.name for tool in await session.tools()]:
            await anyio.sleep(0.1)


def adding(times: int) -> str:
    """A program that calls ``pub__add`` ``times`` times, printing how each went."""
    return f"""
from tools import pub, ToolError
for _ in range({times}):
    try:
        pub.add(a=1, b=2)
        print("added")
    except ToolError as exc:
        print("refused:", exc)
"""


@pytest.mark.slow
async def test_a_rate_limit_and_the_call_log_see_each_call_of_a_program(tmp_path: Path) -> None:
    """Two calls a minute: the program's third ``pub__add`` is refused by the limit; the
    call log holds one record per call (two ok, one rate limited) and one of ``run_code``."""
    async with served_http(_access_config(tmp_path), tmp_path) as (url, _):
        full = _Session(url, FULL)
        await full.tools()
        lines = output(await full.run(adding(3))).splitlines()
        log = tmp_path / "calls.jsonl"
        with anyio.fail_after(BEHAVIOUR):
            while not any(r["name"] == RUN_CODE_NAME for r in _records(log)):
                await anyio.sleep(0.05)
    assert lines[:2] == ["added", "added"]
    assert lines[2].startswith("refused: pub__add was not called")
    assert "2 calls per" in lines[2]
    calls = [r for r in _records(log) if r["method"] == "tools/call"]
    added = [(r["name"], r["outcome"]) for r in calls if r["name"] == "pub__add"]
    assert added == [("pub__add", "ok"), ("pub__add", "ok"), ("pub__add", "rate_limited")]
    ran = [r for r in calls if r["name"] == RUN_CODE_NAME]
    assert len(ran) == 1
    assert ran[0]["principal"] == "token:full"
    assert all(r["principal"] == "token:full" for r in calls)


def _records(path: Path) -> list[dict[str, object]]:
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text().splitlines()]


@pytest.mark.slow
async def test_serve_asks_the_client_to_approve_a_call_of_the_program(tmp_path: Path) -> None:
    """A gated tool called from a program is put to the client (an elicitation on the
    ``run_code`` request's stream): declined, the program's call fails; accepted, it runs."""
    config = tmp_path / "approve.toml"
    config.write_text(f"{CODE_ON}\n" + fixture_table("pub", 'approve = ["add"]'))
    outputs: list[str] = []
    async with served_http(str(config), tmp_path) as (url, _):
        for approve in (False, True):
            host = Host(approve=approve)
            client = Client(url, mode="legacy", cache=None, **host.callbacks())
            async with connected(client):
                await _wait_for(client, "pub__add")
                outputs.append(output(await client.call_tool(RUN_CODE_NAME, {"code": adding(1)})))
            assert host.asked == ["elicitation:form"]
            assert "pub__add" in host.messages[0]
    assert outputs[0].startswith("refused: server 'pub': tool 'pub__add': the call was denied")
    assert outputs[0].endswith("the user did not approve pub__add (decline)")
    assert outputs[1] == "added"
