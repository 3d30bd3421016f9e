"""What is read back from a store anyone may write (the manifest cache on disk or in Redis,
the activations and the event channel of ``--shared-state``) may be planted: an entry that
cannot be decoded, for any reason, is skipped with one warning. It never takes down a
command or ``serve``, and never makes a Redis that answers look unreachable.

Each test plants its entries in a real Redis (tests/redis_support.py) or cache directory
and runs a real ``mcpmount`` process.
"""

from __future__ import annotations

import json
import subprocess
from collections.abc import AsyncGenerator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any, Final

import anyio
import pytest
import redis.asyncio as redis
from mcp import Client

from cli.cli_support import mcpmount
from mcpmount.config import load_config
from mcpmount.manifests import spec_key
from redis_support import RedisServer, running_redis
from serve.serve_support import (
    BEHAVIOUR,
    connected,
    names,
    served_http,
    wait_for_tool,
)
from serve.serve_support import write_config as write_serve_config
from serve_lists.lists_support import client_of, payload
from serve_ops.ops_support import base_of, probe
from support import fixture_server, text_of, write_config

pytestmark = [pytest.mark.slow, pytest.mark.usefixtures("no_leaks")]

DEEP: Final = b"[" * 200_000 + b"]" * 200_000
"""Nested past what ``json.loads`` survives (RecursionError)."""


def unwrapped(text: str) -> str:
    """``text`` without whitespace: rich wraps a long log line anywhere."""
    return "".join(text.split())


def lazy_fx(tmp_path: Path, registry: str) -> tuple[str, str]:
    """A config of one lazy fixture server (published from its cache entry) and the key
    of that entry."""
    config = write_config(
        tmp_path, f"[registry]\n{registry}\n\n" + fixture_server("fx", extra='start = "lazy"')
    )
    return config, spec_key(load_config(config).servers["fx"])


@asynccontextmanager
async def redis_client(redis_server: RedisServer) -> AsyncGenerator[Any]:
    """A client of ``redis_server`` (typed Any: redis-py's annotations are partly unknown)."""
    client = redis.Redis(unix_socket_path=str(redis_server.socket))
    try:
        yield client
    finally:
        await client.aclose()


def assert_listed_with_one_warning(done: subprocess.CompletedProcess[str]) -> None:
    """``tools --json`` succeeded, listed the server, and warned once of its entry."""
    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stderr
    assert "fx__echo" in [tool["name"] for tool in json.loads(done.stdout)]
    assert unwrapped(done.stderr).count("itscachedmanifest") == 1, done.stderr


async def test_tools_skips_a_deep_manifest_entry_in_redis_with_one_warning(
    tmp_path: Path,
) -> None:
    """The server mounts from its live list, and its entry is written anew."""
    async with running_redis() as redis_server, redis_client(redis_server) as client:
        config, key = lazy_fx(tmp_path, f'cache = "{redis_server.url}"')
        await client.set(f"mcpmount:manifest:{key}", DEEP)
        done = await anyio.to_thread.run_sync(mcpmount, "tools", config, "--json")
        entry = await client.get(f"mcpmount:manifest:{key}")
    assert_listed_with_one_warning(done)
    assert "nests200000levelsdeep" in unwrapped(done.stderr)
    assert isinstance(entry, bytes)
    assert json.loads(entry)["key"] == key


@pytest.mark.parametrize(
    "planted",
    [
        pytest.param(DEEP, id="deep"),
        pytest.param(b'{"format": 1, "key": "\xff\xfe"}', id="not-utf8"),
        pytest.param(
            b'{"format": 1, "key": "KEY", "written": 1' + b"0" * 400 + b"}", id="overflow"
        ),
        pytest.param(b"[" * 150 + b"]" * 150, id="not-an-object"),
    ],
)
async def test_tools_skips_a_bad_manifest_entry_on_disk_with_one_warning(
    tmp_path: Path, planted: bytes
) -> None:
    """Whatever is wrong with it (``KEY`` stands for the entry's own key)."""
    config, key = lazy_fx(tmp_path, f'cache_dir = "{tmp_path / "cache"}"')
    (tmp_path / "cache").mkdir()
    (tmp_path / "cache" / f"{key}.json").write_bytes(planted.replace(b"KEY", key.encode()))
    done = await anyio.to_thread.run_sync(mcpmount, "tools", config, "--json")
    assert_listed_with_one_warning(done)


async def test_serve_keeps_serving_over_a_deep_manifest_entry_and_a_deep_event(
    tmp_path: Path,
) -> None:
    """A deep cache entry is ignored at mount; a deep message on the shared event channel
    is skipped, and the channel is not taken for a Redis that is down."""
    async with running_redis() as redis_server, redis_client(redis_server) as client:
        config, key = lazy_fx(tmp_path, f'cache = "{redis_server.url}"')
        await client.set(f"mcpmount:manifest:{key}", DEEP)
        flags = ("--shared-state", redis_server.url)
        async with (
            served_http(config, tmp_path, *flags) as (url, _),
            connected(Client(url, mode="2026-07-28")) as mcp_client,
        ):
            await wait_for_tool(mcp_client, "fx__echo")
            with anyio.fail_after(BEHAVIOUR):
                assert await client.publish("mcpmount:mcpmount:events", DEEP) == 1
                log = tmp_path / "serve.log"
                while "skipped a message" not in log.read_text():
                    await anyio.sleep(0.05)
                assert text_of(await mcp_client.call_tool("fx__echo", {"text": "hi"})) == "hi"
                status, body = await probe(base_of(url), "/readyz")
    assert (status, body["status"]) == (200, "ready"), body
    text = unwrapped(log.read_text())
    assert text.count("itscachedmanifest") == 1, text
    assert "reconnecting" not in text
    assert "Traceback" not in text


async def test_a_bad_activation_entry_is_replaced_and_redis_stays_ready(tmp_path: Path) -> None:
    """A key of the wrong type (WRONGTYPE) or a name that is not UTF-8 is replaced or
    dropped with one warning each; ``/readyz`` stays ready and the conversation keeps
    what it found."""
    config = write_serve_config(
        tmp_path, fixture_server("hidden", extra="defer = true"), fixture_server("shown")
    )
    async with (
        running_redis() as redis_server,
        redis_client(redis_server) as client,
        served_http(config, tmp_path, "--shared-state", redis_server.url) as (url, _),
        client_of(url, conversation="c1") as mcp_client,
    ):
        await wait_for_tool(mcp_client, "shown__echo")

        async def search(query: str) -> list[str]:
            found = payload(await mcp_client.call_tool("tool_search", {"query": query}))
            return [tool["name"] for tool in found["tools"]]

        async def ready() -> bool:
            status, body = await probe(base_of(url), "/readyz")
            return (status, body["status"]) == (200, "ready")

        with anyio.fail_after(BEHAVIOUR):
            assert await search("select:hidden__add") == ["hidden__add"]
            (key,) = await client.keys("mcpmount:serve:activations:*")
            await client.delete(key)
            await client.set(key, b"not a sorted set")
            assert "hidden__add" in names(await mcp_client.list_tools())
            assert await ready()
            assert await client.type(key) == b"zset"
            assert await client.zrange(key, 0, -1) == [b"hidden__add"]

            await client.zadd(key, {b"\xff\xfe": 10})
            assert "hidden__add" in names(await mcp_client.list_tools())
            assert await ready()
            assert await client.zrange(key, 0, -1) == [b"hidden__add"]

            assert await search("select:hidden__echo") == ["hidden__echo"]
            listed = names(await mcp_client.list_tools())
            assert {"hidden__add", "hidden__echo"} <= set(listed)
            assert await ready()
        log = unwrapped((tmp_path / "serve.log").read_text())
    assert log.count("badactivationentry") == 2, log
    assert "servingactivationsfromthisreplica" not in log
