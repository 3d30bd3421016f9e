"""The audit's checks: what each server tells the model, and how it is configured.

`audit` runs every check of `CONFIG_CHECKS` over each server of a config (a server that
failed to mount too) and every check of `LISTING_CHECKS` over what each mounted server
lists, and returns the findings sorted, worst first. It is pure and deterministic: no
network, no model, the same findings for the same input. A check is one function; a new
one is one more entry in its tuple.

=======================  ============================================================
``hidden-text``          hidden characters stripped from a listing (`Cleaner`), or left
                         in a URI or a name that is not cleaned
``shadowing``            text that names another mounted server's tools (``other__x``,
                         or a distinctive raw name such as ``send_email``)
``instructions``         instruction-like phrasing aimed at the model (``_phrases``)
``destructive-ungated``  a tool that says it is destructive (``destructiveHint``), or is
                         named so (``delete_``, ``drop_``, ``rm``), with no approval gate
``secret-in-args``       a stdio server's argument that looks like a secret (``_secrets``)
``unsandboxed``          a stdio server that runs without a sandbox (info)
``sandbox-credentials``  a sandbox whose ``read`` or ``write`` paths, or the program's
                         own paths, show a credential location (``~/.ssh``, ``~/.aws``,
                         mcpmount's token store...)
``unpinned``             a server the lock file does not pin (or there is none)
``unmounted``            a server that failed to mount, so it could not be read
=======================  ============================================================
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Collection, Iterable, Iterator, Mapping, Sequence
from typing import cast

import mcp_types

from mcpmount.audit._findings import Finding, Severity
from mcpmount.audit._hidden import HiddenText, hidden_in
from mcpmount.audit._listing import ServerListing
from mcpmount.audit._phrases import instructions_in
from mcpmount.audit._secrets import secrets_in_args
from mcpmount.config import ServerSpec, StdioServer
from mcpmount.sandbox import exposed, mounts_of

__all__ = ["CONFIG_CHECKS", "LISTING_CHECKS", "ConfigCheck", "ListingCheck", "audit"]

ConfigCheck = Callable[[str, ServerSpec, Collection[str] | None], Iterable[Finding]]
"""A check of one server's config: ``(namespace, spec, pinned)``, where ``pinned`` holds
the namespaces the lock file pins (None: there is no lock file)."""

ListingCheck = Callable[[ServerListing, Sequence[ServerListing]], Iterable[Finding]]
"""A check of what one mounted server lists, given every mounted server's listing."""

_DESTRUCTIVE_WORDS = frozenset(
    {
        "delete",
        "remove",
        "rm",
        "rmdir",
        "unlink",
        "drop",
        "destroy",
        "purge",
        "truncate",
        "wipe",
        "erase",
        "shred",
        "kill",
        "terminate",
        "uninstall",
        "revoke",
        "reset",
        "overwrite",
    }
)
"""Words of a tool name that say it destroys something (``delete_file``, ``dropTable``)."""

_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")
_WORD_SPLIT = re.compile(r"[^A-Za-z0-9]+")
_MIN_DISTINCTIVE = 6
"""The shortest raw tool name of another server that counts as naming it (with a ``_``,
``-`` or an inner capital): ``send_email`` does, ``search`` and ``get`` do not."""


def audit(
    servers: Mapping[str, ServerSpec],
    listings: Sequence[ServerListing],
    pinned: Collection[str] | None,
    failed: Mapping[str, str] | None = None,
) -> list[Finding]:
    """Return every finding about ``servers`` and what the mounted ones list, worst first.

    Args:
        servers: Every server of the config, mounted or not (their config is audited).
        listings: What each mounted server lists (see ``Registry.listings``).
        pinned: The namespaces the lock file pins; None if there is no lock file.
        failed: Servers that failed to mount, with why: each is a ``high`` finding
            (``unmounted``), since what it would tell the model could not be read.
    """
    findings = [
        Finding(Severity.HIGH, "unmounted", server, f"it could not be mounted to be read: {why}")
        for server, why in (failed or {}).items()
    ]
    for server, spec in servers.items():
        for config_check in CONFIG_CHECKS:
            findings += config_check(server, spec, pinned)
    for listing in listings:
        for listing_check in LISTING_CHECKS:
            findings += listing_check(listing, listings)
    return sorted(
        findings, key=lambda f: (-f.severity, f.server, f.kind or "", f.item or "", f.rule)
    )


# -- what a server lists ---------------------------------------------------------------------


def _strings(value: object) -> Iterator[str]:
    """Every string of a JSON value, keys too."""
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for key, item in cast("dict[object, object]", value).items():
            yield from _strings(key)
            yield from _strings(item)
    elif isinstance(value, list):
        for item in cast("list[object]", value):
            yield from _strings(item)


def _tool_texts(tool: mcp_types.Tool) -> Iterator[str]:
    yield from (t for t in (tool.title, tool.description) if t)
    if tool.annotations is not None and tool.annotations.title:
        yield tool.annotations.title
    yield from _strings(tool.input_schema)
    yield from _strings(tool.output_schema)


def _texts(listing: ServerListing) -> Iterator[tuple[str, str, list[str]]]:
    """``(kind, raw name or URI, texts)`` of every definition the server lists: each
    text the model reads of it."""
    for tool in listing.tools:
        yield "tool", tool.raw_name, [tool.raw_name, *_tool_texts(tool.definition)]
    for prompt in listing.prompts:
        texts = [prompt.name, prompt.title, prompt.description]
        texts += [t for a in prompt.arguments or [] for t in (a.name, a.title, a.description)]
        yield "prompt", prompt.name, [t for t in texts if t]
    for resource in listing.resources:
        texts = [resource.uri, resource.name, resource.title, resource.description]
        yield "resource", resource.uri, [t for t in texts if t]
    for template in listing.templates:
        texts = [template.uri_template, template.name, template.title, template.description]
        yield "resource template", template.uri_template, [t for t in texts if t]


def hidden_text(listing: ServerListing, _: Sequence[ServerListing]) -> Iterator[Finding]:
    """Hidden characters stripped at mount, and those left where nothing strips them."""
    for found in listing.hidden:
        message = f"hidden characters in what it lists for the model: {found.summary()}"
        yield _finding(found, message, listing.server)
    for kind, name, texts in _texts(listing):
        if chars := "".join(hidden_in(text) for text in texts):
            left = HiddenText(kind, name, chars)
            message = f"hidden characters in a name or URI (never cleaned): {left.summary()}"
            yield _finding(left, message, listing.server)


def _finding(found: HiddenText, message: str, server: str) -> Finding:
    return Finding(found.severity(), "hidden-text", server, message, found.kind, found.name)


def shadowing(listing: ServerListing, listings: Sequence[ServerListing]) -> Iterator[Finding]:
    """Text that names another mounted server's tools: its namespace prefix (``other__``),
    or a distinctive raw tool name of it that this server does not list itself."""
    own = {tool.raw_name for tool in listing.tools}
    others = [(o.server, _raw_names(o, own)) for o in listings if o.server != listing.server]
    for kind, name, texts in _texts(listing):
        text = "\n".join(texts)
        for other, raw_names in others:
            prefixed = re.search(rf"(?<![A-Za-z0-9_-]){re.escape(other)}__[A-Za-z0-9_-]*", text)
            if prefixed:
                message = (
                    f"names server {other!r}'s tool {prefixed[0]!r}: a description may not "
                    "give orders about another server's tools (tool shadowing)"
                )
                yield Finding(Severity.HIGH, "shadowing", listing.server, message, kind, name)
            elif raw_names is not None and (named := raw_names.search(text)):
                message = (
                    f"names {named[0]!r}, a tool of server {other!r} (tool shadowing, or a "
                    "coincidence: read what it says about it)"
                )
                yield Finding(Severity.MEDIUM, "shadowing", listing.server, message, kind, name)


def _raw_names(listing: ServerListing, own: Collection[str]) -> re.Pattern[str] | None:
    """A pattern of ``listing``'s distinctive raw tool names (as whole words) that are not
    in ``own``; None if it has none."""
    names = sorted(
        (
            tool.raw_name
            for tool in listing.tools
            if tool.raw_name not in own
            and len(tool.raw_name) >= _MIN_DISTINCTIVE
            and ("_" in tool.raw_name or "-" in tool.raw_name or _CAMEL.search(tool.raw_name))
        ),
        key=len,
        reverse=True,
    )
    if not names:
        return None
    return re.compile(r"(?<![\w-])(?:" + "|".join(map(re.escape, names)) + r")(?![\w-])")


def instructions(listing: ServerListing, _: Sequence[ServerListing]) -> Iterator[Finding]:
    """Instruction-like phrasing aimed at the model, once per kind of phrase and item."""
    for kind, name, texts in _texts(listing):
        seen: set[str] = set()
        for text in texts:
            for phrase in instructions_in(text):
                if phrase.label in seen:
                    continue
                seen.add(phrase.label)
                message = f"{phrase.label}: {phrase.quoted!r}"
                yield Finding(phrase.severity, "instructions", listing.server, message, kind, name)


def destructive_ungated(listing: ServerListing, _: Sequence[ServerListing]) -> Iterator[Finding]:
    """A tool that says, or is named as if, it destroys something, with no approval gate."""
    for tool in listing.tools:
        if tool.raw_name in listing.gated:
            continue
        hints = tool.definition.annotations
        if hints is not None and hints.destructive_hint is True:
            why = "it says it is destructive (destructiveHint)"
        elif words := _DESTRUCTIVE_WORDS.intersection(_words(tool.raw_name)):
            why = f"its name says {sorted(words)[0]!r}"
        else:
            continue
        message = (
            f"{why}, and no approval gate covers it: add it to the server's approve globs "
            '(with an approver), or set approval = "destructive"'
        )
        server = listing.server
        yield Finding(
            Severity.MEDIUM, "destructive-ungated", server, message, "tool", tool.raw_name
        )


def _words(name: str) -> set[str]:
    """The lowercase words of a tool name: ``deleteFile`` and ``delete_file`` alike."""
    return {word.lower() for word in _WORD_SPLIT.split(_CAMEL.sub("_", name)) if word}


LISTING_CHECKS: tuple[ListingCheck, ...] = (
    hidden_text,
    shadowing,
    instructions,
    destructive_ungated,
)
"""The checks of what each mounted server lists."""


# -- how a server is configured --------------------------------------------------------------


def secret_in_args(server: str, spec: ServerSpec, _: Collection[str] | None) -> Iterator[Finding]:
    """A stdio server's argument that looks like a secret (every local user can read it)."""
    if not isinstance(spec, StdioServer):
        return
    for found in secrets_in_args(spec.args):
        message = (
            f"args[{found.index}] ({found.shown}) looks like {found.what}; arguments are "
            "readable by every local user (ps, /proc): pass it in env instead"
        )
        yield Finding(found.severity, "secret-in-args", server, message)


def unpinned(server: str, _: ServerSpec, pinned: Collection[str] | None) -> Iterator[Finding]:
    """A server whose definitions no lock file pins: a later change would go unnoticed."""
    if pinned is None:
        message = "no lock file pins its definitions: run `mcpmount lock` to catch later changes"
    elif server not in pinned:
        message = "the lock file does not pin it: run `mcpmount lock` again"
    else:
        return
    yield Finding(Severity.INFO, "unpinned", server, message)


def unsandboxed(server: str, spec: ServerSpec, _: Collection[str] | None) -> Iterator[Finding]:
    """A stdio server that runs with all of the user's rights (``spec.sandbox`` holds the
    registry's default already where the server sets none)."""
    if isinstance(spec, StdioServer) and (spec.sandbox is None or not spec.sandbox.enabled):
        message = (
            "it runs with all of your rights (files, network, processes): "
            "set sandbox = true, or a table with the paths and hosts it needs"
        )
        yield Finding(Severity.INFO, "unsandboxed", server, message)


def sandbox_credentials(
    server: str, spec: ServerSpec, _: Collection[str] | None
) -> Iterator[Finding]:
    """A sandbox that shows the user's credentials: a sandbox in name only for them."""
    if not isinstance(spec, StdioServer) or spec.sandbox is None or not spec.sandbox.enabled:
        return
    homes = [os.path.expanduser("~")]
    for key in ("read", "write"):
        for path in getattr(spec.sandbox, key):
            location = exposed(os.path.normpath(os.path.expanduser(path)), homes)
            if location is not None:
                message = (
                    f"its sandbox {key} path {path} shows {location}, which holds credentials: "
                    "list only the folders it needs, never one holding or inside a credential"
                )
                yield Finding(Severity.HIGH, "sandbox-credentials", server, message)
    mounts = mounts_of(spec)
    for path in mounts.program if mounts is not None else ():
        location = exposed(path.split(" -> ")[0], homes)
        if location is not None:
            message = (
                f"its sandbox shows its program's {path}, which holds {location}: "
                "install the server outside the folders that hold credentials"
            )
            yield Finding(Severity.HIGH, "sandbox-credentials", server, message)


CONFIG_CHECKS: tuple[ConfigCheck, ...] = (
    secret_in_args,
    unpinned,
    unsandboxed,
    sandbox_credentials,
)
"""The checks of each server's config, run for servers that failed to mount too."""
