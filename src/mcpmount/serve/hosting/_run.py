"""`serve`: the lifecycle of a served config, from the handshake to the last closed server.

`serve` owns the registry: it answers the handshake at once and mounts the config's
servers in the background, but the front holds ``tools/list`` and ``tools/call`` until the
required servers are mounted and the others are too or had ``first_list_wait`` seconds
(`mcpmount.serve.front._startup`): many clients list once and never again, and give up soon.
SIGINT, SIGTERM or stdin EOF stops the transport and closes every upstream server. SIGHUP,
or a change of the config file, reloads it (`mcpmount.serve.hosting._reloading`). A server
is required only where its table says ``required = true`` (`required_as_written`): one
that fails to mount stops the serving and raises `MountError`. Any other server that fails,
at the start or in a reload, is reported and retried in the background while the rest
serve (`mcpmount.serve.front._retries`). Logs go to stderr. While it serves, ``mcpmount
status CONFIG`` reads its servers on its status socket (`mcpmount.serve.ops`).
"""

from __future__ import annotations

import contextlib
import logging
import os
import signal
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import Literal

import anyio
from anyio.abc import TaskGroup

from mcpmount.config import RegistryConfig, ServeOAuth, ServeToken
from mcpmount.errors import MountError
from mcpmount.registry import Registry, read_pins, required_as_written
from mcpmount.serve.access import HttpSecurity, check_exposure
from mcpmount.serve.calllog import CallLog, DigestKey, open_sink
from mcpmount.serve.credentials import PrincipalCredentials, per_principal
from mcpmount.serve.front import ActivationStore, Retries, Startup, mount_initial, open_front
from mcpmount.serve.hosting._host import Host
from mcpmount.serve.hosting._reloading import Reloads
from mcpmount.serve.hosting._stopping import Stopping
from mcpmount.serve.ops import publish_status, served_status
from mcpmount.serve.quotas import Counters, Limits
from mcpmount.serve.replicas import (
    SharedState,
    open_shared_state,
    shared_namespace,
    tell_of_remote_changes,
)

__all__ = ["Transport", "serve"]

logger = logging.getLogger(__name__)

Transport = Literal["stdio", "http"]


async def serve(
    config: RegistryConfig,
    *,
    transport: Transport = "stdio",
    host: str = "127.0.0.1",
    port: int = 0,
    stateless: bool = False,
    json_response: bool = False,
    on_ready: Callable[[str], None] | None = None,
    watch: bool = True,
    activations: ActivationStore | None = None,
    shared_state: str | None = None,
    tokens: Mapping[str, ServeToken] | None = None,
    tokens_file: str | os.PathLike[str] | None = None,
    oauth: ServeOAuth | None = None,
    allowed_hosts: Sequence[str] = (),
    allow_unauthenticated: bool = False,
    metrics_port: int | None = None,
    metrics_host: str | None = None,
    metrics_token: str | None = None,
    on_metrics_ready: Callable[[str], None] | None = None,
    call_log: str | None = None,
) -> None:
    """Serve every server of ``config`` as one MCP server until told to stop.

    Answers the handshake at once and mounts the servers in the background; the first
    ``tools/list`` waits for the required ones (``required = true`` in their table; the
    others for at most ``first_list_wait`` seconds; one that fails is retried in the
    background), and every later change (a server mounting late, (a server's tools
    re-listed, restarted, reloaded) is a list change the clients are told about. Honours
    the lock file beside the config. SIGHUP, and a change of the config file, reload it
    (`Registry.reload`): only what changed is closed, mounted or restarted, and a config
    error is logged and changes nothing. Returns on SIGINT, SIGTERM or (stdio) stdin EOF,
    after closing every upstream server.

    Args:
        config: The loaded config.
        transport: ``"stdio"`` or ``"http"`` (streamable HTTP at ``/mcp``).
        host: HTTP only: the address to bind.
        port: HTTP only: the port (0: the OS chooses; see ``on_ready``).
        stateless: HTTP only: no sessions, for replicas behind a load balancer.
        json_response: HTTP only: answer every request with one JSON body, never a stream
            (see `Host.http_app`).
        on_ready: HTTP only: called with the URL once serving.
        watch: Reload when the config file changes (a config built in code has no file:
            SIGHUP then only says so).
        activations: Where each conversation's found tools are kept (see
            `mcpmount.serve.front._activations`); default: this process's memory, or
            the shared state's (``shared_state``).
        shared_state: A Redis URL: list changes reach the clients of every replica
            that names it (`SharedState`); None: this process alone.
        tokens: HTTP only: static bearer tokens by name, besides the config's
            ``[serve.tokens]``.
        tokens_file: HTTP only: a tokens file (``TOKEN`` or ``TOKEN ns1,ns2`` a line),
            instead of the config's ``tokens_file``.
        oauth: HTTP only: accept this issuer's JWT access tokens, instead of the config's
            ``[serve.oauth]``.
        allowed_hosts: HTTP only: Host names clients may use, besides the config's
            ``allowed_hosts`` and loopback names.
        allow_unauthenticated: HTTP only: serve beyond loopback with no authentication.
        metrics_port: HTTP only: serve ``/metrics`` on a listener of its own at this port
            (0: the OS chooses), instead of the config's ``metrics_port``; then not on the
            MCP port (see `mcpmount.serve.ops`).
        metrics_host: HTTP only: the address the metrics listener binds, instead of the
            config's ``metrics_host`` (127.0.0.1).
        metrics_token: HTTP only: the bearer token ``/metrics`` answers, instead of the
            config's ``metrics_token``; it also reads ``/readyz``'s reasons.
        on_metrics_ready: HTTP only: called with the metrics listener's URL once serving.
        call_log: Where the call log goes (a file, ``stdout`` or ``otel``), instead of the
            config's ``call_log`` (`mcpmount.serve.calllog`).

    Raises:
        MountError: A server whose table says ``required = true`` failed to mount;
            everything was closed first.
        ConfigError: HTTP beyond loopback without authentication, not allowed (nothing was
            mounted or bound); the tokens file cannot be read; or a metrics setting is
            invalid.
        OSError: The HTTP address (or the metrics one) cannot be bound.
        ConfigError: ``shared_state`` is not a Redis URL, or the redis package is missing.
        ConfigError: The call log cannot be opened, or is ``stdout`` under stdio.
    """
    security = None
    if transport == "http":
        security = HttpSecurity.build(
            config.serve,
            tokens=tokens,
            tokens_file=tokens_file,
            oauth=oauth,
            allowed_hosts=allowed_hosts,
            allow_unauthenticated=allow_unauthenticated,
            metrics_port=metrics_port,
            metrics_host=metrics_host,
            metrics_token=metrics_token,
        )
        check_exposure(host, security)
    config = required_as_written(config)
    current = [config]  # a reload replaces it
    credentials = _credentials(transport, config, current, shared_state)
    failure: MountError | None = None
    stop = anyio.Event()
    startup = Startup()
    mounted = startup.mounted
    current = [config]  # a reload replaces it
    async with (
        open_sink(config.serve, transport=transport, target=call_log) as sink,
        open_shared_state(shared_state, namespace=shared_namespace(config)) as shared,
        Counters(shared_state, namespace=shared_namespace(config)) as counters,
        open_front(
            config.settings,
            pins=read_pins(config),
            startup=startup,
            activations=_activations(activations, shared),
            bus=shared.bus if shared is not None else None,
            call_tool=config.serve.call_tool,
            limits=Limits(lambda: current[0].serve.limits, counters),
        ) as served,
        contextlib.aclosing(credentials) if credentials else contextlib.nullcontext(),
    ):
        registry = served.registry
        if sink is not None:
            served.watch(CallLog(sink, served.door, DigestKey(config.serve.call_log_key)))
        hosted = Host(served, Stopping.configured(config.serve))
        if shared is not None:  # without Redis the replica serves alone: degraded, not down
            hosted.readiness.add("redis", shared.health, required=False)
        retries = served.retries
        served.door.policy = lambda: current[0].serve.rules  # the policy read with it
        if credentials is not None:
            served.before_call = credentials.ensure
            registry.clients.connection_auth = credentials.connection_auth
            hosted.routes.append(credentials.route())
            on_ready = credentials.announcing(on_ready)

        async def policy() -> None:  # a new policy: what each session may see changed
            for kind in ("tools", "prompts", "resources"):
                await served.tell_sessions(kind, None)

        def status() -> list[dict[str, object]]:
            return served_status(registry, current[0], retries.rows())

        async with (
            publish_status(config.path, transport, status),
            retries.running(),
            anyio.create_task_group() as tg,
        ):

            async def mount() -> None:
                nonlocal failure
                try:
                    await mount_initial(registry, config.servers, startup, retries)
                except MountError as exc:
                    failure = exc
                    stop.set()
                else:
                    tools = registry.mounted_tools()
                    logger.info("serving %d tools of %d servers", len(tools), len(config.servers))
                finally:
                    mounted.set()

            async def stop_on_signal() -> None:
                # Every other command also stops on SIGHUP; serve reloads on it (below).
                with anyio.open_signal_receiver(signal.SIGINT, signal.SIGTERM) as signals:
                    async for signum in signals:
                        logger.info("%s: closing every server", signal.Signals(signum).name)
                        stop.set()
                        return

            tg.start_soon(served.propagate_changes)
            tg.start_soon(startup.hold_first_answers, config.settings.first_list_wait)
            if shared is not None:
                tg.start_soon(tell_of_remote_changes, shared.bus, served.tell_sessions)
            tg.start_soon(mount)
            tg.start_soon(stop_on_signal)
            _start_reloads(
                tg, registry, config, mounted, retries, current, watch=watch, on_policy=policy
            )
            if transport == "stdio":
                async with anyio.create_task_group() as stdio:

                    async def cancel_on_stop() -> None:
                        await stop.wait()
                        stdio.cancel_scope.cancel()

                    stdio.start_soon(cancel_on_stop)
                    await hosted.run_stdio()
                    stdio.cancel_scope.cancel()
            else:
                await hosted.run_http(
                    stop,
                    host=host,
                    port=port,
                    stateless=stateless,
                    json_response=json_response,
                    on_ready=on_ready,
                    security=security,
                    on_metrics_ready=on_metrics_ready,
                    resume_window=config.serve.resume_window,
                )
            tg.cancel_scope.cancel()
    if failure is not None:
        raise failure


def _credentials(
    transport: Transport,
    config: RegistryConfig,
    current: list[RegistryConfig],
    shared_state: str | None,
) -> PrincipalCredentials | None:
    """Each principal's logins, for HTTP serving of a config with per-principal servers.

    Raises:
        ConfigError: ``MCPMOUNT_TOKEN_KEY`` is missing or malformed.
    """
    if transport != "http" or not any(map(per_principal, config.servers.values())):
        return None
    return PrincipalCredentials.configured(
        config, lambda: current[0].servers, shared_state=shared_state
    )


def _activations(
    activations: ActivationStore | None, shared: SharedState | None
) -> ActivationStore | None:
    """The store a conversation's finds go to: the one given, else the replicas' shared one."""
    if activations is None and shared is not None:
        return shared.activations
    return activations


def _start_reloads(
    tg: TaskGroup,
    registry: Registry,
    config: RegistryConfig,
    mounted: anyio.Event,
    retries: Retries,
    current: list[RegistryConfig],
    *,
    watch: bool,
    on_policy: Callable[[], Awaitable[None]],
) -> None:
    """Reload ``config``'s file on SIGHUP and (with ``watch``) when it changes; each
    reload puts its config in ``current`` and its failures in ``retries``, and one that
    changed the policy calls ``on_policy``."""
    if config.path is None:

        async def say_why_not() -> None:
            with anyio.open_signal_receiver(signal.SIGHUP) as signals:
                async for _ in signals:
                    logger.warning("SIGHUP: the config has no file to reload; nothing changed")

        tg.start_soon(say_why_not)
        return
    reloads = Reloads(registry, config.path, retries, current, on_policy)
    tg.start_soon(reloads.run, mounted)
    tg.start_soon(reloads.on_sighup)
    if watch:
        tg.start_soon(reloads.watch_file)
