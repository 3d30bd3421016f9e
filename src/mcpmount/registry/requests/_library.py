"""The registry's prompts and resources: getting, reading, completing and subscribing;
and the listeners of every table (tools, prompts, resources).

`Registry` delegates these to a `LibraryRequests`. Prompts are routed through the prompt
table by their public name, resources by their registry URI (``mcpmount://<namespace>/<uri>``,
see `mcpmount.catalog.split_uri`): any URI under a mounted server's prefix is routed to it
(an expanded template, a ``resource_link`` a tool returned), not only the listed ones.
A server mounted with ``prefix = false`` keeps its own URIs: one of them is routed by the
library's table of those servers (`Library.owner_of_uri`). Each request is sent with the
server's own name or URI, within the server's call timeout (waiting out a restart in it),
and every URI in what comes back is made a registry URI (left as it is for such a server).

Each request passes the same boundary as a tool call (`Interception.check_request`): the
host's interceptors that asked for its kind, the secret guard (another server's secret in
a prompt argument, a URI, a completion value is refused) and ``before_call``; and every
known secret is redacted from what comes back.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from types import MappingProxyType
from typing import Any, TypeVar

import anyio
import mcp_types
import pydantic
from mcp import Client

from mcpmount.catalog import Catalog, ChangeListener, Library, rewrite_prompt, rewrite_read
from mcpmount.errors import (
    ServerNotRunningError,
    UnknownPromptError,
    UnknownResourceError,
    UpstreamError,
)
from mcpmount.gates import Interception
from mcpmount.handlers import ToolCall
from mcpmount.registry._servers import Servers
from mcpmount.registry.requests._calls import redacted_error
from mcpmount.upstream import request

__all__ = [
    "LibraryRequests",
    "UpdateListener",
    "send_to",
    "subscribe_all",
]

_Result = TypeVar("_Result", bound=pydantic.BaseModel)

UpdateListener = Callable[[str], None]
"""Gets the registry URI of a resource its server says was updated."""


def subscribe_all(
    catalog: Catalog, library: Library, listener: ChangeListener
) -> Callable[[], None]:
    """Call ``listener`` after every change of the tool, prompt or resource tables; returns
    the unsubscriber (see `Registry.subscribe`)."""
    from_tools = catalog.subscribe(listener)
    from_library = library.subscribe(listener)

    def unsubscribe() -> None:
        from_tools()
        from_library()

    return unsubscribe


class LibraryRequests:
    """Prompt and resource requests, each sent to the server that owns what it names.

    Args:
        servers: The registry's servers (`Servers`).
        library: The prompt and resource tables.
    """

    def __init__(self, servers: Servers, library: Library, interception: Interception) -> None:
        self._servers = servers
        self._library = library
        self._interception = interception

    async def _check(
        self, kind: str, server: str, name: str, raw: str, sent: Mapping[str, Any], context: object
    ) -> None:
        """The boundary on the way in: the host's interceptors that asked for ``kind``,
        the secret guard, ``before_call`` (`Interception.check_request`)."""
        call = ToolCall(server, name, raw, MappingProxyType(dict(sent)), context, kind)
        await self._interception.check_request(call, self._servers.supervisors[server].spec)

    def _redacted(self, result: _Result) -> _Result:
        """The boundary on the way out: every known secret redacted, wherever it is."""
        return self._interception.secrets.redact_model(result)

    async def get_prompt(
        self,
        name: str,
        arguments: Mapping[str, str] | None,
        timeout: float | None,
        context: object | None,
    ) -> mcp_types.GetPromptResult:
        """See `Registry.get_prompt`."""
        entry = self._library.prompt(name)
        args = dict(arguments) if arguments is not None else None
        await self._check("prompts/get", entry.server, name, entry.raw_name, args or {}, context)

        async def send(client: Client) -> mcp_types.GetPromptResult:
            return await client.get_prompt(entry.raw_name, args)

        servers, interception = self._servers, self._interception
        result = await send_to(
            servers, interception, entry.server, "prompt", name, timeout, send, True, context
        )
        prefix = self._servers.supervisors[entry.server].spec.prefix
        return self._redacted(rewrite_prompt(entry.server, result, prefix=prefix))

    def owner(self, kind: str, name: str) -> str | None:
        """See `Registry.owner` (prompts and resources)."""
        try:
            if kind == "prompt":
                return self._library.prompt(name).server
            return self._servers.route(name)[0]
        except (UnknownPromptError, UnknownResourceError):
            return None

    async def read_resource(
        self, uri: str, timeout: float | None, context: object | None
    ) -> mcp_types.ReadResourceResult:
        """See `Registry.read_resource`."""
        server, raw = self._servers.route(uri)
        await self._check("resources/read", server, uri, raw, {"uri": raw}, context)

        async def send(client: Client) -> mcp_types.ReadResourceResult:
            return await client.read_resource(raw)

        servers, interception = self._servers, self._interception
        result = await send_to(
            servers, interception, server, "resource", uri, timeout, send, True, context
        )
        prefix = self._servers.supervisors[server].spec.prefix
        return self._redacted(rewrite_read(server, result, prefix=prefix))

    async def complete(
        self,
        ref: mcp_types.PromptReference | mcp_types.ResourceTemplateReference,
        argument: Mapping[str, str],
        context_arguments: Mapping[str, str] | None,
        timeout: float | None,
        whose: object | None = None,
    ) -> mcp_types.CompleteResult:
        """See `Registry.complete`."""
        if isinstance(ref, mcp_types.PromptReference):
            entry = self._library.prompt(ref.name)
            server, kind, name = entry.server, "prompt", ref.name
            raw_ref: mcp_types.PromptReference | mcp_types.ResourceTemplateReference = (
                ref.model_copy(update={"name": entry.raw_name})
            )
        else:
            server, raw = self._servers.route(ref.uri)
            kind, name = "resource", ref.uri
            raw_ref = ref.model_copy(update={"uri": raw})
        context = dict(context_arguments) if context_arguments is not None else None
        sent = {
            "ref": raw_ref.model_dump(mode="json", by_alias=True, exclude_none=True),
            "argument": dict(argument),
            "context": context or {},
        }
        raw_name = raw_ref.name if isinstance(raw_ref, mcp_types.PromptReference) else raw_ref.uri
        await self._check("completion/complete", server, name, raw_name, sent, None)

        async def send(client: Client) -> mcp_types.CompleteResult:
            return await client.complete(raw_ref, dict(argument), context)

        servers, interception = self._servers, self._interception
        return self._redacted(
            await send_to(servers, interception, server, kind, name, timeout, send, whose=whose)
        )

    async def subscription(self, uri: str, on: bool, timeout: float | None) -> None:
        """See `Registry.subscribe_resource` and `Servers.subscription`."""
        await self._servers.subscription(uri, on, timeout)


async def send_to(
    servers: Servers,
    interception: Interception,
    server: str,
    kind: str,
    name: str,
    timeout: float | None,
    send: Callable[[Client], Awaitable[_Result]],
    asks: bool = False,
    context: object | None = None,
    *,
    whose: object | None = None,
) -> _Result:
    """Send a request to ``server`` within the timeout, waiting out a restart in it; a
    server's error comes back with every known secret redacted from it. It goes over the
    connection of the client ``whose`` (else ``context``) names, for a ``per_client``
    server (`Clients.connection`).

    Raises:
        ServerNotRunningError: It did not start, or was not back in time.
        CallError: What `mcpmount.upstream.request` raises.
    """
    supervisor = servers.supervisors[server]
    seconds = servers.timeout(supervisor, timeout)
    began = anyio.current_time()
    if supervisor.dormant:
        servers.wake(supervisor)
    with supervisor.in_use():
        with anyio.move_on_after(seconds):
            await supervisor.ready.wait()
        remaining = seconds - (anyio.current_time() - began)
        if supervisor.dormant:  # its start failed
            reason = supervisor.error or "it did not start"
            raise ServerNotRunningError(server, name, reason, kind=kind)
        if not supervisor.ready.is_set() or supervisor.restarting or remaining <= 0:
            reason = f"it is restarting and was not back within {seconds:g} s"
            raise ServerNotRunningError(server, name, reason, kind=kind)
        key = context if whose is None else whose  # whose session: see `Clients.connection`
        opened = None
        with anyio.move_on_after(remaining):
            opened = await servers.clients.connection(supervisor, key, name, kind)
        remaining = seconds - (anyio.current_time() - began)
        if opened is None or remaining <= 0:
            reason = f"its session for this client did not open within {seconds:g} s"
            raise ServerNotRunningError(server, name, reason, kind=kind)
        connection, use = opened
        try:
            with use:
                return await request(
                    connection, kind, name, remaining, send, asks=asks, context=context
                )
        except UpstreamError as exc:
            raise redacted_error(exc, interception.secrets.redact) from None
