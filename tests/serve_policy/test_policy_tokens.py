"""A Cedar policy decides, by token, which tools each client of `mcpmount serve` may see and
call: ``github__*`` for everyone, ``github__delete_*`` only for a JWT whose ``role`` claim
says admin. A denied tool is answered exactly as one that is not mounted, and its call
never reaches the server."""

from __future__ import annotations

from pathlib import Path

import anyio
import pytest
from serve_policy_support import CI_TOKEN, GITHUB_POLICY, calls, close_to, github, write_setup

from http_fixture import serve_http
from serve.serve_support import BEHAVIOUR, names, served_http, wait_for_tool
from serve_auth.auth_support import Issuer, bearer_client
from serve_isolation.isolation_compare_support import blank
from serve_isolation.isolation_support import answer
from support import free_port

pytestmark = [pytest.mark.anyio, pytest.mark.usefixtures("no_leaks")]

EVERY = ["github__delete_branch", "github__delete_repo", "github__list_issues"]
DENIED = "github__delete_repo"
MISSING = "github__delete_rope"
"""Not mounted: as long as `DENIED`, with the same close names among what is visible."""


async def test_the_admin_claim_lifts_a_deny_that_hides_a_tool_as_if_absent(
    tmp_path: Path,
) -> None:
    record = tmp_path / "github.log"
    config = write_setup(tmp_path, GITHUB_POLICY, github(record))
    port = free_port()
    issuer = Issuer(f"http://127.0.0.1:{port}/mcp")
    admin_token = issuer.token(sub="ada", role="admin")
    dev_token = issuer.token(sub="bob", role=["dev", "ops"])
    async with serve_http(issuer.app(), path="/jwks") as jwks_url:
        flags = ["--port", str(port), *issuer.flags(jwks_url)]
        async with (
            served_http(str(config), tmp_path, *flags) as (url, _),
            bearer_client(url, admin_token, mode="auto") as admin,
            bearer_client(url, dev_token, mode="auto") as dev,
            bearer_client(url, CI_TOKEN, mode="legacy") as ci,
        ):
            await wait_for_tool(admin, "github__list_issues")
            with anyio.fail_after(BEHAVIOUR):
                seen = [sorted(names(await c.list_tools())) for c in (admin, dev, ci)]
                denied = [await answer(c.call_tool(DENIED, {"name": "x"})) for c in (dev, ci)]
                missing = [await answer(c.call_tool(MISSING, {"name": "x"})) for c in (dev, ci)]
                via_meta = await answer(dev.call_tool("call_tool", {"name": DENIED}))
                via_meta_missing = await answer(dev.call_tool("call_tool", {"name": MISSING}))
                allowed = await dev.call_tool("github__list_issues", {})
                deleted = await admin.call_tool(DENIED, {"name": "x"})
    assert seen == [EVERY, ["github__list_issues"], ["github__list_issues"]]
    assert close_to(DENIED, seen[1]) == close_to(MISSING, seen[1])  # the premise
    assert [blank(a, DENIED) for a in denied] == [blank(a, MISSING) for a in missing]
    assert "error" in denied[0]
    assert blank(via_meta, DENIED) == blank(via_meta_missing, MISSING)
    assert not allowed.is_error
    assert not deleted.is_error
    assert calls(record) == ["tools/call list_issues", "tools/call delete_repo"]
