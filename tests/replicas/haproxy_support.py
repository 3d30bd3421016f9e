"""Debian's HAProxy and the config it runs in front of `mcpmount serve --stateless`
replicas (replica_support.py starts both).

The generated config (`haproxy_config`): round-robin, a health check of each replica's
``/readyz`` every half second (a replica gets traffic once its mounts are done), bounded
timeouts, and retries with ``option redispatch`` so that a request sent to a replica
that died goes to another one. Which requests are retried is the one careful choice here:
see `_RETRIES`.
"""

from __future__ import annotations

import os
import re
import shutil
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Final

__all__ = ["HAPROXY", "READ_METHODS", "haproxy_config"]

HAPROXY: Final = shutil.which("haproxy", path=f"{os.environ.get('PATH', '')}:/usr/sbin")
"""Debian's haproxy (2.6), which .ci/run installs."""

READ_METHODS: Final = (
    "initialize",
    "server/discover",
    "ping",
    "notifications/initialized",
    "tools/list",
    "prompts/list",
    "prompts/get",
    "resources/list",
    "resources/templates/list",
    "resources/read",
    "completion/complete",
)
"""JSON-RPC methods that change nothing on a stateless replica: replaying one is harmless."""

_S: Final = "[ ]*"
_REQUEST: Final = (
    f'^\\{{{_S}"jsonrpc"{_S}:{_S}"2\\.0"{_S},'
    f'({_S}"id"{_S}:{_S}("[^"]*"|[0-9]+){_S},)?{_S}"method"{_S}:{_S}'
)
"""The start of a JSON-RPC message as the SDK writes it, up to its method's value. Only the
top-level "method" matches (the SDK writes jsonrpc, id, method, params in that order), so a
"method" key inside a call's arguments never does; a client that orders keys otherwise only
loses replays."""

_RETRIES: Final = """\
    # Retries. A request that never reached a replica (conn-failure: the replica's port
    # refused it, as after a SIGKILL) is always safe to send to another one. A request that
    # did reach one which then died or hung (empty-response, response-timeout) may already
    # have been carried out there, so it is retried only when replaying it is harmless: a
    # JSON-RPC method that changes nothing on a stateless replica (READ_METHODS), or a
    # tools/call of a tool the operator lists as idempotent (`idempotent_tools`). Every
    # other tools/call is never replayed (disable-l7-retry keeps conn-failure retries only):
    # its client gets a 502 and decides. A handshake-era answer is streamed from its first
    # byte (the SDK sends the headers before the call runs), so a call whose replica died
    # under it cannot be replayed by any proxy; a 2026-07-28 answer within 15 s is one JSON
    # body, and can. Requests over one buffer (16 kB) are never replayed.
    option http-buffer-request
    retry-on conn-failure empty-response response-timeout
    retries 3
    option redispatch 1
"""


def haproxy_config(
    *,
    port: int,
    replicas: Sequence[int],
    stats_socket: Path,
    idempotent_tools: Iterable[str] = (),
    health_path: str | None = None,
) -> str:
    """HAProxy's config: listen on 127.0.0.1:``port``, round-robin over ``replicas`` (ports).

    Args:
        port: The port to listen on.
        replicas: Each replica's port on 127.0.0.1.
        stats_socket: Where HAProxy's admin socket goes (`Cluster.served_requests` reads it).
        idempotent_tools: Public tool names whose calls may be replayed on another replica.
        health_path: An HTTP path answering 200 while a replica should get traffic
            (``/readyz``); None: while it accepts TCP connections.
    """
    methods = "|".join(re.escape(m) for m in READ_METHODS)
    safe = [f"    acl replayable req.body -m reg '{_REQUEST}\"({methods})\"'"]
    if tools := sorted(idempotent_tools):
        names = "|".join(re.escape(t) for t in tools)
        call = f'"tools/call"{_S},{_S}"params"{_S}:{_S}\\{{{_S}"name"{_S}:{_S}"({names})"'
        safe.append(f"    acl replayable req.body -m reg '{_REQUEST}{call}'")
    safe.append("    http-request disable-l7-retry unless replayable")
    check = (
        [f"    option httpchk GET {health_path}", "    http-check expect status 200"]
        if health_path
        else []
    )
    servers = [
        f"    server r{i} 127.0.0.1:{p} check inter 500ms fall 2 rise 1"
        for i, p in enumerate(replicas)
    ]
    return "\n".join(
        [
            "global",
            "    maxconn 4096",
            f"    stats socket {stats_socket} mode 600 level user",
            "",
            "defaults",
            "    mode http",
            "    http-reuse safe",
            "    timeout connect 2s",
            "    timeout client 60s",
            "    timeout server 60s",
            "    timeout check 2s",
            "    timeout queue 10s",
            "    timeout http-request 10s",
            "",
            "frontend mcp",
            f"    bind 127.0.0.1:{port}",
            "    maxconn 4000",
            "    default_backend replicas",
            "",
            "backend replicas",
            "    balance roundrobin",
            _RETRIES.rstrip("\n"),
            *safe,
            *check,
            *servers,
            "",
        ]
    )
