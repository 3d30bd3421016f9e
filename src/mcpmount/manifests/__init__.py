"""Cached manifests: each server's checked lists, kept under a hash of its spec.

A server that starts ``background`` or ``lazy`` is published from the lists it gave last
time (`mcpmount.registry` decides when). This room keeps them: the entry format and its
key (`spec_key`, `encode_entry`, `decode_entry`, ``_cache``), and where entries live, a
`ManifestStore`: one file each (`FileStore`) or a shared Redis (`RedisStore`,
``_redis_store``, a thin store on `mcpmount.redis`). Entries read back are untrusted:
bounded before they are parsed, and one that cannot be decoded is skipped with a warning.
An entry is used no longer than its server's lists allow (``ttlMs``), and a shared store
(`ManifestStore.shared`) is given only lists they let it share (``cacheScope``).
"""

from mcpmount.manifests._cache import (
    MAX_ENTRY_BYTES,
    CachedManifest,
    FileStore,
    ManifestStore,
    decode_entry,
    encode_entry,
    spec_key,
    store_for,
)
from mcpmount.manifests._redis_store import RedisStore

__all__ = [
    "MAX_ENTRY_BYTES",
    "CachedManifest",
    "FileStore",
    "ManifestStore",
    "RedisStore",
    "decode_entry",
    "encode_entry",
    "spec_key",
    "store_for",
]
