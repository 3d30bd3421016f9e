"""Who reads the operator's endpoints of HTTP `mcpmount serve` with tokens on: ``/metrics``
and ``/readyz``'s reasons name every server and tool, so a client whose token is limited
to some namespaces (or who has none) learns no hidden name from them."""

from __future__ import annotations

from pathlib import Path
from typing import Final

import anyio
import httpx2
import pytest

from serve.serve_support import BEHAVIOUR, STARTUP, served_http, wait_for_tool, write_config
from serve_auth.auth_support import OTHER_TOKEN, TOKEN, bearer_client, post
from serve_ops.ops_support import base_of, scrape, series_of
from support import fixture_server

pytestmark = [pytest.mark.slow, pytest.mark.anyio, pytest.mark.usefixtures("no_leaks")]

HIDDEN: Final = "vaultzq"
"""The namespace the limited token may not see: no answer it gets may contain it."""

LIMITED: Final = "limited-token-0123456789abcdef"
"""A token that sees the ``pub`` namespace only."""

METRICS_TOKEN: Final = "metrics-token-0123456789abcdef"

NOT_UP: Final = {"status": "not ready", "failing": {"servers": "1 required server is not up"}}
"""``/readyz`` while one required server is down, to whoever may not read the reasons."""


def _config(tmp_path: Path, serve_table: str = "") -> tuple[str, list[str]]:
    """A config of ``pub`` and ``vaultzq`` (both required), and the flags of a tokens file
    holding a full token (`TOKEN`) and one limited to ``pub`` (`LIMITED`)."""
    tokens = tmp_path / "tokens.txt"
    tokens.write_text(f"{TOKEN}\n{LIMITED} pub\n")
    required = "required = true"  # readiness counts only what says so
    servers = [fixture_server("pub", extra=required), fixture_server(HIDDEN, extra=required)]
    config = write_config(tmp_path, *([serve_table] if serve_table else []), *servers)
    return config, ["--tokens-file", str(tokens)]


async def _get(url: str, token: str | None = None) -> httpx2.Response:
    headers = {"Authorization": f"Bearer {token}"} if token is not None else {}
    with anyio.fail_after(BEHAVIOUR):
        async with httpx2.AsyncClient() as http:
            return await http.get(url, headers=headers)


async def _mounted_and_called(url: str) -> None:
    """Wait until both servers are mounted, and call the hidden one (so its tool is in the
    call metrics too)."""
    async with bearer_client(url, TOKEN, mode="legacy") as client:
        await wait_for_tool(client, f"{HIDDEN}__echo")
        await wait_for_tool(client, "pub__echo")
        assert not (await client.call_tool(f"{HIDDEN}__echo", {"text": "x"})).is_error


def _answer(response: httpx2.Response) -> tuple[int, str, str]:
    return response.status_code, response.headers.get("content-type", ""), response.text


async def test_with_tokens_the_mcp_port_answers_metrics_as_it_answers_an_unknown_path(
    tmp_path: Path,
) -> None:
    """No switch given: ``/metrics`` is not served, to no token, a limited one or a full one;
    the answer is byte for byte the one a path that does not exist gets."""
    config, flags = _config(tmp_path)
    async with served_http(config, tmp_path, *flags) as (url, _):
        await _mounted_and_called(url)
        base = base_of(url)
        for token in (None, LIMITED, TOKEN):
            metrics = await _get(f"{base}/metrics", token)
            unknown = await _get(f"{base}/no-such-path", token)
            assert metrics.status_code == 404, token
            assert _answer(metrics) == _answer(unknown), token
            assert HIDDEN not in metrics.text


async def test_a_metrics_port_serves_the_metrics_and_the_mcp_port_still_does_not(
    tmp_path: Path,
) -> None:
    """``--metrics-port 0``: the operator's port has every server and tool (and nothing
    else); the MCP port answers ``/metrics`` as an unknown path; both stop with serve."""
    config, flags = _config(tmp_path)
    portfile = tmp_path / "metrics-port"
    metrics_flags = ["--metrics-port", "0", "--metrics-portfile", str(portfile)]
    async with served_http(config, tmp_path, *flags, *metrics_flags) as (url, process):
        await _mounted_and_called(url)
        metrics_base = f"http://127.0.0.1:{portfile.read_text().strip()}"
        samples = await scrape(metrics_base)
        assert series_of(samples, "server") == {"pub", HIDDEN}
        assert f"{HIDDEN}__echo" in series_of(samples, "tool")
        for path in ("/mcp", "/readyz", "/healthz"):
            assert (await _get(f"{metrics_base}{path}")).status_code == 404, path
        base = base_of(url)
        for token in (None, LIMITED, TOKEN):
            metrics = await _get(f"{base}/metrics", token)
            assert _answer(metrics) == _answer(await _get(f"{base}/no-such-path", token))
        assert (await _get(f"{base}/healthz")).status_code == 200
    assert process.returncode == 0
    with pytest.raises(httpx2.ConnectError):  # closed with the MCP port
        await _get(f"{metrics_base}/metrics")
    assert f"serving metrics at {metrics_base}/metrics" in (tmp_path / "serve.log").read_text()


async def test_a_metrics_token_is_the_only_key_to_the_metrics(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``[serve] metrics_token``: ``/metrics`` refuses no token, a wrong one and every serve
    token (401, naming nothing); the metrics token reads them, and opens nothing else."""
    monkeypatch.setenv("OPS_METRICS_TOKEN", METRICS_TOKEN)
    config, flags = _config(tmp_path, '[serve]\nmetrics_token = "${OPS_METRICS_TOKEN}"\n')
    async with served_http(config, tmp_path, *flags) as (url, _):
        await _mounted_and_called(url)
        base = base_of(url)
        wrong = (None, "wrong", METRICS_TOKEN[:-1], METRICS_TOKEN.upper(), LIMITED, TOKEN)
        refused = [await _get(f"{base}/metrics", token) for token in wrong]
        samples = await scrape(base, token=METRICS_TOKEN)
        at_mcp = await post(url, authorization=f"Bearer {METRICS_TOKEN}")
    for response in refused:
        assert response.status_code == 401
        assert response.headers["www-authenticate"].startswith("Bearer ")
        assert HIDDEN not in response.text
    assert series_of(samples, "server") == {"pub", HIDDEN}
    assert at_mcp.status_code == 401  # it is no token for /mcp
    assert METRICS_TOKEN not in (tmp_path / "serve.log").read_text()


async def test_readyz_names_a_hidden_server_down_only_to_a_token_that_sees_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A hidden required server fails: every probe is 503, but only a token that sees every
    namespace and the metrics token read which server and why; no token, a limited one and
    a wrong one read how many are down. ``/healthz`` answers anyone as before."""
    monkeypatch.setenv("OPS_METRICS_TOKEN", METRICS_TOKEN)
    config, flags = _config(tmp_path, '[serve]\nmetrics_token = "${OPS_METRICS_TOKEN}"\n')
    async with served_http(config, tmp_path, *flags) as (url, _):
        base = base_of(url)
        async with bearer_client(url, TOKEN, mode="legacy") as client:
            await wait_for_tool(client, f"{HIDDEN}__echo")
            with anyio.fail_after(STARTUP):  # the initial mounts are done
                while (await _get(f"{base}/readyz")).status_code != 200:
                    await anyio.sleep(0.05)
            assert (await client.call_tool(f"{HIDDEN}__crash", {})).is_error  # it exits
        with anyio.fail_after(BEHAVIOUR):  # its owner task reports the loss
            while (await _get(f"{base}/readyz")).status_code == 200:
                await anyio.sleep(0.05)
        anyone = {
            token: await _get(f"{base}/readyz", token)
            for token in (None, LIMITED, OTHER_TOKEN, f"{TOKEN}x")
        }
        operator = {token: await _get(f"{base}/readyz", token) for token in (TOKEN, METRICS_TOKEN)}
        healthz = await _get(f"{base}/healthz")
    for token, response in anyone.items():
        assert (response.status_code, response.json()) == (503, NOT_UP), token
        assert HIDDEN not in response.text
    for response in operator.values():
        assert response.status_code == 503
        servers = response.json()["failing"]["servers"]
        assert servers.startswith(f"required server '{HIDDEN}' is failed"), servers
    assert (healthz.status_code, healthz.json()) == (200, {"status": "alive"})
