"""Pinned tool definitions: hashes, the lock file, and diffs between two versions of a list.

A server's tool list is untrusted and can change under a running agent (a rug pull: a
definition the user approved is swapped for another). ``mcpmount lock`` writes the hash of
every mounted tool's definition to a lock file beside the config; with a lock file present,
each server's ``on_change`` policy decides what happens to a definition that differs.

A pin is keyed by the tool's raw name and hashes what the model is shown: with a
per-tool override (``overrides`` in the server's config), the overridden name, title and
description, plus the server's own values of the fields the override replaced. So a
changed upstream definition is still caught, even in a field the model no longer sees
(it may announce a change of behaviour), and editing an override changes the pin too
(run ``mcpmount lock`` again). A tool without an override hashes exactly as it always
did, so lock files written before overrides existed stay valid.

Prompts, resources and resource templates are pinned too, in their own sections of the
lock file (``prompts``, ``resources``, ``templates``: namespace -> raw name or URI ->
hash). A lock file written before those sections existed pins tools only: its servers'
prompts and resources are not held to it until ``mcpmount lock`` is run again.
"""

from __future__ import annotations

import difflib
import json
import logging
import os
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Literal, cast

import mcp_types
import pydantic
import xxhash

from mcpmount.errors import DefinitionChangedError
from mcpmount.tool import MountedTool

__all__ = [
    "CONTENT_KINDS",
    "LOCK_VERSION",
    "Pins",
    "ToolDiff",
    "content_hash",
    "diff_hashes",
    "diff_tools",
    "hold_to_lock",
    "lock_path",
    "pin_of",
    "tool_hash",
]

logger = logging.getLogger(__name__)

LOCK_VERSION = 1

CONTENT_KINDS = ("prompts", "resources", "templates")
"""The lock file's sections besides ``servers`` (tools), each namespace -> key -> hash."""

_UNPINNED = frozenset({"_meta", "icons", "annotations", "size"})
"""Fields of a prompt or resource definition that are not pinned: metadata that changes
with the data (a size, a modification time), not with what the model is told."""

_DIFF_LINES = 40
"""The most lines of unified diff one changed tool contributes to a message."""


_KEEP = ("name", "title", "description", "inputSchema", "outputSchema", "annotations")
"""The parts of a definition a model reads."""

_OVERRIDABLE = ("name", "title", "description")


def _canonical(tool: mcp_types.Tool, listed: mcp_types.Tool | None = None) -> str:
    """The parts of a definition a model reads, as canonical JSON.

    With ``listed`` (the server's own definition of an overridden tool), the server's
    values of the fields ``tool`` overrides are kept under ``"overridden"``.
    """
    wire = tool.model_dump(mode="json", by_alias=True, exclude_none=True)
    kept: dict[str, object] = {k: wire[k] for k in _KEEP if k in wire}
    if listed is not None:
        own = listed.model_dump(mode="json", by_alias=True, exclude_none=True)
        replaced = {k: own.get(k) for k in _OVERRIDABLE if own.get(k) != wire.get(k)}
        if replaced:
            kept["overridden"] = replaced
    return json.dumps(kept, sort_keys=True, indent=1)


def tool_hash(tool: mcp_types.Tool, listed: mcp_types.Tool | None = None) -> str:
    """Return the xxh3-64 hex digest of a tool's definition (name, text, schemas, annotations).

    Args:
        tool: The definition the model is shown.
        listed: The server's own definition, when an override changed ``tool``.
    """
    return xxhash.xxh3_64_hexdigest(_canonical(tool, listed).encode("utf-8", "surrogatepass"))


def pin_of(tool: MountedTool) -> str:
    """Return the pin of a mounted tool: the hash of what the model is shown of it."""
    return tool_hash(tool.definition, tool.listed)


def content_hash(definition: pydantic.BaseModel) -> str:
    """Return the xxh3-64 hex digest of a prompt, resource or template definition."""
    wire = definition.model_dump(mode="json", by_alias=True, exclude_none=True)
    kept = {key: value for key, value in wire.items() if key not in _UNPINNED}
    text = json.dumps(kept, sort_keys=True)
    return xxhash.xxh3_64_hexdigest(text.encode("utf-8", "surrogatepass"))


def diff_hashes(before: Mapping[str, str], after: Mapping[str, str]) -> ToolDiff:
    """Compare two versions of a list as key -> hash (a changed item has a new hash)."""
    return ToolDiff(
        tuple(sorted(key for key in after if key not in before)),
        tuple(sorted(key for key in before if key not in after)),
        tuple(sorted(key for key, h in after.items() if key in before and before[key] != h)),
    )


@dataclass(frozen=True, slots=True)
class ToolDiff:
    """How one server's tool list differs from another version of it (raw names)."""

    added: tuple[str, ...] = ()
    removed: tuple[str, ...] = ()
    changed: tuple[str, ...] = ()
    details: str = ""
    """A readable diff of the changed definitions (when both versions are known)."""

    def __bool__(self) -> bool:
        return bool(self.added or self.removed or self.changed)

    def summary(self) -> str:
        """One line: what was added, removed and changed."""
        parts = [
            f"{label} {', '.join(repr(n) for n in names)}"
            for label, names in (
                ("added", self.added),
                ("removed", self.removed),
                ("changed", self.changed),
            )
            if names
        ]
        return "; ".join(parts) or "no change"


def hold_to_lock(
    server: str,
    on_change: Literal["refuse", "warn", "accept"],
    diff: Callable[[], ToolDiff],
    *,
    what: str = "tools",
) -> None:
    """Hold a list of ``server`` to the lock file as its ``on_change`` says: ``accept`` it
    unseen (``diff`` is not even computed), or if it differs, ``refuse`` it or ``warn``
    and accept it. The one place of that policy, for tools and the other lists alike.

    Raises:
        DefinitionChangedError: The list differs and the policy refuses it.
    """
    if on_change == "accept" or not (found := diff()):
        return
    if on_change == "refuse":
        raise DefinitionChangedError(server, found.summary(), found.details, what=what)
    logger.warning(
        'server %r: %s differ from the lock file (%s); accepted because on_change = "warn"%s',
        server,
        what,
        found.summary(),
        f"\n{found.details}" if found.details else "",
    )


def diff_tools(
    before: Mapping[str, str],
    after: Iterable[MountedTool],
    old_tools: Mapping[str, MountedTool] | None = None,
) -> ToolDiff:
    """Compare pins ``before`` (raw name -> hash) with the tools ``after`` (see `pin_of`).

    ``old_tools`` (raw name -> tool), when given, supplies the old definitions for a
    line-by-line diff.
    """
    now = {tool.raw_name: tool for tool in after}
    pins = {name: pin_of(tool) for name, tool in now.items() if name in before}  # added: no pin
    added = tuple(sorted(name for name in now if name not in before))
    removed = tuple(sorted(name for name in before if name not in now))
    changed = tuple(sorted(name for name in now if name in before and pins[name] != before[name]))
    details: list[str] = []
    for name in changed:
        old = (old_tools or {}).get(name)
        if old is None:
            details.append(f"{name}: definition changed (hash {before[name]} -> {pins[name]})")
            continue
        lines = list(
            difflib.unified_diff(
                _canonical(old.definition, old.listed).splitlines(),
                _canonical(now[name].definition, now[name].listed).splitlines(),
                f"{name} (before)",
                f"{name} (now)",
                lineterm="",
                n=1,
            )
        )
        if len(lines) > _DIFF_LINES:
            lines = [*lines[:_DIFF_LINES], f"... ({len(lines) - _DIFF_LINES} more lines)"]
        details.append("\n".join(lines))
    return ToolDiff(added, removed, changed, "\n".join(details))


def lock_path(config_path: str | os.PathLike[str]) -> Path:
    """Return the lock file that belongs beside a config file (``x.toml`` -> ``x.lock``)."""
    return Path(config_path).with_suffix(".lock")


@dataclass(frozen=True, slots=True)
class Pins:
    """The pinned hashes of a lock file: namespace -> raw tool name -> hash."""

    servers: Mapping[str, Mapping[str, str]]
    path: Path | None = None
    content: Mapping[str, Mapping[str, Mapping[str, str]]] | None = None
    """Section (one of `CONTENT_KINDS`) -> namespace -> raw name or URI -> hash; a section
    that is missing (a lock file older than it) pins nothing of its kind."""

    @classmethod
    def read(cls, path: str | os.PathLike[str]) -> Pins | None:
        """Read a lock file; None if there is none.

        Raises:
            ValueError: The file exists but is not a valid lock file.
        """
        file = Path(path)
        try:
            data: object = json.loads(file.read_text(encoding="utf-8"))
        except FileNotFoundError:
            return None
        except (OSError, json.JSONDecodeError) as exc:
            raise ValueError(f"{file}: not a readable lock file ({exc})") from None
        top = cast("dict[str, object]", data) if isinstance(data, dict) else {}
        listed: object = top.get("servers")
        if top.get("version") != LOCK_VERSION or not isinstance(listed, dict):
            raise ValueError(f"{file}: not a version-{LOCK_VERSION} mcpmount lock file")
        servers = _section(file, "servers", top["servers"])
        content = {kind: _section(file, kind, top[kind]) for kind in CONTENT_KINDS if kind in top}
        return cls(servers, file, content or None)

    def write(self, path: str | os.PathLike[str]) -> None:
        """Write the lock file atomically."""
        file = Path(path)
        body = {
            "version": LOCK_VERSION,
            "servers": {
                ns: dict(sorted(tools.items())) for ns, tools in sorted(self.servers.items())
            },
        }
        for kind, section in (self.content or {}).items():
            body[kind] = {ns: dict(sorted(pins.items())) for ns, pins in sorted(section.items())}
        tmp = file.with_name(file.name + ".tmp")
        tmp.write_text(json.dumps(body, indent=2) + "\n", encoding="utf-8")
        tmp.replace(file)


def _section(file: Path, name: str, listed: object) -> dict[str, dict[str, str]]:
    """Read one section of a lock file: namespace -> key -> hash."""
    if not isinstance(listed, dict):
        raise ValueError(f"{file}: {name} must map namespaces to pinned hashes")
    servers: dict[str, dict[str, str]] = {}
    for namespace, pins in cast("dict[object, object]", listed).items():
        pinned = cast("dict[object, object]", pins) if isinstance(pins, dict) else None
        if (
            not isinstance(namespace, str)
            or pinned is None
            or not all(isinstance(k, str) and isinstance(v, str) for k, v in pinned.items())
        ):
            raise ValueError(f"{file}: {name}.{namespace} must map names to hashes")
        servers[namespace] = cast("dict[str, str]", pinned)
    return servers
