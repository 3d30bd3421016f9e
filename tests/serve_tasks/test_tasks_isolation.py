"""Another token cannot see, read, wait on or cancel a task: its id is answered exactly as
an id that never existed, and ``tasks/list`` shows each token its own tasks only.

One `mcpmount serve` over HTTP with two tokens that both see server-everything; the first
starts a task, the second asks about that id and about a made-up one of the same shape,
and every answer must be byte-equal. The controls: the first token's own requests on the
id succeed, and its task still completes (the second's cancel did not reach it).
"""

from __future__ import annotations

import json
from collections.abc import Awaitable
from pathlib import Path
from typing import Any

import pytest
from mcp import MCPError
from serve_tasks_support import PREFIX, Tasker, serving_http, tasker

pytestmark = [
    pytest.mark.anyio,
    pytest.mark.usefixtures("no_leaks"),
    pytest.mark.timeout(120),
]

OWNER = "owner-token-0123456789abcdef"
OTHER = "other-token-0123456789abcdef"


async def _answer(request: Awaitable[dict[str, Any]]) -> str:
    """What a request was answered, as JSON: its result, or its error."""
    try:
        return json.dumps({"result": await request}, sort_keys=True)
    except MCPError as exc:
        error = exc.error.model_dump(mode="json", by_alias=True, exclude_none=True)
        return json.dumps({"error": error}, sort_keys=True)


async def _ask_all(client: Tasker, task_id: str) -> dict[str, str]:
    """Every task request that names an id, about ``task_id``."""
    methods = ["tasks/get", "tasks/cancel"]
    methods += ["tasks/update"] if client.modern else ["tasks/result"]
    answers: dict[str, str] = {}
    for method in methods:
        params: dict[str, Any] = {"taskId": task_id}
        if method == "tasks/update":
            params["inputResponses"] = {}
        answers[method] = await _answer(client.send(method, params))
    return answers


MODES = [pytest.param("legacy", id="2025-11-25"), pytest.param("auto", id="2026")]


@pytest.mark.parametrize("mode", MODES)
async def test_another_tokens_task_is_answered_as_an_unknown_one(tmp_path: Path, mode: str) -> None:
    tokens = tmp_path / "tokens.txt"
    tokens.write_text(f"{OWNER}\n{OTHER}\n")
    async with (
        serving_http(tmp_path, "--tokens-file", str(tokens)) as url,
        tasker(tmp_path, "http", mode, token=OWNER, url=url) as owner,
        tasker(tmp_path, "http", mode, token=OTHER, url=url) as other,
    ):
        task_id = (await owner.start({"topic": "tides"}))["taskId"]
        made_up = PREFIX + "x" * (len(task_id) - len(PREFIX))
        assert len(made_up) == len(task_id)

        theirs = await _ask_all(other, task_id)
        unknown = await _ask_all(other, made_up)
        assert theirs == unknown
        assert all('"error"' in answer for answer in theirs.values()), theirs
        assert task_id not in json.dumps(theirs)
        if not other.modern:
            assert (await other.send("tasks/list", {}))["tasks"] == []
            owned = (await owner.send("tasks/list", {}))["tasks"]
            assert [task["taskId"] for task in owned] == [task_id]

        # The controls: the owner reads it, and the other's cancel never reached it.
        assert (await owner.get(task_id))["taskId"] == task_id
        assert (await owner.wait(task_id, "completed", "cancelled"))["status"] == "completed"
