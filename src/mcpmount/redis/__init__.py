"""One Redis per process: the connection every store on a Redis URL shares.

Servers' cached lists (``[registry] cache``), the tool vectors shared through it, and
``serve --shared-state``'s listen bus and activations are thin stores on a
`RedisConnection`: they keep their own keys, scripts and decoding, and it owns what they
share. `redis_connection` gives every store of one URL in a process the same one: one
client (one pool), whose requests are each bounded, and one outage state, with its
back-off, its one warning when Redis stops answering, its one info line when it answers
again and its `RedisConnection.health` meanwhile. A store says what it goes on doing
without Redis (its `Purpose`), and never fails for want of it.

Modules: ``_outage`` (`Outage`: down or up, the back-off, what is said) and
``_connection`` (`RedisConnection`: the URL, the client's lifetime, requests).
"""

from mcpmount.redis._connection import RedisConnection, redis_connection
from mcpmount.redis._outage import Purpose

__all__ = ["Purpose", "RedisConnection", "redis_connection"]
