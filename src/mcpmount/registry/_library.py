"""The registry's prompts and resources: listing, getting, reading, completing, subscribing;
and the listeners of every table (tools, prompts, resources).

`Registry` inherits these methods. Prompts are routed through the prompt table by their
public name, resources by their registry URI (``mcpmount://<namespace>/<uri>``, see
`mcpmount.catalog.split_uri`): any URI under a mounted server's prefix is routed to it
(an expanded template, a ``resource_link`` a tool returned), not only the listed ones.
Each request is sent with the server's own name or URI, within the server's call timeout
(waiting out a restart in it), and every URI in what comes back is made a registry URI.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Mapping
from typing import TYPE_CHECKING, TypeVar

import anyio
import mcp_types
import pydantic
from mcp import Client

from mcpmount.catalog import (
    Catalog,
    Library,
    Listener,
    registry_uri,
    rewrite_prompt,
    rewrite_read,
    split_uri,
)
from mcpmount.config import RegistrySettings
from mcpmount.errors import (
    NotSupportedError,
    RegistryError,
    ServerError,
    ServerNotRunningError,
    UnknownResourceError,
)
from mcpmount.upstream import Connection, ServerContent, Supervisor, request, set_subscription

if TYPE_CHECKING:
    from mcpmount.registry._starting import Starter

__all__ = ["LibraryMethods"]

logger = logging.getLogger(__name__)

_Result = TypeVar("_Result", bound=pydantic.BaseModel)

UpdateListener = Callable[[str], None]
"""Gets the registry URI of a resource its server says was updated."""


class LibraryMethods:
    """The prompt and resource half of `Registry` (its state lives in the registry)."""

    settings: RegistrySettings
    _catalog: Catalog
    _library: Library
    _servers: dict[str, Supervisor]
    _starts: Starter
    _failures: dict[str, ServerError]

    # -- listing ------------------------------------------------------------------------------

    def subscribe(self, listener: Listener) -> Callable[[], None]:
        """Call ``listener`` after every change of the tool, prompt or resource tables
        (`RegistryChange.kind` says which); returns the unsubscriber.

        Listeners run synchronously, right after the change: keep them short (set an event,
        put on a queue). One that raises is logged and kept.
        """
        from_tools = self._catalog.subscribe(listener)
        from_library = self._library.subscribe(listener)

        def unsubscribe() -> None:
            from_tools()
            from_library()

        return unsubscribe

    def prompts(self) -> list[mcp_types.Prompt]:
        """Return every mounted prompt under its public name (``<namespace>__<prompt>``)."""
        return self._library.prompts()

    def resources(self) -> list[mcp_types.Resource]:
        """Return every mounted resource under its registry URI (``mcpmount://<ns>/<uri>``)."""
        return self._library.resources()

    def resource_templates(self) -> list[mcp_types.ResourceTemplate]:
        """Return every resource template under its registry URI template."""
        return self._library.templates()

    # -- requests -----------------------------------------------------------------------------

    async def get_prompt(
        self,
        name: str,
        arguments: Mapping[str, str] | None = None,
        *,
        timeout: float | None = None,
        context: object | None = None,
    ) -> mcp_types.GetPromptResult:
        """Get a mounted prompt by its public name; resource URIs in it are registry URIs.

        ``context`` is as for `Registry.call`: what the server asks while rendering the
        prompt reaches the handlers with it, and with the prompt's public name as
        `Asker.tool`.

        Raises:
            UnknownPromptError: No prompt has that name.
            ServerNotRunningError, CallTimeoutError, ServerCrashedError, UpstreamError,
                ResultTooLargeError: As for `Registry.call`, naming the prompt.
        """
        entry = self._library.prompt(name)
        args = dict(arguments) if arguments is not None else None

        async def send(client: Client) -> mcp_types.GetPromptResult:
            return await client.get_prompt(entry.raw_name, args)

        result = await self._send(
            entry.server, "prompt", name, timeout, send, asks=True, context=context
        )
        return rewrite_prompt(entry.server, result)

    async def read_resource(
        self, uri: str, *, timeout: float | None = None, context: object | None = None
    ) -> mcp_types.ReadResourceResult:
        """Read a resource by its registry URI; ``contents[].uri`` come back as registry URIs.

        Any URI under a mounted server's prefix is read from that server, listed or not.
        ``context`` is as for `Registry.call`: what the server asks while reading reaches
        the handlers with it, and with the registry URI as `Asker.tool`.

        Raises:
            UnknownResourceError: ``uri`` is not a registry URI of a mounted server.
            ServerNotRunningError, CallTimeoutError, ServerCrashedError, UpstreamError,
                ResultTooLargeError: As for `Registry.call`, naming the URI.
        """
        server, raw = self._route(uri)

        async def send(client: Client) -> mcp_types.ReadResourceResult:
            return await client.read_resource(raw)

        result = await self._send(
            server, "resource", uri, timeout, send, asks=True, context=context
        )
        return rewrite_read(server, result)

    async def complete(
        self,
        ref: mcp_types.PromptReference | mcp_types.ResourceTemplateReference,
        argument: Mapping[str, str],
        context_arguments: Mapping[str, str] | None = None,
        *,
        timeout: float | None = None,
    ) -> mcp_types.CompleteResult:
        """Ask the owning server to complete an argument of a prompt or resource template.

        Args:
            ref: A prompt by its public name, or a template by its registry URI template.
            argument: ``{"name": ..., "value": ...}``: the argument and what is typed so far.
            context_arguments: Arguments already given.

        Raises:
            UnknownPromptError, UnknownResourceError: ``ref`` names nothing mounted.
            ServerNotRunningError, CallTimeoutError, ServerCrashedError, UpstreamError:
                As for `Registry.call`.
        """
        if isinstance(ref, mcp_types.PromptReference):
            entry = self._library.prompt(ref.name)
            server, kind, name = entry.server, "prompt", ref.name
            raw_ref: mcp_types.PromptReference | mcp_types.ResourceTemplateReference = (
                ref.model_copy(update={"name": entry.raw_name})
            )
        else:
            server, raw = self._route(ref.uri)
            kind, name = "resource", ref.uri
            raw_ref = ref.model_copy(update={"uri": raw})
        context = dict(context_arguments) if context_arguments is not None else None

        async def send(client: Client) -> mcp_types.CompleteResult:
            return await client.complete(raw_ref, dict(argument), context)

        return await self._send(server, kind, name, timeout, send)

    async def subscribe_resource(self, uri: str, *, timeout: float | None = None) -> None:
        """Ask the owning server for updates of ``uri``; they reach `subscribe_updates`.

        Raises:
            UnknownResourceError: ``uri`` is not a registry URI of a mounted server.
            NotSupportedError: The server does not support subscriptions; nothing was sent.
            UpstreamError: The server refused it.
            ServerNotRunningError, CallTimeoutError, ServerCrashedError: As for a call.
        """
        await self._subscription(uri, True, timeout)

    async def unsubscribe_resource(self, uri: str, *, timeout: float | None = None) -> None:
        """Stop the updates of ``uri`` that `subscribe_resource` asked for.

        Raises:
            What `subscribe_resource` raises.
        """
        await self._subscription(uri, False, timeout)

    def subscribe_updates(self, listener: UpdateListener) -> Callable[[], None]:
        """Call ``listener`` with the registry URI of every resource a server says changed.

        Runs synchronously, like `Registry.subscribe`'s listeners: keep it short. Returns
        the unsubscriber.
        """
        return self._library.subscribe_updates(listener)

    # -- plumbing -----------------------------------------------------------------------------

    async def _subscription(self, uri: str, on: bool, timeout: float | None) -> None:
        server, raw = self._route(uri)
        published = self._library.of(server)
        if published is None or not published.subscribe:
            raise NotSupportedError(server, uri, "resource subscriptions", kind="resource")
        supervisor = self._servers[server]
        seconds = self._timeout(supervisor, timeout)
        if supervisor.dormant:  # a subscription is a use: start it (idle does not stop it)
            self._starts.wake(supervisor)
        began = anyio.current_time()
        with anyio.move_on_after(seconds):
            await supervisor.ready.wait()
        remaining = max(seconds - (anyio.current_time() - began), 0.001)
        await set_subscription(supervisor.connection, raw, uri, on, remaining)

    async def _subscribe_again(self, supervisor: Supervisor, uris: set[str]) -> None:
        """Subscribe a restarted server's new connection to what its old one was."""
        for raw in sorted(uris):
            uri = registry_uri(supervisor.server, raw)
            try:
                await self._subscription(uri, True, None)
            except RegistryError as exc:
                logger.warning(
                    "server %r: %s was not subscribed again: %s", supervisor.server, uri, exc
                )

    def _route(self, uri: str) -> tuple[str, str]:
        server, raw = split_uri(uri)
        if server not in self._servers:
            raise UnknownResourceError(uri, f"no mounted server has the namespace {server!r}")
        return server, raw

    def _timeout(self, supervisor: Supervisor, timeout: float | None) -> float:
        if timeout is not None and not timeout > 0:  # NaN too
            raise ValueError(f"timeout must be a positive number of seconds, not {timeout!r}")
        return timeout or supervisor.spec.call_timeout or self.settings.call_timeout

    async def _send(
        self,
        server: str,
        kind: str,
        name: str,
        timeout: float | None,
        send: Callable[[Client], Awaitable[_Result]],
        *,
        asks: bool = False,
        context: object | None = None,
    ) -> _Result:
        """Send a request to ``server`` within the timeout, waiting out a restart in it."""
        supervisor = self._servers[server]
        seconds = self._timeout(supervisor, timeout)
        began = anyio.current_time()
        if supervisor.dormant:
            self._starts.wake(supervisor)
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
            return await request(
                supervisor.connection, kind, name, remaining, send, asks=asks, context=context
            )

    def _stage_content(self, supervisor: Supervisor, content: ServerContent) -> Callable[[], None]:
        """Check and name a server's content against the tables; returns its commit."""
        staged = self._library.stage(
            supervisor.server,
            supervisor.spec,
            content.prompts,
            content.resources,
            content.templates,
            subscribe=content.subscribe,
        )
        return lambda: self._library.commit(staged)

    def _updated(self, connection: Connection, uri: str) -> None:
        """A server said a resource changed: tell the update listeners its registry URI."""
        supervisor = self._servers.get(connection.server)
        if supervisor is not None and supervisor.connection is connection:
            self._library.updated(registry_uri(connection.server, uri))
