"""Helpers for the operations tests: an in-process front over HTTP, scrapes and probes."""

from __future__ import annotations

from collections.abc import AsyncGenerator, Mapping
from contextlib import asynccontextmanager
from functools import partial
from pathlib import Path

import anyio
import httpx2
from prometheus_client.parser import text_string_to_metric_families

from mcpmount.config import RegistrySettings, ServerSpec
from mcpmount.registry import Registry
from mcpmount.serve import Host, RegistryServer
from serve.serve_support import STARTUP
from support import record_pids

META = str(Path(__file__).parent / "meta_server.py")
"""tests/serve_ops/meta_server.py: answers each call with the ``_meta`` it received."""

Samples = dict[tuple[str, frozenset[tuple[str, str]]], float]
"""Each sample of a scrape by (sample name, its labels)."""


@asynccontextmanager
async def front_over_http(
    servers: Mapping[str, ServerSpec],
) -> AsyncGenerator[tuple[Host, str]]:
    """A front in this process with ``servers`` mounted, serving HTTP; yields its host and
    base URL (``http://127.0.0.1:PORT``)."""
    settings = RegistrySettings(startup_timeout=15)
    async with Registry(settings) as registry, anyio.create_task_group() as tg:
        await registry.mount_all(servers)
        record_pids(registry)
        host = Host(RegistryServer(registry))
        stop = anyio.Event()
        urls: list[str] = []
        tg.start_soon(partial(host.run_http, stop, on_ready=urls.append))
        try:
            with anyio.fail_after(STARTUP):
                while not urls:
                    await anyio.sleep(0.01)
            yield host, urls[0].removesuffix("/mcp")
        finally:
            stop.set()


def base_of(url: str) -> str:
    """``http://HOST:PORT`` of a served ``.../mcp`` URL."""
    return url.removesuffix("/mcp")


async def scrape(base: str, *, token: str | None = None) -> Samples:
    """GET ``/metrics`` (with ``Authorization: Bearer TOKEN``) and parse it with
    prometheus_client's own text parser."""
    headers = {"Authorization": f"Bearer {token}"} if token is not None else {}
    async with httpx2.AsyncClient(headers=headers) as http:
        response = await http.get(f"{base}/metrics")
    assert response.status_code == 200, response.text
    assert response.headers["content-type"].startswith("text/plain")
    samples: Samples = {}
    for family in text_string_to_metric_families(response.text):
        for sample in family.samples:
            samples[sample.name, frozenset(sample.labels.items())] = sample.value
    return samples


def value(samples: Samples, name: str, **labels: str) -> float | None:
    """The sample ``name`` with exactly ``labels``; None if the scrape has none."""
    return samples.get((name, frozenset(labels.items())))


def series_of(samples: Samples, label: str) -> set[str]:
    """Every value the label ``label`` takes in a scrape."""
    return {v for _, labels in samples for k, v in labels if k == label}


async def probe(base: str, path: str) -> tuple[int, dict[str, object]]:
    """GET a probe; its status and JSON body."""
    async with httpx2.AsyncClient() as http:
        response = await http.get(f"{base}{path}")
    assert response.headers["content-type"] == "application/json"
    return response.status_code, response.json()
