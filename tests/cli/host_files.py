"""Each host's file as its documentation shows one (comments, variables, remote servers),
where it lives under HOME on Linux, and how to find the ``mcpmount`` entry in it."""

from __future__ import annotations

import difflib
import json
import os
import tomllib
from pathlib import Path
from typing import Any, cast

from ruamel.yaml import YAML

from mcpmount.configfile import strip_jsonc

VSCODE = """\
{
  // Shared by every workspace: see the team's wiki.
  "inputs": [
    {
      "type": "promptString",
      "id": "perplexity-key",
      "description": "Perplexity API Key",
      "password": true
    }
  ],
  "servers": {
    /* Remote: GitHub's hosted server, signed in by OAuth. */
    "github": {
      "type": "http",
      "url": "https://api.githubcopilot.com/mcp/"
    },
    "perplexity": {
      "type": "stdio",
      "command": "npx",
      "args": ["-y", "server-perplexity-ask"],
      "env": { "PERPLEXITY_API_KEY": "${input:perplexity-key}" }, // asked once
    },
    "fetch": { "command": "uvx", "args": ["mcp-server-fetch"], "cwd": "${workspaceFolder}" },
  },
}
"""

CLAUDE_DESKTOP = """\
{
  "globalShortcut": "Ctrl+Space",
  "mcpServers": {
    "filesystem": {
      "command": "npx",
      "args": ["-y", "@modelcontextprotocol/server-filesystem", "/home/me/Desktop"]
    }
  }
}
"""

CLAUDE_CODE = """\
{
  "numStartups": 12,
  "projects": {
    "/home/me/app": {
      "allowedTools": [],
      "mcpServers": {}
    }
  },
  "mcpServers": {
    "sentry": {
      "type": "http",
      "url": "https://mcp.sentry.dev/mcp",
      "headers": {
        "Authorization": "Bearer ${SENTRY_TOKEN}"
      }
    },
    "airtable": {
      "type": "stdio",
      "command": "npx",
      "args": ["-y", "airtable-mcp-server"],
      "env": {
        "AIRTABLE_API_KEY": "${AIRTABLE_API_KEY:-}"
      }
    }
  }
}
"""

CURSOR = """\
{
    "mcpServers": {
        "server-name": {
            "url": "http://localhost:3000/mcp",
            "headers": {"API_KEY": "${env:API_KEY}"}
        },
        "local": {"command": "npx", "args": ["-y", "mcp-server"], "env": {"API_KEY": "value"}}
    }
}
"""

WINDSURF = """\
{
  "mcpServers": {
    "github": {
      "command": "npx",
      "args": ["-y", "@modelcontextprotocol/server-github"],
      "env": {
        "GITHUB_PERSONAL_ACCESS_TOKEN": "${env:GITHUB_TOKEN}"
      }
    },
    "figma": {
      "serverUrl": "https://mcp.figma.com/mcp"
    }
  }
}
"""

ZED = """\
// Zed settings
//
// For information on how to configure Zed, see the Zed
// documentation: https://zed.dev/docs/configuring-zed
{
  "theme": "One Dark",
  "ui_font_size": 16,
  "context_servers": {
    "run-command": {
      "source": "custom",
      "command": "python",
      "args": ["-m", "my_mcp_server"],
      "env": {},
    },
    // A remote one.
    "linear": { "url": "https://mcp.linear.app/mcp", "headers": {} },
  },
}
"""

CODEX = """\
# ~/.codex/config.toml
model = "gpt-5-codex"  # the default model
approval_policy = "on-request"

[mcp_servers.context7]
command = "npx"
args = ["-y", "@upstash/context7-mcp"]
env_vars = ["CONTEXT7_API_KEY"]

# Remote, with a bearer token from the environment.
[mcp_servers.figma]
url = "https://mcp.figma.com/mcp"
bearer_token_env_var = "FIGMA_OAUTH_TOKEN"
startup_timeout_sec = 20
"""

GEMINI = """\
{
  "theme": "GitHub",
  "mcpServers": {
    "pythonTools": {
      "command": "python",
      "args": ["-m", "my_mcp_server", "--port", "8080"],
      "cwd": "./mcp-servers/python",
      "env": {
        "DATABASE_URL": "$DB_CONNECTION_STRING",
        "API_KEY": "${EXTERNAL_API_KEY}"
      },
      "timeout": 15000
    },
    "httpServer": {
      "httpUrl": "http://localhost:3000/mcp",
      "trust": true
    }
  }
}
"""

GOOSE = """\
GOOSE_PROVIDER: anthropic   # which LLM
GOOSE_MODEL: claude-sonnet-4
extensions:
  developer:
    bundled: true
    enabled: true
    name: developer
    timeout: 300
    type: builtin
  # GitHub's remote server
  github:
    enabled: true
    name: github
    type: streamable_http
    uri: https://api.githubcopilot.com/mcp/
    headers:
      Authorization: Bearer ${GITHUB_TOKEN}
    timeout: 300
"""

CONTINUE = """\
name: My Config
version: 0.0.1
schema: v1
models:
  - name: Claude
    provider: anthropic
    model: claude-sonnet-4
    apiKey: ${{ secrets.ANTHROPIC_API_KEY }}
# MCP servers, as in the docs
mcpServers:
  - name: SQLite MCP
    command: npx
    args:
      - "-y"
      - "mcp-sqlite"
      - "/path/to/your/database.db"
  - name: Remote
    type: streamable-http
    url: https://example.com/mcp
"""

LM_STUDIO = """\
{
  "mcpServers": {
    "hf-mcp-server": {
      "url": "https://huggingface.co/mcp",
      "headers": {
        "Authorization": "Bearer <YOUR_HF_TOKEN>"
      }
    }
  }
}
"""

HOSTS: dict[str, tuple[str, str, str]] = {
    "claude-desktop": (".config/Claude/claude_desktop_config.json", "mcpServers", CLAUDE_DESKTOP),
    "claude-code": (".claude.json", "mcpServers", CLAUDE_CODE),
    "cursor": (".cursor/mcp.json", "mcpServers", CURSOR),
    "vscode": (".config/Code/User/mcp.json", "servers", VSCODE),
    "windsurf": (".codeium/windsurf/mcp_config.json", "mcpServers", WINDSURF),
    "zed": (".config/zed/settings.json", "context_servers", ZED),
    "codex": (".codex/config.toml", "mcp_servers", CODEX),
    "gemini": (".gemini/settings.json", "mcpServers", GEMINI),
    "goose": (".config/goose/config.yaml", "extensions", GOOSE),
    "continue": (".continue/config.yaml", "mcpServers", CONTINUE),
    "lm-studio": (".lmstudio/mcp.json", "mcpServers", LM_STUDIO),
}
"""Each host: its user file under HOME (Linux), the key of its servers, and a file as its
documentation shows one."""


VARIABLES = dict.fromkeys(
    (
        "SENTRY_TOKEN",
        "API_KEY",
        "GITHUB_TOKEN",
        "FIGMA_OAUTH_TOKEN",
        "CONTEXT7_API_KEY",
        "DB_CONNECTION_STRING",
        "EXTERNAL_API_KEY",
        "MCPMOUNT_INPUT_PERPLEXITY_KEY",
    ),
    "set-for-the-test",
)
"""The variables the files above refer to, as their users would have them set."""


def parse(path: Path) -> Any:
    """The file as data, in its own format."""
    text = path.read_text()
    if path.suffix == ".toml":
        return tomllib.loads(text)
    if path.suffix == ".yaml":
        loaded: Any = YAML(typ="safe").load(text)  # pyright: ignore[reportUnknownMemberType]
        return loaded
    return json.loads(strip_jsonc(text))


def entry_of(host: str, home: Path, name: str = "mcpmount") -> dict[str, Any]:
    """The entry ``name`` of the host's user file, as data."""
    file, key, _ = HOSTS[host]
    servers: Any = parse(home / file)[key]
    if isinstance(servers, list):
        items = cast("list[dict[str, Any]]", servers)
        return next(item for item in items if item["name"] == name)
    found: dict[str, Any] = servers[name]
    return found


def argv_env(host: str, entry: dict[str, Any]) -> tuple[list[str], dict[str, str]]:
    """What the host runs for the entry, and the ``env`` it gives it."""
    if host == "goose":
        return [entry["cmd"], *entry["args"]], entry.get("envs", {})
    return [entry["command"], *entry["args"]], entry.get("env", {})


def only_added(before: str, after: str) -> list[str]:
    """Return the lines ``after`` adds to ``before``, failing if it changes any other line
    (but a comma put after the line that was last)."""
    old, new = before.splitlines(), after.splitlines()
    added: list[str] = []
    matcher = difflib.SequenceMatcher(a=old, b=new, autojunk=False)
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag == "equal":
            continue
        comma = tag == "replace" and i2 - i1 == 1 and new[j1] == old[i1] + ","
        assert tag == "insert" or comma, f"changed {old[i1:i2]!r} into {new[j1:j2]!r}"
        added += new[j1 + comma : j2]
    return added


def user_env(home: Path) -> dict[str, str]:
    """A user's shell: this one with HOME moved, no XDG or CODEX_HOME or MCPMOUNT_."""
    drop = ("XDG_", "MCPMOUNT_", "CODEX_HOME", "GEMINI_CLI")
    keep = {k: v for k, v in os.environ.items() if not k.startswith(drop)}
    return keep | {"HOME": str(home)}
