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
import signal
from collections.abc import Awaitable, Callable
from typing import Unpack

import anyio
from anyio.abc import TaskGroup

from mcpmount.config import RegistryConfig, Transport
from mcpmount.errors import MountError
from mcpmount.registry import Registry, read_pins, required_as_written
from mcpmount.serve.access import HttpSecurity, check_exposure
from mcpmount.serve.calllog import CallLog, DigestKey, open_sink
from mcpmount.serve.credentials import PrincipalCredentials, per_principal
from mcpmount.serve.front import ActivationStore, Retries, Startup, mount_initial, open_front
from mcpmount.serve.hosting._host import Host
from mcpmount.serve.hosting._keywords import OldKeywords, with_old_keywords
from mcpmount.serve.hosting._reloading import Reloads
from mcpmount.serve.hosting._runners import written
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


async def serve(
    config: RegistryConfig,
    *,
    on_ready: Callable[[str], None] | None = None,
    on_metrics_ready: Callable[[str], None] | None = None,
    activations: ActivationStore | None = None,
    **old: Unpack[OldKeywords],
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

    How and where it serves is the config's ``[serve]`` table (`ServeSettings`: the
    transport, the address, who may use it, the metrics, the call log, the shared state);
    set it in code with ``config.with_serve(transport="http", port=0)``.

    Args:
        config: The loaded config.
        on_ready: HTTP only: called with the URL once serving (after ``portfile`` is
            written).
        on_metrics_ready: HTTP only: called with the metrics listener's URL once serving.
        activations: Where each conversation's found tools are kept (see
            `mcpmount.serve.front._activations`); default: this process's memory, or
            the shared state's (``shared_state``).
        **old: The ``[serve]`` keys this function took as keywords before they had a home
            there (``transport=``, ``port=``...): still read, with a `DeprecationWarning`
            naming the key; give them with `RegistryConfig.with_serve` instead.

    Raises:
        MountError: A server whose table says ``required = true`` failed to mount;
            everything was closed first.
        ConfigError: HTTP beyond loopback without authentication, not allowed (nothing was
            mounted or bound); the tokens file cannot be read; a given setting is invalid;
            ``shared_state`` is not a Redis URL, or the redis package is missing; the call
            log cannot be opened, or is ``stdout`` under stdio.
        OSError: The HTTP address (or the metrics one) cannot be bound.
    """
    config = with_old_keywords(config, old)
    settings = config.serve
    transport, shared_state = settings.transport, settings.shared_state
    security = None
    if transport == "http":
        security = HttpSecurity.build(settings)
        check_exposure(settings.host, security)
    config = required_as_written(config)
    current = [config]  # a reload replaces it
    credentials = _credentials(transport, config, current, shared_state)
    failure: MountError | None = None
    stop = anyio.Event()
    startup = Startup()
    mounted = startup.mounted
    async with (
        open_sink(settings, transport=transport) as sink,
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
            tg.start_soon(startup.hold_first_answers, settings.first_list_wait)
            if shared is not None:
                tg.start_soon(tell_of_remote_changes, shared.bus, served.tell_sessions)
            tg.start_soon(mount)
            tg.start_soon(stop_on_signal)
            _start_reloads(tg, registry, config, mounted, retries, current, on_policy=policy)
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
                    security,
                    on_ready=written(on_ready, settings.portfile),
                    on_metrics_ready=written(on_metrics_ready, settings.metrics_portfile),
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
    on_policy: Callable[[], Awaitable[None]],
) -> None:
    """Reload ``config``'s file on SIGHUP and (with ``[serve] watch``) when it changes; each
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
    if config.serve.watch:
        tg.start_soon(reloads.watch_file)
