"""Cached manifests: a server's checked lists, kept under a hash of its spec.

A server that starts ``background`` or ``lazy`` is published from the lists it gave last
time, before (or instead of) starting it. An entry is keyed by `spec_key`, a digest of
what decides which program answers and what it lists (command, arguments, cwd, url,
transport, the names of its variables and headers, each variable's value hashed, its
tool filters), so a changed spec misses the cache and no secret is stored in clear.

An entry is data read back from disk or a shared Redis, which someone else may have
written: it is decoded (`decode_entry`, its size and nesting bounded before it is parsed)
and then checked again like a live list, by the caller, and held against the lock file's
pins. One that cannot be decoded for any reason (too large or deep, not JSON, written for
another key, of another format, older than its time to live) is ignored with one
warning, and the server mounts from its live list. An entry also holds how long its
server let it be kept (``ttl``, from the lists' ``ttlMs``: `mcpmount.upstream.Freshness`);
one past that is ignored too, with an info line only, as it is the server's rule at work.

The store is a small protocol (`ManifestStore`): bytes in and out under a key. `FileStore`
keeps one file per entry; `RedisStore` (``cache = "redis://..."``) shares them.
"""

from __future__ import annotations

import contextlib
import json
import logging
import math
import os
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Final, Protocol, cast

import mcp_types
import pydantic
import xxhash

from mcpmount.config import RegistrySettings, ServerSpec, StdioServer, load_json
from mcpmount.manifests._redis_store import RedisStore
from mcpmount.upstream import ServerContent

__all__ = [
    "MAX_ENTRY_BYTES",
    "CachedManifest",
    "FileStore",
    "ManifestStore",
    "decode_entry",
    "encode_entry",
    "spec_key",
    "store_for",
]

logger = logging.getLogger(__name__)

FORMAT = 1
"""The version of an entry's layout; an entry of another one is ignored."""

MAX_ENTRY_BYTES: Final = 64 * 1024 * 1024
"""The largest entry read back (or written): a larger one is ignored unparsed."""


class ManifestStore(Protocol):
    """Where cached manifests live: opaque bytes under a key (`spec_key`)."""

    @property
    def shared(self) -> bool:
        """Whether others read what is put here (other users or machines): only lists
        their server let a shared cache keep (``cacheScope: public``) may go in."""
        ...

    async def get(self, key: str) -> bytes | None:
        """Return the entry under ``key``, or None if there is none (or it is unreadable)."""
        ...

    async def put(self, key: str, data: bytes) -> None:
        """Store ``data`` under ``key``, whole or not at all; never raises."""
        ...


class FileStore:
    """One file per entry in ``directory``, readable by the user only, written whole."""

    shared = False

    def __init__(self, directory: str | os.PathLike[str] | None = None) -> None:
        if directory is None:
            import platformdirs  # only a store at the default place needs it

            directory = Path(platformdirs.user_cache_dir("mcpmount")) / "manifests"
        self.directory = Path(directory)

    def __repr__(self) -> str:
        return f"FileStore({str(self.directory)!r})"

    async def get(self, key: str) -> bytes | None:
        try:
            return (self.directory / f"{key}.json").read_bytes()
        except FileNotFoundError:
            return None
        except OSError as exc:
            logger.warning("cached manifest %s is unreadable (%s); ignoring it", key, exc)
            return None

    async def put(self, key: str, data: bytes) -> None:
        # A temporary file in the same directory, renamed over the entry: a reader sees the
        # old entry or the new one, never a part.
        try:
            self.directory.mkdir(mode=0o700, parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(prefix=f".{key}.", dir=self.directory)  # mode 0600
            try:
                with os.fdopen(fd, "wb") as file:
                    file.write(data)
                os.replace(tmp, self.directory / f"{key}.json")
            except BaseException:
                with contextlib.suppress(OSError):
                    os.unlink(tmp)
                raise
        except OSError as exc:
            logger.warning("could not write cached manifest %s in %s: %s", key, self.directory, exc)


def store_for(settings: RegistrySettings) -> FileStore | RedisStore:
    """Return the store ``settings`` name: the Redis of ``cache``, else ``cache_dir``."""
    if settings.cache is not None:
        return RedisStore(settings.cache, expire=settings.manifest_ttl)
    return FileStore(settings.cache_dir)


def _digest(value: str) -> str:
    return xxhash.xxh3_64_hexdigest(value.encode("utf-8", "surrogatepass"))


def spec_key(spec: ServerSpec) -> str:
    """Return the cache key of ``spec``: a digest that holds no secret in clear."""
    parts: dict[str, object] = {
        "transport": spec.transport,
        "protocol": spec.protocol,
        "tools": spec.tools,
        "exclude_tools": sorted(spec.exclude_tools),
        "invalid_names": spec.invalid_names,
    }
    if isinstance(spec, StdioServer):
        parts["command"] = spec.command
        parts["args"] = [_digest(arg) for arg in spec.args]  # an argument may hold a secret
        parts["cwd"] = spec.cwd
        parts["env"] = {name: _digest(value) for name, value in sorted(spec.env_values().items())}
    else:
        parts["url"] = _digest(spec.url)
        parts["headers"] = sorted(spec.headers)
        parts["headers_command"] = [_digest(arg) for arg in spec.headers_command or ()]
    text = json.dumps(parts, sort_keys=True, separators=(",", ":"))
    return xxhash.xxh3_128_hexdigest(text.encode("utf-8", "surrogatepass"))


@dataclass(frozen=True, slots=True)
class CachedManifest:
    """A server's lists as a cache entry gave them back (raw names, not yet re-checked)."""

    tools: list[mcp_types.Tool]
    content: ServerContent
    written: float
    """When it was written (seconds since the epoch)."""


def encode_entry(
    key: str,
    tools: list[mcp_types.Tool],
    content: ServerContent,
    *,
    ttl: float = math.inf,
    now: float | None = None,
) -> bytes:
    """Return the bytes of a cache entry holding ``tools`` and ``content`` under ``key``,
    usable for ``ttl`` seconds at most (what their server allows; ``inf``: it said nothing)."""

    def dump(items: Sequence[pydantic.BaseModel]) -> list[object]:
        return [item.model_dump(mode="json", by_alias=True, exclude_none=True) for item in items]

    body = {
        "format": FORMAT,
        "key": key,
        "written": time.time() if now is None else now,
        **({} if math.isinf(ttl) else {"ttl": max(ttl, 0.0)}),
        "tools": dump(tools),
        "prompts": dump(content.prompts),
        "resources": dump(content.resources),
        "templates": dump(content.templates),
        "subscribe": content.subscribe,
    }
    return json.dumps(body, separators=(",", ":")).encode("utf-8", "surrogatepass")


def decode_entry(
    server: str, key: str, data: bytes, ttl: float, *, now: float | None = None
) -> CachedManifest | None:
    """Return the manifest in ``data``, or None (with one warning) if it cannot be used.

    It cannot be used when it is larger than `MAX_ENTRY_BYTES`, nested deeper than JSON
    read back may be (`load_json`), not JSON of this `FORMAT`, written under another key
    (a foreign or moved entry), older than ``ttl`` seconds (or from the future), or a
    definition in it is invalid. Whoever can write the store may have planted it, so any
    other failure to decode it is such a warning too, never an error. Older than its
    server let it be kept (the entry's own ``ttl``), it is only stale: an info line.
    """
    try:
        found = _decoded(key, data, ttl, time.time() if now is None else now)
    except Exception as exc:  # a planted entry's last resort: ignored like any bad one
        found = f"it cannot be decoded ({type(exc).__name__})"
    if isinstance(found, str):
        level = logging.INFO if isinstance(found, _Stale) else logging.WARNING
        logger.log(level, "server %r: its cached manifest (%s) is ignored: %s", server, key, found)
        return None
    return found


class _Stale(str):
    """Why an entry is not used, when the reason is only its server's ``ttlMs``."""

    __slots__ = ()


def _decoded(key: str, data: bytes, ttl: float, now: float) -> CachedManifest | str:
    """The manifest in ``data``, or why it cannot be used."""
    try:
        raw = load_json(data, max_bytes=MAX_ENTRY_BYTES)
    except ValueError as exc:
        return f"it is not JSON that can be read ({exc})"
    body = cast("dict[str, object]", raw) if isinstance(raw, dict) else {}
    if body.get("format") != FORMAT or body.get("key") != key:
        return "it is of another format or written for another spec"
    written = body.get("written")
    if not isinstance(written, int | float) or not 0 <= now - written <= ttl:
        return f"it is older than manifest_ttl ({ttl:g} s)"
    allowed = body.get("ttl", math.inf)
    if not isinstance(allowed, int | float):
        return "its ttl is not a number"
    if not now - written <= allowed:
        return _Stale(f"its server let it be kept {allowed:g} s (ttlMs), and that has passed")
    try:
        tools = _TOOLS.validate_python(body.get("tools"))
        content = ServerContent(
            tuple(_PROMPTS.validate_python(body.get("prompts"))),
            tuple(_RESOURCES.validate_python(body.get("resources"))),
            tuple(_TEMPLATES.validate_python(body.get("templates"))),
            subscribe=body.get("subscribe") is True,
        )
    except pydantic.ValidationError as exc:
        return f"a definition in it is invalid ({exc.error_count()} errors)"
    return CachedManifest(tools, content, float(written))


_TOOLS = pydantic.TypeAdapter(list[mcp_types.Tool])
_PROMPTS = pydantic.TypeAdapter(list[mcp_types.Prompt])
_RESOURCES = pydantic.TypeAdapter(list[mcp_types.Resource])
_TEMPLATES = pydantic.TypeAdapter(list[mcp_types.ResourceTemplate])
