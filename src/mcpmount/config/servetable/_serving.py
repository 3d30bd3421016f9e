"""The ``[serve]`` keys of where and how ``serve`` listens: the transport, the address,
sessions, the first lists' wait, the port files, the replicas' shared state.

::

    [serve]
    transport = "http"              # or "stdio" (the default): what a host starts
    host = "0.0.0.0"                # HTTP: the address to bind (127.0.0.1)
    port = 8000                     # HTTP: the port (0: the OS chooses; see portfile)
    stateless = false               # HTTP: no sessions, for replicas behind a load balancer
    json_response = false           # HTTP: every answer one JSON body, never a stream
    portfile = "serve.port"         # HTTP: write the bound port here once serving
    watch = true                    # reload when the config file changes
    first_list_wait = 2             # seconds the first lists wait for optional servers
    shared_state = "redis://redis:6379/0"   # share state with the other replicas

They are `ServeSettings`' own (a base of it), kept apart so that where serve listens reads
together; each ``mcpmount serve`` flag of the same name overrides its key.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field

from mcpmount.config._fields import STRICT_DATA, Text

__all__ = ["DEFAULT_PORT", "ServingSettings", "Transport"]

Transport = Literal["stdio", "http"]
"""How ``serve`` is reached: stdin and stdout, or streamable HTTP at ``/mcp``."""

DEFAULT_PORT = 8000
"""The port HTTP ``serve`` binds unless told otherwise, by the command and the library
alike: a server that clients are pointed at needs a port known in advance. ``port = 0``
lets the OS choose (tests, and scripts that read the port file)."""


class ServingSettings(BaseModel):
    """Where and how ``serve`` listens, how long its first lists wait, and what it shares
    with its replicas."""

    model_config = STRICT_DATA

    transport: Transport = "stdio"
    """``"stdio"`` (one client, the host that started ``serve``) or ``"http"`` (streamable
    HTTP at ``/mcp``, for any number of clients). A host that starts ``mcpmount serve
    CONFIG`` (`mcpmount install`) speaks stdio: give a config it starts no ``"http"``."""

    host: Text = "127.0.0.1"
    """HTTP: the address to bind. Beyond loopback, clients must authenticate unless
    ``allow_unauthenticated`` says otherwise."""

    port: int = Field(default=DEFAULT_PORT, ge=0, le=65535)
    """HTTP: the port to bind; 0 lets the OS choose (then read ``portfile``)."""

    stateless: bool = False
    """HTTP: no sessions (a fresh transport per request), for replicas behind a load
    balancer."""

    json_response: bool = False
    """HTTP: answer every request with one JSON body, never a stream, so that a proxy can
    replay a call whose replica died under it; then nothing a server sends during a call
    (progress, log messages, questions) reaches its client."""

    portfile: Text | None = None
    """HTTP: write the bound port to this file once serving (relative to the config)."""

    metrics_portfile: Text | None = None
    """HTTP: write the metrics listener's port to this file once it serves (relative to
    the config)."""

    watch: bool = True
    """Reload when the config file changes (SIGHUP reloads either way)."""

    first_list_wait: float = Field(default=2.0, ge=0, allow_inf_nan=False)
    """Seconds the first lists wait for servers that are not required (the required ones
    are always waited for); then they answer with what is mounted, and the rest is
    announced as it comes. Formerly ``[registry] first_list_wait``, still read there with
    a warning."""

    shared_state: Text | None = None
    """A Redis URL (``redis://host:6379/0``, ``rediss://...``, ``unix:///path.sock``): list
    changes, found tools and rate limits are shared with every replica that names it; needs
    ``pip install "mcpmount[redis]"``. None: this process alone."""
