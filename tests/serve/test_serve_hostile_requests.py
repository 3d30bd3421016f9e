"""Requests a stock client would never send, sent raw to `mcpmount serve` over stdio: each
gets an answer, and the upstream connection stays up for the next request."""

from __future__ import annotations

import json
from pathlib import Path

import anyio
import pytest

from serve.serve_support import BEHAVIOUR, STARTUP, serve_command, write_config
from support import fixture_server

pytestmark = [pytest.mark.slow, pytest.mark.usefixtures("no_leaks")]

_HANDSHAKE = [
    {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {
            "protocolVersion": "2025-11-25",
            "capabilities": {},
            "clientInfo": {"name": "raw", "version": "0"},
        },
    },
    {"jsonrpc": "2.0", "method": "notifications/initialized"},
]


def _call(request_id: int, arguments: str) -> bytes:
    """A tools/call line whose arguments are given as raw JSON text."""
    head = json.dumps({"jsonrpc": "2.0", "id": request_id, "method": "tools/call"})[:-1]
    return f'{head}, "params": {{"name": "a__echo", "arguments": {arguments}}}}}\n'.encode()


async def test_requests_the_sdk_cannot_parse_are_answered_and_the_server_keeps_serving(
    tmp_path: Path,
) -> None:
    """A lone surrogate escape (\\ud800), which the SDK's parser refuses, and a NaN: each
    gets an answer for its id that says why; the next call on the same upstream server
    succeeds."""
    config = write_config(tmp_path, fixture_server("a", extra='restart = "never"'))
    answers: dict[int, dict[str, object]] = {}
    with (tmp_path / "serve.log").open("w") as errors:
        async with await anyio.open_process(serve_command(config), stderr=errors) as process:
            assert process.stdin is not None
            assert process.stdout is not None
            lines = b"".join(json.dumps(m).encode() + b"\n" for m in _HANDSHAKE)
            await process.stdin.send(lines)
            await process.stdin.send(_call(2, '{"text": "\\ud800"}'))
            await process.stdin.send(_call(4, '{"text": NaN}'))
            await process.stdin.send(_call(3, '{"text": "after"}'))
            buffer = b""
            with anyio.fail_after(STARTUP + BEHAVIOUR):
                while not {2, 3, 4} <= answers.keys():
                    buffer += await process.stdout.receive()
                    *complete, buffer = buffer.split(b"\n")
                    for line in complete:
                        message = json.loads(line)
                        if "id" in message:
                            answers[message["id"]] = message
            await process.stdin.aclose()
            with anyio.fail_after(BEHAVIOUR):
                await process.wait()
    # The SDK cannot parse the surrogate: an invalid-params error for its id.
    error = json.dumps(answers[2]["error"])
    assert '"code": -32602' in error
    assert "lone surrogate" in error
    assert "tools/call" in error
    # NaN the SDK parses; the registry refuses it before it reaches the server.
    nan = json.dumps(answers[4]["result"])
    assert '"isError": true' in nan
    assert "is nan" in nan
    after = json.dumps(answers[3]["result"])
    assert "after" in after
    assert '"isError": true' not in after
