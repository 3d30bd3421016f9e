"""Real servers' tools as functions, and ``tool_search`` answering with their stubs.

The servers are real processes: the fixture and hostile-text servers of tests/servers and
the pinned ``@modelcontextprotocol/server-filesystem`` and ``server-memory``
(``npm ci --prefix tests/servers/npm``). The calls the generated functions make are
recorded by a stand-in ``_mcpmount_code`` (the sandbox's side) and then sent through the
registry, so the servers themselves say the arguments are right.
"""

from __future__ import annotations

import ast
import json
from pathlib import Path
from typing import Any

import pytest
from codemode_stubs_support import loaded
from pydantic import SecretStr

from mcpmount.codemode import python_names, tools_module
from mcpmount.config import StdioServer
from mcpmount.registry import Registry
from support import SERVERS, fixture, stdio_spec, text_of

BIN = SERVERS / "npm" / "node_modules" / ".bin"
MISSING = "is missing: npm ci --prefix tests/servers/npm"

pytestmark = [pytest.mark.anyio, pytest.mark.usefixtures("no_leaks")]


def _npm(name: str, *args: str, **env: str) -> StdioServer:
    program = BIN / name
    assert program.exists(), f"{name} {MISSING}"
    secrets = {key: SecretStr(value) for key, value in env.items()}
    return StdioServer(command=str(program), args=list(args), env=secrets, startup_timeout=60)


@pytest.mark.slow
async def test_every_real_tool_is_a_function_whose_call_its_server_accepts(
    tmp_path: Path,
) -> None:
    """The module of five real servers' tools compiles; every function sends its tool's
    name and argument names; and calls a program makes are done by the real servers."""
    folder = (tmp_path / "folder").resolve()
    folder.mkdir()
    async with Registry() as registry:
        await registry.mount("fixture", fixture())
        hostile = stdio_spec(str(SERVERS / "hostile_text_server.py"), invalid_names="sanitize")
        await registry.mount("hostile", hostile)
        await registry.mount("content", stdio_spec(str(SERVERS / "content_server.py")))
        await registry.mount("fs", _npm("mcp-server-filesystem", str(folder)))
        graph = str(tmp_path / "graph.jsonl")
        await registry.mount("memory", _npm("mcp-server-memory", MEMORY_FILE_PATH=graph))
        tools = [tool.to_mcp() for tool in registry.mounted_tools()]
        assert {t.name.partition("__")[0] for t in tools} == {
            "fixture",
            "hostile",
            "content",
            "fs",
            "memory",
        }
        with loaded(tools_module(tools)) as (module, recorder):
            for public, (namespace, function) in python_names(tools).items():
                schema = next(t for t in tools if t.name == public).input_schema
                properties: dict[str, Any] = schema.get("properties", {})
                required = [key for key in schema.get("required", []) if key in properties]
                call = getattr(getattr(module, namespace), function)
                call(**{_keyword(call, key): 0 for key in required})
                name, sent = recorder.calls[-1]
                assert name == public
                assert {key: sent[key] for key in required} == dict.fromkeys(required, 0)
                for key in sent.keys() - required:  # what the schema says is the default
                    assert sent[key] == properties[key]["default"]

            recorder.calls.clear()
            # A program's calls, as it would write them:
            module.fs.write_file(path=str(folder / "note.txt"), content="from a function")
            module.fs.read_text_file(path=str(folder / "note.txt"), head=None)
            module.memory.create_entities(
                entities=[{"name": "note", "entityType": "file", "observations": ["written"]}]
            )
            module.memory.read_graph()
            module.fixture.add(a=2, b=3)
        answers = [await registry.call(name, arguments) for name, arguments in recorder.calls]
        assert [answer.is_error for answer in answers] == [False] * 5
        assert (folder / "note.txt").read_text() == "from a function"
        assert text_of(answers[1]) == "from a function"
        assert "written" in text_of(answers[3])
        assert answers[4].structured_content == {"result": 5}


def _keyword(function: Any, key: str) -> str:
    """The parameter of ``function`` that sends ``key``: the key itself, or its Python name."""
    names: tuple[str, ...] = function.__code__.co_varnames
    return key if key in names else f"{key}_"


async def test_tool_search_in_python_format_answers_with_the_functions_programs_call() -> None:
    """``"format": "python"`` answers with stubs, no JSON schema, each function under the
    name the ``tools`` module gives it; the default answer is still JSON definitions."""
    async with Registry() as registry:
        await registry.mount("my-fs", fixture(defer=True))
        await registry.mount("alpha", fixture(defer=True))
        found = await registry.call(
            "tool_search", {"query": "echo the text", "limit": 2, "format": "python"}
        )
        text = text_of(found)
        assert not found.is_error
        assert found.structured_content is None
        assert "inputSchema" not in text
        assert "def echo(*, text: str) -> dict[str, Any]:" in text
        assert "Returns: {'result': str}" in text
        described = text_of(
            await registry.call("tool_search", {"query": "describe:my_fs", "format": "python"})
        )
        every = [tool.to_mcp() for tool in registry.mounted_tools()]
        with loaded(tools_module(every)) as (module, _):
            for answer in (text, described):
                for node in ast.parse(answer).body:
                    assert isinstance(node, ast.ClassDef)
                    shown = {d.name for d in node.body if isinstance(d, ast.FunctionDef)}
                    assert shown
                    namespace: type = getattr(module, node.name)
                    assert shown <= set(vars(namespace))
        assert "class my_fs:" in described
        assert described.count("    def ") == len(registry.mounted_tools()) // 2
        default = await registry.call("tool_search", {"query": "echo the text", "limit": 2})
        assert default.structured_content is not None
        assert json.loads(text_of(default))["tools"][0]["inputSchema"]["required"] == ["text"]
        bad = await registry.call("tool_search", {"query": "echo", "format": "yaml"})
        assert bad.is_error
        assert '"python"' in text_of(bad)


@pytest.mark.slow
async def test_describe_of_a_hidden_namespace_answers_as_one_that_does_not_exist() -> None:
    """``describe:`` returns every tool of a namespace it may see, whatever ``limit``; for
    one hidden by ``servers`` or ``tools`` it answers exactly as for a made-up name."""
    async with Registry() as registry:
        await registry.mount("alpha", fixture(defer=True))
        await registry.mount("beta", fixture(defer=True))
        beta = sorted(t.name for t in registry.mounted_tools() if t.server == "beta")
        alpha = {t.name for t in registry.mounted_tools() if t.server == "alpha"}
        for form in ("json", "python"):
            asked = {"query": "describe:beta", "limit": 1, "format": form}
            made_up = {**asked, "query": "describe:gamma"}
            seen = registry.tool_search(asked)
            assert list(seen.names) == beta  # the control: visible, it is described
            for hide in ({"servers": {"alpha"}}, {"tools": alpha}):
                hidden = registry.tool_search(asked, **hide)
                absent = registry.tool_search(made_up, **hide)
                assert hidden.result == absent.result
                assert hidden.names == ()
                assert "beta" not in text_of(hidden.result)
                assert "describe:alpha" in text_of(hidden.result)
            assert registry.tool_search(made_up).result != seen.result
