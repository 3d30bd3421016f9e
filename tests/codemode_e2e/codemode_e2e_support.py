"""Helpers for the code mode tests: two real servers, the program that combines them, and
configs with ``[registry.code_mode]`` on.

The servers are the pinned ``@modelcontextprotocol/server-filesystem`` (``fs``, serving one
folder) and ``@modelcontextprotocol/server-memory`` (``memory``, its graph in a file), from
tests/servers/npm (``npm ci --prefix tests/servers/npm``). `PROGRAM` reads a folder's
listing and a note with ``fs``, stores the note in ``memory``, searches it back and prints
one summary line: four tools of two servers, one printed line.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Final

import mcp_types
from pydantic import SecretStr

from mcpmount.config import CodeModeSettings, RegistrySettings, StdioServer
from support import FIXTURE, SERVERS, text_of

__all__ = [
    "CODE_ON",
    "FILESYSTEM",
    "MEMORY",
    "NOTE",
    "PROGRAM",
    "SUMMARY",
    "code_settings",
    "fixture_table",
    "fs_spec",
    "memory_spec",
    "output",
    "program_text",
    "real_folder",
    "real_tables",
]

BIN: Final = SERVERS / "npm" / "node_modules" / ".bin"
FILESYSTEM: Final = BIN / "mcp-server-filesystem"
MEMORY: Final = BIN / "mcp-server-memory"
_MISSING: Final = "is missing: npm ci --prefix tests/servers/npm"

NOTE: Final = "buy more tea"
"""What the folder's ``note.txt`` holds."""

CODE_ON: Final = "[registry.code_mode]\nenabled = true\ntimeout = 60\n"
"""A config's lines that turn code mode on (a generous wall clock: the machine is busy)."""

PROGRAM: Final = """
from tools import fs, memory

listing = fs.list_directory(path=FOLDER)["content"]
note = fs.read_text_file(path=FOLDER + "/note.txt")["content"]
memory.create_entities(
    entities=[{"name": "note", "entityType": "todo", "observations": [note]}]
)
graph = memory.search_nodes(query="note")
files = sorted(line.split("] ", 1)[1] for line in listing.splitlines())
print(f"files={','.join(files)} entities={len(graph['entities'])} "
      f"first={graph['entities'][0]['observations'][0]}")
"""
"""Four tools of ``fs`` and ``memory``, their results combined into one printed line."""

SUMMARY: Final = f"files=a.txt,note.txt entities=1 first={NOTE}"
"""What `PROGRAM` prints over `real_folder`."""


def program_text(folder: Path, program: str = PROGRAM) -> str:
    """``program`` with ``FOLDER`` set to ``folder``."""
    return f"FOLDER = {json.dumps(str(folder))}\n{program}"


def real_folder(tmp_path: Path) -> Path:
    """A folder for ``fs``: ``note.txt`` (`NOTE`) and ``a.txt``."""
    folder = tmp_path / "folder"
    folder.mkdir()
    (folder / "note.txt").write_text(NOTE)
    (folder / "a.txt").write_text("a")
    return folder.resolve()


def fs_spec(folder: Path, **options: object) -> StdioServer:
    assert FILESYSTEM.exists(), f"server-filesystem {_MISSING}"
    return StdioServer(command=str(FILESYSTEM), args=[str(folder)], **options)  # pyright: ignore[reportArgumentType]


def memory_spec(graph: Path) -> StdioServer:
    assert MEMORY.exists(), f"server-memory {_MISSING}"
    env = {"MEMORY_FILE_PATH": SecretStr(str(graph))}
    return StdioServer(command=str(MEMORY), env=env)


def code_settings(**registry: object) -> RegistrySettings:
    """Registry settings with code mode on (and ``registry``'s other keys)."""
    code = CodeModeSettings(enabled=True, timeout=60)
    return RegistrySettings(code_mode=code, startup_timeout=30, **registry)  # pyright: ignore[reportArgumentType]


def real_tables(folder: Path, graph: Path) -> str:
    """The ``[servers]`` tables of ``fs`` (serving ``folder``) and ``memory``."""
    assert FILESYSTEM.exists(), f"server-filesystem {_MISSING}"
    assert MEMORY.exists(), f"server-memory {_MISSING}"
    return (
        f'[servers.fs]\ncommand = "{FILESYSTEM}"\nargs = {json.dumps([str(folder)])}\n'
        "required = true\n\n"
        f'[servers.memory]\ncommand = "{MEMORY}"\n'
        f"env = {{ MEMORY_FILE_PATH = {json.dumps(str(graph))} }}\nrequired = true\n\n"
    )


def fixture_table(name: str, extra: str = "") -> str:
    """A ``[servers.NAME]`` table of the fixture server (``echo``, ``add``...)."""
    return (
        f'[servers.{name}]\ncommand = "{sys.executable}"\nargs = {json.dumps([FIXTURE])}\n'
        f"required = true\n{extra}\n"
    )


def output(result: mcp_types.CallToolResult) -> str:
    """The printed output of a run (its text), stripped."""
    return text_of(result).strip()
