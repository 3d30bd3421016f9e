"""The tool index behind ``tool_search``: pure, deterministic, fast.

Search controls discovery, not access: a deferred tool stays callable by name, and this
package only decides which tools a query surfaces. It keeps no state outside the objects
it returns, and searches without I/O and without awaiting: only `run_tool_search` awaits,
to run the semantic model on a new query in a worker thread.

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

4. **Meaning**, with a ``semantic_model`` (the ``semantic`` extra, `mcpmount.semantic`):
   the BM25F ranking's top 10 and the 10 tools whose sentence vectors are nearest the
   query's (corrected for crowding) are fused by reciprocal rank fusion (k = 60, untuned;
   ties to the semantic order), after the exact and prefix name matches; the rest of the
   word ranking follows. ``select:`` and ``+word`` queries stay lexical, and so does all
   search until every indexed tool has its vector: they are computed off the event loop by
   `SearchIndex.embed_pending`.

Ties break by public name. Scores depend only on the set of indexed tools, never on the
order they were added in. Query forms: plain keywords; ``select:a,b`` returns exactly those
tools (public or raw names) in that order; ``+word`` requires a word (``+github issue``);
the meta-tool also takes ``describe:<namespace>``, every tool of one namespace.
An empty, unmatched or malformed query returns no hits and a `SearchResult.hint`; search
never raises.

Boilerplate: a word in most of one server's tools adds less to its document frequency
(`mcpmount.search._postings` says how much), so a phrase one server repeats does not make
its words look common to the others.

Cost: ``add`` and ``remove`` only record the change; the next search applies it, deriving
only the changed tools (a 20-tool change at 10,000 tools: a few milliseconds; a rebuild of
the index is about a hundred times that). A query then touches only the posting lists of
its words.

Modules: ``_analysis`` (words to terms), ``_synonyms``, ``_fields`` (what of a tool is
read), ``_postings`` (the BM25F statistics, kept incrementally), ``_index``
(`SearchIndex`), ``_names`` (the sorted names, for exact and prefix matches), ``_result``
(`Hit`, `SearchResult`), ``_meta`` (the ``tool_search`` meta-tool), ``_describe`` (its
``describe:<namespace>`` query and ``"format": "python"`` answer), ``_fusion`` (reciprocal
rank fusion). The semantic ranking is its own package, `mcpmount.semantic`, imported only
when an index is given a ``semantic_model`` (it needs numpy and ONNX Runtime).
"""

from mcpmount.search._analysis import STOP_WORDS, Analyzer, stem, tokenize
from mcpmount.search._index import DEFAULT_LIMIT, MAX_LIMIT, SearchIndex
from mcpmount.search._meta import (
    TOOL_SEARCH_NAME,
    ToolSearchCall,
    call_tool_search,
    run_tool_search,
    tool_search_definition,
)
from mcpmount.search._result import Hit, SearchResult
from mcpmount.search._synonyms import SYNONYMS

__all__ = [
    "DEFAULT_LIMIT",
    "MAX_LIMIT",
    "STOP_WORDS",
    "SYNONYMS",
    "TOOL_SEARCH_NAME",
    "Analyzer",
    "Hit",
    "SearchIndex",
    "SearchResult",
    "ToolSearchCall",
    "call_tool_search",
    "run_tool_search",
    "stem",
    "tokenize",
    "tool_search_definition",
]
