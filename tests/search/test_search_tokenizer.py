"""The semantic ranking's tokenizer against the model's own, and RRF fusion.

The expected ids were computed once with the Hugging Face ``tokenizers`` package (0.23.3)
from the ``tokenizer.json`` that ships beside all-MiniLM-L6-v2's ``vocab.txt``, and are
hard-coded here: the model's own tokenizer's output. Ours is ``tokenizers`` too, built from
the vocabulary alone, so these check that it is assembled as that file declares.
"""

from __future__ import annotations

from typing import Any

import pytest

from mcpmount.search._fusion import RRF_K, fuse
from mcpmount.semantic._tokenizer import MAX_TOKENS, Tokenizer, load_tokenizer

ORACLE: list[tuple[str, list[int]]] = [
    ("List the files in my home directory", [101, 2862, 1996, 6764, 1999, 2026, 2188, 14176, 102]),
    ("Café résumé naïve Ångström", [101, 7668, 13746, 15743, 17076, 15687, 102]),
    ("数据库查询 and 東京 time", [101, 100, 100, 100, 100, 100, 1998, 1879, 1755, 2051, 102]),
    (
        "git_diff_unstaged: show changes (not staged)!",
        [
            101,
            21025,
            2102,
            1035,
            4487,
            4246,
            1035,
            4895,
            9153,
            5999,
            1024,
            2265,
            3431,
            1006,
            2025,
            9813,
            1007,
            999,
            102,
        ],
    ),
    (
        "pneumonoultramicroscopicsilicovolcanoconiosis",
        [
            101,
            1052,
            2638,
            2819,
            17175,
            11314,
            6444,
            2594,
            7352,
            26461,
            27572,
            11261,
            6767,
            15472,
            6761,
            8663,
            10735,
            2483,
            102,
        ],
    ),
    ("x" * 101, [101, 100, 102]),
    (
        "Tab\there\u200bzero\u2011width \u2013 dash \u00abquotes\u00bb $100 & 50% off",
        [
            101,
            21628,
            2182,
            6290,
            2080,
            1514,
            9381,
            1516,
            11454,
            1077,
            16614,
            1090,
            1002,
            2531,
            1004,
            2753,
            1003,
            2125,
            102,
        ],
    ),
    (
        "snake_case_name camelCaseName kebab-name v2.3.0",
        [
            101,
            7488,
            1035,
            2553,
            1035,
            2171,
            19130,
            18382,
            18442,
            17710,
            3676,
            2497,
            1011,
            2171,
            1058,
            2475,
            1012,
            1017,
            1012,
            1014,
            102,
        ],
    ),
    ("\U0001f600 emoji \U0001f916", [101, 100, 7861, 29147, 2072, 100, 102]),
    ("\ufb01le ligature \u01c5", [101, 1984, 2571, 8018, 11244, 100, 102]),
]


@pytest.fixture(scope="module", name="tokenizer")
def _tokenizer() -> Tokenizer:
    return load_tokenizer()


@pytest.mark.parametrize(("text", "ids"), ORACLE)
def test_ids_match_the_reference_tokenizer(tokenizer: Tokenizer, text: str, ids: list[int]) -> None:
    """Accents, CJK, punctuation, underscores, long words and unknown marks as BERT splits them."""
    assert tokenizer.encode(text).ids == ids


def test_the_vocabulary_is_bert_uncased(tokenizer: Tokenizer) -> None:
    """30,522 tokens, the special ones at their usual ids."""
    library: Any = tokenizer  # a tokenizers.implementations.BertWordPieceTokenizer
    vocabulary: dict[str, int] = library.get_vocab()
    assert len(vocabulary) == 30_522
    assert (vocabulary["[PAD]"], vocabulary["[UNK]"], vocabulary["[CLS]"]) == (0, 100, 101)
    assert tokenizer.encode("").ids == [101, 102]


def test_long_texts_are_cut_to_the_token_limit(tokenizer: Tokenizer) -> None:
    """A long text yields `MAX_TOKENS` ids and still ends with [SEP]."""
    ids = tokenizer.encode("word " * 500).ids
    assert len(ids) == MAX_TOKENS == 128
    assert ids[0] == 101
    assert ids[-1] == 102


def test_fusion_sums_reciprocal_ranks_and_breaks_ties_by_first_seen() -> None:
    """An item ranked well by both beats one ranked first by only one."""
    assert fuse([["a", "b", "c"], ["b", "d", "a"]]) == ["b", "a", "d", "c"]
    assert fuse([["x"], ["y"]]) == ["x", "y"]
    assert fuse([[], []]) == []
    assert RRF_K == 60
