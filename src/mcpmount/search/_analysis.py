"""Text analysis: how tool text and queries become index terms.

Text is split on non-alphanumerics, ``camelCase`` humps and letter/digit boundaries,
lowercased, stripped of stop words and single letters, and stemmed by `stem`. The same
analysis runs on tools and on queries, so their terms meet.

`tokenize` is pure. An `Analyzer` does the same with a bounded cache of word -> term that
belongs to it alone: each `SearchIndex` owns one, so no state is shared between indexes
or kept by the module.
"""

from __future__ import annotations

import re
from typing import Final

__all__ = ["STOP_WORDS", "Analyzer", "identifier_like", "stem", "term", "tokenize"]

_WORD = re.compile(r"[a-z]++|[A-Z][a-z]++|[A-Z]+(?![a-z])|\d++|[^\W\d_A-Za-z]++")
"""Runs of: lowercase letters (``read``), one capital and lowercase letters (``Server``),
capitals not followed by lowercase (``HTTP``Server), digits, or non-ASCII letters.
Everything else (``_ - . /`` and spaces) separates, so ``readFile``, ``read_file`` and
``read-file`` all give ``read file``. The commonest shape goes first, and the possessive
``++`` never backtracks: tokenizing is most of the cost of building an index."""

STOP_WORDS: Final = frozenset(
    """
    a an the and or of to in on at by for from with as into onto over about
    is are was were be been being
    it its this that these those there here
    i me my mine we us our you your he she they them their his her
    do does did done can could would should will shall may might must
    please want wants need needs needed like just
    some any what which who whom whose when where why how
    if then than so such also only very via using use
    """.split()  # noqa: SIM905 -- a list literal is formatted one word per line
)
"""Words dropped from tools and queries alike: they say nothing about what a tool does.
Direction words (``up``, ``down``, ``off``) and quantifiers (``all``, ``new``) stay, because
"shut down", "look up" and "create new" carry meaning."""

_VOWELS = frozenset("aeiouy")

MAX_CACHED_WORDS: Final = 200_000
"""The most words an `Analyzer` remembers by default."""


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


def term(word: str) -> str:
    """Return the index term of one word as it appears in text, or "" if it is dropped."""
    lowered = word.lower()
    if (len(lowered) == 1 and not lowered.isdigit()) or lowered in STOP_WORDS:
        return ""
    return stem(lowered)


def tokenize(text: str) -> list[str]:
    """Return the index terms of ``text``: split, lowercased, stop words out, stemmed.

    Splits on anything not a letter or digit, on ``camelCase`` humps and between letters
    and digits. Single letters are dropped (they are mostly noise such as hash suffixes).
    """
    return [found for found in map(term, _WORD.findall(text)) if found]


class _TermCache(dict[str, str]):
    """Word as it appears in text -> its term ("" for a dropped word), filled on lookup.

    Equal terms share one string object, so an index keeps each term once and its dict
    lookups mostly compare by identity.
    """

    __slots__ = ("_limit", "_shared")

    def __init__(self, limit: int) -> None:
        super().__init__()
        self._limit = limit
        self._shared: dict[str, str] = {}

    def __missing__(self, word: str) -> str:
        found = term(word)
        if len(self) < self._limit:  # bounded: tool text is untrusted
            found = self._shared.setdefault(found, found)
            self[word] = found
        return found


class Analyzer:
    """`tokenize` with a bounded cache of the words it has seen; one per index.

    Tool text repeats a small vocabulary, so most words are analyzed once. Not
    thread-safe, like the index that owns it.

    Args:
        max_cached_words: The most words remembered; once full, new words are analyzed
            every time they occur.
    """

    __slots__ = ("_cache",)

    def __init__(self, max_cached_words: int = MAX_CACHED_WORDS) -> None:
        self._cache = _TermCache(max_cached_words)

    def __len__(self) -> int:
        """The number of words in the cache."""
        return len(self._cache)

    def __repr__(self) -> str:
        return f"<Analyzer cached_words={len(self._cache)}>"

    def tokenize(self, text: str) -> tuple[str, ...]:
        """Return the terms the module's `tokenize` gives for ``text``, as a tuple."""
        return tuple(filter(None, map(self._cache.__getitem__, _WORD.findall(text))))

    def query_terms(self, text: str) -> tuple[list[str], list[str]]:
        """The terms of a query: those of its ``+required`` words, and those of the rest."""
        required: list[str] = []
        optional: list[str] = []
        for word in text.split():
            if word.startswith("+"):
                required += self.tokenize(word[1:])
            else:
                optional += self.tokenize(word)
        return required, optional


def identifier_like(query: str) -> bool:
    """Whether ``query`` looks like (part of) a tool name, e.g. ``fs__read`` or ``git.log``."""
    return (
        len(query) >= 3
        and not any(c.isspace() for c in query)
        and any(c in "_-." for c in query)
        and any(c.isalnum() for c in query)
    )
