"""``/healthz`` and ``/readyz`` of `mcpmount serve --transport http`: alive at once, ready
once the initial mounts are done and every required server is up."""

from __future__ import annotations

from pathlib import Path
from typing import cast

import anyio
import httpx2
import pytest
from mcp import Client

from serve import serve_support as serving
from serve_ops.ops_support import META, base_of, front_over_http, probe
from support import fixture_server, stdio_spec

pytestmark = [pytest.mark.anyio, pytest.mark.usefixtures("no_leaks")]

MOUNTING = {"status": "not ready", "failing": {"mounts": "the initial mounts are under way"}}


async def _until_ready(base: str) -> dict[str, object]:
    with anyio.fail_after(serving.STARTUP):
        while True:
            status, body = await probe(base, "/readyz")
            if status == 200:
                return body
            assert body == MOUNTING
            await anyio.sleep(0.05)


async def test_readyz_waits_for_the_initial_mounts_while_healthz_answers_at_once(
    tmp_path: Path,
) -> None:
    config = serving.write_config(tmp_path, fixture_server("slow", "--startup-delay", "5"))
    async with serving.served_http(config, tmp_path) as (url, _):
        base = base_of(url)
        assert await probe(base, "/healthz") == (200, {"status": "alive"})
        assert await probe(base, "/readyz") == (503, MOUNTING)
        assert await _until_ready(base) == {"status": "ready"}
        assert await probe(base, "/healthz") == (200, {"status": "alive"})


async def test_a_required_server_down_fails_readyz_and_an_optional_one_does_not(
    tmp_path: Path,
) -> None:
    config = serving.write_config(
        tmp_path,
        fixture_server("fx", extra="required = true"),  # readiness counts only it
        fixture_server("gone", "--crash-on-start", extra="required = false"),
    )
    async with (
        serving.served_http(config, tmp_path) as (url, _),
        serving.connected(Client(url)) as client,
    ):
        base = base_of(url)
        await serving.wait_for_tool(client, "fx__echo")
        assert await _until_ready(base) == {"status": "ready"}
        assert (await client.call_tool("fx__crash", {})).is_error  # it exits mid-call
        with anyio.fail_after(serving.BEHAVIOUR):  # its owner task reports the loss
            while (answer := await probe(base, "/readyz"))[0] == 200:
                await anyio.sleep(0.05)
        status, body = answer
        assert status == 503
        assert body["status"] == "not ready"
        failing = cast("dict[str, str]", body["failing"])
        assert list(failing) == ["servers"]
        assert failing["servers"].startswith("required server 'fx' is failed")
        assert await probe(base, "/healthz") == (200, {"status": "alive"})


async def test_a_check_added_by_another_part_fails_readiness_or_only_reports() -> None:
    """A required check fails ``/readyz``; an optional one says ``degraded`` with 200; a
    check that raises fails with its error."""
    shared: list[str | None] = [None]
    async with front_over_http({"meta": stdio_spec(META)}) as (host, base):
        host.readiness.add("shared state", lambda: shared[0], required=False)
        assert await probe(base, "/readyz") == (200, {"status": "ready"})
        shared[0] = "redis is unreachable; serving from local state"
        degraded = {"status": "degraded", "degraded": {"shared state": shared[0]}}
        assert await probe(base, "/readyz") == (200, degraded)

        def broken() -> str | None:
            raise RuntimeError("the check has a bug")

        host.readiness.add("broken", broken)
        status, body = await probe(base, "/readyz")
        assert status == 503
        assert body == {
            "status": "not ready",
            "failing": {"broken": "the check failed: RuntimeError: the check has a bug"},
            "degraded": {"shared state": shared[0]},
        }
        host.readiness.remove("broken")
        shared[0] = None
        assert await probe(base, "/readyz") == (200, {"status": "ready"})
        with pytest.raises(ValueError, match="shared state"):
            host.readiness.add("shared state", lambda: None)


async def test_the_probes_answer_any_host_name_a_deployment_uses() -> None:
    """Probes come with the pod's address or a service name as Host: the DNS-rebinding
    check guards ``/mcp`` only."""
    host = {"Host": "mcpmount.default.svc:8080"}
    async with (
        front_over_http({"meta": stdio_spec(META)}) as (_, base),
        httpx2.AsyncClient(headers=host) as http,
    ):
        for path in ("/healthz", "/readyz", "/metrics"):
            assert (await http.get(f"{base}{path}")).status_code == 200, path
        assert (await http.post(f"{base}/mcp", json={})).status_code == 421
