"""The task of ``code_mode.py``: its data, the model's prompt, lookups and program.

A folder holds one note per service (owner, status, dependencies and a long request log).
The model records each service in the memory graph (an entity with its owner and status, a
``depends_on`` relation per dependency), asks the graph for the degraded services, and
answers with who owns each and what depends on it. The notes are the task's data, written
before it starts; the servers are the real ``server-filesystem`` and ``server-memory``.
"""

from __future__ import annotations

import random
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any, cast

from mcpmount.adapters import JSONObject
from mcpmount.config import StdioServer

NPM_BIN = Path(__file__).resolve().parents[1] / "servers" / "npm" / "node_modules" / ".bin"

SEARCHES = (
    {"query": "list a directory and read many files", "limit": 3},
    {"query": "knowledge graph: create entities and relations, search nodes", "limit": 3},
)
"""The model's two lookups (search and code ways alike), sent in one turn."""
USED = (
    "fs__list_directory",
    "fs__read_multiple_files",
    "memory__create_entities",
    "memory__create_relations",
    "memory__search_nodes",
)
"""The tools the task calls, which the lookups must find."""
PROMPT = (
    "The folder {notes} holds one note per service. Record every service in the memory "
    "graph: an entity of type service with its owner and status as observations, and a "
    "depends_on relation for each dependency. Then ask the graph which services are "
    "degraded and answer with a short summary: who owns each, and what depends on it."
)

# What the model's program parses and prints with. The scripted model of the listed and
# search ways reads the same results with the same functions (exec'd below), so the three
# ways must reach the same answer.
HELPERS = """
def parse(bundle):
    services, name = {}, None
    for line in bundle.splitlines():
        if line.startswith("# "):
            name = line[2:].strip()
            services[name] = {"deps": []}
        elif name and ": " in line:
            key, value = line.split(": ", 1)
            if key in ("owner", "status"):
                services[name][key] = value
            elif key == "depends_on":
                services[name]["deps"] = [d for d in value.split(", ") if d]
    return services


def entities(services):
    return [{"name": n, "entityType": "service",
             "observations": ["owner: " + s["owner"], "status: " + s["status"]]}
            for n, s in services.items()]


def relations(services):
    return [{"from": n, "to": d, "relationType": "depends_on"}
            for n, s in services.items() for d in s["deps"]]


def summary(graph, total):
    lines = [f"{len(graph['entities'])} of {total} services are degraded:"]
    for e in graph["entities"]:
        owner = next(o[7:] for o in e["observations"] if o.startswith("owner: "))
        users = sorted(r["from"] for r in graph["relations"]
                       if r["to"] == e["name"] and r["relationType"] == "depends_on")
        lines.append(f"- {e['name']} ({owner}), needed by: {', '.join(users) or 'none'}")
    return "\\n".join(lines)
"""
PROGRAM = (
    HELPERS
    + """
from tools import fs, memory

NOTES = "<notes>"
listing = fs.list_directory(path=NOTES)["content"].splitlines()
files = [NOTES + "/" + line[7:] for line in listing if line.startswith("[FILE] ")]
services = parse(fs.read_multiple_files(paths=files)["content"])
memory.create_entities(entities=entities(services))
memory.create_relations(relations=relations(services))
print(summary(memory.search_nodes(query="status: degraded"), len(services)))
"""
)
_helpers: dict[str, Any] = {}
exec(HELPERS, _helpers)
parse = cast("Callable[[str], dict[str, Any]]", _helpers["parse"])
entities = cast("Callable[[dict[str, Any]], list[JSONObject]]", _helpers["entities"])
relations = cast("Callable[[dict[str, Any]], list[JSONObject]]", _helpers["relations"])
summary = cast("Callable[[Any, int], str]", _helpers["summary"])


def write_notes(folder: Path, services: int, log_lines: int) -> None:
    """The task's data: ``services`` notes, a tenth degraded, each with a request log."""
    rng = random.Random(42)
    methods, codes = ("GET", "GET", "GET", "POST", "PUT"), (200, 200, 200, 201, 404, 503)
    for i in range(services):
        deps = sorted(rng.sample(range(i), min(i, rng.randint(1, 3))))
        status = "degraded" if i % 10 == 3 else "healthy"
        lines = [f"# svc-{i:03d}", f"owner: team-{i % 7}", f"status: {status}"]
        lines += [f"depends_on: {', '.join(f'svc-{d:03d}' for d in deps)}", "", "## requests"]
        lines += [
            f"2026-12-0{rng.randint(1, 6)}T{rng.randint(0, 23):02d}:{rng.randint(0, 59):02d}Z "
            f"{rng.choice(methods)} /api/items/{rng.randint(1, 9999)} {rng.choice(codes)} "
            f"{rng.randint(2, 900)}ms"
            for _ in range(log_lines)
        ]
        (folder / f"svc-{i:03d}.md").write_text("\n".join(lines) + "\n")


def servers(notes: Path, memory_file: Path) -> dict[str, StdioServer]:
    """The two real servers: the notes' folder, and a memory graph of this way's own."""
    for program in ("mcp-server-filesystem", "mcp-server-memory"):
        if not (NPM_BIN / program).exists():
            sys.exit(f"{program} is missing: npm ci --prefix tests/servers/npm")
    return {
        "fs": StdioServer(command=str(NPM_BIN / "mcp-server-filesystem"), args=[str(notes)]),
        "memory": StdioServer.model_validate(
            {
                "command": str(NPM_BIN / "mcp-server-memory"),
                "env": {"MEMORY_FILE_PATH": str(memory_file)},
            }
        ),
    }
