"""The tool index behind ``tool_search``: pure, deterministic, fast.

Search controls discovery, not access: a deferred tool stays callable by name, and this
module only decides which tools a query surfaces. It does no I/O and never awaits.

Ranking, in order:

1. **Exact name.** A query equal to a tool's public name (``ns__tool``) or raw name
   (``tool``), ignoring case, ranks that tool first, however little text it has.
2. **Name prefix.** A one-word query that looks like an identifier (it holds ``_``, ``-``
   or ``.``, e.g. ``git_diff`` or ``github__``) ranks the tools whose name starts with it
   next.
3. **BM25F** over five fields: name (public and raw, namespace included), title, argument
   names, description and argument descriptions, each with its own weight and length
   normalization. Text is split on non-alphanumerics, ``camelCase`` and digits, lowercased,
   stop words dropped and stemmed by `stem`. Each query word also matches its synonyms
   (`SYNONYMS`) at a discount, scored as the best of the word and its synonyms, so a tool
   that says both "delete" and "remove" is not counted twice.

Ties break by public name. Scores depend only on the set of indexed tools, never on the
order they were added in. Query forms: plain keywords; ``select:a,b`` returns exactly those
tools (public or raw names) in that order; ``+word`` requires a word (``+github issue``).
An empty, unmatched or malformed query returns no hits and a `SearchResult.hint`; search
never raises.

Cost: ``add`` and ``remove`` only record the change; the next search re-derives the
per-term impacts once (linear in the corpus, about 0.2 s at 10,000 tools). A query then
touches only the posting lists of its words.
"""

from __future__ import annotations

import contextlib
import gc
import heapq
import json
import math
import re
from bisect import bisect_left
from collections.abc import Generator, Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Final

import mcp_types

from mcpmount.tool import MountedTool

__all__ = [
    "DEFAULT_LIMIT",
    "MAX_LIMIT",
    "STOP_WORDS",
    "SYNONYMS",
    "TOOL_SEARCH_NAME",
    "Hit",
    "SearchIndex",
    "SearchResult",
    "ToolSearchCall",
    "call_tool_search",
    "stem",
    "tokenize",
    "tool_search_definition",
]

TOOL_SEARCH_NAME: Final = "tool_search"
"""The public name of the meta-tool."""

DEFAULT_LIMIT: Final = 5
MAX_LIMIT: Final = 20
"""The most hits one search returns, whatever ``limit`` asks for."""

_MAX_QUERY_CHARS = 2000
"""Longer queries are cut: no real need is that long, and it bounds the work."""

_SELECT_PREFIX = "select:"


def tool_search_definition(max_limit: int = MAX_LIMIT) -> mcp_types.Tool:
    """Return the definition of the ``tool_search`` meta-tool.

    Args:
        max_limit: The largest ``limit`` the schema allows (at most `MAX_LIMIT`).
    """
    max_limit = max(1, min(max_limit, MAX_LIMIT))
    return mcp_types.Tool(
        name=TOOL_SEARCH_NAME,
        title="Search for tools",
        description=(
            "Search the tools that are available but not loaded yet, and load the best "
            "matches. Call it before saying that no tool can do something. Returns the full "
            "definitions (name, description, input schema) of the matching tools, best first; "
            "every returned tool can be called right away.\n"
            "Query forms:\n"
            '- keywords naming the action and the object, e.g. "stop virtual machine" or '
            '"list pull requests"; a tool\'s exact name ranks that tool first;\n'
            '- "select:name_a,name_b" loads exactly those tools by name, in that order;\n'
            '- "+word" requires a word, e.g. "+github issue" for issue tools of the '
            "github server (server names are words of the tool names)."
        ),
        input_schema={
            "type": "object",
            "properties": {
                "query": {
                    "type": "string",
                    "description": (
                        'Keywords, "select:name_a,name_b", or keywords with "+required" words.'
                    ),
                },
                "limit": {
                    "type": "integer",
                    "description": "How many tools to return at most.",
                    "default": min(DEFAULT_LIMIT, max_limit),
                    "minimum": 1,
                    "maximum": max_limit,
                },
            },
            "required": ["query"],
            "additionalProperties": False,
        },
    )


@dataclass(frozen=True, slots=True)
class Hit:
    """One tool a search returned."""

    tool: MountedTool
    """The matched tool."""

    score: float
    """Its BM25F relevance to the query's words (0.0 for ``select:`` and name-only hits).

    Hits are ordered by match kind first (exact name, then name prefix, then words), so a
    later hit may score higher than an exact-name hit before it.
    """


@dataclass(frozen=True, slots=True)
class SearchResult:
    """The outcome of one search."""

    hits: tuple[Hit, ...]
    """Best first; at most the clamped ``limit`` (or `MAX_LIMIT` for ``select:``)."""

    hint: str | None = None
    """Why there are no (or fewer) hits and what to try instead; None when all went well."""


# --- Text analysis -------------------------------------------------------------------------

_WORD = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|\d+|[^\W\d_A-Za-z]+")
"""Runs of: capitals not followed by lowercase (``HTTP``Server), a word with at most one
leading capital (``Server``, ``read``), digits, or non-ASCII letters. Everything else
(``_ - . /`` and spaces) separates, so ``readFile``, ``read_file`` and ``read-file`` all give
``read file``."""

STOP_WORDS: Final = frozenset(
    [
        "a",
        "an",
        "the",
        "and",
        "or",
        "of",
        "to",
        "in",
        "on",
        "at",
        "by",
        "for",
        "from",
        "with",
        "as",
        "into",
        "onto",
        "over",
        "about",
        "is",
        "are",
        "was",
        "were",
        "be",
        "been",
        "being",
        "it",
        "its",
        "this",
        "that",
        "these",
        "those",
        "there",
        "here",
        "i",
        "me",
        "my",
        "mine",
        "we",
        "us",
        "our",
        "you",
        "your",
        "he",
        "she",
        "they",
        "them",
        "their",
        "his",
        "her",
        "do",
        "does",
        "did",
        "done",
        "can",
        "could",
        "would",
        "should",
        "will",
        "shall",
        "may",
        "might",
        "must",
        "please",
        "want",
        "wants",
        "need",
        "needs",
        "needed",
        "like",
        "just",
        "some",
        "any",
        "what",
        "which",
        "who",
        "whom",
        "whose",
        "when",
        "where",
        "why",
        "how",
        "if",
        "then",
        "than",
        "so",
        "such",
        "also",
        "only",
        "very",
        "via",
        "using",
        "use",
    ]
)
"""Words dropped from tools and queries alike: they say nothing about what a tool does.
Direction words (``up``, ``down``, ``off``) and quantifiers (``all``, ``new``) stay, because
"shut down", "look up" and "create new" carry meaning."""

_VOWELS = frozenset("aeiouy")


def stem(word: str) -> str:
    """Return the stem of a lowercase word: a small, conservative suffix stripper.

    It conflates the inflections that tool text and queries mix (``files``/``file``,
    ``created``/``creating``/``creation``/``create``, ``directories``/``directory``,
    ``stopped``/``stop``) and leaves short words, digits and unknown shapes alone. Stems
    are index keys, not words: ``create`` becomes ``creat``.
    """
    if not word.isascii() or not word.isalpha():
        return word
    if len(word) <= 3:
        # Plurals of acronyms: vms, prs, dbs (but not ids, gas, bus).
        if len(word) == 3 and word[2] == "s" and not _VOWELS.intersection(word[:2]):
            return word[:2]
        return word
    w = word
    # Plurals and third person.
    if w.endswith(("ies", "ied")) and len(w) > 4:
        w = w[:-3] + "y"
    elif w.endswith("sses"):
        w = w[:-2]
    elif w.endswith("s") and not w.endswith(("ss", "us", "is")):
        w = w[:-1]
    if w.endswith("ly") and len(w) >= 6:
        w = w[:-2]  # recursively -> recursive
    elif w.endswith("ship") and len(w) >= 8:
        w = w[:-4]  # relationship -> relation
    # Verb and noun suffixes; the stem left must keep a vowel and three letters.
    for suffix in ("ment", "ing", "ion", "ed"):
        if w.endswith(suffix):
            base = w[: -len(suffix)]
            if suffix == "ion" and not base.endswith(("t", "s")):
                break
            if len(base) >= 3 and any(c in _VOWELS for c in base):
                w = base
                if (
                    suffix in ("ing", "ed")
                    and len(w) >= 4
                    and w[-1] == w[-2]
                    and w[-1] not in "lsz"
                    and w[-1] not in _VOWELS
                ):
                    w = w[:-1]  # stopped -> stopp -> stop; but pull, pass, add stay
            break
    if len(w) >= 4 and w.endswith("e") and not w.endswith("ee"):
        w = w[:-1]  # create/creat(ed|ing|ion) -> creat; file/files/filed -> fil
    if len(w) > 5 and w.endswith("at"):
        w = w[:-2]  # validat(e|ion) -> valid; configurat(e|ion) -> configur
    return w


_TERMS: dict[str, str] = {}
"""Word as it appears in text -> its term, or "" for a dropped word (a cache)."""
_TERMS_MAX = 200_000


def _term(word: str) -> str:
    """Return the index term of one word, or "" if the word is dropped."""
    term = _TERMS.get(word)
    if term is None:
        lowered = word.lower()
        if (len(lowered) == 1 and not lowered.isdigit()) or lowered in STOP_WORDS:
            term = ""
        else:
            term = stem(lowered)
        if len(_TERMS) < _TERMS_MAX:  # bounded: tool text is untrusted
            _TERMS[word] = term
    return term


def tokenize(text: str) -> list[str]:
    """Return the index terms of ``text``: split, lowercased, stop words out, stemmed.

    Splits on anything not a letter or digit, on ``camelCase`` humps and between letters
    and digits. Single letters are dropped (they are mostly noise such as hash suffixes).
    """
    terms = _TERMS
    out: list[str] = []
    for word in _WORD.findall(text):
        term = terms.get(word)
        if term is None:
            term = _term(word)
        if term:
            out.append(term)
    return out


# --- Synonyms ------------------------------------------------------------------------------

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

A query word also matches the other words of its groups at `_SYNONYM_WEIGHT`. Keep this to
general vocabulary of tools (verbs of CRUD and control, common nouns), never entries made
for one query or one tool."""

_SYNONYM_WEIGHT = 0.75


def _synonym_map(groups: Iterable[Iterable[str]]) -> dict[str, frozenset[str]]:
    related: dict[str, set[str]] = {}
    for group in groups:
        stems = {_term(w) for w in group} - {""}
        for s in stems:
            related.setdefault(s, set()).update(stems - {s})
    return {s: frozenset(others) for s, others in related.items() if others}


_RELATED: Final = _synonym_map(SYNONYMS)


# --- Fields and BM25F ----------------------------------------------------------------------

# Fields of a tool, and per field (weight, length normalization b). The name carries most
# signal and is short, so it weighs most and is barely length-normalized.
_NAME, _TITLE, _PARAMS, _DESCRIPTION, _PARAM_TEXT = range(5)
_FIELD_WEIGHT = (3.0, 2.0, 1.5, 1.0, 0.5)
_FIELD_B = (0.3, 0.5, 0.5, 0.5, 0.5)
_K1 = 1.2
_MAX_SCHEMA_DEPTH = 2


def _schema_text(schema: Mapping[str, Any], depth: int, names: list[str], texts: list[str]) -> None:
    """Collect property names and descriptions, recursing into nested objects and arrays."""
    props: object = schema.get("properties")
    if not isinstance(props, dict):
        return
    for key, value in props.items():  # pyright: ignore[reportUnknownVariableType]
        if isinstance(key, str):
            names.append(key)
        if not isinstance(value, dict):
            continue
        prop: dict[str, Any] = value  # pyright: ignore[reportUnknownVariableType]
        for text_key in ("title", "description"):
            text = prop.get(text_key)
            if isinstance(text, str):
                texts.append(text)
        if depth < _MAX_SCHEMA_DEPTH:
            _schema_text(prop, depth + 1, names, texts)
            items = prop.get("items")
            if isinstance(items, dict):
                _schema_text(items, depth + 1, names, texts)  # pyright: ignore[reportUnknownArgumentType]


def _fields(tool: MountedTool) -> tuple[list[str], ...]:
    d = tool.definition
    name = tokenize(tool.name)
    seen = set(name)
    name += [t for t in tokenize(tool.raw_name) if t not in seen]
    title = d.title or (d.annotations.title if d.annotations is not None else None) or ""
    params: list[str] = []
    texts: list[str] = []
    _schema_text(d.input_schema, 1, params, texts)
    return (
        name,
        tokenize(title),
        tokenize(" ".join(params)),
        tokenize(d.description or ""),
        tokenize(" ".join(texts)),
    )


@dataclass(slots=True)
class _Doc:
    tool: MountedTool
    fields: tuple[list[str], ...]
    """Per field, its terms in order (repeats count)."""


@contextlib.contextmanager
def _gc_paused() -> Generator[None]:
    """Pause the cyclic garbage collector while building the index.

    A build allocates hundreds of thousands of small containers and no cycles; each
    collection it triggers walks everything alive, which cost a third of the build time at
    10,000 tools. Reference counting still frees memory as usual.
    """
    if not gc.isenabled():
        yield
        return
    gc.disable()
    try:
        yield
    finally:
        gc.enable()


def _is_identifier_like(query: str) -> bool:
    return (
        len(query) >= 3
        and not any(c.isspace() for c in query)
        and any(c in "_-." for c in query)
        and any(c.isalnum() for c in query)
    )


class SearchIndex:
    """An incremental BM25F index over mounted tools; see the module docstring for ranking.

    Not thread-safe: the registry owns one and changes it from one task.
    """

    __slots__ = (
        "_dirty",
        "_docs",
        "_expanded",
        "_ids",
        "_impacts",
        "_next_id",
        "_prefix_keys",
    )

    def __init__(self) -> None:
        self._docs: dict[int, _Doc] = {}
        self._ids: dict[str, int] = {}
        """Public name -> doc id."""
        self._next_id = 0
        self._impacts: dict[str, dict[int, float]] = {}
        """Term -> doc id -> BM25F contribution; derived lazily from the docs."""
        self._expanded: dict[str, dict[int, float]] = {}
        """Query term -> impacts of the term or its synonyms; a cache of `_impacts`."""
        self._prefix_keys: list[tuple[str, int]] = []
        """Sorted (lowercased public or raw name, doc id), for exact and prefix lookups."""
        self._dirty = False

    def __len__(self) -> int:
        return len(self._docs)

    def __repr__(self) -> str:
        return f"<SearchIndex tools={len(self._docs)}>"

    # --- changes --------------------------------------------------------------------------

    def add(self, tools: Iterable[MountedTool]) -> None:
        """Index ``tools``; a tool whose public name is already indexed replaces it."""
        with _gc_paused():
            self._add(tools)

    def _add(self, tools: Iterable[MountedTool]) -> None:
        for tool in tools:
            if tool.name in self._ids:
                self._drop(tool.name)
            fields = _fields(tool)
            doc = _Doc(tool, fields)
            doc_id = self._next_id
            self._next_id += 1
            self._docs[doc_id] = doc
            self._ids[tool.name] = doc_id
            self._dirty = True

    def remove(self, names: Iterable[str]) -> None:
        """Forget the tools with these public names; unknown names are ignored."""
        for name in names:
            if name in self._ids:
                self._drop(name)
                self._dirty = True

    def _drop(self, name: str) -> None:
        doc_id = self._ids.pop(name)
        del self._docs[doc_id]

    def _refresh(self) -> None:
        """Re-derive impacts from the docs; depends only on the set of docs, not history."""
        self._dirty = False
        self._expanded = {}
        n = len(self._docs)
        impacts: dict[str, dict[int, float]] = {}
        self._impacts = impacts
        keys = [(tool_name.lower(), i) for tool_name, i in self._ids.items()]
        keys += [(d.tool.raw_name.lower(), i) for i, d in self._docs.items()]
        keys.sort()
        self._prefix_keys = keys
        if n == 0:
            return
        # Integer totals keep the averages, and so every score, independent of add order.
        totals = [0] * len(_FIELD_WEIGHT)
        for doc in self._docs.values():
            for f, terms in enumerate(doc.fields):
                totals[f] += len(terms)
        averages = [max(total / n, 1.0) for total in totals]
        # Pass 1: per doc, the field-weighted, length-normalized term frequency.
        weights: dict[str, dict[int, float]] = {}
        for doc_id, doc in self._docs.items():
            weighted: dict[str, float] = {}
            get = weighted.get
            for f, terms in enumerate(doc.fields):
                if terms:
                    b = _FIELD_B[f]
                    norm = _FIELD_WEIGHT[f] / (1.0 - b + b * len(terms) / averages[f])
                    for term in terms:
                        weighted[term] = get(term, 0.0) + norm
            for term, tfw in weighted.items():
                row = weights.get(term)
                if row is None:
                    weights[term] = {doc_id: tfw}
                else:
                    row[doc_id] = tfw
        # Pass 2: BM25 saturation times idf, once the document frequencies are known.
        k1 = _K1
        for term, row in weights.items():
            df = len(row)
            scale = math.log(1.0 + (n - df + 0.5) / (df + 0.5)) * (k1 + 1.0)
            impacts[term] = {doc_id: scale * tfw / (tfw + k1) for doc_id, tfw in row.items()}

    def _term_impacts(self, term: str) -> dict[int, float]:
        """Impacts of ``term``, each doc scored by the best of the term and its synonyms."""
        cached = self._expanded.get(term)
        if cached is not None:
            return cached
        own = self._impacts.get(term, {})
        related = _RELATED.get(term)
        if not related:
            return own
        merged = dict(own)
        for other in sorted(related):
            for doc_id, impact in self._impacts.get(other, {}).items():
                discounted = impact * _SYNONYM_WEIGHT
                if discounted > merged.get(doc_id, 0.0):
                    merged[doc_id] = discounted
        self._expanded[term] = merged
        return merged

    # --- queries --------------------------------------------------------------------------

    def search(self, query: str, limit: int = DEFAULT_LIMIT) -> SearchResult:
        """Return the tools that best match ``query``, best first; never raises.

        Args:
            query: Keywords, ``select:a,b`` or keywords with ``+required`` words.
            limit: How many hits to return; clamped to 1..`MAX_LIMIT`.
        """
        try:
            return self._search(query, limit)
        except Exception as exc:  # a bug must not take the model's turn down
            return SearchResult((), f"search failed on this query ({type(exc).__name__})")

    def _search(self, query: str, limit: int) -> SearchResult:
        limit = max(1, min(int(limit), MAX_LIMIT))
        if self._dirty:
            with _gc_paused():
                self._refresh()
        text = query[:_MAX_QUERY_CHARS].strip()
        if not text:
            return SearchResult((), "empty query: give keywords such as 'stop instance'")
        if not self._docs:
            return SearchResult((), "no tools are available to search")
        if text[: len(_SELECT_PREFIX)].lower() == _SELECT_PREFIX:
            return self._select(text[len(_SELECT_PREFIX) :])

        lowered = text.lower()
        exact = self._name_matches(lowered, prefix=False)
        prefix = (
            [i for i in self._name_matches(lowered, prefix=True) if i not in exact]
            if _is_identifier_like(lowered)
            else []
        )

        required: list[str] = []
        optional: list[str] = []
        for word in text.split():
            if word.startswith("+"):
                required += tokenize(word[1:])
            else:
                optional += tokenize(word)
        terms = list(dict.fromkeys(required + optional))

        scores: dict[int, float] = {}
        candidates: set[int] | None = None
        if required:
            for term in dict.fromkeys(required):
                ids = self._impacts.get(term)
                if not ids:
                    return SearchResult(
                        (), f"no tool contains the required word {term!r}; drop the '+'"
                    )
                candidates = set(ids) if candidates is None else candidates & ids.keys()
            if not candidates:
                return SearchResult((), "no tool contains all the '+' words together")
            exact = [i for i in exact if i in candidates]
            prefix = [i for i in prefix if i in candidates]
        for term in terms:
            impacts = self._term_impacts(term)
            if candidates is None:
                get = scores.get
                for doc_id, impact in impacts.items():
                    scores[doc_id] = get(doc_id, 0.0) + impact
            else:
                for doc_id in candidates:
                    impact = impacts.get(doc_id)
                    if impact is not None:
                        scores[doc_id] = scores.get(doc_id, 0.0) + impact
        if candidates is not None:
            for doc_id in candidates:
                scores.setdefault(doc_id, 0.0)

        ranked = self._rank(exact, scores) + self._rank(prefix, scores)
        taken = set(ranked)
        need = limit - len(ranked)
        if need > 0 and scores:
            # Threshold on scores alone (fast, in C), then order the few survivors.
            cut = heapq.nlargest(need + len(taken), scores.values())[-1]
            rest = [i for i, s in scores.items() if s >= cut and i not in taken]
            ranked += self._rank(rest, scores)[:need]
        ranked = ranked[:limit]
        if not ranked:
            if not terms:
                return SearchResult((), "the query has no searchable words; use keywords")
            return SearchResult(
                (), "no tool matched; try other words (e.g. the action and the object)"
            )
        hits = tuple(Hit(self._docs[i].tool, round(scores.get(i, 0.0), 6)) for i in ranked)
        return SearchResult(hits, None)

    def _rank(self, ids: Iterable[int], scores: Mapping[int, float]) -> list[int]:
        docs = self._docs
        return sorted(ids, key=lambda i: (-scores.get(i, 0.0), docs[i].tool.name))

    def _name_matches(self, key: str, *, prefix: bool) -> list[int]:
        keys = self._prefix_keys
        found: dict[int, None] = {}
        at = bisect_left(keys, (key, -1))
        while at < len(keys):
            name, doc_id = keys[at]
            if name != key and not (prefix and name.startswith(key)):
                break
            found[doc_id] = None
            at += 1
        return list(found)

    def _select(self, spec: str) -> SearchResult:
        wanted = [part.strip() for part in spec.split(",") if part.strip()]
        if not wanted:
            return SearchResult((), "select: needs tool names, e.g. 'select:fs__read_file'")
        chosen: dict[int, None] = {}
        unknown: list[str] = []
        for name in wanted:
            doc_id = self._ids.get(name)
            if doc_id is not None:
                chosen[doc_id] = None
                continue
            ids = self._name_matches(name.lower(), prefix=False)
            if ids:
                for i in self._rank(ids, {}):
                    chosen[i] = None
            else:
                unknown.append(name)
        ids = list(chosen)
        hints: list[str] = []
        if unknown:
            hints.append("unknown tool names: " + ", ".join(repr(n) for n in unknown))
        if len(ids) > MAX_LIMIT:
            hints.append(f"only the first {MAX_LIMIT} tools are returned")
        hits = tuple(Hit(self._docs[i].tool, 0.0) for i in ids[:MAX_LIMIT])
        return SearchResult(hits, "; ".join(hints) or None)


@dataclass(frozen=True, slots=True)
class ToolSearchCall:
    """One ``tool_search`` call: the result the model sees and what it found."""

    result: mcp_types.CallToolResult
    """The ``tools/call`` result: the found definitions as JSON text and structured content,
    or an error result when the arguments are malformed."""

    found: SearchResult | None
    """The search itself; None when the arguments were malformed and nothing was searched."""

    @property
    def names(self) -> tuple[str, ...]:
        """The public names of the found tools, best first."""
        return () if self.found is None else tuple(hit.tool.name for hit in self.found.hits)


def call_tool_search(index: SearchIndex, arguments: Mapping[str, Any] | None) -> ToolSearchCall:
    """Run ``tool_search`` with the model's ``arguments`` against ``index``; never raises."""
    args = dict(arguments or {})
    query = args.get("query")
    limit = args.get("limit", DEFAULT_LIMIT)
    if not isinstance(query, str) or not isinstance(limit, int) or isinstance(limit, bool):
        text = 'tool_search takes {"query": string, "limit": integer (1-20, default 5)}'
        error = mcp_types.CallToolResult(
            content=[mcp_types.TextContent(type="text", text=text)], is_error=True
        )
        return ToolSearchCall(error, None)
    found = index.search(query, limit)
    payload: dict[str, Any] = {"tools": [hit.tool.to_dict() for hit in found.hits]}
    if found.hint:
        payload["hint"] = found.hint
    result = mcp_types.CallToolResult(
        content=[mcp_types.TextContent(type="text", text=json.dumps(payload, ensure_ascii=False))],
        structured_content=payload,
    )
    return ToolSearchCall(result, found)
