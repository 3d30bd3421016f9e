"""Code mode in the library: ``run_code`` listed and called on a registry of real servers,
and every call of the program held to the registry's own path.

Each refusal test shows the same program's call going through when the gate lets it (so
the test fails if the program could bypass the gate, and fails if the gate refused all).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from codemode_e2e_support import (
    NOTE,
    SUMMARY,
    code_settings,
    fs_spec,
    memory_spec,
    output,
    program_text,
    real_folder,
)

from mcpmount.adapters import AnthropicAdapter, OpenAIAdapter
from mcpmount.codemode import RUN_CODE_NAME
from mcpmount.config import RegistrySettings, load_config
from mcpmount.errors import UnknownToolError
from mcpmount.handlers import Approval, ApprovalRequest
from mcpmount.registry import Registry
from mcpmount.search import TOOL_SEARCH_NAME
from support import FIXTURE

pytestmark = [pytest.mark.anyio, pytest.mark.usefixtures("no_leaks")]


async def test_a_program_combines_three_tools_of_two_real_servers(tmp_path: Path) -> None:
    """``run_code`` is listed beside ``tool_search``; the program lists and reads with the
    filesystem server, stores and finds with the memory server, and prints one line."""
    folder = real_folder(tmp_path)
    async with Registry(code_settings()) as registry:
        await registry.mount("fs", fs_spec(folder))
        await registry.mount("memory", memory_spec(tmp_path / "graph.jsonl"))
        listed = {tool.name: tool for tool in registry.tools()}
        assert RUN_CODE_NAME in listed
        assert TOOL_SEARCH_NAME in listed
        description = listed[RUN_CODE_NAME].description or ""
        assert "Namespaces: fs, memory." in description
        assert "format" in listed[TOOL_SEARCH_NAME].input_schema["properties"]
        describe = {"query": "describe:fs", "format": "python"}
        described = output(await registry.call(TOOL_SEARCH_NAME, describe))
        assert "def read_text_file(" in described
        result = await registry.call(RUN_CODE_NAME, {"code": program_text(folder)})
        assert not result.is_error, output(result)
        assert output(result) == SUMMARY
        graph = (tmp_path / "graph.jsonl").read_text()
        assert NOTE in graph  # the memory server stored it: the calls were real
        direct = await registry.run_code(program_text(folder))
        assert output(direct) == SUMMARY  # a second run: the entity is there once


@pytest.mark.slow
async def test_code_mode_off_lists_no_run_code_and_answers_it_as_unknown(tmp_path: Path) -> None:
    """Off (the default), ``run_code`` is neither listed nor called: it is an unknown tool."""
    async with Registry(RegistrySettings()) as registry:
        await registry.mount("fs", fs_spec(real_folder(tmp_path)))
        assert RUN_CODE_NAME not in {tool.name for tool in registry.tools()}
        with pytest.raises(UnknownToolError):
            await registry.call(RUN_CODE_NAME, {"code": "print(1)"})


@pytest.mark.slow
async def test_malformed_run_code_arguments_get_an_error_result(tmp_path: Path) -> None:
    """A call without a string ``code``, or with other keys, is an error result; nothing ran."""
    async with Registry(code_settings()) as registry:
        await registry.mount("fs", fs_spec(real_folder(tmp_path)))
        for arguments in ({}, {"code": 3}, {"code": "print(1)", "extra": 1}, {"code": " "}):
            result = await registry.call(RUN_CODE_NAME, arguments)
            assert result.is_error
            assert 'run_code takes {"code": string}' in output(result)


@pytest.mark.slow
async def test_the_adapters_offer_run_code_and_run_it(tmp_path: Path) -> None:
    """An embedding agent gets ``run_code`` from both exports, and its calls run."""
    folder = real_folder(tmp_path)
    code = program_text(folder)
    async with Registry(code_settings()) as registry:
        await registry.mount("fs", fs_spec(folder))
        await registry.mount("memory", memory_spec(tmp_path / "graph.jsonl"))
        openai = OpenAIAdapter(registry)
        names = [tool["function"]["name"] for tool in openai.tools()]  # type: ignore[index]
        assert RUN_CODE_NAME in names
        function = {"name": RUN_CODE_NAME, "arguments": json.dumps({"code": code})}
        call = {"id": "c1", "type": "function", "function": function}
        message = await openai.run(call)
        assert str(message["content"]).strip() == SUMMARY
        anthropic = AnthropicAdapter(registry)
        assert RUN_CODE_NAME in [tool["name"] for tool in anthropic.tools()]
        use = {"id": "t1", "name": RUN_CODE_NAME, "input": {"code": code}}
        block = await anthropic.run(use)
        assert "is_error" not in block
        assert block["content"] == [{"type": "text", "text": SUMMARY + "\n"}]


@pytest.mark.slow
async def test_an_approval_gate_refuses_a_call_of_the_program(tmp_path: Path) -> None:
    """The approver is asked for the program's write, and its denial is the program's
    ``ToolError``: the file is not written. Approved, the same program writes it."""
    folder = real_folder(tmp_path)
    target = folder / "written.txt"
    program = program_text(
        folder,
        """
from tools import fs, ToolError
try:
    fs.write_file(path=FOLDER + "/written.txt", content="from a program")
    print("written")
except ToolError as exc:
    print("refused:", exc)
""",
    )
    asked: list[str] = []

    async def desk(request: ApprovalRequest) -> Approval:
        asked.append(request.tool)
        return Approval.deny("not today") if len(asked) == 1 else Approval.allow()

    async with Registry(code_settings(), approver=desk) as registry:
        await registry.mount("fs", fs_spec(folder, approve=["write_*"]))
        refused = output(await registry.run_code(program))
        assert refused.startswith("refused:")
        assert "not today" in refused
        assert not target.exists()
        allowed = output(await registry.run_code(program))
    assert allowed == "written"
    assert target.read_text() == "from a program"
    assert asked == ["fs__write_file", "fs__write_file"]


SECRET = "kt-planted-" + "9c3e71a5" * 3
"""A secret of the ``keys`` server (its ``TOKEN``)."""


@pytest.mark.slow
async def test_the_secret_guard_refuses_and_redacts_for_the_program(tmp_path: Path) -> None:
    """A program's call carrying another server's secret is refused before it is sent (the
    file is never written), and a result holding it reaches the program redacted; the same
    program writing a harmless text writes it."""
    folder = real_folder(tmp_path)
    (folder / "leak.txt").write_text(f"the key is {SECRET}")
    config = tmp_path / "guard.toml"
    config.write_text(
        f'[servers.keys]\ncommand = "{sys.executable}"\n'
        f'args = {json.dumps([FIXTURE])}\nenv = {{ TOKEN = "${{KEYS_TOKEN}}" }}\n'
    )
    loaded = load_config(config, environ={"KEYS_TOKEN": SECRET})
    program = """
from tools import fs, ToolError
try:
    fs.write_file(path=FOLDER + "/out.txt", content=TEXT)
    print("written")
except ToolError as exc:
    print("refused:", exc)
print("read:", fs.read_text_file(path=FOLDER + "/leak.txt")["content"])
"""
    async with Registry(code_settings()) as registry:
        await registry.mount_all(loaded.servers)
        await registry.mount("fs", fs_spec(folder))
        leaking = program_text(folder, f"TEXT = {SECRET!r}\n{program}")
        refused = output(await registry.run_code(leaking))
        assert not (folder / "out.txt").exists()
        harmless = output(await registry.run_code(program_text(folder, f"TEXT = 'tea'\n{program}")))
    first, read = refused.splitlines()
    assert first.startswith("refused:")
    assert "secret of server 'keys'" in first
    assert read.startswith("read: the key is ")
    assert SECRET not in read
    assert harmless.splitlines()[0] == "written"
    assert (folder / "out.txt").read_text() == "tea"
