"""A program's calls reach the caller's real call path; its prints and errors come back."""

from __future__ import annotations

import ast
import textwrap
from pathlib import Path
from typing import Any

import anyio
import mcp_types
import pytest
from codemode_support import LIMITS, run

from mcpmount.codemode import CodeLimits, SandboxUnavailableError, code_sandbox_problem, run_code
from mcpmount.config import RegistryConfig
from mcpmount.registry import open_registry
from mcpmount.sandbox import SYSTEM_DIRS, python_paths
from support import fixture, record_pids, text_of

pytestmark = [pytest.mark.anyio, pytest.mark.usefixtures("no_leaks", "code_sandbox")]

SYSTEM_TOP = {path.strip("/").split("/")[0] for path in SYSTEM_DIRS}
"""The top folders of the system folders a sandbox shows read-only."""

SUMMARY = textwrap.dedent(
    """
    from tools import one, two

    def value(result):  # {"result": ...} where a server wraps what it returns
        return result["result"] if isinstance(result, dict) else result

    said = value(one.echo(text="hello"))
    total = value(two.add(a=2, b=3))
    again = value(two.echo(text=said + "!"))
    print(f"{said} {total} {again}")
    """
)


async def test_a_program_calls_real_tools_through_the_registry_and_prints() -> None:
    """Three calls over two real servers, through `Registry.call`; the print is the result."""
    config = RegistryConfig.from_servers({"one": fixture(), "two": fixture()})
    async with open_registry(config) as registry:
        record_pids(registry)
        done = await run_code(SUMMARY, registry.tools(), registry.call, limits=LIMITS)
    assert text_of(done.result) == "hello 5 hello!\n"
    assert not done.result.is_error
    assert done.calls == 3
    assert 0 < done.startup < 10  # never hangs; the 150 ms claim is the benchmark's


@pytest.mark.slow
async def test_a_tool_error_is_the_models_traceback_only() -> None:
    """An uncaught `ToolError` shows the program's and ``tools``' frames, none of mcpmount's."""
    config = RegistryConfig.from_servers({"one": fixture()})
    source = "from tools import one\nprint('before')\n\n"
    source += "def go():\n    one.fail(message='boom')\n\ngo()\n"
    async with open_registry(config) as registry:
        record_pids(registry)
        done = await run_code(source, registry.tools(), registry.call, limits=LIMITS)
    text = text_of(done.result)
    assert done.result.is_error
    assert text.startswith("before\nTraceback (most recent call last):\n")
    assert 'File "<program>", line 7, in <module>' in text
    assert 'File "<program>", line 5, in go' in text
    assert text.rstrip().endswith("boom")
    assert "ToolError" in text
    for foreign in ("mcpmount", "_child", "<string>", "_mcpmount_code", "site-packages"):
        assert foreign not in text


@pytest.mark.slow
async def test_the_call_after_max_calls_is_refused_inside_the_program() -> None:
    """Past ``max_calls`` a call raises in the program, naming the key; it is never made."""
    made: list[str] = []

    async def call(name: str, arguments: dict[str, Any]) -> mcp_types.CallToolResult:
        made.append(name)
        return mcp_types.CallToolResult(content=[mcp_types.TextContent(type="text", text="ok")])

    tools = [mcp_types.Tool(name="ns__ping", input_schema={"type": "object"})]
    source = textwrap.dedent(
        """
        from tools import ns, ToolError
        for i in range(3):
            try:
                print(ns.ping())
            except ToolError as exc:
                print("refused:", exc)
        """
    )
    limits = CodeLimits(timeout=LIMITS.timeout, memory_bytes=LIMITS.memory_bytes, max_calls=2)
    done = await run_code(source, tools, call, limits=limits)
    assert made == ["ns__ping", "ns__ping"]
    assert done.calls == 2
    lines = text_of(done.result).splitlines()
    assert lines[:2] == ["ok", "ok"]
    assert lines[2].startswith("refused: ns__ping: refused")
    assert "[registry.code_mode] max_calls" in lines[2]


@pytest.mark.slow
async def test_a_cancelled_run_kills_and_reaps_its_sandbox() -> None:
    """The caller cancelled mid-call: the sandbox is gone, nothing leaks (no_leaks)."""
    called = anyio.Event()

    async def call(name: str, arguments: dict[str, Any]) -> mcp_types.CallToolResult:
        called.set()
        await anyio.sleep_forever()
        raise AssertionError("unreachable")

    tools = [mcp_types.Tool(name="ns__hang", input_schema={"type": "object"})]
    async with anyio.create_task_group() as tg:
        tg.start_soon(run_code, "from tools import ns\nns.hang()\n", tools, call)
        with anyio.fail_after(30):
            await called.wait()
        tg.cancel_scope.cancel()


@pytest.mark.slow
async def test_a_program_sees_an_empty_scratch_home_and_tmp() -> None:
    """It starts in its own empty, writable scratch folder; home and /tmp are empty too.
    Of the host's own folders it sees the system's and the interpreter's install only: where
    that lives in a home (pyenv, uv), each folder above it shows just the way down."""
    _, install = python_paths()
    source = textwrap.dedent(
        f"""
        import os
        print(os.getcwd(), sorted(os.listdir(".")), os.listdir(os.environ["HOME"]))
        print(os.listdir("/tmp"), sorted(os.listdir("/")))
        open("notes.txt", "w").write("kept for the run")
        print(open("notes.txt").read())
        parts = {install!r}.strip("/").split("/")
        print([os.listdir("/" + "/".join(parts[:n])) for n in range(1, len(parts))])
        """
    )
    done, text = await run(source)
    assert not done.result.is_error, text
    first, second, third, above = text.splitlines()
    assert first == "/scratch [] []"
    assert second.startswith("[] [")
    parts = install.strip("/").split("/")
    shown = set(ast.literal_eval(second.removeprefix("[] ")))
    assert shown - {parts[0]} <= {*SYSTEM_TOP, "dev", "home", "proc", "scratch", "tmp", "etc"}
    assert "work" not in shown or parts[0] == "work"
    if any(install == path or install.startswith(path + "/") for path in SYSTEM_DIRS):
        assert parts[0] in SYSTEM_TOP  # a system Python: nothing else is shown
    else:
        assert ast.literal_eval(above) == [[part] for part in parts[1:]]
    assert third == "kept for the run"


async def test_without_bwrap_a_run_is_refused_saying_what_to_install(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """bwrap is looked up on PATH: without it, nothing runs and the error says what to install."""
    monkeypatch.setenv("PATH", str(tmp_path))
    assert "apt install bubblewrap" in (code_sandbox_problem() or "")
    with pytest.raises(
        SandboxUnavailableError, match=r"bwrap was not found.*apt install bubblewrap"
    ):
        await run_code("print('ran')", [], _never_called)


async def _never_called(name: str, arguments: dict[str, Any]) -> mcp_types.CallToolResult:
    raise AssertionError(name)


@pytest.mark.slow
async def test_a_bug_in_the_call_path_is_raised_once_the_sandbox_is_gone() -> None:
    """What the caller raises beyond `RegistryError` is not the program's to see: the run is
    ended and the exception itself (no group around it) comes out of `run_code`."""

    async def call(name: str, arguments: dict[str, Any]) -> mcp_types.CallToolResult:
        raise LookupError("a bug on the way")

    tools = [mcp_types.Tool(name="ns__ping", input_schema={"type": "object"})]
    with pytest.raises(LookupError, match="a bug on the way"):
        await run_code("from tools import ns\nns.ping()\n", tools, call, limits=LIMITS)
