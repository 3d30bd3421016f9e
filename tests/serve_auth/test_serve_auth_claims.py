"""JWTs of an issuer whose keys the test holds: the ``mcpmount_namespaces`` claim limits what
a token sees, and a token signed with a shared-secret algorithm is refused."""

from __future__ import annotations

from pathlib import Path

import anyio
import pytest
from mcp import MCPError

from http_fixture import serve_http
from serve.serve_support import BEHAVIOUR, names, served_http, wait_for_tool, write_config
from serve_auth.auth_support import ISSUER, Issuer, bearer_client, calls, post, recording
from support import free_port

pytestmark = [pytest.mark.anyio, pytest.mark.usefixtures("no_leaks")]


@pytest.mark.parametrize("mode", ["legacy", "auto"])
async def test_the_namespaces_claim_limits_what_a_jwt_sees(tmp_path: Path, mode: str) -> None:
    """["alpha"] sees alpha; no claim sees both; a malformed claim sees nothing; an HS256
    token keyed with the public key is 401 and reaches no upstream server."""
    alpha_log, beta_log = tmp_path / "alpha.log", tmp_path / "beta.log"
    config = write_config(tmp_path, recording("alpha", alpha_log), recording("beta", beta_log))
    port = free_port()
    issuer = Issuer(f"http://127.0.0.1:{port}/mcp")
    async with serve_http(issuer.app(), path="/jwks") as jwks_url:
        flags = ["--port", str(port), "--oauth-issuer", ISSUER, "--oauth-jwks-url", jwks_url]
        flags += ["--oauth-resource", issuer.resource]
        async with (
            served_http(config, tmp_path, *flags) as (url, _),
            bearer_client(url, issuer.token(), mode=mode) as everything,
            bearer_client(url, issuer.token(mcpmount_namespaces=["alpha"]), mode=mode) as alpha,
            bearer_client(url, issuer.token(mcpmount_namespaces="alpha"), mode=mode) as nothing,
        ):
            await wait_for_tool(everything, "alpha__echo")
            await wait_for_tool(everything, "beta__echo")
            with anyio.fail_after(BEHAVIOUR):
                seen = [names(await c.list_tools()) for c in (everything, alpha, nothing)]
                with pytest.raises(MCPError) as hidden:
                    await alpha.call_tool("beta__echo", {"text": "x"})
                await alpha.call_tool("alpha__echo", {"text": "x"})
            confused = await post(url, authorization=f"Bearer {issuer.hs256_with_the_public_key()}")
    assert seen == [["alpha__echo", "beta__echo"], ["alpha__echo"], []]
    # As an unknown name: suggestions drawn from what the token sees, never from beta.
    assert str(hidden.value) == "no mounted tool is named 'beta__echo'; did you mean alpha__echo?"
    assert confused.status_code == 401
    assert calls(alpha_log) == ["tools/call echo"]
    assert calls(beta_log) == []
