"""Every popular host's own file, read as that host means it: ``check --from HOST`` with
a scratch HOME (and ``check``/``call`` given the file), on a file shaped as the host's
documentation shows it (comments, variables, remote entries, disabled ones).

Each test asserts what its entries mean (transport, URL, command, env, timeouts, tool
filters) where the command line shows it, and through `load_host` where it does not; a
stdio server and the remote ones really mount. The remote servers are the fixture server
over streamable HTTP and over legacy SSE, so a transport read wrongly fails to mount."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import NamedTuple

import pytest

from cli.cli_support import Remotes, environment, mcpmount, write_json
from mcpmount.config import HttpServer, StdioServer
from mcpmount.hosts import HostApp, load_host
from support import FIXTURE, SERVERS

pytestmark = [
    pytest.mark.slow,
    pytest.mark.usefixtures("no_leaks"),
    pytest.mark.timeout(180),  # a few mcpmount processes per test, on a loaded machine
]

PYTHON = sys.executable
ENV_SERVER = str(SERVERS / "env_server.py")
TOKEN = "ghp_host-format-token-7731"


class Checked(NamedTuple):
    """What ``check --json`` said: each server's transport, state and tool count; notes."""

    servers: dict[str, tuple[str, str, int]]
    notes: list[str]


def check(*args: str, home: Path, cwd: Path, **env: str) -> Checked:
    """Run ``mcpmount check --json ARGS`` as a user with ``home`` as HOME, in ``cwd``."""
    done = mcpmount("check", "--json", *args, env=environment(home, **env), cwd=cwd)
    assert done.returncode == 0, done.stderr + done.stdout
    report = json.loads(done.stdout)
    rows = {r["server"]: (r["transport"], r["state"], r["tools"]) for r in report["servers"]}
    return Checked(rows, [" ".join(note.split()) for note in report["notes"]])


def called(config: Path, tool: str, variable: str, *, home: Path, **env: str) -> str:
    """Call the env server's ``tool`` for ``variable`` through ``config``; its answer."""
    arguments = json.dumps({"name": variable})
    done = mcpmount("call", tool, arguments, str(config), env=environment(home, **env))
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


def places(tmp_path: Path) -> tuple[Path, Path]:
    """A scratch HOME and a project folder."""
    home, project = tmp_path / "home", tmp_path / "work" / "app"
    project.mkdir(parents=True)
    home.mkdir()
    return home, project


def test_codex_config_toml_is_read_as_codex_means_it(tmp_path: Path, remotes: Remotes) -> None:
    """``[mcp_servers.NAME]`` of ``~/.codex/config.toml``: env and env_vars reach the
    server, the bearer token variable becomes the Authorization header, timeouts are
    seconds, tool filters apply, a disabled server is said; the rest of the file is
    Codex's own settings."""
    home, project = places(tmp_path)
    config = home / ".codex" / "config.toml"
    config.parent.mkdir()
    config.write_text(
        f"""# Codex settings (developers.openai.com/codex/config-reference)
model = "gpt-5.1"
approval_policy = "on-request"

[features]
rmcp_client = true

# A local server Codex starts.
[mcp_servers.docs]
command = "{PYTHON}"
args = ["{ENV_SERVER}"]
# Variables of Codex's environment the server also gets.
env_vars = ["DOCS_TOKEN", "NEVER_SET_ANYWHERE"]
startup_timeout_sec = 20
tool_timeout_sec = 30

[mcp_servers.docs.env]
MODE = "read-only"

[mcp_servers.figma]
url = "{remotes.http}"
bearer_token_env_var = "FIGMA_OAUTH_TOKEN"
http_headers = {{ "X-Figma-Region" = "us-east-1" }}
enabled_tools = ["echo", "add"]
disabled_tools = ["add"]

[mcp_servers.retired]
command = "npx"
args = ["-y", "retired-mcp"]
enabled = false
"""
    )
    env = {"DOCS_TOKEN": TOKEN, "FIGMA_OAUTH_TOKEN": "figma-secret-token-55"}
    checked = check("--from", "codex", home=home, cwd=project, **env)
    assert checked.servers == {"docs": ("stdio", "mounted", 3), "figma": ("http", "mounted", 1)}
    assert checked.notes == [
        f"{config}: mcp_servers.retired: not mounted: the file disables it (enabled = false)"
    ]
    assert called(config, "docs__env", "MODE", home=home, **env) == "read-only"
    assert called(config, "docs__reversed_env", "DOCS_TOKEN", home=home, **env) == TOKEN[::-1]
    servers = load_host(HostApp.CODEX, home=home, cwd=project, environ=env).config.servers
    docs, figma = servers["docs"], servers["figma"]
    assert isinstance(docs, StdioServer)
    assert (docs.command, docs.startup_timeout, docs.call_timeout) == (PYTHON, 20, 30)
    assert sorted(docs.env) == ["DOCS_TOKEN", "MODE"]  # NEVER_SET_ANYWHERE is not passed
    assert isinstance(figma, HttpServer)
    assert (figma.url, figma.transport) == (remotes.http, "http")
    assert figma.header_values() == {
        "X-Figma-Region": "us-east-1",
        "Authorization": "Bearer figma-secret-token-55",
    }
    assert (figma.tools, figma.exclude_tools) == (["echo", "add"], ["add"])


def test_gemini_settings_read_url_as_sse_and_timeout_in_milliseconds(
    tmp_path: Path, remotes: Remotes
) -> None:
    """Gemini CLI's ``url`` is legacy SSE and ``httpUrl`` streamable HTTP, so both mount;
    ``$VAR`` is expanded, ``timeout`` is milliseconds, ``includeTools`` filters,
    ``trust`` exempts the server's tools from the approval gate (said in a note), and
    ``mcp.excluded`` leaves a server out."""
    home, project = places(tmp_path)
    settings = home / ".gemini" / "settings.json"
    settings.parent.mkdir()
    body = {
        "theme": "Dracula",
        "mcp": {"excluded": ["experimental"]},
        "mcpServers": {
            "pythonTools": {
                "command": PYTHON,
                "args": [ENV_SERVER],
                "cwd": str(project),
                "env": {"DATABASE_URL": "$DB_CONNECTION_STRING", "API_KEY": "${EXTERNAL_API_KEY}"},
                "timeout": 15000,
                "trust": True,
                "includeTools": ["env", "reversed_env"],
            },
            "sseServer": {"url": remotes.sse, "headers": {"X-Custom-Header": "custom-value"}},
            "httpServer": {"httpUrl": remotes.http, "timeout": 5000},
            "experimental": {"command": "never-started"},
        },
    }
    text = json.dumps(body, indent=2)
    settings.write_text("// Gemini CLI settings\n" + text.replace('"trust"', '/* y */ "trust"'))
    env = {"DB_CONNECTION_STRING": "postgres://db.internal/app", "EXTERNAL_API_KEY": TOKEN}
    checked = check("--from", "gemini", home=home, cwd=project, **env)
    assert checked.servers == {
        "pythontools": ("stdio", "mounted", 2),
        "sseserver": ("sse", "mounted", 7),
        "httpserver": ("http", "mounted", 7),
    }
    assert f"{settings}: mcpServers.experimental: not mounted: mcp.excluded names it" in (
        checked.notes
    )
    assert any(
        "trust: true lets every tool of it skip the approval gate" in n for n in checked.notes
    )
    answer = called(settings, "pythontools__env", "DATABASE_URL", home=home, **env)
    assert answer == "postgres://db.internal/app"
    servers = load_host(HostApp.GEMINI, home=home, cwd=project, environ=env).config.servers
    python_tools, http_server = servers["pythontools"], servers["httpserver"]
    assert (python_tools.call_timeout, python_tools.auto_approve) == (15.0, ["*"])
    assert python_tools.tools == ["env", "reversed_env"]
    assert (http_server.call_timeout, servers["sseserver"].transport) == (5.0, "sse")


def test_windsurf_server_url_reaches_either_http_transport(
    tmp_path: Path, remotes: Remotes
) -> None:
    """Windsurf's ``serverUrl`` is a remote server, reached by streamable HTTP or SSE as it
    answers; ``${env:VAR}`` is expanded and ``disabled`` is said."""
    home, project = places(tmp_path)
    config = write_json(
        home / ".codeium" / "windsurf" / "mcp_config.json",
        {
            "mcpServers": {
                "github": {
                    "command": PYTHON,
                    "args": [ENV_SERVER],
                    "env": {"GITHUB_PERSONAL_ACCESS_TOKEN": "${env:GH_TOKEN}"},
                },
                "remote-http": {
                    "serverUrl": remotes.http,
                    "headers": {"Authorization": "Bearer ${env:AUTH_TOKEN}"},
                },
                "remote-sse": {"serverUrl": remotes.sse},
                "paused": {"command": "npx", "args": ["-y", "paused"], "disabled": True},
            }
        },
    )
    env = {"GH_TOKEN": TOKEN, "AUTH_TOKEN": "windsurf-auth-token-12"}
    checked = check("--from", "windsurf", home=home, cwd=project, **env)
    assert checked.servers == {
        "github": ("stdio", "mounted", 3),
        "remote-http": ("auto", "mounted", 7),
        "remote-sse": ("auto", "mounted", 7),
    }
    assert checked.notes == [
        f'{config}: mcpServers.paused: not mounted: the file disables it ("disabled": true)'
    ]
    answer = called(
        config, "github__reversed_env", "GITHUB_PERSONAL_ACCESS_TOKEN", home=home, **env
    )
    assert answer == TOKEN[::-1]
    remote = load_host(HostApp.WINDSURF, home=home, cwd=project, environ=env).config.servers
    http = remote["remote-http"]
    assert isinstance(http, HttpServer)
    assert http.header_values() == {"Authorization": "Bearer windsurf-auth-token-12"}


def test_zed_context_servers_are_read_from_its_commented_settings(
    tmp_path: Path, remotes: Remotes
) -> None:
    """Zed's ``context_servers`` in its JSONC ``settings.json``: the flat and the older
    nested ``command``, a remote ``url``, an extension's server said and left out, and
    the project's ``.zed/settings.json`` winning for a name both declare."""
    home, project = places(tmp_path)
    user = home / ".config" / "zed" / "settings.json"
    user.parent.mkdir(parents=True)
    user.write_text(
        f"""// Zed settings
//
// For information on how to configure Zed, see the Zed documentation.
{{
  "theme": "One Dark",
  "context_servers": {{
    "local-env": {{
      "source": "custom",
      "command": "{PYTHON}",
      "args": ["{ENV_SERVER}"],
      "env": {{ "MODE": "user" }}, // overridden by the project
    }},
    "older": {{
      "command": {{ "path": "{PYTHON}", "args": ["{FIXTURE}"], "env": {{}} }},
      "settings": {{}},
    }},
    "remote": {{
      "url": "{remotes.http}",
      "headers": {{ "Authorization": "Bearer zed-remote-token-90" }},
    }},
    /* provided by the Postgres extension */
    "postgres-context-server": {{
      "source": "extension",
      "settings": {{ "database_url": "postgresql://localhost/db" }},
    }},
  }},
}}
"""
    )
    project_file = project / ".zed" / "settings.json"
    project_file.parent.mkdir()
    project_file.write_text(
        f'{{"context_servers": {{"local-env": {{"command": "{PYTHON}", '
        f'"args": ["{ENV_SERVER}"], "env": {{"MODE": "project"}}}}}}}}'
    )
    checked = check("--from", "zed", home=home, cwd=project)
    assert checked.servers == {
        "local-env": ("stdio", "mounted", 3),
        "older": ("stdio", "mounted", 7),
        "remote": ("http", "mounted", 7),
    }
    assert (
        f"{user}: context_servers.postgres-context-server: not mounted: a Zed extension "
        "provides it, and only Zed can run an extension"
    ) in checked.notes
    assert any("local-env: the one of" in note and "(project)" in note for note in checked.notes)
    assert called(project_file, "local-env__env", "MODE", home=home) == "project"


GOOSE = """\
GOOSE_PROVIDER: anthropic
GOOSE_MODEL: claude-sonnet-4
extensions:
  developer:              # goose's own
    bundled: true
    display_name: Developer
    enabled: true
    name: developer
    timeout: 300
    type: builtin
  envtool:
    args:
    - {env_server}
    cmd: {python}
    description: Reports its environment
    enabled: true
    env_keys:
    - GOOSE_SECRET
    envs:
      MODE: goose
    name: envtool
    timeout: 120
    type: stdio
  remote:
    enabled: true
    headers:
      Authorization: Bearer goose-remote-token-31
    name: remote
    timeout: 300
    type: streamable_http
    uri: {http}
  legacy:
    enabled: true
    name: legacy
    type: sse
    uri: {sse}
  paused:
    cmd: npx
    args: [-y, paused-server]
    enabled: false
    type: stdio
"""


def test_goose_config_yaml_extensions_are_read_by_their_type(
    tmp_path: Path, remotes: Remotes
) -> None:
    """goose's ``extensions``: ``stdio`` runs ``cmd`` with ``envs`` and ``env_keys`` (from
    the environment), ``streamable_http`` and ``sse`` reach ``uri`` each its own way,
    ``timeout`` is seconds; a builtin and a disabled extension are said."""
    home, project = places(tmp_path)
    config = home / ".config" / "goose" / "config.yaml"
    config.parent.mkdir(parents=True)
    config.write_text(
        GOOSE.format(env_server=ENV_SERVER, python=PYTHON, http=remotes.http, sse=remotes.sse)
    )
    env = {"GOOSE_SECRET": TOKEN}
    checked = check("--from", "goose", home=home, cwd=project, **env)
    assert checked.servers == {
        "envtool": ("stdio", "mounted", 3),
        "remote": ("http", "mounted", 7),
        "legacy": ("sse", "mounted", 7),
    }
    notes = "\n".join(checked.notes)
    assert "extensions.developer: not mounted: a builtin extension is goose's own" in notes
    assert "extensions.paused: not mounted: the file disables it (enabled: false)" in notes
    assert "extensions.envtool: env_keys GOOSE_SECRET are read from the environment" in notes
    assert called(config, "envtool__env", "MODE", home=home, **env) == "goose"
    assert called(config, "envtool__reversed_env", "GOOSE_SECRET", home=home, **env) == TOKEN[::-1]
    servers = load_host(HostApp.GOOSE, home=home, cwd=project, environ=env).config.servers
    assert (servers["envtool"].call_timeout, servers["remote"].call_timeout) == (120, 300)


def test_continue_config_and_workspace_blocks_are_all_read(
    tmp_path: Path, remotes: Remotes
) -> None:
    """Continue's ``mcpServers`` list in ``~/.continue/config.yaml`` (``${{ secrets.X }}``
    from the environment, ``connectionTimeout`` in milliseconds, a remote with
    ``requestOptions.headers``), and the workspace's YAML and JSON blocks."""
    home, project = places(tmp_path)
    config = home / ".continue" / "config.yaml"
    config.parent.mkdir()
    config.write_text(
        f"""name: My Config
version: 0.0.1
schema: v1
models:
  - name: GPT-4
    provider: openai
    model: gpt-4
mcpServers:
  - name: SQLite Tools
    command: {PYTHON}
    args:
      - {ENV_SERVER}
    env:
      API_KEY: ${{{{ secrets.CONTINUE_API_KEY }}}}
    connectionTimeout: 20000
  - name: Remote Docs
    type: streamable-http
    url: {remotes.http}
    requestOptions:
      headers:
        Authorization: Bearer ${{{{ secrets.DOCS_TOKEN }}}}
"""
    )
    blocks = project / ".continue" / "mcpServers"
    blocks.mkdir(parents=True)
    (blocks / "legacy-mcp.yaml").write_text(
        f"name: Legacy\nversion: 0.0.1\nschema: v1\nmcpServers:\n"
        f"  - name: Legacy SSE\n    type: sse\n    url: {remotes.sse}\n"
    )
    write_json(
        blocks / "from-claude.json",
        {"mcpServers": {"copied": {"command": PYTHON, "args": [FIXTURE]}}},
    )
    env = {"CONTINUE_API_KEY": TOKEN, "DOCS_TOKEN": "continue-docs-token-4"}
    checked = check("--from", "continue", home=home, cwd=project, **env)
    assert checked.servers == {
        "sqlite-tools": ("stdio", "mounted", 3),
        "remote-docs": ("http", "mounted", 7),
        "legacy-sse": ("sse", "mounted", 7),
        "copied": ("stdio", "mounted", 7),
    }
    assert any(
        "the secrets CONTINUE_API_KEY are read from the environment" in n for n in checked.notes
    )
    answer = called(config, "sqlite-tools__reversed_env", "API_KEY", home=home, **env)
    assert answer == TOKEN[::-1]
    servers = load_host(HostApp.CONTINUE, home=home, cwd=project, environ=env).config.servers
    remote = servers["remote-docs"]
    assert isinstance(remote, HttpServer)
    assert remote.header_values() == {"Authorization": "Bearer continue-docs-token-4"}
    assert servers["sqlite-tools"].startup_timeout == 20


def test_lm_studio_mcp_json_is_read_in_cursors_notation(tmp_path: Path, remotes: Remotes) -> None:
    """``~/.lmstudio/mcp.json`` is Cursor's ``mcpServers``: a command, and a ``url`` with
    headers reached by streamable HTTP."""
    home, project = places(tmp_path)
    write_json(
        home / ".lmstudio" / "mcp.json",
        {
            "mcpServers": {
                "hf-mcp-server": {
                    "url": remotes.http,
                    "headers": {"Authorization": "Bearer ${env:HF_TOKEN}"},
                },
                "local": {"command": PYTHON, "args": [FIXTURE]},
            }
        },
    )
    checked = check("--from", "lm-studio", home=home, cwd=project, HF_TOKEN="hf_token_value_123")
    assert checked.servers == {
        "hf-mcp-server": ("http", "mounted", 7),
        "local": ("stdio", "mounted", 7),
    }


@pytest.mark.parametrize(
    ("name", "text"),
    [
        ("notes.yaml", "title: my notes\nitems: [1, 2]\n"),
        ("pyproject.toml", '[project]\nname = "app"\n'),
        ("package.json", '{"name": "app", "version": "1.0.0"}'),
        ("servers.txt", "fs: npx -y server-filesystem\n"),
    ],
)
def test_a_file_of_no_known_format_names_the_formats_read(
    tmp_path: Path, name: str, text: str
) -> None:
    """``check`` of a file that is no host's format exits 2, naming every format read."""
    path = tmp_path / name
    path.write_text(text)
    done = mcpmount("check", str(path), env=environment(tmp_path), cwd=tmp_path)
    assert done.returncode == 2
    said = " ".join(done.stderr.split())
    assert "no format mcpmount reads" in said
    for fmt in ("mcpmount TOML", "OpenAI Codex TOML", "goose YAML", "Continue YAML", "Zed"):
        assert fmt in said


def test_a_codex_file_given_by_path_is_read_as_codex(tmp_path: Path) -> None:
    """A ``config.toml`` given by path with ``[mcp_servers.*]`` is Codex's, not ours with a
    misspelt ``servers``."""
    path = tmp_path / "config.toml"
    path.write_text(f'[mcp_servers.fx]\ncommand = "{PYTHON}"\nargs = ["{FIXTURE}"]\n')
    checked = check(str(path), home=tmp_path, cwd=tmp_path)
    assert checked.servers == {"fx": ("stdio", "mounted", 7)}
