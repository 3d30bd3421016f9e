"""Synonyms: the words of tool text that name the same action or object.

A query word also matches the other words of its groups, at a discount
(`SYNONYM_WEIGHT`); the index scores a tool by the best of the word and its synonyms.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from types import MappingProxyType
from typing import Final

from mcpmount.search._analysis import term

__all__ = ["RELATED", "SYNONYMS", "SYNONYM_WEIGHT"]

SYNONYMS: Final[tuple[tuple[str, ...], ...]] = (
    # Verbs tools are named with, and the words people use for them.
    ("stop", "halt", "terminate", "shutdown", "shut", "kill", "poweroff"),
    ("start", "launch", "boot", "resume", "poweron"),
    ("restart", "reboot", "reset", "bounce", "cycle"),
    ("get", "fetch", "read", "retrieve", "obtain", "load", "view", "open"),
    ("list", "enumerate", "show", "browse", "ls", "all"),
    ("show", "display", "see", "view", "print"),
    ("create", "make", "new", "add", "generate", "init", "initialize"),
    ("delete", "remove", "erase", "destroy", "drop", "rm", "purge", "discard", "forget"),
    ("search", "find", "query", "lookup", "look", "locate", "grep", "filter"),
    ("run", "execute", "exec", "invoke", "perform"),
    ("write", "save", "store", "persist", "put"),
    ("update", "edit", "modify", "change", "alter", "patch", "amend", "replace"),
    ("move", "rename", "mv", "relocate"),
    ("copy", "duplicate", "clone", "cp", "fork"),
    ("fill", "type", "enter", "input"),
    ("diff", "difference", "change", "compare", "delta"),
    ("send", "post", "publish", "notify"),
    ("reply", "respond", "answer"),
    ("convert", "translate", "transform"),
    ("download", "fetch", "scrape", "crawl", "grab"),
    ("navigate", "goto", "visit", "browse"),
    ("merge", "combine"),
    ("describe", "inspect", "detail", "info", "information", "metadata", "schema"),
    # Nouns that name the same thing.
    ("directory", "folder", "dir"),
    ("file", "document"),
    ("instance", "vm", "machine", "server"),
    ("repository", "repo", "project"),
    ("message", "msg", "chat", "post"),
    ("issue", "ticket", "bug"),
    ("pull", "pr", "merge"),
    ("database", "db", "sql"),
    ("user", "member", "person", "people", "account"),
    ("url", "link", "webpage", "page", "website", "web", "site"),
    ("time", "clock", "date", "hour"),
    ("timezone", "zone", "tz"),
    ("picture", "image", "screenshot", "photo", "capture"),
    ("size", "dimension", "capacity", "big", "large"),
    ("multiple", "several", "many"),
    ("relation", "relationship", "link", "connection", "association"),
    ("schema", "column", "structure"),
    ("emoji", "reaction", "react"),
    ("history", "log", "past", "previous"),
)
"""Groups of words that name the same action or object in tool text.

A query word also matches the other words of its groups at `SYNONYM_WEIGHT`. Keep this to
general vocabulary of tools (verbs of CRUD and control, common nouns), never entries made
for one query or one tool."""

SYNONYM_WEIGHT: Final = 0.75
"""What a synonym's match is worth, relative to the query word's own."""


def _synonym_map(groups: Iterable[Iterable[str]]) -> dict[str, frozenset[str]]:
    related: dict[str, set[str]] = {}
    for group in groups:
        stems = {term(w) for w in group} - {""}
        for s in stems:
            related.setdefault(s, set()).update(stems - {s})
    return {s: frozenset(others) for s, others in related.items() if others}


RELATED: Final[Mapping[str, frozenset[str]]] = MappingProxyType(_synonym_map(SYNONYMS))
"""Term -> the terms of its synonyms (read-only)."""
