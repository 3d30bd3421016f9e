"""The BM25F statistics of the indexed tools, kept up to date change by change.

A term's *saturation* in a tool is BM25's ``tf / (tf + k1)`` of the tool's field-weighted,
length-normalized term frequency; its document frequency counts the tools that hold it.
The index multiplies the two (through the idf) at query time. A change re-derives only the
tools it adds and, when it moves a server's boilerplate weights, that server's tools that
hold the words whose weight moved: applying a 20-tool change to 10,000 tools costs a few
milliseconds, not a rebuild.

**Boilerplate.** A word in the body (argument names, description, argument descriptions)
of most of one server's tools says little about any one of them: "an existing" in every
description of a generated server, the product's name in every tool of a real one. With
``share`` = the server's tools whose body holds the word / (its tools + 1), each of those
tools adds ``min(1, 2 * (1 - share))`` to the word's document frequency: whole up to half
the tools, less above, never below one step of `WEIGHT_STEPS`. So a thousand tools
repeating a phrase do not make its words look common to every other server, and the
word's idf is set by the tools where it is said for a reason. Name and title hits always
count whole, and a tool's own term frequencies are not changed: weighting them down too
was measured, and cost recall on both evaluation sets of ``tests/search_eval`` (a word
repeated across a server still tells which server a need is for). The ``+ 1`` keeps the
words of a one-tool server whole and softens the rule for small servers (two tools that
share a word count 10/16 each, three that share one 8/16).

Every score is a function of the set of tools alone, never of the order of changes:
weights are integers in steps of 1 / `WEIGHT_STEPS`, so document frequencies add and
subtract exactly, and field lengths are normalized against averages rounded to a grid of
1 / `AVERAGE_GRID` of a doubling (about 4 %). A change that moves a rounded average
re-derives every tool, which costs a rebuild; after the first few hundred tools, a change
of a few dozen seldom does.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Final

from mcpmount.search._fields import FIELD_B, FIELD_WEIGHT, Fields
from mcpmount.tool import MountedTool

__all__ = ["AVERAGE_GRID", "WEIGHT_STEPS", "Doc", "Postings", "boilerplate_weight"]

WEIGHT_STEPS: Final = 16
"""Boilerplate weights are whole multiples of 1 / this."""

AVERAGE_GRID: Final = 16
"""Average field lengths are rounded to 2 ** (k / this)."""

_K1 = 1.2
"""BM25's term-frequency saturation."""

_HEAD = 2
"""Fields before this index (name, title) always count whole; the others are the body."""


def boilerplate_weight(holders: int, tools: int) -> int:
    """The weight, in steps of 1 / `WEIGHT_STEPS`, of a word in the body of ``holders`` of a
    server's ``tools`` tools: whole up to half, then down linearly, at least one step."""
    # min(1, 2 * (1 - holders / (tools + 1))) in whole steps, in integers to stay exact.
    steps = 2 * WEIGHT_STEPS * (tools + 1 - holders) // (tools + 1)
    return max(1, min(WEIGHT_STEPS, steps))


@dataclass(slots=True)
class Doc:
    """One indexed tool: its terms, and what it currently adds to the postings."""

    tool: MountedTool
    fields: Fields
    """Per field, its terms in order (repeats count)."""
    body: frozenset[str]
    """Terms of the fields after the name and title."""
    presence: dict[str, int] = field(default_factory=dict[str, int])
    """Term -> what this tool adds to its document frequency, in weight steps; empty
    while the tool is not in the postings."""

    @classmethod
    def of(cls, tool: MountedTool, fields: Fields) -> Doc:
        body = frozenset[str]().union(*fields[_HEAD:])
        return cls(tool, fields, body)


@dataclass(slots=True)
class _Server:
    tools: set[int] = field(default_factory=set[int])
    holders: dict[str, int] = field(default_factory=dict[str, int])
    """Body term -> how many of the server's tools hold it."""
    settled_tools: int = 0
    """How many tools the server had when its weights were last applied."""
    before: dict[str, int] = field(default_factory=dict[str, int])
    """Holders, at the last settle, of the terms changed since."""
    boilerplate: dict[str, int] = field(default_factory=dict[str, int])
    """Term -> its weight, for the terms weighing less than whole, as of the last settle."""

    def weight(self, term: str) -> int:
        return boilerplate_weight(self.holders.get(term, 0), len(self.tools))

    def count(self, terms: frozenset[str], step: int) -> None:
        holders, before = self.holders, self.before
        for t in terms:
            n = holders.get(t, 0)
            before.setdefault(t, n)
            if n + step:
                holders[t] = n + step
            else:
                del holders[t]

    def moved(self) -> set[str]:
        """Terms whose weight changed since the last settle; forgets the changes."""
        old_n, n = self.settled_tools, len(self.tools)
        candidates = set(self.before)
        if old_n != n:
            candidates |= self.holders.keys()
        moved = {
            t
            for t in candidates
            if boilerplate_weight(self.before.get(t, self.holders.get(t, 0)), old_n)
            != self.weight(t)
        }
        self.before = {}
        self.settled_tools = n
        if moved:
            self.boilerplate = {
                t: w
                for t, h in self.holders.items()
                if (w := boilerplate_weight(h, n)) < WEIGHT_STEPS
            }
        return moved


class Postings:
    """Term -> tool -> saturation, and term -> document frequency, for a set of tools.

    `add` and `remove` record a change; `settle` brings the postings up to date and says
    whether anything changed. Not thread-safe.
    """

    __slots__ = ("_averages", "_pending", "_servers", "_totals", "derived", "df", "docs", "rows")

    def __init__(self) -> None:
        self.docs: dict[int, Doc] = {}
        self.rows: dict[str, dict[int, float]] = {}
        """Term -> tool id -> saturation."""
        self.df: dict[str, int] = {}
        """Term -> document frequency, in weight steps."""
        self._totals = [0] * len(FIELD_WEIGHT)
        self._servers: dict[str, _Server] = {}
        self._averages: tuple[float, ...] = ()
        self._pending: set[int] = set()
        """Tools whose saturations are not in the postings yet."""
        self.derived = 0
        """How many tools the last `settle` derived: what the change cost."""

    def add(self, doc_id: int, doc: Doc) -> None:
        self.docs[doc_id] = doc
        for f, terms in enumerate(doc.fields):
            self._totals[f] += len(terms)
        server = self._servers.setdefault(doc.tool.server, _Server())
        server.tools.add(doc_id)
        server.count(doc.body, 1)
        self._pending.add(doc_id)

    def remove(self, doc_id: int) -> None:
        doc = self.docs.pop(doc_id)
        for f, terms in enumerate(doc.fields):
            self._totals[f] -= len(terms)
        server = self._servers[doc.tool.server]
        server.tools.discard(doc_id)
        server.count(doc.body, -1)
        if doc_id in self._pending:
            self._pending.discard(doc_id)
        else:
            self._retract(doc_id, doc)
        if not server.tools and not server.before:
            del self._servers[doc.tool.server]

    def settle(self) -> bool:
        """Bring the postings up to date; return whether any changed since the last call."""
        changed = bool(self._pending)
        averages = self._rounded_averages()
        if averages != self._averages:
            self._averages = averages
            self.rows, self.df = {}, {}
            self._pending = set(self.docs)
            changed = True
        for name, server in list(self._servers.items()):
            if not server.before and server.settled_tools == len(server.tools):
                continue
            changed = True
            moved = server.moved()
            if moved:
                for doc_id in server.tools:
                    if doc_id not in self._pending and not moved.isdisjoint(self.docs[doc_id].body):
                        self._retract(doc_id, self.docs[doc_id])
                        self._pending.add(doc_id)
            if not server.tools:
                del self._servers[name]
        for doc_id in self._pending:
            self._derive(doc_id, self.docs[doc_id])
        self.derived = len(self._pending)
        self._pending = set()
        return changed

    def _rounded_averages(self) -> tuple[float, ...]:
        n = len(self.docs)
        if not n:
            return ()
        return tuple(
            2.0 ** (round(math.log2(max(total / n, 1.0)) * AVERAGE_GRID) / AVERAGE_GRID)
            for total in self._totals
        )

    def _derive(self, doc_id: int, doc: Doc) -> None:
        averages = self._averages
        weighted: dict[str, float] = {}
        get = weighted.get
        presence: dict[str, int] = {}
        for f, terms in enumerate(doc.fields):
            if terms:
                b = FIELD_B[f]
                norm = FIELD_WEIGHT[f] / (1.0 - b + b * len(terms) / averages[f])
                for t in terms:
                    weighted[t] = get(t, 0.0) + norm
            if f + 1 == _HEAD:
                presence = dict.fromkeys(weighted, WEIGHT_STEPS)
        weights = self._servers[doc.tool.server].boilerplate
        for t in doc.body:
            presence.setdefault(t, weights.get(t, WEIGHT_STEPS))
        doc.presence = presence
        rows, df = self.rows, self.df
        for t, tfw in weighted.items():
            s = tfw / (tfw + _K1)
            row = rows.get(t)
            if row is None:
                rows[t] = {doc_id: s}
            else:
                row[doc_id] = s
        for t, p in presence.items():
            df[t] = df.get(t, 0) + p

    def _retract(self, doc_id: int, doc: Doc) -> None:
        rows, df = self.rows, self.df
        for t, p in doc.presence.items():
            row = rows[t]
            del row[doc_id]
            if not row:
                del rows[t]
            left = df[t] - p
            if left:
                df[t] = left
            else:
                del df[t]
        doc.presence = {}

    def idf(self, term: str) -> float:
        """BM25's idf of ``term``, from its weighted document frequency."""
        n = len(self.docs)
        df = self.df.get(term, 0) / WEIGHT_STEPS
        return math.log(1.0 + (n - df + 0.5) / (df + 0.5)) * (_K1 + 1.0)
