"""The extra scenario "+concurrent-asks" of conformance/run.py: questions on the standalone
stream, to two clients at once.

The suite's reference server asks for sampling and elicitation with `server.request(...)`
outside any request: on a streamable HTTP session's standalone (GET) stream, where nothing
says which call the question belongs to. A plain server has a session per client, so the
question reaches the client of that session. conformance/concurrent_asks.mjs (the
TypeScript SDK's `McpServer`, pinned in conformance/package.json) does the same: its tool
`ask(label)` waits until two calls are in flight, asks "question for <label>" on the
standalone stream, and returns the answer once both are answered.

Two SDK clients each call `ask` with their own label at once; the scenario passes when each
was asked exactly its own question and got its own answer back. **direct**: the server
itself. **serve**: `mcpmount serve` mounting it over streamable HTTP with ``sessions`` as
given: ``per_client`` (each client its own upstream session, so the question has one client
to go to) passes; ``shared`` (one upstream session for both) cannot tell whom to ask.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Final

import anyio
import mcp_types
from mcp import Client
from mcp.client import ClientRequestContext
from verdicts import Verdict

__all__ = ["NAME", "NAMESPACE", "SCRIPT", "serve_table", "two_askers"]

NAME: Final = "+concurrent-asks"
SCRIPT: Final = Path(__file__).resolve().parent / "concurrent_asks.mjs"
NAMESPACE: Final = "asks"
LABELS: Final = ("alpha", "beta")


def serve_table(url: str, sessions: str) -> str:
    """The serve config mounting the asking server at ``url`` as `NAMESPACE`."""
    return (
        f'[servers.{NAMESPACE}]\nurl = {json.dumps(url)}\nprotocol = "legacy"\n'
        f"sessions = {json.dumps(sessions)}\n"
    )


def two_askers(url: str, tool: str, timeout: float) -> Verdict:
    """Run the scenario against ``url`` (calling ``tool``); its outcome and why."""
    asked: dict[str, list[str]] = {label: [] for label in LABELS}
    answers: dict[str, str] = {}

    async def one(label: str) -> None:
        async def elicit(
            context: ClientRequestContext, params: mcp_types.ElicitRequestParams
        ) -> mcp_types.ElicitResult:
            asked[label].append(params.message)
            return mcp_types.ElicitResult(action="accept", content={"answer": label})

        async with Client(url, mode="legacy", elicitation_callback=elicit) as client:
            result = await client.call_tool(tool, {"label": label})
        blocks = result.content
        answers[label] = "".join(b.text for b in blocks if isinstance(b, mcp_types.TextContent))

    async def both() -> None:
        with anyio.fail_after(timeout):
            async with anyio.create_task_group() as tg:
                for label in LABELS:
                    tg.start_soon(one, label)

    try:
        anyio.run(both)
    except TimeoutError:
        return Verdict("ERROR", f"no result within {timeout:.0f} s")
    except Exception as exc:  # a client that could not connect or call: the run goes on
        return Verdict("ERROR", f"{type(exc).__name__}: {exc}"[:72])
    wrong = [
        f"{label} was asked {asked[label]} and got {answers.get(label)!r}"
        for label in LABELS
        if asked[label] != [f"question for {label}"] or answers.get(label) != label
    ]
    return Verdict("FAIL", "; ".join(wrong)[:72]) if wrong else Verdict("pass")
