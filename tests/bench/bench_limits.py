"""What a ``[serve.limits]`` check costs a call: in memory, and with a Redis replicas share.

The front's `Quotas` middleware is called as the SDK calls it, with a ``tools/call``
context and a handler that answers at once, on uvloop (as ``serve`` runs), for:

1. no rules (the cost every call pays once limits exist at all);
2. one rate rule and a concurrency cap, counted in memory, per strategy;
3. the same, counted in a real redis-server on a Unix socket (``--shared-state``).

Each case runs ``--calls`` checks (the rate is high enough never to refuse) after a
warm-up; it prints the median and the 99th percentile per check. Run it from the
repository root:

    python tests/bench/bench_limits.py     # about 20 s on 2 cores
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path
from typing import Any, cast

import anyio
import mcp_types
from mcp.server import ServerRequestContext
from mcp.server.context import HandlerResult

TESTS = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(TESTS))  # for the harness

from mcpmount.config import LimitRule, RegistrySettings, ServeLimits  # noqa: E402
from mcpmount.registry import Registry  # noqa: E402
from mcpmount.serve.quotas import Counters, Limits, Quotas, Strategy  # noqa: E402
from redis_support import running_redis  # noqa: E402

STRATEGIES: tuple[Strategy, ...] = ("moving-window", "fixed-window", "sliding-window-counter")


def context() -> ServerRequestContext[Any, Any]:
    """A ``tools/call`` context as the SDK hands a middleware (no HTTP: no token)."""
    params = {"name": "alpha__echo", "arguments": {"text": "hi"}}
    fields: dict[str, Any] = dict.fromkeys(ServerRequestContext.__dataclass_fields__)
    fields.update(method="tools/call", params=params, request_id=1)
    return ServerRequestContext(**fields)


async def answered(ctx: ServerRequestContext[Any, Any]) -> HandlerResult:
    return mcp_types.CallToolResult(content=[])


async def time_checks(quotas: Quotas, calls: int) -> list[float]:
    """Microseconds of each of ``calls`` checks, after a tenth as many unmeasured."""
    ctx = context()
    for _ in range(calls // 10):
        await quotas(ctx, answered)
    took: list[float] = []
    for _ in range(calls):
        start = time.perf_counter()
        result = await quotas(ctx, answered)
        took.append((time.perf_counter() - start) * 1e6)
        assert not cast("mcp_types.CallToolResult", result).is_error, result
    return took


def report(label: str, took: list[float]) -> None:
    p50 = statistics.median(took)
    p99 = statistics.quantiles(took, n=100)[98]
    print(f"{label:<44} p50 {p50:8.1f} us   p99 {p99:8.1f} us")


def limits_of(strategy: Strategy, *, rules: bool = True) -> ServeLimits:
    rule = LimitRule(rate="1000000/minute", concurrency=1000)
    return ServeLimits(strategy=strategy, rule=[rule] if rules else [])


async def main(calls: int) -> None:
    async with Registry(RegistrySettings()) as registry:
        async with Counters() as counters:
            plain = limits_of("moving-window", rules=False)
            report(
                "no rules",
                await time_checks(Quotas(registry, Limits(lambda: plain, counters)), calls),
            )
            for strategy in STRATEGIES:
                settings = limits_of(strategy)
                quotas = Quotas(registry, Limits(lambda s=settings: s, counters))
                report(f"memory, {strategy}", await time_checks(quotas, calls))
        async with running_redis() as redis, Counters(redis.url, namespace="bench") as counters:
            for strategy in STRATEGIES:
                settings = limits_of(strategy)
                quotas = Quotas(registry, Limits(lambda s=settings: s, counters))
                report(f"redis (unix socket), {strategy}", await time_checks(quotas, calls))


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description="What a [serve.limits] check costs a call.")
    parser.add_argument("--calls", type=int, default=3000, help="checks per case")
    anyio.run(main, parser.parse_args().calls, backend_options={"use_uvloop": True})
