"""What a policy denies is answered exactly as what is not mounted, in every path: lists,
calls (direct and through ``call_tool``), ``tool_search``, prompts, completions, reads and
subscriptions, in both eras.

tests/serve_isolation/isolation_server.py is mounted as ``pub`` and as ``vault`` (with its
private text and names) behind one `mcpmount serve`; no token is limited to a namespace.
The policy forbids ``vault``'s names to every token but the one named ``full``. Each
request naming a thing of ``vault`` is sent again naming it in ``qzxjw`` (not mounted, as
long): with each name blanked, the two answers must be equal, and no byte the limited
client received may name ``vault``'s private things.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import anyio
import mcp_types
import pytest
from mcp import Client
from pydantic import BaseModel
from serve_policy_support import write_setup

from serve.serve_support import BEHAVIOUR, served_http, wait_for_tool
from serve_isolation.isolation_compare_support import blank, counterpart
from serve_isolation.isolation_support import (
    HIDDEN,
    ITEMS,
    PRIVATE,
    PUB,
    SECRETS,
    answer,
    isolation_server,
    principal,
    uri,
)

pytestmark = [
    pytest.mark.slow,
    pytest.mark.anyio,
    pytest.mark.usefixtures("no_leaks"),
    pytest.mark.timeout(180),  # three servers and dozens of requests, on a loaded machine
]

FULL = "full-token-0123456789abcdef"
LIMITED = "limited-token-0123456789abcdef"

POLICY = """\
permit(principal, action, resource);

// The vault's tools, prompts and resources: to the token named "full" only.
forbid(principal, action, resource)
when { resource.name like "vault__*" || resource.name like "mcpmount://vault/*" }
unless { principal.name == "full" };
"""

Send = Callable[[Client, str], Awaitable[BaseModel]]


def _call(arguments: dict[str, Any]) -> Send:
    return lambda client, name: client.call_tool(name, arguments)


def _search(template: str, limit: int = 5) -> Send:
    def send(client: Client, name: str) -> Awaitable[BaseModel]:
        query = template.format(name)
        return client.call_tool("tool_search", {"query": query, "limit": limit})

    return send


def _subscribe(client: Client, resource: str) -> Awaitable[BaseModel]:
    # Not Client.subscribe_resource: it warns of the 2026-07-28 deprecation.
    request = mcp_types.SubscribeRequest(params=mcp_types.SubscribeRequestParams(uri=resource))
    return client.session.send_request(request, mcp_types.EmptyResult)


PROBES: list[tuple[str, str, str, Send]] = [
    # (label, the denied name, its counterpart, how it is sent)
    ("tools/call", f"{HIDDEN}__echo", "", _call({"text": "hi"})),
    ("tools/call own tool", f"{HIDDEN}__vault_admin_secret", "", _call({})),
    ("tools/call deferred", f"{HIDDEN}__quokka_census", "", _call({})),
    (
        "call_tool",
        f"{HIDDEN}__echo",
        "",
        lambda c, n: c.call_tool("call_tool", {"name": n, "arguments": {"text": "hi"}}),
    ),
    ("tool_search select", f"{HIDDEN}__archive_lookup", "", _search("select:{}")),
    ("tool_search +word", "quokka", "narwhal", _search("+{}")),
    ("tool_search words", "quokka", "narwhal", _search("{} census")),
    ("tool_search limit", "quokka", "narwhal", _search("archive {}", 1)),
    ("prompts/get", f"{HIDDEN}__greet", "", lambda c, n: c.get_prompt(n, {"name": "ada"})),
    (
        "completion/complete prompt",
        f"{HIDDEN}__greet",
        "",
        lambda c, n: c.complete(mcp_types.PromptReference(name=n), {"name": "name", "value": ""}),
    ),
    (
        "completion/complete template",
        uri(HIDDEN, ITEMS),
        "",
        lambda c, n: c.complete(
            mcp_types.ResourceTemplateReference(uri=n), {"name": "item", "value": ""}
        ),
    ),
    ("resources/read", uri(HIDDEN), "", lambda c, n: c.read_resource(n)),
    ("resources/read template", uri(HIDDEN, "memo://items/x"), "", lambda c, n: c.read_resource(n)),
    ("resources/subscribe", uri(HIDDEN), "", _subscribe),
]


async def _everything_listed(client: Client) -> list[str]:
    shown = [t.name for t in (await client.list_tools()).tools]
    shown += [p.name for p in (await client.list_prompts()).prompts]
    shown += [r.uri for r in (await client.list_resources()).resources]
    templates = (await client.list_resource_templates()).resource_templates
    return shown + [t.uri_template for t in templates]


@pytest.mark.parametrize(
    "mode", [pytest.param("legacy", id="handshake"), pytest.param("auto", id="2026")]
)
async def test_a_denied_name_is_answered_as_a_missing_one_in_every_path(
    tmp_path: Path, mode: str
) -> None:
    servers = [
        isolation_server(PUB, tmp_path / f"{PUB}.log", protocol="legacy"),
        isolation_server(HIDDEN, tmp_path / f"{HIDDEN}.log", protocol="legacy", private=PRIVATE),
    ]
    config = write_setup(tmp_path, POLICY, *servers, tokens={"full": FULL, "limited": LIMITED})
    async with (
        served_http(str(config), tmp_path) as (url, _),
        principal(url, FULL, mode="auto") as full,
        principal(url, LIMITED, mode=mode) as limited,
    ):
        await wait_for_tool(full.client, f"{HIDDEN}__echo")
        with anyio.fail_after(BEHAVIOUR):
            full_sees = await _everything_listed(full.client)
            control = await full.client.call_tool(f"{HIDDEN}__echo", {"text": "x"})
            listed = await _everything_listed(limited.client)
        answered = [
            (
                label,
                hidden,
                missing := other or counterpart(hidden),
                await answer(send(limited.client, hidden)),
                await answer(send(limited.client, missing)),
            )
            for label, hidden, other, send in PROBES
        ]
        with anyio.fail_after(BEHAVIOUR):
            listed_after = await _everything_listed(limited.client)
    assert f"{HIDDEN}__echo" in full_sees
    assert uri(HIDDEN) in full_sees
    assert not control.is_error
    assert [name for name in listed + listed_after if HIDDEN in name] == []
    assert f"{PUB}__echo" in listed
    differing = {
        label: (denied, absent)
        for label, hidden, missing, denied, absent in answered
        if blank(denied, hidden) != blank(absent, missing)
    }
    assert differing == {}, json.dumps(differing, indent=1)
    for label, hidden, _, denied, _ in answered:
        if "search" not in label:  # a search finds nothing of vault, or names what was sent
            assert "error" in denied, (label, denied)
        text = blank(denied, hidden).lower()
        assert [s for s in SECRETS if s.lower() in text] == [], label
    calls = (tmp_path / f"{HIDDEN}.log").read_text().splitlines()
    assert [line for line in calls if line.startswith("tools/call")] == ["tools/call echo -"]
