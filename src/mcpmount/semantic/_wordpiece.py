"""BERT uncased WordPiece tokenization, in pure Python, for the semantic ranking's model.

``minilm_vocab.txt`` (next to this module) is the 30,522-entry vocabulary of
``bert-base-uncased``, which ``sentence-transformers/all-MiniLM-L6-v2`` uses unchanged
(Apache License 2.0; taken byte for byte from that model's ``vocab.txt``, 231,508 bytes).
Line ``i`` is the token of id ``i``.

The steps are those of BERT's basic tokenizer followed by greedy longest-match WordPiece:
lowercase, strip accents (NFD, drop combining marks), drop control characters, split on
whitespace, on punctuation and around each CJK ideograph, then split each word into the
longest vocabulary pieces from its start (``##`` marks a piece inside a word). A word with
no such split, or longer than 100 characters, becomes ``[UNK]``.
"""

from __future__ import annotations

import unicodedata
from importlib import resources
from typing import Final

__all__ = ["MAX_TOKENS", "WordPiece"]

MAX_TOKENS: Final = 128
"""The most ids one text yields, ``[CLS]`` and ``[SEP]`` included; the rest is cut."""

_VOCAB_FILE = "minilm_vocab.txt"
_MAX_WORD_CHARS = 100
_MAX_CACHED_WORDS = 65_536

_CJK_RANGES: Final = (
    (0x4E00, 0x9FFF),
    (0x3400, 0x4DBF),
    (0x20000, 0x2A6DF),
    (0x2A700, 0x2B73F),
    (0x2B740, 0x2B81F),
    (0x2B820, 0x2CEAF),
    (0xF900, 0xFAFF),
    (0x2F800, 0x2FA1F),
)


def _is_cjk(code: int) -> bool:
    return any(low <= code <= high for low, high in _CJK_RANGES)


def _is_punctuation(char: str) -> bool:
    """ASCII symbols count as punctuation, as in BERT, besides Unicode's P* categories."""
    code = ord(char)
    if 33 <= code <= 47 or 58 <= code <= 64 or 91 <= code <= 96 or 123 <= code <= 126:
        return True
    return unicodedata.category(char).startswith("P")


class WordPiece:
    """Text to token ids for the packaged vocabulary; keeps a bounded cache of words seen."""

    __slots__ = ("_cache", "_cls", "_sep", "_unk", "_vocab")

    def __init__(self) -> None:
        text = resources.files("mcpmount.semantic").joinpath(_VOCAB_FILE).read_text("utf-8")
        self._vocab = {token: i for i, token in enumerate(text.split("\n")) if token}
        self._cls = self._vocab["[CLS]"]
        self._sep = self._vocab["[SEP]"]
        self._unk = self._vocab["[UNK]"]
        self._cache: dict[str, list[int]] = {}

    def __len__(self) -> int:
        return len(self._vocab)

    def encode(self, text: str, max_tokens: int = MAX_TOKENS) -> list[int]:
        """Return ``[CLS] pieces... [SEP]``, at most ``max_tokens`` ids."""
        ids = [self._cls]
        for word in self.words(text):
            ids += self._pieces(word)
            if len(ids) >= max_tokens - 1:
                break
        ids = ids[: max_tokens - 1]
        ids.append(self._sep)
        return ids

    @staticmethod
    def words(text: str) -> list[str]:
        """The basic tokenizer: lowercased, accent-free words and single punctuation marks."""
        words: list[str] = []
        current: list[str] = []
        for char in unicodedata.normalize("NFD", text.lower()):
            category = unicodedata.category(char)
            code = ord(char)
            if category == "Mn" or code in (0, 0xFFFD):
                continue
            if char.isspace():
                if current:
                    words.append("".join(current))
                    current = []
            elif category.startswith("C"):
                continue
            elif _is_punctuation(char) or _is_cjk(code):
                if current:
                    words.append("".join(current))
                    current = []
                words.append(char)
            else:
                current.append(char)
        if current:
            words.append("".join(current))
        return words

    def _pieces(self, word: str) -> list[int]:
        cached = self._cache.get(word)
        if cached is not None:
            return cached
        pieces = [self._unk] if len(word) > _MAX_WORD_CHARS else self._split(word)
        if len(self._cache) >= _MAX_CACHED_WORDS:
            self._cache = {}  # bounded: the words are the callers'
        self._cache[word] = pieces
        return pieces

    def _split(self, word: str) -> list[int]:
        """Greedy longest match from the start; ``[UNK]`` for the word if a rest has none."""
        pieces: list[int] = []
        start = 0
        while start < len(word):
            end = len(word)
            found: int | None = None
            while start < end:
                piece = word[start:end] if start == 0 else "##" + word[start:end]
                found = self._vocab.get(piece)
                if found is not None:
                    break
                end -= 1
            if found is None:
                return [self._unk]
            pieces.append(found)
            start = end
        return pieces
