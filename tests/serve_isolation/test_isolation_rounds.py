"""A 2026-07-28 ``requestState`` resumes only the call that made it, for its own client.

The full client calls the hidden server's tool that asks a question, and gets an
``InputRequiredResult`` whose ``requestState`` resumes that call. Sent by another token,
with another method or with another name, the state is answered exactly as one that
never existed, and it stays the full client's to use.
"""

from __future__ import annotations

from collections.abc import Awaitable
from pathlib import Path

import anyio
import mcp_types
import pytest
from mcp.client.session import ClientSession
from pydantic import BaseModel

from serve.serve_support import BEHAVIOUR
from serve_isolation.isolation_support import (
    FULL,
    HIDDEN,
    LIMITED,
    PRIVATE,
    PUB,
    SESSIONLESS,
    answer,
    principal,
    serving,
    uri,
)
from support import text_of

pytestmark = [pytest.mark.slow, pytest.mark.anyio, pytest.mark.usefixtures("no_leaks")]

QUESTION = {"question": "private question?"}


def _replies(key: str, said: str) -> mcp_types.InputResponses:
    return {key: mcp_types.ElicitResult(action="accept", content={"answer": said})}


def _resume(
    session: ClientSession, method: str, name: str, state: str, replies: mcp_types.InputResponses
) -> Awaitable[BaseModel]:
    """``method`` of ``name`` carrying ``state`` and ``replies``, as a retry does."""
    if method == "tools/call":
        return session.call_tool(
            name,
            QUESTION if name.endswith("__elicit") else {"text": "hi"},
            input_responses=replies,
            request_state=state,
            allow_input_required=True,
        )
    if method == "prompts/get":
        return session.get_prompt(
            name,
            {"name": "ada"},
            input_responses=replies,
            request_state=state,
            allow_input_required=True,
        )
    return session.read_resource(
        name, input_responses=replies, request_state=state, allow_input_required=True
    )


async def _park(session: ClientSession) -> mcp_types.InputRequiredResult:
    """Call the hidden tool that asks: the call waits for the answer."""
    first = await session.call_tool(f"{HIDDEN}__elicit", QUESTION, allow_input_required=True)
    assert isinstance(first, mcp_types.InputRequiredResult), first
    return first


ELSEWHERE = [
    ("tools/call", f"{PUB}__echo"),
    ("prompts/get", f"{PUB}__greet"),
    ("resources/read", uri(PUB)),
]
"""What another client sends with a state it did not get: visible to it, nothing asks."""

MISDIRECTED = [
    ("tools/call", f"{HIDDEN}__echo"),
    ("prompts/get", f"{HIDDEN}__greet"),
    ("resources/read", uri(HIDDEN)),
]
"""What the state's own client sends with it, naming something else of the same server."""


@pytest.mark.parametrize("flags", SESSIONLESS)
async def test_a_request_state_resumes_only_its_own_call_for_its_own_token(
    tmp_path: Path, flags: tuple[str, ...]
) -> None:
    """The full client sending a state with another name or method, and the limited client
    sending the full client's states (with its own answers), are told each is unknown, as
    for a made-up state; neither gets the hidden tool's result. Each state then still
    resumes the full client's call, with the full client's answer."""
    async with (
        serving(tmp_path, *flags, protocol="auto") as url,
        principal(url, FULL, mode="auto") as full,
        principal(url, LIMITED, mode="auto") as limited,
    ):
        owner, other = full.client.session, limited.client.session
        with anyio.fail_after(BEHAVIOUR):
            firsts = [await _park(owner) for _ in range(1 + len(ELSEWHERE))]
        parked = [first.request_state or "" for first in firsts]
        [key] = firsts[0].input_requests or {}
        mallory = _replies(key, "mallory")
        own_made_up = [
            await answer(_resume(owner, method, name, "made-up-state", mallory))
            for method, name in MISDIRECTED
        ]
        misdirected = [
            await answer(_resume(owner, method, name, parked[0], mallory))
            for method, name in MISDIRECTED
        ]
        made_up = [
            await answer(_resume(other, method, name, "made-up-state", mallory))
            for method, name in ELSEWHERE
        ]
        stolen = [
            await answer(_resume(other, method, name, state, mallory))
            for (method, name), state in zip(ELSEWHERE, parked[1:], strict=True)
        ]
        alice = _replies(key, "alice")
        done = [
            await answer(_resume(owner, "tools/call", f"{HIDDEN}__elicit", state, alice))
            for state in parked
        ]
    assert misdirected == own_made_up
    assert stolen == made_up
    assert PRIVATE not in str(stolen)
    assert [(error["error"]["code"], error["error"]["message"]) for error in made_up] == [
        (
            mcp_types.INVALID_PARAMS,
            f"{name}: the request state is unknown or expired; send the request again",
        )
        for _, name in ELSEWHERE
    ]
    results = [mcp_types.CallToolResult.model_validate(d["result"]) for d in done if "result" in d]
    assert [text_of(result) for result in results] == [f"{HIDDEN} was told: alice {PRIVATE}"] * 4
