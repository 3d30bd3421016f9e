"""The fault catalogue (FAILURE_MODES.md §4) against real servers: one test per fault.

Entries already proved in test_registry.py are not repeated here (P2, P3, P7, P9, P18,
H1 refused, H2 404, H5, the mount-cancel half of P17). Untestable here: P11 (no Docker
daemon); P16 belongs to issue 6. Every test requests ``no_leaks``: after
it, nothing the test spawned is alive and no fd, thread or task is left over.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import shlex
import signal
import socket
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import anyio
import pytest

from http_fixture import build_http_fixture_server, serve_http
from leaks import record_group
from mcpmount.config import HttpServer, RegistryConfig, StdioServer
from mcpmount.errors import (
    CallTimeoutError,
    MountError,
    ServerCrashedError,
    ServerStartError,
    ToolListError,
)
from mcpmount.registry import Registry, open_registry
from mcpmount.transports import _stdio as stdio
from mcpmount.transports import group_members
from servers.http_faults import HangApp, RedirectApp, SessionFaults, StatusApp
from support import FIXTURE, alive, fixture, record_pids, text_of

pytestmark = pytest.mark.usefixtures("no_leaks")


def raw(listing: str, *flags: str, **options: object) -> StdioServer:
    """A stdio spec for the SDK-free fixture whose tools/list result is ``listing``, verbatim."""
    return fixture("--raw", "--list-json", listing, *flags, **options)


def sh(command: str, **options: object) -> StdioServer:
    return StdioServer(command="sh", args=["-c", command], **options)  # pyright: ignore[reportArgumentType]


async def wait_dead(pid: int, within: float) -> None:
    with anyio.fail_after(within):
        while alive(pid):
            await anyio.sleep(0.02)


def read_pids(pidfile: Path) -> dict[str, int]:
    return {
        role: int(pid) for role, pid in (line.split() for line in pidfile.read_text().splitlines())
    }


def tools_json(tools: list[dict[str, object]]) -> str:
    return json.dumps({"tools": tools})


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


# --- P1-P4: starting -----------------------------------------------------------------------


class TestStart:
    async def test_a_command_that_is_not_executable_is_named(self, tmp_path: Path) -> None:
        """P1: a file without the execute bit fails at once, naming the command."""
        script = tmp_path / "server.sh"
        script.write_text("#!/bin/sh\n")
        async with Registry() as registry:
            with pytest.raises(ServerStartError, match="is not executable") as caught:
                await registry.mount("noexec", StdioServer(command=str(script)))
            assert str(script) in str(caught.value)
            assert registry.mounted_tools() == []

    async def test_a_missing_cwd_is_named(self, tmp_path: Path) -> None:
        """P1: a cwd that does not exist is named as the cause, not the command."""
        missing = str(tmp_path / "gone")
        async with Registry() as registry:
            with pytest.raises(ServerStartError, match=r"cwd .* does not exist"):
                await registry.mount("nocwd", fixture(cwd=missing))
            assert registry.status() == []

    async def test_a_silent_server_ignoring_eof_and_sigterm_fails_within_the_bound(self) -> None:
        """P3: never answers, ignores EOF and SIGTERM: startup_timeout plus a bounded reap."""
        async with Registry() as registry:
            began = time.perf_counter()
            with pytest.raises(ServerStartError, match="within 1 s"):
                await registry.mount(
                    "mute", fixture("--no-init", "--ignore-eof", "--ignore-term", startup_timeout=1)
                )
            assert time.perf_counter() - began < 1 + 2 + 2 + 2
            assert registry.mounted_tools() == []

    async def test_a_server_that_never_answers_discover_costs_only_the_startup_timeout(
        self,
    ) -> None:
        """P4: the 10 s discover probe is cut at startup_timeout; legacy mode skips it."""
        async with Registry() as registry:
            began = time.perf_counter()
            with pytest.raises(ServerStartError, match=r"within 1\.5 s"):
                await registry.mount("old", raw("{}", "--no-discover", startup_timeout=1.5))
            assert time.perf_counter() - began < 1.5 + 2
            began = time.perf_counter()
            await registry.mount("legacy", raw('{"tools": []}', "--no-discover", protocol="legacy"))
            record_pids(registry)
            assert time.perf_counter() - began < 1.5


# --- P5, P6, P13, P14: what the server writes -----------------------------------------------


class TestOutput:
    async def test_garbage_lines_on_stdout_are_skipped_with_few_warnings(
        self, caplog: pytest.LogCaptureFixture
    ) -> None:
        """P5: 50 banner lines: the server works; three warnings, not fifty."""
        caplog.set_level(logging.WARNING, logger="mcpmount")
        async with Registry() as registry:
            await registry.mount("chatty", fixture("--garbage", "50"))
            record_pids(registry)
            assert text_of(await registry.call("chatty__echo", {"text": "ok"})) == "ok"
        warnings = [r for r in caplog.records if "non-MCP line" in r.getMessage()]
        assert len(warnings) == 3

    async def test_invalid_utf8_on_stdout_never_hangs(self) -> None:
        """P6: an invalid UTF-8 line is skipped, and calls work."""
        async with Registry() as registry:
            began = time.perf_counter()
            await registry.mount("latin", fixture("--bad-utf8", startup_timeout=10))
            record_pids(registry)
            assert time.perf_counter() - began < 5
            assert text_of(await registry.call("latin__echo", {"text": "ok"})) == "ok"

    async def test_invalid_utf8_inside_an_answer_is_replaced_not_dropped(
        self, tmp_path: Path
    ) -> None:
        """P6: a tool list whose description holds invalid UTF-8 mounts, with U+FFFD."""
        listing = tmp_path / "list.json"
        listing.write_bytes(
            b'{"tools": [{"name": "t", "description": "caf\xe9", '
            b'"inputSchema": {"type": "object"}}]}'
        )
        async with Registry() as registry:
            await registry.mount("latin", raw(str(listing), startup_timeout=3))
            record_pids(registry)
            assert registry.mounted_tools()[0].definition.description == "caf\ufffd"

    @pytest.mark.parametrize("newlines", [True, False], ids=["lines", "one-line"])
    async def test_a_50_mib_stderr_flood_neither_stalls_nor_grows_memory(
        self, newlines: bool
    ) -> None:
        """P13: 50 MiB on stderr: the server starts and answers; memory stays flat."""
        flags = ["--stderr-flood", "50"] + ([] if newlines else ["--flood-no-newlines"])
        rss_before = _rss_kib()
        async with Registry() as registry:
            await registry.mount("loud", fixture(*flags, startup_timeout=20))
            record_pids(registry)
            assert text_of(await registry.call("loud__echo", {"text": "ok"})) == "ok"
        assert _rss_kib() - rss_before < 20_000

    async def test_a_64_mib_line_fails_at_max_message_bytes_fast(self) -> None:
        """P14: one 64 MiB line fails its server quickly; a healthy neighbour still mounts."""
        config = RegistryConfig.from_servers(
            {
                "huge": fixture("--huge-line", "64", required=False),
                "fine": fixture(),
            }
        )
        began = time.perf_counter()
        async with open_registry(config) as registry:
            elapsed = time.perf_counter() - began
            record_pids(registry)
            assert "max_message_bytes" in str(registry.failures["huge"])
            assert text_of(await registry.call("fine__echo", {"text": "ok"})) == "ok"
        assert elapsed < 5  # the failure itself: see the next test

    async def test_a_per_server_max_message_bytes_is_enforced(self) -> None:
        """P14 + limits: max_message_bytes = 1 MiB on one server refuses a 2 MiB line."""
        async with Registry() as registry:
            began = time.perf_counter()
            with pytest.raises(ServerStartError, match=r"max_message_bytes \(1048576 bytes\)"):
                await registry.mount("big", fixture("--huge-line", "2", max_message_bytes=2**20))
            assert time.perf_counter() - began < 2 + 2
            assert registry.status() == []


def _rss_kib() -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    return 0


# --- P8-P10, P12: processes left behind ------------------------------------------------------


class TestReap:
    async def test_a_crash_while_a_helper_holds_stdout_fails_the_call_fast(
        self, tmp_path: Path
    ) -> None:
        """P8: no EOF comes, but the leader's exit fails the call in < 1 s; the helper is swept."""
        pidfile = tmp_path / "pids"
        async with Registry() as registry:
            await registry.mount("forker", fixture("--spawn-helper", "--pidfile", str(pidfile)))
            record_pids(registry)
            helper = read_pids(pidfile)["helper"]
            began = time.perf_counter()
            with pytest.raises(ServerCrashedError, match="exited with code 3"):
                await registry.call("forker__crash", {})
            assert time.perf_counter() - began < 1.5
            await wait_dead(helper, 3)  # swept by the owner, before any close

    async def test_a_helper_with_closed_stdio_dies_on_close(self, tmp_path: Path) -> None:
        """P9: a helper that holds no pipe is swept from the group too."""
        pidfile = tmp_path / "pids"
        flags = ("--spawn-helper", "--helper-close-fds", "--pidfile", str(pidfile))
        async with Registry() as registry:
            close = await registry.mount("forker", fixture(*flags))
            record_pids(registry)
            helper = read_pids(pidfile)["helper"]
            await close()
            await wait_dead(helper, 3)

    @pytest.mark.parametrize(
        "wrap",
        [
            pytest.param("{cmd}", id="direct"),
            pytest.param("{cmd}; true", id="sh-c"),
            pytest.param("sh -c {quoted}; true", id="sh-c-sh-c"),
        ],
    )
    async def test_a_server_ignoring_eof_behind_wrappers_is_reaped(
        self, tmp_path: Path, wrap: str
    ) -> None:
        """P10: ignores EOF, directly or under one or two shells: gone after SIGTERM."""
        pidfile = tmp_path / "pids"
        command = shlex.join([sys.executable, FIXTURE, "--ignore-eof", "--pidfile", str(pidfile)])
        wrapped = wrap.format(cmd=command, quoted=shlex.quote(f"{command}; true"))
        async with Registry() as registry:
            close = await registry.mount("wrapped", sh(wrapped))
            record_pids(registry)
            server = read_pids(pidfile)["server"]
            began = time.perf_counter()
            await close()
            assert time.perf_counter() - began < 2 + 2 + 1
            assert not alive(server)

    async def test_a_server_ignoring_eof_and_sigterm_behind_sh_is_killed(
        self, tmp_path: Path
    ) -> None:
        """P10: sh dies of SIGTERM, the python under it ignores it: SIGKILL to the group."""
        pidfile = tmp_path / "pids"
        command = shlex.join(
            [sys.executable, FIXTURE, "--ignore-eof", "--ignore-term", "--pidfile", str(pidfile)]
        )
        async with Registry() as registry:
            close = await registry.mount("wrapped", sh(f"{command}; true"))
            record_pids(registry)
            pid = registry.status()[0].pid
            assert pid is not None
            server = read_pids(pidfile)["server"]
            began = time.perf_counter()
            await close()
            assert time.perf_counter() - began < 2 + 2 + 2 + 1
            assert not alive(server)
            assert group_members(pid) == []

    async def test_a_helper_that_left_the_group_is_reported_not_silently_kept(
        self, tmp_path: Path, caplog: pytest.LogCaptureFixture
    ) -> None:
        """P12: a setsid helper escapes the group sweep by design; closing warns, naming it."""
        caplog.set_level(logging.WARNING, logger="mcpmount")
        pidfile = tmp_path / "pids"
        flags = (
            "--spawn-helper",
            "--helper-setsid",
            "--helper-close-fds",
            "--pidfile",
            str(pidfile),
        )
        async with Registry() as registry:
            close = await registry.mount("daemon", fixture(*flags))
            record_pids(registry)
            helper = read_pids(pidfile)["helper"]
            record_group(helper)
            await close()
        try:
            assert alive(helper)  # documented: only a cgroup or container would catch it
            assert any(
                f"descendant pid {helper} left the process group" in r.getMessage()
                for r in caplog.records
            )
        finally:
            os.kill(helper, signal.SIGKILL)
            await wait_dead(helper, 3)


# --- P15 and §4.3: untrusted tool lists ------------------------------------------------------


def _nested(levels: int) -> dict[str, object]:
    schema: dict[str, object] = {"type": "object"}
    for _ in range(levels):
        schema = {"type": "object", "properties": {"a": schema}}
    return schema


def _tool(name: str, **fields: object) -> dict[str, object]:
    return {"name": name, "inputSchema": {"type": "object"}} | fields


HOSTILE_LISTS = [
    pytest.param([_tool("a\u0000b")], "SEP-986", id="nul"),
    pytest.param([_tool("evil\u202etxt")], "SEP-986", id="bidi-override"),
    pytest.param([_tool("zero\u200bwidth")], "SEP-986", id="zwsp"),
    pytest.param([_tool("")], "SEP-986", id="empty"),
    pytest.param([_tool("a b/c;rm -rf")], "SEP-986", id="shell"),
    pytest.param([_tool("x" * 300)], "SEP-986", id="300-chars"),
    pytest.param([_tool("a"), _tool("a")], "listed twice", id="duplicate"),
    pytest.param(
        [_tool("a", inputSchema={"type": "string"})], "tools.0.inputSchema", id="non-object"
    ),
    pytest.param([_tool("ok"), {"name": "b"}], "tools.1.inputSchema", id="missing-schema"),
    pytest.param([_tool("a", inputSchema=_nested(40))], "max_schema_depth", id="depth-80"),
    pytest.param([_tool("a", description="d" * 9000)], "max_description_bytes", id="9-kib-desc"),
    pytest.param(
        [_tool("a", inputSchema={"type": "object", "properties": {"x": {"type": "bogus"}}})],
        "not a valid JSON Schema",
        id="bogus-type",
    ),
]


class TestToolLists:
    @pytest.mark.parametrize(("tools", "problem"), HOSTILE_LISTS)
    async def test_a_hostile_tool_list_refuses_the_server(
        self, tools: list[dict[str, object]], problem: str
    ) -> None:
        """§4.3: each hostile list refuses the server, naming it; nothing is registered."""
        async with Registry() as registry:
            with pytest.raises((ToolListError, ServerStartError), match=problem) as caught:
                await registry.mount("hostile", raw(tools_json(tools)))
            assert caught.value.server == "hostile"
            assert registry.mounted_tools() == []

    @pytest.mark.parametrize(
        "listing",
        [
            pytest.param(
                r'{"tools": [{"name": "a\ud800", "inputSchema": {"type": "object"}}]}',
                id="lone-surrogate",
            ),
            pytest.param(tools_json([_tool("a", inputSchema=_nested(100))]), id="depth-200"),
        ],
    )
    async def test_an_unparseable_list_fails_fast_instead_of_hanging(self, listing: str) -> None:
        """§4.3: an answer pydantic drops whole fails at once, saying so, not at the timeout."""
        async with Registry() as registry:
            began = time.perf_counter()
            with pytest.raises(ServerStartError, match="could not parse the server's answer"):
                await registry.mount("odd", raw(listing, startup_timeout=20))
            assert time.perf_counter() - began < 5
            assert registry.mounted_tools() == []

    async def test_ten_thousand_tools_exceed_max_tools(self, tmp_path: Path) -> None:
        """P15: 10,000 tools in one page refuse the server (max_tools = 1000)."""
        listing = tmp_path / "list.json"
        listing.write_text(tools_json([_tool(f"t{i}") for i in range(10_000)]))
        async with Registry() as registry:
            with pytest.raises(ToolListError, match=r"more than 1000 tools \(max_tools\)"):
                await registry.mount("many", raw(str(listing)))
            assert registry.mounted_tools() == []

    async def test_a_per_server_max_tools_overrides_the_registry(self) -> None:
        """P15 + limits: max_tools = 5 on one server refuses 6 tools; another is unaffected."""
        names = json.dumps([f"t{i}" for i in range(6)])
        async with Registry() as registry:
            with pytest.raises(ToolListError, match=r"more than 5 tools"):
                await registry.mount("capped", fixture("--names", names, max_tools=5))
            await registry.mount("open", fixture("--names", names))
            record_pids(registry)
            assert len(registry.mounted_tools()) == 6

    async def test_a_thousand_pages_exceed_max_pages(self, tmp_path: Path) -> None:
        """P15: a list of 1,000 one-tool pages stops at max_pages (100)."""
        names = tmp_path / "names.json"
        names.write_text(json.dumps([f"t{i}" for i in range(1000)]))
        async with Registry() as registry:
            with pytest.raises(ToolListError, match=r"past 100 pages \(max_pages\)"):
                await registry.mount("pages", fixture("--names", str(names), "--page-size", "1"))
            assert registry.mounted_tools() == []

    async def test_a_repeating_cursor_is_detected(self) -> None:
        """P15: a nextCursor that never changes is refused, not followed forever."""
        names = json.dumps(["a", "b"])
        async with Registry() as registry:
            with pytest.raises(ToolListError, match="cursor repeats"):
                await registry.mount(
                    "loop", fixture("--names", names, "--page-size", "1", "--loop-cursor")
                )
            assert registry.mounted_tools() == []


# --- P17-P19: cancellation, closers, the host dying -------------------------------------------


class TestCancel:
    async def test_cancelling_the_host_during_a_call_reaps_everything(
        self, caplog: pytest.LogCaptureFixture
    ) -> None:
        """P17: the host's task group is cancelled mid-call; both servers are reaped cleanly."""
        pids: list[int] = []
        config = RegistryConfig.from_servers({"a": fixture(), "b": fixture()})
        with anyio.move_on_after(5) as outer:
            async with anyio.create_task_group() as host:

                async def agent() -> None:
                    async with open_registry(config) as registry:
                        record_pids(registry)
                        pids.extend(r.pid for r in registry.status() if r.pid is not None)
                        await registry.call("a__sleep", {"seconds": 30})

                host.start_soon(agent)
                with anyio.fail_after(5):
                    while len(pids) < 2:
                        await anyio.sleep(0.02)
                await anyio.sleep(0.2)
                host.cancel_scope.cancel()
        assert not outer.cancelled_caught
        assert all(group_members(pid) == [] for pid in pids)
        assert not [r for r in caplog.records if "different task" in r.getMessage()]

    async def test_cancelling_a_close_still_reaps_the_server(self) -> None:
        """P17: the task closing a stubborn server is cancelled; the reap finishes anyway."""
        async with Registry() as registry:
            close = await registry.mount("stubborn", fixture("--ignore-eof", "--ignore-term"))
            record_pids(registry)
            pid = registry.status()[0].pid
            assert pid is not None
            with anyio.move_on_after(0.3):
                await close()
            with anyio.fail_after(2 + 2 + 2 + 1):
                while group_members(pid):
                    await anyio.sleep(0.05)

    async def test_a_closer_after_the_registry_closed_is_a_no_op(self) -> None:
        """P18: a closer called after the registry closed does nothing and raises nothing."""
        async with Registry() as registry:
            close = await registry.mount("one", fixture())
            record_pids(registry)
            pid = registry.status()[0].pid
        await close()
        await close()
        assert pid is not None
        assert group_members(pid) == []

    async def test_an_eof_respecting_server_exits_when_the_host_is_killed(
        self, tmp_path: Path
    ) -> None:
        """P19: on host SIGKILL an EOF-honouring server exits by itself.

        An EOF-ignoring one may live on (FAILURE_MODES P19, no watchdog): whether it does
        depends on whether it next writes to its now reader-less stderr pipe, so this test
        only reaps it.
        """
        polite, rude = tmp_path / "polite", tmp_path / "rude"
        host = textwrap.dedent(
            f"""
            import os, signal, sys, anyio
            from mcpmount.config import RegistryConfig, StdioServer
            from mcpmount.registry import open_registry
            def spec(*flags):
                return StdioServer(command=sys.executable, args=[{FIXTURE!r}, *flags])
            config = RegistryConfig.from_servers({{
                "polite": spec("--pidfile", {str(polite)!r}),
                "rude": spec("--ignore-eof", "--pidfile", {str(rude)!r}),
            }})
            async def main():
                async with open_registry(config):
                    print("up", flush=True)
                    os.kill(os.getpid(), signal.SIGKILL)
            anyio.run(main)
            """
        )
        proc = await anyio.run_process([sys.executable, "-c", host], check=False)
        assert proc.returncode == -signal.SIGKILL
        assert b"up" in proc.stdout
        polite_pid = read_pids(polite)["server"]
        rude_pid = read_pids(rude)["server"]
        record_group(polite_pid)
        record_group(rude_pid)
        try:
            await wait_dead(polite_pid, 3)
        finally:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(rude_pid, signal.SIGKILL)
            await wait_dead(rude_pid, 3)


# --- H1-H7: streamable HTTP --------------------------------------------------------------------


class TestHttp:
    async def test_a_refused_url_never_shows_its_userinfo_or_query(self) -> None:
        """H1: the error names the URL without the password or the token in the query."""
        url = f"http://alice:hunter2pass@127.0.0.1:{free_port()}/mcp?token=qs-secret-42"
        async with Registry() as registry:
            with pytest.raises(ServerStartError, match="cannot connect") as caught:
                await registry.mount("down", HttpServer(url=url, startup_timeout=5))
        message = str(caught.value)
        assert "hunter2pass" not in message
        assert "qs-secret-42" not in message
        assert "127.0.0.1" in message

    async def test_an_unresolvable_host_fails_within_the_startup_timeout(self) -> None:
        """H1: DNS failure is an error naming the server, bounded by startup_timeout."""
        async with Registry() as registry:
            began = time.perf_counter()
            with pytest.raises(ServerStartError, match="server 'nowhere'"):
                await registry.mount(
                    "nowhere", HttpServer(url="https://mcp.invalid/mcp", startup_timeout=3)
                )
            assert time.perf_counter() - began < 3 + 3.5

    async def test_tls_to_a_plain_http_port_fails_with_a_clear_error(self) -> None:
        """H1: a TLS handshake failure is reported as an HTTP failure, promptly."""
        app = StatusApp(200)
        async with serve_http(app) as url:
            https = url.replace("http://", "https://")
            async with Registry() as registry:
                with pytest.raises(ServerStartError, match=r"cannot connect|HTTP failure"):
                    await registry.mount("tls", HttpServer(url=https, startup_timeout=5))

    @pytest.mark.parametrize(
        ("app", "expected"),
        [
            pytest.param(
                StatusApp(401, b"no", headers=[(b"www-authenticate", b'Bearer realm="mcp"')]),
                "HTTP 401 .* refused the credentials",
                id="401",
            ),
            pytest.param(StatusApp(403, b"forbidden"), "HTTP 403", id="403"),
            pytest.param(StatusApp(500, b"boom"), "HTTP 500", id="500"),
            pytest.param(
                StatusApp(200, b"<html>login</html>", b"text/html; charset=utf-8"),
                "Unexpected content type: text/html",
                id="html-200",
            ),
        ],
    )
    async def test_an_http_error_status_is_kept_not_collapsed(
        self, app: StatusApp, expected: str
    ) -> None:
        """H2: 401, 403, 500 and an HTML page each get their own message, not "internal error"."""
        async with serve_http(app) as url, Registry() as registry:
            with pytest.raises(ServerStartError, match=expected) as caught:
                await registry.mount("web", HttpServer(url=url))
            assert "Server returned an error response" not in str(caught.value)

    async def test_a_server_that_accepts_and_never_answers_fails_at_the_startup_timeout(
        self,
    ) -> None:
        """H3: no answer at all costs startup_timeout (not httpx's 300 s), plus a bounded close."""
        app = HangApp()
        async with serve_http(app) as url:
            async with Registry() as registry:
                began = time.perf_counter()
                with pytest.raises(ServerStartError, match="within 1 s"):
                    await registry.mount("mute", HttpServer(url=url, startup_timeout=1))
                assert time.perf_counter() - began < 1 + 3.5
            app.release()

    async def test_a_stalled_http_call_fails_at_the_call_timeout(self, http_server: str) -> None:
        """H3: a call whose answer never comes fails at its timeout; the server stays usable."""
        async with Registry() as registry:
            await registry.mount("web", HttpServer(url=http_server))
            with pytest.raises(CallTimeoutError):
                await registry.call("web__sleep", {"seconds": 30}, timeout=0.5)
            assert text_of(await registry.call("web__echo", {"text": "ok"})) == "ok"

    async def test_an_expired_session_is_re_initialized_once(self) -> None:
        """H4: a 404 for the session id re-initializes once and the call succeeds."""
        app = SessionFaults(build_http_fixture_server().streamable_http_app())
        async with serve_http(app) as url, Registry() as registry:
            await registry.mount("web", HttpServer(url=url, protocol="legacy"))
            assert text_of(await registry.call("web__echo", {"text": "one"})) == "one"
            app.expire()
            assert text_of(await registry.call("web__echo", {"text": "two"})) == "two"
            assert text_of(await registry.call("web__echo", {"text": "three"})) == "three"
            assert app.initializes == 2

    async def test_a_session_that_cannot_be_renewed_reports_session_expired(self) -> None:
        """H4: if re-initializing fails, the call fails saying the session expired."""
        app = SessionFaults(build_http_fixture_server().streamable_http_app())
        async with serve_http(app) as url, Registry() as registry:
            await registry.mount("web", HttpServer(url=url, protocol="legacy"))
            app.expire()
            app.refuse_initialize = True
            with pytest.raises(Exception, match="session expired") as caught:
                await registry.call("web__echo", {"text": "x"})
            assert "server 'web'" in str(caught.value)
            assert app.initializes == 2

    async def test_a_cross_origin_redirect_is_refused_and_named(self) -> None:
        """H6: a 307 to another origin is not followed; the error names the location."""
        target = StatusApp(200, b"{}", b"application/json")
        async with (
            serve_http(target) as other,
            serve_http(RedirectApp(other)) as url,
            Registry() as registry,
        ):
            with pytest.raises(ServerStartError, match="not followed") as caught:
                await registry.mount("moved", HttpServer(url=url))
            assert other in str(caught.value)
        assert target.requests == 0

    @pytest.mark.parametrize("delete", ["405", "hang"])
    async def test_a_refused_or_hanging_delete_keeps_close_bounded(self, delete: str) -> None:
        """H7: DELETE answering 405 or never answering: close still returns within 3.5 s."""
        app = SessionFaults(build_http_fixture_server().streamable_http_app())
        app.delete = delete
        async with serve_http(app) as url:
            async with Registry() as registry:
                close = await registry.mount("web", HttpServer(url=url, protocol="legacy"))
                began = time.perf_counter()
                await close()
                assert time.perf_counter() - began < 3.5
            app.release()


# --- P7 isolation with three servers ------------------------------------------------------------


async def test_a_failing_server_among_three_leaves_the_healthy_calls_running() -> None:
    """Isolation: two healthy servers keep a slow call going while a third fails to mount."""
    async with Registry() as registry:
        await registry.mount("a", fixture())
        await registry.mount("b", fixture())
        record_pids(registry)
        done: list[str] = []

        async def slow(name: str) -> None:
            done.append(text_of(await registry.call(name, {"seconds": 1.0})))

        async with anyio.create_task_group() as tg:
            tg.start_soon(slow, "a__sleep")
            tg.start_soon(slow, "b__sleep")
            with pytest.raises(MountError):
                await registry.mount_all({"bad": fixture("--crash-on-start")})
        assert len(done) == 2
        assert text_of(await registry.call("b__echo", {"text": "up"})) == "up"


def test_the_fixture_server_documents_every_flag() -> None:
    """The fault server's --help runs without the SDK and lists the fault flags."""
    out = subprocess.run(
        [sys.executable, FIXTURE, "--help"], capture_output=True, text=True, check=True
    ).stdout
    for flag in ("--raw", "--no-discover", "--echo-env", "--huge-line", "--helper-setsid"):
        assert flag in out


async def test_a_server_that_stops_reading_its_stdin_is_dropped_not_waited_on(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A write that blocks past the stall bound ends the session; calls fail, naming why."""
    monkeypatch.setattr(stdio, "_STDIN_STALL", 1.0)
    tools = (
        '{"tools": [{"name": "freeze", "inputSchema": {"type": "object"}}, '
        '{"name": "take", "inputSchema": {"type": "object"}}]}'
    )
    async with Registry() as registry:
        await registry.mount("frozen", fixture("--raw", "--list-json", tools))
        record_pids(registry)

        async def frozen_call() -> None:
            with pytest.raises(ServerCrashedError, match="stopped reading its stdin"):
                await registry.call("frozen__freeze", {"seconds": 30})

        async with anyio.create_task_group() as tg:
            tg.start_soon(frozen_call)
            await anyio.sleep(0.3)  # the server now sleeps and reads nothing
            began = time.perf_counter()
            with pytest.raises(ServerCrashedError, match="stopped reading its stdin"):
                await registry.call("frozen__take", {"blob": "x" * 1_000_000}, timeout=60)
            assert time.perf_counter() - began < 5
