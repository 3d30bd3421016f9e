"""How a connection's client is made and its lists fetched: what it says, offers and hears.

`client_for` builds the ``mcp.Client`` a `Connection`'s owner task enters: it never
caches lists (the registry decides when to list), answers what the server asks through
`Asking`, hands change notices to the `ChangeFeed`, and offers the extensions this client
takes: MCP Apps always, the task status binding only in the handshake era. `list_checked` and
`list_again` fetch and check the server's lists (`mcpmount.listing`) for the connection.
"""

from __future__ import annotations

from importlib.metadata import version

import anyio
import mcp_types
from mcp import Client
from mcp.client import Transport
from mcp.client.extension import ClientExtension
from mcp.client.session import IncomingMessage
from mcp_types.version import MODERN_PROTOCOL_VERSIONS

from mcpmount.audit import Cleaner
from mcpmount.config import EffectiveSettings, ServerSpec
from mcpmount.listing import (
    Freshness,
    SchemaVetting,
    ServerContent,
    check_tools,
    list_all_tools,
    list_content,
)
from mcpmount.upstream._apps import AppsSupport
from mcpmount.upstream._asking import Asking
from mcpmount.upstream._feed import ChangeFeed
from mcpmount.upstream._tasks import TaskStatusWatch

__all__ = ["client_for", "list_again", "list_checked"]

_CLIENT_INFO = mcp_types.Implementation(name="mcpmount", version=version("mcpmount"))


def client_for(
    spec: ServerSpec, transport: Transport, feed: ChangeFeed, asking: Asking, tasks: TaskStatusWatch
) -> Client:
    """The client of one connection to ``spec``'s server over ``transport``, not yet entered."""

    async def on_message(message: IncomingMessage) -> None:
        feed.on_message(message)
        if isinstance(message, mcp_types.ElicitCompleteNotification):
            await asking.elicitation_complete(message.params.elicitation_id)

    binding: list[ClientExtension] = [tasks.extension()] if spec.protocol == "legacy" else []
    return Client(
        transport,
        mode=spec.protocol,
        cache=None,  # the registry decides when to list; a stale cached list would lie
        client_info=_CLIENT_INFO,
        message_handler=on_message,
        # The binding is an extension, advertised in either era; in 2026-07-28 it
        # would promise task handles (``resultType: "task"``) this client cannot
        # take, so it is offered only to a server spoken to in the handshake era.
        extensions=[*binding, AppsSupport()],
        **asking.callbacks(),
    )


async def list_checked(
    client: Client,
    server: str,
    spec: ServerSpec,
    settings: EffectiveSettings,
    schemas: SchemaVetting,
) -> tuple[list[mcp_types.Tool], ServerContent, Freshness, Cleaner]:
    """List every page of the server's lists under one `Cleaner`, checking the tools
    (`check_tools`) before the rest is listed: a refused tool list costs no more requests.

    Raises:
        What listing raises: ``RegistryError`` (``ToolListError``: the tools are refused),
        ``MCPError``.
    """
    cleaner = Cleaner(server, settings.hidden_text)
    fresh = Freshness(client.protocol_version in MODERN_PROTOCOL_VERSIONS)
    listed = await list_all_tools(client, server, settings, fresh)
    filters_out = spec.filters_out
    tools = check_tools(server, listed, settings, spec.invalid_names, filters_out, schemas, cleaner)
    content = await list_content(client, server, spec, settings, cleaner, fresh)
    return tools, content, fresh, cleaner


async def list_again(
    client: Client,
    server: str,
    spec: ServerSpec,
    settings: EffectiveSettings,
    schemas: SchemaVetting,
    timeout: float,
) -> tuple[list[mcp_types.Tool], ServerContent, Freshness, Cleaner]:
    """`list_checked` again within ``timeout`` (a list changed).

    Raises:
        What listing raises: ``RegistryError``, ``MCPError``, ``TimeoutError``.
    """
    with anyio.fail_after(timeout):
        return await list_checked(client, server, spec, settings, schemas)
