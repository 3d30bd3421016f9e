"""Ranking tools by meaning: the optional half of ``tool_search`` (``semantic_model``).

`mcpmount.search.SearchIndex` imports this package only when it is given a
``semantic_model``, because it needs numpy and ONNX Runtime (the ``semantic`` extra); it
never imports `mcpmount.search` back. The index fuses the ranking of `SemanticRanker.rank`
with its word ranking; this package knows nothing of words.

How: each tool's text (`semantic_text`) becomes a unit sentence vector (`Embedder`: the
packaged int8 all-MiniLM-L6-v2, or an ``.onnx`` BERT encoder of the caller's). Vectors are
computed off the event loop (`SemanticRanker.work`, in the index owner's worker thread),
keyed by the xxh3 of each tool's text, and kept on disk and, with ``shared_vectors`` (the
registry's Redis ``cache``), in Redis, where every registry that uses it finds them without
running the model. "Nearest" is corrected for crowding: a tool's cosine with the query,
doubled, less the mean cosine with its 10 nearest other tools (CSLS, ``_hubness``), so a
tool among many near-identical ones is not near every query.

Modules: ``_ranker`` (`SemanticRanker`: tool vectors, their queue and the nearest tools),
``_embedding`` (`Embedder`: the model, its tokenizer and its pooling), ``_tokenizer`` (the
model's tokenizer, by ``tokenizers``), ``_int8_graph`` (the packaged model with its MatMuls
in int8 by ONNX Runtime's quantizer, built once and cached), ``_int8_scores`` (the scan of
the tool vectors), ``_hubness`` (each tool's crowding, kept across changes),
``_vector_cache`` (vectors on disk) and ``_vector_store`` (the store protocol, and vectors
in a shared Redis).
"""

from mcpmount.semantic._embedding import (
    PACKAGED_MODEL,
    PACKAGED_SHA256,
    Embedder,
    SemanticModelError,
    Vectors,
    resolve,
)
from mcpmount.semantic._ranker import SemanticRanker, semantic_text

__all__ = [
    "PACKAGED_MODEL",
    "PACKAGED_SHA256",
    "Embedder",
    "SemanticModelError",
    "SemanticRanker",
    "Vectors",
    "resolve",
    "semantic_text",
]
