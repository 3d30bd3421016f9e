"""``mcpmount search`` with a ``semantic_model`` ranks as the library does once its tool
vectors are ready: it waits for them (found in the vector cache, or computed), showing on
a terminal how many are left, and a model that cannot load leaves the word ranking."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from cli.cli_support import mcpmount, terminal
from leaks import record_group
from mcpmount.config import RegistrySettings
from mcpmount.registry import Registry
from support import fixture, fixture_server, write_config

pytestmark = [pytest.mark.slow, pytest.mark.usefixtures("no_leaks")]

QUERY = "calculate a total"
"""No word of it is in any fixture tool's text; by meaning it is ``add``'s."""

SEMANTIC = '[registry]\nsemantic_model = "minilm-int8"\n\n'


@pytest.fixture(autouse=True)
def _quiet_onnx(monkeypatch: pytest.MonkeyPatch) -> None:
    # ONNX Runtime keeps a usage database open for the life of the process unless this is
    # set when it first loads a model (here and in every mcpmount the test runs).
    monkeypatch.setenv("ORT_DISABLE_TELEMETRY", "1")


def hits(*args: str) -> list[tuple[str, float]]:
    """The names and scores ``mcpmount search ARGS --json`` prints (it must exit 0)."""
    done = mcpmount("search", *args, "--json")
    assert done.returncode == 0, done.stderr
    return [(hit["name"], hit["score"]) for hit in json.loads(done.stdout)["hits"]]


def vectors_of(cache: Path) -> Path:
    """The vector cache of an ``mcpmount`` whose ``XDG_CACHE_HOME`` is ``cache``."""
    return cache / "mcpmount" / "vectors"


async def library_hits(
    query: str, monkeypatch: pytest.MonkeyPatch, cache: Path, int8_graph: Callable[[Path], Path]
) -> list[tuple[str, float]]:
    """What `Registry.search` ranks, ready, for the same server (vectors of its own)."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(cache))
    int8_graph(vectors_of(cache))
    async with Registry(RegistrySettings(semantic_model="minilm-int8")) as registry:
        await registry.mount("calc", fixture())
        for row in registry.status():
            if row.pid is not None:
                record_group(row.pid)
        await registry.wait_search_ready()
        found = registry.search(query, 5)
    return [(hit.tool.name, round(hit.score, 4)) for hit in found.hits]


async def test_search_ranks_by_meaning_as_the_library_does_and_then_from_cached_vectors(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, int8_graph: Callable[[Path], Path]
) -> None:
    """The paraphrase finds ``add`` first, exactly as the ready library ranks it, where the
    word ranking finds nothing; the next run reads the vectors the first one kept, and
    computes none (the append-only vector file does not grow). ``call tool_search`` waits
    for them too."""
    (tmp_path / "words").mkdir()
    words = hits(QUERY, write_config(tmp_path / "words", fixture_server("calc")))
    config = write_config(tmp_path, SEMANTIC + fixture_server("calc"))
    int8_graph(vectors_of(tmp_path / "cache"))  # the model loads; its build is tested apart
    first = hits(QUERY, config)
    assert [name for name, _ in first][:1] == ["calc__add"]
    assert first != words
    (vectors,) = vectors_of(tmp_path / "cache").glob("*.vectors")
    kept = vectors.stat().st_size
    assert hits(QUERY, config) == first
    assert vectors.stat().st_size == kept  # nothing computed again, nothing appended
    assert await library_hits(QUERY, monkeypatch, tmp_path / "library", int8_graph) == first
    called = mcpmount("call", "tool_search", json.dumps({"query": QUERY}), config, "--json")
    assert called.returncode == 0, called.stderr
    assert json.loads(called.stdout)["structuredContent"]["tools"][0]["name"] == "calc__add"


def test_a_terminal_is_shown_the_tool_vectors_and_a_pipe_nothing(
    tmp_path: Path, int8_graph: Callable[[Path], Path]
) -> None:
    """While the vectors are found or computed, stderr's bar counts them; off a terminal
    stderr stays empty and stdout holds only the result."""
    config = write_config(tmp_path, SEMANTIC + fixture_server("calc"))
    int8_graph(vectors_of(tmp_path / "cache"))
    code, shown = terminal("search", QUERY, config)
    assert code == 0, shown
    assert "search by meaning: minilm-int8" in shown
    assert "tool vectors" in shown
    assert "calc__add" in shown
    piped = mcpmount("search", QUERY, config, "--json")
    assert (piped.returncode, piped.stderr) == (0, ""), piped.stderr
    assert json.loads(piped.stdout)["hits"][0]["name"] == "calc__add"


def test_a_model_that_cannot_load_is_said_once_and_the_words_rank(tmp_path: Path) -> None:
    """A broken model file: one warning naming it, exit 0, and the word ranking."""
    bogus = tmp_path / "model.onnx"
    bogus.write_bytes(b"not a model at all" * 100)
    (tmp_path / "words").mkdir()
    words = mcpmount("search", "echo", write_config(tmp_path / "words", fixture_server("calc")))
    broken = f'[registry]\nsemantic_model = "{bogus}"\n\n'
    done = mcpmount("search", "echo", write_config(tmp_path, broken + fixture_server("calc")))
    assert (done.returncode, done.stdout) == (0, words.stdout), done.stderr
    said = " ".join(done.stderr.split())
    assert said.count("semantic search is off") == 1, done.stderr
    assert "not an ONNX model" in said
