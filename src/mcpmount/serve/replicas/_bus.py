"""`RedisSubscriptionBus`: the ``subscriptions/listen`` fan-out shared by replicas over Redis.

It implements the SDK's ``SubscriptionBus`` protocol (mcp/server/subscriptions.py) over
one Redis pub/sub channel. ``publish`` delivers the event to this replica's listeners at
once, then sends it, tagged with this bus's replica id, to the channel; `run` reads the
channel and delivers what other replicas sent, skipping this replica's own messages, so
each event reaches each listener exactly once.

Redis is never in the way of a request: ``publish`` never raises and waits at most
``timeout`` seconds for Redis (a request on the process's `mcpmount.redis.RedisConnection`);
while the channel is not read (Redis down, or reconnecting) it does not try, and what it
could not send is sent once it can, coalesced (events are level triggers: "this changed,
refetch"). The reader reconnects with a backoff that doubles up to ``max_backoff``, and
tells the connection what became of it: so in ``serve`` it is what notices Redis answering
again. On reconnection it tells this replica's listeners that every list changed, since
what other replicas sent meanwhile is lost (no replay). `health` says why the bus is not
reading, or None.
"""

from __future__ import annotations

import json
import logging
import uuid
from collections.abc import Callable
from functools import partial
from typing import TYPE_CHECKING, Any, Final, cast

import anyio
import anyio.abc
from mcp.server.subscriptions import (
    InMemorySubscriptionBus,
    PromptsListChanged,
    ResourcesListChanged,
    ResourceUpdated,
    ServerEvent,
    ToolsListChanged,
)

from mcpmount.config import load_json
from mcpmount.redis import Purpose, RedisConnection
from mcpmount.serve.sessions import EVENTS, ListChanged

if TYPE_CHECKING:
    from redis.asyncio import Redis

__all__ = ["RedisSubscriptionBus"]

logger = logging.getLogger(__name__)

_KINDS: Final[dict[str, ServerEvent]] = {
    "tools": ToolsListChanged(),
    "prompts": PromptsListChanged(),
    "resources": ResourcesListChanged(),
}

_RESYNC: Final = tuple(_KINDS.values())
"""What listeners are told after the channel was not read for a while: every list changed."""

_FIRST_BACKOFF: Final = 0.05
"""Seconds before the first reconnection attempt; each failed one doubles it."""

_MAX_MESSAGE_BYTES: Final = 1024 * 1024
"""The largest channel message read; one `encode` writes is a resource URI long at most."""

_MAX_UNSENT: Final = 1000
"""Events kept to send on reconnection; past it, further resource updates are dropped."""

_READ_WAIT: Final = 5.0
"""Seconds the reader waits for a message before it looks for events left to send."""

_PURPOSE: Final = Purpose("the shared state", "this replica serves from its own state")


def encode(event: ServerEvent, replica: str) -> str:
    """The channel message for ``event`` sent by ``replica`` (a list change with the servers
    it names, `mcpmount.serve.sessions._changes.ListChanged`)."""
    if isinstance(event, ResourceUpdated):
        return json.dumps({"replica": replica, "kind": "resource", "uri": event.uri})
    kind = next(k for k, v in _KINDS.items() if isinstance(event, type(v)))
    message: dict[str, object] = {"replica": replica, "kind": kind}
    if isinstance(event, ListChanged):
        message["servers"] = sorted(event.servers)
    return json.dumps(message)


def decode(data: bytes | str) -> tuple[str, ServerEvent]:
    """The replica and event a channel message holds.

    Raises:
        ValueError: The message is not one `encode` writes (whatever is wrong with it:
            anyone who can publish on the channel may have sent it).
    """
    message: Any = load_json(data, max_bytes=_MAX_MESSAGE_BYTES)
    if not isinstance(message, dict):
        raise ValueError(f"not an object: {data!r:.200}")
    fields: dict[str, Any] = message  # pyright: ignore[reportUnknownVariableType]
    replica, kind, uri = fields.get("replica"), fields.get("kind"), fields.get("uri")
    servers: object = fields.get("servers")
    if not isinstance(replica, str):
        raise ValueError(f"no replica id: {data!r:.200}")
    if kind == "resource" and isinstance(uri, str):
        return replica, ResourceUpdated(uri)
    if kind in EVENTS and isinstance(servers, list):
        names = cast("list[object]", servers)
        if all(isinstance(name, str) for name in names):
            return replica, EVENTS[kind](frozenset(cast("list[str]", names)))
    if isinstance(kind, str) and kind in _KINDS:
        return replica, _KINDS[kind]
    raise ValueError(f"unknown event: {data!r:.200}")


class RedisSubscriptionBus:
    """A ``SubscriptionBus`` whose events reach every replica subscribed to ``channel``.

    Run `run` in a task (`SharedState` does) for events from other replicas to arrive.

    Args:
        redis: The connection to Redis; its holder keeps it open (`SharedState`).
        channel: The pub/sub channel every replica of one deployment names.
        timeout: Seconds ``publish`` waits for Redis at most.
        max_backoff: The longest wait between two reconnection attempts, in seconds.
    """

    def __init__(
        self,
        redis: RedisConnection,
        channel: str,
        *,
        timeout: float = 1.0,
        max_backoff: float = 2.0,
    ) -> None:
        self.channel = channel
        self.replica = uuid.uuid4().hex
        """This bus's id in the messages it sends; its own are skipped when they come back."""
        self._redis = redis
        self._timeout = timeout
        self._max_backoff = max_backoff
        self._local = InMemorySubscriptionBus()
        self._remote = InMemorySubscriptionBus()
        self._reading = False
        self._subscribed = False
        self._problem: str | None = "redis not yet connected"
        self._unsent: dict[ServerEvent, None] = {}
        self._read_once = anyio.Event()

    async def wait_reading(self) -> None:
        """Return once the channel has been read (at least once since `run` started)."""
        await self._read_once.wait()

    def health(self) -> str | None:
        """None when the channel is read; else why not (``"redis not yet connected"``, or
        ``"<channel>: reconnecting"``; the connection's health says why)."""
        return self._problem

    def subscribe(self, listener: Callable[[ServerEvent], None]) -> Callable[[], None]:
        """Register ``listener`` (synchronous, on this replica) and return its unsubscribe."""
        return self._local.subscribe(listener)

    def subscribe_remote(self, listener: Callable[[ServerEvent], None]) -> Callable[[], None]:
        """Register ``listener`` for the events other replicas publish (and the "every list
        changed" after a reconnection) only; return its unsubscribe."""
        return self._remote.subscribe(listener)

    async def publish(self, event: ServerEvent) -> None:
        """Deliver ``event`` here at once, then to the other replicas; never raises."""
        await self._local.publish(event)
        if not self._reading:
            self._keep(event)
            return
        if not await self._send(event):
            self._keep(event)

    async def _send(self, event: ServerEvent) -> bool:
        """Send ``event`` to the channel within ``timeout``; False if Redis failed."""
        message = encode(event, self.replica)
        sent = await self._redis.request(
            partial(_publish, self.channel, message), purpose=_PURPOSE, timeout=self._timeout
        )
        if sent is None:
            logger.debug("%s: event %r delivered on this replica only", self.channel, event)
        return sent is not None

    def _keep(self, event: ServerEvent) -> None:
        if event in self._unsent or len(self._unsent) < _MAX_UNSENT:
            self._unsent[event] = None

    async def run(
        self, *, task_status: anyio.abc.TaskStatus[None] = anyio.TASK_STATUS_IGNORED
    ) -> None:
        """Read the channel and deliver other replicas' events here; runs until cancelled.

        Started at once (``task_status``): Redis may come later, and its absence is a
        degraded `health`, not a failure.
        """
        task_status.started()
        backoff = _FIRST_BACKOFF
        lost = False
        while True:
            self._subscribed = False
            try:
                await self._read(resync=lost)
            except Exception as exc:  # Redis boundary: reconnect, never stop serving
                self._problem = f"{self.channel}: reconnecting"
                self._redis.failed(_PURPOSE, exc)
                lost = True
            else:  # pragma: no cover - _read returns only by raising
                return
            # A connection that was up starts the backoff again; attempts that fail double it.
            backoff = _FIRST_BACKOFF if self._subscribed else min(backoff * 2, self._max_backoff)
            await anyio.sleep(backoff)

    async def _read(self, *, resync: bool) -> None:
        pubsub: Any = self._redis.pubsub()
        try:
            with anyio.fail_after(max(self._timeout, _READ_WAIT)):
                await pubsub.subscribe(self.channel)
            self._reading = self._subscribed = True
            self._problem = None
            self._redis.answered()
            self._read_once.set()
            if resync:
                logger.info("%s: redis is back; telling listeners every list changed", self.channel)
                for event in _RESYNC:
                    await self._local.publish(event)
                    await self._remote.publish(event)
            while True:
                if self._unsent:
                    await self._flush()
                message: Any = await pubsub.get_message(
                    ignore_subscribe_messages=True, timeout=_READ_WAIT
                )
                if message is not None and message.get("type") == "message":
                    await self._receive(message.get("data"))
        finally:
            self._reading = False
            with anyio.CancelScope(shield=True), anyio.move_on_after(self._timeout):
                await pubsub.aclose()

    async def _flush(self) -> None:
        """Send what could not be sent while Redis was away."""
        unsent, self._unsent = list(self._unsent), {}
        for event in unsent:
            if not await self._send(event):
                self._keep(event)

    async def _receive(self, data: object) -> None:
        try:
            if not isinstance(data, bytes | str):
                raise ValueError(f"not text: {data!r:.200}")
            replica, event = decode(data)
        except ValueError as exc:
            logger.warning("%s: skipped a message: %s", self.channel, exc)
            return
        if replica != self.replica:
            await self._local.publish(event)
            await self._remote.publish(event)


async def _publish(channel: str, message: str, client: Redis) -> object:
    redis: Any = client  # redis-py's annotations are partly unknown to pyright
    return await redis.publish(channel, message)
