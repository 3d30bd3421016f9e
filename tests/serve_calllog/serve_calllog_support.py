"""Helpers for the call log tests: a served config with secrets planted everywhere, clients
that keep every request they sent, and the log read back.

`mcpmount serve --transport http` mounts four real servers: ``pub`` (the fixture server:
``echo``, ``fail``, ``big``...), ``env`` (a server whose ``env`` tool answers a variable the
config gave it: `ENV_SECRET`), ``docs`` (prompts and resources) and ``vault`` (the
fixture server again, hidden from the `LIMITED` token). Two static tokens, named ``full``
and ``limited`` in the config (the log's principals ``token:full`` and
``token:limited``), come from the environment, as the digest key does. A policy hides
``pub__big`` from ``limited``; a rate limit lets ``pub__add`` be called once a minute.
"""

from __future__ import annotations

import hashlib
import json
from collections import Counter
from collections.abc import AsyncGenerator, Mapping, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

import anyio
import httpx2
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from serve.serve_support import BEHAVIOUR, STARTUP, connected, names, served_http
from support import FIXTURE, SERVERS, script_server, write_config

FULL: Final = "calllog-full-TOKEN-4b1d9e27a0c3"
LIMITED: Final = "calllog-limited-TOKEN-77c0e5f1d2"
"""The two tokens: ``full`` sees every namespace, ``limited`` all but ``vault``."""

KEY: Final = "calllog-digest-KEY-9a8b7c6d5e"
"""The ``call_log_key``: the test computes the digests it expects with it."""

ENV_SECRET: Final = "calllog-ENV-secret-31f4c2"
"""Given to the ``env`` server by the config (``${CALLLOG_ENV_SECRET}``); its tool answers it."""

ARG_SECRET: Final = "calllog-ARG-secret-8e2d71"
"""Sent as a tool's argument, a prompt's argument and a completion's value."""

ENVIRONMENT: Final = {
    "CALLLOG_FULL": FULL,
    "CALLLOG_LIMITED": LIMITED,
    "CALLLOG_KEY": KEY,
    "CALLLOG_ENV_SECRET": ENV_SECRET,
}
"""What serve's environment holds (a test sets it with ``monkeypatch``)."""

SECRETS: Final = (FULL, LIMITED, KEY, ENV_SECRET, ARG_SECRET)
"""Every secret planted; none may be in any byte of the log."""

ERAS: Final = [
    pytest.param("legacy", id="handshake"),
    pytest.param("auto", id="2026", marks=pytest.mark.slow),
]
"""The SDK Client's mode: the handshake era (2025-11-25, with a session), or 2026-07-28."""


def _server(name: str, script: str, extra: str = "") -> str:
    return script_server(name, script, extra=f"required = true\n{extra}")


POLICY: Final = """permit(principal, action, resource);
forbid(principal, action, resource is Tool)
when { resource.name == "pub__big" && principal.name == "limited" };
"""
"""The policy: every name to every token, but ``pub__big`` to the ``limited`` one."""

_PLANTED: Final = '"${CALLLOG_ENV_SECRET}"'


def calllog_config(tmp_path: Path, serve: str = 'call_log = "calls.jsonl"') -> str:
    """Write the config: the four servers, both tokens, and ``serve``'s lines in ``[serve]``
    (by default the call log to ``calls.jsonl`` beside it)."""
    (tmp_path / "policy.cedar").write_text(POLICY)
    return write_config(
        tmp_path,
        '[serve.tokens.full]\ntoken = "${CALLLOG_FULL}"\n',
        '[serve.tokens.limited]\ntoken = "${CALLLOG_LIMITED}"\n'
        'namespaces = ["pub", "env", "docs"]\n',
        '[[serve.limits.rule]]\ntools = "pub__add"\nrate = "1/minute"\n',
        _server("pub", FIXTURE),
        _server(
            "env", str(SERVERS / "env_server.py"), 'env = { PLANTED = "${CALLLOG_ENV_SECRET}" }'
        ),
        _server("docs", str(SERVERS / "content_server.py")),
        _server("vault", FIXTURE),
        registry="startup_timeout = 15",
        serve=f'{serve}\ncall_log_key = "${{CALLLOG_KEY}}"\npolicy = "policy.cedar"',
        name="serve.toml",
    )


def digest(arguments: object) -> str:
    """The digest a record holds of ``arguments`` under `KEY` (the documented construction:
    keyed BLAKE2b-128 of their canonical JSON, the key BLAKE2b-256 of the configured one)."""
    key = hashlib.blake2b(KEY.encode(), digest_size=32).digest()
    text = json.dumps(arguments, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.blake2b(text.encode(), key=key, digest_size=16).hexdigest()


@dataclass
class Sent:
    """The JSON-RPC requests a client sent (notifications and responses left out)."""

    requests: list[dict[str, Any]] = field(default_factory=list[dict[str, Any]])


class _Recording(httpx2.AsyncBaseTransport):
    """The default HTTP transport, keeping each JSON-RPC request of every POST."""

    def __init__(self, sent: Sent) -> None:
        self._inner = httpx2.AsyncHTTPTransport()
        self._sent = sent

    async def handle_async_request(self, request: httpx2.Request) -> httpx2.Response:
        if request.method == "POST":
            message: dict[str, Any] = json.loads(request.content)
            if "method" in message and "id" in message:  # a request (no batches since 2025-06)
                self._sent.requests.append(message)
        return await self._inner.handle_async_request(request)

    async def aclose(self) -> None:
        await self._inner.aclose()


@asynccontextmanager
async def client_of(url: str, token: str, sent: Sent, *, mode: str) -> AsyncGenerator[Client]:
    """A connected Client of ``url`` with ``token``, its requests kept in ``sent``."""
    headers = {"Authorization": f"Bearer {token}"}
    transport = _Recording(sent)
    async with httpx2.AsyncClient(headers=headers, transport=transport, timeout=BEHAVIOUR) as http:
        client = Client(streamable_http_client(url, http_client=http), mode=mode, cache=None)
        async with connected(client):
            yield client


@asynccontextmanager
async def serving(
    config: str, tmp_path: Path, *flags: str, log: Path | None = None
) -> AsyncGenerator[str]:
    """Serve ``config`` over HTTP; yield its URL once every server is mounted (waiting with
    a client whose requests are not counted) and, given the ``log`` it writes, once that
    client's records are in it (serve flushes its log every few tens of milliseconds)."""
    async with served_http(config, tmp_path, *flags) as (url, _):
        ready = Sent()
        async with client_of(url, FULL, ready, mode="legacy") as client:
            with anyio.fail_after(STARTUP):
                while "vault__echo" not in names(await client.list_tools()):
                    await anyio.sleep(0.1)
        if log is not None:
            await wait_for_records(log, len(ready.requests))
        yield url


def log_files(path: Path) -> list[Path]:
    """The log at ``path`` and its rotated files that exist, oldest first."""
    files = sorted(path.parent.glob(path.name + ".*"), key=lambda p: -int(p.suffix[1:]))
    return [*files, path] if path.exists() else files


def records(path: Path) -> list[dict[str, Any]]:
    """Every record of the log at ``path`` and its rotated files, oldest first."""
    lines: list[dict[str, Any]] = []
    for each in log_files(path):
        lines += [json.loads(line) for line in each.read_text().splitlines()]
    return lines


def log_bytes(path: Path) -> bytes:
    """Every byte of the log at ``path`` and its rotated files."""
    return b"".join(each.read_bytes() for each in log_files(path))


async def wait_for_records(path: Path, count: int) -> list[dict[str, Any]]:
    """The log's records, once it holds at least ``count`` (a closed stream's record is
    written when serve sees the close), within `BEHAVIOUR` seconds."""
    with anyio.fail_after(BEHAVIOUR):
        while len(found := records(path)) < count:
            await anyio.sleep(0.05)
    return found


def methods(requests: Sequence[Mapping[str, Any]]) -> Counter[str]:
    """How many requests (or records) of each method ``requests`` hold."""
    return Counter(str(r["method"]) for r in requests)
