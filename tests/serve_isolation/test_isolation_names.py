"""What a limited token is told when it names something it may not see, or nothing at all.

An unknown tool or prompt is answered ``-32602`` with the registry's words and its
suggestions drawn from the names the token may see only (a prompt name near a hidden one
names nothing hidden); a hidden tool's ``x-mcp-header`` parameter is not checked (the
SDK's header check would answer ``-32020``, which an unknown tool never gets); and the
results of ``prompts/get`` and ``resources/read`` carry serve's ``serverInfo``, not the
upstream server's.
"""

from __future__ import annotations

import anyio
import mcp_types
import pytest

from serve.serve_support import BEHAVIOUR
from serve_isolation.isolation_compare_support import blank, close_to, suggestions
from serve_isolation.isolation_support import (
    FULL,
    HIDDEN,
    LIMITED,
    NOWHERE,
    PUB,
    PUB_TOOLS,
    SERVED_AUTO,
    SHARED_SESSIONLESS,
    Shared,
    answer,
    on_shared_eras,
    principal,
    rpc,
    uri,
)

pytestmark = [pytest.mark.slow, pytest.mark.anyio, pytest.mark.usefixtures("no_leaks")]

NEAR_HIDDEN = f"{PUB}__vault_admin_secret_prompt"
"""Not a prompt: a visible namespace's name for the hidden server's own prompt."""

NEAR_NOWHERE = NEAR_HIDDEN.replace(HIDDEN, NOWHERE)


@on_shared_eras
async def test_unknown_names_are_answered_from_the_names_the_token_may_see(
    shared: Shared, mode: str
) -> None:
    """A prompt name near a hidden prompt (``prompts/get``, and ``completion/complete``) is
    answered as one near nothing: nothing of the hidden server in it. Every unknown tool or
    prompt is -32602 with the registry's suggestions among visible names only."""
    tools = [f"{HIDDEN}__echo", f"{NOWHERE}__echo", f"{PUB}__ech"]
    prompts = [NEAR_HIDDEN, NEAR_NOWHERE, f"{HIDDEN}__greet", f"{PUB}__greeet"]
    async with principal(shared.url, LIMITED, mode=mode) as limited:
        client = limited.client
        near = [await answer(client.get_prompt(name, {})) for name in (NEAR_HIDDEN, NEAR_NOWHERE)]
        ref = mcp_types.PromptReference
        near += [
            await answer(client.complete(ref(name=name), {"name": "name", "value": ""}))
            for name in (NEAR_HIDDEN, NEAR_NOWHERE)
        ]
        called = [await answer(client.call_tool(name, {"text": "hi"})) for name in tools]
        got = [await answer(client.get_prompt(name, {"name": "ada"})) for name in prompts]
    for hidden, missing in (near[0:2], near[2:4]):
        assert HIDDEN not in blank(hidden, NEAR_HIDDEN)
        assert blank(hidden, NEAR_HIDDEN) == blank(missing, NEAR_NOWHERE)
    for name, called_it in zip(tools, called, strict=True):
        error = called_it["error"]
        assert error["code"] == mcp_types.INVALID_PARAMS
        assert error["message"].startswith(f"no mounted tool is named {name!r}")
        assert suggestions(error["message"]) == close_to(name, PUB_TOOLS)
    for name, got_it in zip(prompts, got, strict=True):
        error = got_it["error"]
        assert error["code"] == mcp_types.INVALID_PARAMS
        assert error["message"].startswith(f"no mounted prompt is named {name!r}")
        assert suggestions(error["message"]) == close_to(name, (f"{PUB}__greet",))


@pytest.mark.parametrize("shared", SHARED_SESSIONLESS, indirect=True, scope="module")
async def test_a_hidden_tools_header_parameter_is_answered_as_an_unknown_tool(
    shared: Shared,
) -> None:
    """Raw 2026-07-28 calls without the ``Mcp-Param-Region`` header the tool declares: the
    full token is refused -32020 (the SDK's check), the limited one is told the tool is
    unknown, exactly as for a tool of a namespace that is not mounted."""
    arguments = {"region": "eu", "text": "x"}
    hidden, missing = [
        await rpc(
            shared.url, LIMITED, "tools/call", {"name": f"{ns}__headed", "arguments": arguments}
        )
        for ns in (HIDDEN, NOWHERE)
    ]
    headless = await rpc(
        shared.url, FULL, "tools/call", {"name": f"{HIDDEN}__headed", "arguments": arguments}
    )
    headed = await rpc(
        shared.url,
        FULL,
        "tools/call",
        {"name": f"{HIDDEN}__headed", "arguments": arguments},
        Mcp_Param_Region="eu",
    )
    assert blank(hidden, f"{HIDDEN}__headed") == blank(missing, f"{NOWHERE}__headed")
    assert hidden["error"]["code"] == mcp_types.INVALID_PARAMS
    assert headless["error"]["code"] == -32020  # the check is there: the full token meets it
    assert "result" in headed


@pytest.mark.parametrize(
    "shared", [pytest.param(SERVED_AUTO, id="serve")], indirect=True, scope="module"
)
@pytest.mark.parametrize("mode", ["legacy", "auto"])
async def test_prompts_and_resources_carry_serves_server_info_not_the_upstreams(
    shared: Shared, mode: str
) -> None:
    """Servers spoken to in the 2026-07-28 era stamp their results with their
    ``serverInfo``; ``prompts/get`` and ``resources/read`` drop it as ``tools/call`` does."""
    async with principal(shared.url, FULL, mode=mode) as full:
        client = full.client
        with anyio.fail_after(BEHAVIOUR):
            results = [
                await client.call_tool(f"{HIDDEN}__echo", {"text": "hi"}),
                await client.get_prompt(f"{HIDDEN}__greet", {"name": "ada"}),
                await client.read_resource(uri(HIDDEN)),
            ]
    stamps = [(result.meta or {}).get(mcp_types.SERVER_INFO_META_KEY) for result in results]
    assert [stamp["name"] for stamp in stamps if stamp is not None] == (
        ["mcpmount"] * 3 if mode == "auto" else []
    )
