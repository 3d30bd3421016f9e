"""A change of the policy file reloads it into the running `mcpmount serve`: decisions change
without a restart; a policy that does not parse is refused and the one in force stays."""

from __future__ import annotations

from pathlib import Path

import anyio
import pytest
from serve_policy_support import CI_TOKEN, GITHUB_POLICY, calls, github, write_setup

from serve.serve_support import BEHAVIOUR, STARTUP, names, served_http, wait_for_tool
from serve_auth.auth_support import bearer_client

pytestmark = [pytest.mark.anyio, pytest.mark.usefixtures("no_leaks")]

CI_ONLY = 'permit(principal, action, resource is Tool) when { principal.name == "ci" };\n'


async def test_a_changed_policy_file_changes_decisions_without_a_restart(tmp_path: Path) -> None:
    record = tmp_path / "github.log"
    config = write_setup(tmp_path, GITHUB_POLICY, github(record))
    policy = tmp_path / "policy.cedar"
    log = tmp_path / "serve.log"
    async with (
        served_http(str(config), tmp_path) as (url, process),
        bearer_client(url, CI_TOKEN, mode="auto") as ci,
    ):
        await wait_for_tool(ci, "github__list_issues")
        with anyio.fail_after(BEHAVIOUR):
            before = sorted(names(await ci.list_tools()))
        policy.write_text(GITHUB_POLICY.replace("like", "lik", 1))
        with anyio.fail_after(STARTUP):
            while "reload refused" not in log.read_text():
                await anyio.sleep(0.05)
        with anyio.fail_after(BEHAVIOUR):
            kept = sorted(names(await ci.list_tools()))
        policy.write_text(CI_ONLY)
        await wait_for_tool(ci, "github__delete_repo")
        with anyio.fail_after(BEHAVIOUR):
            after = sorted(names(await ci.list_tools()))
            deleted = await ci.call_tool("github__delete_repo", {"name": "x"})
        assert process.returncode is None  # the same process throughout
    assert before == kept == ["github__list_issues"]
    assert after == ["github__delete_branch", "github__delete_repo", "github__list_issues"]
    assert not deleted.is_error
    assert calls(record) == ["tools/call delete_repo"]
