"""The semantic model's tokenizer: BERT uncased WordPiece, by Hugging Face ``tokenizers``.

``minilm_vocab.txt`` (next to this module) is the 30,522-entry vocabulary of
``bert-base-uncased``, which ``sentence-transformers/all-MiniLM-L6-v2`` uses unchanged
(Apache License 2.0; taken byte for byte from that model's ``vocab.txt``, 231,508 bytes):
the model package ships only ``model.onnx``, so the vocabulary ships here. Line ``i`` is the
token of id ``i``.

`tokenizers`' ``BertWordPieceTokenizer`` over that file is the pipeline the model's own
``tokenizer.json`` declares: lowercase, strip accents, drop control characters, split on
whitespace, punctuation and around each CJK ideograph, then greedy longest-match WordPiece
(``[UNK]`` for a word with no split or over 100 characters), between ``[CLS]`` and
``[SEP]``, cut to `MAX_TOKENS`.

Texts are encoded one at a time, never with ``encode_batch``: a batch runs on the
package's own thread pool, which then lives on in a process that forks stdio servers and
runs the model beside the event loop; one text takes tens of microseconds, beside
milliseconds for the model.
"""

from __future__ import annotations

import importlib
from importlib import resources
from typing import Any, Final, Protocol

__all__ = ["MAX_TOKENS", "Tokenizer", "load_tokenizer"]

MAX_TOKENS: Final = 128
"""The most ids one text yields, ``[CLS]`` and ``[SEP]`` included; the rest is cut."""

_VOCAB_FILE: Final = "minilm_vocab.txt"


class _Encoding(Protocol):
    @property
    def ids(self) -> list[int]: ...


class Tokenizer(Protocol):
    """What the embedder uses of a ``tokenizers`` tokenizer; safe in any thread."""

    def encode(self, sequence: str) -> _Encoding:
        """``[CLS]``, the text's word pieces, ``[SEP]``: at most `MAX_TOKENS` ids."""
        ...


def load_tokenizer() -> Tokenizer:
    """The packaged vocabulary's tokenizer.

    Raises:
        ImportError: The ``tokenizers`` package is missing.
    """
    implementations: Any = importlib.import_module("tokenizers.implementations")
    with resources.as_file(resources.files("mcpmount.semantic").joinpath(_VOCAB_FILE)) as vocab:
        tokenizer: Any = implementations.BertWordPieceTokenizer(str(vocab), lowercase=True)
    tokenizer.enable_truncation(MAX_TOKENS)
    return tokenizer
