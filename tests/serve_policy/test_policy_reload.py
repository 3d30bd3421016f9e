"""A change of the policy file reloads it into the running `mcpmount serve`: decisions change
without a restart, and a client with a session is told its lists changed; a policy that
does not parse is refused and the one in force stays."""

from __future__ import annotations

from pathlib import Path

import anyio
import mcp_types
import pytest
from serve_policy_support import CI_TOKEN, GITHUB_POLICY, calls, github, write_setup

from serve.serve_support import BEHAVIOUR, STARTUP, names, served_http, wait_for_tool
from serve_isolation.isolation_support import principal

pytestmark = [pytest.mark.anyio, pytest.mark.usefixtures("no_leaks")]

CI_ONLY = 'permit(principal, action, resource is Tool) when { principal.name == "ci" };\n'

CHANGED = mcp_types.ToolListChangedNotification


async def test_a_changed_policy_file_changes_decisions_without_a_restart(tmp_path: Path) -> None:
    record = tmp_path / "github.log"
    config = write_setup(tmp_path, GITHUB_POLICY, github(record))
    policy = tmp_path / "policy.cedar"
    log = tmp_path / "serve.log"
    async with (
        served_http(str(config), tmp_path) as (url, process),
        principal(url, CI_TOKEN, mode="legacy") as ci,
    ):
        await wait_for_tool(ci.client, "github__list_issues")
        with anyio.fail_after(BEHAVIOUR):
            before = sorted(names(await ci.client.list_tools()))
        policy.write_text(GITHUB_POLICY.replace("like", "lik", 1))
        with anyio.fail_after(STARTUP):
            while "reload refused" not in log.read_text():
                await anyio.sleep(0.05)
        with anyio.fail_after(BEHAVIOUR):
            kept = sorted(names(await ci.client.list_tools()))
        told_of_refused = ci.told(CHANGED)
        policy.write_text(CI_ONLY)
        with anyio.fail_after(STARTUP):
            await ci.wait_told(CHANGED)  # the session is told: its list changed
        with anyio.fail_after(BEHAVIOUR):
            after = sorted(names(await ci.client.list_tools()))
            deleted = await ci.client.call_tool("github__delete_repo", {"name": "x"})
        assert process.returncode is None  # the same process throughout
    assert before == kept == ["github__list_issues"]
    assert told_of_refused == 0
    assert after == ["github__delete_branch", "github__delete_repo", "github__list_issues"]
    assert not deleted.is_error
    assert calls(record) == ["tools/call delete_repo"]
