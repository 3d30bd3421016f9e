"""Hosts' files are JSON with comments (JSONC): VS Code's and Cursor's ``mcp.json`` allow
``//`` and ``/* */`` comments and trailing commas, and load as the host reads them."""

from __future__ import annotations

import json

import pytest
from config_support import Write, http, problems_of, stdio

from mcpmount.config import load_config, strip_jsonc

VSCODE = """\
// Workspace servers: VS Code's own template starts with a comment like this one.
{
  "inputs": [
    {"type": "promptString", "id": "key", "description": "API key", "password": true}, // one
  ],
  /* The servers, with
     a comment over two lines. */
  "servers": {
    "files": {
      "type": "stdio",
      "command": "npx", // runs the package
      "args": ["-y", "fs", "//not a comment", "/* nor this */", "a,]", "back\\\\",],
    },
    "web": {"type": "http", "url": "https://web.example//mcp", "headers": {"X": "1,}"},},
  },
}
"""


def test_a_vscode_file_with_comments_and_trailing_commas_loads_as_vscode_reads_it(
    write: Write,
) -> None:
    """Comments and trailing commas go; strings keep their ``//``, ``/*`` and ``,]``."""
    config = load_config(write("mcp.json", VSCODE), environ={"MCPMOUNT_INPUT_KEY": "k"})
    files = stdio(config, "files")
    assert files.command == "npx"
    assert files.args == ["-y", "fs", "//not a comment", "/* nor this */", "a,]", "back\\"]
    assert http(config, "web").url == "https://web.example//mcp"
    assert http(config, "web").header_values() == {"X": "1,}"}


def test_a_cursor_file_with_comments_loads(write: Write) -> None:
    """Cursor's ``mcpServers`` file, commented the same way."""
    path = write(
        "mcp.json",
        '{\n  "mcpServers": {\n    // local tools\n    "git": {"command": "uvx", '
        '"args": ["mcp-server-git"],},\n  },\n}\n',
    )
    assert stdio(load_config(path, environ={}), "git").args == ["mcp-server-git"]


@pytest.mark.parametrize(
    "text",
    [
        VSCODE,
        '{"a": "\\"//", "b": "/*", "c": [1, /* x */ 2,], // end\n}',
        '{"a": 1 /* unclosed',
        "[1,,]",
    ],
)
def test_strip_jsonc_blanks_in_place_and_leaves_strings_alone(text: str) -> None:
    """Every character keeps its offset, every line break stays, and nothing but comments
    and trailing commas changes."""
    stripped = strip_jsonc(text)
    assert len(stripped) == len(text)
    assert [i for i, c in enumerate(stripped) if c == "\n"] == [
        i for i, c in enumerate(text) if c == "\n"
    ]
    assert all(a == b or b == " " for a, b in zip(text, stripped, strict=True))


@pytest.mark.parametrize(
    ("text", "error"),
    [
        ("[,]", "Expecting value"),  # a comma with no value before it is not trailing
        ('{"a": ,}', "Expecting value"),
        ("[1,,]", "Expecting value"),
        ('{"a": 1 /* never closed', "Expecting ','"),
        ('{"a": "unterminated // not a comment}', "Unterminated string"),
    ],
)
def test_what_is_not_jsonc_is_left_for_the_parser_to_refuse(text: str, error: str) -> None:
    with pytest.raises(json.JSONDecodeError, match=error):
        json.loads(strip_jsonc(text))


def test_a_json_error_after_comments_names_the_line_and_column_as_written(write: Write) -> None:
    """Comments over several lines before the mistake do not move it."""
    path = write(
        "mcp.json",
        '{\n  /* one\n     two */ "mcpServers": { // three\n'
        '    "a": {"command": "x"} "b": {}\n  }\n}\n',
    )
    (problem,) = problems_of(path)
    assert problem == "invalid JSON: Expecting ',' delimiter (at line 4, column 27)"
