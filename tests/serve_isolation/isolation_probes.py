"""Every request `serve` answers, as a limited client sends it to probe for a hidden name,
and what a full client does with the hidden server meanwhile.

A `Probe` is sent twice: naming something of the hidden namespace, and naming the same
thing where nothing is mounted (or with a word no tool has). The two answers must be the
same once each name is blanked (`isolation_support.blank`).
"""

from __future__ import annotations

from collections.abc import AsyncGenerator, Awaitable, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Any

import anyio
import mcp_types
from mcp import Client
from pydantic import BaseModel

from serve.serve_support import BEHAVIOUR
from serve_isolation.isolation_compare_support import counterpart
from serve_isolation.isolation_support import HIDDEN, ITEMS, MODERN, PRIVATE, PUB, Principal, uri

Send = Callable[[Client, str], Awaitable[BaseModel]]


@dataclass(frozen=True, slots=True)
class Probe:
    """One request, sent naming ``hidden`` and then ``nowhere`` (each blanked in its answer).

    ``template`` puts the name in what is sent (a search query); `missing` defaults to
    ``hidden`` in the namespace that is not mounted.
    """

    label: str
    hidden: str
    send: Send
    nowhere: str = ""
    template: str = "{}"

    @property
    def missing(self) -> str:
        """What stands for ``hidden`` in the second request."""
        return self.nowhere or counterpart(self.hidden)

    def sent(self, name: str) -> str:
        """What the request holds for ``name``."""
        return self.template.format(name)

    def request(self, client: Client, name: str) -> Awaitable[BaseModel]:
        return self.send(client, self.sent(name))


def _call(arguments: dict[str, Any]) -> Send:
    return lambda client, name: client.call_tool(name, arguments)


def _via_call_tool(client: Client, name: str) -> Awaitable[BaseModel]:
    return client.call_tool("call_tool", {"name": name, "arguments": {"text": "hi"}})


def _search(limit: int | None = None) -> Send:
    def send(client: Client, query: str) -> Awaitable[BaseModel]:
        arguments: dict[str, Any] = {"query": query}
        if limit is not None:
            arguments["limit"] = limit
        return client.call_tool("tool_search", arguments)

    return send


def _prompt(client: Client, name: str) -> Awaitable[BaseModel]:
    return client.get_prompt(name, {"name": "ada"})


def _complete_prompt(client: Client, name: str) -> Awaitable[BaseModel]:
    ref = mcp_types.PromptReference(name=name)
    return client.complete(ref, {"name": "name", "value": ""})


def _complete_template(client: Client, template: str) -> Awaitable[BaseModel]:
    ref = mcp_types.ResourceTemplateReference(uri=template)
    return client.complete(ref, {"name": "item", "value": ""})


def _read(client: Client, resource: str) -> Awaitable[BaseModel]:
    return client.read_resource(resource)


def _subscribe(client: Client, resource: str) -> Awaitable[BaseModel]:
    # Not Client.subscribe_resource: it warns of the 2026-07-28 deprecation.
    request = mcp_types.SubscribeRequest(params=mcp_types.SubscribeRequestParams(uri=resource))
    return client.session.send_request(request, mcp_types.EmptyResult)


def _unsubscribe(client: Client, resource: str) -> Awaitable[BaseModel]:
    params = mcp_types.UnsubscribeRequestParams(uri=resource)
    return client.session.send_request(
        mcp_types.UnsubscribeRequest(params=params), mcp_types.EmptyResult
    )


async def _listen(client: Client, resource: str) -> BaseModel:
    async with client.listen(
        tools_list_changed=True, resource_subscriptions=[uri(PUB), resource]
    ) as stream:
        return stream.honored


def probes(protocol_version: str) -> list[Probe]:
    """Every request that can name a tool, prompt or resource, in ``protocol_version``."""
    tool = f"{HIDDEN}__echo"
    search = _search()
    found = [
        Probe("tools/call", tool, _call({"text": "hi"})),
        Probe("tools/call own tool", f"{HIDDEN}__vault_admin_secret", _call({})),
        Probe("tools/call deferred", f"{HIDDEN}__quokka_census", _call({})),
        Probe("tools/call asking", f"{HIDDEN}__elicit", _call({"question": "why?"})),
        Probe("tools/call x-mcp-header", f"{HIDDEN}__headed", _call({"region": "eu", "text": "x"})),
        Probe("call_tool", tool, _via_call_tool),
        Probe("tool_search select", f"{HIDDEN}__archive_lookup", search, template="select:{}"),
        Probe("tool_search select own", f"{HIDDEN}__quokka_census", search, template="select:{}"),
        Probe(
            "tool_search select mixed",
            f"{HIDDEN}__quokka_census",
            search,
            template=f"select:{PUB}__archive_lookup,{{}}",
        ),
        Probe("tool_search +word", "quokka", search, nowhere="narwhal", template="+{}"),
        Probe("tool_search words", "quokka", search, nowhere="narwhal", template="{} census"),
        # The hidden tool ranks first: the one visible match must still be found.
        Probe("tool_search limit", "quokka", _search(1), nowhere="narwhal", template="archive {}"),
        Probe("prompts/get", f"{HIDDEN}__greet", _prompt),
        Probe("prompts/get own prompt", f"{HIDDEN}__vault_admin_secret_prompt", _prompt),
        Probe("prompts/get near a hidden prompt", f"{PUB}__vault_admin_secret_prompt", _prompt),
        Probe("completion/complete prompt", f"{HIDDEN}__greet", _complete_prompt),
        Probe(
            "completion/complete near a hidden prompt",
            f"{PUB}__vault_admin_secret_prompt",
            _complete_prompt,
        ),
        Probe("completion/complete template", uri(HIDDEN, ITEMS), _complete_template),
        Probe("resources/read", uri(HIDDEN), _read),
        Probe("resources/read template", uri(HIDDEN, "memo://items/x"), _read),
        Probe("resources/subscribe", uri(HIDDEN), _subscribe),
        Probe("resources/unsubscribe", uri(HIDDEN), _unsubscribe),
    ]
    if protocol_version == MODERN:
        found.append(Probe("subscriptions/listen", uri(HIDDEN), _listen))
    return found


@asynccontextmanager
async def listening(who: Principal, *resources: str) -> AsyncGenerator[None]:
    """In the 2026-07-28 era, a listen stream for tool list changes and ``resources``' updates
    (its frames reach ``who.notices`` as the handshake era's notices do)."""
    client = who.client
    if client.protocol_version != MODERN:
        yield
        return
    async with (
        client.listen(tools_list_changed=True, resource_subscriptions=resources) as events,
        anyio.create_task_group() as tg,
    ):

        async def drain() -> None:
            async for _ in events:
                pass

        tg.start_soon(drain)
        yield
        tg.cancel_scope.cancel()


async def exercise_hidden(full: Principal, *, notified: bool) -> None:
    """Use everything of the hidden server as the full client; when it can be ``notified``
    (a session, or a listen stream), wait until it was told of the hidden server's log
    message, tool list change and resource update (so a limited client would have been
    too), and of everything else it is told, so that it has no notice still on its way.
    """
    client = full.client
    session = notified and client.protocol_version != MODERN
    changed = mcp_types.ToolListChangedNotification
    with anyio.fail_after(BEHAVIOUR):
        await client.list_tools()  # a session is told of list changes once it listed
        if session:
            await full.subscribe(uri(HIDDEN))
        await client.call_tool(f"{HIDDEN}__grow", {"name": "vault_grown"})
        if notified:
            await full.wait_told(changed)
        await client.call_tool(f"{HIDDEN}__touch", {"uri": "memo://one"})
        if notified:
            await full.wait_told(mcp_types.ResourceUpdatedNotification)
        await client.call_tool(f"{HIDDEN}__log", {"text": "private log"})
        if notified or client.protocol_version == MODERN:  # 2026: it rides the response
            await full.wait_for_log(PRIVATE)
        await client.call_tool("tool_search", {"query": f"select:{HIDDEN}__quokka_census"})
        if session:  # its own find is told to it
            await full.wait_told(changed, 2)
        await client.call_tool(f"{HIDDEN}__echo", {"text": "private words"})
        await client.call_tool(f"{HIDDEN}__elicit", {"question": "private question?"})
        await client.get_prompt(f"{HIDDEN}__vault_admin_secret_prompt", {})
        await client.read_resource(uri(HIDDEN))
