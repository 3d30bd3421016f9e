"""What code mode saves a model: tokens read and round trips, against listing or searching.

One scripted task runs on the real ``server-filesystem`` and ``server-memory`` (pinned in
``tests/servers/npm``), three ways, each through its own real ``Registry`` and the OpenAI
adapter (whose definition text is what the model API receives):

1. listed: every tool's definition in every turn (``defer_all`` off);
2. search: ``tool_search`` alone in the manifest; the model searches, and the found
   definitions come back as JSON (and are in the tools of later turns, as the adapter does);
3. code: ``tool_search`` and ``run_code``; the model looks the tools up as Python
   signatures, then sends one program, whose printed output is all it reads back.

The task (``code_mode_task.py``): read a folder of service notes, each with a long request
log, build a memory graph of the services and their dependencies, ask the graph which are
degraded, and summarise. The notes are written before it starts and not counted; the
lookups, calls, their results and the answer are.

A model re-reads its whole context every turn, so two sums are printed: the new tokens
(each definition, message and result once) and the context read (definitions plus history,
summed over the turns). A turn holds the calls that need no result of another in it (the
two searches; the entities and relations), which favours the listed and search ways.
Tokens are o200k (``bpe-openai`` ships the vocabulary; ``tiktoken`` would download it),
3 more per message for the chat format's framing. The three ways must reach the same answer.

Then the start-up of a code run: from ``Registry.run_code`` until the program's first tool
call reaches the registry (and, from the runner's ``run_code`` alone, ``CodeRun.startup``),
median and p90 over ``--startup-runs``; the exit status is 1 when the first median is over
``--max-startup-ms``.

    python tests/bench/code_mode.py                 # about 15 s on 2 cores
    python tests/bench/code_mode.py --services 200 --json
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import sys
import tempfile
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio
import bpe_openai  # pyright: ignore[reportMissingTypeStubs]: ships no stubs
import mcp_types
from code_mode_task import (
    PROGRAM,
    PROMPT,
    SEARCHES,
    USED,
    entities,
    parse,
    relations,
    servers,
    summary,
    write_notes,
)

from mcpmount.adapters import JSONObject, OpenAIAdapter
from mcpmount.codemode import run_code
from mcpmount.config import RegistrySettings
from mcpmount.handlers import Interceptor, ToolCall
from mcpmount.registry import Registry

FRAMING = 3
"""Tokens each chat message costs beyond its text (OpenAI's count for its chat format)."""
PIECE = 50_000
"""Characters the tokenizer is given at once (far under its 200,000-token limit)."""
DEADLINE = 600.0
"""Seconds the whole benchmark may take before it is stopped."""


class Tokens:
    """Counts o200k tokens; the vocabulary ships inside ``bpe-openai``, nothing downloads."""

    def __init__(self) -> None:
        self._encoding = bpe_openai.get_encoding("o200k_base")

    def __call__(self, text: str) -> int:
        """Tokens of ``text``, encoded in pieces cut after a newline: the encoder refuses
        over 200,000 tokens at once (a piece boundary may shift a token or two)."""
        count, start = 0, 0
        while start < len(text):
            end = start + PIECE
            if end < len(text):
                end = text.rfind("\n", start, end) + 1 or end
            count += len(self._encoding.encode(text[start:end], disallowed_special=()))
            start = end
        return count


@dataclass
class Way:
    """One way's conversation, counted turn by turn."""

    name: str
    tokens: Tokens = field(repr=False)
    history: int = 0
    """Tokens of the messages so far."""
    definitions: int = 0
    """Tokens of the tool definitions in the latest turn."""
    read: int = 0
    """Context tokens read, summed over the turns (definitions plus history each turn)."""
    written: int = 0
    """Tokens the model wrote: its calls' names and arguments, its program, its answer."""
    results: int = 0
    """Tokens of the tool results the model read back."""
    round_trips: int = 0
    calls: int = 0
    answer: str = ""
    per_turn: list[tuple[int, int]] = field(default_factory=list[tuple[int, int]])
    """Each turn's (definitions, history) tokens: what it read."""

    def turn(self, tools: Sequence[JSONObject]) -> None:
        """The model reads its whole context once more."""
        self.definitions = self.tokens(json.dumps(tools, ensure_ascii=False))
        self.read += self.definitions + self.history
        self.per_turn.append((self.definitions, self.history))
        self.round_trips += 1

    def message(self, text: str, *, by_model: bool) -> None:
        count = self.tokens(text) + FRAMING
        self.history += count
        if by_model:
            self.written += count
        else:
            self.results += count

    @property
    def new(self) -> int:
        """Each definition, message and result once (the definitions only grow)."""
        return self.definitions + self.history

    def row(self) -> dict[str, Any]:
        counts = ("round_trips", "calls", "definitions", "written", "results", "new", "read")
        return {name: getattr(self, name) for name in counts} | {
            "per_turn": [{"definitions": d, "history": h} for d, h in self.per_turn],
            "answer": self.answer,
        }


async def call_turn(
    way: Way, adapter: OpenAIAdapter, calls: Sequence[tuple[str, Any]]
) -> list[str]:
    """One round trip: the model reads its context and sends ``calls`` (name, arguments)
    at once; returns the results' text, as the adapter hands them to the model."""
    way.turn(adapter.tools())
    answers: list[str] = []
    for name, arguments in calls:
        text = json.dumps(arguments, ensure_ascii=False)
        way.message(name + text, by_model=True)
        way.calls += 1
        function = {"name": name, "arguments": text}
        message = await adapter.run(
            {"id": f"c{way.calls}", "type": "function", "function": function}
        )
        content = str(message["content"])
        if content.startswith("Error: "):
            raise RuntimeError(f"{way.name}: {name} failed: {content}")
        way.message(content, by_model=False)
        answers.append(content)
    return answers


def final_turn(way: Way, adapter: OpenAIAdapter, answer: str) -> None:
    way.turn(adapter.tools())
    way.message(answer, by_model=True)
    way.answer = answer


async def search_turn(way: Way, adapter: OpenAIAdapter, **extra: str) -> None:
    """The model's lookups, in one turn; checks that they found every tool the task uses."""
    found = await call_turn(way, adapter, [("tool_search", s | extra) for s in SEARCHES])
    shown = "\n".join(found)
    missing = [name for name in USED if not _shows(shown, name, extra.get("format"))]
    if missing:
        raise RuntimeError(f"{way.name}: the searches did not show {missing}:\n{shown[:600]}")


def _shows(found: str, name: str, form: str | None) -> bool:
    """Whether a lookup's text shows tool ``name``: its JSON name, or its Python function."""
    return f"def {name.split('__')[1]}(" in found if form == "python" else f'"{name}"' in found


async def by_tools(way: Way, registry: Registry, notes: Path, searched: bool) -> None:
    """The listed and search ways: the model calls the tools itself, reading each result."""
    adapter = OpenAIAdapter(registry)
    way.message(PROMPT.format(notes=notes), by_model=False)
    if searched:
        await search_turn(way, adapter)
    (listing,) = await call_turn(way, adapter, [("fs__list_directory", {"path": str(notes)})])
    lines = listing.splitlines()
    files = [f"{notes}/{line[7:]}" for line in lines if line.startswith("[FILE] ")]
    (bundle,) = await call_turn(way, adapter, [("fs__read_multiple_files", {"paths": files})])
    services = parse(bundle)
    writes = [
        ("memory__create_entities", {"entities": entities(services)}),
        ("memory__create_relations", {"relations": relations(services)}),
    ]
    await call_turn(way, adapter, writes)
    query = {"query": "status: degraded"}
    (graph,) = await call_turn(way, adapter, [("memory__search_nodes", query)])
    final_turn(way, adapter, summary(json.loads(graph), len(services)))


async def by_code(way: Way, registry: Registry, notes: Path) -> None:
    """The code way: look the tools up as Python, send one program, answer with its output."""
    adapter = OpenAIAdapter(registry)
    way.message(PROMPT.format(notes=notes), by_model=False)
    await search_turn(way, adapter, format="python")
    program = PROGRAM.replace('"<notes>"', repr(str(notes)))
    (output,) = await call_turn(way, adapter, [("run_code", {"code": program})])
    final_turn(way, adapter, output.strip())


def settings(way: str) -> RegistrySettings:
    """Listed: every tool in the manifest; search: deferred; code: deferred, plus run_code."""
    table: dict[str, Any] = {"defer_all": way != "listed"}
    if way == "code":
        table["code_mode"] = {"enabled": True}
    return RegistrySettings.model_validate(table)


async def run_way(name: str, tokens: Tokens, folder: Path, notes: Path) -> Way:
    way = Way(name, tokens)
    async with Registry(settings(name)) as registry:
        await registry.mount_all(servers(notes, folder / f"memory-{name}.jsonl"))
        if name == "code":
            await by_code(way, registry, notes)
        else:
            await by_tools(way, registry, notes, searched=name == "search")
    return way


def quantiles(values: Sequence[float]) -> tuple[float, float]:
    """Median and p90, in milliseconds."""
    ordered = sorted(values)
    p90 = ordered[min(len(ordered) - 1, round(0.9 * (len(ordered) - 1)))]
    return statistics.median(ordered) * 1000, p90 * 1000


async def startup(folder: Path, notes: Path, runs: int) -> dict[str, float]:
    """Start-up of a code run, ``runs`` times each way after one warm-up, alternating which
    goes first: ``Registry.run_code`` until the program's first call reaches the registry
    (an interceptor's clock), and the runner's ``run_code`` alone (its ``CodeRun.startup``,
    and when the first call reaches its caller)."""
    program = "from tools import fs\nfs.list_allowed_directories()\n"
    times: dict[str, list[float]] = {"first_call": [], "startup": [], "runner_first_call": []}
    arrived: list[float] = []

    async def clock(call: ToolCall) -> None:
        arrived.append(time.perf_counter())

    async with Registry(settings("code"), interceptors=[Interceptor(clock)]) as registry:
        await registry.mount_all(servers(notes, folder / "memory-startup.jsonl"))
        tools = [registry.definition(tool.name) for tool in registry.mounted_tools()]

        async def caller(name: str, arguments: dict[str, Any]) -> mcp_types.CallToolResult:
            return await registry.call(name, arguments)

        async def through_registry() -> dict[str, float]:
            began = time.perf_counter()
            result = await registry.run_code(program)
            _check(result, arrived)
            return {"first_call": arrived[0] - began}

        async def runner_alone() -> dict[str, float]:
            began = time.perf_counter()
            done = await run_code(program, tools, caller)
            _check(done.result, arrived)
            return {"startup": done.startup, "runner_first_call": arrived[0] - began}

        for i in range(runs + 1):
            for run in (through_registry, runner_alone)[:: 1 if i % 2 else -1]:
                arrived.clear()
                measured = await run()
                for name, seconds in measured.items():
                    if i:  # the first runs warm the page cache
                        times[name].append(seconds)
    figures: dict[str, float] = {"runs": runs}
    for name, values in times.items():
        figures[f"{name}_median_ms"], figures[f"{name}_p90_ms"] = quantiles(values)
    return figures | {"load_average": os.getloadavg()[0]}


def _check(result: mcp_types.CallToolResult, arrived: list[float]) -> None:
    if result.is_error or not arrived:
        raise RuntimeError(f"the start-up program failed: {result.content}")


def ratio(a: int, b: int) -> float:
    return round(a / b, 1) if b else float("inf")


def report(ways: Mapping[str, Way], start: Mapping[str, float], limit_ms: float) -> None:
    print(f"# {platform.platform()}, {os.cpu_count()} cores, o200k tokens (bpe-openai)")
    print(
        f"{'way':<7}{'trips':>6}{'calls':>6}{'defs':>8}{'written':>9}{'results':>9}"
        f"{'new':>9}{'read':>10}"
    )
    for way in ways.values():
        print(
            f"{way.name:<7}{way.round_trips:>6}{way.calls:>6}{way.definitions:>8}"
            f"{way.written:>9}{way.results:>9}{way.new:>9}{way.read:>10}"
        )
    print(
        "(defs: definitions in the last turn; written: the model's calls, program and answer; "
        "results: what came back; new: all of it once; read: the context, summed per turn)"
    )
    code = ways["code"]
    for other in ("listed", "search"):
        way = ways[other]
        print(
            f"{other}/code: new {ratio(way.new, code.new)}x, read "
            f"{ratio(way.read, code.read)}x, round trips {way.round_trips}/{code.round_trips}"
        )
    verdict = "within" if start["first_call_median_ms"] <= limit_ms else "OVER"
    print(
        f"start-up, Registry.run_code to the first call: median "
        f"{start['first_call_median_ms']:.1f} ms, p90 {start['first_call_p90_ms']:.1f} ms "
        f"({verdict} {limit_ms:g} ms); the runner alone: CodeRun.startup median "
        f"{start['startup_median_ms']:.1f} ms, p90 {start['startup_p90_ms']:.1f} ms, first call "
        f"median {start['runner_first_call_median_ms']:.1f} ms; {start['runs']:g} runs each, "
        f"load average {start['load_average']:.2f}"
    )


async def main(args: argparse.Namespace) -> int:
    tokens = Tokens()
    with (
        tempfile.TemporaryDirectory(prefix="mcpmount-bench-") as scratch,
        anyio.fail_after(DEADLINE),
    ):
        folder = Path(scratch)
        notes = folder / "notes"
        notes.mkdir()
        write_notes(notes, args.services, args.log_lines)
        ways = {
            name: await run_way(name, tokens, folder, notes)
            for name in ("listed", "search", "code")
        }
        answers = {way.answer for way in ways.values()}
        if len(answers) != 1:
            raise RuntimeError(f"the ways answered differently: {answers}")
        start = await startup(folder, notes, args.startup_runs)
    limit = args.max_startup_ms
    within = start["first_call_median_ms"] <= limit
    if args.json:
        print(
            json.dumps(
                {
                    "services": args.services,
                    "log_lines": args.log_lines,
                    "ways": {name: way.row() for name, way in ways.items()},
                    "ratios": {
                        f"{other}/code": {
                            "new": ratio(ways[other].new, ways["code"].new),
                            "read": ratio(ways[other].read, ways["code"].read),
                        }
                        for other in ("listed", "search")
                    },
                    "startup": start | {"max_ms": limit, "within": within},
                },
                indent=2,
            )
        )
    else:
        report(ways, start, limit)
    return 0 if within else 1


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description="What code mode saves a model, and its start.")
    parser.add_argument("--services", type=int, default=50, help="notes in the folder")
    parser.add_argument("--log-lines", type=int, default=40, help="request log lines per note")
    parser.add_argument("--startup-runs", type=int, default=30, help="code runs timed")
    parser.add_argument("--max-startup-ms", type=float, default=150.0, help="median allowed")
    parser.add_argument("--json", action="store_true", help="print JSON, not a table")
    options = parser.parse_args()
    if not 1 <= options.services <= 1000 or not 1 <= options.startup_runs <= 1000:
        parser.error("--services and --startup-runs take 1 to 1000")
    if not 0 <= options.log_lines <= 1000:
        parser.error("--log-lines takes 0 to 1000")
    sys.exit(anyio.run(main, options))
