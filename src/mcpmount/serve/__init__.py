"""Serve a registry as one MCP server, over stdio or streamable HTTP.

- `RegistryServer` is the MCP front: ``tools/list`` and ``tools/call`` over a registry,
  a view per downstream session, prompts, resources, templates, completions and resource
  subscriptions, ``list_changed`` when a list changes, what upstream
  servers ask (sampling, elicitation, roots, approval) relayed to the calling client in
  both protocol eras, and log messages both ways.
- ``serve(config)`` runs a config's registry behind that front until SIGINT, SIGTERM or stdin EOF,
  mounting the servers in the background.
- `Host` puts a front on stdio or streamable HTTP, with ``/healthz``, ``/readyz``
  (`Readiness`: named checks) and ``/metrics`` (Prometheus) beside ``/mcp``.
- `SharedState` is what replicas of one config share on Redis (``[serve] shared_state``,
  ``serve(config.with_serve(shared_state=URL))``):
  the ``subscriptions/listen`` bus (`RedisSubscriptionBus`) and the tools searches activated
  (`RedisActivationStore`).
- `write_portfile` records the bound port for scripts that serve HTTP on port 0;
  `status_sockets` finds where each running serve of a config answers ``mcpmount status``.
- `ActivationStore` is where each conversation's found tools are kept (`serve(...,
  activations=)`, `RegistryServer(..., activations=)`); `InMemoryActivations` is the
  default. A request without a session names its conversation with `CONVERSATION_HEADER`,
  and calls found tools through the `CALL_TOOL_NAME` meta-tool.
- Over HTTP, `serve` can require bearer tokens (static ones, or an OAuth issuer's JWTs), limit
  each token to some namespaces, and allow Host names; without authentication it binds
  loopback only unless told otherwise (the ``[serve]`` table, `mcpmount.config.ServeSettings`).

Rooms, in the order a request passes them, bottom up: ``access`` (tokens; the principal
and the door that decides what it may see), ``relay`` (what servers ask mid-request, put
to the client of that request), ``sessions`` (each session's principal, and what it is
told unasked: list changes, log messages, resource updates), then ``tasks`` (the servers'
tasks under ids bound to the principal that started them), ``quotas`` (rate limits and
concurrency caps past the door) and ``credentials`` (each principal's own upstream
logins), ``front`` (the MCP handlers), then ``calllog`` (one record per request) and
``replicas`` (state shared on Redis, on the sessions' events), ``ops`` (health,
readiness, metrics, and who may read them) and ``hosting`` (the transport, the
lifecycle, `serve`). Each imports only the rooms below it, never back.
"""

from __future__ import annotations

from mcpmount.serve.front import (
    CALL_TOOL_NAME,
    ActivationStore,
    InMemoryActivations,
    RegistryServer,
)
from mcpmount.serve.hosting import Host, Transport, serve, write_portfile
from mcpmount.serve.ops import Readiness, status_sockets
from mcpmount.serve.replicas import RedisActivationStore, RedisSubscriptionBus, SharedState
from mcpmount.serve.sessions import CONVERSATION_HEADER, MAX_SESSIONS

__all__ = [
    "CALL_TOOL_NAME",
    "CONVERSATION_HEADER",
    "MAX_SESSIONS",
    "ActivationStore",
    "Host",
    "InMemoryActivations",
    "Readiness",
    "RedisActivationStore",
    "RedisSubscriptionBus",
    "RegistryServer",
    "SharedState",
    "Transport",
    "serve",
    "status_sockets",
    "write_portfile",
]
