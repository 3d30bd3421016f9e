"""Replica state: what the replicas of one served config share on Redis.

`SharedState` (``_state``) holds the process's connection to the Redis
(`mcpmount.redis.RedisConnection`) and the thin stores on it: the ``subscriptions/listen``
bus (`RedisSubscriptionBus`, ``_bus``), whose list changes name their servers so each
replica tells only the clients that may see them, and the tools each conversation's
searches found (`RedisActivationStore`, ``_activations``). Needs the ``redis`` extra,
imported only when a shared state is made.
"""

from mcpmount.serve.replicas._activations import RedisActivationStore
from mcpmount.serve.replicas._bus import RedisSubscriptionBus
from mcpmount.serve.replicas._state import (
    SharedState,
    open_shared_state,
    shared_namespace,
    tell_of_remote_changes,
)

__all__ = [
    "RedisActivationStore",
    "RedisSubscriptionBus",
    "SharedState",
    "open_shared_state",
    "shared_namespace",
    "tell_of_remote_changes",
]
