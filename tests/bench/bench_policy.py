"""The cost of one policy decision (`mcpmount.policy.Policy.allows`), cached and uncached.

The docs' example policy (``github__*`` for everyone, ``github__delete_*`` for admins by a
JWT claim) is read from a file as ``serve`` reads it. A client with a JWT's worth of
claims asks about tool names:

1. uncached: each name asked once (a new policy per round, so nothing is cached), which
   is what the first list of a new token costs per tool;
2. cached: the same names again, what every later request costs;
3. the subject's cache key, made once per request (its claims hashed).

Each figure is the median of several rounds, per decision. Run it from the repository root:

    python tests/bench/bench_policy.py     # a few seconds
"""

from __future__ import annotations

import statistics
import tempfile
import time
from pathlib import Path

from mcpmount.policy import Policy, Subject, read_policy

POLICY = """\
permit(principal, action, resource is Tool)
when { resource.name like "github__*" };

forbid(principal, action, resource is Tool)
when { resource.name like "github__delete_*" }
unless { principal.hasTag("role") && principal.getTag("role").contains("admin") };
"""
NAMES = [f"github__tool_{i}" for i in range(400)] + [f"github__delete_{i}" for i in range(100)]
ROUNDS = 7


def _subject() -> Subject:
    claims = {
        "iss": "https://issuer.example.com",
        "sub": "ada",
        "aud": "https://mcp.example.com/mcp",
        "client_id": "agent",
        "role": ["dev", "admin"],
        "groups": ["platform", "oncall"],
        "exp": 1_900_000_000,
    }
    return Subject(
        "agent/ada",
        name="agent",
        issuer="https://issuer.example.com",
        subject="ada",
        scopes=["mcp"],
        claims=claims,
    )


def _per_decision(policy: Policy, subject: Subject) -> float:
    start = time.perf_counter()
    for name in NAMES:
        policy.allows(subject, "tool", name, "github")
    return (time.perf_counter() - start) / len(NAMES)


def main() -> None:
    with tempfile.TemporaryDirectory() as scratch:
        path = Path(scratch) / "policy.cedar"
        path.write_text(POLICY)
        uncached: list[float] = []
        cached: list[float] = []
        keys: list[float] = []
        for _ in range(ROUNDS):
            policy = read_policy(path)  # a reload: an empty cache
            uncached.append(_per_decision(policy, _subject()))
            cached.append(_per_decision(policy, _subject()))
            start = time.perf_counter()
            for _ in range(1000):
                _ = _subject().key
            keys.append((time.perf_counter() - start) / 1000)
    print(f"decisions per round: {len(NAMES)}, rounds: {ROUNDS} (medians)")
    print(f"uncached decision: {statistics.median(uncached) * 1e6:8.1f} us")
    print(f"cached decision:   {statistics.median(cached) * 1e6:8.2f} us")
    print(f"subject key:       {statistics.median(keys) * 1e6:8.2f} us (once a request)")


if __name__ == "__main__":
    main()
